// SPDX-License-Identifier: GPL-2.0
/*
 * The baseline for `make bench`: empty programs on the tracepoints and drain
 * functions drainstat uses, so that the cost of drainstat's programs can be read
 * against the cost of merely having a BPF program there; and the floor_ programs,
 * which add only the clock reads that timing a fadvise call cannot do without.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "drainstat.h"
#include "hist.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* A program that does nothing; head: its name and arguments, as BPF_PROG() takes them. */
#define EMPTY(sec, head)                                                                           \
	SEC(sec) int head                                                                          \
	{                                                                                          \
		return 0;                                                                          \
	}

EMPTY("tp_btf/workqueue_queue_work",
      BPF_PROG(empty_queue_work, int req_cpu, struct pool_workqueue *pwq, struct work_struct *work))
EMPTY("tp_btf/workqueue_execute_start", BPF_PROG(empty_execute_start, struct work_struct *work))
EMPTY("raw_tp/workqueue_execute_end",
      BPF_PROG(empty_execute_end, struct work_struct *work, work_func_t function))
EMPTY("tp_btf/ipi_send_cpu",
      BPF_PROG(empty_ipi_send_cpu, const unsigned int cpu, unsigned long callsite, void *callback))

/* tracepoint/ programs, as drainstat's: the syscall tracepoints have no tp_btf form */
EMPTY("tracepoint/syscalls/sys_enter_" DRAINSTAT_FADVISE_SYSCALL, empty_fadvise_enter(void *ctx))
EMPTY("tracepoint/syscalls/sys_exit_" DRAINSTAT_FADVISE_SYSCALL, empty_fadvise_exit(void *ctx))

/*
 * The floor under timing a DONTNEED call: a program at its entry and one at its
 * exit, each reading the clock once (kept in a global, as a timer keeps it).
 * empty_loader --floor loads these in place of the empty ones; bench/run holds
 * drainstat's BPF time per tree walk to them and the empty workqueue programs.
 */
__u64 floor_enter_ns;
__u64 floor_exit_ns;

SEC("tracepoint/syscalls/sys_enter_" DRAINSTAT_FADVISE_SYSCALL)
int floor_fadvise_enter(void *ctx)
{
	floor_enter_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_" DRAINSTAT_FADVISE_SYSCALL)
int floor_fadvise_exit(void *ctx)
{
	floor_exit_ns = bpf_ktime_get_ns();
	return 0;
}

/*
 * The timestamp floor (stamp_): what any latency measurement of a call must do
 * and nothing more. Entry stores one timestamp for the calling task in a hash
 * keyed by tid; exit finds it, subtracts, adds the result to one per-CPU
 * counter and zeroes it. Zeroed, not deleted: the zero is what keeps an exit
 * without an entry of its own (a call begun before attach) from being timed
 * against an older call's start, and the entry stays for the task's next call,
 * which a delete would make pay an insert (an element off the free list, the
 * bucket locked). LRU, so that the tasks gone do not fill it, as drainstat's.
 * bench/run holds drainstat's fadvise programs, per call, to these.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} stamp_starts SEC(".maps");

/* Per CPU, the nanoseconds each timer measured: stamp, then the routes below. */
enum { SUM_STAMP, SUM_HASH, SUM_SLOT, SUM_INDEX, SUM_TASK, SUM_NR };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SUM_NR);
	__type(key, __u32);
	__type(value, __u64);
} timed_ns SEC(".maps");

static __always_inline void timed_add(__u32 timer, __u64 ns)
{
	__u64 *sum = bpf_map_lookup_elem(&timed_ns, &timer);

	if (sum)
		*sum += ns;
}

SEC("tracepoint/syscalls/sys_enter_" DRAINSTAT_FADVISE_SYSCALL)
int stamp_fadvise_enter(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns(), *start;

	start = bpf_map_lookup_elem(&stamp_starts, &tid);
	if (start)
		*start = now;
	else
		bpf_map_update_elem(&stamp_starts, &tid, &now, BPF_NOEXIST);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_" DRAINSTAT_FADVISE_SYSCALL)
int stamp_fadvise_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *start = bpf_map_lookup_elem(&stamp_starts, &tid);

	if (!start || !*start)
		return 0;
	timed_add(SUM_STAMP, bpf_ktime_get_ns() - *start);
	*start = 0;
	return 0;
}

/*
 * The routes drainstat could keep its call in flight by (empty_loader
 * --routes), each doing what drainstat's fadvise programs do with it and no
 * more: entry stores {start, advice, escalated}; exit finds it, adds its time
 * to a per-CPU counter and clears it.
 */
struct route_call {
	__u64 start_ns;
	__u32 advice;
	__u32 escalated;
};

