/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lru_add_drain_cpu(cpu) called by a task inside a drain: of its own CPU
 * before its first work, the drain's own local drain (since 6.18
 * __lru_add_drain_all() drains the caller's CPU first, before the mutex);
 * of another CPU, that CPU drained in place, by the caller itself with no
 * work, as the Per-CPU Work helpers do (was QPW; CONFIG_PWLOCKS): known by
 * what it does, whatever the series is called. Outside a drain it is a local
 * drain's, a work's or CPU hotplug's, and nothing here.
 */
#ifndef OWN_BPF_H
#define OWN_BPF_H

#include "drain.bpf.h"
#include "local.bpf.h"

/*
 * What the caller's CPU has batched. tests/bpf says its own: it loads where
 * cpu_fbatches has no address (a kernel without CONFIG_KALLSYMS_ALL, such as
 * CI's), which refuses a program that reads it.
 */
#ifndef OWN_CPU_BATCHED
#define OWN_CPU_BATCHED() own_cpu_batched()
#endif

/*
 * The drain's own local drain: timed apart from the lock, and whether it
 * found something to drain, which makes a drain that queues no work not empty.
 */
static __always_inline void own_local_enter(struct drain_state *d, __u64 now)
{
	if (drain_reached_cpu(d) || d->own_start_ns)
		return;
	d->own_batched = OWN_CPU_BATCHED() != 0;
	d->own_start_ns = now;
}

/*
 * Another CPU drained in place: like a first work it ends the lock phase and
 * counts a drain that -C counts only when it reaches a chosen CPU.
 */
static __always_inline void in_place_enter(struct drain_state *d, __u32 cpu, __u64 now)
{
	queue_in_call(d, now);
	d->in_place_cpu = cpu;
	d->in_place_start_ns = now;
	if (victim_selected((int)cpu) && !d->counted)
		drain_count(d, site_stats_of(&d->site, d->site_slot));
}

/* The drain the task tid is inside, if any. */
static __always_inline struct drain_state *drain_in_call(__u32 tid)
{
	struct drain_state *d = drain_state_of(tid);

	return d && d->in_call ? d : NULL;
}

static __always_inline void own_enter(int cpu)
{
	struct drain_state *d = drain_in_call((__u32)bpf_get_current_pid_tgid());
	__u64 now;

	if (!d)
		return;
	now = bpf_ktime_get_ns();
	if ((__u32)cpu == bpf_get_smp_processor_id())
		own_local_enter(d, now);
	else
		in_place_enter(d, (__u32)cpu, now);
}

/* A CPU drained in place: counted, timed, listed for -T, as a work would be. */
static __always_inline void in_place_exit(struct drain_state *d, __u32 tid, __u64 now)
{
	__u64 run = now - d->in_place_start_ns;
	__u32 cpu = d->in_place_cpu;
	struct site_stats *s;

	d->in_place_start_ns = 0;
	d->in_place++;
	if (!d->counted || !victim_selected((int)cpu))
		return;
	slow_record(d, tid, cpu, SLOW_IN_PLACE, 0, run);
	s = site_stats_of(&d->site, d->site_slot);
	if (!s)
		return;
	__sync_fetch_and_add(&s->count[SITE_IN_PLACE], 1);
	hist_add(&s->hist[SITE_IN_PLACE_NS], run);
}

static __always_inline void own_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct drain_state *d = drain_in_call(tid);
	__u64 now;

	if (!d)
		return;
	now = bpf_ktime_get_ns();
	if (d->in_place_start_ns)
		in_place_exit(d, tid, now);
	else if (d->own_start_ns && !d->own_ns)
		d->own_ns = now - d->own_start_ns;
}

#endif /* OWN_BPF_H */
