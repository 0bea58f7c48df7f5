/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cause of a stall: why a pending work's CPU does not run it, or why a
 * drain waits for the drain mutex, from the facts the kernel gave at report
 * time (stall_read.c). One table names each cause for the text, the JSON, the
 * export's reason label and the man page. No kernel and no I/O here: the
 * classification is a function of the facts.
 */
#ifndef STALL_H
#define STALL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "drainstat.h"

/* The causes; their keys are stable (JSON, the export's reason label). */
enum stall_cause {
	STALL_UNKNOWN,	    /* none fits: what was read is said */
	STALL_RT_TASK,	    /* a FIFO, RR or DEADLINE task holds the CPU */
	STALL_NORMAL_TASK,  /* a normal task has run long past a slice: the kworker starves */
	STALL_BUSY_POOL,    /* another kworker runs: a CPU-bound work item holds the pool */
	STALL_POOL_STALLED, /* the CPU is idle: no worker picks the work */
	STALL_CPU_OFFLINE,  /* the CPU is offline */
	STALL_SOFTIRQ,	    /* ksoftirqd runs: a long softirq section */
	STALL_MUTEX,	    /* the drain waits for the drain mutex */
	STALL_CAUSES,
};

/* A yes-or-no fact of the kernel, or not known (not read, not readable). */
enum stall_bool { STALL_NOT_KNOWN, STALL_NO, STALL_YES };

/* A CPU's fair server (Linux 6.12+): it lets normal tasks run under real-time ones. */
enum stall_fair {
	FAIR_NOT_KNOWN, /* debugfs not mounted or not readable */
	FAIR_NONE,	/* the kernel has none (before 6.12) */
	FAIR_ON,
	FAIR_OFF, /* its runtime is 0 */
};

/* A normal task that has run this long without a break is long past any slice (a few ms). */
#define STALL_LONG_RUN_NS (100ULL * 1000000)

#define STALL_PREEMPT_LEN 16

/*
 * What the kernel says of the system when a report is made (stall_read.c):
 * plain data in the snapshot, each part known or not.
 */
struct stall_system {
	bool rt_runtime_known;
	__s64 rt_runtime_us;		 /* kernel.sched_rt_runtime_us: -1, RT throttling off */
	char preempt[STALL_PREEMPT_LEN]; /* debugfs sched/preempt's choice: "" not known */
	bool online_known;		 /* online holds /sys/devices/system/cpu/online */
	__u64 online[DRAINSTAT_MAX_CPUS / 64];
	enum stall_fair fair_dir; /* FAIR_NOT_KNOWN, FAIR_NONE, or FAIR_ON: per CPU below */
	__u64 fair_read[DRAINSTAT_MAX_CPUS / 64]; /* CPUs whose fair server runtime was read */
	__u64 fair_off[DRAINSTAT_MAX_CPUS / 64];  /* of those, runtime 0 */
};

/* A CPU list in a remedy: longer, it is cut, and the remedy says "CPUS". */
#define STALL_CPULIST_LEN 64

/* The drain that holds the drain mutex, as far as the drains in flight show it. */
struct stall_holder {
	bool known;
	__u32 pid;
	__u32 tid;
	char comm[DRAINSTAT_COMM_LEN];
	__u64 age_ns;		/* in flight */
	const char *state_key;	/* its phase: "works_pending" (model__phase_key()) */
	const char *state_name; /* "works pending" (model__phase_name()) */
};

/* What a cause is read from: one pending work's CPU, or one mutex waiter. */
struct stall_facts {
	int cpu; /* the pending work's CPU; -1 for a mutex waiter */
	__u64 pending_ns;
	/* the task on the CPU (bpf/running.bpf.c) */
	bool running_known;
	bool idle;
	bool since_known; /* running_ns is known */
	bool kthread;
	bool worker; /* a workqueue worker: a kworker */
	char comm[DRAINSTAT_COMM_LEN];
	__u32 pid;
	__u32 tid;
	const char *policy; /* "FIFO", ... ; NULL where not known */
	__s32 priority;	    /* rt_priority for FIFO and RR, else nice */
	__u64 running_ns;   /* since it was last switched in */
	/* the CPU */
	enum stall_bool online;
	bool isolated;
	bool nohz_full;
	/* the other online CPUs, not isolated, where its task could go: "0,2-3" ("" not known) */
	char move_to[STALL_CPULIST_LEN];
	enum stall_fair fair_server;
	/* the system */
	enum stall_bool rt_throttling; /* STALL_NO: kernel.sched_rt_runtime_us -1 */
	__s64 rt_runtime_us;
	char preempt[STALL_PREEMPT_LEN]; /* "" not known */
	/* the drain mutex: a waiter's */
	bool mutex_waiter;
	struct stall_holder holder;
	int mutex_waiters;
};

/* A cause and the facts it rests on. */
struct stall {
	enum stall_cause cause;
	struct stall_facts facts;
};

/* A fact as JSON shows it: a string, a number, a boolean, or null (not known). */
enum stall_fact_type { FACT_NULL, FACT_STR, FACT_INT, FACT_BOOL };

