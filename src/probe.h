/* SPDX-License-Identifier: GPL-2.0 */
/* What the running kernel and this process allow, found out before anything is loaded. */
#ifndef PROBE_H
#define PROBE_H

#include <stdbool.h>

/* 0 if root or holding CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN before 5.8), else -EPERM. */
int probe__privileges(void);
/* 0 if the kernel exposes its BTF (CO-RE needs it), else -ENOENT. */
int probe__btf(const char *path);

/*
 * Make sure tracefs is mounted at dir (tracepoint/ programs need it to find
 * their event ids): 0 if it already was, 1 if probe mounted it in a private
 * mount namespace (gone with the process), -errno if it is not and cannot be.
 * Call it while the process has one thread.
 */
int probe__tracefs(const char *dir);

/* 0 if an fentry program attaches to fn, else -errno: cheap, before the real load. */
int probe__fentry(const char *fn);
/* 0 if the kernel has kprobes (PMU or tracefs kprobe_events), else -ENOENT. */
int probe__kprobes(const char *tracefs);

#endif /* PROBE_H */
