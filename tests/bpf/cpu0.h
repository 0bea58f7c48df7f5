/* SPDX-License-Identifier: GPL-2.0 */
/* The BPF tests that test-run programs on CPU 0, as the task that calls them. */
#ifndef TESTS_BPF_CPU0_H
#define TESTS_BPF_CPU0_H

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

/* This task pinned to CPU 0: 0, or 1 with a FAIL line said. */
static inline int pin_to_cpu0(void)
{
	cpu_set_t cpu0;

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0)) {
		printf("FAIL bpf: run on CPU 0: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

#endif /* TESTS_BPF_CPU0_H */
