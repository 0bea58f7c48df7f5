// SPDX-License-Identifier: GPL-2.0
/* A drain of the -T log as it ended, its kernel and user frames named. */
#include <errno.h>
#include <string.h>

#include "cgroups.h"
#include "model_int.h"
#include "podnames.h"
#include "tracer.h"
#include "umaps.h"

int model__slow_drain(const struct slow_drain *d, const struct ksyms *ks, struct umaps *um,
		      struct cgroups *cg, const struct podnames *pn, const struct snap_clock *now,
		      struct model_slow_drain *out)
{
	char site[MODEL_NAME_LEN], (*uframes)[MODEL_UFRAME_LEN];
	struct umaps_budget budget;
	int i, err;

	memset(out, 0, sizeof(*out));
	out->ev = &d->ev;
	out->wall_ns = snapshot__wall_ns(now, d->ev.end_ns);
	err =
	    model_symbolize(d->kips, d->nr_kips, ks, &out->arena, &out->kstack, site, sizeof(site));
	uframes = err ? NULL : arena__alloc(&out->arena, (size_t)d->nr_uips * sizeof(*uframes) + 1);
	if (!uframes) {
		model__slow_drain_free(out);
		return -ENOMEM;
	}
	umaps__event_budget(&budget);
	for (i = 0; i < d->nr_uips; i++)
		umaps__describe(um, d->uips[i], uframes[i], sizeof(uframes[i]), &budget);
	out->uframes_over_budget = budget.over;
	out->uframes = (const char(*)[MODEL_UFRAME_LEN])uframes;
	out->nr_uframes = d->nr_uips;
	if (cg) {
		cgroups__learn(cg, &d->ev.cgroup_id, 1);
		out->cgroup = model_cgroup_name(&out->arena, cg, d->ev.cgroup_id);
		/* out of memory: the event without its pod, as without its cgroup */
		model_name_pod(&out->arena, pn, out->cgroup, &out->pod);
	}
	return 0;
}

void model__slow_drain_free(struct model_slow_drain *sd)
{
	arena__free(&sd->arena);
	memset(sd, 0, sizeof(*sd));
}

__u32 model__slow_in_place(const struct slow_drain_event *e)
{
	return e->nr_in_place < e->nr_targets ? e->nr_in_place : e->nr_targets;
}

__u32 model__slow_works(const struct slow_drain_event *e)
{
	return e->nr_targets - model__slow_in_place(e);
}
