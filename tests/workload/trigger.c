// SPDX-License-Identifier: GPL-2.0
/*
 * trigger: cause drains through the other call sites of shared/DESIGN.md, under
 * a distinctive comm, so that tests can find them by site and comm.
 *
 *   trigger [-c COMM] [-n COUNT] compact|drop_caches|move_pages|migrate_pages
 *
 * compact      writes 1 to /proc/sys/vm/compact_memory (compaction: lru_add_drain_all)
 * drop_caches  writes 1 to /proc/sys/vm/drop_caches (6.12: drop_caches_sysctl_handler)
 * move_pages   move_pages(2) of a few pages to node 0 (do_pages_move: lru_cache_disable)
 * migrate_pages migrate_pages(2) of this process, node 0 to node 0 (do_migrate_pages)
 *
 * Exit codes: 0 ok, 64 usage, 1 the operation failed (one line on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXIT_USAGE 64
#define NR_PAGES   8

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

static void usage(void)
{
	fprintf(stderr, "usage: trigger [-c COMM] [-n COUNT] "
			"compact|drop_caches|move_pages|migrate_pages\n");
	exit(EXIT_USAGE);
}

int main(int argc, char **argv)
{
	const char *comm = "trigger";
	long count = 1, i;
	char *end;
	int (*run)(void);
	int opt, err;

	while ((opt = getopt(argc, argv, "c:n:")) != -1) {
		if (opt == 'c' && strlen(optarg) > 0 && strlen(optarg) < 16) {
			comm = optarg;
		} else if (opt == 'n') {
			count = strtol(optarg, &end, 10);
			if (*end || count < 1 || count > 1000000)
				usage();
		} else {
			usage();
		}
	}
	if (optind != argc - 1 || !(run = find_action(argv[optind])))
		usage();
	prctl(PR_SET_NAME, comm, 0, 0, 0);
	for (i = 0; i < count; i++) {
		err = run();
		if (err) {
			fprintf(stderr, "trigger: %s: %s\n", argv[optind], strerror(-err));
			return 1;
		}
	}
	return 0;
}
