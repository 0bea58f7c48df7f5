// SPDX-License-Identifier: GPL-2.0
/*
 * The export's site series: the model's rows merged by site label, at most
 * max_sites labels and the rest summed as site="other", each histogram's
 * samples placed at their le edges.
 *
 * Counters must never go down, and two things could make them: a site that
 * leaves "other" for a label of its own takes its counts out of "other"; and a
 * wait taken back in tracepoint mode (wait_revised) moves a sample to a higher
 * bucket, so the series between the two go down by one. With a prom_memory a
 * site keeps the label it was first given, and each histogram series holds
 * its last value until the truth passes it again (the sample is late, not lost).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hist.h"
#include "report_prom_int.h"

struct prom_memory {
	struct prom_seen *seen;
	int nr, nr_kept;
	size_t cap;
	struct prom_seen other; /* the series of site="other" */
	/* the sites of an export, kept for the next: no fresh pages every interval */
	struct prom_site *sites;
	int sites_cap;
};

struct prom_memory *prom_memory__new(void)
{
	struct prom_memory *pm = calloc(1, sizeof(*pm));

	if (pm)
		strcpy(pm->other.name, "other");
	return pm;
}

void prom_memory__free(struct prom_memory *pm)
{
	if (!pm)
		return;
	free(pm->seen);
	free(pm->sites);
	free(pm);
}

/* Two site names that show as one label value are one series, or it would come twice. */
static bool same_label(const char *a, const char *b)
{
	if (!strcmp(a, b)) /* the most frequent answer, found fastest */
		return true;
	for (; *a && *b; a++, b++)
		if (label_char(*a) != label_char(*b))
			return false;
	return *a == *b;
}

/*
 * The le edge a bucket's samples are counted at first: the first edge past the
 * bucket, 2^shift ns with shift the smallest of the edges' at or above
 * log2(the bucket's high end).
 */
static int le_index(__u32 b)
{
	__u64 high = hist__bucket_high(b);
	int log2_high = high > 1 ? 64 - __builtin_clzll(high - 1) : 0;
	int i;

	if (log2_high <= LE_FIRST_SHIFT)
		return 0;
	i = (log2_high - LE_FIRST_SHIFT + LE_STEP - 1) / LE_STEP;
	return i < NR_LE - 1 ? i : NR_LE - 1; /* past the last edge: +Inf */
}

/* le_index() of every bucket, worked out once: the export places every bucket of every site. */
static const __u8 *le_of_bucket(void)
{
	static __u8 le[HIST_BUCKETS];
	static bool made;
	__u32 b;

	if (!made) {
		for (b = 0; b < HIST_BUCKETS; b++)
			le[b] = (__u8)le_index(b);
		made = true;
	}
	return le;
}

/*
 * into += h, with into's le counts per edge, not yet cumulative (each
 * bucket's samples at its edge): series_cumulate() sums them upwards once,
 * when every row is in.
 */
static void series_add_hist(struct prom_series *into, const struct sparse_hist *h, const __u8 *le)
{
	__u32 j;

	into->sum_ns += h->sum;
	into->count += h->count;
	for (j = 0; j < h->nr; j++)
		into->le[le[h->buckets[j].b]] += h->buckets[j].n;
}

static void series_cumulate(struct prom_series *s)
{
	int i;

	for (i = 1; i < NR_LE; i++)
		s->le[i] += s->le[i - 1];
}

static void series_add(struct prom_series *into, const struct prom_series *s)
{
	int i;

	for (i = 0; i < NR_LE; i++)
		into->le[i] += s->le[i];
	into->sum_ns += s->sum_ns;
	into->count += s->count;
}

/* s += r, the le counts per edge (site_cumulate() ends it). */
static void add_row(struct prom_site *s, const struct model_site *r, const __u8 *le)
{
	int i;

	for (i = 0; i < SITE_COUNTS; i++)
		s->count[i] += r->count[i];
	for (i = 0; i < SITE_HISTS; i++)
		series_add_hist(&s->hist[i], &r->hist[i], le);
}

static void site_cumulate(struct prom_site *s)
{
	int i;

	for (i = 0; i < SITE_HISTS; i++)
		series_cumulate(&s->hist[i]);
}

static void add_site(struct prom_site *into, const struct prom_site *s)
{
	int i;

	for (i = 0; i < SITE_COUNTS; i++)
		into->count[i] += s->count[i];
	for (i = 0; i < SITE_HISTS; i++)
		series_add(&into->hist[i], &s->hist[i]);
}

static int cmp_wait(const void *a, const void *b)
{
	const struct prom_site *x = a, *y = b;
	const __u64 xw = x->hist[SITE_WAIT_NS].sum_ns, yw = y->hist[SITE_WAIT_NS].sum_ns;

	if (xw != yw)
		return xw > yw ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * The model's rows merged by site into v (room for every row; each site
 * cleared as it is made), largest total wait first; returns how many.
 */
