// SPDX-License-Identifier: GPL-2.0
/*
 * The export's site series: the model's rows merged by site label (and with
 * the cgroup key, cgroup label, and with --prom-cgroup=pod the pod's labels),
 * at most max_sites of them and the rest summed as site="other"
 * (cgroup="other", no pod labels), each histogram's samples placed at their
 * le edges.
 *
 * The places go to the sites that drain: a site takes a label of its own at
 * its first drain (or work), largest wait first, while places are left; one
 * with local drains alone (every unit that execs has some) waits in "other",
 * so that they never take the places before the drains come. Once none is
 * left, a site that drains (since the export before), or has drained more (a
 * longer total wait), takes the place of one that has not drained for
 * PROM_PLACE_IDLE exports: a cgroup removed, a unit stopped, gives its place
 * back, and short-lived cgroups cannot hold the places from the units that
 * drain.
 *
 * Counters must never go down, and two things could make them: a site that
 * leaves "other" for a label of its own (at its first drain) takes its counts
 * out of "other"; and a wait taken back in tracepoint mode (wait_revised)
 * moves a sample to a higher bucket, so the series between the two go down by
 * one; a site that gives its place back puts its counts into "other". With a
 * prom_memory each series, "other"'s with them and that of a site that takes
 * a place again, holds its last value until the truth passes it again (the
 * sample is late, not lost).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroups.h"
#include "container.h"
#include "grow.h"
#include "hist.h"
#include "report_prom_int.h"

/* A site with a place gives it to one that drains once it has not drained for this many exports. */
#define PROM_PLACE_IDLE 3

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
	int i;

	if (!pm)
		return;
	for (i = 0; i < pm->nr; i++) {
		free(pm->seen[i].cgroup);
		free(pm->seen[i].namespace);
		free(pm->seen[i].pod);
	}
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

/* Two cgroup labels, alen bytes of a and blen of b, as same_label(); NULL: none. */
static bool same_cgroup(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i;

	if (!a || !b)
		return !a && !b;
	if (alen != blen) /* label_char() maps a byte to a byte */
		return false;
	for (i = 0; i < alen; i++)
		if (label_char(a[i]) != label_char(b[i]))
			return false;
	return true;
}

/* Two pod label values, as same_label(); NULL (no such label) only matches NULL. */
static bool same_value(const char *a, const char *b)
{
	return a && b ? same_label(a, b) : a == b;
}

