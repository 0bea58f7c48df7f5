// SPDX-License-Identifier: GPL-2.0
/*
 * drainforce: force exactly one remote LRU drain per round, a workload whose
 * truth is known.
 *
 * A reader thread pinned to CPU A reads a few uncached pages of FILE; their fresh
 * order-0 folios sit in CPU A's per-CPU LRU batch, which holds a reference on each.
 * A dropper thread pinned to CPU B then calls posix_fadvise(DONTNEED): its local
 * lru_add_drain() cannot reach CPU A's batch, so the invalidation fails and
 * generic_fadvise() escalates to lru_add_drain_all(), which queues one
 * lru_add_drain_per_cpu work on CPU A. Its second pass drops the pages, so the next
 * round reads them from disk again. Threads, not processes: an exiting process
 * drains its own CPU. With A == B the local drain finds the folios: zero drains.
 *
 * Setup and a warm-up round run under the comm "df-setup"; the reader, the dropper
 * and the idle main thread take COMM only afterwards, so every drain under COMM is
 * one of the ROUNDS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define WORKLOAD_NAME "drainforce"
#include "workload.h"

#define SETUP_COMM "df-setup"

struct options {
	struct common_options common; /* -W: round 1 waits for SIGUSR1; -H: stay after the rounds */
	long rounds;		      /* 0: until SIGINT or SIGTERM (-r) */
	long sleep_ms;
	long comms;	   /* -k: the dropper cycles through this many comms; 0: COMM only */
	const char *times; /* -t: each round's DONTNEED call, timed, to this file */
	/* -F: the DONTNEED call's user frames in these files, in turn */
	const char *frames_files[4];
	int nr_frames_files;
	const char *path;
};

/* -F: a frame of a frame pointer chain, as the kernel walks it (x86_64) */
struct fake_frame {
	struct fake_frame *next;
	unsigned long ret;
};

#define FAKE_FRAMES	31	   /* with the syscall's own address, the 32 -T keeps */
#define FAKE_FRAMES_MAP (1L << 20) /* of the file, mapped from its start */

/* State shared by the reader and the dropper; the semaphores order every access. */
struct lockstep {
	const struct options *opts;
	int fd;
	long page_size;
	sem_t to_reader;
	sem_t to_dropper;
	sem_t warmed_up; /* round 0 done: the main thread may sleep, then start round 1 */
	atomic_bool finished;
	atomic_int err; /* first errno of either thread */
	const char *failed_op;
	long rounds_done;
	struct round_time *times;  /* -t: one per round, rounds 1..N at 0..N-1 */
	struct fake_frame *frames; /* -F: the chain the DONTNEED call is made with */
};

/* -t: a round's DONTNEED call, its start (CLOCK_REALTIME, as bash's EPOCHREALTIME) and length. */
struct round_time {
	long long start_ns;
	long long ns;
};

static long long realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void usage(FILE *f)
{
	static const struct usage_option opts[] = {
	    {"-n ROUNDS", "rounds to run, one remote drain each (default 100)"},
	    {"-r", "run rounds until SIGINT/SIGTERM, then print the count"},
	    {"-a CPU_A", "CPU of the reader, the CPU drained (default 0)"},
	    {"-b CPU_B", "CPU of the dropper, the caller of the drain (default 1)"},
	    {"-c COMM", "comm of the threads after setup (default drainforce)"},
	    {"-k K", "the dropper takes comm COMM-I in round I, I cycling 0..K-1:\n"
		     "K distinct sites (COMM at most 15 - digits(K-1) - 1 chars)"},
	    {"-p PAGES", "uncached pages read per round, 1 to 14 (default 4)"},
	    {"-s MS", "sleep MS milliseconds after setup, before round 1"},
	    {"-t TIMES", "write each round's DONTNEED call to TIMES (needs -n): its\n"
			 "start (realtime ns) and its length (ns), a line each"},
	    {"-W", "after setup, wait for SIGUSR1 before round 1 (after any -s)"},
	    {"-F FRAMES", "make each DONTNEED call (x86_64) with a frame pointer chain\n"
			  "of 31 return addresses into FRAMES (1 MiB at least), mapped:\n"
			  "a hostile user's stack, as the -T log reads it; up to 4\n"
			  "times, the frames in each file in turn"},
	    {"-H", "after the rounds, print their count and stay until killed:\n"
		   "a tracer of its PID goes on"},
	    USAGE_VERBOSE,
	    USAGE_HELP,
	};

	print_usage(f,
		    "[-hv] [-n ROUNDS | -r] [-a CPU_A] [-b CPU_B] [-c COMM] [-k K] [-p PAGES] "
		    "[-s MS] [-t TIMES] [-F FRAMES] [-W] [-H] FILE",
		    USAGE_OPTIONS(opts),
		    "FILE must be on a block filesystem (not tmpfs); it is extended to 1 MiB.\n");
}

