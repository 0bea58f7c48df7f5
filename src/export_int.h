/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The export's insides, shared by its files only: export.c (the directory,
 * the file it replaces, the write and rename), export_lock.c (the lock file
 * and its holder), export_temp.c (the temp files: their names, their writing,
 * a killed writer's leftovers).
 */
#ifndef EXPORT_INT_H
#define EXPORT_INT_H

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

#include "export.h"

/*
 * ".<base>.tmp.<pid>.<16 hex>": a pid has at most 7 digits (PID_MAX_LIMIT,
 * 4194304), the random part 16. ".<base>.lock": the lock file.
 */
#define TMP_SUFFIX    ".tmp."
#define TMP_RANDOM    16
#define TMP_EXTRA     (1 + sizeof(TMP_SUFFIX) - 1 + 7 + 1 + TMP_RANDOM)
#define TMP_BASE_MAX  (NAME_MAX - TMP_EXTRA)
#define LOCK_SUFFIX   ".lock"
#define LOCK_BASE_MAX (NAME_MAX - 1 - (sizeof(LOCK_SUFFIX) - 1))

struct export
{
	char dir[PATH_MAX];
	char base[NAME_MAX + 1];
	char tmp_prefix[NAME_MAX + 1]; /* ".<base, cut to fit>.tmp." */
	char tmp[NAME_MAX + 1];	       /* <tmp_prefix><pid>.<random>, in dirfd */
	char lock_name[NAME_MAX + 1];  /* ".<base, cut to fit>.lock", in dirfd */
	int dirfd;		       /* the directory, opened once: never looked up again */
	int lock;		       /* the lock file, flock()ed: -1 before the first write */
	struct stat lock_st;
	struct stat written; /* what we put at the path last (st_ino 0: none) */
	struct export_why why;
};

static inline bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * The file an O_PATH descriptor names, opened for reading: the same inode,
 * looked up no more (an O_PATH open calls no driver and waits for no one, so
 * what it names is checked first: a device another user linked there is
 * never opened). O_NONBLOCK: a lease its owner holds does not hold us.
 */
static inline int export_reopen(int path_fd)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", path_fd);
	return open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
}

/* The lock file's flock() held at its name (export_lock.c): 0 or -errno (-EBUSY, -EPERM). */
int export_hold_lock(struct export *e);

/*
 * The temp file (export_temp.c): export_open_temp() opens it, unnamed where
 * the filesystem allows it (*named false: export_name_temp() names it after
 * the write), export_write_temp() runs emit() into it. e->tmp gets its name.
 */
int export_open_temp(struct export *e, bool *named);
int export_write_temp(int fd, void (*emit)(FILE *f, const void *arg), const void *arg);
int export_name_temp(struct export *e, int fd);

#endif /* EXPORT_INT_H */
