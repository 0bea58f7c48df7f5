// SPDX-License-Identifier: GPL-2.0
/*
 * The text report: its header line, the site table (with -s the stacks, with
 * -H the histograms), the local drains, fadvise, the victim CPUs and the
 * counters. The tables' columns are in report_text_columns.c, the drains one
 * by one (in flight, the -T log's) in report_text_drain.c.
 */
#include <stdlib.h>
#include <string.h>

#include "cgroups.h"
#include "container.h"
#include "escape.h"
#include "hist.h"
#include "report_text.h"
#include "report_text_int.h"
#include "units.h"

#define SITE_MAX_W   40
#define CGROUP_MAX_W 32 /* the path's last components that fit, "…/" before; -s adds it whole */
#define CPU_W	     4	/* the CPU table's key: "CPU", a CPU's number, "rest" */
#define ADVICE_W     10 /* the FADVISE table's key: an advice */

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

static void print_site_header(FILE *f, const struct site_widths *w, const struct model_info *info)
{
	const int key_w = w->site + (w->comm ? 1 + w->comm : 0) + (w->cgroup ? 1 + w->cgroup : 0);

	report_text_over_titles(f, TEXT_SITES, key_w, info);
	put_key_titles(f, w, "SITE");
	report_text_metric_titles(f, TEXT_SITES, info);
	fputc('\n', f);
}

static void print_site_row(FILE *f, const struct model_site *s, const struct site_widths *w,
			   const struct model_info *info)
{
	put_keys(f, s, w);
	report_text_metric_columns(f, TEXT_SITES, s->count, s->hist, info);
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

/* The LOCAL table's count between its key and its histogram: lru_add_drain() calls. */
enum local_column { LOCAL_COL_CALLS, LOCAL_COLUMNS };

static const struct text_column local_columns[LOCAL_COLUMNS] = {
    [LOCAL_COL_CALLS] = {"CALLS", 6},
};

static void print_local_row(FILE *f, const struct model_site *s, const struct site_widths *w)
{
	put_keys(f, s, w);
	fprintf(f, " %*llu", local_columns[LOCAL_COL_CALLS].width,
		(unsigned long long)s->hist[SITE_LOCAL_NS].count);
	report_text_hist_columns(f, &s->hist[SITE_LOCAL_NS], true, true);
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
	report_text_titles(f, local_columns, LOCAL_COLUMNS);
	report_text_hist_titles(f, true, true);
	fputc('\n', f);
	for (i = 0; i < n && i < LOCAL_ROWS; i++)
		print_local_row(f, rows[i], &w);
	if (n > LOCAL_ROWS)
		fprintf(f, "(%d more)\n", n - LOCAL_ROWS);
	free(rows);
}

/* The FADVISE table's counts between an advice and its latency's histogram. */
enum fadvise_column { FADVISE_COL_CALLS, FADVISE_COL_ESCALATED, FADVISE_COLUMNS };

static const struct text_column fadvise_columns[FADVISE_COLUMNS] = {
    [FADVISE_COL_CALLS] = {"CALLS", 7},
    [FADVISE_COL_ESCALATED] = {"ESCALATED", 9},
};

static void print_fadvise_header(FILE *f)
{
	fprintf(f, "\n%-*s", ADVICE_W, "FADVISE");
	report_text_titles(f, fadvise_columns, FADVISE_COLUMNS);
	report_text_hist_titles(f, true, false);
	fputc('\n', f);
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
			print_fadvise_header(f);
		any = true;
		fprintf(f, "%-*s %*llu %*llu", ADVICE_W, a->advice,
			fadvise_columns[FADVISE_COL_CALLS].width, (unsigned long long)a->calls,
			fadvise_columns[FADVISE_COL_ESCALATED].width,
			(unsigned long long)a->escalations);
		report_text_hist_columns(f, &a->latency_ns, true, false);
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
	fprintf(f, "%-*s", CPU_W, "rest");
	if (merged)
		report_text_metric_columns(f, TEXT_CPUS, count, hist, &m->info);
	else
		fprintf(f, " (out of memory)");
	fprintf(f, "  %d CPUs\n", nr);
	arena__free(&arena);
}

static void print_cpu_header(FILE *f, const struct model_info *info)
{
	report_text_over_titles(f, TEXT_CPUS, CPU_W, info);
	fprintf(f, "%-*s", CPU_W, "CPU");
	report_text_metric_titles(f, TEXT_CPUS, info);
	fputc('\n', f);
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
	print_cpu_header(f, &m->info);
	for (i = 0; i < m->nr_cpus; i++) {
		if (shown && !shown[i])
			continue;
		fprintf(f, "%-*d", CPU_W, m->cpus[i].cpu);
		report_text_metric_columns(f, TEXT_CPUS, m->cpus[i].count, m->cpus[i].hist,
					   &m->info);
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
