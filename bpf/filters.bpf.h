/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filters: of callers (-p, -c, --cgroup), which decide whether a task's
 * drains, local drains and fadvise calls are followed at all, and of target
 * CPUs (-C), which decide only where a work counts.
 */
#ifndef FILTERS_BPF_H
#define FILTERS_BPF_H

#include "globals.bpf.h"

static __always_inline bool comm_selected(void)
{
	char comm[DRAINSTAT_COMM_LEN];
	int i;

	bpf_get_current_comm(comm, sizeof(comm));
	for (i = 0; i < DRAINSTAT_COMM_LEN; i++) {
		if (comm[i] != filter_comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

/* Whether the current task is one the filters keep: -p, -c and --cgroup. */
static __always_inline bool task_selected(__u64 pid_tgid)
{
	if (filter_tgid && (pid_tgid >> 32) != filter_tgid)
		return false;
	if (filter_cgroup_id && bpf_get_current_cgroup_id() != filter_cgroup_id)
		return false;
	return !filter_comm[0] || comm_selected();
}

/* -C: whether works to this CPU count. */
static __always_inline bool victim_selected(int cpu)
{
	__u32 c, word;

	if (!filter_victims)
		return true;
	c = (__u32)cpu;
	if (cpu < 0 || c >= DRAINSTAT_MAX_CPUS)
		return false;
	/*
	 * The mask bounds the index for the verifier: 6.1's does not carry the
	 * 32-bit compare above over to the 64-bit shift that makes the offset
	 * (an fentry argument's upper half is unknown to it), and refused the
	 * load. The barrier keeps clang from dropping the mask as redundant.
	 */
	word = c / 64;
	barrier_var(word);
	word &= DRAINSTAT_MAX_CPUS / 64 - 1;
	return victim_cpus[word] & (1ULL << (c % 64));
}

#endif /* FILTERS_BPF_H */
