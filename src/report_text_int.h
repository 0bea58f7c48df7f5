/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text report's insides, shared by its files only: report_text.c (the
 * report), report_text_columns.c (its tables' columns) and report_text_drain.c
 * (the drains one by one).
 */
#ifndef REPORT_TEXT_INT_H
#define REPORT_TEXT_INT_H

#include <stdbool.h>
#include <stdio.h>
#include "model.h"

/* The report's drains in flight, their works and with stacks their stacks. */
void report_text_in_flight(FILE *f, const struct model *m, bool stacks);

/* report_text_container()'s buffer: "pod/", a namespace, '/', a pod's name */
#define REPORT_TEXT_CONTAINER_LEN 336

/*
 * The pod or container a cgroup names, compactly, raw (escape it):
 * "pod/default/web-0" where its pod's name is known, else the container's
 * "containerd:0123456789ab" (container__short()); NULL when it names neither.
 */
const char *report_text_container(const char *cgroup, const struct model_pod *pod, char *buf,
				  size_t size);

/* A column's title and width, over a count or one of a histogram's values. */
struct text_column {
	const char *title;
	int width;
};

/* Columns' titles, each after a space, right-aligned to its width. */
void report_text_titles(FILE *f, const struct text_column *c, int n);

/* A histogram's column titles: p50 and p99, max and TOTAL (its sum) where asked. */
void report_text_hist_titles(FILE *f, bool with_max, bool with_total);

/* h's values under report_text_hist_titles()'s titles; "-" for each when it is empty. */
void report_text_hist_columns(FILE *f, const struct sparse_hist *h, bool with_max, bool with_total);

/*
 * The tables whose columns are src/metric.c's metrics, each shown where the
 * mode measures it: the site table's after its key (SITE, COMM, CGROUP), and
 * the victim CPU table's after the CPU.
 */
enum text_table { TEXT_SITES, TEXT_CPUS };

/* The line of table k's histogram titles (DISPATCH, ...), over them; pad: the key's width. */
void report_text_over_titles(FILE *f, enum text_table k, int pad, const struct model_info *info);

/* Table k's column titles after the key's. */
void report_text_metric_titles(FILE *f, enum text_table k, const struct model_info *info);

/* A row's columns after its key: its counts and histograms, as table k's metrics index them. */
void report_text_metric_columns(FILE *f, enum text_table k, const __u64 *count,
				const struct sparse_hist *hist, const struct model_info *info);

#endif /* REPORT_TEXT_INT_H */
