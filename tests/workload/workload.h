/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the workloads share: option parsing and error messages, the file whose
 * uncached pages they read and drop, pinned threads, and the stop signals.
 *
 * Each workload is one .c file built alone (the Makefile compiles no other), so
 * everything here is static; static inline, so that what a workload does not use
 * costs nothing and draws no -Wunused warning. Before including it a workload
 * defines _GNU_SOURCE (before any header) and WORKLOAD_NAME, the prefix of its
 * messages, and it defines usage(), which usage_error() prints: print_usage()
 * with its synopsis, its options' lines and its notes.
 *
 * The options the workloads share are parsed here (parse_workload_options()):
 * -a CPU_A, -b CPU_B, -c COMM, -p PAGES, -v, -W, -H and -h, each taken by the
 * workloads whose getopt string names it; a workload parses only its own.
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before the first include: CPU_SET, O_NOATIME, pthread affinity"
#endif
#ifndef WORKLOAD_NAME
#error "define WORKLOAD_NAME, the workload's name, before including workload.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE	64
#define COMM_MAX	15 /* TASK_COMM_LEN - 1 */
#define CPU_ONLINE_PATH "/sys/devices/system/cpu/online"
/*
 * A full per-CPU batch moves to the LRU by itself and leaves nothing to drain:
 * a batch holds PAGEVEC_SIZE folios, 15 in 6.6 and before, 31 in 6.18.
 */
#define MAX_PAGES     14
#define MIN_FILE_SIZE (1L << 20) /* more than MAX_PAGES pages of 64 KiB */
#define DROP_TRIES    10

/* The workload's own: its options, on stdout for -h, on stderr after a usage error. */
static void usage(FILE *f);

/*
 * Option parsing. parse_long() only says -EINVAL; the others return 0, or
 * -EINVAL after a usage error was reported.
 */

static inline int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Is cpu in the list "0-3,5" of CPU_ONLINE_PATH? */
static inline bool cpu_online(long cpu)
{
	char buf[4096], *p = buf, *end;
	bool found = false;
	long lo, hi;
	FILE *f;

	f = fopen(CPU_ONLINE_PATH, "re");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	while (*p && !found) {
		lo = hi = strtol(p, &end, 10);
		if (end == p)
			break;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		found = cpu >= lo && cpu <= hi;
		p = *end == ',' ? end + 1 : end;
	}
	return found;
}

__attribute__((format(printf, 1, 2))) static inline int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, WORKLOAD_NAME ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	usage(stderr);
	return -EINVAL;
}

static inline int parse_cpu(const char *arg, long *cpu)
{
	if (parse_long(arg, 0, CPU_SETSIZE - 1, cpu))
		return usage_error("bad CPU number: %s", arg);
	if (!cpu_online(*cpu))
		return usage_error("CPU %s is not online", arg);
	return 0;
}

static inline int parse_comm(int opt, const char *arg, const char **comm)
{
	*comm = arg;
	return *arg && strlen(arg) <= COMM_MAX ? 0 : usage_error("bad -%c: '%s'", opt, arg);
}

static inline int parse_number(int opt, const char *arg, long min, long max, long *out)
{
	if (parse_long(arg, min, max, out))
		return usage_error("bad -%c: %s (%ld to %ld)", opt, arg, min, max);
	return 0;
}

/* The shared options' values; a workload sets its defaults before parsing. */
struct common_options {
	long cpu_a;	  /* -a CPU_A, online */
	long cpu_b;	  /* -b CPU_B, online */
	const char *comm; /* -c COMM, 1 to COMM_MAX bytes */
	long pages;	  /* -p PAGES, 1 to MAX_PAGES */
	bool verbose;	  /* -v */
	bool wait_usr1;	  /* -W: wait for SIGUSR1 after setup */
	bool hold;	  /* -H: stay once done, until killed */
	bool given[128];  /* each option letter met, shared or not */
};

