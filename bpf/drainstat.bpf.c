// SPDX-License-Identifier: GPL-2.0
/*
 * drainstat's kernel side: follows the work items of lru_add_drain_all() from
 * queue to end, groups them into drains, and aggregates per site, per target CPU
 * and per fadvise advice in maps that user space reads once per interval.
 * Nothing per event crosses to user space.
 *
 * Where the drain's entry and exit are visible (full mode: fentry/fexit;
 * kprobe mode: kprobe/kretprobe) a drain is exactly one call; in tracepoint
 * mode it is inferred from the works. Each handler has one body below, and
 * thin wrappers per attach type; user space loads the ones its mode uses.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "drainstat.h"
#include "hist.bpf.h"
#include "maps.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * The work function that marks an LRU drain work: lru_add_drain_per_cpu's
 * address. User space writes it after load and before attach (tracer.c), so
 * that its scan of /proc/kallsyms runs beside libbpf's load, not before it. An
 * untyped __ksym would make libbpf read all of /proc/kallsyms before the load.
 */
__u64 drain_work_fn SEC(".data.symbols");
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
 * -s and -T: every drain's kernel stack is taken. Otherwise a drain whose
 * caller is known without a stack walk (see drain_source()) takes the site of
 * the first drain of that caller and comm, and its stack: a walk costs about
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

/* A task's posix_fadvise() call; start_ns 0 when none is in flight. */
struct fadvise_call {
	__u64 start_ns;
	__u32 advice;
	__u32 escalated;
};

/*
 * Kernel stacks by id. bpf_get_stackid() fails (-EEXIST, counted as
 * stack_lost) when two stacks hash to one bucket: with local drains a run
 * sees dozens of distinct stacks, so the buckets are many.
 */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, DRAINSTAT_MAX_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

/*
 * Sites: the key's slot in site_slots, its numbers in the sites array, which
 * user space reads in place (mmapped: no copy of 12 KB a site an interval).
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

/*
 * Where a drain came from when that is known without a stack walk: the return
 * address into its caller (entry visible), or the advice of the fadvise call
 * it came in (SOURCE_FADVISE), and its comm.
 */
struct site_source {
	__u64 source;
	char comm[DRAINSTAT_COMM_LEN];
};

#define SOURCE_FADVISE(advice) (1 + (__u64)(advice)) /* never a kernel address */

/* The site a source had at its first drain: its key and slot (site_slot's + 1, or 0). */
struct site_named {
	struct site_key key;
	__u32 site_slot;
	__u32 pad;
};

/* LRU: a source that falls out takes a stack again at its next drain. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct site_source);
	__type(value, struct site_named);
} site_sources SEC(".maps");

/* Kernel stacks walked (drains and local drains), per CPU: the -v line at exit. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} stack_walks SEC(".maps");

/* Per target CPU; user space reads it in place (mmapped), as the sites. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024); /* resized to the possible CPUs before load */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct cpu_stats);
} cpus SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024); /* resized to the possible CPUs before load */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct work_state);
} works SEC(".maps");

/*
 * LRU: a finished drain's state is only needed until its task drains again,
 * and its entry is reused in place by that next drain.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct drain_state);
} drains SEC(".maps");

/* LRU, by task: a task's entry is reused by its every call, never deleted. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct fadvise_call);
} fadvise_calls SEC(".maps");

/* lru_add_drain() calls in flight: entry time and the caller's site (site_slot as a drain's). */
struct local_call {
	__u64 start_ns;
	__u64 source; /* as drain_source()'s */
	struct site_key site;
	__u32 site_slot;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct local_call);
} local_calls SEC(".maps");

/* The targets of the drain a task has open, for the slow-drain log. */
struct slow_targets {
	__u32 nr;
	__u32 pad;
	struct slow_target t[SLOW_MAX_TARGETS];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct slow_targets);
} slow_targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1024);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, DRAINSTAT_MAX_STACK_DEPTH * sizeof(__u64));
} ustacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} slow_events SEC(".maps");

static const struct slow_targets zero_targets;
static const struct drain_state zero_drain;
static const struct fadvise_call zero_call;

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

static __always_inline void open_drains_add(__s32 delta)
{
	if (entry_visible)
		__sync_fetch_and_add(&open_drains, delta);
}

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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ipi_gate);
} ipi_gate SEC(".maps");

__s32 ipi_gates_up;

/* Slots of the sites array taken so far: may pass its size by the CPUs that raced for the last. */
__u32 site_slots_used;

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

/*
 * The numbers of a site: by the slot a drain or work keeps (site_slot, the slot
 * + 1), else by key; NULL if it has no slot.
 */
static __always_inline struct site_stats *site_stats_of(const struct site_key *key, __u32 site_slot)
{
	__u32 slot = site_slot - 1, *found;

	if (site_slot)
		return bpf_map_lookup_elem(&sites, &slot);
	found = bpf_map_lookup_elem(&site_slots, key);
	return found ? bpf_map_lookup_elem(&sites, found) : NULL;
}

/*
 * A new slot for key. Two CPUs may take one each for the same key: the one
 * whose site_slots entry lands keeps its slot, the other's stays never ready.
 */
static __always_inline struct site_stats *site_stats_new(const struct site_key *key)
{
	struct site_stats *s;
	__u32 slot;

	if (site_slots_used >= max_sites) /* no fetch_add once full: the count cannot wrap */
		return NULL;
	slot = __sync_fetch_and_add(&site_slots_used, 1);
	s = bpf_map_lookup_elem(&sites, &slot);
	if (!s)
		return NULL;
	s->key = *key;
	s->slot = slot;
	if (bpf_map_update_elem(&site_slots, key, &slot, BPF_NOEXIST))
		return site_stats_of(key, 0);
	/* an exchange orders the key before ready for the reader */
	__sync_lock_test_and_set(&s->ready, 1);
	return s;
}

/*
 * The numbers of a site, made if new; NULL when there is no room (counted).
 * With site_slot, the slot is kept there for site_stats_of() (0 if none).
 */
static __always_inline struct site_stats *site_stats_get(const struct site_key *key,
							 __u32 *site_slot)
{
	struct site_stats *s = site_stats_of(key, 0);

	if (!s)
		s = site_stats_new(key);
	if (!s)
		count(CNT_SITE_MAP_FULL);
	if (site_slot)
		*site_slot = s ? s->slot + 1 : 0;
	return s;
}

