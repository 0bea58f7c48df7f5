/* SPDX-License-Identifier: GPL-2.0 */
/* Reading the log-linear histograms of bpf/drainstat.h: bounds, percentiles, deltas. */
#ifndef HIST_H
#define HIST_H

#include <linux/types.h>
#include "drainstat.h"

/* The smallest value that falls in bucket b, and the first one past it. */
__u64 hist__bucket_low(__u32 b);
__u64 hist__bucket_high(__u32 b);

/*
 * The value below which a fraction p (0 < p <= 1) of the samples lie: the
 * midpoint of the bucket holding that rank, never above the recorded max.
 * 0 for an empty histogram.
 */
__u64 hist__percentile(const struct hist *h, double p);

/*
 * out = cur - prev: what was recorded between two snapshots. The max of an
 * interval is exact when it set a new overall max, otherwise it is bounded by
 * the highest bucket that received samples.
 */
void hist__delta(const struct hist *cur, const struct hist *prev, struct hist *out);

/* into += h (counts and sums add, max is the larger). */
void hist__merge(struct hist *into, const struct hist *h);

#endif /* HIST_H */
