/* SPDX-License-Identifier: GPL-2.0 */
/* How the heap keeps freed memory: setup's and the report loop's, and make bench's. */
#ifndef HEAP_H
#define HEAP_H

#include <malloc.h>
#include <stdbool.h>

/*
 * keep: large blocks come from the heap and freed ones stay there, not mapped
 * and unmapped each time, so they are not page-faulted and zeroed anew; else
 * glibc's small thresholds, and memory goes back to the kernel.
 */
static inline void heap_keep(bool keep)
{
	mallopt(M_MMAP_THRESHOLD, keep ? 32 << 20 : 128 << 10);
	mallopt(M_TRIM_THRESHOLD, keep ? 64 << 20 : 128 << 10);
}

#endif /* HEAP_H */
