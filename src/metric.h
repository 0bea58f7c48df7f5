/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A site's and a target CPU's metrics, each named once: the counts and
 * histograms of bpf/drainstat.h's enums, with the words the JSON keys use,
 * the export's family and help text, and what a mode must see for the metric
 * to mean something. The snapshot, the model and the emitters loop over them.
 */
#ifndef METRIC_H
#define METRIC_H

#include <stdbool.h>
#include <linux/types.h>
#include "drainstat.h"

struct model_info;

/* What a mode must see for a metric to be measured (model_info's flags): all the bits set. */
enum metric_seen {
	SEEN_ALWAYS = 0,
	SEEN_ENTRY = 1 << 0,	/* the drain's entry: full and kprobe modes */
	SEEN_LOCAL = 1 << 1,	/* lru_add_drain() calls */
	SEEN_IPI = 1 << 2,	/* the IPIs sent to wake a CPU */
	SEEN_WORKS = 1 << 3,	/* every work of a drain queued: not so with Queue PerCPU Work */
	SEEN_IN_PLACE = 1 << 4, /* other CPUs drained in place, by the caller: seen in the report */
};

/* How the export shows a metric. */
enum prom_shape {
	PROM_COUNTER,	      /* a count, as a counter */
	PROM_COUNTER_BY_KIND, /* a site's works, by kind="self" (its self works) and "remote" */
	PROM_HISTOGRAM,	      /* a histogram, in seconds */
	PROM_HIST_COUNT,      /* only a histogram's count, as a counter */
	PROM_HIST_SUM,	      /* only a histogram's sum, as a counter of seconds */
	/* a target CPU's metrics are counters: PROM_COUNTER, PROM_HIST_COUNT or PROM_HIST_SUM */
};

struct metric_desc {
	const char *name; /* the drain model's word, JSON's key: "drains", "dispatch_ns" */
	const char *prom; /* its export family after "drainstat_"; NULL: none of its own */
	enum prom_shape shape;
	const char *help;  /* the family's HELP */
	unsigned int seen; /* enum metric_seen's bits */
	/*
	 * The text report's site or CPU table: a count's column header, or the
	 * title over a histogram's p50 and p99 (and max, and TOTAL) columns;
	 * NULL: no column.
	 */
	const char *text;
	const char *text_bound; /* the title where the metric is a lower bound (WAIT~) */
	int text_width;		/* a count's column width */
	bool text_max;		/* a histogram's max column too */
	bool text_total;	/* a histogram's TOTAL column (its sum) too */
};

extern const struct metric_desc metric__site_count[SITE_COUNTS];
extern const struct metric_desc metric__site_hist[SITE_HISTS];
extern const struct metric_desc metric__cpu_count[CPU_COUNTS];
extern const struct metric_desc metric__cpu_hist[CPU_HISTS];

/* Whether the mode info describes measures d. */
bool metric__seen(const struct metric_desc *d, const struct model_info *info);

#endif /* METRIC_H */
