// SPDX-License-Identifier: GPL-2.0
/*
 * The --prom file: written whole or not at all, by one writer, and only ever
 * over a regular file. Here its directory, what is at its path, the rename and
 * the messages; the lock file in export_lock.c, the temp files in export_temp.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "export_int.h"

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

/*
 * dir gets path's directory ("." when it has none, its trailing slashes off:
 * one would follow a symlink), base its last component; the temp and lock
 * names fit NAME_MAX.
 */
static int split_path(struct export *e, const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	size_t dir_len = !slash ? 0 : (size_t)(slash - path);

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	if (strlen(path) >= sizeof(e->dir) || strlen(base) > NAME_MAX)
		return -ENAMETOOLONG;
	while (dir_len > 0 && path[dir_len - 1] == '/')
		dir_len--;
	if (slash)
		snprintf(e->dir, sizeof(e->dir), "%.*s", (int)(dir_len ? dir_len : 1), path);
	else
		strcpy(e->dir, ".");
	strcpy(e->base, base);
	/* a legal 255-byte name has its temp name cut short: the pid keeps it ours */
	snprintf(e->tmp_prefix, sizeof(e->tmp_prefix), ".%.*s" TMP_SUFFIX, (int)TMP_BASE_MAX, base);
	snprintf(e->lock_name, sizeof(e->lock_name), ".%.*s" LOCK_SUFFIX, (int)LOCK_BASE_MAX, base);
	return 0;
}

/* Filesystems where a file cannot be created, or must not be: the kernel's own. */
static const char *pseudo_fs(const struct statfs *st)
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
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((long)st->f_type == kinds[i].magic)
			return kinds[i].name;
	return NULL;
}

/*
 * The directory, opened once: every later call is relative to it, so that a
 * directory swapped for a symlink (by a user who can write its parent) is
 * never followed. A symlink as its last component is refused (-ELOOP,
 * why->dir_link); the components before it are followed as given.
 */
