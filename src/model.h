/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report model: what one report says, built from two snapshots and the
 * kernel's symbols. Every emitter reads this and nothing else.
 */
#ifndef MODEL_H
#define MODEL_H

#include <stdbool.h>
#include <linux/types.h>
#include "arena.h"
#include "drainstat.h"
#include "hist.h"
#include "snapshot.h"

struct ksyms;

#define MODEL_NAME_LEN 128

struct model_stack {
	__u64 drains;
	int nr_frames;
	const char (*frames)[MODEL_NAME_LEN]; /* "generic_fadvise+0x1f0", in the model's arena */
};

/* One row of the site table: a site and the comm of its callers. */
struct model_site {
	char site[MODEL_NAME_LEN];
	char comm[DRAINSTAT_COMM_LEN];
	__u64 drains;
	__u64 forced_drains;
	__u64 empty_drains;
	__u64 works;
	__u64 self_works;
	__u64 ipis;
	struct sparse_hist dispatch_ns;
	struct sparse_hist run_ns;
	struct sparse_hist wait_ns;
	struct sparse_hist lock_ns;
	struct sparse_hist local_ns; /* local drains: lru_add_drain() calls */
	struct model_stack *stacks;
	int nr_stacks;
};

/* A target CPU that received works. */
struct model_cpu {
	int cpu;
	__u64 works;
	__u64 self_works;
	__u64 ipis;
	struct sparse_hist dispatch_ns;
	struct sparse_hist run_ns;
};

struct model_fadvise {
	const char *advice; /* "dontneed", ... */
	__u64 calls;
	__u64 escalations;
	struct sparse_hist latency_ns;
};

struct model_info {
	const char *mode;	 /* "tracepoint" */
	const char *kernel;	 /* uname -r */
	const char *blind_spots; /* what this mode cannot see */
	bool wait_is_lower_bound;
	bool entry_visible; /* full and kprobe modes: exact wait, lock, empty drains */
	bool has_fadvise;
	bool has_ipi;
	bool has_local;
	bool cumulative; /* since start rather than since the previous report */
	__u32 filter_pid;
	const char *filters; /* the other filters, described; NULL if none */
};

struct model {
	struct model_info info;
	__u64 span_ns;		  /* the time this report covers */
	struct model_site *sites; /* sorted by total wait, largest first */
	int nr_sites;
	struct model_cpu *cpus; /* by CPU number, only those with works */
	int nr_cpus;
	struct model_fadvise fadvise[FADVISE_ADVICE_SLOTS];
	__u64 drains;
	__u64 works;
	__u64 self_works;
	__u64 local_drains;
	__u64 counters[CNT_NR];
	__u64 lost;	    /* the counters that mean something was not measured */
	struct arena arena; /* the buckets of every histogram above, and the stacks' frames */
};

const char *model__counter_name(enum drainstat_counter c);
bool model__counter_is_loss(enum drainstat_counter c);

/* cur - prev (prev may be NULL: everything since start). 0 or -ENOMEM. */
int model__build(const struct snapshot *cur, const struct snapshot *prev, __u64 start_ns,
		 const struct ksyms *ks, const struct model_info *info, struct model *out);
void model__free(struct model *m);

#endif /* MODEL_H */
