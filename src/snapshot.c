// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"

void snapshot__free(struct snapshot *snap)
{
	if (!snap)
		return;
	free(snap->sites);
	free(snap->by_key);
	free(snap->cpus);
	memset(snap, 0, sizeof(*snap));
}

static int cmp_key(const struct site_key *a, const struct site_key *b)
{
	if (a->stack_id != b->stack_id)
		return a->stack_id < b->stack_id ? -1 : 1;
	return memcmp(a->comm, b->comm, sizeof(a->comm));
}

static int cmp_site(const void *a, const void *b)
{
	return cmp_key(&(*(const struct snap_site *const *)a)->key,
		       &(*(const struct snap_site *const *)b)->key);
}

int snapshot__sort_sites(struct snapshot *snap)
{
	int i;

	if (snap->sites_cap < snap->nr_sites)
		return -EINVAL;
	/* as many as sites_cap: the tracer frees it when the sites grow */
	if (!snap->by_key) {
		snap->by_key = malloc((size_t)(snap->sites_cap + 1) * sizeof(*snap->by_key));
		if (!snap->by_key)
			return -ENOMEM;
	}
	for (i = 0; i < snap->nr_sites; i++)
		snap->by_key[i] = &snap->sites[i];
	qsort(snap->by_key, (size_t)snap->nr_sites, sizeof(*snap->by_key), cmp_site);
	snap->sites_sorted = true;
	return 0;
}

const struct snap_site *snapshot__find_site(const struct snapshot *snap, const struct site_key *key)
{
	int i, lo = 0, hi = snap->nr_sites - 1, c;

	if (!snap->sites_sorted) {
		for (i = 0; i < snap->nr_sites; i++)
			if (!cmp_key(&snap->sites[i].key, key))
				return &snap->sites[i];
		return NULL;
	}
	while (lo <= hi) {
		i = lo + (hi - lo) / 2;
		c = cmp_key(&snap->by_key[i]->key, key);
		if (!c)
			return snap->by_key[i];
		if (c < 0)
			lo = i + 1;
		else
			hi = i - 1;
	}
	return NULL;
}
