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
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
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
#define MIN_FILE_SIZE	(1L << 20) /* more than MAX_PAGES pages of 64 KiB */
#define SETUP_COMM	"df-setup"
#define COMM_MAX	15 /* TASK_COMM_LEN - 1 */
#define CPU_ONLINE_PATH "/sys/devices/system/cpu/online"
#define DROP_TRIES	10
/*
 * A full per-CPU batch moves to the LRU by itself and leaves nothing to drain:
 * a batch holds PAGEVEC_SIZE folios, 15 in 6.6 and before, 31 in 6.18.
 */
#define MAX_PAGES 14

struct options {
	long rounds; /* 0: until SIGINT or SIGTERM (-r) */
	long cpu_a;
	long cpu_b;
	const char *comm;
	long pages;
	long sleep_ms;
	long comms;	/* -k: the dropper cycles through this many comms; 0: COMM only */
	bool wait_usr1; /* -W: round 1 waits for SIGUSR1 */
	bool verbose;
	const char *path;
};

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
	volatile sig_atomic_t *stop;
};

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: drainforce [-hv] [-n ROUNDS | -r] [-a CPU_A] [-b CPU_B] [-c COMM] "
		   "[-k K] [-p PAGES] [-s MS] [-W] FILE\n"
		   "  -n ROUNDS  rounds to run, one remote drain each (default 100)\n"
		   "  -r         run rounds until SIGINT/SIGTERM, then print the count\n"
		   "  -a CPU_A   CPU of the reader, the CPU drained (default 0)\n"
		   "  -b CPU_B   CPU of the dropper, the caller of the drain (default 1)\n"
		   "  -c COMM    comm of the threads after setup (default drainforce)\n"
		   "  -k K       the dropper takes comm COMM-I in round I, I cycling 0..K-1:\n"
		   "             K distinct sites (COMM at most 15 - digits(K-1) - 1 chars)\n"
		   "  -p PAGES   uncached pages read per round, 1 to 14 (default 4)\n"
		   "  -s MS      sleep MS milliseconds after setup, before round 1\n"
		   "  -W         after setup, wait for SIGUSR1 before round 1 (after any -s)\n"
		   "  -v         describe setup and result on stderr\n"
		   "  -h         show this help\n"
		   "FILE must be on a block filesystem (not tmpfs); it is extended to 1 MiB.\n");
}

static int parse_long(const char *s, long min, long max, long *out)
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
static bool cpu_online(long cpu)
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

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "drainforce: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	usage(stderr);
	return -EINVAL;
}

static int parse_cpu(const char *arg, long *cpu)
{
	if (parse_long(arg, 0, CPU_SETSIZE - 1, cpu))
		return usage_error("bad CPU number: %s", arg);
	if (!cpu_online(*cpu))
		return usage_error("CPU %s is not online", arg);
	return 0;
}

static int parse_option(int opt, const char *arg, struct options *o)
{
	switch (opt) {
	case 'n':
		if (parse_long(arg, 1, 1L << 40, &o->rounds))
			return usage_error("bad -n: %s", arg);
		return 0;
	case 'r':
		o->rounds = 0;
		return 0;
	case 'a':
		return parse_cpu(arg, &o->cpu_a);
	case 'b':
		return parse_cpu(arg, &o->cpu_b);
	case 'c':
		o->comm = arg;
		return *arg && strlen(arg) <= COMM_MAX ? 0 : usage_error("bad -c: '%s'", arg);
	case 'k':
		if (parse_long(arg, 1, 1000000, &o->comms))
			return usage_error("bad -k: %s (1 to 1000000)", arg);
		return 0;
	case 'p':
		if (parse_long(arg, 1, MAX_PAGES, &o->pages))
			return usage_error("bad -p: %s (1 to %d)", arg, MAX_PAGES);
		return 0;
	case 's':
		if (parse_long(arg, 0, 1L << 30, &o->sleep_ms))
			return usage_error("bad -s: %s", arg);
		return 0;
	case 'v':
		o->verbose = true;
		return 0;
	case 'W':
		o->wait_usr1 = true;
		return 0;
	case 'h':
		usage(stdout);
		return 1;
	default:
		return usage_error("unknown option or missing argument: -%c", optopt);
	}
}

/* 0, or 1 after -h, or -EINVAL after a usage error was reported. */
static int parse_options(int argc, char **argv, struct options *o)
{
	bool has_n = false, has_r = false;
	int opt, err;

	*o = (struct options){.rounds = 100, .cpu_b = 1, .comm = "drainforce", .pages = 4};
	opterr = 0;
	while ((opt = getopt(argc, argv, "n:ra:b:c:k:p:s:vWh")) != -1) {
		has_n |= opt == 'n';
		has_r |= opt == 'r';
		err = parse_option(opt, optarg, o);
		if (err)
			return err;
	}
	if (has_n && has_r)
		return usage_error("-n and -r exclude each other");
	if (optind != argc - 1)
		return usage_error("expected exactly one FILE");
	o->path = argv[optind];
	if (o->comms && strlen(o->comm) + 1 + snprintf(NULL, 0, "%ld", o->comms - 1) > COMM_MAX)
		return usage_error("-c %s is too long for -k %ld", o->comm, o->comms);
	/* The defaults 0 and 1 are checked too. */
	if (!cpu_online(o->cpu_a) || !cpu_online(o->cpu_b))
		return usage_error("CPU_A or CPU_B is not online");
	return 0;
}

static int write_fill(int fd, off_t from, off_t to)
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
static int extend_file(const char *path, off_t size)
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