/* drainforce's own options into self, a struct options. */
static int parse_option(int opt, const char *arg, void *self)
{
	struct options *o = self;

	switch (opt) {
	case 'n':
		if (parse_long(arg, 1, 1L << 40, &o->rounds))
			return usage_error("bad -n: %s", arg);
		return 0;
	case 'r':
		o->rounds = 0;
		return 0;
	case 'k':
		return parse_number(opt, arg, 1, 1000000, &o->comms);
	case 's':
		if (parse_long(arg, 0, 1L << 30, &o->sleep_ms))
			return usage_error("bad -s: %s", arg);
		return 0;
	case 't':
		o->times = arg;
		return 0;
	case 'F':
		if (o->nr_frames_files ==
		    (int)(sizeof(o->frames_files) / sizeof(o->frames_files[0])))
			return usage_error("-F given more than 4 times");
		o->frames_files[o->nr_frames_files++] = arg;
		return 0;
	default:
		return -ENOENT;
	}
}

/* 0, or 1 after -h, or -EINVAL after a usage error was reported. */
static int parse_options(int argc, char **argv, struct options *o)
{
	struct common_options *c = &o->common;
	int err;

	*o = (struct options){.rounds = 100,
			      .common = {.cpu_b = 1, .comm = "drainforce", .pages = 4}};
	err = parse_workload_options(argc, argv, "n:ra:b:c:k:p:s:t:F:vWHh", c, parse_option, o);
	if (err)
		return err;
	if (c->given['n'] && c->given['r'])
		return usage_error("-n and -r exclude each other");
	if (o->times && !o->rounds)
		return usage_error("-t needs -n");
	if (optind != argc - 1)
		return usage_error("expected exactly one FILE");
	o->path = argv[optind];
	if (o->comms && strlen(c->comm) + 1 + snprintf(NULL, 0, "%ld", o->comms - 1) > COMM_MAX)
		return usage_error("-c %s is too long for -k %ld", c->comm, o->comms);
	/* The defaults 0 and 1 are checked too. */
	if (!cpu_online(c->cpu_a) || !cpu_online(c->cpu_b))
		return usage_error("CPU_A or CPU_B is not online");
	return 0;
}

/* Record the first failure and let the other thread go, to find finished set. */
static void fail(struct lockstep *ls, int errnum, const char *op, sem_t *other)
{
	int none = 0;

	if (atomic_compare_exchange_strong(&ls->err, &none, errnum))
		ls->failed_op = op;
	atomic_store(&ls->finished, true);
	sem_post(other);
}

/*
 * Round 0 is a warm-up under the setup comm: its drain empties what other tasks
 * left on any CPU (buffer heads in a bh_lru, say), which would make round 1
 * queue a self work on CPU B. The threads take COMM at round 1.
 */
static void *reader_main(void *arg)
{
	struct lockstep *ls = arg;
	long round;
	char *buf;
	int err;

	buf = calloc(1, ls->page_size);
	if (!buf) {
		fail(ls, ENOMEM, "reader setup", &ls->to_dropper);
		return NULL;
	}
	for (round = 0; !wait_turn(&ls->to_reader) && !atomic_load(&ls->finished); round++) {
		err = round == 1 ? take_comm(ls->opts->common.comm) : 0;
		if (err) {
			fail(ls, -err, "prctl", &ls->to_dropper);
			break;
		}
		err = read_pages(ls->fd, buf, ls->opts->common.pages, ls->page_size);
		if (err) {
			fail(ls, -err, "pread", &ls->to_dropper);
			break;
		}
		sem_post(&ls->to_dropper);
	}
	free(buf);
	return NULL;
}

