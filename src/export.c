// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"

/* dir gets path's directory ("." when it has none), tmp the temp file beside path. */
static int temp_path(const char *path, char *dir, char *tmp, size_t size)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	int n;

	if (!*base)
		return -EISDIR;
	if (!slash)
		n = snprintf(dir, size, ".");
	else
		n = snprintf(dir, size, "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	n = snprintf(tmp, size, "%.*s.%s.tmp.%d", slash ? (int)(base - path) : 0, path, base,
		     (int)getpid());
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

static int errno_or(int fallback)
{
	return errno ? -errno : fallback;
}

/*
 * The temp file: unnamed (O_TMPFILE) where the filesystem allows it, so that a
 * kill before the rename leaves nothing behind; else created by name,
 * exclusively. *named tells which.
 */
static int open_temp(const char *dir, const char *tmp, bool *named)
{
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);

	*named = fd < 0;
	if (fd < 0)
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}

/* Names the unnamed temp file fd tmp; linkat() replaces nothing (a planted symlink: EEXIST). */
static int name_temp(int fd, const char *tmp)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) ? -errno : 0;
}

/* Runs emit() into the open temp file and makes its content durable; fd stays open. */
static int write_temp(int fd, void (*emit)(FILE *f, const void *arg), const void *arg)
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
	if (!err && fsync(fd))
		err = -errno;
	return err;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

int export__write_atomic(const char *path, void (*emit)(FILE *f, const void *arg), const void *arg)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	bool named, ours;
	int fd, err;

	err = temp_path(path, dir, tmp, sizeof(tmp));
	if (err)
		return err;
	/* a name at tmp that open_temp() or linkat() refused is not ours to remove */
	fd = open_temp(dir, tmp, &named);
	if (fd < 0)
		return fd;
	ours = named;
	err = write_temp(fd, emit, arg);
	if (!err && !named) {
		err = name_temp(fd, tmp);
		ours = !err;
	}
	close(fd);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		if (ours)
			unlink(tmp);
		return err;
	}
	return fsync_dir(dir);
}

/* The pid in name if it is ".<base>.tmp.<pid>", else 0. */
static pid_t stale_pid(const char *name, const char *base)
{
	size_t n = strlen(base);
	char *end;
	long pid;

	if (name[0] != '.' || strncmp(name + 1, base, n) || strncmp(name + 1 + n, ".tmp.", 5))
		return 0;
	name += 1 + n + 5;
	if (*name < '1' || *name > '9')
		return 0;
	pid = strtol(name, &end, 10);
	return *end || pid <= 0 || pid > INT_MAX ? 0 : (pid_t)pid;
}

static bool runs(pid_t pid)
{
	return pid == getpid() || !kill(pid, 0) || errno == EPERM;
}

int export__remove_stale(const char *path)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	struct dirent *e;
	struct stat st;
	int removed = 0;
	DIR *d;

	if (temp_path(path, dir, tmp, sizeof(tmp)))
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		pid_t pid = stale_pid(e->d_name, base);

		if (!pid || runs(pid) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		removed += !unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
	return removed;
}
