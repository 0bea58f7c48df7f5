// SPDX-License-Identifier: GPL-2.0
/*
 * The report as Prometheus families, in the text format, in their order.
 *
 * Labels stay bounded: site and cgroup (at most max_sites pairs + "other",
 * comms merged; cgroup by default the unit or pod, not the container), cpu on
 * the victim families, advice and reason from fixed lists. Loss counters are
 * one family by reason (FAM_LOST_EVENTS: sum() gives the report's "lost"), the
 * counters that mark a measurement as inexact another (FAM_INEXACT_EVENTS).
 * Each family is named once, with its HELP: a site's and a CPU's metrics in
 * src/metric.c, the others in prom_families below.
 * Families a mode cannot measure (lock, empty, forced, local, ipis, fadvise) are
 * absent, not zero. Histogram edges are bucket edges, so every count is exact:
 * le="2^k ns" holds the samples below 2^k ns (a sample of exactly 2^k ns, the
 * first of its bucket, is counted at the next edge).
 *
 * The site series, their labels bounded and kept from going down, are made
 * in report_prom_sites.c.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "report_prom_int.h"
#include "stall.h"

#define NS_PER_SEC 1000000000ULL

/* The export's families that are not a site's or a CPU's metric (those are src/metric.c's). */
enum prom_family {
	FAM_INFO,
	FAM_FADVISE_CALLS,
	FAM_FADVISE_ESCALATIONS,
	FAM_DRAINS_IN_FLIGHT,
	FAM_OLDEST_DRAIN_IN_FLIGHT,
	FAM_MUTEX_WAITERS,
	FAM_PENDING_WORKS,
	FAM_OLDEST_PENDING_WORK,
	FAM_STUCK_DRAINS,
	FAM_STUCK_PENDING_WORKS,
	FAM_LOST_EVENTS,
	FAM_INEXACT_EVENTS,
	PROM_FAMILIES
};

/* A family's name after "drainstat_", its type and its HELP. */
static const struct prom_family_desc {
	const char *name, *type, *help;
} prom_families[PROM_FAMILIES] = {
    [FAM_INFO] = {"info", "gauge",
		  "drainstat's version, mode and kernel, and whether the kernel has Queue PerCPU "
		  "Work (its drains' works are then not exported); always 1."},
    [FAM_FADVISE_CALLS] = {"fadvise_calls_total", "counter", "posix_fadvise() calls by advice."},
    [FAM_FADVISE_ESCALATIONS] = {"fadvise_escalations_total", "counter",
				 "posix_fadvise() calls inside which a drain started."},
    [FAM_DRAINS_IN_FLIGHT] = {"drains_in_flight", "gauge",
			      "Drains entered (tracepoint mode: with works queued) and not ended."},
    [FAM_OLDEST_DRAIN_IN_FLIGHT] = {"oldest_drain_in_flight_seconds", "gauge",
				    "How long the oldest drain in flight has been in flight; 0 "
				    "when none."},
    [FAM_MUTEX_WAITERS] = {"mutex_waiters", "gauge",
			   "Tasks in lru_add_drain_all() with no work queued yet: waiting for the "
			   "drain mutex."},
    [FAM_PENDING_WORKS] = {"pending_works", "gauge",
			   "Works of drains in flight queued on a CPU and not started; only CPUs "
			   "with one."},
    [FAM_OLDEST_PENDING_WORK] = {"oldest_pending_work_seconds", "gauge",
				 "How long the oldest pending work on a CPU has waited to start."},
    [FAM_STUCK_DRAINS] = {"stuck_drains", "gauge",
			  "Drains in flight past the stuck threshold (--stuck), by the cause of "
			  "their stall (reason): a mutex waiter's, or that of its first pending "
			  "work's CPU; only while one is stuck."},
    [FAM_STUCK_PENDING_WORKS] =
	{"stuck_pending_works", "gauge",
	 "Pending works of stuck drains, by CPU and the cause of their stall "
	 "there (reason); only CPUs with one, while a drain is stuck."},
    [FAM_LOST_EVENTS] = {"lost_events_total", "counter",
			 "Events drainstat could not measure, by reason (a full map, a lost stack, "
			 "a skipped run, a missed kretprobe)."},
    [FAM_INEXACT_EVENTS] = {"inexact_events_total", "counter",
			    "Events measured only in part, or saved another way (twin_skips), by "
			    "reason."},
};