/* The task's posix_fadvise() call in flight, NULL if none. */
static __always_inline struct fadvise_call *fadvise_call_of(__u32 tid)
{
	struct fadvise_call *f = bpf_map_lookup_elem(&fadvise_calls, &tid);

	return f && f->start_ns ? f : NULL;
}

/*
 * Tracepoint mode: whether a work the task queues opens a new drain. One
 * fadvise call drains once at most (generic_fadvise()), so a work queued in
 * the same call as the drain's first is the drain's, whatever the rules say:
 * a caller held up between two queues (an interrupt, preemption) while its
 * first works ended would otherwise split its drain in two. *f: the task's
 * fadvise call when this looked it up, for drain_open().
 */
static __always_inline bool starts_new_drain(const struct drain_state *d, __u64 now, __u64 nvcsw,
					     int target_cpu, __u32 tid, struct fadvise_call **f)
{
	if (d->nvcsw == nvcsw && target_cpu > d->last_target_cpu &&
	    (d->pending || now - d->last_queue_ns <= join_window_ns))
		return false;
	if (!d->fadvise_ns)
		return true;
	*f = fadvise_call_of(tid);
	return !*f || (*f)->start_ns != d->fadvise_ns;
}

/* A drain started in fadvise call f (NULL: none): a DONTNEED escalated. Its start, or 0. */
static __always_inline __u64 mark_escalation(struct fadvise_call *f)
{
	if (!f)
		return 0;
	if (f->advice == FADVISE_DONTNEED)
		f->escalated = 1;
	return f->start_ns;
}

/* -T: what a slow-drain event needs that the aggregates do not, taken at open. */
static __always_inline void slow_open(void *ctx, struct drain_state *d, __u32 tid)
{
	if (!slow_threshold_ns)
		return;
	d->ustack_id = bpf_get_stackid(ctx, &ustacks, BPF_F_USER_STACK);
	bpf_map_update_elem(&slow_targets, &tid, &zero_targets, BPF_ANY);
}

static __always_inline void slow_record(struct drain_state *d, __u32 tid, __u32 cpu, __u64 dispatch,
					__u64 run)
{
	struct slow_targets *t;
	__u32 i;

	if (!slow_threshold_ns)
		return;
	if (dispatch + run > d->slowest_work_ns)
		d->slowest_work_ns = dispatch + run;
	t = bpf_map_lookup_elem(&slow_targets, &tid);
	if (!t)
		return;
	i = __sync_fetch_and_add(&t->nr, 1);
	if (i >= SLOW_MAX_TARGETS)
		return;
	t->t[i].cpu = cpu;
	t->t[i].dispatch_ns = dispatch;
	t->t[i].run_ns = run;
}

static __always_inline void slow_emit(const struct drain_state *d, __u32 tid, __u64 now, __u64 wait)
{
	struct slow_targets *t = bpf_map_lookup_elem(&slow_targets, &tid);
	struct slow_drain_event *e;
	int i;

	e = bpf_ringbuf_reserve(&slow_events, sizeof(*e), 0);
	if (!e) {
		count(CNT_SLOW_LOST);
		return;
	}
	e->end_ns = now;
	e->wait_ns = wait;
	e->lock_ns = d->lock_ns;
	e->pid = d->tgid;
	e->tid = tid;
	e->caller_cpu = d->caller_cpu;
	e->kstack_id = d->site.stack_id;
	e->kstack_ret_ip = d->site.ret_ip;
	e->ustack_id = d->ustack_id;
	__builtin_memcpy(e->comm, d->site.comm, sizeof(e->comm));
	e->nr_targets = t ? t->nr : 0;
	for (i = 0; i < SLOW_MAX_TARGETS; i++) {
		if (t)
			e->targets[i] = t->t[i];
		else
			e->targets[i] = zero_targets.t[i];
	}
	bpf_ringbuf_submit(e, 0);
}

/* The task's drain state: its entry, made the first time the task drains. */
static __always_inline struct drain_state *drain_state_get(__u32 tid)
{
	return lookup_or_insert(&drains, &tid, &zero_drain);
}

/* The caller's kernel stack into site (comm already there); ret_ip as site_key's. */
static __always_inline void site_walk(void *ctx, struct site_key *site, __u64 ret_ip)
{
	__u32 zero = 0;
	__u64 *walks = bpf_map_lookup_elem(&stack_walks, &zero);

	if (walks)
		__sync_fetch_and_add(walks, 1);
	site->ret_ip = ret_ip;
	site->stack_id = bpf_get_stackid(ctx, &stacks, 0);
	if (site->stack_id < 0)
		count(CNT_STACK_LOST);
}

/*
 * The site of a drain or local drain from source (0: none) and the comm in
 * site, into site and *site_slot: the site its source had first, else a stack
 * walk. The slot stays 0 when only the key is known.
 */
static __always_inline void site_name(void *ctx, struct site_key *site, __u32 *site_slot,
				      __u64 source, __u64 ret_ip)
{
	struct site_source k = {.source = source};
	struct site_named *named;

	if (source && !every_stack) {
		__builtin_memcpy(k.comm, site->comm, sizeof(k.comm));
		named = bpf_map_lookup_elem(&site_sources, &k);
		if (named) {
			*site = named->key;
			*site_slot = named->site_slot;
			return;
		}
	}
	site_walk(ctx, site, ret_ip);
}

/* A source's first site, once its stack is known and has a slot: its later drains walk no stack. */
static __always_inline void site_remember(__u64 source, const struct site_key *site,
					  __u32 site_slot)
{
	struct site_source k = {.source = source};
	struct site_named named = {.key = *site, .site_slot = site_slot};

	if (!source || every_stack || site->stack_id < 0 || !site_slot)
		return;
	__builtin_memcpy(k.comm, site->comm, sizeof(k.comm));
	bpf_map_update_elem(&site_sources, &k, &named, BPF_NOEXIST);
}

/*
 * Where a drain comes from when no stack walk is needed to say (0: unknown):
 * the return address into its caller, else the fadvise call it came in
 * (generic_fadvise() is the only drain inside one).
 */
static __always_inline __u64 drain_source(__u64 caller, const struct fadvise_call *f)
{
	if (caller)
		return caller;
	return f ? SOURCE_FADVISE(f->advice < FADVISE_ADVICE_OTHER ? f->advice
								   : FADVISE_ADVICE_OTHER)
		 : 0;
}

static __always_inline bool same_comm(const char *a, const char *b)
{
	const __u64 *x = (const void *)a, *y = (const void *)b;

	return x[0] == y[0] && x[1] == y[1];
}

