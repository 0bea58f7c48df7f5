// SPDX-License-Identifier: GPL-2.0
/*
 * What the options aim at, checked against this machine: the -p process (its
 * pidfd held), -C's CPUs, the --cgroup directory (its id found) and --by's
 * key (the cgroup v2 hierarchy its cgroup ids are named in).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "cpulist.h"
#include "escape.h"
#include "podnames.h"
#include "setup_int.h"

/* The process group leader of pid (its Tgid), or -errno. */
static int process_of(pid_t pid)
{
	char path[64], line[128];
	int tgid = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/*
 * -p takes a process: the BPF side compares the thread group ID. A pidfd
 * (Linux 5.3) tells when it exits, and keeps its PID from being taken for
 * another's meanwhile unnoticed.
 */
int target__open_process(struct session *s)
{
	pid_t pid = s->opts->pid;
	int tgid, open_err;

	if (!pid)
		return EXIT_OK;
	/* the pidfd first: the process it holds is the one checked after */
	s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	open_err = s->pidfd < 0 ? -errno : 0;
	if (probe__short_of_resources(open_err))
		return budget__resource_error(s, open_err);
	if (open_err == -ESRCH)
		return say_error(EXIT_NO_PROCESS, "no process with PID %d", pid);
	tgid = process_of(pid);
	if (probe__short_of_resources(tgid))
		return budget__resource_error(s, tgid);
	/* a thread's ID: pidfd_open() says EINVAL, the status names its process */
	if (tgid > 0 && tgid != pid)
		return say_error(EXIT_NO_PROCESS, "%d is a thread of process %d: use -p %d", pid,
				 tgid, tgid);
	if (tgid < 0 || has_exited(s->pidfd))
		return say_error(EXIT_NO_PROCESS, "process %d has exited%s: nothing to trace", pid,
				 tgid < 0 ? "" : " (a zombie, not yet reaped)");
	if (open_err)
		note(s->opts->verbose,
		     "no pidfd for process %d (%s): its exit will not end the run", pid,
		     strerror(-open_err));
	return EXIT_OK;
}

#define POSSIBLE_PATH "/sys/devices/system/cpu/possible"

/*
 * -C names only CPUs this machine can have (offline ones may come online):
 * another would filter every work out, silently.
 */
int target__check_victims(const struct options *o)
{
	enum { WORDS = DRAINSTAT_MAX_CPUS / 64 };
	/* on the heap: 2 KB, and drainstat runs under ulimit -s 24 */
	__u64 *possible, *missing;
	char have[128], bad[128];
	bool known = false, any = false;
	int i, code = EXIT_OK;

	if (!o->victims_set)
		return EXIT_OK;
	possible = calloc(2 * WORDS, sizeof(__u64));
	if (!possible)
		return say_error(EXIT_RUNTIME, "cannot check -C: %s", strerror(ENOMEM));
	missing = possible + WORDS;
	cpulist__read(POSSIBLE_PATH, possible);
	for (i = 0; i < WORDS; i++) {
		known |= possible[i] != 0;
		missing[i] = o->victims[i] & ~possible[i];
		any |= missing[i] != 0;
	}
	if (known && any) {
		cpulist__format(missing, bad, sizeof(bad));
		cpulist__format(possible, have, sizeof(have));
		code = say_error(EXIT_USAGE,
				 "-C names CPUs this machine does not have: %s (its CPUs: %s)", bad,
				 have);
	}
	free(possible);
	return code;
}

/*
 * A cgroup v2 directory's id, what bpf_get_current_cgroup_id() returns: the
 * kernfs node id, read through a file handle.
 */
static int cgroup_id_of(const char *path, __u64 *id)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} h = {.fh.handle_bytes = sizeof(__u64)};
	struct statfs st;
	struct stat dir;
	int mount_id;

	if (statfs(path, &st) || stat(path, &dir))
		return -errno;
	if (st.f_type != CGROUP2_SUPER_MAGIC)
		return -ENOTDIR;
	/* a file in a cgroup (its cgroup.procs) has a kernfs id too, which no task has */
	if (!S_ISDIR(dir.st_mode))
		return -EISDIR;
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return -errno;
	*id = h.id;
	return 0;
}

int target__resolve_cgroup(struct session *s)
{
	char *shown;
	int err, code;

	if (!s->opts->cgroup)
		return EXIT_OK;
	err = cgroup_id_of(s->opts->cgroup, &s->cgroup_id);
	if (!err)
		return EXIT_OK;
	shown = escape__dup(s->opts->cgroup);
	if (err == -ENOTDIR)
		code = say_error(EXIT_NO_CGROUP, "%s is not a cgroup v2 directory",
				 shown ? shown : "?");
	else if (err == -EISDIR)
		code =
		    say_error(EXIT_NO_CGROUP,
			      "%s is a file in a cgroup, not a cgroup: give the cgroup's directory",
			      shown ? shown : "?");
	else
		code = say_error(EXIT_NO_CGROUP, "cannot use cgroup %s: %s", shown ? shown : "?",
				 strerror(-err));
	free(shown);
	return code;
}

#define MOUNTINFO "/proc/self/mountinfo"

/*
 * No cgroup v2 hierarchy (cgroup v1 alone): the comm keys the sites. Said on
 * stderr when --by asked for the cgroup, under -v when it is the default.
 */
static void key_by_comm(struct session *s, const char *why)
{
	s->key_parts = SITE_KEY_COMM;
	if (s->opts->by_set)
		fprintf(stderr, "drainstat: %s: sites are keyed by comm alone\n", why);
	else
		note(s->opts->verbose, "%s: sites are keyed by comm alone", why);
}

int target__key_sites(struct session *s)
{
	char root[PATH_MAX], why[PATH_MAX + 64];
	int err;

	s->key_parts = s->opts->by;
	/* the drains in flight are shown with their cgroups whatever keys the sites */
	err = cgroups__find_mount(MOUNTINFO, root, sizeof(root));
	if (probe__short_of_resources(err))
		return budget__resource_error(s, err);
	if (err) {
		if (err == -ENOENT)
			snprintf(why, sizeof(why), "no cgroup v2 hierarchy mounted");
		else
			snprintf(why, sizeof(why), "cannot read %s: %s", MOUNTINFO, strerror(-err));
		if (s->key_parts & SITE_KEY_CGROUP)
			key_by_comm(s, why);
		else
			note(s->opts->verbose, "%s: drains in flight are shown without cgroups",
			     why);
		return EXIT_OK;
	}
	s->cgroups = cgroups__new(root);
	s->pods = podnames__new(PODNAMES_ROOT, 0, s->opts->interval_ns);
	if (!s->cgroups || !s->pods)
		return budget__resource_error(s, -ENOMEM);
	note(s->opts->verbose, "cgroup v2 hierarchy at %s: sites are keyed by %s", root,
	     s->key_parts & SITE_KEY_CGROUP
		 ? (s->key_parts & SITE_KEY_COMM ? "comm and cgroup" : "cgroup")
		 : "comm");
	return EXIT_OK;
}