/* How many of the first pages of the file are in the page cache. */
static int count_resident(int fd, long pages, long page_size)
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
static int drop_cached(int fd, long pages, long page_size)
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
 * Open the file for the rounds, its first pages dropped from the page cache.
 * FADV_RANDOM keeps readahead to the page asked for, so each read batches one
 * order-0 folio on the reader's CPU.
 */
static int open_uncached(const struct options *o, long page_size, int *fdp)
{
	struct stat st;
	int fd, err;

	if (stat(o->path, &st) < 0 || st.st_size < MIN_FILE_SIZE) {
		err = extend_file(o->path, MIN_FILE_SIZE);
		if (err)
			return err;
	}
	/*
	 * O_NOATIME: an atime update dirties the inode, and the journal's folios
	 * then land in the per-CPU batches too; enough of them flush CPU A's batch
	 * early and the round's DONTNEED succeeds without a drain.
	 */
	fd = open(o->path, O_RDONLY | O_CLOEXEC | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = open(o->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* fsync: dirty or writeback pages cannot be dropped. */
	err = fsync(fd) < 0 ? -errno : -posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	if (!err)
		err = drop_cached(fd, o->pages, page_size);
	if (err) {
		close(fd);
		return err;
	}
	*fdp = fd;
	return 0;
}

static int wait_turn(sem_t *sem)
{
	while (sem_wait(sem) < 0) {
		if (errno != EINTR)
			return -errno;
	}
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

static int take_comm(const char *comm)
{
	return prctl(PR_SET_NAME, comm, 0, 0, 0) < 0 ? -errno : 0;
}

static int read_pages(int fd, char *buf, long pages, long page_size)
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
		err = round == 1 ? take_comm(ls->opts->comm) : 0;
		if (err) {
			fail(ls, -err, "prctl", &ls->to_dropper);
			break;
		}
		err = read_pages(ls->fd, buf, ls->opts->pages, ls->page_size);
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
		return round == 1 ? take_comm(o->comm) : 0;
	snprintf(comm, sizeof(comm), "%s-%ld", o->comm, (round - 1) % o->comms);
	return take_comm(comm);
}

static bool last_round(const struct lockstep *ls)
{
	if (ls->opts->rounds)
		return ls->rounds_done == ls->opts->rounds;
	return ls->rounds_done && *ls->stop;
}

static void *dropper_main(void *arg)
{
	struct lockstep *ls = arg;
	long round;
	int err;

	for (round = 0; !wait_turn(&ls->to_dropper) && !atomic_load(&ls->finished); round++) {
		err = round >= 1 ? dropper_comm(ls->opts, round) : 0;
		if (err) {
			fail(ls, -err, "prctl", &ls->to_reader);
			break;
		}
		err = posix_fadvise(ls->fd, 0, 0, POSIX_FADV_DONTNEED);
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

static int start_pinned(pthread_t *t, long cpu, void *(*fn)(void *), void *arg)
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

static void sleep_ms(long ms, volatile sig_atomic_t *stop)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !*stop)
		;
}

/*
 * SIGUSR1 is blocked in every thread (see main), so sigtimedwait() takes it
 * here; SIGINT and SIGTERM, caught, end the wait too (within a tick).
 */
static void wait_usr1(volatile sig_atomic_t *stop)
{
	struct timespec tick = {.tv_nsec = 50000000};
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while (!*stop && sigtimedwait(&set, NULL, &tick) < 0)
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
	err = start_pinned(&reader, ls->opts->cpu_a, reader_main, ls);
	if (err)
		return err;
	err = start_pinned(&dropper, ls->opts->cpu_b, dropper_main, ls);
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
	take_comm(ls->opts->comm);
	sleep_ms(ls->opts->sleep_ms, ls->stop);
	if (ls->opts->wait_usr1)
		wait_usr1(ls->stop);
	sem_post(&ls->to_reader);
	pthread_join(reader, NULL);
	pthread_join(dropper, NULL);
	*op = ls->failed_op;
	return -atomic_load(&ls->err);
}

static int catch_stop_signals(void)
{
	struct sigaction sa = {.sa_handler = on_stop_signal};

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0)
		return -errno;
	return 0;
}

static int runtime_error(const char *op, const char *what, int err)
{
	fprintf(stderr, "drainforce: %s%s%s: %s\n", op, what ? " " : "", what ? what : "",
		strerror(-err));
	return 1;
}

int main(int argc, char **argv)
{
	struct lockstep ls = {.stop = &stop_requested};
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
	err = open_uncached(&opts, ls.page_size, &ls.fd);
	if (err == -EBUSY)
		return runtime_error("cannot drop the page cache (tmpfs?) of", opts.path,
				     -EOPNOTSUPP);
	if (err)
		return runtime_error("setup of", opts.path, err);
	if (opts.verbose)
		fprintf(stderr, "drainforce: %s ready: %ld pages a round, CPU_A %ld, CPU_B %ld\n",
			opts.path, opts.pages, opts.cpu_a, opts.cpu_b);
	if (opts.wait_usr1) {
		/* blocked before the threads start, so they inherit it and only sigwait() sees it
		 */
		sigset_t usr1;

		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	}
	err = run_lockstep(&ls, &op);
	close(ls.fd);
	if (err)
		return runtime_error(op, NULL, err);
	if (opts.verbose)
		fprintf(stderr, "drainforce: %ld rounds done\n", ls.rounds_done);
	if (!opts.rounds)
		printf("%ld\n", ls.rounds_done);
	return 0;
}
