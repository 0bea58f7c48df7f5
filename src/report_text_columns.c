// SPDX-License-Identifier: GPL-2.0
/*
 * The text report's tables' columns, a title and a width each, written once:
 * the site and victim CPU tables' metrics from src/metric.c, a histogram's
 * p50, p99, max and TOTAL here (the LOCAL and FADVISE tables' counts are
 * report_text.c's), and the values under them.
 */
#include "hist.h"
#include "metric.h"
#include "report_text_int.h"
#include "units.h"

#define NUM_W 6 /* a duration column: " 9.1us" */

#define NR(a) (int)(sizeof(a) / sizeof((a)[0]))

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

/* A histogram's columns: p50, p99 (put_dist()), max where asked, and TOTAL, its sum. */
enum hist_column { HIST_P50, HIST_P99, HIST_MAX, HIST_TOTAL, HIST_COLUMNS };

static const struct text_column hist_columns[HIST_COLUMNS] = {
    [HIST_P50] = {"p50", NUM_W - 1},
    [HIST_P99] = {"p99", NUM_W - 1},
    [HIST_MAX] = {"max", NUM_W - 1},
    [HIST_TOTAL] = {"TOTAL", NUM_W - 1},
};

void report_text_titles(FILE *f, const struct text_column *c, int n)
{
	int i;

	for (i = 0; i < n; i++)
		fprintf(f, " %*s", c[i].width, c[i].title);
}

void report_text_hist_titles(FILE *f, bool with_max, bool with_total)
{
	report_text_titles(f, hist_columns, HIST_MAX);
	if (with_max)
		report_text_titles(f, &hist_columns[HIST_MAX], 1);
	if (with_total)
		report_text_titles(f, &hist_columns[HIST_TOTAL], 1);
}

void report_text_hist_columns(FILE *f, const struct sparse_hist *h, bool with_max, bool with_total)
{
	put_dist(f, h, with_max);
	if (with_total)
		put_ns(f, h->sum);
}

/*
 * A table's column of metric.c's: a count, or a histogram's p50 and p99 (and
 * max, and TOTAL), shown where the mode measures it (metric__seen()).
 */
struct metric_column {
	bool hist;
	int metric; /* its index in the row's counts, or in its histograms */
};

/* A table's metric columns, in order, and the metrics they index: a site's or a target CPU's. */
struct metric_table {
	const struct metric_column *columns;
	int nr;
	const struct metric_desc *counts, *hists;
};

/*
 * The site table's columns after the key's (SITE, COMM, CGROUP).
 * Entry-visible modes add lock time, empty and forced drains, and with the
 * local drains hooked the drains that drained only their own CPU and the
 * time of that own drain; IPIs where counted. With Queue PerCPU Work what
 * depends on a drain's works is left out (SEEN_WORKS).
 */
static const struct metric_column site_columns[] = {
    {false, SITE_DRAINS},	   {false, SITE_WORKS},	       {false, SITE_SELF_WORKS},
    {true, SITE_DISPATCH_NS},	   {true, SITE_RUN_NS},	       {true, SITE_WAIT_NS},
    {true, SITE_LOCK_NS},	   {false, SITE_EMPTY_DRAINS}, {false, SITE_FORCED_DRAINS},
    {false, SITE_OWN_ONLY_DRAINS}, {true, SITE_OWN_NS},	       {false, SITE_IPIS},
    {false, SITE_IN_PLACE},	   {true, SITE_IN_PLACE_NS},
};

/* The victim CPU table's columns after the CPU; IPIs where counted. */
static const struct metric_column cpu_columns[] = {
    {false, CPU_WORKS}, {false, CPU_SELF_WORKS}, {true, CPU_DISPATCH_NS},
    {true, CPU_RUN_NS}, {false, CPU_IPIS},
};

static const struct metric_table tables[] = {
    [TEXT_SITES] = {site_columns, NR(site_columns), metric__site_count, metric__site_hist},
    [TEXT_CPUS] = {cpu_columns, NR(cpu_columns), metric__cpu_count, metric__cpu_hist},
};

/* From column *i on, the first that this mode shows: its metric, in *d; false past the last. */
static bool next_shown(const struct metric_table *t, int *i, const struct model_info *info,
		       const struct metric_desc **d)
{
	const struct metric_column *c;

	for (; *i < t->nr; ++*i) {
		c = &t->columns[*i];
		*d = c->hist ? &t->hists[c->metric] : &t->counts[c->metric];
		if (metric__seen(*d, info))
			return true;
	}
	return false;
}

void report_text_over_titles(FILE *f, enum text_table k, int pad, const struct model_info *info)
{
	const struct metric_table *t = &tables[k];
	const struct metric_desc *d;
	int i;

	for (i = 0; next_shown(t, &i, info, &d); i++) {
		if (!t->columns[i].hist) {
			pad += 1 + d->text_width;
			continue;
		}
		fprintf(f, "%*s %s", pad, "",
			info->wait_is_lower_bound && d->text_bound ? d->text_bound : d->text);
		pad = 0;
	}
	fputc('\n', f);
}

void report_text_metric_titles(FILE *f, enum text_table k, const struct model_info *info)
{
	const struct metric_table *t = &tables[k];
	const struct metric_desc *d;
	int i;

	for (i = 0; next_shown(t, &i, info, &d); i++) {
		if (!t->columns[i].hist)
			fprintf(f, " %*s", d->text_width, d->text);
		else
			report_text_hist_titles(f, d->text_max, d->text_total);
	}
}

void report_text_metric_columns(FILE *f, enum text_table k, const __u64 *count,
				const struct sparse_hist *hist, const struct model_info *info)
{
	const struct metric_table *t = &tables[k];
	const struct metric_column *c;
	const struct metric_desc *d;
	int i;

	for (i = 0; next_shown(t, &i, info, &d); i++) {
		c = &t->columns[i];
		if (c->hist)
			report_text_hist_columns(f, &hist[c->metric], d->text_max, d->text_total);
		else
			fprintf(f, " %*llu", d->text_width, (unsigned long long)count[c->metric]);
	}
}