static void put_help_type(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP drainstat_%s %s\n# TYPE drainstat_%s %s\n", name, help, name, type);
}

static void put_family(FILE *f, enum prom_family k)
{
	put_help_type(f, prom_families[k].name, prom_families[k].type, prom_families[k].help);
}

/* A metric of src/metric.c as its family: a histogram, or a count, a count or a sum of one. */
static void put_metric_family(FILE *f, const struct metric_desc *d)
{
	put_help_type(f, d->prom, d->shape == PROM_HISTOGRAM ? "histogram" : "counter", d->help);
}

/* k's name, after "drainstat_" in its series. */
static const char *family(enum prom_family k)
{
	return prom_families[k].name;
}

/* len bytes of s, escaped as the format requires. */
static void put_label_bytes(FILE *f, const char *s, size_t len)
{
	for (; len--; s++) {
		char c = label_char(*s);

		if (c == '\\' || c == '"')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else
			fputc(c, f);
	}
}

static void put_label(FILE *f, const char *name, const char *value)
{
	fprintf(f, "%s=\"", name);
	if (value)
		put_label_bytes(f, value, strlen(value));
	fputc('"', f);
}

static void put_seconds(FILE *f, __u64 ns)
{
	fprintf(f, "%llu.%09llu", (unsigned long long)(ns / NS_PER_SEC),
		(unsigned long long)(ns % NS_PER_SEC));
}

/* --prom-cgroup=pod: a pod's labels, those it has (report_prom_sites.c). */
static void put_pod_labels(FILE *f, const struct prom_site *v)
{
	const char *const names[] = {"namespace", "pod", "qos"};
	const char *const values[] = {v->namespace, v->pod, v->qos};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!values[i])
			continue;
		fputc(',', f);
		put_label(f, names[i], values[i]);
	}
}

/*
 * The start of a site's series, drainstat_NAME{site="SITE" and with the
 * cgroup key ,cgroup="CGROUP" and its pod's labels: the caller ends the labels.
 */
static void put_site_series(FILE *f, const char *name, const char *suffix,
			    const struct prom_site *v)
{
	fprintf(f, "drainstat_%s%s{", name, suffix);
	put_label(f, "site", v->name);
	if (!v->cgroup)
		return;
	fputs(",cgroup=\"", f);
	put_label_bytes(f, v->cgroup, v->cgroup_len);
	fputc('"', f);
	put_pod_labels(f, v);
}

/* A count of each site: count k of its counts, or with hist, histogram k's count. */
static void put_site_counter(FILE *f, const struct prom_site *v, int n, const struct metric_desc *d,
			     int k, bool hist)
{
	int i;

	put_metric_family(f, d);
	for (i = 0; i < n; i++) {
		const __u64 value = hist ? v[i].hist[k].count : v[i].count[k];

		if (!value) /* a family carries the sites that have its events */
			continue;
		put_site_series(f, d->prom, "", &v[i]);
		fprintf(f, "} %llu\n", (unsigned long long)value);
	}
}

/*
 * Count k of each site split by kind: "self" and "remote", each its own count
 * in the kernel (never one less the other: a read racing a work's add would
 * make that negative, or go back down at the next export).
 */
