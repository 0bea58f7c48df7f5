/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Prometheus export's insides, shared by its files only: report_prom.c
 * (the families, as text) and report_prom_sites.c (the site series, their
 * labels bounded, and the memory that keeps them from going down).
 */
#ifndef REPORT_PROM_INT_H
#define REPORT_PROM_INT_H

#include <stdbool.h>
#include "report_prom.h"

/*
 * le edges: 4^k ns from 1.024us to ~73.3 min (2^HIST_MAX_EXP ns, where the
 * histograms' open-ended bucket begins: a drain stuck for minutes is read as
 * such by histogram_quantile()). Each is the low edge of a log-linear bucket.
 */
#define LE_FIRST_SHIFT 10
#define LE_LAST_SHIFT  HIST_MAX_EXP
#define LE_STEP	       2
#define NR_LE	       ((LE_LAST_SHIFT - LE_FIRST_SHIFT) / LE_STEP + 2) /* the edges and +Inf */
_Static_assert((LE_LAST_SHIFT - LE_FIRST_SHIFT) % LE_STEP == 0, "2^HIST_MAX_EXP ns is an le edge");

/*
 * One histogram as the exposition shows it: cumulative le counts, +Inf last,
 * and the sum; and its count, what the family of a count alone shows.
 */
struct prom_series {
	__u64 le[NR_LE];
	__u64 sum_ns;
	__u64 count;
};

/* A site label an export has shown: by name and cgroup, or within "other" (kept false). */
struct prom_seen {
	char name[MODEL_NAME_LEN];
	char *cgroup; /* its cgroup label, NULL without one */
	size_t cgroup_len;
	char *namespace, *pod; /* its pod labels (--prom-cgroup=pod), NULL without */
	const char *qos;
	bool kept;
	unsigned int idle; /* exports in a row it did not drain in */
	__u64 drains_seen; /* its drains and works at the last export */
	/* what the last export showed of it: no series goes below */
	__u64 last_count[SITE_COUNTS];
	struct prom_series last[SITE_HISTS];
};

/*
 * One site series' labels: the model's rows of that site summed over their
 * comms, and with the cgroup key over the cgroups that share a cgroup label.
 */
struct prom_site {
	const char *name;
	const char *cgroup; /* the label: its first cgroup_len bytes; NULL without the key */
	size_t cgroup_len;
	/* --prom-cgroup=pod, a cgroup in a pod: the pod's labels; NULL: none (unnamed, no class) */
	const char *namespace, *pod, *qos;
	__u64 count[SITE_COUNTS];
	struct prom_series hist[SITE_HISTS];
	struct prom_seen *seen; /* its memory; NULL without one */
};

/* Bytes past ASCII (the file stays UTF-8) and control bytes show as '?'; '\n' is escaped. */
static inline char label_char(char c)
{
	return c == '\n' || (c >= 0x20 && c < 0x7f) ? c : '?';
}

/*
 * The model's rows as the export's site series, *n of them: merged by label,
 * o->max_sites kept and the rest summed as site="other". Out of memory, every
 * count in one "other" series, in *all. The caller frees *owned once they are
 * printed.
 */
const struct prom_site *prom_sites_make(const struct model *m, const struct prom_opts *o,
					struct prom_site *all, struct prom_site **owned, int *n);

#endif /* REPORT_PROM_INT_H */
