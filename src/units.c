// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

#define NS_PER_SEC 1000000000ULL

const char *units__duration(__u64 ns, char *buf, size_t size)
{
	/* each unit until its value rounds to 1000: "999s", then "17m"; "999m", then "17h" */
	static const struct {
		const char *name;
		double ns;
	} units[] = {{"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
	size_t i, last = sizeof(units) / sizeof(units[0]) - 1;
	double v;

	if (ns < 1000) {
		snprintf(buf, size, "%lluns", (unsigned long long)ns);
		return buf;
	}
	for (i = 0; i < last && (double)ns / units[i].ns >= 999.5; i++)
		;
	v = (double)ns / units[i].ns;
	/* round first so that 9.96 prints as "10us", not "10.0us" */
	if (v < 9.95)
		snprintf(buf, size, "%.1f%s", v, units[i].name);
	else
		snprintf(buf, size, "%.0f%s", v, units[i].name);
	return buf;
}

/*
 * "2.5" of unit_ns nanoseconds: digits, an optional fraction (finer than a
 * nanosecond is dropped), more than 0 ns and at most DRAINSTAT_SECONDS_MAX s.
 */
static int parse_scaled(const char *s, __u64 unit_ns, __u64 *ns)
{
	const __u64 max_ns = DRAINSTAT_SECONDS_MAX * NS_PER_SEC;
	__u64 whole = 0, frac = 0, scale = unit_ns;
	const char *p = s;

	if (!s || !isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		whole = whole * 10 + (__u64)(*p - '0');
		if (whole > max_ns / unit_ns)
			return -EINVAL;
	}
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			scale /= 10;
			frac += (__u64)(*p - '0') * scale;
		}
	}
	if (*p || whole * unit_ns + frac == 0 || whole * unit_ns + frac > max_ns)
		return -EINVAL;
	*ns = whole * unit_ns + frac;
	return 0;
}

int units__parse_duration(const char *s, __u64 *ns)
{
	static const struct {
		const char *unit;
		__u64 ns;
	} units[] = {{"ns", 1},		{"us", 1000},	       {"ms", 1000000},
		     {"s", 1000000000}, {"m", 60000000000ULL}, {"h", 3600000000000ULL}};
	char num[32];
	size_t i, len;
	__u64 v;

	if (!s)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		len = strlen(s);
		if (len <= strlen(units[i].unit) ||
		    strcmp(s + len - strlen(units[i].unit), units[i].unit))
			continue;
		len -= strlen(units[i].unit);
		if (len >= sizeof(num) || !isdigit((unsigned char)s[len - 1]))
			return -EINVAL;
		memcpy(num, s, len);
		num[len] = '\0';
		/* "1.5" of ms is 1500000 ns */
		if (parse_scaled(num, units[i].ns, &v))
			return -EINVAL;
		*ns = v;
		return 0;
	}
	return -EINVAL;
}

int units__parse_seconds(const char *s, __u64 *ns)
{
	return parse_scaled(s, NS_PER_SEC, ns);
}