/*
 * A new drain in the task's entry d (rewritten in place): its site, start and
 * caller; source as drain_source()'s, ret_ip as site_key's. A task that
 * drains again from where it did last keeps its site: no lookup at all.
 */
static __always_inline void drain_reset(void *ctx, struct drain_state *d, __u64 pid_tgid, __u64 now,
					__u64 source, __u64 ret_ip)
{
	struct site_key last = d->site;
	__u32 last_slot = d->site_slot;
	__u64 last_source = d->source;
	__u32 tid = (__u32)pid_tgid;

	*d = zero_drain;
	d->id_ns = now;
	d->tgid = (__u32)(pid_tgid >> 32);
	d->caller_cpu = bpf_get_smp_processor_id();
	d->last_target_cpu = -1;
	d->source = source;
	bpf_get_current_comm(d->site.comm, sizeof(d->site.comm));
	if (source && source == last_source && last_slot && !every_stack &&
	    same_comm(d->site.comm, last.comm)) {
		d->site = last;
		d->site_slot = last_slot;
	} else {
		site_name(ctx, &d->site, &d->site_slot, source, ret_ip);
	}
	slow_open(ctx, d, tid);
}

/*
 * The drain counts in its site (s, or NULL: no room): at its begin without -C,
 * else at its first work to a selected CPU, with its lock time, known by then.
 */
static __always_inline void drain_count(struct drain_state *d, struct site_stats *s)
{
	d->counted = 1;
	if (!s)
		return;
	__sync_fetch_and_add(&s->count[SITE_DRAINS], 1);
	if (d->forced)
		__sync_fetch_and_add(&s->count[SITE_FORCED_DRAINS], 1);
	if (d->by_entry && d->works)
		hist_add(&s->hist[SITE_LOCK_NS], d->lock_ns);
}

/*
 * A drain begins in the task's state d, at entry or at its first queue, and
 * the fadvise call it came in (f, or NULL) escalated. caller: the return
 * address into the drain's caller, 0 if unknown; ret_ip as site_key's;
 * forced: lru_cache_disable(). by_entry: seen at its entry.
 */
static __always_inline void drain_begin(void *ctx, struct drain_state *d, __u64 pid_tgid, __u64 now,
					struct fadvise_call *f, __u64 caller, __u64 ret_ip,
					bool forced, bool by_entry)
{
	__u64 source = drain_source(caller, f);
	struct site_stats *s;

	drain_reset(ctx, d, pid_tgid, now, source, ret_ip);
	d->forced = forced;
	d->by_entry = by_entry;
	if (d->site_slot) {
		s = site_stats_of(&d->site, d->site_slot);
	} else {
		s = site_stats_get(&d->site, &d->site_slot);
		site_remember(source, &d->site, d->site_slot);
	}
	if (!filter_victims)
		drain_count(d, s);
	d->fadvise_ns = mark_escalation(f);
	open_drains_add(1);
}

/* Tracepoint mode. f: the task's fadvise call if the caller looked it up, else NULL. */
static __always_inline struct drain_state *
drain_open(void *ctx, struct drain_state *d, __u64 pid_tgid, __u64 now, struct fadvise_call *f)
{
	__u32 tid = (__u32)pid_tgid;

	if (!d)
		d = drain_state_get(tid);
	if (!d)
		return NULL;
	drain_begin(ctx, d, pid_tgid, now, f ? f : fadvise_call_of(tid), 0, 0, false, false);
	return d;
}

/*
 * Tracepoint mode: the caller queues a work to a drain that may have ended: if
 * its wait was recorded, take that wait back; the drain ends again with the
 * new work. A close in flight on another CPU that has not set closed yet is
 * found by the next close instead (drain_close()).
 */
static __always_inline void drain_join(struct drain_state *d)
{
	struct site_stats *s;

	__u64 recorded;

	if (!__sync_lock_test_and_set(&d->closed, 0))
		return;
	/* 0: the close found no site, and its wait is in no histogram */
	recorded = __sync_lock_test_and_set(&d->recorded_wait_ns, 0);
	s = site_stats_of(&d->site, d->site_slot);
	if (s && recorded)
		hist_remove(&s->hist[SITE_WAIT_NS], recorded);
	count(CNT_WAIT_REVISED);
	open_drains_add(1);
}