static int merge_sites(const struct model *m, struct prom_site *v)
{
	const __u8 *le = le_of_bucket();
	int i, j, n = 0;

	for (i = 0; i < m->nr_sites; i++) {
		for (j = 0; j < n && !same_label(v[j].name, m->sites[i].site); j++)
			;
		if (j == n)
			v[n++] = (struct prom_site){.name = m->sites[i].site};
		add_row(&v[j], &m->sites[i], le);
	}
	for (j = 0; j < n; j++)
		site_cumulate(&v[j]);
	qsort(v, (size_t)n, sizeof(*v), cmp_wait);
	return n;
}

/*
 * Room in pm for n more entries, made before any is handed out: the series
 * of one export point into pm->seen, so it must not move while they do. Out
 * of memory, what room there is.
 */
static void reserve_seen(struct prom_memory *pm, int n)
{
	while (pm->cap < (size_t)pm->nr + (size_t)n)
		if (grow((void **)&pm->seen, pm->cap, &pm->cap, sizeof(*pm->seen), 32))
			return;
}

/*
 * name's entry in pm, made if new (in the room reserve_seen() made): kept
 * while fewer than max_sites are. NULL: no room.
 */
static struct prom_seen *seen_site(struct prom_memory *pm, const char *name, int max_sites)
{
	struct prom_seen *s;
	int i;

	for (i = 0; i < pm->nr; i++)
		if (same_label(pm->seen[i].name, name))
			return &pm->seen[i];
	if ((size_t)pm->nr == pm->cap)
		return NULL;
	s = &pm->seen[pm->nr++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->kept = !same_label(name, "other") && (max_sites <= 0 || pm->nr_kept < max_sites);
	pm->nr_kept += s->kept;
	return s;
}

/*
 * Keeps max_sites labels and sums the rest into site="other", with them a site
 * itself named "other" (its series would come twice). Without a memory the
 * kept ones are the first (largest wait); with one, a site keeps the label it
 * had in the exports before, and new ones, largest wait first, take the places
 * left; a site pm cannot remember goes to "other" (and stays: nothing
 * remembers it).
 */
static int fold_other(struct prom_site *v, int n, int max_sites, struct prom_memory *pm)
{
	struct prom_site other = {.name = "other", .seen = pm ? &pm->other : NULL};
	int i, kept = 0, folded = 0;

	if (!pm && (max_sites <= 0 || n <= max_sites))
		return n;
	if (pm)
		reserve_seen(pm, n);
	for (i = 0; i < n; i++) {
		struct prom_seen *s = pm ? seen_site(pm, v[i].name, max_sites) : NULL;
		bool keep = pm ? s && s->kept : kept < max_sites && !same_label(v[i].name, "other");

		if (keep) {
			v[i].seen = s;
			memmove(&v[kept++], &v[i], sizeof(*v));
		} else {
			add_site(&other, &v[i]);
			folded++;
		}
	}
	if (folded)
		v[kept++] = other;
	return kept;
}

/* s, never below what was exported last; last becomes what is exported now. */
void prom_series_hold_up(struct prom_series *s, struct prom_series *last)
{
	int i;

	/* the larger of two nondecreasing le sequences is nondecreasing: still a histogram */
	for (i = 0; i < NR_LE; i++)
		s->le[i] = s->le[i] > last->le[i] ? s->le[i] : last->le[i];
	s->sum_ns = s->sum_ns > last->sum_ns ? s->sum_ns : last->sum_ns;
	*last = *s;
}

/*
 * Room for n sites (uncleared): pm's, kept from the exports before, or without
 * pm one to free (*owned). NULL: out of memory.
 */
static struct prom_site *sites_buffer(struct prom_memory *pm, int n, struct prom_site **owned)
{
	struct prom_site *v;

	*owned = NULL;
	if (!pm)
		return *owned = malloc((size_t)n * sizeof(*v));
	if (n > pm->sites_cap) {
		v = realloc(pm->sites, (size_t)n * sizeof(*v));
		if (!v)
			return NULL;
		pm->sites = v;
		pm->sites_cap = n;
	}
	return pm->sites;
}

const struct prom_site *prom_sites_make(const struct model *m, const struct prom_opts *o,
					struct prom_site *all, struct prom_site **owned, int *n)
{
	struct prom_site *v = sites_buffer(o->memory, m->nr_sites + 1, owned);
	int i;

	if (v) {
		*n = fold_other(v, merge_sites(m, v), o->max_sites, o->memory);
		return v;
	}
	/* no memory to tell sites apart: still every count, all as "other" */
	*all = (struct prom_site){.name = "other"};
	for (i = 0; i < m->nr_sites; i++)
		add_row(all, &m->sites[i], le_of_bucket());
	site_cumulate(all);
	*n = m->nr_sites ? 1 : 0;
	return all;
}
