/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A file read ahead by a second thread, in a ring of a few 64 KiB chunks, while
 * the caller parses what came before: /proc/kallsyms takes the kernel as long
 * to produce as drainstat takes to parse. Without a thread (no memory for its
 * stack, RLIMIT_NPROC) the reads are made as asked.
 */
#ifndef PREFETCH_H
#define PREFETCH_H

#include <sys/types.h>

struct prefetch;

/* Opens path and starts reading it ahead: 0, or -errno (*out NULL). */
int prefetch__open(const char *path, struct prefetch **out);
/* Up to size bytes into buf: like read(2), 0 at the end, -errno on error. */
ssize_t prefetch__read(struct prefetch *p, char *buf, size_t size);
/* Stops the reading (the thread reads on to the end to be joined), closes, frees; NULL is fine. */
void prefetch__close(struct prefetch *p);

#endif /* PREFETCH_H */
