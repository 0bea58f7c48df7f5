// SPDX-License-Identifier: GPL-2.0
/*
 * Labels stay bounded: site (at most max_sites + "other", comms merged), cpu on
 * the victim families, advice and reason from fixed lists. Loss counters are
 * drainstat_lost_events_total{reason} (sum() gives the report's "lost"); the
 * counters that mark a measurement as inexact are drainstat_inexact_events_total.
 * Families a mode cannot measure (lock, empty, forced, local, ipis, fadvise) are
 * absent, not zero. Histogram edges are bucket edges, so every count is exact:
 * le="2^k ns" holds the samples below 2^k ns (a sample of exactly 2^k ns, the
 * first of its bucket, is counted at the next edge).
 *
 * Counters must never go down, and two things could make them: a site that
 * leaves "other" for a label of its own takes its counts out of "other"; and a
 * wait taken back in tracepoint mode (wait_revised) moves a sample to a higher
 * bucket, so the series between the two go down by one. With a prom_memory a
 * site keeps the label it was first given, and each histogram series holds
 * its last value until the truth passes it again (the sample is late, not lost).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "report_prom.h"

#define NS_PER_SEC 1000000000ULL
/* le edges: 4^k ns from 1.024us to ~17.2s. Each is the low edge of a log-linear bucket. */
#define LE_FIRST_SHIFT 10
#define LE_LAST_SHIFT  34
#define LE_STEP	       2
#define NR_LE	       ((LE_LAST_SHIFT - LE_FIRST_SHIFT) / LE_STEP + 2) /* the edges and +Inf */

enum site_family { FAM_DISPATCH, FAM_RUN, FAM_WAIT, FAM_LOCK, NR_FAMILIES };

/* One histogram as the exposition shows it: cumulative le counts, +Inf last, and the sum. */
struct prom_series {
	__u64 le[NR_LE];
	__u64 sum_ns;
};

/* A site label an export has shown: by name, or within "other" (kept false). */
struct prom_seen {
	char name[MODEL_NAME_LEN];
	bool kept;
	struct prom_series last[NR_FAMILIES];
};

struct prom_memory {
	struct prom_seen *seen;
	int nr, cap, nr_kept;
	struct prom_seen other; /* the series of site="other" */
};

/* One site label: the model's rows of that site summed over their comms. */
struct prom_site {
	const char *name;
	__u64 drains, forced_drains, empty_drains, works, self_works, ipis;
	__u64 local_drains;
	struct prom_series dispatch_ns, run_ns, wait_ns, lock_ns;
	struct prom_seen *seen; /* its memory; NULL without one */
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
	free(pm);
}

#define SITE_U64(s, off)    (*(const __u64 *)((const char *)(s) + (off)))
#define SITE_SERIES(s, off) ((const struct prom_series *)((const char *)(s) + (off)))

static void put_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP drainstat_%s %s\n# TYPE drainstat_%s %s\n", name, help, name, type);
}

/* Bytes past ASCII (the file stays UTF-8) and control bytes show as '?'; '\n' is escaped. */
static char label_char(char c)
{
	return c == '\n' || (c >= 0x20 && c < 0x7f) ? c : '?';
}

/* Escapes what the format requires. */
static void put_label_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		char c = label_char(*s);

		if (c == '\\' || c == '"')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else
			fputc(c, f);
	}
}

/* Two site names that show as one label value are one series, or it would come twice. */
static bool same_label(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (label_char(*a) != label_char(*b))
			return false;
	return *a == *b;
}

static void put_label(FILE *f, const char *name, const char *value)
{
	fprintf(f, "%s=\"", name);
	put_label_value(f, value ? value : "");
	fputc('"', f);
}

