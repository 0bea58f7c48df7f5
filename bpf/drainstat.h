/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything that crosses the kernel/user boundary: map keys and values, the
 * histogram layout and its bucket function. Included by bpf/drainstat.bpf.c
 * (after vmlinux.h) and by src/ (after <linux/types.h>); includes nothing.
 */
#ifndef DRAINSTAT_H
#define DRAINSTAT_H

#define DRAINSTAT_COMM_LEN	  16
#define DRAINSTAT_MAX_STACK_DEPTH 32
/* -C takes CPUs below this: Debian's largest NR_CPUS (amd64, MAXSMP) */
#define DRAINSTAT_MAX_CPUS 8192

/*
 * The syscall whose tracepoints time the fadvise calls: arm64 has only
 * fadvise64_64 (x86_64's fadvise64_64 is the 32-bit ABI's, not traced).
 */
#if defined(__TARGET_ARCH_arm64) || defined(__aarch64__)
#define DRAINSTAT_FADVISE_SYSCALL "fadvise64_64"
#else
#define DRAINSTAT_FADVISE_SYSCALL "fadvise64"
#endif

/*
 * Log-linear histogram of nanoseconds: values 0..7 get a bucket each, then every
 * power of two [2^e, 2^(e+1)) below 2^HIST_MAX_EXP ns is split into HIST_SUB
 * equal sub-buckets. With 8 sub-buckets a bucket's midpoint is within 6.25% of
 * any value in it. Values at or above 2^HIST_MAX_EXP ns (~73 min: a drain stuck
 * for minutes is measured, not capped) land in the last bucket, alone: its
 * samples are known only to lie there, so that a percentile in it is a lower
 * bound (hist__percentile()), and the export's last finite edge, 2^42 ns, is a
 * bucket edge.
 */
#define HIST_SUB_BITS	   3
#define HIST_SUB	   (1U << HIST_SUB_BITS)
#define HIST_MAX_EXP	   42
#define HIST_BUCKETS	   ((HIST_MAX_EXP - HIST_SUB_BITS + 1) * HIST_SUB + 1)
#define HIST_NONZERO_WORDS ((HIST_BUCKETS + 63) / 64)

/*
 * nonzero: bit b is set on bucket b's first sample, so that a reader visits
 * the few buckets in use, not all of them (a bucket taken back to zero keeps
 * its bit).
 */
struct hist {
	__u64 count;
	__u64 sum;
	__u64 max;
	__u64 nonzero[HIST_NONZERO_WORDS];
	__u64 bucket[HIST_BUCKETS];
};

