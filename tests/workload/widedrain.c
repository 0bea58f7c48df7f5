// SPDX-License-Identifier: GPL-2.0
/*
 * widedrain: wide drains, each one hitting every CPU but the caller's, a
 * workload whose truth is known per CPU.
 *
 * A reader thread pinned to each online CPU but CPU_B reads PAGES uncached
 * pages of FILE of its own; their order-0 folios sit in that CPU's per-CPU
 * LRU batch. Once every reader has read, a dropper pinned to CPU_B calls
 * posix_fadvise(DONTNEED) on the whole file: its local lru_add_drain() cannot
 * reach the other CPUs' batches, so generic_fadvise() escalates to one
 * lru_add_drain_all(), which queues one lru_add_drain_per_cpu work on every
 * reader's CPU. Its second pass drops the pages, so the next round reads them
 * from disk again. So a round is one drain, with one work on each reader CPU.
 *
 * Setup and a warm-up round run under the comm "wd-setup" (the warm-up's drain
 * empties what other tasks left batched); every thread takes COMM only then,
 * so every drain under COMM is one of the ROUNDS.
 *
 *   widedrain [-n ROUNDS] [-b CPU_B] [-c COMM] [-p PAGES] [-v] FILE
 *
 * Prints the reader CPUs as a CPU list on stdout ("0,2-15"), once setup is
 * done. Exit codes: 0 ok, 64 usage, 1 the operation failed (one line on stderr).
 */
#define _GNU_SOURCE
#include <stdatomic.h>

#define WORKLOAD_NAME "widedrain"
#include "workload.h"

#define SETUP_COMM "wd-setup"

struct options {
	struct common_options common;
	long rounds;
	const char *path;
};

struct wide;

struct reader {
	struct wide *w;
	long cpu;
	long first_page; /* its PAGES pages start here */
	pthread_t thread;
};

/* The rounds in lockstep: all readers read (start .. read), then the dropper drops. */
struct wide {
	const struct options *opts;
	int fd;
	long page_size;
	struct reader *readers;
	int nr_readers;
	pthread_barrier_t start; /* the readers and the dropper: a round begins */
	pthread_barrier_t read;	 /* every reader has read its pages */
	atomic_int err;		 /* first errno of any thread */
	const char *failed_op;
};

static void usage(FILE *f)
{
	static const struct usage_option opts[] = {
	    {"-n ROUNDS", "rounds to run, one drain each with a work on every reader CPU\n"
			  "(default 50)"},
	    {"-b CPU_B", "CPU of the dropper, the caller of the drains (default 0); a\n"
			 "reader runs on every other online CPU"},
	    {"-c COMM", "comm of the threads after setup (default widedrain)"},
	    {"-p PAGES", "uncached pages each reader reads a round, 1 to 14 (default 1)"},
	    USAGE_VERBOSE,
	    USAGE_HELP,
	};

	print_usage(f, "[-hv] [-n ROUNDS] [-b CPU_B] [-c COMM] [-p PAGES] FILE",
		    USAGE_OPTIONS(opts),
		    "FILE must be on a block filesystem (not tmpfs); it is extended to hold the\n"
		    "readers' pages. Prints the reader CPUs (a CPU list) once setup is done.\n");
}

/* widedrain's own option, -n, into self: its rounds. */
static int parse_option(int opt, const char *arg, void *self)
{
	return opt == 'n' ? parse_number(opt, arg, 1, 1L << 30, self) : -ENOENT;
}

/* 0, or 1 after -h, or -EINVAL after a usage error was reported. */
static int parse_options(int argc, char **argv, struct options *o)
{
	struct common_options *c = &o->common;
	int err;

	*o = (struct options){.rounds = 50, .common = {.comm = "widedrain", .pages = 1}};
	err = parse_workload_options(argc, argv, "n:b:c:p:vh", c, parse_option, &o->rounds);
	if (err)
		return err;
	if (optind != argc - 1)
		return usage_error("expected exactly one FILE");
	o->path = argv[optind];
	return cpu_online(c->cpu_b) ? 0 : usage_error("CPU_B %ld is not online", c->cpu_b);
}

/* Record the first failure; the barriers still see every thread through the round. */
static void fail(struct wide *w, int errnum, const char *op)
{
	int none = 0;

	if (atomic_compare_exchange_strong(&w->err, &none, errnum))
		w->failed_op = op;
}

/*
 * Rounds 0..ROUNDS. A failure is recorded before the read barrier, so every
 * thread sees it after the next start barrier and all of them stop there.
 * Every thread passes the start barrier once more after the last round: the
 * readers leave only once the last drop is done: a reader on its way out
 * drains its CPU's batch itself (glibc's madvise(MADV_DONTNEED) at thread
 * exit: zap_page_range_single() calls lru_add_drain()), and those that
 * did while the last DONTNEED ran left its drain nothing to drain (seen on
 * 6.1: a last round's drain entered and returned with no work queued, which
 * tracepoint mode cannot see; 2 of 20 runs of wide.sh, two VMs on two CPUs).
 */
