// SPDX-License-Identifier: GPL-2.0
/*
 * The --prom file: written whole or not at all, by one writer, and only ever
 * over a regular file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "export.h"

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

/* ".<base>.tmp.<pid>": a pid has at most 7 digits (PID_MAX_LIMIT, 4194304). */
#define TMP_SUFFIX   ".tmp."
#define TMP_EXTRA    (1 + sizeof(TMP_SUFFIX) - 1 + 7)
#define TMP_BASE_MAX (NAME_MAX - TMP_EXTRA)

struct export
{
	char path[PATH_MAX];
	char dir[PATH_MAX];
	char tmp_prefix[NAME_MAX + 1]; /* ".<base, cut to fit>.tmp." */
	char tmp[PATH_MAX];	       /* dir/<tmp_prefix><pid> */
	int held;		       /* the file we wrote last, locked; -1 before the first */
	struct stat held_st;
	struct export_why why;
};

static int errno_or(int fallback)
{
	return errno ? -errno : fallback;
}

/* dir gets path's directory ("." when it has none); the temp name fits NAME_MAX. */
static int split_path(struct export *e, const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	size_t dir_len = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path);
	int n;

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	if (strlen(path) >= sizeof(e->path) || strlen(base) > NAME_MAX)
		return -ENAMETOOLONG;
	strcpy(e->path, path);
	if (slash)
		snprintf(e->dir, sizeof(e->dir), "%.*s", (int)dir_len, path);
	else
		strcpy(e->dir, ".");
	/* a legal 255-byte name has its temp name cut short: the pid keeps it ours */
	snprintf(e->tmp_prefix, sizeof(e->tmp_prefix), ".%.*s" TMP_SUFFIX, (int)TMP_BASE_MAX, base);
	n = snprintf(e->tmp, sizeof(e->tmp), "%s/%s%d", e->dir, e->tmp_prefix, (int)getpid());
	return n < 0 || (size_t)n >= sizeof(e->tmp) ? -ENAMETOOLONG : 0;
}

/* Filesystems where a file cannot be created, or must not be: the kernel's own. */
static const char *pseudo_fs(const char *dir)
{
	static const struct {
		long magic;
		const char *name;
	} kinds[] = {
	    {PROC_SUPER_MAGIC, "procfs"},     {SYSFS_MAGIC, "sysfs"},
	    {CGROUP2_SUPER_MAGIC, "cgroup2"}, {CGROUP_SUPER_MAGIC, "cgroup"},
	    {DEBUGFS_MAGIC, "debugfs"},	      {TRACEFS_MAGIC, "tracefs"},
	    {BPF_FS_MAGIC, "bpffs"},	      {SECURITYFS_MAGIC, "securityfs"},
	    {DEVPTS_SUPER_MAGIC, "devpts"},
	};
	struct statfs st;
	size_t i;

	if (statfs(dir, &st))
		return NULL;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((long)st.f_type == kinds[i].magic)
			return kinds[i].name;
	return NULL;
}

int export__open(const char *path, struct export **out, struct export_why *why)
{
	struct export *e = calloc(1, sizeof(*e));
	int err;

	*why = (struct export_why){};
	if (!e)
		return -ENOMEM;
	e->held = -1;
	err = split_path(e, path);
	if (!err) {
		why->fs = pseudo_fs(e->dir);
		err = why->fs ? -EOPNOTSUPP : 0;
	}
	if (err) {
		free(e);
		return err;
	}
	*out = e;
	return 0;
}

void export__free(struct export *e)
{
	if (!e)
		return;
	if (e->held >= 0)
		close(e->held);
	free(e);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* A write lock on fd, or -EBUSY with the holder's pid (0 from another PID namespace). */
static int lock_file(int fd, pid_t *holder)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};

	if (!fcntl(fd, F_SETLK, &fl))
		return 0;
	if (errno != EAGAIN && errno != EACCES)
		return -errno;
	fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET};
	if (fcntl(fd, F_GETLK, &fl))
		return -errno;
	if (fl.l_type == F_UNLCK)
		return -EAGAIN; /* let go in between: try again */
	*holder = fl.l_pid;
	return -EBUSY;
}

