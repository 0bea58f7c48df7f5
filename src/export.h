/* SPDX-License-Identifier: GPL-2.0 */
/* Files that readers must never see half written: node_exporter's textfile directory. */
#ifndef EXPORT_H
#define EXPORT_H

#include <stdio.h>

/*
 * Writes what emit() prints to path atomically: an unnamed temp file (O_TMPFILE)
 * in the same directory, or where the filesystem has none a named one
 * (O_CREAT|O_EXCL|O_NOFOLLOW), mode 0644 whatever the umask, fsync, named
 * ".<basename>.tmp.<pid>", renamed over path, fsync of the directory. Never leaves a partial file
 * at path; removes its temp file on any failure, and never touches one it did not create (a symlink
 * planted there gives -EEXIST). 0 or -errno; an error from the final directory fsync comes after
 * path was replaced.
 */
int export__write_atomic(const char *path, void (*emit)(FILE *f, const void *arg), const void *arg);

/*
 * Removes the temp files of path that a killed writer left (killed between
 * naming and renaming one): ".<basename>.tmp.<pid>" of a pid that no longer
 * runs, regular files of this user only. Returns how many it removed.
 */
int export__remove_stale(const char *path);

#endif /* EXPORT_H */
