/* SPDX-License-Identifier: GPL-2.0 */
/* Human units for durations: the unit is chosen per value. */
#ifndef UNITS_H
#define UNITS_H

#include <stddef.h>
#include <linux/types.h>

/*
 * At most 5 characters below 11 years: "812ns", "9.1us", "14us", "1.2ms", "27ms", "3.4s",
 * "120s", then from 999.5 s minutes ("17m", "73m") and from 999.5 minutes hours ("17h").
 */
#define UNITS_DURATION_LEN 16
const char *units__duration(__u64 ns, char *buf, size_t size);

#endif /* UNITS_H */
