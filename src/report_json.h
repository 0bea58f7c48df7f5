/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The JSON report: the whole model as one object on one line, so that reports
 * every INTERVAL form NDJSON. Keys are the words of the drain model; every key
 * is always present, whatever the mode, so consumers see one schema.
 */
#ifndef REPORT_JSON_H
#define REPORT_JSON_H

#include <stddef.h>
#include <stdio.h>
#include "model.h"

/* One JSON object on one line (NDJSON with INTERVAL), ending in "\n". */
void report_json__print(FILE *f, const struct model *m, const char *version);

/*
 * -T with -j: a drain as it ended slowly, and a drain in flight past
 * threshold_ns, each one object on one line with "event" and the time of day
 * ("2026-12-03T14:02:03.123+0000").
 */
void report_json__slow_drain(FILE *f, const struct model_slow_drain *sd, const char *time);
void report_json__drain_in_flight(FILE *f, const struct model_drain *md, __u64 threshold_ns,
				  const char *time);

/*
 * Writes the first len bytes of s (fewer if a NUL comes first) as a quoted JSON
 * string (RFC 8259): quote and backslash escaped, control characters (C0 and
 * DEL) as \u00XX, valid UTF-8 copied as is. Comms are raw kernel bytes: a byte
 * that is not part of a valid UTF-8 sequence is written as \u00XX of its value,
 * so the output is always valid JSON and the byte can still be read off.
 */
void report_json__string(FILE *f, const char *s, size_t len);

#endif /* REPORT_JSON_H */
