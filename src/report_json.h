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

/*
 * One JSON object on one line (NDJSON with INTERVAL), ending in "\n". Every
 * line, report or event, has "time": RFC 3339 in UTC with microseconds
 * ("2026-12-03T17:06:34.123456Z"), or null if unknown (0). A report's is
 * m->wall_ns, when its snapshot was read.
 */
void report_json__print(FILE *f, const struct model *m, const char *version);

/*
 * -T with -j: a drain as it ended slowly ("time": when it ended), and a drain
 * in flight past threshold_ns ("time": wall_ns, when it was seen), each one
 * object on one line with "event".
 */
void report_json__slow_drain(FILE *f, const struct model_slow_drain *sd);
void report_json__drain_in_flight(FILE *f, const struct model_drain *md, __u64 threshold_ns,
				  __u64 wall_ns);

/*
 * Writes the first len bytes of s (fewer if a NUL comes first) as a quoted JSON
 * string: the text escape__text() makes of them (printable ASCII as itself; a
 * backslash, and every other byte, as \xHH), with its quotes and backslashes
 * escaped for JSON. Comms, paths and symbols are bytes, not text: decoded, the
 * string is ASCII in which every backslash starts \xHH, so byte 0xff ("\xff")
 * and the character U+00FF (its UTF-8 bytes, "\xc3\xbf") stay apart, and the
 * bytes read back exactly. The output is printable ASCII.
 */
void report_json__string(FILE *f, const char *s, size_t len);

#endif /* REPORT_JSON_H */
