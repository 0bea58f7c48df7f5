/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report as Prometheus metrics (text format 0.0.4), for node_exporter's
 * textfile collector. The model must be cumulative since start: every family
 * but drainstat_info is a counter or a histogram, and those never go down.
 */
#ifndef REPORT_PROM_H
#define REPORT_PROM_H

#include <stdbool.h>
#include <stdio.h>
#include "model.h"

/*
 * What the exports before said, so that no series of the next one goes down:
 * which site labels (with their cgroup labels) were kept and which went to
 * "other", and the last value
 * of each histogram series (see report_prom_sites.c). An export run holds one.
 */
struct prom_memory;

struct prom_memory *prom_memory__new(void);
void prom_memory__free(struct prom_memory *pm);

/* With the cgroup key, the site series' cgroup labels (--prom-cgroup). */
enum prom_cgroup {
	PROM_CGROUP_UNIT, /* cgroup: the path's stable prefix (cgroups__unit(): the unit, the pod)
			   */
	PROM_CGROUP_PATH, /* cgroup: the whole path */
	/* cgroup as UNIT; in a pod, namespace and pod (where named) and qos too */
	PROM_CGROUP_POD,
};

struct prom_opts {
	int max_sites; /* top sites by total wait; the rest summed as site="other"; <= 0: all */
	enum prom_cgroup cgroup;
	const char *version;	    /* drainstat_info{version} */
	struct prom_memory *memory; /* NULL: each export stands alone */
};

/* Without memory the kept sites are the top ones of this m; with it, o->memory is updated. */
void report_prom__print(FILE *f, const struct model *m, const struct prom_opts *o);

#endif /* REPORT_PROM_H */
