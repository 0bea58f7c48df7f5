/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every variable drainstat's per-event programs share, in one place: the
 * symbols user space writes after load, the kernel variable read by name, the
 * settings it writes between open and load, the words of .bss it reads, and
 * the maps, with the value types only the BPF side uses; count(), the one
 * writer of the counters map.
 */
#ifndef GLOBALS_BPF_H
#define GLOBALS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "drainstat.h"

/*
 * The work function that marks an LRU drain work: lru_add_drain_per_cpu's
 * address, an immediate. User space writes it into this instruction before
 * the load (src/filterkey.c), from its scan of /proc/kallsyms, which runs in a
 * thread beside the BTF lookup. As a map value it was a load from a line that
 * is cold where queue_work_on() runs: 10 ns of every workqueue event's 50
 * (doc/performance-history.md, "The filter's compare"). An untyped __ksym
 * would make libbpf read all of /proc/kallsyms before the load.
 */
static __always_inline __u64 drain_work_fn(void)
{
	__u64 fn;

	asm volatile("%[fn] = %[mark] ll" : [fn] "=r"(fn) : [mark] "i"(FILTER_KEY_MARK));
	return fn;
}

/*
 * The return trampolines of kretprobes (kprobe mode): __kretprobe_trampoline,
 * and arch_rethook_trampoline where kretprobes run on rethook (x86 since 5.19).
 * See kprobe_caller().
 */
__u64 kretprobe_trampoline SEC(".data.symbols");
__u64 rethook_trampoline SEC(".data.symbols");

/*
 * This CPU's LRU batches (mm/swap.c, 6.1 and later): what lru_add_drain()
 * drains, the mlock batch aside. Typed, so that libbpf finds it in the
 * kernel's BTF, not in /proc/kallsyms; weak, for a kernel without it. Not
 * mlock_fbatch: absent from 6.1's BTF, libbpf then looks for it in every
 * module's BTF, which needs CAP_SYS_ADMIN and an fd a module (the unit's
 * capabilities and LimitNOFILE on Debian's 6.1 refused the load).
 */
extern const struct cpu_fbatches cpu_fbatches __ksym __weak;

/* Set by user space between open and load. */
/*
 * Filters: of callers (-p, -c, --cgroup; any_caller_filter says whether any is
 * set) and of target CPUs (-C). Every work is followed whatever -C says: a
 * drain is a whole (its wait, its phase in flight, whether it queued
 * anything), and -C only decides what its site and the CPU table count.
 */
const volatile __u32 filter_tgid;
const volatile char filter_comm[DRAINSTAT_COMM_LEN];
const volatile __u64 filter_cgroup_id;
const volatile bool filter_victims;
const volatile __u64 victim_cpus[DRAINSTAT_MAX_CPUS / 64];
const volatile bool any_caller_filter;
/* -T: drains slower than this go to the slow-drain log; 0: no log */
const volatile __u64 slow_threshold_ns;
const volatile bool entry_visible;     /* full and kprobe modes */
const volatile __u32 max_sites = 1024; /* the sites array's size */
/*
 * --by: which of SITE_KEY_COMM and SITE_KEY_CGROUP key the sites. A drain keeps
 * its caller's comm and cgroup whatever it says (the in-flight view and the -T
 * log show them); only the sites' keys leave the others out.
 */
const volatile __u32 site_key_parts = SITE_KEY_COMM | SITE_KEY_CGROUP;
/*
 * -s and -T: every drain's kernel stack is taken. Otherwise a drain whose
 * caller is known without a stack walk (see drain_source()) takes the site of
 * the first drain of that caller, comm and cgroup, and its stack: a walk costs about
 * 2-3 us, most of a drain's BPF time.
 */
const volatile bool every_stack;
/* --ipis, where ipi:ipi_send_cpu exists: the IPI hook is attached, the gates are opened */
const volatile bool count_ipis;
/*
 * Tracepoint mode cannot see a drain's entry: the works one task queues back to
 * back form one drain. A new drain starts when the task slept since its last
 * queue (it has been in flush_work() or on the mutex since), when the target CPU
 * is not above the last one (a drain walks the online CPUs in ascending order),
 * or when all works are done and this long has passed since the last queue.
 */
const volatile __u64 join_window_ns = 1000000;

/*
 * Drains open right now, all tasks, where entry is visible: user space's cheap
 * test of whether a drain is in flight that has no work in flight (a mutex
 * waiter). Approximate by design (it may stay high after a lost exit); it only
 * decides whether to look further. In tracepoint mode a drain is in flight
 * only while it has works in flight, which user space sees in the works array:
 * the hot paths spare themselves this line, which the callers' and the
 * targets' CPUs would take from each other at every drain.
 */
__u32 open_drains;

/* The ipi_gate entries up, all CPUs together (see struct ipi_gate). */
__s32 ipi_gates_up;

