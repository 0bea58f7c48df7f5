/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The check that a drain in flight is in flight indeed, run by user space when
 * a report is made, never on an event: a task iterator that gives the caller
 * of each drain in flight, its kernel stack and whether it ran meanwhile; and
 * the end of a drain the check found ended (a phantom), test-run.
 */
#ifndef INFLIGHT_BPF_H
#define INFLIGHT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "drain.bpf.h"

/* The drain user space asks drainstat_end_phantom to end. */
struct phantom phantom;

static __always_inline __u64 switches_of(const struct task_struct *task)
{
	return task->nvcsw + task->nivcsw;
}

/*
 * Whether the task runs on a CPU now: task_struct.on_cpu is an int up to 6.x
 * and narrower on 7.3 (Debian's 7.3.4), so it is read at the kernel's size.
 */
static __always_inline bool on_cpu_now(const struct task_struct *task)
{
	__u64 v = 0;

	bpf_core_read(&v, bpf_core_field_size(task->on_cpu), &task->on_cpu);
	return v != 0;
}

/*
 * One record a task whose drain is in flight. The stack of a task off a CPU is
 * where it sleeps; the switch counts and on_cpu, read before its drain state
 * and after its stack, tell that it did not run in between (CALLER_STILL).
 */
SEC("iter/task")
int drainstat_check_callers(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct caller_check c = {};
	struct drain_state *d;
	__u64 switches;
	long bytes;
	bool on_cpu;

	if (!task)
		return 0;
	c.tid = (__u32)task->pid;
	switches = switches_of(task);
	on_cpu = on_cpu_now(task);
	d = drain_state_of(c.tid);
	if (!d || !drain_in_flight(d))
		return 0;
	c.start_ns = d->start_ns;
	bytes = bpf_get_task_stack(task, c.ips, sizeof(c.ips), 0);
	c.nr_ips = bytes > 0 ? (__u32)(bytes / sizeof(c.ips[0])) : 0;
	if (task->exit_state)
		c.flags |= CALLER_EXITED;
	if (on_cpu || on_cpu_now(task))
		c.flags |= CALLER_ON_CPU;
	else if (switches == switches_of(task))
		c.flags |= CALLER_STILL;
	c.nvcsw = task->nvcsw;
	bpf_seq_write(ctx->meta->seq, &c, sizeof(c));
	return 0;
}

/*
 * A drain in flight whose end was missed ended: out of flight for both sides,
 * and counted. A late end of one of its works finds it closed (tracepoint
 * mode) or out of the call (entry visible).
 */
static __always_inline void phantom_end(struct drain_state *d)
{
	if (d->by_entry) {
		d->in_call = 0;
		open_drains_add(-1);
	} else if (!__sync_lock_test_and_set(&d->closed, 1)) {
		open_drains_add(-1);
	}
	d->pending = 0;
	count(phantom_counter(d));
}

/* Ends the drain in phantom if its task's state is still that drain. */
SEC("raw_tp")
int drainstat_end_phantom(void *ctx)
{
	struct drain_state *d = drain_state_of(phantom.tid);

	if (!d || d->start_ns != phantom.start_ns || !drain_in_flight(d))
		return 0;
	phantom.counter = phantom_counter(d);
	phantom_end(d);
	phantom.done = 1;
	return 0;
}

/*
 * A thread exits: its drain state goes, and a drain it still had in flight is
 * a phantom (a drain's caller returns only once its works ended). The only
 * per-event cost of the check, on thread exits, not on workqueue events: one
 * load from the thread's task_struct, where it never drained (no task storage
 * at all, so no mark in drained_tasks); a lookup in drains where it has some
 * (its mark, or another tool's), or while a state made unmarked is there
 * (drain_state_get()). Its mark is not asked for: the kernel can refuse that
 * as it can refuse to make it.
 */
static __always_inline void drain_task_exit(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct drain_slot *s;
	struct drain_state *d;
	bool in_slot;
	__u32 tid;

	if (!task->bpf_storage && !unmarked_states)
		return;
	tid = (__u32)bpf_get_current_pid_tgid();
	s = drain_slot_of(tid);
	in_slot = s && s->tid == tid && tid;
	if (in_slot)
		d = &s->d;
	else if (drains_moved)
		d = bpf_map_lookup_elem(&drains, &tid);
	else
		return;
	if (!d)
		return;
	if (d->unmarked)
		__sync_fetch_and_add(&unmarked_states, -1);
	if (drain_in_flight(d))
		phantom_end(d);
	/* the slot's only writer is its task: freed last, its state not in flight */
	if (in_slot)
		__sync_val_compare_and_swap(&s->tid, tid, 0);
	else if (!bpf_map_delete_elem(&drains, &tid))
		__sync_fetch_and_add(&drains_moved, -1);
}

#endif /* INFLIGHT_BPF_H */