/*
 * What is at path may be replaced: a regular file, or nothing (*absent). Not a
 * symbolic link (the rename would replace the link, not its target; /dev/stdout
 * is one), a directory, a device, a FIFO or a socket.
 */
static int check_target(struct export *e, struct stat *st, bool *absent)
{
	*absent = false;
	if (lstat(e->path, st)) {
		*absent = errno == ENOENT;
		return *absent ? 0 : -errno;
	}
	e->why.found = st->st_mode & S_IFMT;
	if (S_ISLNK(st->st_mode))
		return -ELOOP;
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (!S_ISREG(st->st_mode))
		return -EINVAL;
	return 0;
}

/* Every export starts so (report_prom.c); an empty file is fine too. */
#define EXPORT_START "# HELP drainstat_"

/* An empty file, or what a drainstat exported: not someone's /etc/passwd. */
static bool exported(int fd)
{
	char head[sizeof(EXPORT_START) - 1];
	ssize_t n = pread(fd, head, sizeof(head), 0);

	return n == 0 || (n == (ssize_t)sizeof(head) && !memcmp(head, EXPORT_START, sizeof(head)));
}

/* Locks the regular file st at path, the one a writer before us left. */
static int take_over(struct export *e, const struct stat *st)
{
	struct stat now;
	int fd, err;

	fd = open(e->path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -EAGAIN : -errno;
	if (fstat(fd, &now))
		err = -errno;
	else if (!same_file(&now, st))
		err = -EAGAIN; /* replaced between lstat and open */
	else
		err = lock_file(fd, &e->why.holder);
	if (!err && !exported(fd)) {
		e->why.foreign = true;
		err = -EEXIST;
	}
	if (err) {
		close(fd);
		return err;
	}
	if (e->held >= 0)
		close(e->held);
	e->held = fd;
	e->held_st = now;
	return 0;
}

/*
 * Makes sure we are path's one writer: the file there is the one we hold
 * locked, or one no one holds (taken over), or there is none (*absent). A file
 * another process holds: -EBUSY, e->why.holder its pid.
 */
static int claim(struct export *e, bool *absent)
{
	struct stat st;
	int tries, err = -EAGAIN;

	for (tries = 0; tries < 8 && err == -EAGAIN; tries++) {
		err = check_target(e, &st, absent);
		if (err || *absent)
			return err;
		if (e->held >= 0 && same_file(&st, &e->held_st))
			return 0;
		err = take_over(e, &st);
	}
	return err;
}

/*
 * The temp file: unnamed (O_TMPFILE) where the filesystem allows it, so that a
 * kill before the rename leaves nothing behind; else created by name,
 * exclusively. *named tells which.
 */
static int open_temp(const struct export *e, bool *named)
{
	int fd = open(e->dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);

	*named = fd < 0;
	if (fd < 0)
		fd = open(e->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}

/* Names the unnamed temp file fd tmp; linkat() replaces nothing (a planted symlink: EEXIST). */
static int name_temp(int fd, const char *tmp)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) ? -errno : 0;
}

/*
 * Runs emit() into the open temp file; fd stays open. Nothing is synced, not
 * the file nor the directory after the rename: the rename alone gives a reader
 * the old file or the new one, never a part (the directory's fsync only made
 * the rename outlive a crash), and after a crash drainstat starts again, and
 * its counters with it.
 */
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
	return err;
}

/*
 * The named temp file over path: over nothing if there was nothing (a file
 * that appeared meanwhile is claimed first), else over the regular file we hold.
 */
