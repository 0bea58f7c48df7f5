// SPDX-License-Identifier: GPL-2.0
/* The drains in flight verified against their callers (see verify.h). */
#include <errno.h>
#include <stdlib.h>

#include "hooks.h"
#include "verify.h"

enum verdict {
	IN_FLIGHT, /* verified, or no way to tell */
	ENDED,	   /* it ended during the check: not in flight, not a phantom */
	PHANTOM,   /* its caller is out of it: an end was missed */
	RUNNING,   /* its caller ran at the check: told at a later one */
};

/* A frame of the caller's stack in a drain's entry function (hooks.c's drain rows). */
static bool in_drain(const struct caller_check *c, const struct ksyms *ks)
{
	const struct ksym *sym;
	__u32 i;

	for (i = 0; i < c->nr_ips && i < DRAINSTAT_MAX_STACK_DEPTH; i++) {
		sym = ksyms__map_frame(ks, c->ips[i]);
		if (sym && hooks__is_drain(sym->name))
			return true;
	}
	return false;
}

static enum verdict judge(const struct snap_drain *sd, const struct ksyms *ks)
{
	const struct caller_check *c = &sd->check;

	switch (sd->caller) {
	case CALLER_UNCHECKED:
		return IN_FLIGHT;
	case CALLER_GONE:
		return PHANTOM;
	case CALLER_ENDED:
		return ENDED;
	case CALLER_FOUND:
		break;
	}
	if (c->flags & CALLER_EXITED)
		return PHANTOM;
	if (!(c->flags & CALLER_STILL))
		return RUNNING;
	/* a stack the kernel would not give (no CONFIG_STACKTRACE), or no symbols */
	if (!c->nr_ips || !ks)
		return IN_FLIGHT;
	return in_drain(c, ks) ? IN_FLIGHT : PHANTOM;
}

static const struct verify_running *running_before(const struct verify *v,
						   const struct snap_drain *sd)
{
	size_t i;

	for (i = 0; i < v->nr_running; i++)
		if (v->running[i].tid == sd->tid && v->running[i].start_ns == sd->d.start_ns &&
		    v->running[i].nvcsw == sd->check.nvcsw)
			return &v->running[i];
	return NULL;
}

/*
 * A caller that ran at this check: a phantom if it was seen running
 * VERIFY_RUNNING_NS ago with no sleep since; else remembered in next (n of them).
 */
static enum verdict judge_running(const struct verify *v, const struct snap_drain *sd,
				  struct verify_running *next, size_t *n, __u64 now_ns)
{
	const struct verify_running *before = running_before(v, sd);
	__u64 seen_ns = before ? before->seen_ns : now_ns;

	if (now_ns - seen_ns >= VERIFY_RUNNING_NS)
		return PHANTOM;
	next[(*n)++] = (struct verify_running){sd->tid, sd->d.start_ns, sd->check.nvcsw, seen_ns};
	return IN_FLIGHT;
}

/* The phantom ended for both sides: counted here too, for the report being made. */
static void end_phantom(struct snapshot *snap, const struct snap_drain *sd, struct tracer *t)
{
	int counter = tracer__end_phantom(t, sd->tid, sd->d.start_ns);

	if (counter >= 0 && counter < CNT_NR)
		snap->counters[counter]++;
}

int verify__drains(struct verify *v, struct snapshot *snap, const struct ksyms *ks,
		   struct tracer *t, __u64 now_ns)
{
	struct snap_in_flight *f = &snap->in_flight;
	struct verify_running *next;
	size_t nr_next = 0;
	enum verdict verdict;
	int i, kept = 0;

	next = calloc((size_t)f->nr_drains + 1, sizeof(*next));
	if (!next)
		return -ENOMEM;
	for (i = 0; i < f->nr_drains; i++) {
		verdict = judge(&f->drains[i], ks);
		if (verdict == RUNNING)
			verdict = judge_running(v, &f->drains[i], next, &nr_next, now_ns);
		if (verdict == PHANTOM)
			end_phantom(snap, &f->drains[i], t);
		if (verdict == IN_FLIGHT)
			f->drains[kept++] = f->drains[i];
	}
	f->nr_drains = kept;
	free(v->running);
	v->running = next;
	v->nr_running = nr_next;
	return 0;
}

void verify__free(struct verify *v)
{
	free(v->running);
	*v = (struct verify){0};
}