static void put_seconds(FILE *f, __u64 ns)
{
	fprintf(f, "%llu.%09llu", (unsigned long long)(ns / NS_PER_SEC),
		(unsigned long long)(ns % NS_PER_SEC));
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

/* into += h, as cumulative le counts: each bucket's samples at its edge, then summed upwards. */
static void series_add_hist(struct prom_series *into, const struct sparse_hist *h)
{
	__u64 at[NR_LE] = {0}, below = 0;
	__u32 j;
	int i;

	into->sum_ns += h->sum;
	if (!h->nr)
		return;
	for (j = 0; j < h->nr; j++)
		at[le_index(h->buckets[j].b)] += h->buckets[j].n;
	for (i = 0; i < NR_LE; i++) {
		below += at[i];
		into->le[i] += below;
	}
}

static void series_add(struct prom_series *into, const struct prom_series *s)
{
	int i;

	for (i = 0; i < NR_LE; i++)
		into->le[i] += s->le[i];
	into->sum_ns += s->sum_ns;
}

static void add_row(struct prom_site *s, const struct model_site *r)
{
	s->drains += r->drains;
	s->forced_drains += r->forced_drains;
	s->empty_drains += r->empty_drains;
	s->works += r->works;
	s->self_works += r->self_works;
	s->ipis += r->ipis;
	s->local_drains += r->local_ns.count;
	series_add_hist(&s->dispatch_ns, &r->dispatch_ns);
	series_add_hist(&s->run_ns, &r->run_ns);
	series_add_hist(&s->wait_ns, &r->wait_ns);
	series_add_hist(&s->lock_ns, &r->lock_ns);
}

static void add_site(struct prom_site *into, const struct prom_site *s)
{
	into->drains += s->drains;
	into->forced_drains += s->forced_drains;
	into->empty_drains += s->empty_drains;
	into->works += s->works;
	into->self_works += s->self_works;
	into->ipis += s->ipis;
	into->local_drains += s->local_drains;
	series_add(&into->dispatch_ns, &s->dispatch_ns);
	series_add(&into->run_ns, &s->run_ns);
	series_add(&into->wait_ns, &s->wait_ns);
	series_add(&into->lock_ns, &s->lock_ns);
}

static int cmp_wait(const void *a, const void *b)
{
	const struct prom_site *x = a, *y = b;

	if (x->wait_ns.sum_ns != y->wait_ns.sum_ns)
		return x->wait_ns.sum_ns > y->wait_ns.sum_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The model's rows merged by site, largest total wait first; returns how many. */
static int merge_sites(const struct model *m, struct prom_site *v)
{
	int i, j, n = 0;

	for (i = 0; i < m->nr_sites; i++) {
		for (j = 0; j < n && !same_label(v[j].name, m->sites[i].site); j++)
			;
		if (j == n)
			v[n++].name = m->sites[i].site;
		add_row(&v[j], &m->sites[i]);
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_wait);
	return n;
}

/* name's entry in pm, made if new: kept while fewer than max_sites are. NULL: out of memory. */
static struct prom_seen *seen_site(struct prom_memory *pm, const char *name, int max_sites)
{
	struct prom_seen *s;
	int i;

	for (i = 0; i < pm->nr; i++)
		if (same_label(pm->seen[i].name, name))
			return &pm->seen[i];
	if (pm->nr == pm->cap) {
		int cap = pm->cap ? pm->cap * 2 : 32;

		s = realloc(pm->seen, (size_t)cap * sizeof(*s));
		if (!s)
			return NULL;
		pm->seen = s;
		pm->cap = cap;
	}
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

static void put_site_counter(FILE *f, const struct prom_site *v, int n, const char *name,
			     size_t off, const char *help)
{
	int i;

	put_family(f, name, "counter", help);
	for (i = 0; i < n; i++) {
		fprintf(f, "drainstat_%s{", name);
		put_label(f, "site", v[i].name);
		fprintf(f, "} %llu\n", (unsigned long long)SITE_U64(&v[i], off));
	}
}

static void put_works(FILE *f, const struct prom_site *v, int n)
{
	int i;

	put_family(f, "works_total", "counter",
		   "Works queued by drains; kind=self: on the caller's own CPU.");
	for (i = 0; i < n; i++) {
		fputs("drainstat_works_total{", f);
		put_label(f, "site", v[i].name);
		fprintf(f, ",kind=\"self\"} %llu\n", (unsigned long long)v[i].self_works);
		fputs("drainstat_works_total{", f);
		put_label(f, "site", v[i].name);
		fprintf(f, ",kind=\"remote\"} %llu\n",
			(unsigned long long)(v[i].works - v[i].self_works));
	}
}

static void put_bucket(FILE *f, const char *name, const char *site, const char *le, __u64 n)
{
	fprintf(f, "drainstat_%s_bucket{", name);
	put_label(f, "site", site);
	fprintf(f, ",le=\"%s\"} %llu\n", le, (unsigned long long)n);
}

/* s, never below what was exported last; last becomes what is exported now. */
static void hold_up(struct prom_series *s, struct prom_series *last)
{
	int i;

	/* the larger of two nondecreasing le sequences is nondecreasing: still a histogram */
	for (i = 0; i < NR_LE; i++)
		s->le[i] = s->le[i] > last->le[i] ? s->le[i] : last->le[i];
	s->sum_ns = s->sum_ns > last->sum_ns ? s->sum_ns : last->sum_ns;
	*last = *s;
}

static void put_hist(FILE *f, const char *name, const char *site, const struct prom_series *h,
		     struct prom_series *last)
{
	struct prom_series s = *h;
	__u32 shift;
	char le[32];
	int i = 0;

	if (last)
		hold_up(&s, last);
	for (shift = LE_FIRST_SHIFT; shift <= LE_LAST_SHIFT; shift += LE_STEP) {
		snprintf(le, sizeof(le), "%llu.%09llu", (1ULL << shift) / NS_PER_SEC,
			 (1ULL << shift) % NS_PER_SEC);
		put_bucket(f, name, site, le, s.le[i++]);
	}
	put_bucket(f, name, site, "+Inf", s.le[i]);
	fprintf(f, "drainstat_%s_sum{", name);
	put_label(f, "site", site);
	fputs("} ", f);
	put_seconds(f, s.sum_ns);
	fprintf(f, "\ndrainstat_%s_count{", name);
	put_label(f, "site", site);
	fprintf(f, "} %llu\n", (unsigned long long)s.le[i]);
}

static void put_site_hist(FILE *f, const struct prom_site *v, int n, const char *name, size_t off,
			  enum site_family fam, const char *help)
{
	int i;

	put_family(f, name, "histogram", help);
	for (i = 0; i < n; i++)
		put_hist(f, name, v[i].name, SITE_SERIES(&v[i], off),
			 v[i].seen ? &v[i].seen->last[fam] : NULL);
}

static void put_sites(FILE *f, const struct model_info *info, const struct prom_site *v, int n)
{
	put_site_counter(f, v, n, "drains_total", offsetof(struct prom_site, drains),
			 "Calls of lru_add_drain_all() and lru_cache_disable().");
	put_works(f, v, n);
	if (info->entry_visible) {
		put_site_counter(f, v, n, "empty_drains_total",
				 offsetof(struct prom_site, empty_drains),
				 "Drains that returned without queueing a work (piggybacked).");
		put_site_counter(f, v, n, "forced_drains_total",
				 offsetof(struct prom_site, forced_drains),
				 "Forced drains: lru_cache_disable(), every CPU.");
	}
	if (info->has_local) {
		put_site_counter(f, v, n, "local_drains_total",
				 offsetof(struct prom_site, local_drains),
				 "Calls of lru_add_drain().");
	}
	if (info->has_ipi) {
		put_site_counter(f, v, n, "ipis_total", offsetof(struct prom_site, ipis),
				 "IPIs sent to wake the CPUs that got works.");
	}
	put_site_hist(f, v, n, "dispatch_seconds", offsetof(struct prom_site, dispatch_ns),
		      FAM_DISPATCH, "Work queued to work started on the target CPU.");
	put_site_hist(f, v, n, "run_seconds", offsetof(struct prom_site, run_ns), FAM_RUN,
		      "Work started to work ended on the target CPU.");
	put_site_hist(f, v, n, "wait_seconds", offsetof(struct prom_site, wait_ns), FAM_WAIT,
		      "Time a drain held its caller: entry to exit, or in tracepoint mode "
		      "first queue to last work end (a lower bound).");
	if (info->entry_visible) {
		put_site_hist(f, v, n, "lock_seconds", offsetof(struct prom_site, lock_ns),
			      FAM_LOCK,
			      "Drain entry to first queued work: the mutex and the checks.");
	}
}

static void put_fadvise(FILE *f, const struct model *m)
{
	__u64 escalations = 0;
	int i;

	put_family(f, "fadvise_calls_total", "counter", "posix_fadvise() calls by advice.");
	for (i = 0; i < FADVISE_ADVICE_SLOTS; i++) {
		fputs("drainstat_fadvise_calls_total{", f);
		put_label(f, "advice", m->fadvise[i].advice);
		fprintf(f, "} %llu\n", (unsigned long long)m->fadvise[i].calls);
		escalations += m->fadvise[i].escalations;
	}
	put_family(f, "fadvise_escalations_total", "counter",
		   "posix_fadvise() calls inside which a drain started.");
	fprintf(f, "drainstat_fadvise_escalations_total %llu\n", (unsigned long long)escalations);
}

static void put_victims(FILE *f, const struct model *m)
{
	int i;

	put_family(f, "victim_works_total", "counter", "Works run by a CPU for drains.");
	for (i = 0; i < m->nr_cpus; i++)
		fprintf(f, "drainstat_victim_works_total{cpu=\"%d\"} %llu\n", m->cpus[i].cpu,
			(unsigned long long)m->cpus[i].works);
	put_family(f, "victim_run_seconds_total", "counter",
		   "Time a CPU spent running works for drains.");
	for (i = 0; i < m->nr_cpus; i++) {
		fprintf(f, "drainstat_victim_run_seconds_total{cpu=\"%d\"} ", m->cpus[i].cpu);
		put_seconds(f, m->cpus[i].run_ns.sum);
		fputc('\n', f);
	}
	put_family(f, "victim_dispatch_seconds_total", "counter",
		   "Time works for drains waited to start on a CPU.");
	for (i = 0; i < m->nr_cpus; i++) {
		fprintf(f, "drainstat_victim_dispatch_seconds_total{cpu=\"%d\"} ", m->cpus[i].cpu);
		put_seconds(f, m->cpus[i].dispatch_ns.sum);
		fputc('\n', f);
	}
}

static void put_counters(FILE *f, const struct model *m, bool loss, const char *name,
			 const char *help)
{
	int i;

	put_family(f, name, "counter", help);
	for (i = 0; i < CNT_NR; i++) {
		if (model__counter_is_loss(i) != loss || !model__counter_name(i))
			continue;
		fprintf(f, "drainstat_%s{reason=\"%s\"} %llu\n", name, model__counter_name(i),
			(unsigned long long)m->counters[i]);
	}
}

/* A CPU's pending works: the series of drainstat_pending_works. */
struct prom_pending {
	int cpu;
	__u64 works;
	__u64 oldest_ns;
};

static int cmp_pending_cpu(const void *a, const void *b)
{
	const struct prom_pending *x = a, *y = b;

	return x->cpu - y->cpu;
}

/* Pending works by CPU into p (room for every work in flight): how many CPUs. */
static int pending_by_cpu(const struct model *m, struct prom_pending *p)
{
	int i, k, c, n = 0;

	for (i = 0; i < m->nr_in_flight; i++) {
		for (k = 0; k < m->in_flight[i].nr_in_flight; k++) {
			const struct model_work *w = &m->in_flight[i].in_flight[k];

			if (w->started)
				continue;
			for (c = 0; c < n && p[c].cpu != w->target_cpu; c++)
				;
			if (c == n)
				p[n++] = (struct prom_pending){.cpu = w->target_cpu};
			p[c].works++;
			p[c].oldest_ns = w->age_ns > p[c].oldest_ns ? w->age_ns : p[c].oldest_ns;
		}
	}
	qsort(p, (size_t)n, sizeof(*p), cmp_pending_cpu);
	return n;
}

static void put_pending(FILE *f, const struct model *m)
{
	struct prom_pending *p;
	int i, k, n = 0;

	for (i = 0; i < m->nr_in_flight; i++)
		n += m->in_flight[i].nr_in_flight;
	p = calloc((size_t)n + 1, sizeof(*p));
	if (!p)
		return;
	n = pending_by_cpu(m, p);
	put_family(
	    f, "pending_works", "gauge",
	    "Works of drains in flight queued on a CPU and not started; only CPUs with one.");
	for (k = 0; k < n; k++)
		fprintf(f, "drainstat_pending_works{cpu=\"%d\"} %llu\n", p[k].cpu,
			(unsigned long long)p[k].works);
	put_family(f, "oldest_pending_work_seconds", "gauge",
		   "How long the oldest pending work on a CPU has waited to start.");
	for (k = 0; k < n; k++) {
		fprintf(f, "drainstat_oldest_pending_work_seconds{cpu=\"%d\"} ", p[k].cpu);
		put_seconds(f, p[k].oldest_ns);
		fputc('\n', f);
	}
	free(p);
}

/* The drains in flight when the file was written; mutex waiters where the entry is seen. */
static void put_in_flight(FILE *f, const struct model *m)
{
	put_family(f, "drains_in_flight", "gauge",
		   "Drains entered (tracepoint mode: with works queued) and not ended.");
	fprintf(f, "drainstat_drains_in_flight %d\n", m->nr_in_flight);
	put_family(f, "oldest_drain_in_flight_seconds", "gauge",
		   "How long the oldest drain in flight has been in flight; 0 when none.");
	fputs("drainstat_oldest_drain_in_flight_seconds ", f);
	put_seconds(f, m->oldest_in_flight_ns);
	fputc('\n', f);
	if (m->info.entry_visible) {
		put_family(f, "mutex_waiters", "gauge",
			   "Tasks in lru_add_drain_all() with no work queued yet: waiting for "
			   "the drain mutex.");
		fprintf(f, "drainstat_mutex_waiters %d\n", m->mutex_waiters);
	}
	put_pending(f, m);
}

static void put_info(FILE *f, const struct model_info *info, const char *version)
{
	put_family(f, "info", "gauge", "drainstat's version, mode and kernel; always 1.");
	fputs("drainstat_info{", f);
	put_label(f, "version", version);
	fputc(',', f);
	put_label(f, "mode", info->mode);
	fputc(',', f);
	put_label(f, "kernel", info->kernel);
	fputs("} 1\n", f);
}

void report_prom__print(FILE *f, const struct model *m, const struct prom_opts *o)
{
	struct prom_site *v = calloc((size_t)m->nr_sites + 1, sizeof(*v));
	int i, n;

	put_info(f, &m->info, o->version);
	if (v) {
		n = fold_other(v, merge_sites(m, v), o->max_sites, o->memory);
		put_sites(f, &m->info, v, n);
		free(v);
	} else {
		/* no memory to tell sites apart: still every count, all as "other" */
		struct prom_site all = {.name = "other"};

		for (i = 0; i < m->nr_sites; i++)
			add_row(&all, &m->sites[i]);
		put_sites(f, &m->info, &all, m->nr_sites ? 1 : 0);
	}
	if (m->info.has_fadvise)
		put_fadvise(f, m);
	put_victims(f, m);
	put_in_flight(f, m);
	put_counters(f, m, true, "lost_events_total",
		     "Events drainstat could not measure, by reason (a full map, a lost stack, a "
		     "skipped run).");
	put_counters(f, m, false, "inexact_events_total",
		     "Events measured only in part, or saved another way (twin_skips), by reason.");
}
