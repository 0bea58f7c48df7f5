/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The drains in flight verified against the kernel when a report is made, not
 * only remembered from events: a drain whose caller is gone, or sleeps out of
 * every drain function, or has run on a CPU for VERIFY_RUNNING_NS without a
 * sleep, ended with its end unseen (a phantom). It is ended for both sides
 * (tracer__end_phantom()), counted (CNT_PHANTOMS_ENDED) and not shown. A
 * caller whose stack cannot be read (no check: the kernel refused the
 * iterator) leaves its drain shown as in flight.
 */
#ifndef VERIFY_H
#define VERIFY_H

#include <linux/types.h>
#include "ksyms.h"
#include "snapshot.h"
#include "tracer.h"

/*
 * A drain's caller seen running at two checks this far apart, with no
 * voluntary switch in between, is not waiting in the drain: a drain waits
 * asleep (the drain mutex, flush_work()), and its own part takes micro- to
 * milliseconds.
 */
#define VERIFY_RUNNING_NS 1000000000ULL

/* A caller seen running at a check: when first, and its voluntary switches then. */
struct verify_running {
	__u32 tid;
	__u64 start_ns; /* its drain's */
	__u64 nvcsw;
	__u64 seen_ns;
};

/* What a run remembers from one check to the next: zeroed to begin. */
struct verify {
	struct verify_running *running; /* the callers seen running at the last check */
	size_t nr_running;
};

/*
 * snap's drains in flight, checked by the tracer (snap_drain.caller), judged
 * at now_ns: the phantoms ended, counted in snap->counters, and taken out of
 * snap with the drains that ended meanwhile. 0 or -errno.
 */
int verify__drains(struct verify *v, struct snapshot *snap, const struct ksyms *ks,
		   struct tracer *t, __u64 now_ns);
void verify__free(struct verify *v);

#endif /* VERIFY_H */
