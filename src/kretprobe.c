// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe mode's kretprobes. A kretprobe takes an instance at each entry of
 * its function and gives it back at the return: a call that finds none free
 * is a miss, its exit never seen (the kernel counts it, nmissed). The kprobe
 * PMU that libbpf attaches through gives a kretprobe the kernel's default
 * number, max(10, 2 x possible CPUs); a stuck drain holds more callers than
 * that inside lru_add_drain_all(), asleep on its mutex. tracefs's
 * kprobe_events takes a number ("r<maxactive>:group/event func"), so the
 * kretprobes are made there, each a perf event of its own that the program
 * is attached to, and removed at the end. Where tracefs will not make them,
 * the tracer takes the PMU's (tracer.c).
 *
 * The events are named drainstat_<pid>/<func>_<pid>: the pid tells a dead
 * drainstat's events (SIGKILL leaves them; the next drainstat removes them),
 * and kprobe_profile, which names an event without its group, tells ours.
 * drainstat runs as root beside untrusted users: it opens files only under a
 * directory whose file system is tracefs, which only the kernel fills.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>

#include "kretprobe.h"

#define TRACEFS_MAGIC 0x74726163
/*
 * kernel/trace/trace_kprobe.c's KRETPROBE_MAXACTIVE_MAX: the most
 * kprobe_events takes, the same from 4.12 up to 7.x.
 */
#define KRETPROBE_MAXACTIVE_MAX 4096
/*
 * Callers asleep inside a drain at once, beyond one running on each CPU: a
 * stuck drain holds every caller of lru_add_drain_all() on the mutex behind
 * it (hung-task reports name tens). An instance costs about 64 bytes, and
 * since 6.7 each possible CPU keeps a pointer ring as long as maxactive
 * rounded up to a power of two (lib/objpool.c): 64 KB at 4 CPUs with 1024, 4
 * MB at 255 (the default's 1 MB there).
 */
#define DRAIN_SLEEPERS_MAX 1024
#define KRETPROBES_MAX	   8
/* "-:drainstat_<pid>/<func>_<pid>\n" and "r4096:...": an event name is at most 64 */
#define EVENT_LINE_MAX 192

struct kret_event {
	char group[32];
	char name[64];
	char removal[EVENT_LINE_MAX]; /* its line for kprobe_events, ready for a signal handler */
	int perf_fd;		      /* its perf event, the link's once attached; -1 before */
	int link_fd; /* the BPF link's (perf_fd where the kernel has none), or -1 */
};

struct kretprobes {
	char dir[64];
	int dir_fd;    /* the tracefs mount, O_PATH */
	int events_fd; /* kprobe_events, opened for append: O_TRUNC would remove every event */
	struct kret_event ev[KRETPROBES_MAX];
	volatile sig_atomic_t nr; /* each ev[] entry is whole before nr counts it */
};

/* The run's kretprobes, for kretprobes__abandon() in a signal handler. */
static struct kretprobes *volatile live;

unsigned int kretprobes__maxactive(int nr_cpus)
{
	unsigned int cpus = nr_cpus > 0 ? (unsigned int)nr_cpus : 1;
	unsigned int n = cpus + DRAIN_SLEEPERS_MAX;

	/* never below the kernel's default, max(10, 2 x possible CPUs) */
	if (n < 2 * cpus)
		n = 2 * cpus;
	return n < KRETPROBE_MAXACTIVE_MAX ? n : KRETPROBE_MAXACTIVE_MAX;
}

/* fd if it is on tracefs, else closed: -errno (-ENOENT: not tracefs). */
static int on_tracefs(int fd)
{
	struct statfs st;

	if (fd < 0)
		return -errno;
	if (fstatfs(fd, &st) || st.f_type != TRACEFS_MAGIC) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/* The tracefs mount at dir: an O_PATH fd, or -errno (-ENOENT: not tracefs). */
static int open_tracefs(const char *dir)
{
	return on_tracefs(open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC));
}

/*
 * A file under the tracefs mount, and on tracefs: never a symlink (tracefs
 * has none), nor anything mounted over it (-ENOENT).
 */