static __always_inline bool comm_selected(void)
{
	char comm[DRAINSTAT_COMM_LEN];
	int i;

	bpf_get_current_comm(comm, sizeof(comm));
	for (i = 0; i < DRAINSTAT_COMM_LEN; i++) {
		if (comm[i] != filter_comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

/* Whether the current task is one the filters keep: -p, -c and --cgroup. */
static __always_inline bool task_selected(__u64 pid_tgid)
{
	if (filter_tgid && (pid_tgid >> 32) != filter_tgid)
		return false;
	if (filter_cgroup_id && bpf_get_current_cgroup_id() != filter_cgroup_id)
		return false;
	return !filter_comm[0] || comm_selected();
}

/* -C: whether works to this CPU count. */
static __always_inline bool victim_selected(int cpu)
{
	__u32 c, word;

	if (!filter_victims)
		return true;
	c = (__u32)cpu;
	if (cpu < 0 || c >= DRAINSTAT_MAX_CPUS)
		return false;
	/*
	 * The mask bounds the index for the verifier: 6.1's does not carry the
	 * 32-bit compare above over to the 64-bit shift that makes the offset
	 * (an fentry argument's upper half is unknown to it), and refused the
	 * load. The barrier keeps clang from dropping the mask as redundant.
	 */
	word = c / 64;
	barrier_var(word);
	word &= DRAINSTAT_MAX_CPUS / 64 - 1;
	return victim_cpus[word] & (1ULL << (c % 64));
}

/*
 * A work queued by a drain seen at entry: the first one ends the lock phase,
 * which begins at entry or, since 6.18, when the drain's own local drain
 * before the mutex returned; a drain not yet counted (-C) adds it when it is
 * (drain_count()).
 */
static __always_inline void queue_in_call(struct drain_state *d, __u64 now)
{
	struct site_stats *s;

	if (d->works)
		return;
	d->lock_ns = now - (d->own_ns ? d->own_start_ns + d->own_ns : d->id_ns);
	if (!d->counted)
		return;
	s = site_stats_of(&d->site, d->site_slot);
	if (s)
		hist_add(&s->hist[SITE_LOCK_NS], d->lock_ns);
}

static __always_inline void ipi_gate_open(__u32 tid, __u32 target_cpu)
{
	__u32 zero = 0;
	struct ipi_gate *gate = bpf_map_lookup_elem(&ipi_gate, &zero);

	if (!gate)
		return;
	if (!gate->caller_tid)
		__sync_fetch_and_add(&ipi_gates_up, 1);
	gate->caller_tid = tid;
	gate->target_cpu = target_cpu;
}

static __always_inline void on_queue(void *ctx, int target_cpu, struct work_struct *work)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tid = (__u32)pid_tgid;
	__u64 now = bpf_ktime_get_ns();
	__u32 target = (__u32)target_cpu;
	struct fadvise_call *f = NULL;
	struct work_state *ws;
	struct drain_state *d;
	__u64 nvcsw;

	if (!task_selected(pid_tgid))
		return;
	ws = bpf_map_lookup_elem(&works, &target);
	if (!ws) {
		count(CNT_CPU_OUT_OF_RANGE);
		return;
	}
	nvcsw = task->nvcsw;
	d = bpf_map_lookup_elem(&drains, &tid);
	if (d && d->in_call)
		queue_in_call(d, now);
	else if (!d || starts_new_drain(d, now, nvcsw, target_cpu, tid, &f))
		d = drain_open(ctx, d, pid_tgid, now, f);
	else
		drain_join(d);
	if (!d) {
		count(CNT_WORK_MAP_FULL);
		return;
	}
	d->last_queue_ns = now;
	d->last_target_cpu = target_cpu;
	d->nvcsw = nvcsw;
	d->works++;
	__sync_fetch_and_add(&d->pending, 1);
	if (victim_selected(target_cpu)) {
		if (!d->counted)
			drain_count(d, site_stats_of(&d->site, d->site_slot));
		if (count_ipis)
			ipi_gate_open(tid, target);
	}
	/* the CPU runs it only after this returns: the tracepoint comes before insert_work() */
	ws->queue_ns = now;
	ws->start_ns = 0;
	ws->drain_id_ns = d->id_ns;
	ws->site = d->site;
	ws->site_slot = d->site_slot;
	ws->caller_tid = tid;
	ws->caller_cpu = bpf_get_smp_processor_id();
	ws->work = (__u64)work;
}

/* The work in flight on this CPU, if it is work. */
static __always_inline struct work_state *work_on_this_cpu(struct work_struct *work)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct work_state *ws = bpf_map_lookup_elem(&works, &cpu);

	return ws && ws->work == (__u64)work ? ws : NULL;
}

static __always_inline void on_start(struct work_struct *work)
{
	struct work_state *ws = work_on_this_cpu(work);

	if (ws)
		ws->start_ns = bpf_ktime_get_ns();
}

/*
 * A work ended on this CPU, in the execute_end program: only it writes this
 * CPU's works and histograms, and the kernel never runs it twice at once on a
 * CPU (it skips a run that would nest in another or find one preempted):
 * plain adds. IPIS is written from the callers' CPUs, atomically.
 */
static __always_inline void account_cpu(__u32 cpu, bool self, __u64 dispatch, __u64 run)
{
	struct cpu_stats *c = bpf_map_lookup_elem(&cpus, &cpu);

	if (!c) {
		count(CNT_CPU_OUT_OF_RANGE);
		return;
	}
	c->count[CPU_WORKS]++;
	if (self)
		c->count[CPU_SELF_WORKS]++;
	hist_add_local(&c->hist[CPU_DISPATCH_NS], dispatch);
	hist_add_local(&c->hist[CPU_RUN_NS], run);
}

/*
 * Tracepoint mode, the drain's last pending work ended: record the caller's
 * wait. closed makes it once per drain even when a join races a close: a
 * caller that queued between another close's last decrement and its setting
 * closed did not take that wait back, so this later close replaces it.
 */
static __always_inline bool drain_close(struct drain_state *d, struct site_stats *s, __u64 wait)
{
	__u64 earlier;

	/* recorded_wait_ns is what the histogram holds: nothing (0) without a site */
	if (s)
		hist_add(&s->hist[SITE_WAIT_NS], wait);
	earlier = __sync_lock_test_and_set(&d->recorded_wait_ns, s ? wait : 0);
	if (!__sync_lock_test_and_set(&d->closed, 1)) {
		open_drains_add(-1);
		return true;
	}
	if (s && earlier)
		hist_remove(&s->hist[SITE_WAIT_NS], earlier);
	count(CNT_WAIT_REVISED);
	return false;
}

/* The work ended: if it was its drain's last pending one, the caller's wait is known. */
static __always_inline void drain_work_done(const struct work_state *ws, struct site_stats *s,
					    __u64 now, __u32 cpu, __u64 dispatch, __u64 run)
{
	struct drain_state *d = bpf_map_lookup_elem(&drains, &ws->caller_tid);
	__u64 wait;

	if (!d || d->id_ns != ws->drain_id_ns)
		return;
	slow_record(d, ws->caller_tid, cpu, dispatch, run);
	/* a drain seen at entry gets its exact wait at exit */
	if (__sync_fetch_and_add(&d->pending, -1) != 1 || d->by_entry)
		return;
	wait = now - d->id_ns;
	/*
	 * tracepoint mode: the slowest work is what is known to be slow; a drain
	 * that a late work rejoins is logged at its first end. One not counted
	 * (-C) records no wait and is not logged.
	 */
	if (drain_close(d, d->counted ? s : NULL, wait) && d->counted && slow_threshold_ns &&
	    !d->logged && d->slowest_work_ns >= slow_threshold_ns) {
		d->logged = 1;
		slow_emit(d, ws->caller_tid, now, wait);
	}
}

static __always_inline void on_end(struct work_struct *work)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();
	struct work_state *ws = work_on_this_cpu(work);
	struct site_stats *s;
	__u64 dispatch, run;
	bool self;

	if (!ws) {
		/* with a caller filter, the works it dropped at queue time end here too */
		if (!any_caller_filter)
			count(CNT_WORK_UNSEEN);
		return;
	}
	/* no slot: the drain's site found no room; counted again with each work */
	s = ws->site_slot ? site_stats_of(&ws->site, ws->site_slot)
			  : site_stats_get(&ws->site, NULL);
	if (!ws->start_ns) {
		/*
		 * queued while the programs were being attached: its start was
		 * missed, its dispatch and run are unknown; its drain's wait is not
		 */
		count(CNT_WORK_UNSEEN);
		drain_work_done(ws, s, now, cpu, 0, 0);
		ws->work = 0;
		return;
	}
	dispatch = ws->start_ns - ws->queue_ns;
	run = now - ws->start_ns;
	self = cpu == ws->caller_cpu;
	/* -C: a work to a CPU outside it ends its drain's wait, and counts nowhere */
	if (victim_selected((int)cpu)) {
		if (s) {
			__sync_fetch_and_add(&s->count[self ? SITE_SELF_WORKS : SITE_REMOTE_WORKS],
					     1);
			hist_add(&s->hist[SITE_DISPATCH_NS], dispatch);
			hist_add(&s->hist[SITE_RUN_NS], run);
		}
		account_cpu(cpu, self, dispatch, run);
	}
	drain_work_done(ws, s, now, cpu, dispatch, run);
	ws->work = 0;
}