/* A call starts in c. */
static __always_inline void route_start(struct route_call *c, struct trace_event_raw_sys_enter *ctx)
{
	c->advice = (__u32)ctx->args[3];
	c->escalated = 0;
	c->start_ns = bpf_ktime_get_ns();
}

/* The call in c ends: its time to timer's counter, c cleared. */
static __always_inline void route_end(__u32 timer, struct route_call *c)
{
	timed_add(timer, bpf_ktime_get_ns() - c->start_ns);
	c->start_ns = 0;
}

/* hash: today's, an LRU hash by tid whose entry each call reuses */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct route_call);
} route_calls SEC(".maps");

static const struct route_call zero_route_call;

SEC("tracepoint/syscalls/sys_enter_" DRAINSTAT_FADVISE_SYSCALL)
int route_hash_fadvise_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct route_call *c = bpf_map_lookup_elem(&route_calls, &tid);

	if (!c) {
		bpf_map_update_elem(&route_calls, &tid, &zero_route_call, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&route_calls, &tid);
		if (!c)
			return 0;
	}
	route_start(c, ctx);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_" DRAINSTAT_FADVISE_SYSCALL)
int route_hash_fadvise_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct route_call *c = bpf_map_lookup_elem(&route_calls, &tid);

	if (!c || !c->start_ns)
		return 0;
	route_end(SUM_HASH, c);
	return 0;
}

/*
 * slot: a per-CPU slot {tid, call}; a call that finds another task's call in
 * its CPU's slot (that task preempted or asleep mid-call) moves it to the hash
 * first. An exit that finds another task in its slot looks in the hash, then
 * (the task migrated) in the other CPUs' slots.
 */
struct route_slot {
	__u32 tid; /* 0: free */
	__u32 pad;
	struct route_call call;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct route_slot);
} route_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct route_call);
} route_moved SEC(".maps");

const volatile __u32 route_nr_cpus = 1;

SEC("tracepoint/syscalls/sys_enter_" DRAINSTAT_FADVISE_SYSCALL)
int route_slot_fadvise_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	struct route_slot *s = bpf_map_lookup_elem(&route_slots, &zero);

	if (!s)
		return 0;
	if (s->tid && s->tid != tid)
		bpf_map_update_elem(&route_moved, &s->tid, &s->call, BPF_ANY);
	s->tid = tid;
	route_start(&s->call, ctx);
	return 0;
}

/* The task's call in some other CPU's slot: it migrated mid-call. */
static __always_inline struct route_call *route_slot_elsewhere(__u32 tid)
{
	__u32 zero = 0, cpu;

	for (cpu = 0; cpu < route_nr_cpus && cpu < 1024; cpu++) {
		struct route_slot *s = bpf_map_lookup_percpu_elem(&route_slots, &zero, cpu);

		if (s && s->tid == tid) {
			s->tid = 0;
			return &s->call;
		}
	}
	return NULL;
}

SEC("tracepoint/syscalls/sys_exit_" DRAINSTAT_FADVISE_SYSCALL)
int route_slot_fadvise_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	struct route_slot *s = bpf_map_lookup_elem(&route_slots, &zero);
	struct route_call *c;

	if (!s)
		return 0;
	if (s->tid == tid) {
		s->tid = 0;
		timed_add(SUM_SLOT, bpf_ktime_get_ns() - s->call.start_ns);
		return 0;
	}
	c = bpf_map_lookup_elem(&route_moved, &tid);
	if (c) {
		timed_add(SUM_SLOT, bpf_ktime_get_ns() - c->start_ns);
		bpf_map_delete_elem(&route_moved, &tid);
		return 0;
	}
	c = route_slot_elsewhere(tid);
	if (c)
		timed_add(SUM_SLOT, bpf_ktime_get_ns() - c->start_ns);
	return 0;
}

/*
 * index: an array of slots indexed by tid (a hash table with no chains): a
 * task finds its call in the same slot wherever it runs, migrated or not. As
 * drainstat's (bpf/fadvise.bpf.h), a task claims its slot by compare-and-swap
 * of its tid from 0 and frees it at its exit; a call whose slot another task
 * holds (their tids collide) goes to the hash, where the exit that misses its
 * slot looks only while the hash holds some (route_moved_nr).
 */
#define ROUTE_INDEX_SLOTS 1024

/* A cache line a slot: CPUs calling at once write apart. */
struct route_index_slot {
	__u32 tid;
	__u32 pad;
	struct route_call call;
} __attribute__((aligned(DRAINSTAT_LINE)));

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ROUTE_INDEX_SLOTS);
	__type(key, __u32);
	__type(value, struct route_index_slot);
} route_index SEC(".maps");

__u32 route_moved_nr;

