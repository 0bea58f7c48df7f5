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

/* The slot of tid's calls, wherever the task runs. */
static __always_inline struct fadvise_slot *fadvise_slot_of(__u32 tid)
{
	__u32 i = tid % FADVISE_SLOTS;

	return bpf_map_lookup_elem(&fadvise_slots, &i);
}

/* The task's posix_fadvise() call in flight, NULL if none: in its slot, else in fadvise_calls. */
static __always_inline struct fadvise_call *fadvise_call_of(__u32 tid)
{
	struct fadvise_slot *s = fadvise_slot_of(tid);
	struct fadvise_call *f;

	if (s && s->tid == tid && s->call.start_ns)
		return &s->call;
	if (!fadvise_calls_moved)
		return NULL;
	f = bpf_map_lookup_elem(&fadvise_calls, &tid);
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

/*
 * The slot of tid's call, claimed: free, or tid's own already (a call whose
 * exit never came). A slot another task holds is never written: the call
 * goes to fadvise_calls instead. NULL: neither could take it.
 */
static __always_inline struct fadvise_call *fadvise_claim(__u32 tid)
{
	struct fadvise_slot *s = fadvise_slot_of(tid);
	struct fadvise_call *call;
	__u32 owner;

	if (!s)
		return NULL;
	owner = __sync_val_compare_and_swap(&s->tid, 0, tid);
	if (!owner || owner == tid)
		return &s->call;
	/* their tids collide, and that task's call is in flight */
	call = lookup_or_insert(&fadvise_calls, &tid, &zero_call);
	if (!call) {
		count(CNT_FADVISE_MAP_FULL);
		return NULL;
	}
	if (!call->start_ns)
		__sync_fetch_and_add(&fadvise_calls_moved, 1);
	return call;
}

/* sys_enter of fadvise: the task's call starts, with its advice (the syscall's fourth argument). */
static __always_inline void fadvise_enter(__u64 pid_tgid, __u32 advice)
{
	struct fadvise_call *call;

	if (!task_selected(pid_tgid))
		return;
	call = fadvise_claim((__u32)pid_tgid);
	if (!call)
		return;
	call->advice = advice;
	call->escalated = 0;
	call->start_ns = bpf_ktime_get_ns();
}

/* A call ends: its latency and whether it escalated, in its advice's slot. */
static __always_inline void fadvise_count(const struct fadvise_call *call)
{
	__u32 slot = call->advice < FADVISE_ADVICE_OTHER ? call->advice : FADVISE_ADVICE_OTHER;
	struct fadvise_stats *f = bpf_map_lookup_elem(&fadvise, &slot);

	if (!f)
		return;
	/* the call counted first: a reader never sees more escalations than calls */
	hist_add(&f->latency_ns, bpf_ktime_get_ns() - call->start_ns);
	if (call->escalated)
		__sync_fetch_and_add(&f->escalations, 1);
}

/*
 * sys_exit of fadvise: the task's call ends, from its slot (released) or from
 * fadvise_calls. No filter: a call is there only if its entry was selected.
 */
static __always_inline void fadvise_exit(__u64 pid_tgid)
{
	__u32 tid = (__u32)pid_tgid;
	struct fadvise_slot *s = fadvise_slot_of(tid);
	struct fadvise_call *call;

	if (s && s->tid == tid) {
		if (s->call.start_ns)
			fadvise_count(&s->call);
		s->call.start_ns = 0;
		/* the slot's only writer is its owner: released last */
		__sync_val_compare_and_swap(&s->tid, tid, 0);
		return;
	}
	if (!fadvise_calls_moved)
		return;
	call = bpf_map_lookup_elem(&fadvise_calls, &tid);
	if (!call || !call->start_ns)
		return;
	fadvise_count(call);
	if (!bpf_map_delete_elem(&fadvise_calls, &tid))
		__sync_fetch_and_add(&fadvise_calls_moved, -1);
}

#endif /* FADVISE_BPF_H */
