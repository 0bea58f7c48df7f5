/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The drain state machine: a drain's begin (at entry, or at its first queue in
 * tracepoint mode), its works joining it, its lock phase, its close when its
 * last work ends or its caller returns, and the twins of full mode. The states
 * and their transitions are drawn once, beside struct drain_state in
 * drainstat.h.
 */
#ifndef DRAIN_BPF_H
#define DRAIN_BPF_H

#include "globals.bpf.h"
#include "hist.bpf.h"
#include "maps.bpf.h"
#include "caller.bpf.h"
#include "fadvise.bpf.h"
#include "filters.bpf.h"
#include "site.bpf.h"
#include "slowlog.bpf.h"

static __always_inline void open_drains_add(__s32 delta)
{
	if (entry_visible)
		__sync_fetch_and_add(&open_drains, delta);
}

/*
 * A work the task queues outside a drain call it was seen to enter (tracepoint
 * mode, or a drain whose entry went unseen): whether it opens a new drain. One
 * fadvise call drains once at most (generic_fadvise()), so for a drain that
 * came in one, the call decides, whatever the rules say: a work queued in the
 * same call is the drain's (a caller held up between two queues, an interrupt
 * or preemption, while its first works ended would otherwise split its drain
 * in two), one queued outside it begins another drain (the next round's
 * drain, queued before the caller slept, to higher CPUs and within the join
 * window, would otherwise be merged into it). Other drains go by the rules:
 * no sleep since the last queue, a higher CPU, and works pending or the last
 * queue recent. Where entries are seen, the next drain's entry begins it, and
 * the time is no rule: a drain whose entry went unseen (both twins skipped,
 * under full preemption) while its caller was preempted for over the window
 * between two queues, its first works ended, was counted twice (601 drains
 * of 600 calls, 6.12 with preempt=full). *f: the task's fadvise call when
 * this looked it up, for drain_open().
 */
static __always_inline bool starts_new_drain(const struct drain_state *d, __u64 now, __u64 nvcsw,
					     int target_cpu, __u32 tid, struct fadvise_call **f)
{
	if (d->fadvise_start_ns) {
		*f = fadvise_call_of(tid);
		return !*f || (*f)->start_ns != d->fadvise_start_ns;
	}
	return d->last_queue_nvcsw != nvcsw || target_cpu <= d->last_target_cpu ||
	       (!entry_visible && !d->pending && now - d->last_queue_ns > join_window_ns);
}

/*
 * The drain state of the current task (tid): made the first time the task
 * drains, in its slot if free, else in drains; the task marked in
 * drained_tasks, and where the kernel refuses the mark, counted in
 * unmarked_states, so that its exit still finds it. NULL: no room.
 */
static __always_inline struct drain_state *drain_state_get(__u32 tid)
{
	struct drain_state *d = drain_state_of(tid);
	struct drain_slot *s;
	bool marked;

	if (d || !tid)
		return d;
	marked = bpf_task_storage_get(&drained_tasks, bpf_get_current_task_btf(), NULL,
				      BPF_LOCAL_STORAGE_GET_F_CREATE) != NULL;
	s = drain_slot_of(tid);
	if (s && !__sync_val_compare_and_swap(&s->tid, 0, tid)) {
		/* what its last task left is not in flight (drain_task_exit()) */
		d = &s->d;
		*d = new_drain;
	} else {
		/* the slot is another live task's: none of tid's is in drains yet */
		d = lookup_or_insert(&drains, &tid, &new_drain);
		if (d)
			__sync_fetch_and_add(&drains_moved, 1);
	}
	if (d && !marked) {
		d->unmarked = 1;
		__sync_fetch_and_add(&unmarked_states, 1);
	}
	return d;
}

static __always_inline bool same_comm(const char *a, const char *b)
{
	const __u64 *x = (const void *)a, *y = (const void *)b;

	return x[0] == y[0] && x[1] == y[1];
}

/*
 * A new drain in the task's entry d (rewritten in place): its site, start and
 * caller; source as drain_source()'s, ret_ip as site_key's. A task that
 * drains again from where it did last, with the same comm and in the same
 * cgroup, keeps its site: no lookup at all.
 */
