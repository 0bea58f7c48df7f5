// SPDX-License-Identifier: GPL-2.0
/*
 * The histogram: bucket layout (shared with the BPF side), the kernel's dense
 * histogram read into buckets in use, percentiles, deltas, merges, the arena.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "check.h"
#include "hist.h"

/* h as user space holds it, its buckets in a. */
static struct sparse_hist sparse(const struct hist *h, struct arena *a)
{
	struct sparse_hist s;

	CHECK(hist__read(h, a, &s) == 0);
	return s;
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

	for (v = 1; v < (1ULL << HIST_MAX_EXP); v = v * 9 / 8 + 1) {
		b = hist_bucket(v);
		if (hist__bucket_low(b) > v || hist__bucket_high(b) <= v)
			bad++;
	}
	CHECK(bad == 0);
	for (b = 0; b + 1 < HIST_BUCKETS; b++)
		CHECK(hist__bucket_high(b) == hist__bucket_low(b + 1));
	CHECK(hist_bucket(~0ULL) == HIST_BUCKETS - 1);
	/* the last bucket holds what is at or above 2^HIST_MAX_EXP ns, and nothing below */
	CHECK(hist_bucket(1ULL << HIST_MAX_EXP) == HIST_BUCKETS - 1);
	CHECK(hist_bucket((1ULL << HIST_MAX_EXP) - 1) == HIST_BUCKETS - 2);
	CHECK(hist__bucket_low(HIST_BUCKETS - 1) == 1ULL << HIST_MAX_EXP);
	CHECK(hist__bucket_high(HIST_BUCKETS - 1) == ~0ULL);
	/* an hour and more of finite buckets: a stuck drain is measured */
	CHECK(hist__bucket_low(HIST_BUCKETS - 1) >= 3600 * 1000000000ULL);
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
	struct arena a = {};
	struct sparse_hist s;
	__u64 v;

	for (v = 1; v <= 100000; v++)
		hist__add(h, v * 1000);
	s = sparse(h, &a);
	CHECK(within(hist__percentile(&s, 0.50, NULL), 50000000, 0.07));
	CHECK(within(hist__percentile(&s, 0.90, NULL), 90000000, 0.07));
	CHECK(within(hist__percentile(&s, 0.99, NULL), 99000000, 0.07));
	CHECK(hist__percentile(&s, 1.0, NULL) <= h->max);
	arena__free(&a);
	free(h);
}

/* Log-normal-ish: 90 samples at 10us, 9 at 1ms, 1 at 50ms. */
static void test_percentiles_skewed(void)
{
	struct hist *h = calloc(1, sizeof(*h));
	struct arena a = {};
	struct sparse_hist s;
	int i;

	for (i = 0; i < 90; i++)
		hist__add(h, 10000);
	for (i = 0; i < 9; i++)
		hist__add(h, 1000000);
	hist__add(h, 50000000);
	s = sparse(h, &a);
	CHECK(s.nr == 3);
	CHECK(within(hist__percentile(&s, 0.50, NULL), 10000, 0.07));
	CHECK(within(hist__percentile(&s, 0.90, NULL), 10000, 0.07));
	CHECK(within(hist__percentile(&s, 0.99, NULL), 1000000, 0.07));
	CHECK(hist__percentile(&s, 1.0, NULL) == 50000000);
	arena__free(&a);
	free(h);
}

static void test_percentile_empty_and_single(void)
{
	struct hist *h = calloc(1, sizeof(*h));
	struct arena a = {};
	struct sparse_hist s = sparse(h, &a);

	CHECK(s.nr == 0 && hist__percentile(&s, 0.5, NULL) == 0);
	hist__add(h, 12345);
	s = sparse(h, &a);
	/* one sample: clamped to the max, which is exact */
	CHECK(hist__percentile(&s, 0.5, NULL) == 12345);
	CHECK(hist__percentile(&s, 0.99, NULL) == 12345);
	arena__free(&a);
	free(h);
}

/*
 * Only the buckets the bitmap marks are read; a marked bucket taken back to
 * zero (a revised wait) is left out.
 */
/*
 * Past 2^HIST_MAX_EXP ns a percentile is the last bucket's low edge, a lower
 * bound, unless it is the max (exact); below, never a lower bound.
 */
static void test_percentile_lower_bound(void)
{
	const __u64 ten_minutes = 600000000000ULL, two_hours = 7200000000000ULL;
	struct hist *h = calloc(1, sizeof(*h));
	struct arena a = {};
	struct sparse_hist s;
	bool lower_bound = true;
	int i;

	hist__add(h, two_hours);
	s = sparse(h, &a);
	/* one sample: the max, exact however long */
	CHECK(hist__percentile(&s, 0.5, &lower_bound) == two_hours && !lower_bound);
	for (i = 0; i < 99; i++)
		hist__add(h, two_hours + (__u64)i);
	s = sparse(h, &a);
	CHECK(hist__percentile(&s, 0.5, &lower_bound) == 1ULL << HIST_MAX_EXP && lower_bound);
	CHECK(hist__percentile(&s, 0.99, &lower_bound) == 1ULL << HIST_MAX_EXP && lower_bound);
	CHECK(hist__percentile(&s, 1.0, &lower_bound) == two_hours + 98 && !lower_bound);
	memset(h, 0, sizeof(*h));
	for (i = 0; i < 100; i++)
		hist__add(h, ten_minutes + (__u64)i);
	s = sparse(h, &a);
	CHECK(within(hist__percentile(&s, 0.5, &lower_bound), ten_minutes, 0.07) && !lower_bound);
	CHECK(within(hist__percentile(&s, 0.99, &lower_bound), ten_minutes, 0.07) && !lower_bound);
	arena__free(&a);
	free(h);
}

