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

/* What the kernel's BTF says about the hooks drainstat may use. */
struct btf_facts {
	int err;	   /* 0, or -errno if the BTF could not be parsed */
	int drain_all_id;  /* lru_add_drain_all()'s BTF id (fentry needs it), -errno if none */
	bool ipi_send_cpu; /* the ipi:ipi_send_cpu tracepoint (about 6.4 and later) */
	bool parsed;	   /* parsed here: the kernel could not look them up */
};

/*
 * The kernel looks the names up (a syscall program, 5.14 and later); else the
 * BTF is parsed here, which costs tens of milliseconds (5 MB, and libbpf parses
 * it again to load).
 */
void probe__btf_facts(struct btf_facts *f);
/* 0 if an fentry program attaches to BTF id btf_id, else -errno: cheap, before the real load. */
int probe__fentry(int btf_id);
/* 0 if the kernel has kprobes (PMU or tracefs kprobe_events), else -ENOENT. */
int probe__kprobes(const char *tracefs);

#endif /* PROBE_H */