static void put_site_by_kind(FILE *f, const struct prom_site *v, int n, const struct metric_desc *d,
			     int k)
{
	int i;

	put_metric_family(f, d);
	for (i = 0; i < n; i++) {
		if (!v[i].count[k])
			continue;
		put_site_series(f, d->prom, "", &v[i]);
		fprintf(f, ",kind=\"self\"} %llu\n",
			(unsigned long long)v[i].count[SITE_SELF_WORKS]);
		put_site_series(f, d->prom, "", &v[i]);
		fprintf(f, ",kind=\"remote\"} %llu\n",
			(unsigned long long)v[i].count[SITE_REMOTE_WORKS]);
	}
}

static void put_bucket(FILE *f, const char *name, const struct prom_site *site, const char *le,
		       __u64 n)
{
	put_site_series(f, name, "_bucket", site);
	fprintf(f, ",le=\"%s\"} %llu\n", le, (unsigned long long)n);
}

/* h: held up to what the exports before showed (prom_sites_make()) */
static void put_hist(FILE *f, const char *name, const struct prom_site *site,
		     const struct prom_series *h)
{
	const struct prom_series s = *h;
	__u32 shift;
	char le[32];
	int i = 0;

	for (shift = LE_FIRST_SHIFT; shift <= LE_LAST_SHIFT; shift += LE_STEP) {
		snprintf(le, sizeof(le), "%llu.%09llu", (1ULL << shift) / NS_PER_SEC,
			 (1ULL << shift) % NS_PER_SEC);
		put_bucket(f, name, site, le, s.le[i++]);
	}
	put_bucket(f, name, site, "+Inf", s.le[i]);
	put_site_series(f, name, "_sum", site);
	fputs("} ", f);
	put_seconds(f, s.sum_ns);
	fputc('\n', f);
	put_site_series(f, name, "_count", site);
	fprintf(f, "} %llu\n", (unsigned long long)s.le[i]);
}

static void put_site_hist(FILE *f, const struct prom_site *v, int n, const struct metric_desc *d,
			  int k)
{
	int i;

	put_metric_family(f, d);
	/* the sites with a sample, now or in an export before (held up: +Inf, the count) */
	for (i = 0; i < n; i++)
		if (v[i].hist[k].le[NR_LE - 1])
			put_hist(f, d->prom, &v[i], &v[i].hist[k]);
}

/* Every site metric the mode measures and the export shows (src/metric.c), in its order. */
static void put_sites(FILE *f, const struct model_info *info, const struct prom_site *v, int n)
{
	int k;

	for (k = 0; k < SITE_COUNTS; k++) {
		const struct metric_desc *d = &metric__site_count[k];

		if (!d->prom || !metric__seen(d, info))
			continue;
		if (d->shape == PROM_COUNTER_BY_KIND)
			put_site_by_kind(f, v, n, d, k);
		else
			put_site_counter(f, v, n, d, k, false);
	}
	for (k = 0; k < SITE_HISTS; k++) {
		const struct metric_desc *d = &metric__site_hist[k];

		if (!d->prom || !metric__seen(d, info))
			continue;
		if (d->shape == PROM_HIST_COUNT)
			put_site_counter(f, v, n, d, k, true);
		else
			put_site_hist(f, v, n, d, k);
	}
}

static void put_fadvise(FILE *f, const struct model *m)
{
	__u64 escalations = 0;
	int i;

	put_family(f, FAM_FADVISE_CALLS);
	for (i = 0; i < FADVISE_ADVICE_SLOTS; i++) {
		fprintf(f, "drainstat_%s{", family(FAM_FADVISE_CALLS));
		put_label(f, "advice", m->fadvise[i].advice);
		fprintf(f, "} %llu\n", (unsigned long long)m->fadvise[i].calls);
		escalations += m->fadvise[i].escalations;
	}
	put_family(f, FAM_FADVISE_ESCALATIONS);
	fprintf(f, "drainstat_%s %llu\n", family(FAM_FADVISE_ESCALATIONS),
		(unsigned long long)escalations);
}

