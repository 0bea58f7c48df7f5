// SPDX-License-Identifier: GPL-2.0
/*
 * container__parse() on an arbitrary path (the input up to its first NUL,
 * tests/fuzz/container.dict the runtimes' and the kubelet's words). What it
 * finds must be well formed: an id of hex digits (a machine's name: at most
 * CONTAINER_ID_MAX bytes, no NUL), a pod UID of 32 hex digits or a UUID with
 * dashes, names for every runtime and class; and found again the same with
 * the path's leading slashes doubled.
 */
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "harness.h"

#define MAX_PATH 4096

static bool all_hex(const char *s)
{
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static void check_uid(const char *uid)
{
	size_t i, n = strlen(uid);

	FUZZ_CHECK(n == 0 || n == 32 || n == 36, "pod uid '%s'", uid);
	for (i = 0; n == 36 && i < n; i++)
		FUZZ_CHECK((uid[i] == '-') == (i == 8 || i == 13 || i == 18 || i == 23),
			   "pod uid '%s'", uid);
}

static void check_found(const char *path, bool known, const struct container *c)
{
	size_t n = strlen(c->id);

	FUZZ_CHECK(n <= CONTAINER_ID_MAX, "'%s': id of %zu bytes", path, n);
	if (c->runtime == CONTAINER_RUNTIME_NSPAWN)
		FUZZ_CHECK(n > 0, "'%s': a machine with no name", path);
	else
		FUZZ_CHECK(all_hex(c->id) && (n == 0 || n >= 12), "'%s': id '%s'", path, c->id);
	check_uid(c->pod_uid);
	FUZZ_CHECK(c->runtime == CONTAINER_RUNTIME_NONE || container__runtime_name(c),
		   "'%s': runtime %d", path, c->runtime);
	FUZZ_CHECK(c->qos == CONTAINER_QOS_NONE || container__qos_name(c->qos), "'%s': qos %d",
		   path, c->qos);
	FUZZ_CHECK(!c->conmon || c->runtime == CONTAINER_RUNTIME_CRIO ||
		       c->runtime == CONTAINER_RUNTIME_PODMAN,
		   "'%s': conmon of runtime %d", path, c->runtime);
	FUZZ_CHECK(known == (c->runtime || c->id[0] || c->pod_uid[0] || c->qos), "'%s': known %d",
		   path, known);
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	char path[MAX_PATH + 2];
	struct container c, again;
	size_t n = strnlen((const char *)data, size < MAX_PATH ? size : MAX_PATH);
	bool known;

	memcpy(path + 1, data, n);
	path[0] = '/';
	path[n + 1] = '\0';
	known = container__parse(path + 1, &c);
	check_found(path + 1, known, &c);
	FUZZ_CHECK(container__parse(path, &again) == known && !memcmp(&c, &again, sizeof(c)),
		   "'%s': another answer with a leading '/'", path + 1);
	return 0;
}