static int put_in_place(struct export *e, bool absent)
{
	int err;

	if (absent) {
		if (!renameat2(AT_FDCWD, e->tmp, AT_FDCWD, e->path, RENAME_NOREPLACE))
			return 0;
		if (errno != EEXIST && errno != EINVAL)
			return -errno;
		/* EINVAL: a filesystem without RENAME_NOREPLACE; EEXIST: claim it */
		if (errno == EEXIST) {
			err = claim(e, &absent);
			if (err)
				return err;
		}
	}
	return rename(e->tmp, e->path) ? -errno : 0;
}

int export__write(struct export *e, void (*emit)(FILE *f, const void *arg), const void *arg)
{
	bool named, ours, absent;
	int fd, err;

	e->why = (struct export_why){};
	err = claim(e, &absent);
	if (err)
		return err;
	/* a name at tmp that open_temp() or linkat() refused is not ours to remove */
	fd = open_temp(e, &named);
	if (fd < 0)
		return fd;
	ours = named;
	err = write_temp(fd, emit, arg);
	if (!err)
		err = lock_file(fd, &e->why.holder); /* a new file: no one else has it */
	if (!err && !named) {
		err = name_temp(fd, e->tmp);
		ours = !err;
	}
	if (!err)
		err = put_in_place(e, absent);
	if (err) {
		if (ours)
			unlink(e->tmp);
		close(fd);
		return err;
	}
	if (e->held >= 0)
		close(e->held);
	e->held = fd;
	fstat(fd, &e->held_st);
	return 0;
}

const struct export_why *export__why(const struct export *e)
{
	return &e->why;
}

bool export__dir_gone(const struct export *e)
{
	struct stat st;

	return stat(e->dir, &st) && errno == ENOENT;
}

/* The pid in name if it is "<tmp_prefix><pid>", else 0. */
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
	return *end || pid <= 0 || pid > INT_MAX ? 0 : (pid_t)pid;
}

static bool runs(pid_t pid)
{
	return pid == getpid() || !kill(pid, 0) || errno == EPERM;
}

int export__remove_stale(const struct export *e)
{
	struct dirent *d;
	struct stat st;
	int removed = 0;
	DIR *dir = opendir(e->dir);

	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		pid_t pid = stale_pid(d->d_name, e->tmp_prefix);

		if (!pid || runs(pid) || fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		removed += !unlinkat(dirfd(dir), d->d_name, 0);
	}
	closedir(dir);
	return removed;
}

static const char *file_kind(mode_t type)
{
	switch (type) {
	case S_IFLNK:
		return "a symbolic link";
	case S_IFDIR:
		return "a directory";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	default:
		return "not a regular file";
	}
}

void export__describe(const char *shown, int err, const struct export_why *why, char *buf,
		      size_t size)
{
	if (err == -ELOOP && why->found == S_IFLNK)
		snprintf(buf, size,
			 "%s is a symbolic link: --prom never follows one (its rename would "
			 "replace the link): give the file's own path",
			 shown);
	else if (err == -EISDIR)
		snprintf(buf, size, "%s is a directory: --prom takes the path of a file", shown);
	else if (err == -EINVAL && why->found && why->found != S_IFREG)
		snprintf(buf, size,
			 "%s is %s: --prom only ever replaces a regular file, or creates one",
			 shown, file_kind(why->found));
	else if (err == -EBUSY && why->holder > 0)
		snprintf(buf, size,
			 "%s is being written by process %d (another drainstat?): an export "
			 "has one writer",
			 shown, (int)why->holder);
	else if (err == -EBUSY)
		snprintf(buf, size,
			 "%s is being written by a process in another PID namespace: an "
			 "export has one writer",
			 shown);
	else if (err == -EEXIST && why->foreign)
		snprintf(buf, size,
			 "%s is not a drainstat export: --prom replaces only its own file (or an "
			 "empty one): remove it, or give another path",
			 shown);
	else if (err == -EOPNOTSUPP && why->fs)
		snprintf(buf, size,
			 "%s is on %s, a kernel filesystem: give a path on a disk or a tmpfs",
			 shown, why->fs);
	else
		snprintf(buf, size, "cannot write %s: %s", shown, strerror(-err));
}
