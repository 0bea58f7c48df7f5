/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A bump allocator for what lives as long as one snapshot or one model: the
 * buckets of their histograms, a model's stack frames. Nothing is freed alone;
 * what is allocated never moves; a reset keeps the chunks for the next
 * interval (no fresh pages).
 */
#ifndef ARENA_H
#define ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *first; /* chunks in order; reset starts again from here */
	struct arena_chunk *cur;
};

/* size bytes, 8-aligned, zeroed: NULL when out of memory. */
void *arena__alloc(struct arena *a, size_t size);
/* The same, not zeroed: for arrays the caller fills before reading (histogram buckets). */
void *arena__alloc_uninit(struct arena *a, size_t size);
void arena__reset(struct arena *a);
void arena__free(struct arena *a);

#endif /* ARENA_H */
