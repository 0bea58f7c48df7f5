/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Local drains: lru_add_drain() calls outside a drain, timed per site; and
 * what a CPU has batched, which a drain's own local drain reads (own.bpf.h).
 */
#ifndef LOCAL_BPF_H
#define LOCAL_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include "globals.bpf.h"
#include "filters.bpf.h"
#include "hist.bpf.h"
#include "site.bpf.h"

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
 * Whether the local drains of source, with the comm and cgroup in site, found
 * no room before: looked up only where site_sources has no site for it, and
 * the local drains' share is full, so that a stack walk is spared, not a
 * lookup added to a local drain that has a site.
 */
static __always_inline bool local_source_refused(const struct drain_source *source,
						 const struct site_key *site)
{
	struct site_source k = {};

	if (!source_known(source) || every_stack || local_slots_used < local_sites_max(max_sites))
		return false;
	site_source_of(source, site, &k);
	return bpf_map_lookup_elem(&local_sources_refused, &k) != NULL;
}

/*
 * A local drain's first site found no room (site_stats_get()): its source's
 * later local drains are refused without a walk, unless its source has a site
 * (another of its stacks took a slot first).
 */
static __always_inline void local_source_refuse(const struct drain_source *source,
						const struct site_key *site)
{
	struct site_source k = {};
	__u32 one = 1;

	if (!source_known(source) || every_stack)
		return;
	site_source_of(source, site, &k);
	if (!bpf_map_lookup_elem(&site_sources, &k))
		bpf_map_update_elem(&local_sources_refused, &k, &one, BPF_ANY);
}

/*
 * lru_add_drain(): the local drain; inside a drain call it is part of that
 * drain. caller and ret_ip as drain_begin()'s. A local drain whose source
 * found no room before is counted at once, neither walked nor timed.
 */
static __always_inline void local_enter(void *ctx, __u64 caller, __u64 ret_ip)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct drain_state *d = drain_state_of(tid);
	struct local_call call = {.source.caller = caller, .site_slot = NO_SLOT};

	if (!task_selected(pid_tgid))
		return;
	if (d && d->in_call)
		return;
	call.start_ns = bpf_ktime_get_ns();
	site_caller(&call.site);
	if (!site_named(&call.site, &call.site_slot, &call.source)) {
		if (local_source_refused(&call.source, &call.site)) {
			count(CNT_LOCAL_SITE_MAP_FULL);
			return;
		}
		site_walk(ctx, &call.site, ret_ip);
	}
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
	if (call->site_slot != NO_SLOT) {
		s = site_stats_of(&call->site, call->site_slot);
	} else {
		s = site_stats_get(&call->site, &call->site_slot, true);
		if (s)
			site_remember(&call->source, &call->site, call->site_slot);
		else
			local_source_refuse(&call->source, &call->site);
	}
	if (s)
		hist_add(&s->hist[SITE_LOCAL_NS], bpf_ktime_get_ns() - call->start_ns);
	bpf_map_delete_elem(&local_calls, &tid);
}

#endif /* LOCAL_BPF_H */
