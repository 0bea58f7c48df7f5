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
#include "metric.h"
#include "snapshot.h"
#include "stall.h"

struct ksyms;

#define MODEL_NAME_LEN	 128
#define MODEL_UFRAME_LEN 256

struct model_stack {
	__u64 drains;
	int nr_frames;
	const char (*frames)[MODEL_NAME_LEN]; /* "generic_fadvise+0x1f0", in the model's arena */
};

/*
 * The pod a cgroup's path names, by its name, where /var/log/pods gives it
 * (podnames.h): in the model's arena; NULL where not known.
 */
struct model_pod {
	const char *name;
	const char *namespace;
};

/* One row of the site table: a site, and the comm and cgroup of its callers (as --by keys them). */
struct model_site {
	char site[MODEL_NAME_LEN];
	char comm[DRAINSTAT_COMM_LEN]; /* "" where comm is not keyed */
	__u64 cgroup_id;	       /* 0 where cgroup is not keyed */
	/*
	 * the cgroup's path under the cgroup2 mount ("/" the root), or
	 * "cgroup:ID" when gone by report time, in the model's arena: set by
	 * model__name_cgroups(); NULL where cgroup is not keyed
	 */
	const char *cgroup;
	struct model_pod pod;		     /* of cgroup */
	__u64 count[SITE_COUNTS];	     /* by enum site_count (src/metric.h) */
	struct sparse_hist hist[SITE_HISTS]; /* by enum site_hist */
	struct model_stack *stacks;
	int nr_stacks;
};

/* A target CPU that received works. */
struct model_cpu {
	int cpu;
	__u64 count[CPU_COUNTS]; /* by enum cpu_count */
	struct sparse_hist hist[CPU_HISTS];
};

struct model_fadvise {
	const char *advice; /* "dontneed", ... */
	__u64 calls;
	__u64 escalations;
	struct sparse_hist latency_ns;
};

/* The task a CPU ran when the report was made (model_work.running). */
struct model_running {
	bool known;	  /* the CPU was asked */
	bool idle;	  /* its idle task: nothing holds it */
	bool since_known; /* running_ns is known */
	bool kthread;	  /* a kernel thread */
	bool worker;	  /* a workqueue worker: a kworker */
	__u32 tid;
	__u32 pid;
	char comm[DRAINSTAT_COMM_LEN];
	const char *policy; /* "FIFO", "RR", "OTHER", "BATCH", "IDLE", "DEADLINE", "EXT" */
	__s32 priority;	    /* rt_priority for FIFO and RR, else nice */
	__u64 running_ns;   /* since it was last switched in */
	__u64 cgroup_id;
	const char *cgroup;   /* named as a site's cgroup is (model__name_cgroups()); NULL: not */
	struct model_pod pod; /* of cgroup */
};

/* A work of a drain in flight: queued and not ended. */
struct model_work {
	int target_cpu;
	bool started; /* running; else pending */
	bool self;    /* target_cpu is the caller's */
	bool isolated;
	bool nohz_full;
	bool outside_filter; /* a CPU -C does not count: the drain waits on it all the same */
	__u64 age_ns;	     /* pending: since queued; running: since started */
	struct model_running running; /* pending works only */
	struct stall stall;	      /* pending works only: why it has not started */
};

enum drain_phase {
	PHASE_MUTEX,	 /* entered, no work queued yet: waiting for the drain mutex */
	PHASE_PENDING,	 /* a work not started */
	PHASE_RUNNING,	 /* every work started, some not ended */
	PHASE_RETURNING, /* every work ended, the caller not returned yet */
	/* entered, no work queued: with Queue PerCPU Work, the mutex or its works run in place */
	PHASE_NO_WORK,
	PHASE_IN_PLACE, /* draining other CPUs in place itself (the Per-CPU Work helpers) */
};