static int open_in(const struct kretprobes *k, const char *path, int flags)
{
	return on_tracefs(openat(k->dir_fd, path, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
}

/* Up to size - 1 bytes of path, NUL-ended: their length, or -errno. */
static ssize_t read_in(const struct kretprobes *k, const char *path, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r = 0;
	int fd = open_in(k, path, O_RDONLY);

	if (fd < 0)
		return fd;
	while (n < size - 1 && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	return r < 0 ? -errno : (ssize_t)n;
}

/* path under the tracefs mount, line by line into fn(k, line, arg): 0 or -errno. */
static int each_line(const struct kretprobes *k, const char *path,
		     void (*fn)(const struct kretprobes *k, const char *line, void *arg), void *arg)
{
	char *line = NULL;
	size_t cap = 0;
	int fd = open_in(k, path, O_RDONLY), err = 0;
	FILE *f;

	if (fd < 0)
		return fd;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -errno;
	}
	errno = 0;
	while (getline(&line, &cap, f) > 0)
		fn(k, line, arg);
	if (ferror(f))
		err = errno ? -errno : -EIO;
	free(line);
	fclose(f);
	return err;
}

/* One line to kprobe_events: 0 or -errno (the kernel's error_log says more). */
static int write_events(const struct kretprobes *k, const char *line)
{
	size_t len = strlen(line);
	ssize_t n = write(k->events_fd, line, len);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/*
 * A line of kprobe_events ("r4096:drainstat_<pid>/<event> <func>"): the
 * removal of its event if it is a drainstat's whose process is gone.
 */
static void remove_if_stale(const struct kretprobes *k, const char *line, void *arg)
{
	char group[32], event[64], removal[EVENT_LINE_MAX];
	int pid;

	(void)arg;
	if (sscanf(line, "%*[^:]:%31[^/]/%63s", group, event) != 2 ||
	    sscanf(group, "drainstat_%d", &pid) != 1 || pid <= 0 || pid == getpid())
		return;
	if (!kill(pid, 0) || errno != ESRCH)
		return;
	snprintf(removal, sizeof(removal), "-:%s/%s\n", group, event);
	write_events(k, removal);
}

static int open_at(const char *dir, struct kretprobes *k)
{
	k->dir_fd = open_tracefs(dir);
	if (k->dir_fd < 0)
		return k->dir_fd;
	snprintf(k->dir, sizeof(k->dir), "%s", dir);
	k->events_fd = open_in(k, "kprobe_events", O_WRONLY | O_APPEND);
	return k->events_fd < 0 ? k->events_fd : 0;
}

static void close_fds(struct kretprobes *k)
{
	if (k->events_fd >= 0)
		close(k->events_fd);
	if (k->dir_fd >= 0)
		close(k->dir_fd);
	k->events_fd = k->dir_fd = -1;
}

int kretprobes__open(const char *const *dirs, struct kretprobes **out)
{
	struct kretprobes *k = calloc(1, sizeof(*k));
	int err = -ENOENT;

	if (!k)
		return -ENOMEM;
	k->dir_fd = k->events_fd = -1;
	for (; *dirs; dirs++) {
		err = open_at(*dirs, k);
		/* a directory that is not tracefs (or is absent): the next */
		if (err != -ENOENT && err != -ENOTDIR)
			break;
		close_fds(k);
	}
	if (err) {
		close_fds(k);
		free(k);
		return err;
	}
	/* events of drainstats killed before they could remove theirs */
	each_line(k, "kprobe_events", remove_if_stale, NULL);
	live = k;
	*out = k;
	return 0;
}

const char *kretprobes__dir(const struct kretprobes *k)
{
	return k->dir;
}

int kretprobes__count(const struct kretprobes *k)
{
	return k->nr;
}

/* The event's name, from func's: only letters, digits and '_' (a clone's ".constprop.0"). */
static void name_event(struct kret_event *e, const char *func)
{
	char name[sizeof(e->name)];
	size_t i;

	snprintf(e->group, sizeof(e->group), "drainstat_%d", (int)getpid());
	snprintf(name, sizeof(name), "%.40s_%d", func, (int)getpid());
	for (i = 0; name[i]; i++)
		if (!(name[i] == '_' || (name[i] >= '0' && name[i] <= '9') ||
		      (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z')))
			name[i] = '_';
	memcpy(e->name, name, sizeof(name));
	snprintf(e->removal, sizeof(e->removal), "-:drainstat_%d/%s\n", (int)getpid(), name);
}

/* The event's perf event, as libbpf opens a tracefs kprobe's: -errno or its fd. */
static int open_perf_event(const struct kretprobes *k, const struct kret_event *e)
{
	struct perf_event_attr attr = {.size = sizeof(attr), .type = PERF_TYPE_TRACEPOINT};
	char path[160], id[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "events/%s/%s/id", e->group, e->name);
	n = read_in(k, path, id, sizeof(id));
	if (n < 0)
		return (int)n;
	attr.config = strtoull(id, NULL, 10);
	attr.sample_period = 1;
	attr.wakeup_events = 1;
	/* every CPU's calls run the program, whatever the event's CPU */
	fd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The event made in kprobe_events and its perf event opened into e: 0 or -errno. */
static int make_event(struct kretprobes *k, struct kret_event *e, const char *func,
		      unsigned int maxactive)
{
	char line[EVENT_LINE_MAX], max[16] = "";
	int err;

	if (maxactive)
		snprintf(max, sizeof(max), "%u", maxactive);
	/* one a killed drainstat of the same pid left (pid reuse) */
	write_events(k, e->removal);
	snprintf(line, sizeof(line), "r%s:%s/%s %s\n", max, e->group, e->name, func);
	err = write_events(k, line);
	if (err)
		return err;
	e->perf_fd = open_perf_event(k, e);
	if (e->perf_fd < 0) {
		err = e->perf_fd;
		write_events(k, e->removal);
	}
	return err;
}

struct bpf_link *kretprobes__attach(struct kretprobes *k, const struct bpf_program *prog,
				    const char *func, unsigned int maxactive)
{
	struct kret_event *e;
	struct bpf_link *link;
	int err;

	if (k->nr == KRETPROBES_MAX) {
		errno = E2BIG;
		return NULL;
	}
	e = &k->ev[k->nr];
	*e = (struct kret_event){.perf_fd = -1, .link_fd = -1};
	name_event(e, func);
	/* counted before it is made: a signal from here on removes it */
	k->nr++;
	err = make_event(k, e, func, maxactive);
	if (err) {
		k->nr--;
		errno = -err;
		return NULL;
	}
	/* the link owns the perf event's fd from here on */
	link = bpf_program__attach_perf_event(prog, e->perf_fd);
	if (!link) {
		err = errno;
		close(e->perf_fd);
		write_events(k, e->removal);
		k->nr--;
		errno = err;
		return NULL;
	}
	e->link_fd = bpf_link__fd(link);
	return link;
}

/* A line of kprobe_profile, "  <event> <hits> <missed>": its misses if the event is ours. */
static void add_missed(const struct kretprobes *k, const char *line, void *arg)
{
	unsigned long long hits, nmissed;
	__u64 *missed = arg;
	char name[64];
	int i;

	if (sscanf(line, " %63s %llu %llu", name, &hits, &nmissed) != 3)
		return;
	for (i = 0; i < k->nr; i++)
		if (!strcmp(name, k->ev[i].name))
			*missed += nmissed;
}

int kretprobes__missed(const struct kretprobes *k, __u64 *missed)
{
	*missed = 0;
	return each_line(k, "kprobe_profile", add_missed, missed);
}

void kretprobes__free(struct kretprobes *k)
{
	int i;

	if (!k)
		return;
	live = NULL;
	/* the links, destroyed by now, closed the perf events */
	for (i = 0; i < k->nr; i++)
		write_events(k, k->ev[i].removal);
	close_fds(k);
	free(k);
}

void kretprobes__abandon(void)
{
	struct kretprobes *k = live;
	int i;

	if (!k)
		return;
	live = NULL;
	for (i = 0; i < k->nr; i++) {
		struct kret_event *e = &k->ev[i];

		if (e->link_fd >= 0 && e->link_fd != e->perf_fd)
			close(e->link_fd);
		if (e->perf_fd >= 0)
			close(e->perf_fd);
		/* strlen() and write() are async-signal-safe */
		if (write(k->events_fd, e->removal, strlen(e->removal)) < 0)
			e->removal[0] = '\0';
	}
}

/*
 * struct bpf_link_info of a perf_event link, as Linux 6.6 made it (libbpf
 * 1.1's headers predate it) with kprobe.missed, which 6.7 added.
 */
#define PERF_EVENT_KRETPROBE 4 /* enum bpf_perf_event_type: BPF_PERF_EVENT_KRETPROBE */
struct perf_link_info {
	__u32 type, id, prog_id, pad;
	__u32 perf_event_type, pad2;
	__u64 func_name;
	__u32 name_len, offset;
	__u64 addr, missed;
};

int kretprobes__link_missed(const struct bpf_link *link, __u64 *missed)
{
	struct perf_link_info info = {};
	__u32 len = sizeof(info);

	*missed = 0;
	/* EINVAL: a perf event's fd, where the kernel has no perf links (before 5.15) */
	if (bpf_obj_get_info_by_fd(bpf_link__fd(link), &info, &len))
		return errno == EINVAL ? -EOPNOTSUPP : -errno;
	if (info.type != BPF_LINK_TYPE_PERF_EVENT)
		return -ENOENT;
	/* before 6.6 the kernel fills no perf_event part; before 6.7, no missed (none of Debian's)
	 */
	if (len < sizeof(info) || !info.perf_event_type)
		return -EOPNOTSUPP;
	if (info.perf_event_type != PERF_EVENT_KRETPROBE)
		return -ENOENT;
	*missed = info.missed;
	return 0;
}
