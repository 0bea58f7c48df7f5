// SPDX-License-Identifier: GPL-2.0
/*
 * stuckdrain: hold one lru_add_drain_all() for a set time, a workload whose
 * truth is known.
 *
 * A spinner thread pinned to CPU A reads a few uncached pages of FILE; their fresh
 * order-0 folios sit in CPU A's per-CPU LRU batch, which holds a reference on each.
 * The spinner then turns SCHED_FIFO and busy-loops for SPIN_MS without a syscall.
 * A dropper thread pinned to CPU B calls posix_fadvise(DONTNEED) on FILE meanwhile:
 * its local lru_add_drain() cannot reach CPU A's batch, so the invalidation fails
 * and generic_fadvise() escalates to lru_add_drain_all(), which queues one
 * lru_add_drain_per_cpu work on CPU A and waits for it. That work's kworker is
 * SCHED_OTHER: it runs only when the spinner lets go of CPU A, so the drain is
 * held for the rest of the spin, and the DONTNEED call's duration measures it.
 *
 * This holds only without RT throttling: the caller sets
 * kernel.sched_rt_runtime_us to -1 and, from 6.12 on, the fair server's runtime
 * (debugfs sched/fair_server/cpuN/runtime) to 0; this workload touches no sysctl.
 * Otherwise the kworker gets CPU A after about 950 ms, when RT throttling or the
 * deferred fair server (50 ms of every second for SCHED_OTHER) lets it run: a
 * spin shorter than that is held to its end either way. Under kernel lockdown
 * debugfs refuses the fair server's files, so that is the limit there.
 *
 * With -m the spinner also reads pages of a second file, FILE.2, and a waiter
 * thread on CPU B calls DONTNEED on FILE.2 WAIT_DELAY_MS after the dropper's call
 * began, and not before the dropper holds the drain mutex: it escalates too and
 * blocks on the mutex behind the held drain.
 *
 * With -n N, N more waiters do the same at the same moment: a pile-up of
 * N + 1 callers on the mutex behind the held drain (kprobe mode's kretprobes
 * must have room for them all).
 *
 * With -N NICE the spinner stays SCHED_OTHER, at nice NICE, instead of turning
 * SCHED_FIFO: a normal task that holds CPU A only as long as the fair class lets
 * it starve the kworker (the caller lowers the kworkers' weight: renices them).
 * With -R the dropper first writes /proc/sys/vm/stat_refresh, which runs a work
 * on every CPU's kworker and waits for them: CPU A's runs once the fair class
 * lets it under the spinner, and that run is charged to the kworker at its
 * weight; its next work, the drain's, then waits until the spinner has run as
 * much longer as the spinner's weight exceeds the kworker's (nice -20 against
 * 19: about 5,900 times the kworker's run). With -K the workers of CPU A's
 * normal pool (kworker/A:N, not the highpri kworker/A:NH) are SCHED_IDLE
 * (weight 3) from just before the spin until the drain is done: nice -20
 * against them, about 29,600 times. Workers the pool creates meanwhile keep
 * their policy.
 *
 * With -X the spinner is a process of its own, forked before setup ends, so that
 * a test can move it to another cgroup (a unit, a pod) than the dropper's: the
 * drain in flight then names the caller's cgroup and the spinner's apart.
 *
 * Threads, not processes: an exiting process drains its own CPU. Setup, including
 * a warm-up remote drain that empties what other tasks left in the per-CPU
 * batches, runs under the comm "sd-setup"; the threads take their own comms only
 * afterwards, so the one held drain is the only drain under COMM.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define WORKLOAD_NAME "stuckdrain"
#include "workload.h"

#define SETUP_COMM "sd-setup"
/*
 * The pending work on CPU A stalls its worker pool: stay far below the workqueue
 * watchdog's 30 s (and keep the machine usable).
 */
#define MAX_SPIN_MS 120000
#define NSEC_PER_MS 1000000L

enum { SPINNER, DROPPER, WAITER, NR_ROLES };
/* -n: the waiters beyond the first, WAITER + 1 on in the threads' arrays */
#define MAX_EXTRA_WAITERS 200
#define MAX_THREADS	  (NR_ROLES + MAX_EXTRA_WAITERS)
/* -K: CPU A's pool holds a few workers; more are not looked at */
#define MAX_KWORKERS 64

