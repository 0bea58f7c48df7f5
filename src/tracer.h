/* SPDX-License-Identifier: GPL-2.0 */
/* The BPF side's lifecycle: open, configure, load, attach, read snapshots, detach. */
#ifndef TRACER_H
#define TRACER_H

#include <stdbool.h>
#include <linux/types.h>
#include "snapshot.h"

struct tracer;

struct tracer_opts {
	__u64 drain_work_fn; /* address of lru_add_drain_per_cpu */
	__u32 filter_tgid;   /* 0: every process */
	__u32 max_sites;     /* 0: the BPF object's default */
	__u32 max_stacks;
};

enum tracer_step {
	TRACER_OPEN,
	TRACER_LOAD,
	TRACER_ATTACH,
};

/* On failure *failed says which step failed; the result is -errno. */
int tracer__start(const struct tracer_opts *opts, struct tracer **out, enum tracer_step *failed);
int tracer__snapshot(const struct tracer *t, struct snapshot *snap);
/* Whether the fadvise syscall tracepoints could be attached. */
bool tracer__has_fadvise(const struct tracer *t);
void tracer__free(struct tracer *t);

#endif /* TRACER_H */