/* Slots of the sites array taken so far: may pass its size by the CPUs that raced for the last. */
__u32 site_slots_used;
/*
 * Of those, the slots local drains claimed (site_stats_new()): may pass
 * local_sites_max() by the CPUs that raced for the last claim, which fail.
 */
__u32 local_slots_used;

/* A task's posix_fadvise() call; start_ns 0 when none is in flight. */
struct fadvise_call {
	__u64 start_ns;
	__u32 advice;
	__u32 escalated;
};

/*
 * The calls in flight, each in the slot of its task's tid % FADVISE_SLOTS: an
 * array lookup where a hash lookup was (bench/routes: some 150ns a call less
 * than the hash by tid, and less than task local storage), and the same slot
 * wherever the task runs, migrated or preempted mid-call. A task claims its
 * slot (compare-and-swap of tid from 0) and frees it at its exit; nobody else
 * writes it. A call whose slot another task's call holds (their tids
 * collide) goes to fadvise_calls instead, where its exit and its drain look
 * while fadvise_calls_moved says any call is there.
 */
#define FADVISE_SLOTS 1024

/* A cache line a slot (the map is page-aligned): callers write apart. */
struct fadvise_slot {
	__u32 tid;
	__u32 pad;
	struct fadvise_call call;
} __attribute__((aligned(DRAINSTAT_LINE)));

/* Calls put in fadvise_calls, not yet ended: at least as many as it holds. */
__u32 fadvise_calls_moved;

/* A drain's source (drainstat.h), known, with its comm and cgroup. */
struct site_source {
	struct drain_source source;
	char comm[DRAINSTAT_COMM_LEN];
	__u64 cgroup_id;
};

/* The site a source had at its first drain: its key and slot. */
struct site_named {
	struct site_key key;
	__u32 site_slot;
	__u32 pad;
};

/* The targets of the drain a task has open, for the slow-drain log. */
struct slow_targets {
	__u32 nr;
	__u32 in_place; /* of nr: CPUs drained in place */
	struct slow_target t[SLOW_MAX_TARGETS];
};

/*
 * Per CPU, the drain work queued there last and not yet woken, by its caller
 * and target CPU: the gate of the IPI hook, which runs on every IPI of the
 * system. A work's wakeup IPI is sent by its caller in the same
 * queue_work_on() call, on the CPU of the queue_work tracepoint, with
 * interrupts off in between; the hook takes the gate down at that IPI, so
 * that the caller's other IPIs (the wakeups of its own threads) stop there.
 * Per CPU, so that the hook reads a line no other CPU writes; ipi_gates_up
 * counts the gates up (a gate left up, its CPU polling for work, stays counted
 * until the next queue there): with none, the hook reads one word of .bss,
 * which no CPU writes while nothing drains.
 */
struct ipi_gate {
	__u32 caller_tid; /* 0: down */
	__u32 target_cpu;
};

static const struct slow_targets zero_targets;
static const struct drain_state new_drain = {.site_slot = NO_SLOT};
static const struct fadvise_call zero_call;

/* A stack map of so many buckets: stacks of DRAINSTAT_MAX_STACK_DEPTH frames, by id. */
#define STACK_MAP(buckets)                                                                         \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);                                            \
		__uint(max_entries, buckets);                                                      \
		__uint(key_size, sizeof(__u32));                                                   \
		__uint(value_size, DRAINSTAT_MAX_STACK_DEPTH * sizeof(__u64));                     \
	}

/*
 * Kernel stacks by id. bpf_get_stackid() fails (-EEXIST, counted as
 * stack_lost) when two stacks hash to one bucket: with local drains a run
 * sees dozens of distinct stacks, so the buckets are many.
 */
STACK_MAP(16384) stacks SEC(".maps");

/*
 * Sites: the key's slot in site_slots, its numbers in the sites array, which
 * user space reads in place (mmapped: no copy of 16 KB a site an interval).
 * Both are resized together (--max-sites) before load.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct site_key);
	__type(value, __u32);
} site_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct site_stats);
} sites SEC(".maps");

/* LRU: a source that falls out takes a stack again at its next drain. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct site_source);
	__type(value, struct site_named);
} site_sources SEC(".maps");

/*
 * Sources of local drains (comm and cgroup as site_sources') whose first site
 * found no room: their later local drains are counted as local_site_map_full
 * without a stack walk. A share once full stays full (slots are never freed).
 * LRU: a source that falls out walks a stack again at its next local drain.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct site_source);
	__type(value, __u32);
} local_sources_refused SEC(".maps");

/* Kernel stacks walked (drains and local drains), per CPU: the -v line at exit. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} stack_walks SEC(".maps");

/*
 * An array of one value_type per CPU, by CPU, which user space reads in place
 * (mmapped), as the sites.
 */
