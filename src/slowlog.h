/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The -T log, as things happen: each drain slower than the threshold when it
 * ends (the BPF side's ring buffer), and each drain still in flight once it
 * passes the threshold (watched between reports), with its pending CPUs and
 * what runs there. Text, or one JSON object a line with -j.
 */
#ifndef SLOWLOG_H
#define SLOWLOG_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "model.h"

struct slowlog;
struct slow_drain;
struct ksyms;
struct cgroups;

/*
 * NULL when out of memory. ks names the kernel frames; it must outlive the
 * log. cgroup_root: the cgroup v2 mount, whose tree names the callers' and
 * running tasks' cgroups (a cache of the log's own); NULL: none named.
 */
struct slowlog *slowlog__new(FILE *f, __u64 threshold_ns, bool json, const struct ksyms *ks,
			     const char *cgroup_root);
void slowlog__free(struct slowlog *l);
/* The log's own names of cgroups (NULL without a hierarchy): how they are named is set there. */
struct cgroups *slowlog__cgroups(struct slowlog *l);
/* The tracer's slow_drain_fn: arg is the slowlog. */
void slowlog__slow_drain(const struct slow_drain *d, void *arg);
/* The user frames logged so far past the symbols' budget (CNT_UFRAMES_OVER_BUDGET). */
__u64 slowlog__uframes_over_budget(const struct slowlog *l);
/* How often to look at the drains in flight: a fraction of the threshold. */
__u64 slowlog__watch_ns(const struct slowlog *l);
/* Logs each drain of m in flight past the threshold, once a drain, its cgroups named. */
void slowlog__in_flight(struct slowlog *l, struct model *m);

#endif /* SLOWLOG_H */
