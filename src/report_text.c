// SPDX-License-Identifier: GPL-2.0
/*
 * The text report: its header line, the site table (with -s the stacks, with
 * -H the histograms), the local drains, fadvise, the victim CPUs and the
 * counters. The drains one by one (in flight, the -T log's) are in
 * report_text_drain.c.
 */
#include <stdlib.h>
#include <string.h>

#include "cgroups.h"
#include "container.h"
#include "hist.h"
#include "metric.h"
#include "escape.h"
#include "report_text.h"
#include "report_text_int.h"
#include "units.h"

#define NUM_W	     6 /* a duration column: " 9.1us" */
#define SITE_MAX_W   40
#define CGROUP_MAX_W 32 /* the path's last components that fit, "…/" before; -s adds it whole */

/* ", comm foo, cgroup /sys/fs/cgroup/x, CPUs 2-3 only": -c, --cgroup and -C. */
static void put_filters(FILE *f, const struct model_info *info)
{
	char shown[ESCAPE_SIZE(512)];

	if (!info->filter_comm && !info->filter_cgroup && !info->filter_cpus)
		return;
	if (info->filter_comm)
		fprintf(f, ", comm %s", escape__text(info->filter_comm, 512, shown, sizeof(shown)));
	if (info->filter_cgroup)
		fprintf(f, ", cgroup %s",
			escape__text(info->filter_cgroup, 512, shown, sizeof(shown)));
	if (info->filter_cpus)
		fprintf(f, ", CPUs %s", info->filter_cpus);
	fputs(" only", f);
}

void report_text__header(FILE *f, const struct model_info *info, const char *version)
{
	fprintf(f, "drainstat %s: mode %s, kernel %s", version, info->mode, info->kernel);
	if (info->qpw)
		fputs(" with Queue PerCPU Work", f);
	if (info->filter_pid)
		fprintf(f, ", pid %u only", info->filter_pid);
	put_filters(f, info);
	fprintf(f, "\n");
	if (info->blind_spots)
		fprintf(f, "%s mode cannot see %s\n", info->mode, info->blind_spots);
}

static void put_ns(FILE *f, __u64 ns)
{
	char buf[UNITS_DURATION_LEN];

	fprintf(f, " %*s", NUM_W - 1, units__duration(ns, buf, sizeof(buf)));
}

/*
 * Percentile p of h; ">=73m" where it is only a lower bound (beyond the
 * histogram's last finite bucket): five columns, ASCII as the rest.
 */
static void put_percentile(FILE *f, const struct sparse_hist *h, double p)
{
	char buf[UNITS_DURATION_LEN], shown[UNITS_DURATION_LEN + 2];
	bool lower_bound;
	__u64 ns = hist__percentile(h, p, &lower_bound);

	snprintf(shown, sizeof(shown), "%s%s", lower_bound ? ">=" : "",
		 units__duration(ns, buf, sizeof(buf)));
	fprintf(f, " %*s", NUM_W - 1, shown);
}

/* "p50 p99 max" of a histogram; "-" for each when it is empty. */
static void put_dist(FILE *f, const struct sparse_hist *h, bool with_max)
{
	if (!h->count) {
		fprintf(f, " %*s %*s", NUM_W - 1, "-", NUM_W - 1, "-");
		if (with_max)
			fprintf(f, " %*s", NUM_W - 1, "-");
		return;
	}
	put_percentile(f, h, 0.50);
	put_percentile(f, h, 0.99);
	if (with_max)
		put_ns(f, h->max);
}

/* The key columns' widths: comm 0 where --by leaves it out, cgroup 0 where it does. */
struct site_widths {
	int site, comm, cgroup;
};

/*
 * s's cgroup as its column shows it, escaped, in memory of its own (free it):
 * its pod by name where known ("pod/default/web-0"), else a container's
 * runtime and short id where the path names one ("containerd:0123456789ab":
 * the path's tail is mostly its id), else the path; cut to CGROUP_MAX_W columns; *columns its
 * width. NULL: ENOMEM.
 */