/* Whether site a has these pod labels (NULL: none of that name). */
static bool same_pod(const struct prom_site *a, const char *namespace, const char *pod,
		     const char *qos)
{
	return same_value(a->namespace, namespace) && same_value(a->pod, pod) &&
	       same_value(a->qos, qos);
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

/* NULL (no label) first. */
static int cmp_value(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

static int cmp_wait(const void *a, const void *b)
{
	const struct prom_site *x = a, *y = b;
	const __u64 xw = x->hist[SITE_WAIT_NS].sum_ns, yw = y->hist[SITE_WAIT_NS].sum_ns;
	size_t xl = x->cgroup_len, yl = y->cgroup_len;
	int c;

	if (xw != yw)
		return xw > yw ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c || !x->cgroup || !y->cgroup)
		return c;
	c = memcmp(x->cgroup, y->cgroup, xl < yl ? xl : yl);
	if (c || xl != yl)
		return c ? c : xl < yl ? -1 : 1;
	/* the same cgroup label names one pod, but for a name read between two rows' */
	c = cmp_value(x->namespace, y->namespace);
	return c ? c : cmp_value(x->pod, y->pod);
}

/*
 * Row r's pod labels into s, for a cgroup in a pod: its QoS class as the path
 * gives it, its namespace and name where /var/log/pods gave them (model_pod).
 * Each is a function of the pod's UID, which the cgroup label (the pod's
 * slice) holds: no series more than --prom-cgroup=unit makes. No container
 * label: an id is new at every restart of the container, a series each time.
 */
static void row_pod(const struct model_site *r, struct prom_site *s)
{
	struct container c;

	if (!r->cgroup || !container__parse(r->cgroup, &c) || !c.pod_uid[0])
		return;
	s->qos = container__qos_name(c.qos);
	if (r->pod.name && r->pod.namespace) {
		s->namespace = r->pod.namespace;
		s->pod = r->pod.name;
	}
}

/*
 * Row r's cgroup label into s: its path or the path's stable prefix, and
 * with --prom-cgroup=pod its pod's labels; none without the key.
 */
static void row_cgroup(const struct model *m, const struct model_site *r, enum prom_cgroup how,
		       struct prom_site *s)
{
	s->cgroup = NULL;
	s->cgroup_len = 0;
	s->namespace = s->pod = s->qos = NULL;
	if (!m->info.by_cgroup)
		return;
	s->cgroup = r->cgroup ? r->cgroup : "";
	s->cgroup_len = how == PROM_CGROUP_PATH ? strlen(s->cgroup) : cgroups__unit(s->cgroup);
	if (how == PROM_CGROUP_POD)
		row_pod(r, s);
}

/*
 * The model's rows merged by site, cgroup and pod labels into v (room for
 * every row; each site cleared as it is made), largest total wait first;
 * returns how many. how: --prom-cgroup.
 */
static int merge_sites(const struct model *m, enum prom_cgroup how, struct prom_site *v)
{
	const __u8 *le = le_of_bucket();
	struct prom_site key;
	int i, j, n = 0;

	for (i = 0; i < m->nr_sites; i++) {
		key = (struct prom_site){.name = m->sites[i].site};
		row_cgroup(m, &m->sites[i], how, &key);
		for (j = 0; j < n && !(same_label(v[j].name, key.name) &&
				       same_cgroup(v[j].cgroup, v[j].cgroup_len, key.cgroup,
						   key.cgroup_len) &&
				       same_pod(&v[j], key.namespace, key.pod, key.qos));
		     j++)
			;
		if (j == n)
			v[n++] = key;
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

/* Site v's drains and works: local drains alone do not take a place. */
static __u64 drains_of(const struct prom_site *v)
{
	return v->count[SITE_DRAINS] + v->count[SITE_WORKS];
}

/* Whether s is the entry of v's labels. */
static bool seen_is(const struct prom_seen *s, const struct prom_site *v)
{
	return same_label(s->name, v->name) &&
	       same_cgroup(s->cgroup, s->cgroup_len, v->cgroup, v->cgroup_len) &&
	       same_pod(v, s->namespace, s->pod, s->qos);
}

/* s's own copies of v's cgroup and pod labels: false, out of memory (none made). */
static bool seen_copy_labels(struct prom_seen *s, const struct prom_site *v)
{
	s->cgroup = v->cgroup ? strndup(v->cgroup, v->cgroup_len) : NULL;
	s->namespace = v->namespace ? strdup(v->namespace) : NULL;
	s->pod = v->pod ? strdup(v->pod) : NULL;
	if ((v->cgroup && !s->cgroup) || (v->namespace && !s->namespace) || (v->pod && !s->pod)) {
		free(s->cgroup);
		free(s->namespace);
		free(s->pod);
		return false;
	}
	s->cgroup_len = v->cgroup ? v->cgroup_len : 0;
	s->qos = v->qos; /* container__qos_name()'s: static */
	return true;
}

/*
 * v's labels' entry in pm, made if new and v has drained (in the room
 * reserve_seen() made), without a place yet. NULL: none yet (local drains
 * alone), no room, or out of memory.
 */
static struct prom_seen *seen_site(struct prom_memory *pm, const struct prom_site *v)
{
	struct prom_seen *s;
	int i;

	for (i = 0; i < pm->nr; i++)
		if (seen_is(&pm->seen[i], v))
			return &pm->seen[i];
	/* room made before (reserve_seen()): the entries handed out stay in place */
	if (!drains_of(v) || (size_t)pm->nr >= pm->cap)
		return NULL;
	s = &pm->seen[pm->nr];
	memset(s, 0, sizeof(*s));
	if (!seen_copy_labels(s, v))
		return NULL;
	pm->nr++;
	snprintf(s->name, sizeof(s->name), "%s", v->name);
	return s;
}

/* Each site's entry in pm (v->seen), and for how many exports it has not drained. */
static void mark_seen(struct prom_memory *pm, struct prom_site *v, int n)
{
	struct prom_seen *s;
	int i;

	for (i = 0; i < n; i++) {
		s = v[i].seen = seen_site(pm, &v[i]);
		if (!s)
			continue;
		s->idle = drains_of(&v[i]) > s->drains_seen ? 0 : s->idle + 1;
		s->drains_seen = drains_of(&v[i]);
	}
}

/* Whether site v has drained more than the site of s: a longer total wait, else more drains. */
static bool drains_more(const struct prom_site *v, const struct prom_seen *s)
{
	__u64 vw = v->hist[SITE_WAIT_NS].sum_ns, sw = s->last[SITE_WAIT_NS].sum_ns;

	return vw > sw || (vw == sw && drains_of(v) > s->drains_seen);
}

/*
 * A place given back for site v: that of the site with a place that has not
 * drained for PROM_PLACE_IDLE exports (a cgroup gone among them) with the
 * least total wait, if v drained since the export before or has drained more.
 * Whether one was.
 */
static bool release_for(struct prom_memory *pm, const struct prom_site *v)
{
	struct prom_seen *s, *least = NULL;
	int i;

	for (i = 0; i < pm->nr; i++) {
		s = &pm->seen[i];
		if (s->kept && s->idle >= PROM_PLACE_IDLE &&
		    (!least || s->last[SITE_WAIT_NS].sum_ns < least->last[SITE_WAIT_NS].sum_ns))
			least = s;
	}
	if (!least || (v->seen->idle && !drains_more(v, least)))
		return false;
	least->kept = false;
	pm->nr_kept--;
	return true;
}

/*
 * Places, largest total wait first, to the sites that drained and have none:
 * while places are left, then those of sites idle for a while (release_for()).
 */
static void give_places(struct prom_memory *pm, struct prom_site *v, int n, int max_sites)
{
	struct prom_seen *s;
	int i;

	for (i = 0; i < n; i++) {
		s = v[i].seen;
		if (!s || s->kept || same_label(v[i].name, "other"))
			continue;
		if (max_sites > 0 && pm->nr_kept >= max_sites && !release_for(pm, &v[i]))
			continue;
		s->kept = true;
		pm->nr_kept++;
	}
}

/* The cgroup label of site="other": "other" too. */
static void other_cgroup(struct prom_site *other)
{
	other->cgroup = "other";
	other->cgroup_len = 5;
}

/*
 * Keeps max_sites labels and sums the rest into site="other", with them a site
 * itself named "other" (its series would come twice). Only sites that have
 * drained take places. Without a memory the kept ones are the first (largest
 * wait); with one, a site keeps its place while it drains, new ones, largest
 * wait first, take the places left, and one that drains now or has drained
 * more takes the place of a site that has not drained for PROM_PLACE_IDLE
 * exports; a site with no place is summed in "other" (one pm has no room for,
 * too).
 */
static int fold_other(struct prom_site *v, int n, int max_sites, struct prom_memory *pm,
		      bool by_cgroup)
{
	struct prom_site other = {.name = "other", .seen = pm ? &pm->other : NULL};
	int i, kept = 0, folded = 0;
	bool keep;

	if (by_cgroup)
		other_cgroup(&other);
	if (!pm && (max_sites <= 0 || n <= max_sites))
		return n;
	if (pm) {
		reserve_seen(pm, n);
		mark_seen(pm, v, n);
		give_places(pm, v, n, max_sites);
	}
	for (i = 0; i < n; i++) {
		keep = pm ? v[i].seen && v[i].seen->kept
			  : kept < max_sites && drains_of(&v[i]) && !same_label(v[i].name, "other");
		if (keep) {
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
static void prom_series_hold_up(struct prom_series *s, struct prom_series *last)
{
	int i;

	/* the larger of two nondecreasing le sequences is nondecreasing: still a histogram */
	for (i = 0; i < NR_LE; i++)
		s->le[i] = s->le[i] > last->le[i] ? s->le[i] : last->le[i];
	s->sum_ns = s->sum_ns > last->sum_ns ? s->sum_ns : last->sum_ns;
	s->count = s->count > last->count ? s->count : last->count;
	*last = *s;
}

/*
 * Every series of v no lower than the last export showed (v->seen's), which
 * becomes what this one shows: "other" when a site left it, a histogram after
 * a revised wait.
 */
static void site_hold_up(struct prom_site *v)
{
	int k;

	if (!v->seen)
		return;
	for (k = 0; k < SITE_COUNTS; k++) {
		if (v->count[k] < v->seen->last_count[k])
			v->count[k] = v->seen->last_count[k];
		v->seen->last_count[k] = v->count[k];
	}
	for (k = 0; k < SITE_HISTS; k++)
		prom_series_hold_up(&v->hist[k], &v->seen->last[k]);
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
		*n = fold_other(v, merge_sites(m, o->cgroup, v), o->max_sites, o->memory,
				m->info.by_cgroup);
		for (i = 0; i < *n; i++)
			site_hold_up(&v[i]);
		return v;
	}
	/* no memory to tell sites apart: still every count, all as "other" */
	*all = (struct prom_site){.name = "other"};
	if (m->info.by_cgroup)
		other_cgroup(all);
	for (i = 0; i < m->nr_sites; i++)
		add_row(all, &m->sites[i], le_of_bucket());
	site_cumulate(all);
	*n = m->nr_sites ? 1 : 0;
	return all;
}
