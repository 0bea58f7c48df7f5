/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A drain's site: the first frame of the caller's kernel stack outside the drain
 * machinery, e.g. generic_fadvise (drainstat(8), OUTPUT, "Site table").
 */
#ifndef SITE_H
#define SITE_H

#include <stdbool.h>
#include <linux/types.h>

/*
 * frames[0] is the innermost frame (where the tracepoint fired); a NULL name is an
 * unknown address. Returns the index of the frame right after the outermost drain
 * function (it may be unknown: the caller prints its address), or without a drain
 * function the first named frame that is not tracing glue; -1 if there is none.
 */
int site__pick(const char *const *frames, int n);

/*
 * True for the drain functions (queue_work_on, __queue_work, and the hooked
 * functions a drain's stack passes: hooks.c), also as compiler clones such as
 * __lru_add_drain_all.constprop.0, and for the tracing glue on top of a BPF
 * stack.
 */
bool site__is_machinery(const char *name);

/*
 * The index of the first drain function: frames above it are tracing glue.
 * Without one, the first named frame that is not glue; 0 if none.
 */
int site__first_frame(const char *const *frames, int n);

/*
 * The caller's return address ret_ip (site_key.ret_ip: a stack taken at a
 * kprobe on arm64 lacks the caller) put back into ips (*nr of at most max)
 * after ips[0], the probed function, unless 0 or there already. When the
 * stack is full its outermost frame makes room.
 */
void site__put_back_caller(__u64 *ips, int *nr, int max, __u64 ret_ip);

#endif /* SITE_H */
