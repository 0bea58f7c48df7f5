// SPDX-License-Identifier: GPL-2.0
#include <errno.h>

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

void hist__add(struct hist *h, __u64 v)
{
	__u32 b = hist_bucket(v);

	h->count++;
	h->sum += v;
	if (!h->bucket[b]++)
		h->nonzero[b / 64] |= 1ULL << (b % 64);
	h->max = v > h->max ? v : h->max;
}

/* A word the BPF side may be writing meanwhile: read once, as it is now. */
static __u64 read_once(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void hist__prefetch(const struct hist *h)
{
	__u32 w, b;

	for (w = 0; w < HIST_NONZERO_WORDS; w++) {
		__u64 nonzero = read_once(&h->nonzero[w]);

		for (; nonzero; nonzero &= nonzero - 1) {
			b = w * 64 + (__u32)__builtin_ctzll(nonzero);
			if (b < HIST_BUCKETS)
				__builtin_prefetch(&h->bucket[b]);
		}
	}
}

int hist__read(const struct hist *h, struct arena *a, struct sparse_hist *out)
{
	__u64 nonzero[HIST_NONZERO_WORDS];
	struct hist_bucket *v = NULL;
	__u32 w, nr = 0;

	out->count = read_once(&h->count);
	out->sum = read_once(&h->sum);
	out->max = read_once(&h->max);
	for (w = 0; w < HIST_NONZERO_WORDS; w++) {
		nonzero[w] = read_once(&h->nonzero[w]);
		nr += (__u32)__builtin_popcountll(nonzero[w]);
	}
	out->buckets = NULL;
	out->nr = 0;
	if (!nr)
		return 0;
	v = arena__alloc_uninit(a, nr * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (w = 0; w < HIST_NONZERO_WORDS; w++) {
		for (; nonzero[w]; nonzero[w] &= nonzero[w] - 1) {
			__u32 b = w * 64 + (__u32)__builtin_ctzll(nonzero[w]);
			__u64 n = b < HIST_BUCKETS ? read_once(&h->bucket[b]) : 0;

			if (n) /* taken back to zero since (wait_revised) */
				v[out->nr++] = (struct hist_bucket){b, n};
		}
	}
	out->buckets = v;
	return 0;
}

__u64 hist__percentile(const struct sparse_hist *h, double p, bool *lower_bound)
{
	__u64 total = 0, rank, seen = 0, v;
	__u32 i;

	if (lower_bound)
		*lower_bound = false;
	for (i = 0; i < h->nr; i++)
		total += h->buckets[i].n;
	if (!total)
		return 0;
	rank = (__u64)(p * (double)total + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank >= total && h->max)
		return h->max; /* the top sample is known exactly */
	for (i = 0; i + 1 < h->nr; i++) {
		seen += h->buckets[i].n;
		if (seen >= rank)
			break;
	}
	v = bucket_mid(h->buckets[i].b);
	if (h->max && v >= h->max)
		return h->max;
	if (lower_bound)
		*lower_bound = h->buckets[i].b == HIST_BUCKETS - 1;
	return v;
}

static __u64 sub_floor(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

/* out's buckets: cur's less prev's, those left above zero. */
static int delta_buckets(const struct sparse_hist *cur, const struct sparse_hist *prev,
			 struct arena *a, struct sparse_hist *out)
{
	struct hist_bucket *v;
	__u32 i, j = 0;

	out->buckets = NULL;
	out->nr = 0;
	if (!cur->nr)
		return 0;
	v = arena__alloc_uninit(a, cur->nr * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < cur->nr; i++) {
		__u64 n = cur->buckets[i].n;

		while (j < prev->nr && prev->buckets[j].b < cur->buckets[i].b)
			j++;
		if (j < prev->nr && prev->buckets[j].b == cur->buckets[i].b)
			n = sub_floor(n, prev->buckets[j].n);
		if (n)
			v[out->nr++] = (struct hist_bucket){cur->buckets[i].b, n};
	}
	out->buckets = v;
	return 0;
}

int hist__delta(const struct sparse_hist *cur, const struct sparse_hist *prev, struct arena *a,
		struct sparse_hist *out)
{
	const struct sparse_hist none = {};
	__u64 top;
	int err;

	if (!prev) { /* a copy: out lives as long as a, not as long as cur */
		out->count = cur->count;
		out->sum = cur->sum;
		out->max = cur->max;
		return delta_buckets(cur, &none, a, out);
	}
	/*
	 * A sample can be taken back (a drain's wait revised in tracepoint mode):
	 * an interval may then hold fewer than none, which reads as none.
	 */
	out->count = sub_floor(cur->count, prev->count);
	out->sum = sub_floor(cur->sum, prev->sum);
	err = delta_buckets(cur, prev, a, out);
	if (err)
		return err;
	if (!out->count) {
		out->max = 0;
		return 0;
	}
	if (cur->max > prev->max) {
		out->max = cur->max;
		return 0;
	}
	top = out->nr ? hist__bucket_high(out->buckets[out->nr - 1].b) - 1 : 0;
	out->max = top < cur->max ? top : cur->max;
	return 0;
}

int hist__merge(struct sparse_hist *into, const struct sparse_hist *h, struct arena *a)
{
	struct hist_bucket *v;
	__u32 i = 0, j = 0, n = 0;

	into->count += h->count;
	into->sum += h->sum;
	if (h->max > into->max)
		into->max = h->max;
	if (!h->nr)
		return 0;
	if (!into->nr) {
		into->buckets = h->buckets; /* views share: neither is written again */
		into->nr = h->nr;
		return 0;
	}
	v = arena__alloc_uninit(a, (into->nr + h->nr) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	while (i < into->nr || j < h->nr) {
		if (j == h->nr || (i < into->nr && into->buckets[i].b < h->buckets[j].b))
			v[n++] = into->buckets[i++];
		else if (i == into->nr || h->buckets[j].b < into->buckets[i].b)
			v[n++] = h->buckets[j++];
		else {
			v[n] = h->buckets[j++];
			v[n++].n += into->buckets[i++].n;
		}
	}
	into->buckets = v;
	into->nr = n;
	return 0;
}
