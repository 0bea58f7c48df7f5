/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the emitters' unit tests share: synthetic histograms, and golden files
 * (tests/golden/NAME) that DRAINSTAT_GOLDEN_UPDATE=1 rewrites from the output.
 */
#ifndef GOLDEN_H
#define GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "hist.h"

/* n samples first, first + step, ... into h. */
static inline void golden__hist_fill(struct hist *h, __u64 first, __u64 step, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		__u64 v = first + step * (__u64)i;

		h->count++;
		h->sum += v;
		h->bucket[hist_bucket(v)]++;
		h->max = v > h->max ? v : h->max;
	}
}

/* The whole file at path, NUL-terminated (free it), or NULL. */
static inline char *golden__read(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Checks got against tests/golden/name (rewritten first when updating); path gets its path. */
static inline void golden__check(const char *name, const char *got, char *path, size_t size)
{
	char *want;
	FILE *f;

	snprintf(path, size, "tests/golden/%s", name);
	if (getenv("DRAINSTAT_GOLDEN_UPDATE")) {
		f = fopen(path, "w");
		fputs(got, f);
		fclose(f);
	}
	want = golden__read(path);
	CHECK(want != NULL);
	if (want && strcmp(got, want))
		fprintf(stderr, "  %s differs; got:\n%s", path, got);
	CHECK(want && !strcmp(got, want));
	free(want);
}

#endif /* GOLDEN_H */
