// SPDX-License-Identifier: GPL-2.0
/* The histogram: bucket layout (shared with the BPF side), percentiles, deltas. */
#include <stdlib.h>
#include <linux/types.h>

#include "check.h"
#include "hist.h"

static void add(struct hist *h, __u64 v)
{
	h->count++;
	h->sum += v;
	h->bucket[hist_bucket(v)]++;
	if (v > h->max)
		h->max = v;
}

static void test_small_values_exact(void)
{
	__u64 v;

	for (v = 0; v < HIST_SUB; v++) {
		CHECK(hist_bucket(v) == v);
		CHECK(hist__bucket_low((__u32)v) == v);
	}
}

/* Every value lies in [low, high) of its bucket, and buckets tile the line. */
static void test_buckets_contain_values(void)
{
	__u64 v;
	__u32 b;
	int bad = 0;

	for (v = 1; v < (1ULL << 37); v = v * 9 / 8 + 1) {
		b = hist_bucket(v);
		if (hist__bucket_low(b) > v || hist__bucket_high(b) <= v)
			bad++;
	}
	CHECK(bad == 0);
	for (b = 0; b + 1 < HIST_BUCKETS; b++)
		CHECK(hist__bucket_high(b) == hist__bucket_low(b + 1));
	CHECK(hist_bucket(~0ULL) == HIST_BUCKETS - 1);
	CHECK(hist_bucket(1ULL << HIST_MAX_EXP) == HIST_BUCKETS - 1);
	CHECK(hist_bucket((1ULL << HIST_MAX_EXP) - 1) == HIST_BUCKETS - 1);
}

/* At least 4 sub-buckets per power of two: a bucket is at most 1/4 of its octave. */
static void test_resolution(void)
{
	__u32 b;
	int bad = 0;

	for (b = HIST_SUB; b + 1 < HIST_BUCKETS; b++) {
		__u64 low = hist__bucket_low(b), width = hist__bucket_high(b) - low;

		if (width * 8 > low) /* width <= low / 8 with 8 sub-buckets */
			bad++;
	}
	CHECK(bad == 0);
	CHECK(hist_bucket(1000) != hist_bucket(1150));
}

static void test_log2(void)
{
	CHECK(hist_log2(1) == 0);
	CHECK(hist_log2(2) == 1);
	CHECK(hist_log2(3) == 1);
	CHECK(hist_log2(1ULL << 40) == 40);
	CHECK(hist_log2((1ULL << 40) + 5) == 40);
	CHECK(hist_log2(~0ULL) == 63);
}

static int within(__u64 got, __u64 want, double tolerance)
{
	double d = (double)got - (double)want;

	return (d < 0 ? -d : d) <= tolerance * (double)want;
}

/* 1..100000 us uniform: p50 = 50000, p90 = 90000, p99 = 99000 us within 7%. */
static void test_percentiles_uniform(void)
{
	struct hist *h = calloc(1, sizeof(*h));
	__u64 v;

	for (v = 1; v <= 100000; v++)
		add(h, v * 1000);
	CHECK(within(hist__percentile(h, 0.50), 50000000, 0.07));
	CHECK(within(hist__percentile(h, 0.90), 90000000, 0.07));
	CHECK(within(hist__percentile(h, 0.99), 99000000, 0.07));
	CHECK(hist__percentile(h, 1.0) <= h->max);
	free(h);
}

/* Log-normal-ish: 90 samples at 10us, 9 at 1ms, 1 at 50ms. */
static void test_percentiles_skewed(void)
{
	struct hist *h = calloc(1, sizeof(*h));
	int i;

	for (i = 0; i < 90; i++)
		add(h, 10000);
	for (i = 0; i < 9; i++)
		add(h, 1000000);
	add(h, 50000000);
	CHECK(within(hist__percentile(h, 0.50), 10000, 0.07));
	CHECK(within(hist__percentile(h, 0.90), 10000, 0.07));
	CHECK(within(hist__percentile(h, 0.99), 1000000, 0.07));
	CHECK(hist__percentile(h, 1.0) == 50000000);
	free(h);
}

static void test_percentile_empty_and_single(void)
{
	struct hist *h = calloc(1, sizeof(*h));

	CHECK(hist__percentile(h, 0.5) == 0);
	add(h, 12345);
	/* one sample: clamped to the max, which is exact */
	CHECK(hist__percentile(h, 0.5) == 12345);
	CHECK(hist__percentile(h, 0.99) == 12345);
	free(h);
}

static void test_delta(void)
{
	struct hist *prev = calloc(1, sizeof(*prev)), *cur = calloc(1, sizeof(*cur));
	struct hist *d = calloc(1, sizeof(*d));

	add(prev, 5000);
	add(prev, 900000);
	*cur = *prev;
	add(cur, 7000);
	add(cur, 8000);
	hist__delta(cur, prev, d);
	CHECK(d->count == 2);
	CHECK(d->sum == 15000);
	/* the interval did not set a new max: bounded by its top bucket */
	CHECK(d->max >= 8000 && d->max < 9000);
	add(cur, 2000000);
	hist__delta(cur, prev, d);
	CHECK(d->max == 2000000);
	hist__delta(cur, NULL, d);
	CHECK(d->count == 5);
	free(prev);
	free(cur);
	free(d);
}

static void test_merge(void)
{
	struct hist *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	add(a, 100);
	add(b, 300);
	add(b, 200);
	hist__merge(a, b);
	CHECK(a->count == 3 && a->sum == 600 && a->max == 300);
	CHECK(a->bucket[hist_bucket(200)] == 1);
	free(a);
	free(b);
}

int main(void)
{
	int failed = 0;

	RUN(test_small_values_exact);
	RUN(test_buckets_contain_values);
	RUN(test_resolution);
	RUN(test_log2);
	RUN(test_percentiles_uniform);
	RUN(test_percentiles_skewed);
	RUN(test_percentile_empty_and_single);
	RUN(test_delta);
	RUN(test_merge);
	return failed ? 1 : 0;
}
