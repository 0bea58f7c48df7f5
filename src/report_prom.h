/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report as Prometheus metrics (text format 0.0.4), for node_exporter's
 * textfile collector. The model must be cumulative since start: every family
 * but drainstat_info is a counter or a histogram, and those never go down.
 */
#ifndef REPORT_PROM_H
#define REPORT_PROM_H

#include <stdio.h>
#include "model.h"

struct prom_opts {
	int max_sites; /* top sites by total wait; the rest summed as site="other"; <= 0: all */
	const char *version; /* drainstat_info{version} */
};

void report_prom__print(FILE *f, const struct model *m, const struct prom_opts *o);

#endif /* REPORT_PROM_H */
