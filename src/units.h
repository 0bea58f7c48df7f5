/* SPDX-License-Identifier: GPL-2.0 */
/* Durations in human units: printed with the unit chosen per value, and parsed. */
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

/* INTERVAL, -d, -T, --stuck: at most 366 days (a leap year), in seconds. */
#define DRAINSTAT_SECONDS_MAX 31622400

/* "10", "2.5", "0.1": seconds into ns, > 0 and at most DRAINSTAT_SECONDS_MAX. 0 or -EINVAL. */
int units__parse_seconds(const char *s, __u64 *ns);
/* "500us", "2ms", "1.5s", "800ns": with its unit, > 0, at most 366 days. 0 or -EINVAL. */
int units__parse_duration(const char *s, __u64 *ns);

#endif /* UNITS_H */
