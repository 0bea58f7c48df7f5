// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>

#include "units.h"

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
