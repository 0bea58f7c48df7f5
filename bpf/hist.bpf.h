/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel side of drainstat.h's log-linear histograms: add a sample, take
 * one back, keep a maximum; atomic, since a map value is shared by every CPU,
 * but for the histograms of one CPU's own (hist_add_local()).
 */
#ifndef HIST_BPF_H
#define HIST_BPF_H

#include "drainstat.h"

/* *max = the larger of *max and v, against other CPUs' updates */
static __always_inline void max_update(__u64 *max, __u64 v)
{
	__u64 old = *max;

	/* bounded: a lost race only means another CPU stored a value close to ours */
	for (int i = 0; i < 3 && v > old; i++) {
		__u64 seen = __sync_val_compare_and_swap(max, old, v);

		if (seen == old)
			break;
		old = seen;
	}
}

static __always_inline void hist_add(struct hist *h, __u64 v)
{
	__u32 b = hist_bucket(v);

	if (b >= HIST_BUCKETS)
		b = HIST_BUCKETS - 1;
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum, v);
	if (!__sync_fetch_and_add(&h->bucket[b], 1))
		__sync_fetch_and_or(&h->nonzero[b / 64], 1ULL << (b % 64));
	max_update(&h->max, v);
}

/*
 * hist_add() for a histogram that only one program writes, on one CPU: the
 * kernel never runs a program twice at once on a CPU, so plain adds do.
 * Readers see each word whole either way.
 */
static __always_inline void hist_add_local(struct hist *h, __u64 v)
{
	__u32 b = hist_bucket(v);

	if (b >= HIST_BUCKETS)
		b = HIST_BUCKETS - 1;
	h->count++;
	h->sum += v;
	if (!h->bucket[b]++)
		h->nonzero[b / 64] |= 1ULL << (b % 64);
	if (v > h->max)
		h->max = v;
}

/* Undo hist_add(h, v) except for max, which can only have grown. */
static __always_inline void hist_remove(struct hist *h, __u64 v)
{
	__u32 b = hist_bucket(v);

	if (b >= HIST_BUCKETS)
		b = HIST_BUCKETS - 1;
	__sync_fetch_and_add(&h->count, -1);
	__sync_fetch_and_add(&h->sum, -v);
	__sync_fetch_and_add(&h->bucket[b], -1);
}

#endif /* HIST_BPF_H */
