/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A checker of the Prometheus text format (0.0.4), as strict as the subset that
 * drainstat writes: every line "# HELP name text", "# TYPE name type" or
 * "name{label="value",...} value"; names as Prometheus allows them; label values
 * with only the \\, \" and \n escapes and no raw control byte anywhere; valid
 * UTF-8; each family's lines together, TYPEd before its first sample; no series
 * twice; counters >= 0; histogram buckets in rising le with non-decreasing
 * counts, ending at le="+Inf" equal to _count.
 */
#ifndef FUZZ_PROM_CHECK_H
#define FUZZ_PROM_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct prom_exposition;

/* Parses and checks text[0, len); NULL with the broken rule in err. */
struct prom_exposition *prom_check__parse(const char *text, size_t len, char *err, size_t size);
void prom_check__free(struct prom_exposition *e);

/*
 * The sum of the integer values of the samples named name, only those with
 * label=value when label is not NULL; how many samples matched in *n.
 */
__u64 prom_check__sum(const struct prom_exposition *e, const char *name, const char *label,
		      const char *value, size_t *n);

/* How many samples named name are an integer 0. */
size_t prom_check__zeros(const struct prom_exposition *e, const char *name);

/* The TYPE of family name ("counter", "gauge", "histogram"), NULL if none; HELP in *has_help. */
const char *prom_check__family(const struct prom_exposition *e, const char *name, bool *has_help);

/*
 * The value of the one sample named name (with label=value when label is not
 * NULL) as written; NULL when no sample or more than one matches.
 */
const char *prom_check__value(const struct prom_exposition *e, const char *name, const char *label,
			      const char *value);

#endif /* FUZZ_PROM_CHECK_H */
