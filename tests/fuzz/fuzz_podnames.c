// SPDX-License-Identifier: GPL-2.0
/*
 * podnames__parse() on an arbitrary directory entry name (the input up to its
 * first NUL, at most NAME_MAX bytes as readdir() gives them): what it takes
 * must be "<namespace>_<pod>_<uid>" again, each part within its bounds.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "podnames.h"

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	char entry[NAME_MAX + 1], again[sizeof(struct podname) + 2];
	size_t n = strnlen((const char *)data, size < NAME_MAX ? size : NAME_MAX);
	struct podname p;

	memcpy(entry, data, n);
	entry[n] = '\0';
	if (!podnames__parse(entry, &p))
		return 0;
	FUZZ_CHECK(strlen(p.namespace) >= 1 && strlen(p.namespace) <= PODNAMES_NAMESPACE_MAX,
		   "'%s': namespace '%s'", entry, p.namespace);
	FUZZ_CHECK(strlen(p.name) >= 1 && strlen(p.name) <= PODNAMES_NAME_MAX, "'%s': name '%s'",
		   entry, p.name);
	FUZZ_CHECK(strlen(p.uid) == 32 || strlen(p.uid) == 36, "'%s': uid '%s'", entry, p.uid);
	snprintf(again, sizeof(again), "%s_%s_%s", p.namespace, p.name, p.uid);
	FUZZ_CHECK(!strcmp(again, entry), "'%s' read as '%s'", entry, again);
	return 0;
}