/*
 * A kretprobe on the same function that ran before the kprobe (drainstat's
 * own, bpftrace's) has put its trampoline in the return address's place and
 * parked the return address in an instance on the task's list: the newest
 * that holds a real one is this call's. The kernel's own types, as far as
 * that walk reads them: a kernel has kretprobe instances or rethook nodes
 * (CONFIG_KRETPROBE_ON_RETHOOK), and one built without kprobes (this
 * project's CI kernel) neither, so they are matched by CO-RE, not taken from
 * vmlinux.h.
 */
struct task_struct___kretprobes {
	struct llist_head kretprobe_instances;
	struct llist_head rethooks;
} __attribute__((preserve_access_index));

struct kretprobe_instance___parked {
	struct llist_node llist;
	void *ret_addr;
} __attribute__((preserve_access_index));

struct rethook_node___parked {
	struct llist_node llist;
	unsigned long ret_addr;
} __attribute__((preserve_access_index));

static __always_inline bool trampoline(__u64 ip)
{
	return ip == kretprobe_trampoline || ip == rethook_trampoline;
}

/*
 * Two walks, one a kind of list, each behind the CO-RE checks of the fields it
 * reads: a kernel on rethook has kretprobe_instances too, but its instances
 * hold no list of their own, and the verifier refuses a read of a field the
 * kernel lacks unless it can tell the read is never reached.
 */
static __always_inline __u64 parked_in_kretprobe_instance(void)
{
	struct task_struct___kretprobes *task = (void *)bpf_get_current_task();
	struct kretprobe_instance___parked *ri;
	struct llist_node *node;
	__u64 ret_ip;
	int i;

	if (!bpf_core_field_exists(task->kretprobe_instances) ||
	    !bpf_core_field_exists(struct kretprobe_instance___parked, llist) ||
	    !bpf_core_field_exists(struct kretprobe_instance___parked, ret_addr))
		return 0;
	node = BPF_CORE_READ(task, kretprobe_instances.first);
	for (i = 0; i < 4 && node; i++) {
		ri =
		    (void *)node - bpf_core_field_offset(struct kretprobe_instance___parked, llist);
		ret_ip = (__u64)BPF_CORE_READ(ri, ret_addr);
		if (!trampoline(ret_ip))
			return ret_ip;
		node = BPF_CORE_READ(node, next);
	}
	return 0;
}

static __always_inline __u64 parked_in_rethook_node(void)
{
	struct task_struct___kretprobes *task = (void *)bpf_get_current_task();
	struct rethook_node___parked *rh;
	struct llist_node *node;
	__u64 ret_ip;
	int i;

	if (!bpf_core_field_exists(task->rethooks) ||
	    !bpf_core_field_exists(struct rethook_node___parked, llist) ||
	    !bpf_core_field_exists(struct rethook_node___parked, ret_addr))
		return 0;
	node = BPF_CORE_READ(task, rethooks.first);
	for (i = 0; i < 4 && node; i++) {
		rh = (void *)node - bpf_core_field_offset(struct rethook_node___parked, llist);
		ret_ip = BPF_CORE_READ(rh, ret_addr);
		if (!trampoline(ret_ip))
			return ret_ip;
		node = BPF_CORE_READ(node, next);
	}
	return 0;
}

/* A kernel text address: both arches' kernel halves have the top 16 bits set. */
static __always_inline bool kernel_address(__u64 ip)
{
	return ip >> 48 == 0xffff;
}

/*
 * kprobe mode, at a function's entry: the return address into its caller (one
 * read: x86's top of stack, arm64's link register), 0 if unknown.
 */
static __always_inline __u64 kprobe_caller(struct pt_regs *ctx)
{
	__u64 ret_ip = 0;

	/*
	 * Not BPF_KPROBE_READ_RET_IP(): libbpf 1.1's reads memory at the link
	 * register on arm64
	 */
#if defined(__TARGET_ARCH_arm64)
	ret_ip = PT_REGS_RET_CORE(ctx);
#else
	bpf_probe_read_kernel(&ret_ip, sizeof(ret_ip), (void *)PT_REGS_SP(ctx));
#endif
	if (ret_ip && ret_ip == rethook_trampoline)
		ret_ip = parked_in_rethook_node();
	else if (ret_ip && ret_ip == kretprobe_trampoline)
		ret_ip = parked_in_kretprobe_instance();
	return kernel_address(ret_ip) ? ret_ip : 0;
}

/*
 * site_key.ret_ip at a kprobe: arm64's caller, which a stack taken at a
 * function's first instruction lacks (its frame record is not pushed yet);
 * x86's stack has it.
 */
static __always_inline __u64 kprobe_ret_ip(__u64 caller)
{
#if defined(__TARGET_ARCH_arm64)
	return caller;
#else
	return 0;
#endif
}

/*
 * Slots of the trampoline frame from the traced function's return address to
 * its caller's: x86 pushes the caller's return address right above (call,
 * call); arm64 pushes a frame record (FP, x9: the caller's LR) above the
 * trampoline's own (FP, LR into the function).
 */
#if defined(__TARGET_ARCH_arm64)
#define TRAMP_CALLER_SLOT 2
#else
#define TRAMP_CALLER_SLOT 1
#endif
#define TRAMP_SLOTS 12

/*
 * x86: true if ip is a return address from a direct call of func: a call rel32
 * (e8) ends at ip and lands on func, or in the padding before it (call depth
 * tracking's thunks).
 */
static __always_inline bool returns_from_call_of(__u64 ip, __u64 func)
{
#if defined(__TARGET_ARCH_x86)
	__u8 insn[5];
	__s32 rel;

	if (!kernel_address(ip) || bpf_probe_read_kernel(insn, sizeof(insn), (void *)(ip - 5)))
		return false;
	__builtin_memcpy(&rel, &insn[1], sizeof(rel));
	return insn[0] == 0xe8 && func - (ip + rel) <= 16;
#else
	return false;
#endif
}

