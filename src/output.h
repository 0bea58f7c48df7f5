/* SPDX-License-Identifier: GPL-2.0 */
/* Where a report goes: the text report, a JSON line, or the Prometheus textfile. */
#ifndef OUTPUT_H
#define OUTPUT_H

#include "cli.h"
#include "model.h"
#include "report_prom.h"

/* The text header at start (text output only). */
void output__start(const struct options *o, const struct model_info *info);

/*
 * Emits one report of m as o asks. A --prom export goes to its file atomically:
 * 0 or -errno, the file untouched on failure; memory holds what the exports
 * before said (report_prom.h), so that no series goes down.
 */
int output__report(const struct options *o, const struct model *m, struct prom_memory *memory);

#endif /* OUTPUT_H */
