/* SPDX-License-Identifier: GPL-2.0 */
/* Map helpers that any BPF program of drainstat's may use. */
#ifndef MAPS_BPF_H
#define MAPS_BPF_H

#include <bpf/bpf_helpers.h>

/* key's value in map, made from zero first if it is not there; NULL when the map is full. */
static __always_inline void *lookup_or_insert(void *map, const void *key, const void *zero)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	/* NOEXIST: another CPU may have made it meanwhile; the lookup finds either */
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

#endif /* MAPS_BPF_H */