struct options {
	struct common_options common; /* -H: after the facts, stay until SIGINT/SIGTERM */
	const char *spin_comm;
	const char *wait_comm;
	long prio;
	long nice; /* -N: SCHED_OTHER at this nice, not SCHED_FIFO */
	long spin_ms;
	long wait_delay_ms;
	long extra_waiters; /* -n */
	bool second_file;   /* -m: FILE.2 and the waiter */
	bool spin_process;  /* -X: the spinner a process of its own */
	const char *path;
};

/*
 * State shared by the threads (and with -X the spinner's process: it is mapped
 * shared); the semaphores order every access.
 */
struct run {
	const struct options *opts;
	int fd;
	int fd2; /* FILE.2 with -m, else -1 */
	long page_size;
	int nr_threads;
	sem_t ready;	/* each thread -> main: its tid is known */
	sem_t go;	/* main -> each thread: setup done */
	sem_t spinning; /* spinner -> dropper: CPU A is held */
	sem_t dropping; /* dropper -> waiter: drop_start is set */
	struct timespec drop_start;
	/* the spin's end and the dropper's return: when it let go of CPU A, and after */
	struct timespec spin_end, drop_end;
	pid_t tid[MAX_THREADS];
	pid_t spin_pid;		     /* the spinner's process: ours, or with -X its own */
	long wait_ms[MAX_THREADS];   /* spinner: the spin; others: their DONTNEED call */
	long prime_ms;		     /* -R: the dropper's stat_refresh */
	pid_t kworker[MAX_KWORKERS]; /* -K: the workers made SCHED_IDLE */
	int nr_kworkers;
	atomic_int waiters_started; /* a waiter's slot: WAITER + its order */
	long waiter_delay_ms;	    /* the waiter's call began this long after the dropper's */
	bool waiter_after_flush;    /* ... once the dropper was seen in flush_work() */
	atomic_bool dropped;	    /* the dropper's call returned */
	atomic_bool abandon;
	atomic_int err; /* first errno of any thread */
	const char *failed_op;
};

static void usage(FILE *f)
{
	static const struct usage_option opts[] = {
	    {"-a CPU_A", "CPU of the spinner, the CPU drained (default 1)"},
	    {"-b CPU_B", "CPU of the dropper and the waiter (default 0)"},
	    {"-c COMM", "comm of the dropper and of the main thread after setup\n"
			"(default sd-dropper)"},
	    {"-S SPIN_COMM", "comm of the spinner (default sd-spin)"},
	    {"-w WAIT_COMM", "comm of the waiter (default sd-waiter)"},
	    {"-p PAGES", "uncached pages read per file, 1 to 14, with -m 1 to 7\n"
			 "(default 4)"},
	    {"-P PRIO", "SCHED_FIFO priority of the spinner, 1 to 99 (default 50)"},
	    {"-N NICE", "the spinner SCHED_OTHER at nice NICE, -20 to 19, not\n"
			"SCHED_FIFO"},
	    {"-t SPIN_MS", "how long the spinner holds CPU_A, 1 to 120000 (default 2000)"},
	    {"-m", "also a second file FILE.2 and a waiter thread dropping it"},
	    {"-d WAIT_DELAY_MS", "the waiter's call starts WAIT_DELAY_MS after the dropper's\n"
				 "(default 200), once the dropper waits in flush_work()"},
	    {"-n WAITERS", "WAITERS more waiters (0 to 200, with -m), each dropping\n"
			   "FILE.2 with the first: a pile-up on the drain mutex"},
	    {"-W", "after setup, wait for SIGUSR1 before the spinner starts"},
	    {"-H", "after the facts, print \"held\" on stderr and stay until\n"
		   "SIGINT or SIGTERM: a tracer of its PID goes on"},
	    {"-R", "the dropper writes /proc/sys/vm/stat_refresh before its\n"
		   "DONTNEED: CPU_A's kworker runs a work under the spinner"},
	    {"-K", "the workers of CPU_A's pool SCHED_IDLE from before the\n"
		   "spin until the drain is done (with -N)"},
	    {"-X", "the spinner a process of its own (a child, its tid its\n"
		   "pid), which a test may move to another cgroup"},
	    USAGE_VERBOSE,
	    USAGE_HELP,
	};

	print_usage(
	    f,
	    "[-hKmvRWX] [-a CPU_A] [-b CPU_B] [-c COMM] [-S SPIN_COMM]\n"
	    "                  [-w WAIT_COMM] [-p PAGES] [-P PRIO | -N NICE]\n"
	    "                  [-t SPIN_MS] [-d WAIT_DELAY_MS] [-n WAITERS] FILE",
	    USAGE_OPTIONS(opts),
	    "The drain is held only with RT throttling off: kernel.sched_rt_runtime_us=-1\n"
	    "and, on 6.12+, 0 in debugfs sched/fair_server/cpuN/runtime; else for ~950 ms.\n"
	    "With -N it is held as long as the fair class starves the kworker: see -R, -K.\n"
	    "FILE must be on a block filesystem (not tmpfs); it is extended to 1 MiB.\n"
	    "Prints \"pid N\" first, at the end one \"name value\" a line: spinner_tid,\n"
	    "spinner_pid, spinner_cpu, spinner_spin_ms, dropper_tid, dropper_cpu,\n"
	    "dropper_wait_ms, dropper_after_spin_ms (its return after the spin's end;\n"
	    "below 0: the drain was not held to the end), with -R dropper_prime_ms\n"
	    "(its stat_refresh), with -K idle_kworkers (how many) and, with -m,\n"
	    "waiter_tid, waiter_delay_ms, waiter_wait_ms,\n"
	    "waiter_after_flush (1: the dropper was seen waiting for its works first);\n"
	    "with -n, extra_waiters and waiters_wait_ms_max (of all the waiters).\n"
	    "SIGINT or SIGTERM end the -W wait (exit 0, nothing measured) or the spin\n"
	    "early.\n"
	    "Exit codes: 0 ok, 64 usage, 1 a failed operation (one line on stderr).\n");
}

