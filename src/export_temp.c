// SPDX-License-Identifier: GPL-2.0
/*
 * The export's temp files: named so that no other user can guess the name,
 * written, and those a killed writer left behind removed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export_int.h"

/* Fresh names tried on EEXIST: only a planted file collides with 64 random bits. */
#define TEMP_TRIES 8

static int errno_or(int fallback)
{
	return errno ? -errno : fallback;
}

/*
 * e->tmp gets "<tmp_prefix><pid>.<16 hex>": the pid tells a killed writer's
 * leftovers (export__remove_stale), the random part makes the name one no
 * other user can plant a file at beforehand.
 */
static int new_temp_name(struct export *e)
{
	uint64_t r;
	int n;

	/*
	 * GRND_INSECURE: never waits for the kernel's generator to be seeded (a
	 * service started early in boot); unpredictable is all a name needs.
	 * Kernels before 5.6 refuse the flag.
	 */
	if (getrandom(&r, sizeof(r), GRND_INSECURE) != (ssize_t)sizeof(r) &&
	    getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return errno_or(-EIO);
	n = snprintf(e->tmp, sizeof(e->tmp), "%s%d.%0*llx", e->tmp_prefix, (int)getpid(),
		     TMP_RANDOM, (unsigned long long)r);
	return n < 0 || (size_t)n >= sizeof(e->tmp) ? -ENAMETOOLONG : 0;
}

/* Runs make(e, fd) under fresh temp names until one is free; its result or -errno. */
static int at_new_name(struct export *e, int (*make)(struct export *e, int fd), int fd)
{
	int tries, ret = -EEXIST;

	for (tries = 0; tries < TEMP_TRIES && ret == -EEXIST; tries++) {
		ret = new_temp_name(e);
		if (!ret)
			ret = make(e, fd);
	}
	return ret;
}

static int create_named(struct export *e, int fd)
{
	(void)fd;
	fd = openat(e->dirfd, e->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}

/*
 * Names the unnamed temp file fd; linkat() replaces nothing (a planted name:
 * EEXIST). Through /proc: linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH,
 * which the systemd unit does not give.
 */
static int link_named(struct export *e, int fd)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, e->dirfd, e->tmp, AT_SYMLINK_FOLLOW) ? -errno : 0;
}

/*
 * The temp file: unnamed (O_TMPFILE) where the filesystem allows it, so that a
 * kill before the rename leaves nothing behind; else created by name,
 * exclusively. *named tells which.
 */
int export_open_temp(struct export *e, bool *named)
{
	int fd = openat(e->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);

	*named = fd < 0;
	return fd < 0 ? at_new_name(e, create_named, -1) : fd;
}

/*
 * Runs emit() into the open temp file; fd stays open. Nothing is synced, not
 * the file nor the directory after the rename: the rename alone gives a reader
 * the old file or the new one, never a part (the directory's fsync only made
 * the rename outlive a crash), and after a crash drainstat starts again, and
 * its counters with it.
 */
int export_write_temp(int fd, void (*emit)(FILE *f, const void *arg), const void *arg)
{
	int out, err = 0;
	FILE *f;

	if (fchmod(fd, 0644))
		return -errno;
	out = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (out < 0)
		return -errno;
	f = fdopen(out, "w");
	if (!f) {
		err = -errno;
		close(out);
		return err;
	}
	errno = 0;
	emit(f, arg);
	if (fflush(f) || ferror(f))
		err = errno_or(-EIO);
	errno = 0;
	if (fclose(f) && !err)
		err = errno_or(-EIO);
	return err;
}

/* The unnamed temp file fd named, under a fresh name: 0 or -errno. */
int export_name_temp(struct export *e, int fd)
{
	return at_new_name(e, link_named, fd);
}

/*
 * The pid in name if it is "<tmp_prefix><pid>.<16 hex>" (or "<tmp_prefix><pid>",
 * a name before the random part), else 0.
 */
static pid_t stale_pid(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	char *end;
	long pid;

	if (strncmp(name, prefix, n))
		return 0;
	name += n;
	if (*name < '1' || *name > '9')
		return 0;
	pid = strtol(name, &end, 10);
	if (*end && (*end != '.' || strlen(end + 1) != TMP_RANDOM ||
		     strspn(end + 1, "0123456789abcdef") != TMP_RANDOM))
		return 0;
	return pid <= 0 || pid > INT_MAX ? 0 : (pid_t)pid;
}

static bool runs(pid_t pid)
{
	return pid == getpid() || !kill(pid, 0) || errno == EPERM;
}

/* A killed writer's temp file: a regular file of ours, not linked elsewhere. */
static bool left_by_us(int dirfd, const char *name)
{
	struct stat st;

	return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
	       st.st_uid == geteuid() && st.st_nlink == 1;
}

/* The lock file never matches the temp names: ".<base>.lock" has no ".tmp.<pid>". */
int export__remove_stale(const struct export *e)
{
	struct dirent *d;
	int removed = 0, fd;
	DIR *dir;

	fd = openat(e->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return 0;
	}
	while ((d = readdir(dir))) {
		pid_t pid = stale_pid(d->d_name, e->tmp_prefix);

		if (!pid || runs(pid) || !left_by_us(e->dirfd, d->d_name))
			continue;
		removed += !unlinkat(e->dirfd, d->d_name, 0);
	}
	closedir(dir);
	return removed;
}
