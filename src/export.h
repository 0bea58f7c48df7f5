/* SPDX-License-Identifier: GPL-2.0 */
/* Files that readers must never see half written: node_exporter's textfile directory. */
#ifndef EXPORT_H
#define EXPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* One writer's hold on an export file. */
struct export;

/*
 * The most fds an export holds at once: its directory and its lock file for
 * the run, and while one is written its temp file and the temp file's stream
 * (before that, a look at the file it replaces: an O_PATH fd and its reopen).
 */
#define EXPORT_FDS_MAX 4

/* Why an export call failed, beyond its -errno. */
struct export_why {
	pid_t holder;	   /* -EBUSY: the process holding the lock file (0: not known) */
	mode_t found;	   /* -EINVAL, -ELOOP, -EISDIR, -EPERM: its type (S_IFMT) */
	const char *fs;	   /* -EOPNOTSUPP: the kernel filesystem the directory is on */
	bool foreign;	   /* -EEXIST: a file at the path that no drainstat wrote */
	bool dir_link;	   /* -ELOOP: the directory itself is the symbolic link */
	bool dir_moved;	   /* -ESTALE: the directory was moved away or replaced, not removed */
	bool lock_planted; /* -EPERM: the lock file is not one we made (found, owner, links) */
	uid_t owner;
	nlink_t links;
};

/*
 * Prepares the export to path: opens its directory (O_PATH, once: every later
 * call is relative to it), and touches no file yet. -EISDIR for a path that
 * names a directory ("", ".", "dir/"), -ELOOP (why->dir_link) for a directory
 * that is a symbolic link, -ENAMETOOLONG, -EOPNOTSUPP for a directory on a
 * kernel filesystem (procfs, sysfs, cgroup, ...: why->fs).
 */
int export__open(const char *path, struct export **e, struct export_why *why);
void export__free(struct export *e);

/*
 * Writes what emit() prints to the path atomically, as its one writer: an
 * unnamed temp file (O_TMPFILE) in the same directory, named (linkat) or, where
 * the filesystem has none, created (O_CREAT|O_EXCL|O_NOFOLLOW) as
 * ".<basename>.tmp.<pid>.<16 random hex>" (the basename cut to fit NAME_MAX;
 * another name on EEXIST: a name no other user can guess, nor plant a file
 * at), mode 0644 whatever the umask, renamed over the path. Not synced: atomic
 * for readers, not durable across a crash.
 *
 * Only a regular file is ever replaced, or a new one created: a symbolic link
 * at the path gives -ELOOP, a directory -EISDIR, a device, FIFO or socket
 * -EINVAL, and stays untouched; so does a regular file that is neither empty
 * nor a drainstat export (-EEXIST, why->foreign): a mistyped path must not
 * cost the system a file. One writer: the first write takes an flock() on the
 * lock file ".<basename>.lock" beside the path (created 0600, never removed),
 * held until export__free(); another process holding it gives -EBUSY
 * (why->holder), a lock file that is not a regular file of ours with one link
 * -EPERM (why->lock_planted). The export itself is neither locked nor kept
 * open: a reader never stops its writer. The directory must still be where its
 * path says: removed, moved or replaced, -ESTALE (why->dir_moved), and it is
 * never followed. Never leaves a partial file at the path; removes its temp
 * file on any failure, and never touches one it did not create. 0 or -errno.
 */
int export__write(struct export *e, void (*emit)(FILE *f, const void *arg), const void *arg);

/* What the last failed call found (see struct export_why). */
const struct export_why *export__why(const struct export *e);

/* The one-line message for err, with shown (the path, escaped) in it. */
void export__describe(const char *shown, int err, const struct export_why *why, char *buf,
		      size_t size);

/*
 * Removes the temp files of the path that a killed writer left (killed between
 * naming and renaming one): ".<basename>.tmp.<pid>.<random>" (or, from an older
 * drainstat, ".<basename>.tmp.<pid>") of a pid that no longer runs, regular
 * files of this user with one link only; never the lock file. Returns how many
 * it removed.
 */
int export__remove_stale(const struct export *e);

#endif /* EXPORT_H */