/* stuckdrain's own options into self, a struct options. */
static int parse_option(int opt, const char *arg, void *self)
{
	struct options *o = self;

	switch (opt) {
	case 'S':
		return parse_comm(opt, arg, &o->spin_comm);
	case 'w':
		return parse_comm(opt, arg, &o->wait_comm);
	case 'P':
		return parse_number(opt, arg, 1, 99, &o->prio);
	case 'N':
		return parse_number(opt, arg, -20, 19, &o->nice);
	case 't':
		return parse_number(opt, arg, 1, MAX_SPIN_MS, &o->spin_ms);
	case 'd':
		return parse_number(opt, arg, 0, MAX_SPIN_MS, &o->wait_delay_ms);
	case 'n':
		return parse_number(opt, arg, 0, MAX_EXTRA_WAITERS, &o->extra_waiters);
	case 'm':
		o->second_file = true;
		return 0;
	case 'X':
		o->spin_process = true;
		return 0;
	case 'R': /* -R and -K: common.given[] */
	case 'K':
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

	*o = (struct options){.common = {.cpu_a = 1, .comm = "sd-dropper", .pages = 4},
			      .spin_comm = "sd-spin",
			      .wait_comm = "sd-waiter",
			      .prio = 50,
			      .spin_ms = 2000,
			      .wait_delay_ms = 200};
	err = parse_workload_options(argc, argv, "a:b:c:S:w:p:P:N:t:d:n:mKRWHXvh", c, parse_option,
				     o);
	if (err)
		return err;
	if (optind != argc - 1)
		return usage_error("expected exactly one FILE");
	o->path = argv[optind];
	if (c->given['P'] && c->given['N'])
		return usage_error("-P and -N exclude each other: FIFO or OTHER");
	if ((c->given['R'] || c->given['K']) && !c->given['N'])
		return usage_error(
		    "-R and -K need -N: they starve the kworker under a normal spinner");
	if (o->extra_waiters && !o->second_file)
		return usage_error("-n needs -m: the waiters drop FILE.2");
	/* With -m the pages of both files share CPU A's batch. */
	if (o->second_file && c->pages * 2 > MAX_PAGES)
		return usage_error("-p %ld is too many with -m (at most %d)", c->pages,
				   MAX_PAGES / 2);
	/* The defaults 1 and 0 are checked too. */
	if (!cpu_online(c->cpu_a) || !cpu_online(c->cpu_b))
		return usage_error("CPU_A or CPU_B is not online");
	if (c->cpu_a == c->cpu_b)
		return usage_error("CPU_A and CPU_B must differ: a local drain needs no work");
	return 0;
}

/*
 * Read the pages of FILE (and FILE.2) into the calling thread's CPU's batch.
 * That batch is emptied first: what other tasks put there since setup (the
 * tracer's start, a shell's forks) could fill it while the pages go in, and a
 * full batch moves to the LRU by itself, taking FILE's pages along. A DONTNEED
 * of FILE, whose pages are not cached, does just that: its local
 * lru_add_drain() and nothing else.
 */
static int read_all_pages(const struct run *r)
{
	char *buf;
	int err;

	err = posix_fadvise(r->fd, 0, 0, POSIX_FADV_DONTNEED);
	if (err)
		return -err;
	buf = malloc(r->page_size);
	if (!buf)
		return -ENOMEM;
	err = read_pages(r->fd, buf, r->opts->common.pages, r->page_size);
	if (!err && r->fd2 >= 0)
		err = read_pages(r->fd2, buf, r->opts->common.pages, r->page_size);
	free(buf);
	return err;
}

static int pin_self(long cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

/*
 * A remote drain under the setup comm: it empties what other tasks left in the
 * per-CPU batches (buffer heads in a bh_lru, say), which would otherwise make the
 * held drain queue a self work on CPU B too, and it proves the escalation works:
 * the pages read on CPU A must be gone after a DONTNEED from CPU B. The main
 * thread stays on CPU B, where a stop signal's handler can run during the spin.
 */
static int warm_up(struct run *r)
{
	int err;

	err = pin_self(r->opts->common.cpu_a);
	if (!err)
		err = read_all_pages(r);
	if (!err)
		err = pin_self(r->opts->common.cpu_b);
	if (!err)
		err = drop_cached(r->fd, r->opts->common.pages, r->page_size);
	if (!err && r->fd2 >= 0)
		err = drop_cached(r->fd2, r->opts->common.pages, r->page_size);
	return err;
}

/* dropping posted once for each waiter */
static void let_waiters_go(struct run *r)
{
	int i;

	for (i = WAITER; i < r->nr_threads; i++)
		sem_post(&r->dropping);
}

/* Record the first failure; let every waiting thread go, to find abandon set. */
static void fail(struct run *r, int errnum, const char *op)
{
	int none = 0;

	if (atomic_compare_exchange_strong(&r->err, &none, errnum))
		r->failed_op = op;
	atomic_store(&r->abandon, true);
	sem_post(&r->spinning);
	let_waiters_go(r);
}

/* Report the tid, then wait for the end of setup; false: give up. */
static bool await_go(struct run *r, int role)
{
	r->tid[role] = gettid();
	sem_post(&r->ready);
	return !wait_turn(&r->go) && !atomic_load(&r->abandon);
}

static long ms_between(const struct timespec *from, const struct timespec *to)
{
	return (to->tv_sec - from->tv_sec) * 1000 + (to->tv_nsec - from->tv_nsec) / NSEC_PER_MS;
}

/*
 * Busy-loop without a syscall, so CPU A never becomes free for the kworker;
 * clock_gettime() is a vDSO call. A stop signal or a failure ends it early.
 */
static long spin(struct run *r)
{
	struct timespec start, now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = ms_between(&start, &now);
	} while (ms < r->opts->spin_ms && !stop_requested && !atomic_load(&r->abandon));
	r->spin_end = now;
	return ms;
}

/*
 * SCHED_FIFO at PRIO, or with -N SCHED_OTHER (the thread's policy already) at
 * NICE: setpriority() on a tid sets that thread's alone. 0 or -errno, the
 * operation in *op.
 */
static int take_spin_policy(const struct options *o, const char **op)
{
	struct sched_param fifo = {.sched_priority = (int)o->prio};

	if (o->common.given['N']) {
		*op = "setpriority";
		return setpriority(PRIO_PROCESS, (id_t)gettid(), (int)o->nice) < 0 ? -errno : 0;
	}
	*op = "sched_setscheduler SCHED_FIFO";
	return sched_setscheduler(0, SCHED_FIFO, &fifo) < 0 ? -errno : 0;
}

/*
 * Between the reads and the spin nothing may drain CPU A's batch: the spinner
 * takes its comm and priority, neither of which drains, and only then tells the
 * dropper.
 */
static void *spinner_main(void *arg)
{
	struct sched_param other = {.sched_priority = 0};
	struct run *r = arg;
	const char *op;
	int err;

	if (!await_go(r, SPINNER))
		return NULL;
	err = read_all_pages(r);
	if (err) {
		fail(r, -err, "pread");
		return NULL;
	}
	err = take_comm(r->opts->spin_comm);
	if (err) {
		fail(r, -err, "prctl");
		return NULL;
	}
	err = take_spin_policy(r->opts, &op);
	if (err) {
		fail(r, -err, op);
		return NULL;
	}
	sem_post(&r->spinning);
	r->wait_ms[SPINNER] = spin(r);
	/* SCHED_OTHER again: the kworker may run, even before this thread exits */
	if (sched_setscheduler(0, SCHED_OTHER, &other) < 0)
		fail(r, errno, "sched_setscheduler SCHED_OTHER");
	return NULL;
}

/* -R: a work on every CPU's kworker, waited for (vmstat_refresh()); 0 or -errno. */
static int refresh_vm_stats(void)
{
	int fd, err = 0;

	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* posix_fadvise(DONTNEED) on the whole of fd; its duration in *ms. */
static int timed_dontneed(int fd, const struct timespec *start, long *ms)
{
	struct timespec end;
	int err;

	err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	clock_gettime(CLOCK_MONOTONIC, &end);
	*ms = ms_between(start, &end);
	return err;
}

static void *dropper_main(void *arg)
{
	struct run *r = arg;
	int err;

	if (!await_go(r, DROPPER))
		return NULL;
	err = take_comm(r->opts->common.comm);
	if (err) {
		fail(r, -err, "prctl");
		return NULL;
	}
	if (wait_turn(&r->spinning) || atomic_load(&r->abandon))
		return NULL;
	if (r->opts->common.given['R']) {
		clock_gettime(CLOCK_MONOTONIC, &r->drop_start);
		err = refresh_vm_stats();
		if (err) {
			fail(r, -err, "write /proc/sys/vm/stat_refresh");
			return NULL;
		}
		clock_gettime(CLOCK_MONOTONIC, &r->drop_end);
		r->prime_ms = ms_between(&r->drop_start, &r->drop_end);
	}
	clock_gettime(CLOCK_MONOTONIC, &r->drop_start);
	let_waiters_go(r);
	err = timed_dontneed(r->fd, &r->drop_start, &r->wait_ms[DROPPER]);
	clock_gettime(CLOCK_MONOTONIC, &r->drop_end);
	atomic_store(&r->dropped, true);
	if (err)
		fail(r, err, "posix_fadvise DONTNEED");
	return NULL;
}

/*
 * Whether the dropper waits for its drain's works, holding the drain mutex:
 * its wchan names flush_work (the mutex's functions are __sched, so a task
 * waiting there shows its caller, lru_add_drain_all).
 */
static bool dropper_flushing(const struct run *r)
{
	char path[64], wchan[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", r->tid[DROPPER]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, wchan, sizeof(wchan) - 1);
	close(fd);
	if (n <= 0)
		return false;
	wchan[n] = '\0';
	return strstr(wchan, "flush_work") != NULL;
}

/*
 * Until the dropper holds the drain mutex, polled every 5 ms for up to SPIN_MS,
 * or until its call returned: a timer alone put the waiter first on the mutex
 * where the dropper's way there took over 200 ms (a TCG VM with the spinning
 * CPU isolated starved the others), and the drain held was the waiter's.
 */
static bool await_dropper_flushing(const struct run *r)
{
	const struct timespec nap = {.tv_nsec = 5 * NSEC_PER_MS};
	long waited;

	for (waited = 0; waited < r->opts->spin_ms; waited += 5) {
		if (dropper_flushing(r))
			return true;
		if (stop_requested || atomic_load(&r->abandon) || atomic_load(&r->dropped))
			return false;
		nanosleep(&nap, NULL);
	}
	return false;
}

/* Sleep until WAIT_DELAY_MS after the dropper's call began. */
static void sleep_past_drop_start(const struct run *r)
{
	struct timespec until = r->drop_start;
	long ns = until.tv_nsec + r->opts->wait_delay_ms % 1000 * NSEC_PER_MS;

	until.tv_sec += r->opts->wait_delay_ms / 1000 + ns / (1000 * NSEC_PER_MS);
	until.tv_nsec = ns % (1000 * NSEC_PER_MS);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR &&
	       !stop_requested)
		;
}

/* The first waiter (role WAITER) and the -n ones after it: the same, its facts printed. */
static void *waiter_main(void *arg)
{
	struct timespec start;
	struct run *r = arg;
	int role = WAITER + atomic_fetch_add(&r->waiters_started, 1), err;
	bool after_flush;

	if (!await_go(r, role))
		return NULL;
	err = take_comm(r->opts->wait_comm);
	if (err) {
		fail(r, -err, "prctl");
		return NULL;
	}
	if (wait_turn(&r->dropping) || atomic_load(&r->abandon))
		return NULL;
	after_flush = await_dropper_flushing(r);
	sleep_past_drop_start(r);
	clock_gettime(CLOCK_MONOTONIC, &start);
	if (role == WAITER) {
		r->waiter_after_flush = after_flush;
		r->waiter_delay_ms = ms_between(&r->drop_start, &start);
	}
	err = timed_dontneed(r->fd2, &start, &r->wait_ms[role]);
	if (err)
		fail(r, err, "posix_fadvise DONTNEED of FILE.2");
	return NULL;
}

/*
 * -X: the spinner as a child process pinned to CPU A; it dies with us. Its
 * pid in r->spin_pid; 0 or -errno.
 */
static int start_spin_process(struct run *r)
{
	cpu_set_t set;
	pid_t pid;

	CPU_ZERO(&set);
	CPU_SET(r->opts->common.cpu_a, &set);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		r->spin_pid = pid;
		return 0;
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || sched_setaffinity(0, sizeof(set), &set) < 0)
		fail(r, errno, "the spinner's process setup");
	spinner_main(r);
	_exit(0);
}

/*
 * Whether comm is a worker of CPU cpu's normal pool: "kworker/1:2", or with the
 * last workqueue it ran, "kworker/1:2-events"; not "kworker/1:2H" (highpri).
 */
static bool is_pool_worker(const char *comm, long cpu)
{
	char prefix[32];
	int n = snprintf(prefix, sizeof(prefix), "kworker/%ld:", cpu);
	const char *p = comm + n;

	if (strncmp(comm, prefix, (size_t)n) || !isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	return *p == '\0' || *p == '\n' || *p == '-';
}

/* The comm of pid, or "" */
static void read_comm(pid_t pid, char *comm, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, size - 1);
	close(fd);
	comm[n > 0 ? n : 0] = '\0';
}

/* -K: CPU A's pool's workers SCHED_IDLE, into r->kworker; 0 or -errno. */
static int idle_kworkers(struct run *r)
{
	const struct sched_param param = {.sched_priority = 0};
	char comm[64];
	struct dirent *e;
	DIR *d;
	pid_t pid;
	int err = 0;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while (!err && r->nr_kworkers < MAX_KWORKERS && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = (pid_t)atoi(e->d_name);
		read_comm(pid, comm, sizeof(comm));
		if (!is_pool_worker(comm, r->opts->common.cpu_a))
			continue;
		if (!sched_setscheduler(pid, SCHED_IDLE, &param))
			r->kworker[r->nr_kworkers++] = pid;
		else if (errno != ESRCH) /* one that exited meanwhile is no error */
			err = -errno;
	}
	closedir(d);
	return err;
}

/* -K's workers SCHED_OTHER again, as the kernel made them */
static void restore_kworkers(struct run *r)
{
	const struct sched_param param = {.sched_priority = 0};
	int i;

	for (i = 0; i < r->nr_kworkers; i++)
		sched_setscheduler(r->kworker[i], SCHED_OTHER, &param);
}

/* Start the threads; each reports its tid, then waits for go. */
static int start_threads(struct run *r, pthread_t *threads)
{
	static void *(*const role_main[NR_ROLES])(void *) = {spinner_main, dropper_main,
							     waiter_main};
	void *(*fn)(void *);
	int err = 0, i;
	long cpu;

	r->spin_pid = getpid();
	for (i = 0; i < r->nr_threads; i++) {
		cpu = i == SPINNER ? r->opts->common.cpu_a : r->opts->common.cpu_b;
		fn = i < NR_ROLES ? role_main[i] : waiter_main;
		if (i == SPINNER && r->opts->spin_process)
			err = start_spin_process(r);
		else
			err = start_pinned(&threads[i], cpu, fn, r);
		if (err)
			break;
		wait_turn(&r->ready);
	}
	if (i < r->nr_threads)
		fail(r, -err, r->opts->spin_process && i == SPINNER ? "fork" : "pthread_create");
	return i;
}

/*
 * -X: wait for the spinner's process, passing it a stop signal we caught (it
 * has handlers of its own, but the signal comes to us).
 */
static void reap_spin_process(const struct run *r)
{
	const struct timespec tick = {.tv_nsec = 5 * NSEC_PER_MS};
	bool passed = false;

	while (waitpid(r->spin_pid, NULL, WNOHANG) == 0) {
		if (stop_requested && !passed)
			passed = !kill(r->spin_pid, SIGINT);
		nanosleep(&tick, NULL);
	}
}

static void print_tids(const struct run *r)
{
	fprintf(stderr, "stuckdrain: pid %d: spinner tid %d on CPU %ld, dropper tid %d on CPU %ld",
		getpid(), r->tid[SPINNER], r->opts->common.cpu_a, r->tid[DROPPER],
		r->opts->common.cpu_b);
	if (r->nr_threads > WAITER)
		fprintf(stderr, ", waiter tid %d on CPU %ld", r->tid[WAITER],
			r->opts->common.cpu_b);
	fprintf(stderr, "\n");
}

/*
 * Run the threads; on failure return -errno and name the operation in *op. The
 * idle main thread takes COMM before any -W wait, for pgrep and for tests
 * waiting on it: its comm changes once setup is done.
 */
static int run_threads(struct run *r, const char **op)
{
	pthread_t threads[MAX_THREADS];
	int started, i, err;

	*op = "sem_init";
	if (sem_init(&r->ready, 1, 0) < 0 || sem_init(&r->go, 1, 0) < 0 ||
	    sem_init(&r->spinning, 1, 0) < 0 || sem_init(&r->dropping, 1, 0) < 0)
		return -errno;
	started = start_threads(r, threads);
	if (r->opts->common.verbose && started == r->nr_threads)
		print_tids(r);
	take_comm(r->opts->common.comm);
	if (r->opts->common.wait_usr1 && started == r->nr_threads)
		wait_usr1();
	if (stop_requested)
		atomic_store(&r->abandon, true);
	/* as late as can be: workers the pool creates during setup are caught too */
	if (r->opts->common.given['K'] && !atomic_load(&r->abandon)) {
		err = idle_kworkers(r);
		if (err)
			fail(r, -err, "sched_setscheduler SCHED_IDLE of a kworker");
	}
	for (i = 0; i < started; i++)
		sem_post(&r->go);
	for (i = 0; i < started; i++) {
		if (i == SPINNER && r->opts->spin_process)
			reap_spin_process(r);
		else
			pthread_join(threads[i], NULL);
	}
	restore_kworkers(r);
	*op = r->failed_op;
	return -atomic_load(&r->err);
}

/* Open FILE and, with -m, FILE.2; 0 or the exit code after the error was reported. */
static int open_files(struct run *r)
{
	const struct options *o = r->opts;
	const char *path = o->path;
	char path2[4096];
	int err;

	err = open_uncached(path, o->common.pages, r->page_size, &r->fd);
	if (!err && o->second_file) {
		snprintf(path2, sizeof(path2), "%s.2", o->path);
		path = path2;
		err = open_uncached(path, o->common.pages, r->page_size, &r->fd2);
	}
	if (err == -EBUSY)
		return runtime_error("cannot drop the page cache (tmpfs? another user's file?) of",
				     path, -EOPNOTSUPP);
	if (err)
		return runtime_error("setup of", path, err);
	err = warm_up(r);
	if (err == -EBUSY)
		return runtime_error("warm-up: the remote drain left pages of", o->path, err);
	if (err)
		return runtime_error("warm-up", NULL, err);
	return 0;
}

/* Everything before the threads, under SETUP_COMM; 0 or the exit code. */
static int set_up(struct run *r)
{
	const struct options *o = r->opts;
	int err;

	err = take_comm(SETUP_COMM);
	if (err)
		return runtime_error("prctl", NULL, err);
	err = catch_stop_signals();
	if (err)
		return runtime_error("sigaction", NULL, err);
	err = open_files(r);
	if (err)
		return err;
	if (o->common.verbose)
		fprintf(stderr, "stuckdrain: %s%s ready: %ld pages, CPU_A %ld, CPU_B %ld\n",
			o->path, o->second_file ? " and FILE.2" : "", o->common.pages,
			o->common.cpu_a, o->common.cpu_b);
	if (o->common.wait_usr1)
		block_usr1();
	return 0;
}

/* The longest DONTNEED of every waiter. */
static long waiters_wait_ms_max(const struct run *r)
{
	long max = 0;
	int i;

	for (i = WAITER; i < r->nr_threads; i++)
		if (r->wait_ms[i] > max)
			max = r->wait_ms[i];
	return max;
}

/* A heuristic reading of the numbers, for people; tests compare them themselves. */
static void describe(const struct run *r)
{
	long spun = r->wait_ms[SPINNER], held = r->wait_ms[DROPPER];

	fprintf(stderr,
		"stuckdrain: the spinner held CPU %ld for %ld ms; the dropper's DONTNEED "
		"took %ld ms: ",
		r->opts->common.cpu_a, spun, held);
	if (held + 50 >= spun)
		fprintf(stderr, "the drain was held until the spin ended\n");
	else if (held >= 50)
		fprintf(stderr, "the drain was released early (RT throttling, fair server?)\n");
	else
		fprintf(stderr, "the drain was not held (were the pages in CPU %ld's batch?)\n",
			r->opts->common.cpu_a);
	if (r->nr_threads > WAITER)
		fprintf(stderr,
			"stuckdrain: the waiter's DONTNEED began %ld ms later, took %ld ms\n",
			r->waiter_delay_ms, r->wait_ms[WAITER]);
	if (r->opts->extra_waiters)
		fprintf(stderr, "stuckdrain: %ld more waiters, the longest DONTNEED %ld ms\n",
			r->opts->extra_waiters, waiters_wait_ms_max(r));
}

static void print_facts(const struct run *r)
{
	printf("spinner_tid %d\nspinner_pid %d\nspinner_cpu %ld\nspinner_spin_ms %ld\n",
	       r->tid[SPINNER], r->spin_pid, r->opts->common.cpu_a, r->wait_ms[SPINNER]);
	printf("dropper_tid %d\ndropper_cpu %ld\ndropper_wait_ms %ld\n", r->tid[DROPPER],
	       r->opts->common.cpu_b, r->wait_ms[DROPPER]);
	/* < 0: the drain ended before the spin did, so the spinner did not hold it to its end */
	printf("dropper_after_spin_ms %ld\n", ms_between(&r->spin_end, &r->drop_end));
	if (r->opts->common.given['R'])
		printf("dropper_prime_ms %ld\n", r->prime_ms);
	if (r->opts->common.given['K'])
		printf("idle_kworkers %d\n", r->nr_kworkers);
	if (r->nr_threads > WAITER)
		printf("waiter_tid %d\nwaiter_delay_ms %ld\nwaiter_wait_ms %ld\nwaiter_after_flush "
		       "%d\n",
		       r->tid[WAITER], r->waiter_delay_ms, r->wait_ms[WAITER],
		       r->waiter_after_flush);
	if (r->opts->extra_waiters)
		printf("extra_waiters %ld\nwaiters_wait_ms_max %ld\n", r->opts->extra_waiters,
		       waiters_wait_ms_max(r));
}

int main(int argc, char **argv)
{
	/* shared: with -X the spinner's process writes its part */
	struct run *r =
	    mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct options opts;
	const char *op;
	int err;

	err = parse_options(argc, argv, &opts);
	if (err)
		return err > 0 ? 0 : EXIT_USAGE;
	if (r == MAP_FAILED)
		return runtime_error("mmap", NULL, -errno);
	*r = (struct run){.fd = -1, .fd2 = -1};
	r->opts = &opts;
	r->page_size = sysconf(_SC_PAGESIZE);
	r->nr_threads = opts.second_file ? NR_ROLES + (int)opts.extra_waiters : WAITER;
	/* first, flushed: a test may read it while the process runs */
	printf("pid %d\n", getpid());
	fflush(stdout);
	err = set_up(r);
	if (err)
		return err;
	err = run_threads(r, &op);
	close(r->fd);
	if (r->fd2 >= 0)
		close(r->fd2);
	if (err)
		return runtime_error(op, NULL, err);
	/* a stop signal before the spin: nothing was measured */
	if (atomic_load(&r->abandon)) {
		if (opts.common.verbose)
			fprintf(stderr, "stuckdrain: stopped before the spin\n");
		return 0;
	}
	print_facts(r);
	if (opts.common.verbose)
		describe(r);
	fflush(stdout);
	if (opts.common.hold)
		fprintf(stderr, "held\n");
	while (opts.common.hold && !stop_requested)
		pause();
	return 0;
}
