// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
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

/* Runs emit() into the open temp file and makes its content durable. Closes fd. */
static int write_and_sync(int fd, void (*emit)(FILE *f, const void *arg), const void *arg)
{
	FILE *f;
	int err = 0;

	if (fchmod(fd, 0644)) {
		err = -errno;
		close(fd);
		return err;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	errno = 0;
	emit(f, arg);
	if (fflush(f) || ferror(f))
		err = errno_or(-EIO);
	if (!err && fsync(fileno(f)))
		err = -errno;
	errno = 0;
	if (fclose(f) && !err)
		err = errno_or(-EIO);
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
	int fd, err;

	err = temp_path(path, dir, tmp, sizeof(tmp));
	if (err)
		return err;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno; /* not ours to remove: it may be someone's symlink */
	err = write_and_sync(fd, emit, arg);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	return fsync_dir(dir);
}