/*
 * full mode, at fentry: the return address into the caller, 0 if not found.
 * The trampoline keeps the function's arguments (ctx) below its return value
 * (with an fexit, as here), saved registers and its frame record, whose return
 * address points just past the patched call at the function's start. That
 * slot is looked for within TRAMP_SLOTS above the arguments, so that a
 * trampoline laid out otherwise (another kernel) gives 0 and a stack walk,
 * never a wrong caller. On 7.3 (Debian's 7.3.4) x86 enters the trampoline by a
 * jmp, not a call: no slot points into the function, and the frame record's
 * return address is the caller's (retval, rbp, then generic_fadvise+0x229 at
 * lru_add_drain_all's fentry). Without that slot, the first slot that is the
 * return address of a call of the function is the caller: any other value
 * fails that test, and a caller that calls it indirectly gets a stack walk.
 */
static __always_inline __u64 fentry_caller(void *ctx, int nr_args)
{
	__u64 slots[TRAMP_SLOTS + TRAMP_CALLER_SLOT];
	__u64 func = bpf_get_func_ip(ctx);
	int i;

	if (bpf_probe_read_kernel(slots, sizeof(slots), (__u64 *)ctx + nr_args))
		return 0;
	for (i = 0; i < TRAMP_SLOTS; i++) {
		if (slots[i] - func < 32 && slots[i] > func) {
			__u64 caller = slots[i + TRAMP_CALLER_SLOT];

			return kernel_address(caller) ? caller : 0;
		}
	}
	for (i = 0; i < TRAMP_SLOTS; i++) {
		if (returns_from_call_of(slots[i], func))
			return slots[i];
	}
	return 0;
}

/*
 * Full mode hooks each drain entry and exit with two programs, twins that run
 * the same body. The kernel skips a tracing program while another run of it is
 * on the same CPU (prog->active), and under full preemption (PREEMPT_RT,
 * preempt=full) a run can be preempted: a task preempted inside the exit
 * program made the next task's exit on that CPU go unseen, and its drain stay
 * in flight for good (seen on 6.12-rt). A twin has its own guard, so a call
 * goes unseen only when runs of both are preempted on that CPU at once.
 *
 * Whichever twin runs first handles the call and leaves the call's trampoline
 * frame (ctx, the same for both twins, entry and exit) in the drain's state;
 * the second finds it there and only takes it back. CNT_TWIN_SKIPS counts
 * the calls only one twin saw: +1 from the first, -1 from a second.
 * twin: false in kprobe mode (one program each; ctx unused).
 */
static __always_inline bool twin_second(__u64 *left, void *ctx, bool handled)
{
	if (*left != (__u64)ctx || !handled)
		return false;
	*left = 0;
	count_add(CNT_TWIN_SKIPS, -1);
	return true;
}

static __always_inline void twin_first(__u64 *left, void *ctx, bool twin)
{
	if (!twin)
		return;
	*left = (__u64)ctx;
	count(CNT_TWIN_SKIPS);
}

/*
 * Entry of lru_add_drain_all() or lru_cache_disable() (level CALL_API; forced
 * for the latter), or of __lru_add_drain_all() (CALL_INNER): inside the API it
 * is the same drain. An entry that finds its task still in a drain otherwise
 * comes after an exit both twins missed: that drain ended before this one.
 */
static __always_inline void drain_enter(void *ctx, bool forced, __u8 level, bool twin, int nr_args)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct drain_state *d;
	__u64 caller, ret_ip;

	if (!task_selected(pid_tgid))
		return;
	d = drain_state_get(tid);
	if (!d)
		return;
	if (twin && twin_second(&d->entry_ctx, ctx, d->in_call & level))
		return;
	if (level == CALL_INNER && d->in_call == CALL_API) {
		d->in_call |= CALL_INNER;
		d->exit_ctx = 0;
		twin_first(&d->entry_ctx, ctx, twin);
		return;
	}
	if (d->in_call)
		open_drains_add(-1);
	/* twin: fentry (full mode), else a kprobe */
	caller = twin ? fentry_caller(ctx, nr_args) : kprobe_caller(ctx);
	ret_ip = twin ? 0 : kprobe_ret_ip(caller);
	drain_begin(ctx, d, pid_tgid, bpf_ktime_get_ns(), fadvise_call_of(tid), caller, ret_ip,
		    forced, true);
	d->in_call = level;
	twin_first(&d->entry_ctx, ctx, twin);
}

/* The exit of a drain_enter() level: the API's ends the drain, as does an inner one alone. */
static __always_inline void drain_exit(void *ctx, __u8 level, bool twin)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct drain_state *d = bpf_map_lookup_elem(&drains, &tid);
	struct site_stats *s;
	__u64 now, wait;

	if (!d)
		return;
	if (!(d->in_call & level)) {
		if (twin)
			twin_second(&d->exit_ctx, ctx, true);
		return;
	}
	d->entry_ctx = 0;
	twin_first(&d->exit_ctx, ctx, twin);
	if (level == CALL_INNER && (d->in_call & CALL_API)) {
		d->in_call &= ~CALL_INNER;
		return;
	}
	d->in_call = 0;
	open_drains_add(-1);
	/* under -C, a drain that reached no selected CPU */
	if (!d->counted)
		return;
	now = bpf_ktime_get_ns();
	wait = now - d->id_ns;
	if (slow_threshold_ns && wait >= slow_threshold_ns)
		slow_emit(d, tid, now, wait);
	s = site_stats_of(&d->site, d->site_slot);
	if (!s)
		return;
	hist_add(&s->hist[SITE_WAIT_NS], wait);
	if (d->own_ns)
		hist_add(&s->hist[SITE_OWN_NS], d->own_ns);
	if (!d->works)
		__sync_fetch_and_add(
		    &s->count[d->own_batched ? SITE_OWN_ONLY_DRAINS : SITE_EMPTY_DRAINS], 1);
}

/* CO-RE flavour: the activate batch before it became lru_activate (6.1) */
struct cpu_fbatches___activate {
	struct folio_batch activate;
} __attribute__((preserve_access_index));

