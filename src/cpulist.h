/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU sets of DRAINSTAT_MAX_CPUS bits (__u64 words) and the kernel's CPU list
 * text for them ("0-3,8").
 */
#ifndef CPULIST_H
#define CPULIST_H

#include <stddef.h>
#include <linux/types.h>

/* A kernel CPU list file (/sys/devices/system/cpu/...) into mask; empty, absent or "(null)": none.
 */
void cpulist__read(const char *path, __u64 *mask);
/* mask as a CPU list ("0-3,8") into buf; cut after a whole item with ",..." if size is short. */
void cpulist__format(const __u64 *mask, char *buf, size_t size);

/* "0-3,8,10-11": CPUs below DRAINSTAT_MAX_CPUS into mask, left alone on error. 0 or -EINVAL. */
int cpulist__parse(const char *s, __u64 *mask);

#endif /* CPULIST_H */