struct stall_fact {
	const char *key;
	enum stall_fact_type type;
	const char *str; /* FACT_STR, its length at most DRAINSTAT_COMM_LEN */
	__s64 num;	 /* FACT_INT; FACT_BOOL: 0 or 1 */
};

#define STALL_MAX_FACTS	   24
#define STALL_MAX_REMEDIES 6
#define STALL_REMEDY_LEN   256
/* A cause's text: its summary and its facts, one line. */
#define STALL_TEXT_LEN 512

enum stall_cause stall__classify(const struct stall_facts *f);
/* f classified into s. */
void stall__explain(const struct stall_facts *f, struct stall *s);

/* "FIFO 50", "OTHER nice 0", "DEADLINE": a policy with its priority, into buf. */
const char *stall__policy(const char *policy, __s32 priority, char *buf, size_t size);

/* "rt_task": the key (JSON, the export's reason label); "a real-time task holds the CPU". */
const char *stall__key(enum stall_cause c);
const char *stall__summary(enum stall_cause c);

/*
 * The facts s rests on, in prose, on one line ("sd-spin pid 812 FIFO 50 has
 * run 12s without a break; RT throttling off (kernel.sched_rt_runtime_us =
 * -1); ..."), escaped: printable ASCII.
 */
void stall__facts_text(const struct stall *s, char *buf, size_t size);
/* The facts s rests on, as JSON shows them, into out: how many. */
int stall__facts(const struct stall *s, struct stall_fact *out, int max);
/* The remedies that apply to s, in order, into out: how many (printable ASCII). */
int stall__remedies(const struct stall *s, char (*out)[STALL_REMEDY_LEN], int max);

/*
 * Slow but not stuck: which part of a site's wait dominates it, from the sums
 * of its histograms (each drain's wait is its own local drain, its wait for
 * the mutex, and its works' dispatch and run, these in parallel on the
 * target CPUs).
 */
enum wait_part { PART_OWN, PART_LOCK, PART_DISPATCH, PART_RUN, WAIT_PARTS };

/* A site is slow where its wait's p99 is this long or more: field reports begin at 10 ms. */
#define STALL_SLOW_SITE_NS (10ULL * 1000000)

/* The CPUs a slow line names where dispatch dominates: at most this many. */
#define STALL_SLOW_CPUS 4

/* A target CPU's dispatch p99, from the victim CPU table: all sites' works. */
struct cpu_dispatch {
	int cpu;
	__u64 p99_ns;
};

struct slow_site {
	bool slow;
	enum wait_part dominant; /* WAIT_PARTS: none, no part has a share */
	__u64 wait_p99_ns;
	bool wait_p99_is_lower_bound; /* past the histograms' last edge (hist__percentile()) */
	__u64 wait_ns;		      /* the sum of its waits */
	__u64 part_ns[WAIT_PARTS];    /* of wait_ns, each part's share */
	bool measured[WAIT_PARTS];    /* what the mode measures; the others' share is 0 */
	/*
	 * Where dispatch dominates: the CPUs slow to start the works, those whose
	 * dispatch p99 is half the slowest's or more (the slowest first, the first
	 * STALL_SLOW_CPUS of nr_slow_cpus kept), and the other CPUs with works,
	 * the slowest of them at others_p99_ns. None where nothing was read.
	 */
	int nr_slow_cpus;
	struct cpu_dispatch slow_cpus[STALL_SLOW_CPUS];
	int nr_other_cpus;
	__u64 others_p99_ns;
};

/*
 * out from a site's wait p99 and the sums of its waits and of each part's
 * times (0 where not measured: out->measured is the caller's to set); the works' share of the wait
 * (what is left after own and lock) split between dispatch and run as their sums are.
 */
void stall__slow_site(__u64 wait_p99, __u64 wait_sum, const __u64 *part_sum, struct slow_site *out);
/* out's slow CPUs from the n CPUs with works, each its dispatch p99. */
void stall__slow_cpus(const struct cpu_dispatch *cpus, int n, struct slow_site *out);
/* How many of s's slow CPUs s->slow_cpus holds: the first STALL_SLOW_CPUS. */
int stall__slow_cpus_kept(const struct slow_site *s);
/*
 * What a slow site's dominant part means, into buf: where dispatch dominates
 * and its CPUs are known, which of them are slow to start the works.
 */
#define STALL_SLOW_TEXT_LEN 256
const char *stall__slow_text(const struct slow_site *s, char *buf, size_t size);
/*
 * "own", "lock", "dispatch", "run" (NULL for WAIT_PARTS: none); and what it
 * means when it dominates.
 */
const char *stall__part_key(enum wait_part p);
const char *stall__part_text(enum wait_part p);

/*
 * The system's facts into sys (stall_read.c): RT throttling, which CPUs are
 * online, the preemption model and, for the CPUs in cpus (DRAINSTAT_MAX_CPUS
 * bits), their fair servers; from the files under root ("" the running
 * system's). Each fact not readable is not known; never an error.
 */
void stall__read_system(const char *root, const __u64 *cpus, struct stall_system *sys);

#endif /* STALL_H */
