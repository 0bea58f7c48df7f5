/* SPDX-License-Identifier: GPL-2.0 */
/* Files that readers must never see half written: node_exporter's textfile directory. */
#ifndef EXPORT_H
#define EXPORT_H

#include <stdio.h>

/*
 * Writes what emit() prints to path atomically: a temp file ".<basename>.tmp.<pid>"
 * in the same directory (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0644 whatever the umask),
 * fsync, rename over path, fsync of the directory. Never leaves a partial file at
 * path; removes its temp file on any failure, and never touches one it did not
 * create (a symlink planted there gives -EEXIST). 0 or -errno; an error from the
 * final directory fsync comes after path was replaced.
 */
int export__write_atomic(const char *path, void (*emit)(FILE *f, const void *arg), const void *arg);

#endif /* EXPORT_H */