static bool round_begins(struct wide *w)
{
	pthread_barrier_wait(&w->start);
	return !atomic_load(&w->err);
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct wide *w = r->w;
	long round, i;
	char *buf = malloc((size_t)w->page_size);

	if (!buf)
		fail(w, ENOMEM, "reader setup");
	for (round = 0; round_begins(w) && round <= w->opts->rounds; round++) {
		if (!buf)
			break;
		if (round == 1 && take_comm(w->opts->common.comm))
			fail(w, errno, "prctl");
		for (i = 0; i < w->opts->common.pages && !atomic_load(&w->err); i++)
			if (pread(w->fd, buf, (size_t)w->page_size,
				  (r->first_page + i) * w->page_size) != w->page_size)
				fail(w, errno ? errno : EIO, "pread");
		pthread_barrier_wait(&w->read);
	}
	free(buf);
	return NULL;
}

/* The dropper: this thread, pinned to CPU_B. */
static void drop_rounds(struct wide *w)
{
	long round;
	int err;

	for (round = 0; round_begins(w) && round <= w->opts->rounds; round++) {
		if (round == 1 && take_comm(w->opts->common.comm))
			fail(w, errno, "prctl");
		pthread_barrier_wait(&w->read);
		err = posix_fadvise(w->fd, 0, 0, POSIX_FADV_DONTNEED);
		if (err)
			fail(w, err, "posix_fadvise");
	}
}

/* A reader on every online CPU but CPU_B, each with a range of pages of its own. */
static int make_readers(struct wide *w)
{
	cpu_set_t online;
	long cpu;

	if (sched_getaffinity(0, sizeof(online), &online) < 0)
		return -errno;
	w->readers = calloc(CPU_SETSIZE, sizeof(*w->readers));
	if (!w->readers)
		return -ENOMEM;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (cpu == w->opts->common.cpu_b || !CPU_ISSET(cpu, &online) || !cpu_online(cpu))
			continue;
		w->readers[w->nr_readers] = (struct reader){
		    .w = w, .cpu = cpu, .first_page = w->nr_readers * w->opts->common.pages};
		w->nr_readers++;
	}
	return w->nr_readers ? 0 : -ENODEV;
}

static void print_readers(const struct wide *w)
{
	int i, j;

	for (i = 0; i < w->nr_readers; i = j + 1) {
		for (j = i; j + 1 < w->nr_readers && w->readers[j + 1].cpu == w->readers[j].cpu + 1;
		     j++)
			;
		printf(j > i ? "%s%ld-%ld" : "%s%ld", i ? "," : "", w->readers[i].cpu,
		       w->readers[j].cpu);
	}
	printf("\n");
	fflush(stdout);
}

static int pin_self(long cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

/* Runs the rounds; on failure returns -errno and names the operation in *op. */
static int run_rounds(struct wide *w, const char **op)
{
	int i, err, started;

	*op = "pthread_barrier_init";
	if (pthread_barrier_init(&w->start, NULL, (unsigned)w->nr_readers + 1) ||
	    pthread_barrier_init(&w->read, NULL, (unsigned)w->nr_readers + 1))
		return -ENOMEM;
	*op = "pthread_create";
	for (started = 0, err = 0; started < w->nr_readers && !err; started++)
		err = start_pinned(&w->readers[started].thread, w->readers[started].cpu,
				   reader_main, &w->readers[started]);
	if (err) {
		/* the barriers count every reader: none may wait for the missing ones */
		fprintf(stderr, WORKLOAD_NAME ": cannot start a reader: %s\n", strerror(-err));
		_exit(1);
	}
	print_readers(w);
	drop_rounds(w);
	for (i = 0; i < w->nr_readers; i++)
		pthread_join(w->readers[i].thread, NULL);
	*op = w->failed_op;
	return -atomic_load(&w->err);
}

int main(int argc, char **argv)
{
	struct wide w = {0};
	struct options opts;
	const char *op = "setup of";
	long pages;
	int err;

	err = parse_options(argc, argv, &opts);
	if (err)
		return err > 0 ? 0 : EXIT_USAGE;
	w.opts = &opts;
	w.page_size = sysconf(_SC_PAGESIZE);
	err = take_comm(SETUP_COMM);
	if (!err)
		err = make_readers(&w);
	pages = w.nr_readers * opts.common.pages;
	if (!err)
		err = extend_file(opts.path, pages * w.page_size);
	if (!err)
		err = open_uncached(opts.path, pages, w.page_size, &w.fd);
	if (err == -EBUSY)
		return runtime_error("cannot drop the page cache (tmpfs?) of", opts.path,
				     -EOPNOTSUPP);
	if (!err)
		err = pin_self(opts.common.cpu_b);
	if (err)
		return runtime_error(op, opts.path, err);
	if (opts.common.verbose)
		fprintf(stderr, "widedrain: %s ready: %d readers, %ld pages each, CPU_B %ld\n",
			opts.path, w.nr_readers, opts.common.pages, opts.common.cpu_b);
	err = run_rounds(&w, &op);
	close(w.fd);
	if (err)
		return runtime_error(op, NULL, err);
	if (opts.common.verbose)
		fprintf(stderr, "widedrain: %ld rounds done\n", opts.rounds);
	free(w.readers);
	return 0;
}