/* The dropper's comm in round (>= 1): COMM, or COMM-I with -k. */
static int dropper_comm(const struct options *o, long round)
{
	char comm[64]; /* the length was checked against COMM_MAX with the options */

	if (!o->comms)
		return round == 1 ? take_comm(o->common.comm) : 0;
	snprintf(comm, sizeof(comm), "%s-%ld", o->common.comm, (round - 1) % o->comms);
	return take_comm(comm);
}

static bool last_round(const struct lockstep *ls)
{
	if (ls->opts->rounds)
		return ls->rounds_done == ls->opts->rounds;
	return ls->rounds_done && stop_requested;
}

/*
 * POSIX_FADV_DONTNEED on fd with rbp at frames: the kernel's walk of the user
 * stack starts there (perf_callchain_user()). A positive errno, as posix_fadvise().
 */
static int fadvise_framed(int fd, struct fake_frame *frames)
{
#ifdef __x86_64__
	register long advice asm("r10") = POSIX_FADV_DONTNEED;
	long ret;

	asm volatile("mov %%rbp, %%r12\n\tmov %[fp], %%rbp\n\tsyscall\n\tmov %%r12, %%rbp"
		     : "=a"(ret)
		     : "0"((long)SYS_fadvise64), "D"((long)fd), "S"(0L), "d"(0L),
		       "r"(advice), [fp] "b"(frames)
		     : "rcx", "r11", "r12", "memory");
	return ret < 0 ? (int)-ret : 0;
#else
	(void)fd;
	(void)frames;
	return EOPNOTSUPP;
#endif
}

/* -F: path's first FAKE_FRAMES_MAP bytes mapped, or NULL (errno set). */
static char *map_frames_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *base;

	if (fd < 0)
		return NULL;
	base = mmap(NULL, FAKE_FRAMES_MAP, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	return base == MAP_FAILED ? NULL : base;
}

/* -F: the files mapped, and a chain of FAKE_FRAMES frames into them in turn, 64 bytes apart. */
static int make_frames(const struct options *o, struct fake_frame **out)
{
	char *base[sizeof(o->frames_files) / sizeof(o->frames_files[0])];
	struct fake_frame *f;
	int i;

	for (i = 0; i < o->nr_frames_files; i++) {
		base[i] = map_frames_file(o->frames_files[i]);
		if (!base[i])
			return -errno;
	}
	f = calloc(FAKE_FRAMES, sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (i = 0; i < FAKE_FRAMES; i++)
		f[i] = (struct fake_frame){i + 1 < FAKE_FRAMES ? &f[i + 1] : NULL,
					   (unsigned long)base[i % o->nr_frames_files] + 0x1000 +
					       64UL * (unsigned long)i};
	*out = f;
	return 0;
}

static void *dropper_main(void *arg)
{
	struct lockstep *ls = arg;
	long long start;
	long round;
	int err;

	for (round = 0; !wait_turn(&ls->to_dropper) && !atomic_load(&ls->finished); round++) {
		err = round >= 1 ? dropper_comm(ls->opts, round) : 0;
		if (err) {
			fail(ls, -err, "prctl", &ls->to_reader);
			break;
		}
		start = ls->times && round >= 1 ? realtime_ns() : 0;
		err = ls->frames ? fadvise_framed(ls->fd, ls->frames)
				 : posix_fadvise(ls->fd, 0, 0, POSIX_FADV_DONTNEED);
		if (start)
			ls->times[round - 1] = (struct round_time){start, realtime_ns() - start};
		if (err) {
			fail(ls, err, "posix_fadvise", &ls->to_reader);
			break;
		}
		ls->rounds_done = round;
		if (last_round(ls)) {
			atomic_store(&ls->finished, true);
			sem_post(&ls->to_reader);
			break;
		}
		sem_post(round == 0 ? &ls->warmed_up : &ls->to_reader);
	}
	/* however the loop ended, the main thread must not wait for round 0 forever */
	sem_post(&ls->warmed_up);
	return NULL;
}

/* -t: 0, or -EIO with errno set. */
static int write_times(const char *path, const struct round_time *t, long n)
{
	FILE *f = fopen(path, "w");
	long i;

	if (!f)
		return -EIO;
	for (i = 0; i < n; i++)
		fprintf(f, "%lld %lld\n", t[i].start_ns, t[i].ns);
	return fclose(f) ? -EIO : 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stop_requested)
		;
}

