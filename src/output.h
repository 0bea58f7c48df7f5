/* SPDX-License-Identifier: GPL-2.0 */
/* Where a report goes: the text report, a JSON line, or the Prometheus textfile. */
#ifndef OUTPUT_H
#define OUTPUT_H

#include "cli.h"
#include "export.h"
#include "model.h"
#include "report_prom.h"

/* The text header at start (text output only). 0 or -errno of the write. */
int output__start(const struct options *o, const struct model_info *info);

/* One report of m on stdout, as text or a JSON line. 0 or -errno of the write. */
int output__report(const struct options *o, const struct model *m);

/*
 * The Prometheus export of m, written atomically (export.h): 0 or -errno, the
 * file untouched on failure; memory holds what the exports before said
 * (report_prom.h), so that no series goes down.
 */
int output__export(struct export *e, const struct options *o, const struct model *m,
		   struct prom_memory *memory);

/* Flushes f: 0, or -errno of a write that failed since the last flush (-EIO unknown). */
int output__flush(FILE *f);

#endif /* OUTPUT_H */
