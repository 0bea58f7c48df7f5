/* SPDX-License-Identifier: GPL-2.0 */
/* What the running kernel and this process allow, found out before anything is loaded. */
#ifndef PROBE_H
#define PROBE_H

#include <stdbool.h>
#include <linux/types.h>

/* 0 if root or holding CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN before 5.8), else -EPERM. */
int probe__privileges(void);
/* 1 if the process has capability cap in its effective set, 0 if not, or -errno. */
int probe__has_cap(int cap);
/*
 * 0 if the kernel exposes its BTF (CO-RE needs it) at path; -ENODATA if the
 * file there is empty or not BTF; else -errno of its open or read.
 */
int probe__btf(const char *path);

/*
 * Make sure tracefs is mounted at dir (tracepoint/ programs need it to find
 * their event ids): 0 if it already was, 1 if probe mounted it in a private
 * mount namespace (gone with the process), -errno if it is not and cannot be.
 * Call it while the process has one thread.
 */
int probe__mount_tracefs(const char *dir);

/* What the kernel's BTF says about the hooks drainstat may use. */
struct btf_facts {
	int err;	   /* 0, or -errno if the BTF could not be parsed */
	int drain_all_id;  /* the required drain hook's BTF id (fentry needs it), or -errno */
	bool ipi_send_cpu; /* the ipi:ipi_send_cpu tracepoint (about 6.4 and later) */
	bool qpw;	   /* struct qpw_struct: drain works may run on the caller's CPU */
	bool parsed;	   /* parsed here: the kernel could not look them up */
};

/*
 * The kernel looks the names up (a syscall program, 5.14 and later); else the
 * BTF is parsed here, which costs tens of milliseconds (5 MB, and libbpf parses
 * it again to load).
 */
void probe__btf_facts(struct btf_facts *f);
/* The same facts from the BTF file at path, parsed here (raw BTF, or an ELF file's .BTF). */
void probe__btf_facts_of_file(const char *path, struct btf_facts *f);
/* 0 if an fentry program attaches to BTF id btf_id, else -errno: cheap, before the real load. */
int probe__fentry(int btf_id);
/* Whether the kernel is built PREEMPT_RT (its version string says so). */
bool probe__preempt_rt(void);
/* 0 if the kernel has kprobes (PMU or tracefs kprobe_events), else -ENOENT. */
int probe__kprobes(const char *tracefs);

/*
 * Why the kernel's BTF does not parse here: 0 if it does, else -errno
 * (-EMFILE, -ENOMEM, ...). libbpf 1.1's btf__load_vmlinux_btf(), which its
 * load calls too, says -ESRCH whatever the cause.
 */
int probe__btf_parse(void);

/* An integer sysctl such as "kernel.kptr_restrict" into *value: 0 or -errno. */
int probe__sysctl(const char *name, int *value);

/*
 * Why a perf event (a kprobe, a tracefs tracepoint) was refused with err: the
 * kernel.perf_event_paranoid value above 2 that, in Debian's kernels, leaves
 * perf_event_open() to CAP_SYS_ADMIN, which this process lacks; else 0.
 */
int probe__perf_restricted(int err);

/* err says the process ran short of fds or memory, not that the kernel refused what it asked. */
bool probe__short_of_resources(int err);

/* The soft RLIMIT_NOFILE: every fd is numbered below it. */
unsigned long long probe__fds_limit(void);
/* How many fds are open, above that limit too (inherited before it was lowered). */
unsigned int probe__fds_in_use(void);

/* What the memory cgroups this process is in leave it: the tightest of them. */
struct memory_room {
	__u64 limit; /* bytes; ~0ULL if no cgroup limits the memory */
	__u64 free;  /* bytes below it: not charged yet, or page cache cheap to reclaim */
};

void probe__memory_room(struct memory_room *room);
/* The soft RLIMIT_AS (ulimit -v) in bytes, ~0ULL for none. */
unsigned long long probe__address_space_limit(void);

#endif /* PROBE_H */
