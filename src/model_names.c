// SPDX-License-Identifier: GPL-2.0
/*
 * The names the model gives, for every part of it (model.c's sites,
 * model_inflight.c's and model_stall.c's drains in flight, model_slow.c's -T
 * log): a stack's frames and its site, a drain's phase, a cgroup and its pod.
 * It calls into none of them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cgroups.h"
#include "container.h"
#include "ksyms.h"
#include "model_int.h"
#include "podnames.h"
#include "site.h"

static const char *const phase_names[] = {
    [PHASE_MUTEX] = "waiting for the drain mutex",
    [PHASE_PENDING] = "works pending",
    [PHASE_RUNNING] = "works running",
    [PHASE_RETURNING] = "works done, returning",
    [PHASE_NO_WORK] = "no work queued (the drain mutex, or its works run in place)",
    [PHASE_IN_PLACE] = "draining other CPUs in place",
};

static const char *const phase_keys[] = {
    [PHASE_MUTEX] = "waiting_for_mutex", [PHASE_PENDING] = "works_pending",
    [PHASE_RUNNING] = "works_running",	 [PHASE_RETURNING] = "returning",
    [PHASE_NO_WORK] = "no_work_queued",	 [PHASE_IN_PLACE] = "draining_in_place",
};

const char *model__phase_name(enum drain_phase p)
{
	return phase_names[p];
}

const char *model__phase_key(enum drain_phase p)
{
	return phase_keys[p];
}

static void format_frame(char *buf, size_t size, __u64 ip, const struct ksym *sym)
{
	if (sym)
		snprintf(buf, size, "%s+0x%llx", sym->name, (unsigned long long)(ip - sym->addr));
	else
		snprintf(buf, size, "0x%llx", (unsigned long long)ip);
}

/*
 * The frames of a stack as "name+0xoff" from the first drain function down (the
 * BPF program and tracing glue above it say nothing; frames in BPF code are
 * dropped wherever they are), in a, and the site: the frame after the outermost
 * drain function. 0 or -ENOMEM.
 */
int model_symbolize(const __u64 *all_ips, int nr_all, const struct ksyms *ks, struct arena *a,
		    struct model_stack *st, char *site, size_t site_size)
{
	const struct ksym *syms[DRAINSTAT_MAX_STACK_DEPTH];
	const char *names[DRAINSTAT_MAX_STACK_DEPTH];
	__u64 ips[DRAINSTAT_MAX_STACK_DEPTH];
	char(*frames)[MODEL_NAME_LEN];
	int i, pick, first, nr_ips;

	nr_ips = ksyms__map_stack(ks, all_ips, nr_all, ips, syms);
	for (i = 0; i < nr_ips; i++)
		names[i] = syms[i] ? syms[i]->name : NULL;
	first = site__first_frame(names, nr_ips);
	st->nr_frames = nr_ips - first;
	frames = arena__alloc(a, (size_t)st->nr_frames * sizeof(*frames) + 1);
	if (!frames)
		return -ENOMEM;
	for (i = first; i < nr_ips; i++)
		format_frame(frames[i - first], sizeof(frames[0]), ips[i], syms[i]);
	st->frames = (const char(*)[MODEL_NAME_LEN])frames;
	pick = site__pick(names, nr_ips);
	if (nr_ips == 0 || pick < 0)
		snprintf(site, site_size, "[unknown]");
	else if (names[pick])
		snprintf(site, site_size, "%s", names[pick]);
	else
		snprintf(site, site_size, "0x%llx", (unsigned long long)ips[pick]);
	return 0;
}

/* A copy of s in a; NULL: ENOMEM. */
static const char *arena_strdup(struct arena *a, const char *s)
{
	size_t len = strlen(s) + 1;
	char *p = arena__alloc_uninit(a, len);

	return p ? memcpy(p, s, len) : NULL;
}

const char *model_cgroup_name(struct arena *a, const struct cgroups *cg, __u64 id)
{
	const char *path = cgroups__path(cg, id);
	char gone[32];

	if (!path) {
		snprintf(gone, sizeof(gone), "cgroup:%llu", (unsigned long long)id);
		path = gone;
	}
	return arena_strdup(a, path);
}

int model_name_pod(struct arena *a, const struct podnames *pn, const char *cgroup,
		   struct model_pod *out)
{
	const struct podname *p;
	struct container c;

	if (!pn || !cgroup || !container__parse(cgroup, &c) || !c.pod_uid[0])
		return 0;
	p = podnames__find(pn, c.pod_uid);
	if (!p)
		return 0;
	out->name = arena_strdup(a, p->name);
	out->namespace = arena_strdup(a, p->namespace);
	return out->name && out->namespace ? 0 : -ENOMEM;
}