/* A target CPU's count, or a histogram's count or sum (in seconds), as d's shape says. */
static void put_cpu_value(FILE *f, const struct model_cpu *c, const struct metric_desc *d, int k,
			  bool hist)
{
	fprintf(f, "drainstat_%s{cpu=\"%d\"} ", d->prom, c->cpu);
	if (!hist)
		fprintf(f, "%llu\n", (unsigned long long)c->count[k]);
	else if (d->shape == PROM_HIST_COUNT)
		fprintf(f, "%llu\n", (unsigned long long)c->hist[k].count);
	else {
		put_seconds(f, c->hist[k].sum);
		fputc('\n', f);
	}
}

/* The target CPUs' metrics that the export shows (src/metric.c), each a counter. */
static void put_victims(FILE *f, const struct model *m)
{
	int i, k;

	for (k = 0; k < CPU_COUNTS + CPU_HISTS; k++) {
		const bool hist = k >= CPU_COUNTS;
		const int j = hist ? k - CPU_COUNTS : k;
		const struct metric_desc *d = hist ? &metric__cpu_hist[j] : &metric__cpu_count[j];

		if (!d->prom || !metric__seen(d, &m->info))
			continue;
		put_metric_family(f, d);
		for (i = 0; i < m->nr_cpus; i++)
			put_cpu_value(f, &m->cpus[i], d, j, hist);
	}
}

static void put_counters(FILE *f, const struct model *m, bool loss, enum prom_family k)
{
	int i;

	put_family(f, k);
	for (i = 0; i < CNT_NR; i++) {
		if (model__counter_is_loss(i) != loss || !model__counter_name(i))
			continue;
		fprintf(f, "drainstat_%s{reason=\"%s\"} %llu\n", family(k), model__counter_name(i),
			(unsigned long long)m->counters[i]);
	}
}

/* How many works m's drains have in flight: room for their series. */
static size_t works_in_flight(const struct model *m)
{
	size_t n = 0;
	int i;

	for (i = 0; i < m->nr_in_flight; i++)
		n += (size_t)m->in_flight[i].nr_in_flight;
	return n;
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
	struct prom_pending *p = calloc(works_in_flight(m) + 1, sizeof(*p));
	int k, n;

	if (!p)
		return;
	n = pending_by_cpu(m, p);
	put_family(f, FAM_PENDING_WORKS);
	for (k = 0; k < n; k++)
		fprintf(f, "drainstat_%s{cpu=\"%d\"} %llu\n", family(FAM_PENDING_WORKS), p[k].cpu,
			(unsigned long long)p[k].works);
	put_family(f, FAM_OLDEST_PENDING_WORK);
	for (k = 0; k < n; k++) {
		fprintf(f, "drainstat_%s{cpu=\"%d\"} ", family(FAM_OLDEST_PENDING_WORK), p[k].cpu);
		put_seconds(f, p[k].oldest_ns);
		fputc('\n', f);
	}
	free(p);
}

/* A CPU's pending works of stuck drains held by one cause: a drainstat_stuck_pending_works. */
struct prom_stuck {
	int cpu;
	enum stall_cause cause;
	__u64 works;
};

static int cmp_stuck(const void *a, const void *b)
{
	const struct prom_stuck *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu - y->cpu;
	return (int)x->cause - (int)y->cause;
}

/* The pending works of m's stuck drains by CPU and cause into p (room for every work): how many. */
static int stuck_by_cpu(const struct model *m, struct prom_stuck *p)
{
	int i, k, c, n = 0;

	for (i = 0; i < m->nr_in_flight; i++) {
		const struct model_drain *md = &m->in_flight[i];

		for (k = 0; md->stuck && k < md->nr_in_flight; k++) {
			const struct model_work *w = &md->in_flight[k];

			if (w->started)
				continue;
			for (c = 0;
			     c < n && (p[c].cpu != w->target_cpu || p[c].cause != w->stall.cause);
			     c++)
				;
			if (c == n)
				p[n++] = (struct prom_stuck){.cpu = w->target_cpu,
							     .cause = w->stall.cause};
			p[c].works++;
		}
	}
	qsort(p, (size_t)n, sizeof(*p), cmp_stuck);
	return n;
}

