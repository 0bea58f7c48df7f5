/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sites: where drains and local drains come from, and their numbers. A site
 * has a slot in the sites array, found by its key (site_slots) or by the
 * slot a drain keeps (site_slot, NO_SLOT for none); it is named by a walk
 * of the caller's stack, or by the site its source had at its first drain
 * (site_sources), which spares the walk.
 */
#ifndef SITE_BPF_H
#define SITE_BPF_H

#include "globals.bpf.h"

/* The caller's comm and cgroup into site, where they are taken for every drain and local drain. */
static __always_inline void site_caller(struct site_key *site)
{
	bpf_get_current_comm(site->comm, sizeof(site->comm));
	site->cgroup_id = bpf_get_current_cgroup_id();
}

/* A drain's site as the sites array keys it: the parts --by leaves out, zero. */
static __always_inline void site_key_of(const struct site_key *site, struct site_key *key)
{
	*key = *site;
	if (!(site_key_parts & SITE_KEY_COMM))
		__builtin_memset(key->comm, 0, sizeof(key->comm));
	if (!(site_key_parts & SITE_KEY_CGROUP))
		key->cgroup_id = 0;
}

/* The numbers of the site keyed key (site_key_of()'s), NULL if it has no slot. */
static __always_inline struct site_stats *site_stats_by_key(const struct site_key *key)
{
	__u32 *found = bpf_map_lookup_elem(&site_slots, key);

	return found ? bpf_map_lookup_elem(&sites, found) : NULL;
}

/*
 * The numbers of a site: by the slot a drain or work keeps (site_slot),
 * else by its key; NULL if it has no slot.
 */
static __always_inline struct site_stats *site_stats_of(const struct site_key *site, __u32 slot)
{
	struct site_key key;

	if (slot != NO_SLOT)
		return bpf_map_lookup_elem(&sites, &slot);
	site_key_of(site, &key);
	return site_stats_by_key(&key);
}

/*
 * A local drain's claim of a new slot, within local_sites_max(): local drains
 * hold no more, whatever their races, so that the rest stays the drains'.
 */
static __always_inline bool local_slot_claim(void)
{
	__u32 share = local_sites_max(max_sites);

	if (local_slots_used >= share) /* no fetch_add once full: the count cannot wrap */
		return false;
	return __sync_fetch_and_add(&local_slots_used, 1) < share;
}

/*
 * A new slot for key (site_key_of()'s); local: for a local drain, which takes
 * one only within its share. Two CPUs may take one each for the same key:
 * the one whose site_slots entry lands keeps its slot, the other's stays
 * never ready.
 */
static __always_inline struct site_stats *site_stats_new(const struct site_key *key, bool local)
{
	struct site_stats *s;
	__u32 slot;

	if (site_slots_used >= max_sites) /* no fetch_add once full: the count cannot wrap */
		return NULL;
	if (local && !local_slot_claim())
		return NULL;
	slot = __sync_fetch_and_add(&site_slots_used, 1);
	s = bpf_map_lookup_elem(&sites, &slot);
	if (!s)
		return NULL;
	s->key = *key;
	s->slot = slot;
	if (bpf_map_update_elem(&site_slots, key, &slot, BPF_NOEXIST))
		return site_stats_by_key(key);
	/* an exchange orders the key before ready for the reader */
	__sync_lock_test_and_set(&s->ready, 1);
	return s;
}

/*
 * The numbers of a site, made if new; NULL when there is no room, counted as
 * a drain's (site_map_full) or, local, a local drain's (local_site_map_full).
 * With site_slot, the site's slot is kept there for site_stats_of() (NO_SLOT
 * if none).
 */
static __always_inline struct site_stats *site_stats_get(const struct site_key *site,
							 __u32 *site_slot, bool local)
{
	struct site_stats *s;
	struct site_key key;

	site_key_of(site, &key);
	s = site_stats_by_key(&key);
	if (!s)
		s = site_stats_new(&key, local);
	if (!s)
		count(local ? CNT_LOCAL_SITE_MAP_FULL : CNT_SITE_MAP_FULL);
	if (site_slot)
		*site_slot = s ? s->slot : NO_SLOT;
	return s;
}

/* The caller's kernel stack into site (comm and cgroup already there); ret_ip as site_key's. */
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

/* Whether a drain's source is known: its caller, or its fadvise call. */
static __always_inline bool source_known(const struct drain_source *source)
{
	return source->caller || source->fadvise;
}

/* The key of source's entry in site_sources and local_sources_refused. */
static __always_inline void site_source_of(const struct drain_source *source,
					   const struct site_key *site, struct site_source *k)
{
	k->source = *source;
	__builtin_memcpy(k->comm, site->comm, sizeof(k->comm));
	k->cgroup_id = site->cgroup_id;
}

/*
 * The site its source had first, from source and the comm and cgroup in
 * site, into site and *site_slot; false if the source is not known or has
 * none, or the run takes every stack.
 */
static __always_inline bool site_named(struct site_key *site, __u32 *site_slot,
				       const struct drain_source *source)
{
	struct site_source k = {};
	struct site_named *named;

	if (!source_known(source) || every_stack)
		return false;
	site_source_of(source, site, &k);
	named = bpf_map_lookup_elem(&site_sources, &k);
	if (!named)
		return false;
	*site = named->key;
	*site_slot = named->site_slot;
	return true;
}

/*
 * The site of a drain or local drain from source and the comm and cgroup in
 * site, into site and *site_slot: the site its source had first, else a stack
 * walk. The slot stays NO_SLOT when only the key is known.
 */
static __always_inline void site_name(void *ctx, struct site_key *site, __u32 *site_slot,
				      const struct drain_source *source, __u64 ret_ip)
{
	if (!site_named(site, site_slot, source))
		site_walk(ctx, site, ret_ip);
}

/* A source's first site, once its stack is known and has a slot: its later drains walk no stack. */
static __always_inline void site_remember(const struct drain_source *source,
					  const struct site_key *site, __u32 site_slot)
{
	struct site_named named = {.key = *site, .site_slot = site_slot};
	struct site_source k = {};

	if (!source_known(source) || every_stack || site->stack_id < 0 || site_slot == NO_SLOT)
		return;
	site_source_of(source, site, &k);
	bpf_map_update_elem(&site_sources, &k, &named, BPF_NOEXIST);
}

/*
 * Where a drain comes from when no stack walk is needed to say (drainstat.h):
 * caller, the return address into its caller (0: not seen), else the fadvise
 * call it came in (f, or NULL).
 */
static __always_inline struct drain_source drain_source(__u64 caller, const struct fadvise_call *f)
{
	struct drain_source source = {.caller = caller};

	if (caller || !f)
		return source;
	source.fadvise = 1;
	source.advice = f->advice < FADVISE_ADVICE_OTHER ? f->advice : FADVISE_ADVICE_OTHER;
	return source;
}

/* Whether two sources are the same (all their bytes, padding zero). */
static __always_inline bool same_source(const struct drain_source *a, const struct drain_source *b)
{
	const __u64 *x = (const void *)a, *y = (const void *)b;

	return x[0] == y[0] && x[1] == y[1];
}

#endif /* SITE_BPF_H */
