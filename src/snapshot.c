// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"

void snapshot__free(struct snapshot *snap)
{
	if (!snap)
		return;
	free(snap->sites);
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
	return cmp_key(&((const struct snap_site *)a)->key, &((const struct snap_site *)b)->key);
}

void snapshot__sort_sites(struct snapshot *snap)
{
	qsort(snap->sites, (size_t)snap->nr_sites, sizeof(*snap->sites), cmp_site);
	snap->sites_sorted = true;
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
		c = cmp_key(&snap->sites[i].key, key);
		if (!c)
			return &snap->sites[i];
		if (c < 0)
			lo = i + 1;
		else
			hi = i - 1;
	}
	return NULL;
}
