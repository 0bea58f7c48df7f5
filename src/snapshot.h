/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One reading of the kernel's aggregates, taken once per interval: plain data,
 * no libbpf. The model is built from two of them (now and the previous one).
 * Histograms keep only their buckets in use, in the snapshot's arena.
 */
#ifndef SNAPSHOT_H
#define SNAPSHOT_H

#include <stdbool.h>
#include <linux/types.h>
#include "arena.h"
#include "drainstat.h"
#include "hist.h"
#include "stall.h"

struct snap_site {
	struct site_key key;
	__u64 count[SITE_COUNTS]; /* by enum site_count */
	struct sparse_hist hist[SITE_HISTS];
	__u64 ips[DRAINSTAT_MAX_STACK_DEPTH]; /* the caller's kernel stack, innermost first */
	int nr_ips;			      /* 0 when the stack was lost */
};

struct snap_cpu {
	__u64 count[CPU_COUNTS]; /* by enum cpu_count */
	struct sparse_hist hist[CPU_HISTS];
};

struct snap_fadvise {
	__u64 calls;
	__u64 escalations;
	struct sparse_hist latency_ns;
};

/* What the check of a drain's caller found (tracer_check.c), for verify.c. */
enum caller_found {
	CALLER_UNCHECKED, /* no check was made */
	CALLER_GONE,	  /* no such task, and its drain's state unchanged after the check */
	CALLER_ENDED,	  /* its drain ended during the check: not in flight */
	CALLER_FOUND,	  /* in check */
};

/* A drain in flight when the snapshot was read, with its caller's stack. */
struct snap_drain {
	__u32 tid;
	struct drain_state d;
	__u64 ips[DRAINSTAT_MAX_STACK_DEPTH]; /* innermost first */
	int nr_ips;			      /* 0 when the stack was lost */
	enum caller_found caller;
	struct caller_check check; /* CALLER_FOUND: the task as the check saw it */
};

/* A work queued and not ended; if not started, what ran on its CPU. */
struct in_flight_work {
	__u32 target_cpu;
	struct work_state ws;
	struct running_task running; /* flags 0: not read */
};

/* What was in flight: read after the aggregates, from read_ns on. */
struct snap_in_flight {
	__u64 read_ns; /* when the reading began; CLOCK_MONOTONIC, the BPF side's clock */
	bool read;     /* read whole */
	struct snap_drain *drains;
	int nr_drains;
	size_t drains_cap;
	struct in_flight_work *works;
	int nr_works;
	size_t works_cap;
	/* the kernel's CPU lists, read when works are in flight */
	__u64 isolated[DRAINSTAT_MAX_CPUS / 64];
	__u64 nohz_full[DRAINSTAT_MAX_CPUS / 64];
	/* what a stall's cause rests on, read when works are in flight (stall_read.c) */
	struct stall_system system;
};

struct snapshot {
	__u64 taken_ns; /* CLOCK_MONOTONIC */
	__u64 wall_ns;	/* CLOCK_REALTIME, read with taken_ns; 0 if unknown */
	struct snap_site *sites;
	int nr_sites;
	int sites_cap;	   /* sites allocated: a snapshot read again reuses them */
	bool sites_sorted; /* by_key holds the sites sorted: lookups are a binary search */
	const struct snap_site **by_key; /* sites_cap of them; sorting them moves no site */
	int by_key_nr;			 /* how many by_key held when last sorted; 0: none */
	struct snap_cpu *cpus;
	int nr_cpus;
	int cpus_cap;
	struct snap_fadvise fadvise[FADVISE_ADVICE_SLOTS];
	__u64 counters[CNT_NR];
	struct arena buckets; /* of every histogram above */
	struct snap_in_flight in_flight;
};

/* One moment on both clocks, read back to back. */
struct snap_clock {
	__u64 mono_ns; /* CLOCK_MONOTONIC: the BPF side's timestamps (bpf_ktime_get_ns()) */
	__u64 wall_ns; /* CLOCK_REALTIME: what the reports say it was */
};

void snapshot__clock(struct snap_clock *now);
/* A CLOCK_MONOTONIC time up to now->mono_ns as CLOCK_REALTIME (now->wall_ns if later). */
__u64 snapshot__wall_ns(const struct snap_clock *now, __u64 mono_ns);

void snapshot__free(struct snapshot *snap);
/* Empties snap for a new reading, keeping its memory; taken_ns is set to now_ns, wall_ns to 0. */
void snapshot__reset(struct snapshot *snap, __u64 now_ns);
/* snapshot__reset() at this moment: taken_ns and wall_ns from snapshot__clock(). */
void snapshot__reset_now(struct snapshot *snap);
/* A site from the kernel's numbers (read in place: they may be changing). 0 or -ENOMEM. */
int snapshot__add_site(struct snapshot *snap, const struct site_stats *stats, const __u64 *ips,
		       int nr_ips);
/* The target CPUs 0..nr-1, and an fadvise advice slot. 0 or -ENOMEM. */
int snapshot__set_cpus(struct snapshot *snap, const struct cpu_stats *cpus, int nr);
int snapshot__set_fadvise(struct snapshot *snap, int slot, const struct fadvise_stats *f);
/* A drain or a work in flight, as the BPF iterators gave them. 0 or -ENOMEM. */
int snapshot__add_drain(struct snapshot *snap, __u32 tid, const struct drain_state *d,
			const __u64 *ips, int nr_ips);
int snapshot__add_work(struct snapshot *snap, const struct in_flight_work *w);
/* Sorts the sites by key, so that snapshot__find_site() takes log n. 0 or -ENOMEM. */
int snapshot__sort_sites(struct snapshot *snap);
const struct snap_site *snapshot__find_site(const struct snapshot *snap,
					    const struct site_key *key);

#endif /* SNAPSHOT_H */
