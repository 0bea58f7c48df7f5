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

const struct snap_site *snapshot__find_site(const struct snapshot *snap, const struct site_key *key)
{
	int i;

	for (i = 0; i < snap->nr_sites; i++) {
		const struct site_key *k = &snap->sites[i].key;

		if (k->stack_id == key->stack_id && !memcmp(k->comm, key->comm, sizeof(k->comm)))
			return &snap->sites[i];
	}
	return NULL;
}