static int open_dir(struct export *e, struct export_why *why)
{
	struct statfs fs;
	struct stat st;
	int err;

	e->dirfd = open(e->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	err = e->dirfd < 0 ? -errno : fstatfs(e->dirfd, &fs) ? -errno : 0;
	if (err == -ENOTDIR && !lstat(e->dir, &st) && S_ISLNK(st.st_mode)) {
		/* a kernel filesystem says more (/proc/self/status: /proc/self is a link) */
		why->fs = statfs(e->dir, &fs) ? NULL : pseudo_fs(&fs);
		why->dir_link = !why->fs;
		return why->fs ? -EOPNOTSUPP : -ELOOP;
	}
	if (err)
		return err;
	why->fs = pseudo_fs(&fs);
	return why->fs ? -EOPNOTSUPP : 0;
}

int export__open(const char *path, struct export **out, struct export_why *why)
{
	struct export *e = calloc(1, sizeof(*e));
	int err;

	*why = (struct export_why){};
	if (!e)
		return -ENOMEM;
	e->dirfd = -1;
	e->lock = -1;
	err = split_path(e, path);
	if (!err)
		err = open_dir(e, why);
	if (err) {
		export__free(e);
		return err;
	}
	*out = e;
	return 0;
}

void export__free(struct export *e)
{
	if (!e)
		return;
	/* the lock file stays: removing one races with the next writer's open */
	if (e->lock >= 0)
		close(e->lock);
	if (e->dirfd >= 0)
		close(e->dirfd);
	free(e);
}

/*
 * The directory is still where its path says: not removed, nor moved away and
 * something put in its place. -ESTALE if not (why.dir_moved: moved, not
 * removed); it is never followed to where it went.
 */
static int check_dir(struct export *e)
{
	struct stat now, at_path;

	if (fstat(e->dirfd, &now))
		return -errno;
	if (now.st_nlink == 0)
		return -ESTALE;
	if (!lstat(e->dir, &at_path) && same_file(&at_path, &now))
		return 0;
	e->why.dir_moved = true;
	return -ESTALE;
}

/*
 * What is at path may be replaced: a regular file, or nothing (*absent). Not a
 * symbolic link (the rename would replace the link, not its target; /dev/stdout
 * is one), a directory, a device, a FIFO or a socket.
 */
static int check_target(struct export *e, struct stat *st, bool *absent)
{
	*absent = false;
	if (fstatat(e->dirfd, e->base, st, AT_SYMLINK_NOFOLLOW)) {
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

/* The regular file st at path, one we did not put there, is an export: -EEXIST if not. */
static int check_exported(struct export *e, const struct stat *st)
{
	struct stat now;
	int fd, err = 0;

	fd = openat(e->dirfd, e->base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -EAGAIN : -errno;
	if (fstat(fd, &now))
		err = -errno;
	else if (!same_file(&now, st))
		err = -EAGAIN; /* replaced between the stat and the open */
	if (!err) {
		int file = export_reopen(fd);

		err = file < 0 ? -errno : exported(file) ? 0 : -EEXIST;
		if (file >= 0)
			close(file);
	}
	e->why.foreign = err == -EEXIST;
	close(fd);
	return err;
}

/*
 * What is at path may be replaced by us: the file we put there last, an
 * export another writer left, or nothing (*absent).
 */
static int claim(struct export *e, bool *absent)
{
	struct stat st;
	int tries, err = -EAGAIN;

	for (tries = 0; tries < 8 && err == -EAGAIN; tries++) {
		err = check_target(e, &st, absent);
		if (err || *absent || same_file(&st, &e->written))
			return err;
		err = check_exported(e, &st);
	}
	return err;
}

/*
 * The named temp file over path: over nothing if there was nothing (a file
 * that appeared meanwhile is claimed first), else over the regular file claimed.
 */
static int put_in_place(struct export *e, bool absent)
{
	int err;

	if (absent) {
		if (!renameat2(e->dirfd, e->tmp, e->dirfd, e->base, RENAME_NOREPLACE))
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
	return renameat(e->dirfd, e->tmp, e->dirfd, e->base) ? -errno : 0;
}

/* One export written and put in place, as the one writer. */
static int write_export(struct export *e, void (*emit)(FILE *f, const void *arg), const void *arg)
{
	bool named, ours, absent;
	int fd, err;

	err = export_hold_lock(e);
	if (!err)
		err = claim(e, &absent);
	if (err)
		return err;
	/* a name that export_open_temp() or linkat() refused is not ours to remove */
	fd = export_open_temp(e, &named);
	if (fd < 0)
		return fd;
	ours = named;
	err = export_write_temp(fd, emit, arg);
	if (!err && !named) {
		err = export_name_temp(e, fd);
		ours = !err;
	}
	if (!err)
		err = put_in_place(e, absent);
	if (err && ours)
		unlinkat(e->dirfd, e->tmp, 0);
	if (!err && fstat(fd, &e->written))
		e->written.st_ino = 0;
	/* not held: a file open for writing would keep a remount read-only busy */
	close(fd);
	return err;
}

int export__write(struct export *e, void (*emit)(FILE *f, const void *arg), const void *arg)
{
	int err;

	e->why = (struct export_why){};
	err = check_dir(e);
	if (!err)
		err = write_export(e, emit, arg);
	/* a write that failed because the directory went is said as that */
	if (err && err != -ESTALE && check_dir(e) == -ESTALE)
		return -ESTALE;
	return err;
}

const struct export_why *export__why(const struct export *e)
{
	return &e->why;
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

/* A lock file that drainstat did not make: what it is, never followed nor written. */
static void describe_lock(const char *shown, const struct export_why *why, char *buf, size_t size)
{
	char what[64];

	if (why->found != S_IFREG)
		snprintf(what, sizeof(what), "%s", file_kind(why->found));
	else if (why->owner != geteuid())
		snprintf(what, sizeof(what), "a file of uid %u", (unsigned int)why->owner);
	else
		snprintf(what, sizeof(what), "a file with %lu hard links",
			 (unsigned long)why->links);
	snprintf(buf, size,
		 "the lock file beside %s is %s, not one drainstat made: remove it (it is never "
		 "followed nor written)",
		 shown, what);
}

void export__describe(const char *shown, int err, const struct export_why *why, char *buf,
		      size_t size)
{
	if (err == -ELOOP && why->dir_link)
		snprintf(buf, size,
			 "the directory of %s is a symbolic link: --prom never follows one (it "
			 "could be pointed elsewhere): give the directory's own path",
			 shown);
	else if (err == -ESTALE)
		snprintf(buf, size, "the directory of %s was %s", shown,
			 why->dir_moved
			     ? "moved or replaced: --prom never follows it to its new place"
			     : "removed: nothing to export to");
	else if (err == -EPERM && why->lock_planted)
		describe_lock(shown, why, buf, size);
	else if (err == -ELOOP && why->found == S_IFLNK)
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
			 "%s is being written by another process (another drainstat?): an export "
			 "has one writer",
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