/* Run the rounds; on failure return -errno and name the operation in *op. */
static int run_lockstep(struct lockstep *ls, const char **op)
{
	pthread_t reader, dropper;
	int err;

	*op = "sem_init";
	if (sem_init(&ls->to_reader, 0, 0) < 0 || sem_init(&ls->to_dropper, 0, 0) < 0 ||
	    sem_init(&ls->warmed_up, 0, 0) < 0)
		return -errno;
	*op = "pthread_create";
	err = start_pinned(&reader, ls->opts->common.cpu_a, reader_main, ls);
	if (err)
		return err;
	err = start_pinned(&dropper, ls->opts->common.cpu_b, dropper_main, ls);
	if (err) {
		fail(ls, -err, *op, &ls->to_reader);
		pthread_join(reader, NULL);
		return err;
	}
	/*
	 * The warm-up round runs before the -s sleep, so a tracer started during
	 * the sleep sees only rounds 1..N. The idle main thread then takes COMM
	 * too, for pgrep and for tests waiting on it; the threads take their own.
	 */
	sem_post(&ls->to_reader);
	while (sem_wait(&ls->warmed_up) < 0 && errno == EINTR)
		;
	take_comm(ls->opts->common.comm);
	sleep_ms(ls->opts->sleep_ms);
	if (ls->opts->common.wait_usr1)
		wait_usr1();
	sem_post(&ls->to_reader);
	pthread_join(reader, NULL);
	pthread_join(dropper, NULL);
	*op = ls->failed_op;
	return -atomic_load(&ls->err);
}

int main(int argc, char **argv)
{
	struct lockstep ls = {0};
	struct options opts;
	const char *op;
	int err;

	err = parse_options(argc, argv, &opts);
	if (err)
		return err > 0 ? 0 : EXIT_USAGE;
	ls.opts = &opts;
	ls.page_size = sysconf(_SC_PAGESIZE);
	err = take_comm(SETUP_COMM);
	if (err)
		return runtime_error("prctl", NULL, err);
	err = opts.rounds ? 0 : catch_stop_signals();
	if (err)
		return runtime_error("sigaction", NULL, err);
	err = open_uncached(opts.path, opts.common.pages, ls.page_size, &ls.fd);
	if (err == -EBUSY)
		return runtime_error("cannot drop the page cache (tmpfs?) of", opts.path,
				     -EOPNOTSUPP);
	if (err)
		return runtime_error("setup of", opts.path, err);
	if (opts.common.verbose)
		fprintf(stderr, "drainforce: %s ready: %ld pages a round, CPU_A %ld, CPU_B %ld\n",
			opts.path, opts.common.pages, opts.common.cpu_a, opts.common.cpu_b);
	err = opts.nr_frames_files ? make_frames(&opts, &ls.frames) : 0;
	if (err)
		return runtime_error("-F", NULL, err);
	if (opts.common.wait_usr1)
		block_usr1();
	ls.times = opts.times ? calloc((size_t)opts.rounds, sizeof(*ls.times)) : NULL;
	if (opts.times && !ls.times)
		return runtime_error("calloc", NULL, -ENOMEM);
	err = run_lockstep(&ls, &op);
	close(ls.fd);
	if (!err && opts.times)
		err = write_times(opts.times, ls.times, ls.rounds_done);
	free(ls.times);
	if (err == -EIO)
		return runtime_error("write", opts.times, -errno);
	if (err)
		return runtime_error(op, NULL, err);
	if (opts.common.verbose)
		fprintf(stderr, "drainforce: %ld rounds done\n", ls.rounds_done);
	if (!opts.rounds || opts.common.hold)
		printf("%ld\n", ls.rounds_done);
	fflush(stdout);
	/* a process's exit drains its CPU, and ends drainstat -p: held, it does neither */
	while (opts.common.hold)
		pause();
	return 0;
}