static char *cgroup_shown(const struct model_site *s, int *columns)
{
	char compact[REPORT_TEXT_CONTAINER_LEN];
	const char *key =
	    s->cgroup ? report_text_container(s->cgroup, &s->pod, compact, sizeof(compact)) : NULL;
	char *text = escape__dup(key ? key : s->cgroup ? s->cgroup : "-");
	char cut[4 * CGROUP_MAX_W];

	if (!text) {
		*columns = 1;
		return NULL;
	}
	cgroups__shorten(text, CGROUP_MAX_W, cut, sizeof(cut), columns);
	free(text);
	return strdup(cut);
}

static struct site_widths site_widths(const struct model *m)
{
	struct site_widths w = {4, m->info.comm_merged ? 0 : 4, m->info.by_cgroup ? 6 : 0};
	char buf[ESCAPE_SIZE(MODEL_NAME_LEN)], *text;
	int i, n;

	for (i = 0; i < m->nr_sites; i++) {
		n = (int)strlen(escape__text(m->sites[i].site, MODEL_NAME_LEN, buf, sizeof(buf)));
		w.site = n > w.site ? n : w.site;
		n = (int)strlen(
		    escape__text(m->sites[i].comm, DRAINSTAT_COMM_LEN, buf, sizeof(buf)));
		w.comm = w.comm && n > w.comm ? n : w.comm;
		if (!w.cgroup)
			continue;
		text = cgroup_shown(&m->sites[i], &n);
		w.cgroup = n > w.cgroup ? n : w.cgroup;
		free(text);
	}
	w.site = w.site > SITE_MAX_W ? SITE_MAX_W : w.site;
	return w;
}

/* The key columns' titles: SITE (or LOCAL), COMM and CGROUP where shown. */
static void put_key_titles(FILE *f, const struct site_widths *w, const char *site)
{
	fprintf(f, "%-*s", w->site, site);
	if (w->comm)
		fprintf(f, " %-*s", w->comm, "COMM");
	if (w->cgroup)
		fprintf(f, " %-*s", w->cgroup, "CGROUP");
}

/* A row's key columns: its site, comm and cgroup where shown, escaped. */
static void put_keys(FILE *f, const struct model_site *s, const struct site_widths *w)
{
	char comm[4 * DRAINSTAT_COMM_LEN + 1], site[ESCAPE_SIZE(MODEL_NAME_LEN)], *cgroup;
	int columns;

	fprintf(f, "%-*.*s", w->site, SITE_MAX_W,
		escape__text(s->site, MODEL_NAME_LEN, site, sizeof(site)));
	if (w->comm)
		fprintf(f, " %-*s", w->comm,
			escape__text(s->comm, DRAINSTAT_COMM_LEN, comm, sizeof(comm)));
	if (!w->cgroup)
		return;
	/* padded by columns, not bytes: "…" is three bytes in one column */
	cgroup = cgroup_shown(s, &columns);
	fprintf(f, " %s%*s", cgroup ? cgroup : "?", w->cgroup - columns, "");
	free(cgroup);
}

/*
 * The site table's columns after the key's (SITE, COMM, CGROUP), in order: metric.c's counts
 * and histograms, each shown where the mode measures it (metric__seen()).
 * Entry-visible modes add lock time, empty and forced drains, and with the
 * local drains hooked the drains that drained only their own CPU and the
 * time of that own drain; IPIs where counted. With Queue PerCPU Work what
 * depends on a drain's works is left out (SEEN_WORKS).
 */
static const struct site_column {
	bool hist;
	int metric; /* its index in SITE_COUNTS, or in SITE_HISTS */
} site_columns[] = {
    {false, SITE_DRAINS},	   {false, SITE_WORKS},	       {false, SITE_SELF_WORKS},
    {true, SITE_DISPATCH_NS},	   {true, SITE_RUN_NS},	       {true, SITE_WAIT_NS},
    {true, SITE_LOCK_NS},	   {false, SITE_EMPTY_DRAINS}, {false, SITE_FORCED_DRAINS},
    {false, SITE_OWN_ONLY_DRAINS}, {true, SITE_OWN_NS},	       {false, SITE_IPIS},
    {false, SITE_IN_PLACE},	   {true, SITE_IN_PLACE_NS},
};

#define NR_SITE_COLUMNS (int)(sizeof(site_columns) / sizeof(site_columns[0]))

static const struct metric_desc *column_desc(const struct site_column *c)
{
	return c->hist ? &metric__site_hist[c->metric] : &metric__site_count[c->metric];
}