static void put_stuck_works(FILE *f, const struct model *m)
{
	struct prom_stuck *p = calloc(works_in_flight(m) + 1, sizeof(*p));
	int i, n;

	if (!p)
		return;
	n = stuck_by_cpu(m, p);
	put_family(f, FAM_STUCK_PENDING_WORKS);
	for (i = 0; i < n; i++)
		fprintf(f, "drainstat_%s{cpu=\"%d\",reason=\"%s\"} %llu\n",
			family(FAM_STUCK_PENDING_WORKS), p[i].cpu, stall__key(p[i].cause),
			(unsigned long long)p[i].works);
	free(p);
}

/*
 * The stuck drains by the cause of their stall (every cause, 0 too), and
 * their pending works by CPU and cause; only while a drain is stuck.
 */
static void put_stuck(FILE *f, const struct model *m)
{
	int i, c, n[STALL_CAUSES] = {0};

	if (!m->nr_stuck)
		return;
	put_family(f, FAM_STUCK_DRAINS);
	for (i = 0; i < m->nr_in_flight; i++)
		n[model__drain_cause(&m->in_flight[i])] += m->in_flight[i].stuck;
	for (c = 0; c < STALL_CAUSES; c++)
		fprintf(f, "drainstat_%s{reason=\"%s\"} %d\n", family(FAM_STUCK_DRAINS),
			stall__key(c), n[c]);
	put_stuck_works(f, m);
}

/*
 * The drains in flight when the file was written; mutex waiters where the
 * entry is seen, and not with Queue PerCPU Work (a drain with no work queued
 * may be running them itself).
 */
static void put_in_flight(FILE *f, const struct model *m)
{
	put_family(f, FAM_DRAINS_IN_FLIGHT);
	fprintf(f, "drainstat_%s %d\n", family(FAM_DRAINS_IN_FLIGHT), m->nr_in_flight);
	put_family(f, FAM_OLDEST_DRAIN_IN_FLIGHT);
	fprintf(f, "drainstat_%s ", family(FAM_OLDEST_DRAIN_IN_FLIGHT));
	put_seconds(f, m->oldest_in_flight_ns);
	fputc('\n', f);
	if (m->info.entry_visible && !m->info.works_unseen) {
		put_family(f, FAM_MUTEX_WAITERS);
		fprintf(f, "drainstat_%s %d\n", family(FAM_MUTEX_WAITERS), m->mutex_waiters);
	}
	put_pending(f, m);
	put_stuck(f, m);
}

static void put_info(FILE *f, const struct model_info *info, const char *version)
{
	put_family(f, FAM_INFO);
	fprintf(f, "drainstat_%s{", family(FAM_INFO));
	put_label(f, "version", version);
	fputc(',', f);
	put_label(f, "mode", info->mode);
	fputc(',', f);
	put_label(f, "kernel", info->kernel);
	fputc(',', f);
	put_label(f, "qpw", info->qpw ? "true" : "false");
	fputs("} 1\n", f);
}

void report_prom__print(FILE *f, const struct model *m, const struct prom_opts *o)
{
	struct prom_site all, *owned;
	const struct prom_site *v;
	int n;

	put_info(f, &m->info, o->version);
	v = prom_sites_make(m, o, &all, &owned, &n);
	put_sites(f, &m->info, v, n);
	free(owned);
	if (m->info.has_fadvise)
		put_fadvise(f, m);
	put_victims(f, m);
	put_in_flight(f, m);
	put_counters(f, m, true, FAM_LOST_EVENTS);
	put_counters(f, m, false, FAM_INEXACT_EVENTS);
}
