/* SPDX-License-Identifier: GPL-2.0 */
/* A process's file mappings, to name user-space frames "module+0xoffset". */
#ifndef UMAPS_H
#define UMAPS_H

#include <stddef.h>
#include <linux/types.h>

struct umaps;

/*
 * The most fds a struct umaps holds at once: the mapped files it keeps open
 * for their symbols (its load reads one /proc file at a time, none kept).
 */
#define UMAPS_FDS_MAX 4

/*
 * Reads /proc/PID/maps (or path if not NULL, for tests), each file under its
 * real name: the kernel's \012 for a newline in it decoded. 0 or -errno.
 */
int umaps__load(int pid, const char *path, struct umaps **out);
void umaps__free(struct umaps *um);
/*
 * "posix_fadvise+0x1a (libc.so.6)": the function from the file's symbols, or
 * "libc.so.6+0xfb2d3" (the offset in the file) without one, or "0x..." outside
 * every file mapping.
 */
const char *umaps__describe(struct umaps *um, __u64 addr, char *buf, size_t size);

#endif /* UMAPS_H */