/* Folios batched on this CPU: what lru_add_drain() would drain now (0: unknown). */
static __always_inline __u32 own_cpu_batched(void)
{
	const struct cpu_fbatches___activate *old;
	const struct cpu_fbatches *fb;
	__u32 n = 0;

	if (!&cpu_fbatches)
		return 0;
	fb = bpf_this_cpu_ptr(&cpu_fbatches);
	old = (const void *)fb;
	if (bpf_core_field_exists(fb->lru_add))
		n += BPF_CORE_READ(fb, lru_add.nr);
	if (bpf_core_field_exists(fb->lru_deactivate_file))
		n += BPF_CORE_READ(fb, lru_deactivate_file.nr);
	if (bpf_core_field_exists(fb->lru_deactivate))
		n += BPF_CORE_READ(fb, lru_deactivate.nr);
	if (bpf_core_field_exists(fb->lru_lazyfree))
		n += BPF_CORE_READ(fb, lru_lazyfree.nr);
	if (bpf_core_field_exists(fb->lru_activate))
		n += BPF_CORE_READ(fb, lru_activate.nr);
	else if (bpf_core_field_exists(old->activate))
		n += BPF_CORE_READ(old, activate.nr);
	if (bpf_core_field_exists(fb->lru_move_tail))
		n += BPF_CORE_READ(fb, lru_move_tail.nr);
	return n;
}

/*
 * lru_add_drain_cpu() by a task inside a drain, before its first work: the
 * drain's own local drain (since 6.18 __lru_add_drain_all() drains the
 * caller's CPU first, before the mutex, lru_add_drain() inlined there as in
 * Debian's 7.3): timed apart from the lock, and whether it found something to
 * drain, which makes a drain that queues no work not empty. Outside a drain it
 * is a local drain's, or a work's, and nothing here.
 */
static __always_inline void own_enter(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct drain_state *d = bpf_map_lookup_elem(&drains, &tid);

	if (!d || !d->in_call || d->works || d->own_start_ns)
		return;
	d->own_batched = own_cpu_batched() != 0;
	d->own_start_ns = bpf_ktime_get_ns();
}

static __always_inline void own_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct drain_state *d = bpf_map_lookup_elem(&drains, &tid);

	if (d && d->in_call && d->own_start_ns && !d->own_ns)
		d->own_ns = bpf_ktime_get_ns() - d->own_start_ns;
}

/*
 * lru_add_drain(): the local drain; inside a drain call it is part of that
 * drain. caller and ret_ip as drain_begin()'s.
 */
static __always_inline void local_enter(void *ctx, __u64 caller, __u64 ret_ip)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct drain_state *d = bpf_map_lookup_elem(&drains, &tid);
	struct local_call call = {};

	if (!task_selected(pid_tgid))
		return;
	if (d && d->in_call)
		return;
	call.start_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(call.site.comm, sizeof(call.site.comm));
	site_name(ctx, &call.site, &call.site_slot, caller, ret_ip);
	call.source = caller;
	if (bpf_map_update_elem(&local_calls, &tid, &call, BPF_ANY))
		count(CNT_LOCAL_MAP_FULL);
}

static __always_inline void local_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct local_call *call = bpf_map_lookup_elem(&local_calls, &tid);
	struct site_stats *s;

	if (!call)
		return;
	if (call->site_slot) {
		s = site_stats_of(&call->site, call->site_slot);
	} else {
		s = site_stats_get(&call->site, &call->site_slot);
		site_remember(call->source, &call->site, call->site_slot);
	}
	if (s)
		hist_add(&s->hist[SITE_LOCAL_NS], bpf_ktime_get_ns() - call->start_ns);
	bpf_map_delete_elem(&local_calls, &tid);
}

/*
 * An IPI from the caller to a CPU where its drain's work waits, not started:
 * the wakeup of that CPU's worker (sent from __queue_work(), after the
 * queue_work tracepoint), one a work at most.
 */
static __always_inline void on_ipi(__u32 cpu)
{
	struct ipi_gate *gate;
	struct work_state *ws;
	struct site_stats *s;
	struct cpu_stats *c;
	__u32 tid;

	if (!ipi_gates_up)
		return;
	gate = bpf_map_lookup_elem(&ipi_gate, &(__u32){0});
	if (!gate || !gate->caller_tid || gate->target_cpu != cpu)
		return;
	tid = (__u32)bpf_get_current_pid_tgid();
	if (gate->caller_tid != tid)
		return;
	gate->caller_tid = 0;
	__sync_fetch_and_add(&ipi_gates_up, -1);
	ws = bpf_map_lookup_elem(&works, &cpu);
	if (!ws || !ws->work || ws->start_ns || ws->caller_tid != tid)
		return;
	s = site_stats_of(&ws->site, ws->site_slot);
	if (s)
		__sync_fetch_and_add(&s->count[SITE_IPIS], 1);
	c = bpf_map_lookup_elem(&cpus, &cpu);
	if (c)
		__sync_fetch_and_add(&c->count[CPU_IPIS], 1);
}

/*
 * The filter path: every workqueue event on the system comes through here, so
 * it is two loads (the work's function and drain_work_fn, cache-hot) and one
 * compare before returning.
 */
SEC("tp_btf/workqueue_queue_work")
int BPF_PROG(drainstat_queue_work, int req_cpu, struct pool_workqueue *pwq,
	     struct work_struct *work)
{
	if ((__u64)work->func != drain_work_fn)
		return 0;
	/* req_cpu: queue_work_on()'s cpu, the target of a per-CPU drain work */
	on_queue(ctx, req_cpu, work);
	return 0;
}

SEC("tp_btf/workqueue_execute_start")
int BPF_PROG(drainstat_execute_start, struct work_struct *work)
{
	if ((__u64)work->func != drain_work_fn)
		return 0;
	on_start(work);
	return 0;
}

/*
 * The work may be freed by now, hence the function argument. raw_tp, not
 * tp_btf: the verifier refuses tp_btf reads of a function-pointer argument
 * ("arg1 type FUNC_PROTO is not a struct"); raw_tp arguments are plain u64s.
 */
SEC("raw_tp/workqueue_execute_end")
int BPF_PROG(drainstat_execute_end, struct work_struct *work, work_func_t function)
{
	if ((__u64)function != drain_work_fn)
		return 0;
	on_end(work);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_" DRAINSTAT_FADVISE_SYSCALL)
int drainstat_fadvise_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct fadvise_call *call;

	if (!task_selected(pid_tgid))
		return 0;
	call = lookup_or_insert(&fadvise_calls, &tid, &zero_call);
	if (!call) {
		count(CNT_FADVISE_MAP_FULL);
		return 0;
	}
	call->advice = (__u32)ctx->args[3];
	call->escalated = 0;
	call->start_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_" DRAINSTAT_FADVISE_SYSCALL)
int drainstat_fadvise_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct fadvise_call *call;
	struct fadvise_stats *f;
	__u32 slot;

	/* as at entry: the filters first, then the map */
	if (!task_selected(pid_tgid))
		return 0;
	call = bpf_map_lookup_elem(&fadvise_calls, &tid);
	if (!call || !call->start_ns)
		return 0;
	slot = call->advice < FADVISE_ADVICE_OTHER ? call->advice : FADVISE_ADVICE_OTHER;
	f = bpf_map_lookup_elem(&fadvise, &slot);
	if (f) {
		/* the call counted first: a reader never sees more escalations than calls */
		hist_add(&f->latency_ns, bpf_ktime_get_ns() - call->start_ns);
		if (call->escalated)
			__sync_fetch_and_add(&f->escalations, 1);
	}
	call->start_ns = 0;
	return 0;
}

