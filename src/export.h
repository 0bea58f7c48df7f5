/* SPDX-License-Identifier: GPL-2.0 */
/* Files that readers must never see half written: node_exporter's textfile directory. */
#ifndef EXPORT_H
#define EXPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* One writer's hold on an export file. */
struct export;

/* Why an export call failed, beyond its -errno. */
struct export_why {
	pid_t holder;	/* -EBUSY: the process holding the file (0: in another PID namespace) */
	mode_t found;	/* -EINVAL, -ELOOP, -EISDIR: the type (S_IFMT) of what is at the path */
	const char *fs; /* -EOPNOTSUPP: the kernel filesystem the directory is on */
	bool foreign;	/* -EEXIST: a file at the path that no drainstat wrote */
};

/*
 * Prepares the export to path: no file is touched yet. -EISDIR for a path that
 * names a directory ("", ".", "dir/"), -ENAMETOOLONG, -EOPNOTSUPP for a
 * directory on a kernel filesystem (procfs, sysfs, cgroup, ...: why->fs).
 */
int export__open(const char *path, struct export **e, struct export_why *why);
void export__free(struct export *e);

/*
 * Writes what emit() prints to the path atomically, as its one writer: an
 * unnamed temp file (O_TMPFILE) in the same directory, or where the filesystem
 * has none a named one (O_CREAT|O_EXCL|O_NOFOLLOW) ".<basename>.tmp.<pid>"
 * (the basename cut to fit NAME_MAX), mode 0644 whatever the umask, renamed
 * over the path. Not synced: atomic for readers, not durable across a crash.
 *
 * Only a regular file is ever replaced, or a new one created: a symbolic link
 * at the path gives -ELOOP, a directory -EISDIR, a device, FIFO or socket
 * -EINVAL, and stays untouched; so does a regular file that is neither empty
 * nor a drainstat export (-EEXIST, why->foreign): a mistyped path must not
 * cost the system a file. The file written is held with a POSIX write
 * lock (fcntl F_SETLK) until the next write or export__free(); a file at the
 * path that another process holds gives -EBUSY (export__why()->holder), so two
 * drainstats never take turns on one file. Never leaves a partial file at the
 * path; removes its temp file on any failure, and never touches one it did
 * not create (a symlink planted there gives -EEXIST). 0 or -errno.
 */
int export__write(struct export *e, void (*emit)(FILE *f, const void *arg), const void *arg);

/* What the last failed call found (see struct export_why). */
const struct export_why *export__why(const struct export *e);

/* The one-line message for err, with shown (the path, escaped) in it. */
void export__describe(const char *shown, int err, const struct export_why *why, char *buf,
		      size_t size);

/* True when the export's directory no longer exists. */
bool export__dir_gone(const struct export *e);

/*
 * Removes the temp files of the path that a killed writer left (killed between
 * naming and renaming one): ".<basename>.tmp.<pid>" of a pid that no longer
 * runs, regular files of this user only. Returns how many it removed.
 */
int export__remove_stale(const struct export *e);

#endif /* EXPORT_H */
