/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filter key: lru_add_drain_per_cpu's address, which the workqueue
 * programs compare each work's function with, written into their
 * instructions before the load in place of FILTER_KEY_MARK (bpf/drainstat.h).
 */
#ifndef FILTERKEY_H
#define FILTERKEY_H

#include <linux/types.h>

struct bpf_program;

/*
 * prog's every 64-bit immediate FILTER_KEY_MARK replaced by addr, before its
 * object's load: 0, or -ENOENT if it has none (a program built without the
 * filter), -errno from libbpf.
 */
int filterkey__set(struct bpf_program *prog, __u64 addr);

#endif /* FILTERKEY_H */