/* A drain in flight when the report was made. */
struct model_drain {
	__u64 id_ns; /* its start: with tid, names the drain */
	__u32 tid;
	__u32 pid;
	int caller_cpu;
	char comm[DRAINSTAT_COMM_LEN];
	__u64 cgroup_id;
	const char *cgroup;   /* named as a site's cgroup is (model__name_cgroups()); NULL: not */
	struct model_pod pod; /* of cgroup */
	char site[MODEL_NAME_LEN];
	struct model_stack stack;
	__u64 age_ns; /* since its entry, or first queue in tracepoint mode */
	bool stuck;   /* age_ns at or over the stuck threshold */
	enum drain_phase phase;
	__u32 works;		      /* queued so far */
	__u32 pending_works;	      /* of works: not started */
	__u32 in_place;		      /* other CPUs drained in place so far */
	int in_place_cpu;	      /* the CPU it drains in place now, -1 if none */
	struct model_work *in_flight; /* pending first, in the model's arena */
	int nr_in_flight;
	struct stall stall; /* PHASE_MUTEX: why it waits (STALL_MUTEX) */
};

struct model_info {
	const char *mode;	 /* "tracepoint" */
	const char *kernel;	 /* uname -r */
	const char *blind_spots; /* what this mode cannot see */
	bool wait_is_lower_bound;
	bool entry_visible; /* full and kprobe modes: exact wait, lock, empty drains */
	bool qpw;	    /* the kernel's BTF has Queue PerCPU Work's struct qpw_struct */
	/*
	 * qpw, and this run cannot see a drain drain other CPUs in place: what
	 * is known of a drain's works is not shown (src/metric.c, SEEN_WORKS)
	 */
	bool works_unseen;
	/* the run sees other CPUs drained in place: entry and lru_add_drain_cpu() hooked */
	bool has_in_place;
	/* has_in_place, and the report holds such drains: their columns and families shown */
	bool in_place_seen;
	bool has_fadvise;
	const char *fadvise_unseen; /* why the fadvise calls are not traced; NULL where they are */
	bool has_ipi;
	bool has_local;
	bool cumulative; /* since start rather than since the previous report */
	/* --by: the cgroup tells rows apart (their cgroup shown); the comm does not (not shown) */
	bool by_cgroup;
	bool comm_merged;
	__u64 stuck_ns; /* --stuck: a drain in flight this long is stuck */
	/* the filters, each NULL (0 for the pid) where not set */
	__u32 filter_pid;	      /* -p */
	const char *filter_comm;      /* -c */
	const char *filter_cgroup;    /* --cgroup: its path */
	const char *filter_cpus;      /* -C: a CPU list, "0,2-3" */
	const __u64 *filter_cpu_mask; /* -C: the same CPUs, DRAINSTAT_MAX_CPUS bits */
};

struct model {
	struct model_info info;
	__u64 wall_ns;		  /* CLOCK_REALTIME when the snapshot was read; 0 if unknown */
	__u64 span_ns;		  /* the time this report covers */
	struct model_site *sites; /* sorted by total wait, largest first */
	int nr_sites;
	struct model_cpu *cpus; /* by CPU number, only those with works */
	int nr_cpus;
	struct model_fadvise fadvise[FADVISE_ADVICE_SLOTS];
	__u64 total[SITE_COUNTS]; /* each site count, summed over the sites */
	__u64 local_drains;
	__u64 counters[CNT_NR];
	__u64 lost; /* the counters that mean something was not measured */
	/* drains in flight when the report was made, the oldest first */
	struct model_drain *in_flight;
	int nr_in_flight;
	int nr_stuck;
	int mutex_waiters;
	__u64 oldest_in_flight_ns;
	struct arena arena; /* the histograms' buckets (or cur's: model__build()), the frames */
};

