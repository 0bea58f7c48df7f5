/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A drain's works: queued by the caller (which begins or joins its drain),
 * started and ended on the target CPU, where the dispatch and run times are
 * counted; and the IPI that wakes the target's worker (--ipis), counted
 * through a per-CPU gate that the queue opens.
 */
#ifndef WORKS_BPF_H
#define WORKS_BPF_H

#include "drain.bpf.h"

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
	d = drain_state_of(tid);
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
	d->last_queue_nvcsw = nvcsw;
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
	ws->drain_start_ns = d->start_ns;
	ws->site = d->site;
	ws->site_slot = d->site_slot;
	ws->caller_tid = tid;
	ws->caller_cpu = bpf_get_smp_processor_id();
	ws->work = (__u64)work;
	if (ws->cpu_work != (__u64)work) {
		ws->cpu_work = (__u64)work;
		bpf_map_update_elem(&work_cpus, &ws->cpu_work, &target, BPF_ANY);
	}
}

/*
 * The slot of work, in flight: this CPU's, where a work runs; else its own
 * CPU's, where its CPU went offline and the workqueue ran it here (or a
 * caller filter dropped it at its queue: its slot holds another work).
 */
static __always_inline struct work_state *work_in_flight(struct work_struct *work, __u32 cpu,
							 __u32 *target)
{
	struct work_state *ws = bpf_map_lookup_elem(&works, &cpu);
	__u64 w = (__u64)work;
	__u32 *own;

	*target = cpu;
	if (ws && ws->work == w)
		return ws;
	own = bpf_map_lookup_elem(&work_cpus, &w);
	if (!own || *own == cpu)
		return NULL;
	*target = *own;
	ws = bpf_map_lookup_elem(&works, own);
	return ws && ws->work == w ? ws : NULL;
}

static __always_inline void on_start(struct work_struct *work)
{
	__u32 target;
	struct work_state *ws = work_in_flight(work, bpf_get_smp_processor_id(), &target);

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

static __always_inline void on_end(struct work_struct *work)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();
	struct site_stats *s;
	__u64 dispatch, run;
	__u32 target;
	struct work_state *ws = work_in_flight(work, cpu, &target);
	bool self;

	if (!ws) {
		/* with a caller filter, the works it dropped at queue time end here too */
		if (!any_caller_filter)
			count(CNT_WORK_UNSEEN);
		return;
	}
	/* no slot: the drain's site found no room; counted again with each work */
	s = ws->site_slot != NO_SLOT ? site_stats_of(&ws->site, ws->site_slot)
				     : site_stats_get(&ws->site, NULL, false);
	if (!ws->start_ns) {
		/*
		 * queued while the programs were being attached: its start was
		 * missed, its dispatch and run are unknown; its drain's wait is not
		 */
		count(CNT_WORK_UNSEEN);
		drain_work_done(ws, s, now, target, 0, 0);
		ws->work = 0;
		return;
	}
	dispatch = ws->start_ns - ws->queue_ns;
	run = now - ws->start_ns;
	self = target == ws->caller_cpu;
	/*
	 * -C: a work to a CPU outside it ends its drain's wait, and counts
	 * nowhere. The CPU that ran it pays, which is its target but where the
	 * target went offline.
	 */
	if (victim_selected((int)target)) {
		if (s) {
			__sync_fetch_and_add(&s->count[self ? SITE_SELF_WORKS : SITE_REMOTE_WORKS],
					     1);
			hist_add(&s->hist[SITE_DISPATCH_NS], dispatch);
			hist_add(&s->hist[SITE_RUN_NS], run);
		}
		account_cpu(cpu, self, dispatch, run);
	}
	drain_work_done(ws, s, now, target, dispatch, run);
	ws->work = 0;
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

#endif /* WORKS_BPF_H */
