/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model's insides, shared by its files only: model.c (the sites, the
 * victim CPUs, fadvise, the counters and the build), model_inflight.c (the
 * drains in flight), model_stall.c (their stalls' causes), model_slow.c (a
 * drain of the -T log) and model_names.c (the names they all give, calling
 * into none of them).
 */
#ifndef MODEL_INT_H
#define MODEL_INT_H

#include <stddef.h>
#include "model.h"

/* A stack's frames from the first drain function down, in a, and its site (model_names.c). */
int model_symbolize(const __u64 *all_ips, int nr_all, const struct ksyms *ks, struct arena *a,
		    struct model_stack *st, char *site, size_t site_size);

struct cgroups;

/* id's path as cg names it, else "cgroup:ID" (gone, or not walked), in a; NULL: ENOMEM. */
const char *model_cgroup_name(struct arena *a, const struct cgroups *cg, __u64 id);
/*
 * The pod cgroup's path names, by pn (NULL: none), into *out, its strings in
 * a; *out untouched where the path names no pod pn knows. 0 or -ENOMEM.
 */
int model_name_pod(struct arena *a, const struct podnames *pn, const char *cgroup,
		   struct model_pod *out);

/* m's drains in flight from cur's, summed up (model__sum_in_flight()). 0 or -ENOMEM. */
int model_build_in_flight(struct model *m, const struct snapshot *cur, const struct ksyms *ks);
/* Why m's mutex waiters wait, into their stall: the holder among m's drains (sorted). */
void model_stall_mutex(struct model *m);

#endif /* MODEL_INT_H */
