/* SPDX-License-Identifier: GPL-2.0 */
/* The BPF tests' clock: the programs' bpf_ktime_get_ns(), read from user space. */
#ifndef TESTS_BPF_NOW_H
#define TESTS_BPF_NOW_H

#include <time.h>
#include <linux/types.h>

static inline __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

#endif /* TESTS_BPF_NOW_H */
