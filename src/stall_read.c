// SPDX-License-Identifier: GPL-2.0
/*
 * The facts of the kernel a stall's cause rests on, read when a report is
 * made: kernel files only (procfs, sysfs, debugfs), each read once, a few
 * bytes at most, no symlink followed at the last step; what cannot be read is
 * not known, never an error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cpulist.h"
#include "stall.h"

/* under the root directory: the first two relative to it */
#define RT_RUNTIME_PATH "proc/sys/kernel/sched_rt_runtime_us"
#define ONLINE_PATH	"sys/devices/system/cpu/online"
#define SCHED_DEBUG_DIR "/sys/kernel/debug/sched"
/* a CPU list of 8192 CPUs, every other one online, is 24 kB; the others a line */
#define READ_MAX 32768

/*
 * At most size - 1 bytes of path under dirfd into buf, NUL-terminated: the
 * bytes read, or -errno.
 */
static ssize_t read_small(int dirfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* root + path: the files of a system under root ("" the running one) */
static int open_dir(const char *root, const char *path)
{
	char full[4096];

	if ((size_t)snprintf(full, sizeof(full), "%s%s", root, path) >= sizeof(full))
		return -ENAMETOOLONG;
	return open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* A whole number from a one-line file, or false. */
static bool read_number(const char *root, const char *path, long long *v)
{
	char buf[64], *end;
	int dfd = open_dir(root, "/");
	ssize_t n;

	if (dfd < 0)
		return false;
	n = read_small(dfd, path, buf, sizeof(buf));
	close(dfd);
	if (n <= 0)
		return false;
	errno = 0;
	*v = strtoll(buf, &end, 10);
	return !errno && end != buf && (*end == '\n' || !*end);
}

static void read_online(const char *root, struct stall_system *sys)
{
	char *buf = malloc(READ_MAX);
	int dfd = open_dir(root, "/");

	if (buf && dfd >= 0 && read_small(dfd, ONLINE_PATH, buf, READ_MAX) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		sys->online_known = !cpulist__parse(buf, sys->online);
	}
	if (!sys->online_known)
		memset(sys->online, 0, sizeof(sys->online));
	if (dfd >= 0)
		close(dfd);
	free(buf);
}

/*
 * debugfs's sched/preempt: "none (voluntary) full lazy", the model in use in
 * parentheses (PREEMPT_DYNAMIC kernels); else what uname -v says of a
 * kernel built for one model: PREEMPT_RT, or PREEMPT (full).
 */
static void read_preempt(int sched_fd, struct stall_system *sys)
{
	char buf[128], *open, *close_p;
	struct utsname u;

	if (sched_fd >= 0 && read_small(sched_fd, "preempt", buf, sizeof(buf)) > 0) {
		open = strchr(buf, '(');
		close_p = open ? strchr(open, ')') : NULL;
		if (close_p && (size_t)(close_p - open - 1) < sizeof(sys->preempt)) {
			memcpy(sys->preempt, open + 1, (size_t)(close_p - open - 1));
			return;
		}
	}
	if (uname(&u))
		return;
	if (strstr(u.version, "PREEMPT_RT"))
		snprintf(sys->preempt, sizeof(sys->preempt), "rt");
	else if (strstr(u.version, "PREEMPT ") && !strstr(u.version, "PREEMPT_DYNAMIC"))
		snprintf(sys->preempt, sizeof(sys->preempt), "full");
}

/* The fair servers of the CPUs in cpus: their runtime, 0 when off. */
static void read_fair_servers(int sched_fd, const __u64 *cpus, struct stall_system *sys)
{
	char path[64], buf[32];
	long long runtime;
	int fd, cpu;

	if (sched_fd < 0)
		return;
	fd = openat(sched_fd, "fair_server", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		sys->fair_dir = errno == ENOENT ? FAIR_NONE : FAIR_NOT_KNOWN;
		return;
	}
	sys->fair_dir = FAIR_ON;
	for (cpu = 0; cpu < DRAINSTAT_MAX_CPUS; cpu++) {
		if (!(cpus[cpu / 64] >> (cpu % 64) & 1))
			continue;
		snprintf(path, sizeof(path), "cpu%d/runtime", cpu);
		if (read_small(fd, path, buf, sizeof(buf)) <= 0)
			continue;
		runtime = strtoll(buf, NULL, 10);
		sys->fair_read[cpu / 64] |= 1ULL << (cpu % 64);
		if (!runtime)
			sys->fair_off[cpu / 64] |= 1ULL << (cpu % 64);
	}
	close(fd);
}

void stall__read_system(const char *root, const __u64 *cpus, struct stall_system *sys)
{
	long long v;
	int sched_fd;

	memset(sys, 0, sizeof(*sys));
	if (read_number(root, RT_RUNTIME_PATH, &v)) {
		sys->rt_runtime_known = true;
		sys->rt_runtime_us = v;
	}
	read_online(root, sys);
	/* not mounted, or not ours to read: the fair servers and the preemption model not known */
	sched_fd = open_dir(root, SCHED_DEBUG_DIR);
	read_preempt(sched_fd, sys);
	read_fair_servers(sched_fd, cpus, sys);
	if (sched_fd >= 0)
		close(sched_fd);
}