SEC("tracepoint/syscalls/sys_enter_" DRAINSTAT_FADVISE_SYSCALL)
int route_index_fadvise_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), i = tid % ROUTE_INDEX_SLOTS;
	struct route_index_slot *s = bpf_map_lookup_elem(&route_index, &i);
	struct route_call *c;
	__u32 owner;

	if (!s)
		return 0;
	owner = __sync_val_compare_and_swap(&s->tid, 0, tid);
	if (!owner || owner == tid) {
		route_start(&s->call, ctx);
		return 0;
	}
	c = bpf_map_lookup_elem(&route_moved, &tid);
	if (!c) {
		if (bpf_map_update_elem(&route_moved, &tid, &(struct route_call){}, BPF_ANY))
			return 0;
		c = bpf_map_lookup_elem(&route_moved, &tid);
		if (!c)
			return 0;
		__sync_fetch_and_add(&route_moved_nr, 1);
	}
	route_start(c, ctx);
	return 0;
}

/*
 * --route index-hist: the index route whose exit adds the call's time to a
 * histogram all CPUs share, with drainstat's atomics (hist_add()), where the
 * others add to a per-CPU counter: the price of drainstat's histogram.
 * --route index-pcpu: the same histogram, one per CPU (hist_add_local()).
 */
enum { ROUTE_HIST_NONE, ROUTE_HIST_SHARED, ROUTE_HIST_PER_CPU };

const volatile __u32 route_index_hist;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist);
} route_hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hist);
} route_cpu_hist SEC(".maps");

static __always_inline void route_index_end(struct route_call *c)
{
	__u32 zero = 0;
	struct hist *h;

	if (route_index_hist == ROUTE_HIST_NONE) {
		route_end(SUM_INDEX, c);
		return;
	}
	h = bpf_map_lookup_elem(route_index_hist == ROUTE_HIST_SHARED ? (void *)&route_hist
								      : (void *)&route_cpu_hist,
				&zero);
	if (h && route_index_hist == ROUTE_HIST_SHARED)
		hist_add(h, bpf_ktime_get_ns() - c->start_ns);
	else if (h)
		hist_add_local(h, bpf_ktime_get_ns() - c->start_ns);
	c->start_ns = 0;
}

SEC("tracepoint/syscalls/sys_exit_" DRAINSTAT_FADVISE_SYSCALL)
int route_index_fadvise_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), i = tid % ROUTE_INDEX_SLOTS;
	struct route_index_slot *s = bpf_map_lookup_elem(&route_index, &i);
	struct route_call *c;

	if (!s)
		return 0;
	if (s->tid == tid) {
		if (s->call.start_ns)
			route_index_end(&s->call);
		__sync_val_compare_and_swap(&s->tid, tid, 0);
		return 0;
	}
	if (!route_moved_nr)
		return 0;
	c = bpf_map_lookup_elem(&route_moved, &tid);
	if (!c)
		return 0;
	route_index_end(c);
	if (!bpf_map_delete_elem(&route_moved, &tid))
		__sync_fetch_and_add(&route_moved_nr, -1);
	return 0;
}

/* task: task local storage, the call kept in the task itself */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct route_call);
} route_task_calls SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_" DRAINSTAT_FADVISE_SYSCALL)
int route_task_fadvise_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct route_call *c = bpf_task_storage_get(&route_task_calls, bpf_get_current_task_btf(),
						    NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!c)
		return 0;
	route_start(c, ctx);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_" DRAINSTAT_FADVISE_SYSCALL)
int route_task_fadvise_exit(void *ctx)
{
	struct route_call *c =
	    bpf_task_storage_get(&route_task_calls, bpf_get_current_task_btf(), NULL, 0);

	if (!c || !c->start_ns)
		return 0;
	route_end(SUM_TASK, c);
	return 0;
}

/*
 * The drain hooks, named empty_<x> after drainstat_<x> so that bench/vm.sh can
 * pair them. empty_loader loads one set: fentry where the kernel allows it, the
 * kprobes (attached by name) otherwise.
 */
EMPTY("fentry/lru_add_drain_all", BPF_PROG(empty_fentry_drain_all))
EMPTY("fexit/lru_add_drain_all", BPF_PROG(empty_fexit_drain_all))
EMPTY("fentry/lru_add_drain", BPF_PROG(empty_fentry_local))
EMPTY("fexit/lru_add_drain", BPF_PROG(empty_fexit_local))
EMPTY("kprobe", BPF_KPROBE(empty_kprobe_drain_all))
EMPTY("kretprobe", BPF_KRETPROBE(empty_kretprobe_drain))
EMPTY("kprobe", BPF_KPROBE(empty_kprobe_local))
EMPTY("kretprobe", BPF_KRETPROBE(empty_kretprobe_local))