/*
 * Drain entry and exit: lru_add_drain_all(), lru_cache_disable() (forced), and
 * where it has a symbol __lru_add_drain_all(), which generic_fadvise() calls
 * directly since 6.18 (elsewhere it is inlined). The fentry and fexit
 * programs name no function: user space sets each one's target, and picks
 * the set, from its table of the hooked functions (src/hooks.c).
 */
/* A drain hook's twins (see twin_second()): two programs, one body. */
#define TWINS(sec, name, body)                                                                     \
	SEC(sec) int name(unsigned long long *ctx)                                                 \
	{                                                                                          \
		body;                                                                              \
		return 0;                                                                          \
	}                                                                                          \
	SEC(sec) int name##_twin(unsigned long long *ctx)                                          \
	{                                                                                          \
		body;                                                                              \
		return 0;                                                                          \
	}

/* __lru_add_drain_all(bool force_all_cpus) */
TWINS("fentry", drainstat_fentry_drain, drain_enter(ctx, (bool)ctx[0], CALL_INNER, true, 1))
TWINS("fexit", drainstat_fexit_drain, drain_exit(ctx, CALL_INNER, true))
/* lru_add_drain_all(void) */
TWINS("fentry", drainstat_fentry_drain_all, drain_enter(ctx, false, CALL_API, true, 0))
TWINS("fexit", drainstat_fexit_drain_all, drain_exit(ctx, CALL_API, true))
/* lru_cache_disable(void) */
TWINS("fentry", drainstat_fentry_cache_disable, drain_enter(ctx, true, CALL_API, true, 0))
TWINS("fexit", drainstat_fexit_cache_disable, drain_exit(ctx, CALL_API, true))

/* lru_add_drain(void) */
SEC("fentry")
int BPF_PROG(drainstat_fentry_local)
{
	local_enter(ctx, fentry_caller(ctx, 0), 0);
	return 0;
}

SEC("fexit")
int BPF_PROG(drainstat_fexit_local)
{
	local_exit();
	return 0;
}

/* lru_add_drain_cpu(int cpu) */
SEC("fentry")
int BPF_PROG(drainstat_fentry_own)
{
	own_enter();
	return 0;
}

SEC("fexit")
int BPF_PROG(drainstat_fexit_own)
{
	own_exit();
	return 0;
}

/* kprobe mode: the same bodies; user space attaches them to the names it found. */
SEC("kprobe")
int BPF_KPROBE(drainstat_kprobe_drain, bool force_all_cpus)
{
	drain_enter(ctx, force_all_cpus, CALL_INNER, false, 0);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(drainstat_kprobe_drain_all)
{
	drain_enter(ctx, false, CALL_API, false, 0);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(drainstat_kprobe_cache_disable)
{
	drain_enter(ctx, true, CALL_API, false, 0);
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(drainstat_kretprobe_drain)
{
	drain_exit(ctx, CALL_INNER, false);
	return 0;
}

/* lru_add_drain_all() and lru_cache_disable() */
SEC("kretprobe")
int BPF_KRETPROBE(drainstat_kretprobe_api)
{
	drain_exit(ctx, CALL_API, false);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(drainstat_kprobe_local)
{
	__u64 caller = kprobe_caller(ctx);

	local_enter(ctx, caller, kprobe_ret_ip(caller));
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(drainstat_kretprobe_local)
{
	local_exit();
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(drainstat_kprobe_own)
{
	own_enter();
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(drainstat_kretprobe_own)
{
	own_exit();
	return 0;
}

/* Since about 6.4; absent in 6.1, where IPIs are simply not counted. */
SEC("tp_btf/ipi_send_cpu")
int BPF_PROG(drainstat_ipi_send_cpu, const unsigned int cpu, unsigned long callsite, void *callback)
{
	on_ipi(cpu);
	return 0;
}

/*
 * What runs on a CPU that holds a drain work. User space runs this (a test
 * run on that CPU: an IPI) only when a report is made and only for CPUs whose
 * drain work has not started: nothing here runs on the hot paths. The IPI
 * interrupts whatever runs there, so current is that task.
 */
struct running_task running_now; /* read by user space after each run */

/* rt_priority for the real-time policies, nice for the others. */
static __always_inline __s32 priority_of(const struct task_struct *p, __u32 policy)
{
	if (policy == 1 || policy == 2) /* SCHED_FIFO, SCHED_RR */
		return (__s32)p->rt_priority;
	return p->static_prio - 120;
}

/*
 * Now in the runqueue's clock, that of sched_info.last_arrival: rq->clock,
 * updated at each tick and switch. Without group scheduling the task has no
 * path to its runqueue; the time of its last accounting (exec_start, also at
 * each tick) is that clock too where IRQ and steal time are not accounted.
 */
static __always_inline __u64 rq_clock_of(const struct task_struct *p)
{
	if (bpf_core_field_exists(p->se.cfs_rq))
		return BPF_CORE_READ(p, se.cfs_rq, rq, clock);
	return BPF_CORE_READ(p, se.exec_start);
}

SEC("raw_tp")
int drainstat_running(void *ctx)
{
	struct task_struct *p = bpf_get_current_task_btf();
	struct running_task r = {.cpu = bpf_get_smp_processor_id(), .flags = RUNNING_KNOWN};
	__u64 now, since;

	r.tid = (__u32)p->pid;
	r.tgid = (__u32)p->tgid;
	if (!r.tid)
		r.flags |= RUNNING_IDLE;
	r.policy = p->policy;
	r.prio = priority_of(p, r.policy);
	bpf_probe_read_kernel_str(r.comm, sizeof(r.comm), p->comm);
	if (bpf_core_field_exists(p->sched_info.last_arrival)) {
		since = p->sched_info.last_arrival;
		now = rq_clock_of(p);
		if (since && since <= now) {
			r.running_ns = now - since;
			r.flags |= RUNNING_SINCE;
		}
	}
	running_now = r;
	return 0;
}
