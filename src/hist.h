/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The log-linear histograms of bpf/drainstat.h as user space holds them: only
 * the buckets in use, in order (the kernel's struct hist holds every bucket).
 * Buckets live in an arena: a histogram is a view, copied freely, never freed.
 */
#ifndef HIST_H
#define HIST_H

#include <stdbool.h>
#include <linux/types.h>
#include "arena.h"
#include "drainstat.h"

struct hist_bucket {
	__u32 b; /* bucket index, as hist_bucket() gives it */
	__u64 n;
};

struct sparse_hist {
	__u64 count;
	__u64 sum;
	__u64 max;
	const struct hist_bucket *buckets; /* nr of them, b ascending, n > 0 */
	__u32 nr;
};

/* The smallest value that falls in bucket b, and the first one past it. */
__u64 hist__bucket_low(__u32 b);
__u64 hist__bucket_high(__u32 b);

/* Adds v to a kernel-layout histogram as the BPF side does (tests build them so). */
void hist__add(struct hist *h, __u64 v);

/*
 * The buckets of h that its nonzero bitmap marks, into a (h may be changing:
 * the kernel's, read in place). 0 or -ENOMEM.
 */
int hist__read(const struct hist *h, struct arena *a, struct sparse_hist *out);
/*
 * Asks for the buckets h's bitmap marks, without waiting for them: several
 * histograms' cache misses then overlap before hist__read() reads each.
 */
void hist__prefetch(const struct hist *h);

/*
 * The value below which a fraction p (0 < p <= 1) of the samples lie: the
 * midpoint of the bucket holding that rank, never above the recorded max.
 * 0 for an empty histogram. *lower_bound (if not NULL) says whether the value
 * is only a lower bound: the rank falls in the last bucket, open-ended at
 * 2^HIST_MAX_EXP ns, and is not the max (known exactly).
 */
__u64 hist__percentile(const struct sparse_hist *h, double p, bool *lower_bound);

/*
 * out = cur - prev (prev may be NULL), its buckets in a: what was recorded
 * between two snapshots. The max of an interval is exact when it set a new
 * overall max, otherwise it is bounded by the highest bucket that received
 * samples. 0 or -ENOMEM.
 */
int hist__delta(const struct sparse_hist *cur, const struct sparse_hist *prev, struct arena *a,
		struct sparse_hist *out);

/* into += h (counts and sums add, max is the larger). 0 or -ENOMEM. */
int hist__merge(struct sparse_hist *into, const struct sparse_hist *h, struct arena *a);

#endif /* HIST_H */