/* The metric of column i, if this mode shows it. */
static const struct metric_desc *shown(int i, const struct model_info *info)
{
	const struct metric_desc *d = column_desc(&site_columns[i]);

	return metric__seen(d, info) ? d : NULL;
}

/* A histogram's title over its columns; the counts before it, blank. */
static void print_titles(FILE *f, const struct site_widths *w, const struct model_info *info)
{
	int i, pad = w->site + (w->comm ? 1 + w->comm : 0) + (w->cgroup ? 1 + w->cgroup : 0);
	const struct metric_desc *d;

	for (i = 0; i < NR_SITE_COLUMNS; i++) {
		if (!(d = shown(i, info)))
			continue;
		if (!site_columns[i].hist) {
			pad += 1 + d->text_width;
			continue;
		}
		fprintf(f, "%*s %s", pad, "",
			info->wait_is_lower_bound && d->text_bound ? d->text_bound : d->text);
		pad = 0;
	}
	fputc('\n', f);
}

static void print_site_header(FILE *f, const struct site_widths *w, const struct model_info *info)
{
	const struct metric_desc *d;
	int i;

	print_titles(f, w, info);
	put_key_titles(f, w, "SITE");
	for (i = 0; i < NR_SITE_COLUMNS; i++) {
		if (!(d = shown(i, info)))
			continue;
		if (!site_columns[i].hist)
			fprintf(f, " %*s", d->text_width, d->text);
		else
			fprintf(f, " %5s %5s%s", "p50", "p99", d->text_max ? "   max" : "");
	}
	fputc('\n', f);
}

static void print_site_row(FILE *f, const struct model_site *s, const struct site_widths *w,
			   const struct model_info *info)
{
	const struct metric_desc *d;
	int i;

	put_keys(f, s, w);
	for (i = 0; i < NR_SITE_COLUMNS; i++) {
		if (!(d = shown(i, info)))
			continue;
		if (site_columns[i].hist)
			put_dist(f, &s->hist[site_columns[i].metric], d->text_max);
		else
			fprintf(f, " %*llu", d->text_width,
				(unsigned long long)s->count[site_columns[i].metric]);
	}
	fputc('\n', f);
}

/* -s: the row's whole cgroup path, which its column may show cut. */
static void print_cgroup(FILE *f, const struct model_site *s)
{
	char *text = escape__dup(s->cgroup ? s->cgroup : "-");

	fprintf(f, "    cgroup %s\n", text ? text : "(out of memory)");
	free(text);
}

static void print_stacks(FILE *f, const struct model_site *s)
{
	char frame[ESCAPE_SIZE(MODEL_NAME_LEN)];
	int i, j;

	for (i = 0; i < s->nr_stacks; i++) {
		fprintf(f, "    stack %d of %d (%llu drain%s)\n", i + 1, s->nr_stacks,
			(unsigned long long)s->stacks[i].drains,
			s->stacks[i].drains == 1 ? "" : "s");
		if (!s->stacks[i].nr_frames)
			fprintf(f, "      [stack lost]\n");
		for (j = 0; j < s->stacks[i].nr_frames; j++)
			fprintf(f, "      %s\n",
				escape__text(s->stacks[i].frames[j], MODEL_NAME_LEN, frame,
					     sizeof(frame)));
	}
}

/*
 * Every bucket from the first in use to the last, the empty ones between too;
 * the last bucket, open-ended, up to "+Inf".
 */
static void print_hist(FILE *f, const char *name, const struct sparse_hist *h)
{
	char lo[UNITS_DURATION_LEN], hi[UNITS_DURATION_LEN];
	__u64 peak = 0, n;
	__u32 b, i;

	for (i = 0; i < h->nr; i++)
		peak = h->buckets[i].n > peak ? h->buckets[i].n : peak;
	fprintf(f, "    %s: %llu samples\n", name, (unsigned long long)h->count);
	for (i = 0, b = h->nr ? h->buckets[0].b : 0; i < h->nr; b++) {
		n = h->buckets[i].b == b ? h->buckets[i++].n : 0;
		fprintf(f, "      %6s .. %-6s %8llu |%-40.*s|\n",
			units__duration(hist__bucket_low(b), lo, sizeof(lo)),
			b == HIST_BUCKETS - 1
			    ? "+Inf"
			    : units__duration(hist__bucket_high(b), hi, sizeof(hi)),
			(unsigned long long)n, (int)(n * 40 / peak),
			"****************************************");
	}
}