#define CPU_ARRAY(value_type)                                                                      \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                                  \
		__uint(max_entries, 1024); /* resized to the possible CPUs before load */          \
		__uint(map_flags, BPF_F_MMAPABLE);                                                 \
		__type(key, __u32);                                                                \
		__type(value, value_type);                                                         \
	}

/* Per target CPU: its works' numbers. */
CPU_ARRAY(struct cpu_stats) cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FADVISE_ADVICE_SLOTS);
	__type(key, __u32);
	__type(value, struct fadvise_stats);
} fadvise SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Per target CPU: its drain work in flight. */
CPU_ARRAY(struct work_state) works SEC(".maps");

/*
 * The target CPU of each CPU's drain work (lru_add_drain_work is per CPU), by
 * its address, put in at its first queue: a work that runs on another CPU than
 * its own (its CPU went offline, and the workqueue ran it elsewhere) is found
 * in its CPU's slot all the same.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024); /* resized to the possible CPUs before load */
	__type(key, __u64);
	__type(value, __u32);
} work_cpus SEC(".maps");

/* The drain states of the tasks, each in its slot (see struct drain_slot). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DRAIN_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct drain_slot);
} drain_slots SEC(".maps");

/* Drain states put in drains, their task's slot taken: as many as it holds. */
__u32 drains_moved;

/*
 * The drain states of tasks whose slot another task holds. A task's entry is
 * reused in place by its next drain, and deleted when the task exits
 * (drain_task_exit()). A hash, not an LRU: an LRU evicts the
 * entries least used, and a stuck drain's is touched by no event; here the
 * state of a drain in flight is never dropped. Full (more tasks that drained
 * alive at once than this), a new task's drains are counted lost
 * (work_map_full).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct drain_state);
} drains SEC(".maps");

/*
 * The tasks that have a drain state, marked in their own task storage
 * when it is made: a thread's exit looks for its state only if the thread has
 * task storage at all (this mark, or another tool's), which one load from its
 * task_struct (hot at its exit) tells. Most exits are of threads that never
 * drained: a lookup in drains for each cost 4.2x an empty program there, one
 * load 1.0x-1.1x (bench/inflight).
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u8);
} drained_tasks SEC(".maps");

/*
 * Drain states whose task has no mark (flagged unmarked): the kernel refuses
 * to make task storage while another task's use of it on the same CPU is
 * preempted (full preemption). While any is there, every thread's exit looks
 * for its state.
 */
__u32 unmarked_states;

/*
 * Full mode: when drainstat's last trampoline attach returned, ~0 while it
 * attaches (set by user space), 0 in the other modes: a drain begun before
 * it that turns out a phantom lost its end to the attach (CNT_PHANTOMS_ATTACHING).
 */
__u64 attach_end_ns;

/* The slot of tid's drain state, whoever holds it. */
static __always_inline struct drain_slot *drain_slot_of(__u32 tid)
{
	__u32 i = tid % DRAIN_SLOTS;

	return bpf_map_lookup_elem(&drain_slots, &i);
}

/* The drain state of task tid, NULL if it has none: in its slot, else in drains. */
static __always_inline struct drain_state *drain_state_of(__u32 tid)
{
	struct drain_slot *s = drain_slot_of(tid);

	if (s && s->tid == tid && tid)
		return &s->d;
	if (!drains_moved)
		return NULL;
	return bpf_map_lookup_elem(&drains, &tid);
}

/* The counter a phantom, the drain d whose end was missed, is counted in. */
static __always_inline enum drainstat_counter phantom_counter(const struct drain_state *d)
{
	return d->start_ns < attach_end_ns ? CNT_PHANTOMS_ATTACHING : CNT_PHANTOMS_ENDED;
}

/* The fadvise calls in flight, in the slot of their tid (see struct fadvise_slot). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FADVISE_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE); /* for the value's page alignment */
	__type(key, __u32);
	__type(value, struct fadvise_slot);
} fadvise_slots SEC(".maps");

/*
 * By tid, the calls moved out of their slot, each deleted at its exit. LRU:
 * one whose exit never ran (the kernel skips a program that would nest in
 * another BPF program on its CPU) is dropped in time.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct fadvise_call);
} fadvise_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct local_call);
} local_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct slow_targets);
} slow_targets SEC(".maps");

/* User stacks by id, for the slow-drain log (-T). */
STACK_MAP(1024) ustacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} slow_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ipi_gate);
} ipi_gate SEC(".maps");

/*
 * Atomic although per CPU: under full preemption a program can be preempted by
 * another on its CPU. delta may be negative: user space sums the CPUs' values
 * modulo 2^64.
 */
static __always_inline void count_add(enum drainstat_counter c, __s64 delta)
{
	__u32 key = c;
	__u64 *v = bpf_map_lookup_elem(&counters, &key);

	if (v)
		__sync_fetch_and_add(v, (__u64)delta);
}

static __always_inline void count(enum drainstat_counter c)
{
	count_add(c, 1);
}

#endif /* GLOBALS_BPF_H */
