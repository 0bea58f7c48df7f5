// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "hist.h"

__u64 hist__bucket_low(__u32 b)
{
	__u32 group = b / HIST_SUB, sub = b % HIST_SUB, e;

	if (b < HIST_SUB)
		return b;
	e = group + HIST_SUB_BITS - 1;
	return (__u64)(HIST_SUB + sub) << (e - HIST_SUB_BITS);
}

__u64 hist__bucket_high(__u32 b)
{
	if (b >= HIST_BUCKETS - 1)
		return ~0ULL;
	return hist__bucket_low(b + 1);
}

static __u64 bucket_mid(__u32 b)
{
	__u64 low = hist__bucket_low(b), high = hist__bucket_high(b);

	if (high - low <= 1 || b >= HIST_BUCKETS - 1)
		return low;
	return low + (high - low) / 2;
}

__u64 hist__percentile(const struct hist *h, double p)
{
	__u64 total = 0, rank, seen = 0, v;
	__u32 b;

	for (b = 0; b < HIST_BUCKETS; b++)
		total += h->bucket[b];
	if (!total)
		return 0;
	rank = (__u64)(p * (double)total + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank >= total && h->max)
		return h->max; /* the top sample is known exactly */
	for (b = 0; b < HIST_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= rank)
			break;
	}
	if (b == HIST_BUCKETS)
		b = HIST_BUCKETS - 1;
	v = bucket_mid(b);
	return h->max && v > h->max ? h->max : v;
}

static __u64 top_bucket_high(const struct hist *h)
{
	int b;

	for (b = HIST_BUCKETS - 1; b >= 0; b--)
		if (h->bucket[b])
			return hist__bucket_high((__u32)b) - 1;
	return 0;
}

static __u64 sub_floor(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

void hist__delta(const struct hist *cur, const struct hist *prev, struct hist *out)
{
	__u64 top;
	__u32 b;

	if (!prev) {
		memcpy(out, cur, sizeof(*out));
		return;
	}
	/*
	 * A sample can be taken back (a drain's wait revised in tracepoint mode):
	 * an interval may then hold fewer than none, which reads as none.
	 */
	out->count = sub_floor(cur->count, prev->count);
	out->sum = sub_floor(cur->sum, prev->sum);
	for (b = 0; b < HIST_BUCKETS; b++)
		out->bucket[b] = sub_floor(cur->bucket[b], prev->bucket[b]);
	if (!out->count) {
		out->max = 0;
		return;
	}
	if (cur->max > prev->max) {
		out->max = cur->max;
		return;
	}
	top = top_bucket_high(out);
	out->max = top < cur->max ? top : cur->max;
}

void hist__merge(struct hist *into, const struct hist *h)
{
	__u32 b;

	into->count += h->count;
	into->sum += h->sum;
	if (h->max > into->max)
		into->max = h->max;
	for (b = 0; b < HIST_BUCKETS; b++)
		into->bucket[b] += h->bucket[b];
}
