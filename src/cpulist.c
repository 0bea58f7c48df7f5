// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	if (!line || cpulist__parse(line, mask))
		memset(mask, 0, DRAINSTAT_MAX_CPUS / 8);
	free(line);
}

/* One item of a CPU list, "8" or "0-3", with the comma before it unless first. */
static size_t format_item(char *item, size_t size, bool first_item, int first, int last)
{
	const char *sep = first_item ? "" : ",";

	if (last > first)
		return (size_t)snprintf(item, size, "%s%d-%d", sep, first, last);
	return (size_t)snprintf(item, size, "%s%d", sep, first);
}

/*
 * mask as a CPU list ("0-3,8") into buf. Where size is too small the list
 * ends after a whole item with ",..." (never a number cut short: "0,2,1").
 */
void cpulist__format(const __u64 *mask, char *buf, size_t size)
{
	char item[32];
	size_t n = 0, fits = 0, len;
	int c, first = -1;

	buf[0] = '\0';
	for (c = 0; c <= DRAINSTAT_MAX_CPUS; c++) {
		bool on = c < DRAINSTAT_MAX_CPUS && (mask[c / 64] >> (c % 64) & 1);

		if (on && first < 0)
			first = c;
		if (on || first < 0)
			continue;
		len = format_item(item, sizeof(item), n == 0, first, c - 1);
		first = -1;
		if (n + len >= size) {
			snprintf(buf + fits, size - fits, "%s...", fits ? "," : "");
			return;
		}
		memcpy(buf + n, item, len + 1);
		n += len;
		if (n + 4 < size) /* room for ",..." after it */
			fits = n;
	}
}

static int parse_cpu(const char **p, unsigned long *cpu)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*cpu = strtoul(*p, &end, 10);
	if (errno || *cpu >= DRAINSTAT_MAX_CPUS)
		return -EINVAL;
	*p = end;
	return 0;
}

/* The ranges of a CPU list into mask (NULL: only checked). 0 or -EINVAL. */
static int parse_ranges(const char *s, __u64 *mask)
{
	unsigned long first, last, c;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	for (;;) {
		if (parse_cpu(&p, &first))
			return -EINVAL;
		last = first;
		if (*p == '-' && (p++, parse_cpu(&p, &last) || last < first))
			return -EINVAL;
		for (c = first; mask && c <= last; c++)
			mask[c / 64] |= 1ULL << (c % 64);
		if (!*p)
			return 0;
		if (*p++ != ',')
			return -EINVAL;
	}
}

/* Checked first, then written: mask is left alone on error, with no copy on the stack. */
int cpulist__parse(const char *s, __u64 *mask)
{
	if (parse_ranges(s, NULL))
		return -EINVAL;
	memset(mask, 0, DRAINSTAT_MAX_CPUS / 8);
	return parse_ranges(s, mask);
}