/* 0, or 1 after -h, or -EINVAL after a usage error, or -ENOENT: opt is not a shared option. */
static inline int parse_common_option(int opt, const char *arg, struct common_options *c)
{
	switch (opt) {
	case 'a':
		return parse_cpu(arg, &c->cpu_a);
	case 'b':
		return parse_cpu(arg, &c->cpu_b);
	case 'c':
		return parse_comm(opt, arg, &c->comm);
	case 'p':
		return parse_number(opt, arg, 1, MAX_PAGES, &c->pages);
	case 'v':
		c->verbose = true;
		return 0;
	case 'W':
		c->wait_usr1 = true;
		return 0;
	case 'H':
		c->hold = true;
		return 0;
	case 'h':
		usage(stdout);
		return 1;
	default:
		return -ENOENT;
	}
}

/*
 * The workload's own option opt (its argument arg) into self: 0, -EINVAL after
 * a usage error was reported, or -ENOENT if opt is none of its options.
 */
typedef int (*own_option_fn)(int opt, const char *arg, void *self);

/*
 * getopt() over argv with optstring, the shared options into c, the others by
 * own into self (own NULL: the workload has none); up to the first error.
 * 0, or 1 after -h, or -EINVAL after a usage error was reported.
 */
static inline int parse_workload_options(int argc, char **argv, const char *optstring,
					 struct common_options *c, own_option_fn own, void *self)
{
	int opt, err = 0;

	opterr = 0;
	while (!err && (opt = getopt(argc, argv, optstring)) != -1) {
		if (opt > 0 && opt < (int)sizeof(c->given))
			c->given[opt] = true;
		err = parse_common_option(opt, optarg, c);
		if (err == -ENOENT && own)
			err = own(opt, optarg, self);
		if (err == -ENOENT)
			err = usage_error("unknown option or missing argument: -%c", optopt);
	}
	return err;
}

/* An option's entry in a usage text: "-a CPU_A" and its help, lines split at '\n'. */
struct usage_option {
	const char *name;
	const char *help;
};

#define USAGE_VERBOSE                                                                              \
	{                                                                                          \
		"-v", "describe setup and result on stderr"                                        \
	}
#define USAGE_HELP                                                                                 \
	{                                                                                          \
		"-h", "show this help"                                                             \
	}

/*
 * "usage: NAME SYNOPSIS", then the options, their help in one column two spaces
 * past the longest name, then the notes (each line ending in '\n').
 */
static inline void print_usage(FILE *f, const char *synopsis, const struct usage_option *opts,
			       int nr_opts, const char *notes)
{
	int i, width = 0, len;
	const char *help, *nl;

	fprintf(f, "usage: " WORKLOAD_NAME " %s\n", synopsis);
	for (i = 0; i < nr_opts; i++)
		if ((len = (int)strlen(opts[i].name)) > width)
			width = len;
	for (i = 0; i < nr_opts; i++) {
		fprintf(f, "  %-*s", width + 2, opts[i].name);
		for (help = opts[i].help; (nl = strchr(help, '\n')); help = nl + 1)
			fprintf(f, "%.*s\n  %*s", (int)(nl - help), help, width + 2, "");
		fprintf(f, "%s\n", help);
	}
	fputs(notes, f);
}

#define USAGE_OPTIONS(opts) (opts), (int)(sizeof(opts) / sizeof((opts)[0]))

/* "NAME: OP[ WHAT]: strerror(-err)" on stderr; the exit code 1. */
static inline int runtime_error(const char *op, const char *what, int err)
{
	fprintf(stderr, WORKLOAD_NAME ": %s%s%s: %s\n", op, what ? " " : "", what ? what : "",
		strerror(-err));
	return 1;
}

static inline int take_comm(const char *comm)
{
	return prctl(PR_SET_NAME, comm, 0, 0, 0) < 0 ? -errno : 0;
}

/* The file: real data on disk, its first pages out of the page cache. */

static inline int write_fill(int fd, off_t from, off_t to)
{
	char chunk[65536];
	size_t len;
	ssize_t n;

	memset(chunk, 'd', sizeof(chunk));
	for (; from < to; from += n) {
		len = to - from < (off_t)sizeof(chunk) ? (size_t)(to - from) : sizeof(chunk);
		n = pwrite(fd, chunk, len, from);
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
	}
	return 0;
}