/*
 * Whether the row moved in the span, local drains aside (their own table). A
 * drain counts where it began and its wait where it ended: a drain that began
 * in an earlier span and ended in this one, its works done in another, moves
 * its row by its wait alone (full and kprobe modes); one held on the drain
 * mutex across a report, by its lock time alone.
 */
static bool row_moved(const struct model_site *s)
{
	int i;

	for (i = 0; i < SITE_COUNTS; i++)
		if (s->count[i])
			return true;
	for (i = 0; i < SITE_HISTS; i++)
		if (i != SITE_LOCAL_NS && s->hist[i].count)
			return true;
	return false;
}

static void print_site_hists(FILE *f, const struct model_site *s, const struct model_info *info)
{
	if (!info->works_unseen) {
		print_hist(f, "dispatch", &s->hist[SITE_DISPATCH_NS]);
		print_hist(f, "run", &s->hist[SITE_RUN_NS]);
	}
	print_hist(f, info->wait_is_lower_bound ? "wait~" : "wait", &s->hist[SITE_WAIT_NS]);
	if (info->entry_visible && !info->works_unseen)
		print_hist(f, "lock", &s->hist[SITE_LOCK_NS]);
	if (info->in_place_seen)
		print_hist(f, "in place", &s->hist[SITE_IN_PLACE_NS]);
}

/*
 * Under a slow site's row (wait p99 of STALL_SLOW_SITE_NS or more): "slow:
 * wait p99 25ms; lock 80%, dispatch 15%, run 5%: the wait for the drain mutex
 * dominates ...", each part's share of its total wait.
 */
