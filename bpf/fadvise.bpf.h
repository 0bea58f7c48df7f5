/* SPDX-License-Identifier: GPL-2.0 */
/*
 * posix_fadvise() calls: each one timed per advice, and a DONTNEED inside
 * which a drain starts marked as escalated. The call in flight also tells a
 * drain where it came from (drain_source()) and, in tracepoint mode, which
 * works belong together (starts_new_drain()).
 */
#ifndef FADVISE_BPF_H
#define FADVISE_BPF_H

#include "globals.bpf.h"
#include "filters.bpf.h"
#include "hist.bpf.h"
#include "maps.bpf.h"

/* The task's posix_fadvise() call in flight, NULL if none. */
static __always_inline struct fadvise_call *fadvise_call_of(__u32 tid)
{
	struct fadvise_call *f = bpf_map_lookup_elem(&fadvise_calls, &tid);

	return f && f->start_ns ? f : NULL;
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

/* sys_enter of fadvise: the task's call starts (its advice: the fourth argument). */
static __always_inline void fadvise_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct fadvise_call *call;

	if (!task_selected(pid_tgid))
		return;
	call = lookup_or_insert(&fadvise_calls, &tid, &zero_call);
	if (!call) {
		count(CNT_FADVISE_MAP_FULL);
		return;
	}
	call->advice = (__u32)ctx->args[3];
	call->escalated = 0;
	call->start_ns = bpf_ktime_get_ns();
}

/* sys_exit of fadvise: the call's latency and whether it escalated, in its advice's slot. */
static __always_inline void fadvise_exit(void)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct fadvise_call *call;
	struct fadvise_stats *f;
	__u32 slot;

	/* as at entry: the filters first, then the map */
	if (!task_selected(pid_tgid))
		return;
	call = bpf_map_lookup_elem(&fadvise_calls, &tid);
	if (!call || !call->start_ns)
		return;
	slot = call->advice < FADVISE_ADVICE_OTHER ? call->advice : FADVISE_ADVICE_OTHER;
	f = bpf_map_lookup_elem(&fadvise, &slot);
	if (f) {
		/* the call counted first: a reader never sees more escalations than calls */
		hist_add(&f->latency_ns, bpf_ktime_get_ns() - call->start_ns);
		if (call->escalated)
			__sync_fetch_and_add(&f->escalations, 1);
	}
	call->start_ns = 0;
}

#endif /* FADVISE_BPF_H */
