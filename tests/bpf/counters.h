/* SPDX-License-Identifier: GPL-2.0 */
/* The BPF tests' read of drainstat's counters map. */
#ifndef TESTS_BPF_COUNTERS_H
#define TESTS_BPF_COUNTERS_H

#include <stdlib.h>
#include <bpf/libbpf.h>
#include "drainstat.h"

/* Counter c of the per-CPU counters map, summed over the nr_cpus CPUs; ~0 if unread. */
static inline __u64 counters_sum(const struct bpf_map *counters, int nr_cpus,
				 enum drainstat_counter c)
{
	__u32 key = c;
	__u64 *v = calloc((size_t)nr_cpus, sizeof(*v)), sum = 0;
	int i;

	if (!v || bpf_map__lookup_elem(counters, &key, sizeof(key), v,
				       sizeof(*v) * (size_t)nr_cpus, 0)) {
		free(v);
		return ~0ULL;
	}
	for (i = 0; i < nr_cpus; i++)
		sum += v[i];
	free(v);
	return sum;
}

#endif /* TESTS_BPF_COUNTERS_H */
