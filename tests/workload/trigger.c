// SPDX-License-Identifier: GPL-2.0
/*
 * trigger: cause drains through the other call sites of doc/design.md, under
 * a distinctive comm, so that tests can find them by site and comm.
 *
 *   trigger [-c COMM] [-n COUNT] [-a CPU -f FILE] compact|drop_caches|move_pages|migrate_pages
 *
 * compact      writes 1 to /proc/sys/vm/compact_memory (compaction: lru_add_drain_all)
 * drop_caches  writes 1 to /proc/sys/vm/drop_caches (6.12: drop_caches_sysctl_handler)
 * move_pages   move_pages(2) of a few pages to node 0 (do_pages_move: lru_cache_disable)
 * migrate_pages migrate_pages(2) of this process, node 0 to node 0 (do_migrate_pages)
 *
 * A drain queues works only to CPUs with something batched, and tracepoint mode
 * sees a drain only by its works: on an idle machine a compaction may drain
 * nothing at all. With -a CPU -f FILE, before each action a thread on CPU reads
 * a few uncached pages of FILE (on a block filesystem), which then sit in that
 * CPU's batch: run trigger on another CPU (taskset) and its drain queues a work
 * there.
 *
 * Exit codes: 0 ok, 64 usage, 1 the operation failed (one line on stderr).
 */
#define _GNU_SOURCE
#define WORKLOAD_NAME "trigger"
#include <sys/syscall.h>

#include "workload.h"

#define NR_PAGES    8
#define BATCH_PAGES 4

/* -a CPU -f FILE: pages batched on cpu before each action. */
struct batch {
	long cpu;
	const char *path;
	int fd; /* -1 without -f */
	long page_size;
	int err;
};

static int write_sysctl(const char *path)
{
	int fd = open(path, O_WRONLY);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, "1\n", 2) != 2)
		err = -errno;
	close(fd);
	return err;
}

static int compact(void)
{
	return write_sysctl("/proc/sys/vm/compact_memory");
}

static int drop_caches(void)
{
	return write_sysctl("/proc/sys/vm/drop_caches");
}

static int move_pages_to_node0(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *buf =
	    mmap(NULL, NR_PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *pages[NR_PAGES];
	int nodes[NR_PAGES], status[NR_PAGES], i;
	long rc;

	if (buf == MAP_FAILED)
		return -errno;
	for (i = 0; i < NR_PAGES; i++) {
		buf[i * page] = 1;
		pages[i] = buf + i * page;
		nodes[i] = 0;
	}
	/* with target nodes, do_pages_move() runs inside lru_cache_disable() */
	rc = syscall(SYS_move_pages, 0, NR_PAGES, pages, nodes, status, 0);
	munmap(buf, NR_PAGES * page);
	return rc < 0 ? -errno : 0;
}

static int migrate_self(void)
{
	unsigned long nodes = 1;

	return syscall(SYS_migrate_pages, 0, 8 * sizeof(nodes), &nodes, &nodes) < 0 ? -errno : 0;
}

static const struct {
	const char *name;
	int (*run)(void);
} actions[] = {
    {"compact", compact},
    {"drop_caches", drop_caches},
    {"move_pages", move_pages_to_node0},
    {"migrate_pages", migrate_self},
};

static int (*find_action(const char *name))(void)
{
	size_t i;

	for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (!strcmp(actions[i].name, name))
			return actions[i].run;
	return NULL;
}

static void usage(FILE *f)
{
	print_usage(f,
		    "[-c COMM] [-n COUNT] [-a CPU -f FILE] "
		    "compact|drop_caches|move_pages|migrate_pages",
		    NULL, 0, "");
}

/*
 * On b->cpu: the pages dropped (a local drain and an invalidation that finds
 * them on the LRU, where the last action's drain left them), then read again:
 * in the batch of b->cpu.
 */
static void *batch_pages(void *arg)
{
	struct batch *b = arg;
	char *buf = malloc((size_t)b->page_size);

	b->err = buf ? -posix_fadvise(b->fd, 0, 0, POSIX_FADV_DONTNEED) : -ENOMEM;
	if (!b->err)
		b->err = read_pages(b->fd, buf, BATCH_PAGES, b->page_size);
	free(buf);
	return NULL;
}

static int batch_on_cpu(struct batch *b)
{
	pthread_t t;
	int err;

	if (b->fd < 0)
		return 0;
	err = start_pinned(&t, b->cpu, batch_pages, b);
	if (err)
		return runtime_error("pthread_create", "the batching thread", err);
	pthread_join(t, NULL);
	return b->err ? runtime_error("read", b->path, b->err) : 0;
}

struct options {
	struct common_options common; /* -a CPU: b's, with -f */
	long count;
	const char *path; /* -f */
};

/* trigger's own options into self, a struct options: -n and -f. */
static int parse_option(int opt, const char *arg, void *self)
{
	struct options *o = self;

	if (opt == 'n')
		return parse_number(opt, arg, 1, 1000000, &o->count);
	if (opt != 'f')
		return -ENOENT;
	o->path = arg;
	return 0;
}

/* 0, or -EINVAL after a usage error was reported. */
static int parse_options(int argc, char **argv, struct options *o)
{
	int err = parse_workload_options(argc, argv, "c:n:a:f:", &o->common, parse_option, o);

	if (!err && o->common.given['a'] != (o->path != NULL))
		err = usage_error("-a and -f go together");
	if (!err && (optind != argc - 1 || !find_action(argv[optind])))
		err = usage_error("expected one action");
	return err;
}

int main(int argc, char **argv)
{
	struct batch b = {.fd = -1, .page_size = sysconf(_SC_PAGESIZE)};
	struct options o = {.common = {.comm = "trigger"}, .count = 1};
	int (*run)(void);
	long i;
	int err;

	if (parse_options(argc, argv, &o))
		return EXIT_USAGE;
	run = find_action(argv[optind]);
	b.cpu = o.common.cpu_a;
	b.path = o.path;
	if (b.path) {
		err = open_uncached(b.path, BATCH_PAGES, b.page_size, &b.fd);
		if (err)
			return runtime_error("open", b.path, err);
	}
	take_comm(o.common.comm);
	for (i = 0; i < o.count; i++) {
		err = batch_on_cpu(&b);
		if (err)
			return err;
		err = run();
		if (err)
			return runtime_error(argv[optind], NULL, err);
	}
	return 0;
}