static double share(__u64 part, __u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_slow_site(FILE *f, const struct model *m, const struct model_site *s)
{
	char d[UNITS_DURATION_LEN], text[STALL_SLOW_TEXT_LEN];
	struct slow_site slow;
	int p;

	model__slow_site(m, s, &slow);
	if (!slow.slow)
		return;
	fprintf(f, "    slow: wait p99 %s%s;", slow.wait_p99_is_lower_bound ? ">=" : "",
		units__duration(slow.wait_p99_ns, d, sizeof(d)));
	for (p = 0; p < WAIT_PARTS; p++) {
		fprintf(f, "%s %s ", p ? "," : "", stall__part_key(p));
		if (!slow.measured[p])
			fputc('-', f);
		else
			fprintf(f, "%.0f%%", share(slow.part_ns[p], slow.wait_ns));
	}
	fprintf(f, ": %s\n", stall__slow_text(&slow, text, sizeof(text)));
}

static void print_sites(FILE *f, const struct model *m, const struct text_opts *opts)
{
	struct site_widths w = site_widths(m);
	bool any = false;
	int i;

	for (i = 0; i < m->nr_sites; i++) {
		if (!row_moved(&m->sites[i]))
			continue;
		if (!any)
			print_site_header(f, &w, &m->info);
		any = true;
		print_site_row(f, &m->sites[i], &w, &m->info);
		print_slow_site(f, m, &m->sites[i]);
		if (opts->stacks && m->info.by_cgroup)
			print_cgroup(f, &m->sites[i]);
		if (opts->stacks)
			print_stacks(f, &m->sites[i]);
		if (opts->histograms)
			print_site_hists(f, &m->sites[i], &m->info);
	}
	if (!any)
		fprintf(f, "no drains\n");
}

#define LOCAL_ROWS 10

static int cmp_local_total(const void *a, const void *b)
{
	const struct model_site *x = *(const struct model_site *const *)a;
	const struct model_site *y = *(const struct model_site *const *)b;

	if (x->hist[SITE_LOCAL_NS].sum != y->hist[SITE_LOCAL_NS].sum)
		return x->hist[SITE_LOCAL_NS].sum > y->hist[SITE_LOCAL_NS].sum ? -1 : 1;
	return strcmp(x->site, y->site);
}

static void print_local_row(FILE *f, const struct model_site *s, const struct site_widths *w)
{
	put_keys(f, s, w);
	fprintf(f, " %6llu", (unsigned long long)s->hist[SITE_LOCAL_NS].count);
	put_dist(f, &s->hist[SITE_LOCAL_NS], true);
	put_ns(f, s->hist[SITE_LOCAL_NS].sum);
	fputc('\n', f);
}

/* lru_add_drain() calls per site, the largest total first: the cheap local drain. */
static void print_local(FILE *f, const struct model *m)
{
	struct site_widths w = site_widths(m);
	const struct model_site **rows;
	int i, n = 0;

	if (!m->info.has_local || !m->local_drains)
		return;
	rows = calloc((size_t)m->nr_sites, sizeof(*rows));
	if (!rows)
		return;
	for (i = 0; i < m->nr_sites; i++)
		if (m->sites[i].hist[SITE_LOCAL_NS].count)
			rows[n++] = &m->sites[i];
	qsort(rows, (size_t)n, sizeof(*rows), cmp_local_total);
	fputc('\n', f);
	put_key_titles(f, &w, "LOCAL");
	fprintf(f, " %6s %5s %5s %5s %5s\n", "CALLS", "p50", "p99", "max", "TOTAL");
	for (i = 0; i < n && i < LOCAL_ROWS; i++)
		print_local_row(f, rows[i], &w);
	if (n > LOCAL_ROWS)
		fprintf(f, "(%d more)\n", n - LOCAL_ROWS);
	free(rows);
}

static void print_fadvise(FILE *f, const struct model *m)
{
	bool any = false;
	int i;

	/* the cause setup found, as the header's blind spots say it */
	if (!m->info.has_fadvise) {
		fprintf(f, "\nfadvise: not traced");
		if (m->info.fadvise_unseen)
			fprintf(f, " (%s)", m->info.fadvise_unseen);
		fputc('\n', f);
		return;
	}
	for (i = 0; i < FADVISE_ADVICE_SLOTS; i++) {
		const struct model_fadvise *a = &m->fadvise[i];

		if (!a->calls)
			continue;
		if (!any)
			fprintf(f, "\n%-10s %7s %9s %5s %5s %5s\n", "FADVISE", "CALLS", "ESCALATED",
				"p50", "p99", "max");
		any = true;
		fprintf(f, "%-10s %7llu %9llu", a->advice, (unsigned long long)a->calls,
			(unsigned long long)a->escalations);
		put_dist(f, &a->latency_ns, true);
		fputc('\n', f);
	}
	if (!any)
		fprintf(f, "\nfadvise: no calls\n");
}

/*
 * Above CPU_TABLE_ALL CPUs with works, the table shows the costliest: the
 * CPU_TABLE_TOP largest by TOTAL and the CPU_TABLE_TOP largest by max
 * dispatch (the busy victims and the slow-to-wake ones), then the rest
 * summed up in one row. At 255 CPUs every row would be a screen and a half.
 */
#define CPU_TABLE_ALL 16
#define CPU_TABLE_TOP 5

static void put_cpu_columns(FILE *f, const __u64 *count, const struct sparse_hist *hist,
			    bool has_ipi)
{
	fprintf(f, " %6llu %4llu", (unsigned long long)count[CPU_WORKS],
		(unsigned long long)count[CPU_SELF_WORKS]);
	put_dist(f, &hist[CPU_DISPATCH_NS], true);
	put_dist(f, &hist[CPU_RUN_NS], true);
	put_ns(f, hist[CPU_RUN_NS].sum);
	if (has_ipi)
		fprintf(f, " %5llu", (unsigned long long)count[CPU_IPIS]);
}

/* The CPU_TABLE_TOP rows of m not yet in shown, the largest by key first. */
static void mark_top(const struct model *m, bool *shown, __u64 (*key)(const struct model_cpu *c))
{
	int n, i, best;

	for (n = 0; n < CPU_TABLE_TOP; n++) {
		best = -1;
		for (i = 0; i < m->nr_cpus; i++)
			if (!shown[i] && (best < 0 || key(&m->cpus[i]) > key(&m->cpus[best])))
				best = i;
		if (best < 0)
			return;
		shown[best] = true;
	}
}

static __u64 total_run_ns(const struct model_cpu *c)
{
	return c->hist[CPU_RUN_NS].sum;
}

static __u64 max_dispatch_ns(const struct model_cpu *c)
{
	return c->hist[CPU_DISPATCH_NS].max;
}

/* "rest": the CPUs not shown, their counts added and histograms merged. */
static void print_cpu_rest(FILE *f, const struct model *m, const bool *shown)
{
	__u64 count[CPU_COUNTS] = {};
	struct sparse_hist hist[CPU_HISTS] = {};
	struct arena arena = {};
	int i, k, nr = 0;
	bool merged = true;

	for (i = 0; i < m->nr_cpus; i++) {
		if (shown[i])
			continue;
		nr++;
		for (k = 0; k < CPU_COUNTS; k++)
			count[k] += m->cpus[i].count[k];
		for (k = 0; k < CPU_HISTS; k++)
			merged = merged && !hist__merge(&hist[k], &m->cpus[i].hist[k], &arena);
	}
	fprintf(f, "%-4s", "rest");
	if (merged)
		put_cpu_columns(f, count, hist, m->info.has_ipi);
	else
		fprintf(f, " (out of memory)");
	fprintf(f, "  %d CPUs\n", nr);
	arena__free(&arena);
}

static void print_cpus(FILE *f, const struct model *m, bool all)
{
	bool *shown = NULL;
	int i;

	/* with Queue PerCPU Work a CPU's drain may run elsewhere: no victim is known */
	if (!m->nr_cpus || m->info.works_unseen)
		return;
	if (!all && m->nr_cpus > CPU_TABLE_ALL)
		shown = calloc((size_t)m->nr_cpus, sizeof(*shown));
	if (shown) {
		mark_top(m, shown, total_run_ns);
		mark_top(m, shown, max_dispatch_ns);
	}
	fprintf(f, "\n");
	if (shown)
		fprintf(f,
			"%d CPUs with works: the %d largest by TOTAL and by max dispatch, the "
			"rest summed (--all-cpus: every CPU)\n",
			m->nr_cpus, CPU_TABLE_TOP);
	fprintf(f, "%16s %s %s\n", "", "---- DISPATCH ---", "--------- RUN ---------");
	fprintf(f, "%-4s %6s %4s %5s %5s %5s %5s %5s %5s %5s%s\n", "CPU", "WORKS", "SELF", "p50",
		"p99", "max", "p50", "p99", "max", "TOTAL", m->info.has_ipi ? "  IPIS" : "");
	for (i = 0; i < m->nr_cpus; i++) {
		if (shown && !shown[i])
			continue;
		fprintf(f, "%-4d", m->cpus[i].cpu);
		put_cpu_columns(f, m->cpus[i].count, m->cpus[i].hist, m->info.has_ipi);
		fputc('\n', f);
	}
	if (shown)
		print_cpu_rest(f, m, shown);
	free(shown);
}

static void print_counters(FILE *f, const struct model *m)
{
	int i;

	for (i = 0; i < CNT_NR && !m->counters[i]; i++)
		;
	if (i == CNT_NR)
		return;
	fprintf(f, "\n");
	for (i = 0; i < CNT_NR; i++)
		if (m->counters[i])
			fprintf(f, "%s %s: %llu\n", model__counter_is_loss(i) ? "lost" : "note",
				model__counter_name(i), (unsigned long long)m->counters[i]);
}

void report_text__print(FILE *f, const struct model *m, const struct text_opts *opts)
{
	char span[UNITS_DURATION_LEN];

	if (opts->timestamp)
		fprintf(f, "%s  ", opts->timestamp);
	fprintf(f, "%s: %llu drains, ", units__duration(m->span_ns, span, sizeof(span)),
		(unsigned long long)m->total[SITE_DRAINS]);
	if (m->info.works_unseen)
		fprintf(f, "works not shown (Queue PerCPU Work)");
	else
		fprintf(f, "%llu works (%llu self)", (unsigned long long)m->total[SITE_WORKS],
			(unsigned long long)m->total[SITE_SELF_WORKS]);
	if (m->info.in_place_seen)
		fprintf(f, ", %llu CPUs drained in place",
			(unsigned long long)m->total[SITE_IN_PLACE]);
	fprintf(f, ", %llu lost\n", (unsigned long long)m->lost);
	if (m->nr_stuck)
		report_text_in_flight(f, m, opts->stacks);
	print_sites(f, m, opts);
	print_local(f, m);
	print_fadvise(f, m);
	print_cpus(f, m, opts->all_cpus);
	if (!m->nr_stuck)
		report_text_in_flight(f, m, opts->stacks);
	print_counters(f, m);
}
