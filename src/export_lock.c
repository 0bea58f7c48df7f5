// SPDX-License-Identifier: GPL-2.0
/*
 * The export's one writer: an flock() on the lock file ".<base>.lock" beside
 * it, made by us and only ever taken if ours, and when another holds it, who.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "export_int.h"

/* The pid holding an flock() on st, from /proc/locks; 0 when not found. */
static pid_t lock_holder(const struct stat *st)
{
	FILE *f = fopen("/proc/locks", "re");
	unsigned int maj, min;
	unsigned long ino;
	char line[256], kind[16];
	pid_t holder = 0;
	int pid;

	if (!f)
		return 0;
	/* "1: FLOCK  ADVISORY  WRITE 8050 fe:00:10952708 0 EOF"; a waiter's has "->" */
	while (!holder && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%lu", kind, &pid, &maj, &min, &ino) ==
			5 &&
		    !strcmp(kind, "FLOCK") && pid > 0 && maj == major(st->st_dev) &&
		    min == minor(st->st_dev) && ino == st->st_ino)
			holder = pid;
	fclose(f);
	return holder;
}

/*
 * A lock file is ours if it is a regular file of our user with one link: not a
 * FIFO, a link to another file, nor a file someone else made. -EPERM
 * (why.lock_planted, and what was found) otherwise.
 */
static int check_lock(struct export *e, const struct stat *st)
{
	if (S_ISREG(st->st_mode) && st->st_uid == geteuid() && st->st_nlink == 1)
		return 0;
	e->why.lock_planted = true;
	e->why.found = st->st_mode & S_IFMT;
	e->why.owner = st->st_uid;
	e->why.links = st->st_nlink;
	return -EPERM;
}

/* Why the lock file did not open: what is at its name, if that is not ours. */
static int lock_refused(struct export *e, int err)
{
	struct stat st;

	if (fstatat(e->dirfd, e->lock_name, &st, AT_SYMLINK_NOFOLLOW))
		return err;
	return check_lock(e, &st) ?: err;
}

/*
 * The lock file, open for reading: a new one of ours (O_EXCL), or the one
 * there if check_lock() finds it ours (looked at through O_PATH before it is
 * opened). e->lock_st gets what was opened.
 */
static int open_lock(struct export *e)
{
	int tries, fd = -1, path_fd, err = -EAGAIN;

	for (tries = 0; tries < 8 && err == -EAGAIN; tries++) {
		fd = openat(e->dirfd, e->lock_name,
			    O_CREAT | O_EXCL | O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd >= 0) {
			if (!fstat(fd, &e->lock_st))
				return fd;
			err = -errno;
			close(fd);
			return err;
		}
		if (errno != EEXIST)
			return lock_refused(e, -errno);
		path_fd = openat(e->dirfd, e->lock_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (path_fd < 0) {
			err = errno == ENOENT ? -EAGAIN : -errno; /* removed meanwhile: again */
			continue;
		}
		err = fstat(path_fd, &e->lock_st) ? -errno : check_lock(e, &e->lock_st);
		fd = err ? -1 : export_reopen(path_fd);
		if (!err && fd < 0)
			err = -errno;
		close(path_fd);
	}
	return err ? err : fd;
}

/*
 * The second-writer check, one no other user can take part in: the export
 * itself is readable by all, and a reader's lock on it must not stop its
 * writer. An flock() on ".<base>.lock", ours, held open for the run; O_RDONLY,
 * so that the filesystem can be remounted read-only. -EBUSY (why.holder) if
 * another process holds it.
 */
static int take_lock(struct export *e)
{
	int fd, err = 0;

	fd = open_lock(e);
	if (fd < 0)
		return fd;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		if (err == -EBUSY)
			e->why.holder = lock_holder(&e->lock_st);
	}
	if (err) {
		close(fd);
		return err;
	}
	e->lock = fd;
	return 0;
}

/*
 * We hold the lock at the lock file's name: the one we took, or a new one if
 * that name was removed or replaced meanwhile (a lock on a file no longer
 * there stops no one).
 */
int export_hold_lock(struct export *e)
{
	struct stat st;

	if (e->lock >= 0 && !fstatat(e->dirfd, e->lock_name, &st, AT_SYMLINK_NOFOLLOW) &&
	    same_file(&st, &e->lock_st))
		return 0;
	if (e->lock >= 0)
		close(e->lock);
	e->lock = -1;
	return take_lock(e);
}
