/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One reading of the kernel's aggregates, taken once per interval: plain data,
 * no libbpf. The model is built from two of them (now and the previous one).
 */
#ifndef SNAPSHOT_H
#define SNAPSHOT_H

#include <stdbool.h>
#include <linux/types.h>
#include "drainstat.h"

struct snap_site {
	struct site_key key;
	struct site_stats stats;
	__u64 ips[DRAINSTAT_MAX_STACK_DEPTH]; /* the caller's kernel stack, innermost first */
	int nr_ips;			      /* 0 when the stack was lost */
};

struct snapshot {
	__u64 taken_ns; /* CLOCK_MONOTONIC */
	struct snap_site *sites;
	int nr_sites;
	int sites_cap;	   /* sites allocated: a snapshot read again reuses them */
	bool sites_sorted; /* by_key holds the sites sorted: lookups are a binary search */
	const struct snap_site **by_key; /* sites_cap of them; sorting them moves no site */
	struct cpu_stats *cpus;
	int nr_cpus;
	struct fadvise_stats fadvise[FADVISE_ADVICE_SLOTS];
	__u64 counters[CNT_NR];
};

void snapshot__free(struct snapshot *snap);
/* Sorts the sites by key, so that snapshot__find_site() takes log n. 0 or -ENOMEM. */
int snapshot__sort_sites(struct snapshot *snap);
const struct snap_site *snapshot__find_site(const struct snapshot *snap,
					    const struct site_key *key);

#endif /* SNAPSHOT_H */
