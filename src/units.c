// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>

#include "units.h"

const char *units__duration(__u64 ns, char *buf, size_t size)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = {{"s", 1e9}, {"ms", 1e6}, {"us", 1e3}};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double v = (double)ns / units[i].ns;

		if (v < 0.9995)
			continue;
		/* round first so that 9.96 prints as "10us", not "10.0us" */
		if (v < 9.95)
			snprintf(buf, size, "%.1f%s", v, units[i].name);
		else
			snprintf(buf, size, "%.0f%s", v, units[i].name);
		return buf;
	}
	snprintf(buf, size, "%lluns", (unsigned long long)ns);
	return buf;
}