static inline __u32 hist_log2(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xffffffffULL) << 5;
	v >>= shift;
	r = shift;
	shift = (v > 0xffff) << 4;
	v >>= shift;
	r |= shift;
	shift = (v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

static inline __u32 hist_bucket(__u64 v)
{
	__u32 e;

	if (v < HIST_SUB)
		return (__u32)v;
	e = hist_log2(v);
	if (e >= HIST_MAX_EXP)
		return HIST_BUCKETS - 1;
	return (e - HIST_SUB_BITS + 1) * HIST_SUB +
	       (__u32)((v >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

/*
 * Aggregation key of a site: the caller's kernel stack at its first queued
 * work, its comm and its cgroup v2 id. A part the run does not key by
 * (site_key_parts) is zero in the sites' keys, so that their rows merge.
 */
struct site_key {
	__s32 stack_id;
	__u32 pad;
	/*
	 * The return address into the drain's caller where the stack lacks it,
	 * else 0: at a kprobe on a function's first instruction, arm64 has not
	 * yet pushed the caller's frame record, so the unwinder skips the caller
	 * (x86 has its return address on the stack). User space puts it back in
	 * after the probed function.
	 */
	__u64 ret_ip;
	char comm[DRAINSTAT_COMM_LEN];
	__u64 cgroup_id; /* bpf_get_current_cgroup_id(): the cgroup v2 directory's inode */
};

/*
 * New sites that local drains (lru_add_drain()) may take: half of the sites
 * array, rounded down. Every process exit drains its CPU locally and every
 * new cgroup keys new sites, and slots are never freed: without a bound a
 * long run's local drains would fill the array, and a new caller's drains
 * would find no slot. The other half is the drains' (lru_add_drain_all(),
 * lru_cache_disable()), whatever local drains do.
 */
static inline __u32 local_sites_max(__u32 max_sites)
{
	return max_sites / 2;
}

/* The parts of a site's key besides its stack (--by): bits of site_key_parts. */
#define SITE_KEY_COMM	1U
#define SITE_KEY_CGROUP 2U

/*
 * A site's counts and histograms, by index: site_stats.count[] and .hist[].
 * User space names each once (src/metric.c) and every layer loops over them.
 */
enum site_count {
	SITE_DRAINS,
	SITE_FORCED_DRAINS, /* lru_cache_disable(): every CPU, never piggybacks */
	SITE_EMPTY_DRAINS,  /* returned with no work queued, nothing drained (entry visible only) */
	/*
	 * 6.18+: queued no work, but its own local drain, before the mutex,
	 * found the caller's CPU batched (entry visible only)
	 */
	SITE_OWN_ONLY_DRAINS,
	/*
	 * self + remote, which user space sums when it reads a site: BPF never
	 * writes it. A work adds to one of the two, so that no count is ever
	 * derived by a difference, which a read racing the adds could take below
	 * zero or back down from one report to the next.
	 */
	SITE_WORKS,
	SITE_SELF_WORKS,
	SITE_REMOTE_WORKS,
	SITE_IPIS, /* IPIs that woke the CPU of one of its works not yet started */
	/*
	 * other CPUs whose batches the caller drained itself, on its own CPU,
	 * with no work: the Per-CPU Work helpers (was QPW; CONFIG_PWLOCKS),
	 * known by what they do, lru_add_drain_cpu() of another CPU inside a
	 * drain (entry visible, own local drain hooked)
	 */
	SITE_IN_PLACE,
	SITE_COUNTS,
};

enum site_hist {
	SITE_DISPATCH_NS,
	SITE_RUN_NS,
	SITE_WAIT_NS,
	/*
	 * the wait for the drain mutex: entry, or the end of the drain's own
	 * local drain (6.18+), to the first queued work (entry visible only)
	 */
	SITE_LOCK_NS,
	SITE_LOCAL_NS, /* lru_add_drain() calls of this site (entry visible only) */
	/* 6.18+: the drain's own lru_add_drain(), before the mutex (entry visible only) */
	SITE_OWN_NS,
	/* each of SITE_IN_PLACE: the caller's lru_add_drain_cpu() of that CPU */
	SITE_IN_PLACE_NS,
	SITE_HISTS,
};

/*
 * The arrays that callers and target CPUs write, one entry per site or CPU,
 * are page-aligned (mmapped): entries a cache line apiece keep two CPUs that
 * write two entries off each other's lines.
 */
#define DRAINSTAT_LINE 64

/*
 * A slot of the sites array (mmapped by user space, which reads it in place):
 * key and slot are written when the slot is taken, then ready is set once the
 * slot is the key's; a slot never ready was lost to a race and stays unused.
 * Its first line ends with the counts its callers write (drains), its second
 * begins with those of entry-visible drains and of its works, written by the
 * target CPUs with its dispatch histogram.
 */
struct site_stats {
	struct site_key key;
	__u32 ready;
	__u32 slot; /* its own index, for the drains that keep it */
	__u64 count[SITE_COUNTS];
	struct hist hist[SITE_HISTS];
} __attribute__((aligned(DRAINSTAT_LINE)));

/*
 * Where a drain or local drain came from, when that is known without a stack
 * walk: the return address into its caller, else the fadvise call it came in
 * (generic_fadvise() is the only drain inside one). Neither: unknown, all
 * zero. A key of site_sources (bpf/globals.bpf.h): its padding stays zero.
 */
struct drain_source {
	__u64 caller; /* the return address into its caller; 0 if not seen */
	__u8 fadvise; /* 1: no caller seen, but the fadvise call it came in */
	__u8 advice;  /* that call's advice, FADVISE_ADVICE_OTHER past the known ones */
	__u8 pad[6];
};

/*
 * A site's slot in the sites array, where a drain, a work or a local drain
 * keeps it once known (no key lookup after): NO_SLOT until then.
 */
#define NO_SLOT ((__u32)-1)

/*
 * The filter key's placeholder in the workqueue programs' instructions: a
 * 64-bit immediate that user space replaces with lru_add_drain_per_cpu's
 * address before the load (bpf/globals.bpf.h drain_work_fn(), src/filterkey.c).
 * Not a kernel address: a program loaded with it unreplaced matches nothing.
 */
#define FILTER_KEY_MARK 0x0d5a1f7e4b3c2a19ULL

/*
 * lru_add_drain() calls in flight, by tid: entry time and the caller's site
 * (site_slot as a drain's). Here for tests/bpf, which seeds them.
 */
struct local_call {
	__u64 start_ns;
	struct drain_source source; /* its caller only: a local drain has no fadvise source */
	struct site_key site;
	__u32 site_slot;
	__u32 pad;
};

/* A target CPU's counts and histograms, by index: cpu_stats.count[] and .hist[]. */
enum cpu_count {
	CPU_WORKS,
	CPU_SELF_WORKS,
	CPU_IPIS,
	CPU_COUNTS,
};

enum cpu_hist {
	CPU_DISPATCH_NS,
	CPU_RUN_NS,
	CPU_HISTS,
};

/* Per target CPU: the "victim" side. */
struct cpu_stats {
	__u64 count[CPU_COUNTS];
	struct hist hist[CPU_HISTS];
} __attribute__((aligned(DRAINSTAT_LINE)));

/* POSIX_FADV_NORMAL..POSIX_FADV_NOREUSE are 0..5; anything else counts as "other". */
#define FADVISE_ADVICE_OTHER 6
#define FADVISE_ADVICE_SLOTS 7
#define FADVISE_DONTNEED     4

/* An advice's calls: latency_ns.count (one atomic a call less on the fadvise exit). */
struct fadvise_stats {
	__u64 escalations;
	struct hist latency_ns;
};

/* The slow-drain log (-T): one event per drain over the threshold, by ring buffer. */
#define SLOW_MAX_TARGETS 16

/* How a CPU of a slow drain was drained: slow_target.how */
enum slow_how {
	SLOW_REMOTE,   /* a work, queued from another CPU */
	SLOW_SELF,     /* a work on the CPU the caller queued it from (its entry's may differ) */
	SLOW_IN_PLACE, /* by the caller itself, no work: dispatch 0, run its length */
};

struct slow_target {
	__u32 cpu;
	__u32 how; /* enum slow_how */
	__u64 dispatch_ns;
	__u64 run_ns;
};

struct slow_drain_event {
	__u64 end_ns;  /* bpf_ktime_get_ns() when the drain ended */
	__u64 wait_ns; /* exact where the entry is visible, else first queue to last end */
	__u64 lock_ns; /* 0 where the entry is not visible */
	__u32 pid;
	__u32 tid;
	__u32 caller_cpu;
	__s32 kstack_id;     /* in the stacks map */
	__s32 ustack_id;     /* in the ustacks map */
	__u64 kstack_ret_ip; /* site_key.ret_ip: the caller the kernel stack lacks, or 0 */
	__u64 cgroup_id;     /* the caller's cgroup v2 id, whatever --by keys */
	/* works and CPUs drained in place; the first SLOW_MAX_TARGETS are listed */
	__u32 nr_targets;
	__u32 nr_in_place; /* of nr_targets: drained in place */
	char comm[DRAINSTAT_COMM_LEN];
	struct slow_target targets[SLOW_MAX_TARGETS];
};

/*
 * The calls a drain is in (drain_state.in_call): the API, lru_add_drain_all()
 * or lru_cache_disable(), and __lru_add_drain_all() inside it or alone.
 */
#define CALL_API   1U
#define CALL_INNER 2U

/*
 * The state of the drain a caller thread has open (or had last), by tid: one
 * entry a task, rewritten in place when the task drains again. User space
 * reads the drains in flight from it when a report is made: a drain is in
 * flight while in_call or pending. Its states and their transitions:
 *
 * Entry visible (full and kprobe modes: by_entry), the exit records the wait:
 *
 *   entry --> in_call, works 0 --first queue--> in_call, pending > 0
 *             a mutex waiter, or in its         lock_ns set
 *             own local drain (own_*)                | works end
 *               |                                    v
 *               | exit                          in_call, pending 0
 *               v                                    | exit (of the level entered first)
 *             ended, no work: empty, or              v
 *             own-only if own_batched           ended: in_call 0
 *
 *   __lru_add_drain_all() entered inside the API adds its level to in_call:
 *   the same drain. Any other entry that finds in_call set comes after an
 *   exit that went unseen (both twins missed it): that drain ends there, and
 *   this one begins.
 *
 * Tracepoint mode (no entry seen: a drain is the works its task queues back
 * to back, see starts_new_drain()), and a drain whose entry went unseen in the
 * others (partial_waits), the last work's end records the wait:
 *
 *   a queue that starts a drain --> pending > 0 --last work ends--> closed
 *                                      ^                              |
 *                                      +----- a queue that joins -----+
 *                                             (drain_join(): closed 0,
 *                                             recorded_wait_ns taken back)
 *
 *   A queue that starts a drain rewrites the entry, whatever its state.
 *
 * In either mode: counted at its begin without -C, under -C at its first work
 * to a selected CPU (a drain that reaches none is never counted); logged
 * (tracepoint mode, -T) once its slow-drain event is out.
 */
struct drain_state {
	/* Who and where from: set when the drain begins, then kept */
	__u64 start_ns; /* entry, or first queue in tracepoint mode; with the tid, names it */
	struct drain_source source; /* where it came from, if known without a stack walk */
	__u64 fadvise_start_ns;	    /* start of the fadvise call it came in, 0 if none */
	struct site_key site;
	__u32 site_slot; /* its site's slot (NO_SLOT: none yet) */
	__u32 tgid;
	__u32 caller_cpu;
	__u32 forced; /* lru_cache_disable() */

	/* Its state, as drawn above */
	__u8 by_entry; /* begun at entry */
	__u8 in_call;  /* between entry and exit: the CALL_* levels entered */
	__u8 counted;  /* counted in its site */
	__u8 logged;   /* tracepoint mode, -T: its slow-drain event is out */
	__u32 closed;  /* tracepoint mode: its wait is recorded (see drain_close()) */
	__u32 pending; /* works queued and not ended */
	__u32 works;   /* works queued */

	/* Tracepoint mode: the task's last queue, for starts_new_drain() */
	__u64 last_queue_ns;
	__u64 last_queue_nvcsw; /* the task's voluntary switches then */
	__u64 recorded_wait_ns; /* the wait in its site's histogram, 0 if none */
	__s32 last_target_cpu;

	/* Entry visible (full and kprobe modes): its phases before its first work, the twins */
	/* its own local drain (6.18+: before the mutex) found the caller's CPU batched */
	__u32 own_batched;
	__u64 own_start_ns; /* its own local drain's entry, 0 if none */
	__u64 own_ns;	    /* and its length, 0 until it returned */
	__u64 lock_ns;	    /* the wait for the mutex, up to its first queue or in-place drain */
	/* CPUs it drained in place (SITE_IN_PLACE); the one it drains now, since when (0: none) */
	__u32 in_place;
	__u32 in_place_cpu;
	__u64 in_place_start_ns;
	/*
	 * Full mode: the trampoline frame of the entry or exit that the first
	 * of its two programs handled, until the second sees it (see
	 * drain_enter()); 0 when none is waiting.
	 */
	__u64 entry_ctx;
	__u64 exit_ctx;

	/* The slow-drain log (-T) */
	__u64 slowest_work_ns; /* dispatch + run of its slowest work */
	__s32 ustack_id;
	/* made without its task's mark in drained_tasks (see drain_state_get()) */
	__u32 unmarked;
};

/*
 * The drain states of the tasks, each in the slot of its task's tid %
 * DRAIN_SLOTS while the task lives: an array lookup at each work's end and
 * queue where a hash lookup was, the same slot wherever the task runs. A task
 * claims its slot (compare-and-swap of tid from 0) when it first drains and
 * frees it at its exit; nobody else writes its tid. A task whose slot another
 * live task holds (their tids collide) keeps its state in the hash drains,
 * where the lookups go while drains_moved says any is there. User space reads
 * the slots in place (mmapped).
 */
#define DRAIN_SLOTS 1024

struct drain_slot {
	__u32 tid; /* its task, 0: free */
	__u32 pad;
	struct drain_state d;
} __attribute__((aligned(DRAINSTAT_LINE)));

/*
 * A drain is in flight until its caller returns where its entry was seen,
 * else until its last work ends: the one test of both sides (BPF's check of
 * the callers, user space's reading of the drains).
 */
static inline int drain_in_flight(const struct drain_state *d)
{
	return d->by_entry ? d->in_call != 0 : d->pending && !d->closed;
}

/*
 * Whether the drain reached another CPU yet: queued a work, or drains or
 * drained one in place. The first such reach ends its lock phase; a drain that
 * returns with none is empty (or own-only).
 */
static inline int drain_reached_cpu(const struct drain_state *d)
{
	return d->works || d->in_place || d->in_place_start_ns;
}

/*
 * The caller of a drain in flight as the kernel has it, for the check that the
 * drain is in flight indeed (drainstat_check_callers, a task iterator run when
 * a report is made): one a task whose drain state is in flight. Hooks can miss
 * an end (drainstat attached mid-call, a kretprobe with no free instance, a
 * work run elsewhere after its CPU went offline): state that only the events
 * maintain would then outlive its drain.
 */
#define CALLER_ON_CPU 1U /* running at the check: its kernel stack cannot be read */
/*
 * off every CPU from before its drain state was read to after its stack was
 * (no switch in between): the stack is where it sleeps, in its drain or not
 */
#define CALLER_STILL  2U
#define CALLER_EXITED 4U /* exiting, or a zombie: out of any drain */

struct caller_check {
	__u32 tid;
	__u32 flags;	/* CALLER_* */
	__u64 start_ns; /* its drain's, when read */
	__u64 nvcsw;	/* its voluntary context switches */
	__u32 nr_ips;
	__u32 pad;
	__u64 ips[DRAINSTAT_MAX_STACK_DEPTH]; /* its kernel stack, innermost first */
};

/*
 * A drain whose caller the check found out of it: drainstat_end_phantom ends
 * it (test-run by user space), if its task's state is still that drain.
 */
struct phantom {
	__u32 tid;
	__u32 done; /* set by the program when it ended the drain */
	__u64 start_ns;
	__u32 counter; /* and the one it counted it in (phantom_counter()) */
	__u32 pad;
};

/*
 * A queued work, by its target CPU: the work item (lru_add_drain_work) is per
 * CPU, so a CPU has at most one in flight; work says which, 0 when none. User
 * space reads the array in place when a report is made.
 */
struct work_state {
	__u64 work;
	__u64 queue_ns;
	__u64 start_ns;
	__u64 drain_start_ns; /* its drain's start_ns: with caller_tid, the drain it belongs to */
	struct site_key site;
	__u32 site_slot; /* as its drain's */
	__u32 caller_tid;
	__u32 caller_cpu;
	__u32 pad;
	/* this CPU's drain work's address, once a queue showed it (see work_cpus) */
	__u64 cpu_work;
} __attribute__((aligned(DRAINSTAT_LINE)));

/* What runs on a CPU now (drainstat_running); flags: RUNNING_*. */
#define RUNNING_KNOWN	1U  /* the runqueue was read: the rest is set */
#define RUNNING_IDLE	2U  /* the CPU's idle task runs */
#define RUNNING_SINCE	4U  /* running_ns is known (CONFIG_SCHED_INFO) */
#define RUNNING_KTHREAD 8U  /* a kernel thread (PF_KTHREAD): its comm is the kernel's */
#define RUNNING_WORKER	16U /* a workqueue worker, a kworker (PF_WQ_WORKER) */

struct running_task {
	__u64 running_ns; /* since it was last switched in */
	__u64 cgroup_id;  /* its cgroup v2 id (bpf_get_current_cgroup_id()) */
	__u32 cpu;
	__u32 flags;
	__u32 tid;
	__u32 tgid;
	__u32 policy; /* SCHED_NORMAL 0, FIFO 1, RR 2, BATCH 3, IDLE 5, DEADLINE 6, EXT 7 */
	__s32 prio;   /* rt_priority for FIFO and RR, else nice */
	char comm[DRAINSTAT_COMM_LEN];
};

/*
 * One level of a cgroup's path as the kernel names it (drainstat_name_cgroup):
 * its top CGROUP_NAME_HEAD levels under the root and its last
 * CGROUP_NAME_TAIL, top first; a path deeper than both has the levels between
 * left out. A name longer than the kernel allows (255) is cut.
 */
#define CGROUP_NAME_HEAD 16
#define CGROUP_NAME_TAIL 16
#define CGROUP_NAME_LEN	 256
/* cgroup_parents: the parents of the cgroups removed last, so that a cgroup gone is named by its
 * nearest living ancestor */
#define CGROUP_PARENTS_MAX 8192

struct cgroup_level {
	__u64 id;    /* this level's cgroup id */
	__u32 level; /* its depth: 1 under the root */
	__u32 len;   /* of name, without its NUL */
	char name[CGROUP_NAME_LEN];
};

/* Counters of events not measured as they should be; every one is shown. */
enum drainstat_counter {
	CNT_WORK_MAP_FULL,    /* a queued work could not be tracked */
	CNT_SITE_MAP_FULL,    /* a site could not be aggregated */
	CNT_STACK_LOST,	      /* bpf_get_stackid() failed: hash collision or full */
	CNT_FADVISE_MAP_FULL, /* an fadvise call could not be tracked */
	CNT_LOCAL_MAP_FULL,   /* a local drain could not be tracked */
	/* a local drain's new site found the local drains' share full (local_sites_max()) */
	CNT_LOCAL_SITE_MAP_FULL,
	CNT_SLOW_LOST,	      /* a slow-drain event found the ring buffer full */
	CNT_CPU_OUT_OF_RANGE, /* a target CPU beyond the cpu map */
	CNT_WORK_UNSEEN,      /* a work whose queue or start came before tracing began */
	CNT_WAIT_REVISED,     /* a drain grew after its wait was recorded (tracepoint mode) */
	/*
	 * Full mode: BPF counts +1 when a drain entry's or exit's first twin
	 * runs and -1 when its second does (see drain_enter()); user space
	 * reads that, then replaces it with the kernel's skips of twins, each
	 * covered by the other twin unless counted in CNT_SKIPPED.
	 */
	CNT_TWIN_SKIPS,
	CNT_SKIPPED, /* runs the kernel skipped that nothing covered: user space fills it */
	/*
	 * drains in flight that the check of their callers found ended (the
	 * caller gone, or out of the drain): their end was missed, their wait
	 * is not recorded
	 */
	CNT_PHANTOMS_ENDED,
	/*
	 * full mode: phantoms whose drain began before drainstat's last
	 * trampoline attach returned (attach_end_ns), whose end that attach
	 * dropped: the kernel replaces a function's trampoline at each attach,
	 * and a call still inside the old one returns past its fexit programs
	 * (bpf_tramp_image_put()); not in CNT_PHANTOMS_ENDED
	 */
	CNT_PHANTOMS_ATTACHING,
	/*
	 * full and kprobe modes: drains whose entry was missed (drainstat
	 * attached mid-call): begun at their first queue and ended at their
	 * last work's end, their wait from there (a lower bound)
	 */
	CNT_PARTIAL_WAITS,
	/*
	 * kprobe mode: drain and local drain exits a kretprobe missed, all its
	 * instances taken (the kernel's count): user space fills it
	 */
	CNT_KRETPROBE_MISSED,
	/*
	 * -T: slow-drain events the ring buffer still held at the end, read too
	 * late (the consumer reads a batch at a time): user space fills it
	 */
	CNT_SLOW_UNREAD,
	/* -T: user frames not named, past the symbols' budget (src/umaps.h): user space */
	CNT_UFRAMES_OVER_BUDGET,
	CNT_NR,
};

#endif /* DRAINSTAT_H */