static void test_read_follows_nonzero(void)
{
	struct hist *h = calloc(1, sizeof(*h));
	struct arena a = {};
	struct sparse_hist s;
	__u32 b1 = hist_bucket(3000), b2 = hist_bucket(1ULL << 37);

	hist__add(h, 3000);
	hist__add(h, 1ULL << 37);
	hist__add(h, 70);
	h->bucket[hist_bucket(70)] = 0; /* taken back: its bit stays */
	h->bucket[5] = 9;		/* no bit: not a bucket the kernel wrote */
	s = sparse(h, &a);
	CHECK(s.count == 3 && s.max == 1ULL << 37);
	CHECK(s.nr == 2);
	CHECK(s.buckets[0].b == b1 && s.buckets[0].n == 1);
	CHECK(s.buckets[1].b == b2 && s.buckets[1].n == 1);
	arena__free(&a);
	free(h);
}

static void test_delta(void)
{
	struct hist *prev = calloc(1, sizeof(*prev)), *cur = calloc(1, sizeof(*cur));
	struct arena a = {};
	struct sparse_hist p, c, d;

	hist__add(prev, 5000);
	hist__add(prev, 900000);
	*cur = *prev;
	hist__add(cur, 7000);
	hist__add(cur, 8000);
	p = sparse(prev, &a);
	c = sparse(cur, &a);
	CHECK(hist__delta(&c, &p, &a, &d) == 0);
	CHECK(d.count == 2);
	CHECK(d.sum == 15000);
	CHECK(d.nr == 2 && d.buckets[0].b == hist_bucket(7000));
	/* the interval did not set a new max: bounded by its top bucket */
	CHECK(d.max >= 8000 && d.max < 9000);
	hist__add(cur, 2000000);
	c = sparse(cur, &a);
	CHECK(hist__delta(&c, &p, &a, &d) == 0);
	CHECK(d.max == 2000000);
	CHECK(hist__delta(&c, NULL, &a, &d) == 0);
	CHECK(d.count == 5 && d.nr == c.nr && d.buckets != c.buckets);
	/* a sample moved up (revised): the bucket it left reads as none, not fewer */
	cur->bucket[hist_bucket(5000)]--;
	c = sparse(cur, &a);
	CHECK(hist__delta(&c, &p, &a, &d) == 0);
	CHECK(d.nr == 3 && d.buckets[0].b == hist_bucket(7000));
	arena__free(&a);
	free(prev);
	free(cur);
}

static void test_merge(void)
{
	struct hist *x = calloc(1, sizeof(*x)), *y = calloc(1, sizeof(*y));
	struct arena a = {};
	struct sparse_hist m = {}, s;

	hist__add(x, 100);
	hist__add(x, 300);
	hist__add(y, 300);
	hist__add(y, 200);
	hist__add(y, 5);
	s = sparse(x, &a);
	CHECK(hist__merge(&m, &s, &a) == 0);
	s = sparse(y, &a);
	CHECK(hist__merge(&m, &s, &a) == 0);
	CHECK(m.count == 5 && m.sum == 905 && m.max == 300);
	CHECK(m.nr == 4);
	CHECK(m.buckets[0].b == hist_bucket(5) && m.buckets[1].b == hist_bucket(100));
	CHECK(m.buckets[2].b == hist_bucket(200) && m.buckets[2].n == 1);
	CHECK(m.buckets[3].b == hist_bucket(300) && m.buckets[3].n == 2);
	arena__free(&a);
	free(x);
	free(y);
}

/* What an arena gave never moves; a reset reuses its chunks; big asks get their own. */
static void test_arena(void)
{
	struct arena a = {};
	char *p = arena__alloc(&a, 10), *q, *big;
	int i, moved = 0;

	CHECK(p && ((unsigned long)p & 7) == 0);
	p[0] = 'x';
	for (i = 0; i < 10000; i++) {
		q = arena__alloc(&a, 24);
		CHECK(q != NULL);
		moved |= q == p;
	}
	CHECK(!moved && p[0] == 'x');
	big = arena__alloc(&a, 1 << 20);
	CHECK(big && big[(1 << 20) - 1] == 0);
	arena__reset(&a);
	q = arena__alloc(&a, 10);
	CHECK(q == p && q[0] == 0);
	arena__free(&a);
	CHECK(a.first == NULL);
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
	RUN(test_percentile_lower_bound);
	RUN(test_read_follows_nonzero);
	RUN(test_delta);
	RUN(test_merge);
	RUN(test_arena);
	return failed ? 1 : 0;
}
