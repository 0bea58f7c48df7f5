// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cpulist.h"
#include "drainstat.h"

/* A kernel CPU list file ("2-3,6\n") into mask; empty, absent or "(null)": none. */
void cpulist__read(const char *path, __u64 *mask)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;

	if (f && getline(&line, &cap, f) > 0)
		line[strcspn(line, "\n")] = '\0';
	if (f)
		fclose(f);
	if (!line || cli__parse_cpulist(line, mask))
		memset(mask, 0, DRAINSTAT_MAX_CPUS / 8);
	free(line);
}

/* mask as a CPU list ("0-3,8"), into buf. */
void cpulist__format(const __u64 *mask, char *buf, size_t size)
{
	size_t n = 0;
	int c, first = -1;

	buf[0] = '\0';
	for (c = 0; c <= DRAINSTAT_MAX_CPUS && n < size; c++) {
		bool on = c < DRAINSTAT_MAX_CPUS && (mask[c / 64] >> (c % 64) & 1);

		if (on && first < 0)
			first = c;
		if (on || first < 0)
			continue;
		n += (size_t)snprintf(buf + n, size - n, n ? ",%d" : "%d", first);
		if (c - 1 > first && n < size)
			n += (size_t)snprintf(buf + n, size - n, "-%d", c - 1);
		first = -1;
	}
}
