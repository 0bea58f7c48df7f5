/* SPDX-License-Identifier: GPL-2.0 */
/* The text report for a terminal: the mode line, the site table, fadvise, victim CPUs. */
#ifndef REPORT_TEXT_H
#define REPORT_TEXT_H

#include <stdbool.h>
#include <stdio.h>
#include "model.h"

struct text_opts {
	bool stacks;	       /* -s: each site's kernel stacks */
	bool histograms;       /* -H: dispatch/run/wait histograms per site */
	bool all_cpus;	       /* --all-cpus or -C: a row for every CPU with works */
	const char *timestamp; /* printed before the report, may be NULL */
};

/* The first line of the output: mode, kernel, and what the mode cannot see. */
void report_text__header(FILE *f, const struct model_info *info, const char *version);
void report_text__print(FILE *f, const struct model *m, const struct text_opts *opts);

/* A drain of the -T log as it ended: when, who, each target, the stacks. */
void report_text__slow_drain(FILE *f, const struct model_slow_drain *sd, const char *stamp);
/* -T: a drain still in flight that passed threshold_ns: who, its works, what holds them. */
void report_text__drain_in_flight(FILE *f, const struct model_drain *md, __u64 threshold_ns,
				  const char *stamp);

#endif /* REPORT_TEXT_H */