static __always_inline void drain_reset(void *ctx, struct drain_state *d, __u64 pid_tgid, __u64 now,
					const struct drain_source *source, __u64 ret_ip)
{
	struct site_key last = d->site;
	__u32 last_slot = d->site_slot;
	struct drain_source last_source = d->source;
	__u32 tid = (__u32)pid_tgid;

	*d = new_drain;
	d->start_ns = now;
	d->tgid = (__u32)(pid_tgid >> 32);
	d->caller_cpu = bpf_get_smp_processor_id();
	d->last_target_cpu = -1;
	d->source = *source;
	site_caller(&d->site);
	if (source_known(source) && same_source(source, &last_source) && last_slot != NO_SLOT &&
	    !every_stack && same_comm(d->site.comm, last.comm) &&
	    d->site.cgroup_id == last.cgroup_id) {
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
	if (d->by_entry && drain_reached_cpu(d))
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
	struct drain_source source = drain_source(caller, f);
	struct site_stats *s;

	drain_reset(ctx, d, pid_tgid, now, &source, ret_ip);
	d->forced = forced;
	d->by_entry = by_entry;
	if (d->site_slot != NO_SLOT) {
		s = site_stats_of(&d->site, d->site_slot);
	} else {
		s = site_stats_get(&d->site, &d->site_slot, false);
		site_remember(&source, &d->site, d->site_slot);
	}
	if (!filter_victims)
		drain_count(d, s);
	d->fadvise_start_ns = mark_escalation(f);
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
	/* entry visible: its close counted a partial wait, which the next close counts */
	if (entry_visible)
		count_add(CNT_PARTIAL_WAITS, -1);
	open_drains_add(1);
}

/*
 * The lock phase up to now: from entry or, since 6.18, from the end of the
 * drain's own local drain; it ends at the first CPU the drain reaches, or at
 * its return where it reached none (empty, own-only: the mutex and the checks).
 */
static __always_inline __u64 lock_time(const struct drain_state *d, __u64 now)
{
	return now - (d->own_ns ? d->own_start_ns + d->own_ns : d->start_ns);
}

/*
 * A work queued by a drain seen at entry, or a CPU it drains in place: the
 * first one ends the lock phase, which begins at entry or, since 6.18, when
 * the drain's own local drain before the mutex returned; a drain not yet
 * counted (-C) adds it when it is (drain_count()).
 */
static __always_inline void queue_in_call(struct drain_state *d, __u64 now)
{
	struct site_stats *s;

	if (drain_reached_cpu(d))
		return;
	d->lock_ns = lock_time(d, now);
	if (!d->counted)
		return;
	s = site_stats_of(&d->site, d->site_slot);
	if (s)
		hist_add(&s->hist[SITE_LOCK_NS], d->lock_ns);
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
	struct drain_state *d = drain_state_of(ws->caller_tid);
	__u64 wait;

	if (!d || d->start_ns != ws->drain_start_ns)
		return;
	slow_record(d, ws->caller_tid, cpu, cpu == ws->caller_cpu ? SLOW_SELF : SLOW_REMOTE,
		    dispatch, run);
	/* a drain seen at entry gets its exact wait at exit */
	if (__sync_fetch_and_add(&d->pending, -1) != 1 || d->by_entry)
		return;
	wait = now - d->start_ns;
	/*
	 * tracepoint mode: the slowest work is what is known to be slow; a drain
	 * that a late work rejoins is logged at its first end. One not counted
	 * (-C) records no wait and is not logged.
	 */
	if (!drain_close(d, d->counted ? s : NULL, wait))
		return;
	/* entry visible, this drain's was missed: its wait begins at its first queue */
	if (entry_visible)
		count(CNT_PARTIAL_WAITS);
	if (d->counted && slow_threshold_ns && !d->logged &&
	    d->slowest_work_ns >= slow_threshold_ns) {
		d->logged = 1;
		slow_emit(d, ws->caller_tid, now, wait);
	}
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
	struct drain_state *d = drain_state_of(tid);
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
	wait = now - d->start_ns;
	/* one that reached no CPU (empty, own-only) was in its lock phase until now */
	if (!drain_reached_cpu(d))
		d->lock_ns = lock_time(d, now);
	if (slow_threshold_ns && wait >= slow_threshold_ns)
		slow_emit(d, tid, now, wait);
	s = site_stats_of(&d->site, d->site_slot);
	if (!s)
		return;
	hist_add(&s->hist[SITE_WAIT_NS], wait);
	if (d->own_ns)
		hist_add(&s->hist[SITE_OWN_NS], d->own_ns);
	if (drain_reached_cpu(d))
		return;
	hist_add(&s->hist[SITE_LOCK_NS], d->lock_ns);
	__sync_fetch_and_add(&s->count[d->own_batched ? SITE_OWN_ONLY_DRAINS : SITE_EMPTY_DRAINS],
			     1);
}

#endif /* DRAIN_BPF_H */
