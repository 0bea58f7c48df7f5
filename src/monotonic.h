/* SPDX-License-Identifier: GPL-2.0 */
/* Now on CLOCK_MONOTONIC, the BPF side's clock (bpf_ktime_get_ns()), in ns. */
#ifndef MONOTONIC_H
#define MONOTONIC_H

#include <time.h>
#include <linux/types.h>

static inline __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

#endif /* MONOTONIC_H */