/* A drain of the -T log as it ended, its frames named (model__slow_drain()). */
struct model_slow_drain {
	const struct slow_drain_event *ev;
	__u64 wall_ns;		   /* CLOCK_REALTIME when it ended */
	struct model_stack kstack; /* from the first drain function down */
	int nr_uframes;
	const char (*uframes)[MODEL_UFRAME_LEN]; /* "posix_fadvise+0x1a (libc.so.6)" */
	/* those past the symbols' budget (umaps.h): "libc.so.6+0x891f5 [budget]" */
	unsigned int uframes_over_budget;
	const char
	    *cgroup; /* the caller's, as the log's cache names it; NULL: none, or no memory */
	struct model_pod pod; /* of cgroup */
	struct arena arena;   /* the frames, the cgroup */
};

struct slow_drain;
struct umaps;
struct cgroups;
struct podnames;

/*
 * d's frames named, kernel ones from ks, user ones from um within an event's
 * budget (umaps__event_budget()), and its caller's cgroup by cg (NULL: not
 * named) and its pod by pn (NULL: not); its end as wall time from now, read
 * when d was. 0 or -ENOMEM.
 */
int model__slow_drain(const struct slow_drain *d, const struct ksyms *ks, struct umaps *um,
		      struct cgroups *cg, const struct podnames *pn, const struct snap_clock *now,
		      struct model_slow_drain *out);
void model__slow_drain_free(struct model_slow_drain *sd);
/* A slow drain's CPUs drained in place, and its works: the rest of its targets. */
__u32 model__slow_in_place(const struct slow_drain_event *e);
__u32 model__slow_works(const struct slow_drain_event *e);

const char *model__counter_name(enum drainstat_counter c);
/* "waiting for the drain mutex", "works pending", ... */
const char *model__phase_name(enum drain_phase p);
/* "waiting_for_mutex", "works_pending", ...: JSON's */
const char *model__phase_key(enum drain_phase p);
bool model__counter_is_loss(enum drainstat_counter c);

/*
 * Why pending work w has not started, into w->stall: from what runs on its
 * CPU (w->running), its isolation, and what sys says of the system; the
 * isolated CPUs (NULL: none known) are not where a remedy moves its task
 * (model_stall.c; model__build() calls it, and so may a model made otherwise).
 */
void model__explain_work(struct model_work *w, const struct stall_system *sys,
			 const __u64 *isolated);

/*
 * Slow but not stuck: which part of site s's wait dominates it, from the
 * histograms m's info says are measured, and where dispatch dominates, which
 * of m's CPUs are slow to start the works (model_stall.c).
 */
void model__slow_site(const struct model *m, const struct model_site *s, struct slow_site *out);

/*
 * The cause of a drain's stall, as the export's reason label has it: a mutex
 * waiter's, or that of its first pending work's CPU; else STALL_UNKNOWN.
 */
enum stall_cause model__drain_cause(const struct model_drain *md);

/*
 * What m's drains in flight add up to (nr_stuck, mutex_waiters,
 * oldest_in_flight_ns, the mutex waiters' stall), and their order, the oldest first: model__build()
 * calls it, and so may a model made otherwise (the fuzzers').
 */
void model__sum_in_flight(struct model *m);

/*
 * cur - prev (prev may be NULL: everything since start). Without prev the
 * histograms are views of cur's buckets: free the model before cur is reset
 * or freed. 0 or -ENOMEM.
 */
int model__build(const struct snapshot *cur, const struct snapshot *prev, __u64 start_ns,
		 const struct ksyms *ks, const struct model_info *info, struct model *out);
void model__free(struct model *m);

/*
 * With info.by_cgroup, every row's cgroup named by cg (NULL: none known, all
 * by id); with cg, the cgroups of the drains in flight and of what runs on
 * their pending CPUs too. After one walk of the tree at most. Each named
 * cgroup's pod by pn where it knows it (NULL: none). 0 or -ENOMEM.
 */
int model__name_cgroups(struct model *m, struct cgroups *cg, const struct podnames *pn);

#endif /* MODEL_H */