/* Give the file at least size bytes of real data, written out to disk. */
static inline int extend_file(const char *path, off_t size)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = fstat(fd, &st) < 0 ? -errno : 0;
	if (!err && st.st_size < size)
		err = write_fill(fd, st.st_size, size);
	if (!err && fsync(fd) < 0)
		err = -errno;
	close(fd);
	return err;
}

/*
 * How many of the first pages of the file are in the page cache. Since 5.0
 * mincore() calls every page resident in a file the caller neither owns nor may
 * write, so such a file looks undroppable.
 */
static inline int count_resident(int fd, long pages, long page_size)
{
	unsigned char *vec;
	int resident = 0;
	void *map;
	long i;

	map = mmap(NULL, pages * page_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	vec = calloc(pages, 1);
	if (!vec || mincore(map, pages * page_size, vec) < 0)
		resident = vec ? -errno : -ENOMEM;
	for (i = 0; resident >= 0 && i < pages; i++)
		resident += vec[i] & 1;
	free(vec);
	munmap(map, pages * page_size);
	return resident;
}

/* Drop the file's page cache; -EBUSY if its first pages stay (tmpfs, busy pages). */
static inline int drop_cached(int fd, long pages, long page_size)
{
	int tries, err, resident;

	for (tries = 0; tries < DROP_TRIES; tries++) {
		err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		if (err)
			return -err;
		resident = count_resident(fd, pages, page_size);
		if (resident <= 0)
			return resident;
	}
	return -EBUSY;
}

/*
 * Open the file, its first pages dropped from the page cache. FADV_RANDOM keeps
 * readahead to the page asked for, so each read batches one order-0 folio on the
 * reading thread's CPU.
 */
static inline int open_uncached(const char *path, long pages, long page_size, int *fdp)
{
	struct stat st;
	int fd, err;

	if (stat(path, &st) < 0 || st.st_size < MIN_FILE_SIZE) {
		err = extend_file(path, MIN_FILE_SIZE);
		if (err)
			return err;
	}
	/*
	 * O_NOATIME: an atime update dirties the inode, and the journal's folios
	 * then land in the per-CPU batches too; enough of them flush CPU A's batch
	 * early and the DONTNEED succeeds without a drain.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* fsync: dirty or writeback pages cannot be dropped. */
	err = fsync(fd) < 0 ? -errno : -posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	if (!err)
		err = drop_cached(fd, pages, page_size);
	if (err) {
		close(fd);
		return err;
	}
	*fdp = fd;
	return 0;
}

static inline int read_pages(int fd, char *buf, long pages, long page_size)
{
	ssize_t n;
	long i;

	for (i = 0; i < pages; i++) {
		n = pread(fd, buf, page_size, i * page_size);
		if (n != page_size)
			return n < 0 ? -errno : -EIO;
	}
	return 0;
}

/* Threads. */

static inline int wait_turn(sem_t *sem)
{
	while (sem_wait(sem) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

static inline int start_pinned(pthread_t *t, long cpu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_attr_init(&attr);
	if (err)
		return -err;
	err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (!err)
		err = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -err;
}

/* Signals: SIGINT and SIGTERM set stop_requested, SIGUSR1 ends a -W wait. */

static volatile sig_atomic_t stop_requested __attribute__((unused));

static inline void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static inline int catch_stop_signals(void)
{
	struct sigaction sa = {.sa_handler = on_stop_signal};

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0)
		return -errno;
	return 0;
}

/* Blocked before the threads start, so they inherit it and only sigwait() sees it. */
static inline void block_usr1(void)
{
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
}

/*
 * SIGUSR1 is blocked in every thread (see block_usr1), so sigtimedwait() takes
 * it here; SIGINT and SIGTERM, caught, end the wait too (within a tick).
 */
static inline void wait_usr1(void)
{
	struct timespec tick = {.tv_nsec = 50000000};
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while (!stop_requested && sigtimedwait(&set, NULL, &tick) < 0)
		;
}

#endif /* WORKLOAD_H */
