/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The slow-drain log (-T): what an event needs beyond the aggregates (the
 * user stack, each work's times), gathered while the drain runs, and the
 * event sent by ring buffer when a drain ends over the threshold.
 */
#ifndef SLOWLOG_BPF_H
#define SLOWLOG_BPF_H

#include "globals.bpf.h"
#include "filters.bpf.h"

/* -T: what a slow-drain event needs that the aggregates do not, taken at open. */
static __always_inline void slow_open(void *ctx, struct drain_state *d, __u32 tid)
{
	if (!slow_threshold_ns)
		return;
	d->ustack_id = bpf_get_stackid(ctx, &ustacks, BPF_F_USER_STACK);
	bpf_map_update_elem(&slow_targets, &tid, &zero_targets, BPF_ANY);
}

/*
 * A work of the drain ended on target CPU cpu, or the caller drained cpu in
 * place; how: enum slow_how. Under -C only the chosen CPUs are listed, and
 * make a drain slow.
 */
static __always_inline void slow_record(struct drain_state *d, __u32 tid, __u32 cpu, __u32 how,
					__u64 dispatch, __u64 run)
{
	struct slow_targets *t;
	__u32 i;

	if (!slow_threshold_ns || !victim_selected((int)cpu))
		return;
	if (dispatch + run > d->slowest_work_ns)
		d->slowest_work_ns = dispatch + run;
	t = bpf_map_lookup_elem(&slow_targets, &tid);
	if (!t)
		return;
	if (how == SLOW_IN_PLACE)
		__sync_fetch_and_add(&t->in_place, 1);
	i = __sync_fetch_and_add(&t->nr, 1);
	if (i >= SLOW_MAX_TARGETS)
		return;
	t->t[i].cpu = cpu;
	t->t[i].how = how;
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
	e->cgroup_id = d->site.cgroup_id;
	__builtin_memcpy(e->comm, d->site.comm, sizeof(e->comm));
	e->nr_targets = t ? t->nr : 0;
	e->nr_in_place = t ? t->in_place : 0;
	for (i = 0; i < SLOW_MAX_TARGETS; i++) {
		if (t)
			e->targets[i] = t->t[i];
		else
			e->targets[i] = zero_targets.t[i];
	}
	bpf_ringbuf_submit(e, 0);
}

#endif /* SLOWLOG_BPF_H */
