// SPDX-License-Identifier: GPL-2.0
/*
 * treewalk: the tree walker of the 2016 Facebook report that led to the local
 * lru_add_drain() in generic_fadvise(): walk DIR, read every regular file (its
 * first MiB), posix_fadvise(DONTNEED) it, close it. Each DONTNEED that finds
 * folios still in some CPU's LRU batch escalates to lru_add_drain_all(), so the
 * number of drains depends on the machine: a realistic load, not an exact one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WORKLOAD_NAME "treewalk"
#include "workload.h"

#define READ_MAX     (1L << 20)
#define WALK_MAX_FDS 64

struct options {
	struct common_options common;
	long passes;
	const char *dir;
};

struct walk_stats {
	long files;
	long long bytes;
	long skipped; /* could not be opened or read: permissions, vanished */
	long fadvise_errors;
};

/* nftw() passes its callback no user pointer: the walk's state lives here. */
static struct walk {
	char *buf;
	struct walk_stats stats;
} walk;

static void usage(FILE *f)
{
	static const struct usage_option opts[] = {
	    {"-c COMM", "comm of the walker (default treewalk)"},
	    {"-n PASSES", "walks of the tree (default 1)"},
	    {"-v", "print files and bytes read on stdout"},
	    USAGE_HELP,
	};

	print_usage(f, "[-hv] [-c COMM] [-n PASSES] DIR", USAGE_OPTIONS(opts),
		    "Reads each regular file under DIR (up to 1 MiB of it), then drops it with\n"
		    "posix_fadvise(POSIX_FADV_DONTNEED); stays on DIR's filesystem.\n");
}

/* treewalk's own option, -n, into self: its passes. */
static int parse_option(int opt, const char *arg, void *self)
{
	if (opt != 'n')
		return -ENOENT;
	return parse_long(arg, 1, 1L << 30, self) ? usage_error("bad -n: %s", arg) : 0;
}

/* 0, or 1 after -h, or -EINVAL after a usage error was reported. */
static int parse_options(int argc, char **argv, struct options *o)
{
	int err;

	*o = (struct options){.common = {.comm = "treewalk"}, .passes = 1};
	err = parse_workload_options(argc, argv, "c:n:vh", &o->common, parse_option, &o->passes);
	if (err)
		return err;
	if (optind != argc - 1)
		return usage_error("expected exactly one DIR");
	o->dir = argv[optind];
	return 0;
}

/* Read up to READ_MAX bytes of the file; the byte count, or -errno. */
static long long read_head(int fd, char *buf)
{
	long long total = 0;
	ssize_t n;

	while (total < READ_MAX) {
		n = read(fd, buf, READ_MAX - total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		total += n;
	}
	return total;
}

static void visit_file(const char *path, struct walk_stats *stats, char *buf)
{
	long long n;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		stats->skipped++;
		return;
	}
	n = read_head(fd, buf);
	if (n < 0) {
		stats->skipped++;
	} else {
		stats->files++;
		stats->bytes += n;
		if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
			stats->fadvise_errors++;
	}
	close(fd);
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode))
		visit_file(path, &walk.stats, walk.buf);
	else if (type == FTW_DNR || type == FTW_NS)
		walk.stats.skipped++;
	return 0;
}

static int walk_tree(const char *dir)
{
	if (nftw(dir, visit, WALK_MAX_FDS, FTW_PHYS | FTW_MOUNT) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

int main(int argc, char **argv)
{
	struct options opts;
	struct stat st;
	long pass;
	int err;

	err = parse_options(argc, argv, &opts);
	if (err)
		return err > 0 ? 0 : EXIT_USAGE;
	err = stat(opts.dir, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	if (err)
		return runtime_error(opts.dir, NULL, err);
	err = take_comm(opts.common.comm);
	if (err)
		return runtime_error("prctl", NULL, err);
	walk.buf = malloc(READ_MAX);
	if (!walk.buf) {
		fprintf(stderr, "treewalk: out of memory\n");
		return 1;
	}
	for (pass = 0, err = 0; pass < opts.passes && !err; pass++)
		err = walk_tree(opts.dir);
	free(walk.buf);
	if (err)
		return runtime_error("walking", opts.dir, err);
	if (opts.common.verbose)
		printf("files %ld bytes %lld skipped %ld fadvise_errors %ld passes %ld\n",
		       walk.stats.files, walk.stats.bytes, walk.stats.skipped,
		       walk.stats.fadvise_errors, opts.passes);
	return 0;
}
