/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF tests' drain states: a task's, put in its slot of drain_slots as
 * drain_state_get() puts it, and read back from its slot or, where another
 * task holds that, from the drains map (see struct drain_slot).
 */
#ifndef TESTS_BPF_STATES_H
#define TESTS_BPF_STATES_H

#include <errno.h>
#include <bpf/libbpf.h>
#include "drainstat.h"

/* d as task tid's drain state, in its slot (taken from whichever task held it): 0 or -errno. */
static inline int states_put(const struct bpf_map *slots, __u32 tid, const struct drain_state *d)
{
	struct drain_slot s = {.tid = tid, .d = *d};
	__u32 i = tid % DRAIN_SLOTS;

	return bpf_map__update_elem(slots, &i, sizeof(i), &s, sizeof(s), BPF_ANY);
}

/* Task tid's drain state, into d: 0, or -ENOENT where it has none. */
static inline int states_get(const struct bpf_map *slots, const struct bpf_map *drains, __u32 tid,
			     struct drain_state *d)
{
	struct drain_slot s;
	__u32 i = tid % DRAIN_SLOTS;

	if (!bpf_map__lookup_elem(slots, &i, sizeof(i), &s, sizeof(s), 0) && s.tid == tid) {
		*d = s.d;
		return 0;
	}
	return bpf_map__lookup_elem(drains, &tid, sizeof(tid), d, sizeof(*d), 0) ? -ENOENT : 0;
}

#endif /* TESTS_BPF_STATES_H */
