/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Setup's steps, one file a job, called in the order of drainstat(8)'s exit
 * codes by setup.c: each returns EXIT_OK or the exit code of what failed,
 * its message said.
 */
#ifndef SETUP_INT_H
#define SETUP_INT_H

#include <stddef.h>

#include "session_int.h"

#define BTF_PATH "/sys/kernel/btf/vmlinux"
#define TRACEFS	 "/sys/kernel/tracing"

#define MB(bytes) ((double)(bytes) / (1 << 20))

/* setup_target.c: what the options aim at, on this machine */

/* -p's process, its pidfd held in s->pidfd. */
int target__open_process(struct session *s);
/* -C names only CPUs this machine can have. */
int target__check_victims(const struct options *o);
/* --cgroup's id, into s->cgroup_id. */
int target__resolve_cgroup(struct session *s);
/*
 * --by's key: with cgroup, the cgroup v2 mount found and its ids' resolver
 * made; without a cgroup v2 hierarchy the key falls back to comm, said.
 */
int target__key_sites(struct session *s);

/* setup_kernel.c: what the running kernel must give */

/* Root, or CAP_BPF and CAP_PERFMON. */
int kernel__check_privileges(void);
/* The kernel exposes its BTF at BTF_PATH. */
int kernel__check_btf_exposed(void);
/* tracefs at TRACEFS, mounted if need be: while the process has one thread. */
int kernel__mount_tracefs(struct session *s);
/* What the BTF says of the hooks, into s->btf. */
int kernel__read_btf_facts(struct session *s);

/* setup_kscan.c: the kernel symbols the tracer needs, from kallsyms */

/* The names to scan for, in session_int.h's symbol_scan order. */
void kscan__name_symbols(struct symbol_scan *scan);
/*
 * The scan started in a thread: the filter key's symbol, and full and kprobe
 * modes' where they may be tried.
 */
void kscan__start(struct session *s);
/* The scan thread, if any, joined. */
void kscan__join(struct session *s);
/* The tracer's symbols: 0, or -errno with s->symbols_code saying why not. */
int kscan__symbols_ready(struct session *s, bool hooks, struct tracer_symbols *syms);
/* The symbol table into s->ksyms, between load and attach; as kscan__symbols_ready(). */
int kscan__load_symbols(struct session *s);

/* setup_budget.c: the fds and memory the run needs, and what it has */

/* The most fds the run holds at once beside the tracer's. */
unsigned int budget__fds_beside(const struct session *s);
/* Short of fds or memory: which, and what the run needs; returns the exit code. */
int budget__resource_error(struct session *s, int err);
/*
 * What the run needs with s->topts and heap bytes for libbpf's BTF parse, into
 * s->needs; room for it?
 */
int budget__fit_needs(struct session *s, size_t heap);
/* The heap libbpf's parse of the kernel's BTF takes. */
size_t budget__btf_parse_size(void);
/* size bytes of heap faulted in, then freed for libbpf: 0 or -ENOMEM. */
int budget__prefault_heap(size_t size);

/* setup_start.c: the tracer started, and the -T log */

/* The tracer started into s->tracer with s->topts, after the memory check. */
int start__tracer(struct session *s);
/* -T: the slow-drain log, read from the tracer's ring buffer. */
int start__slowlog(struct session *s);

/* setup_describe.c: what the run sees and what it cannot */

/*
 * What a run in mode f->mode, with f's optional hooks, cannot see, into buf:
 * the header's second line and JSON's cannot_see; "" for nothing. ipis: --ipis
 * was given; qpw: the kernel has Queue PerCPU Work (btf_facts.qpw);
 * fadvise_cause: why the fadvise calls are not traced, where they are not.
 */
void describe__blind_spots(const struct tracer_features *f, bool ipis, bool qpw,
			   const char *fadvise_cause, char *buf, size_t size);
/* s->info, the blind spots and the uname for every output, once the tracer started. */
void describe__run(struct session *s);

#endif /* SETUP_INT_H */
