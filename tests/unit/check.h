/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal unit-test harness: each TEST is a function, CHECK records a failure
 * and goes on, each test prints "PASS name" or "FAIL name" and tests/run counts them.
 */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>
#include <string.h>

static int check__failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			check__failures++;                                                         \
		}                                                                                  \
	} while (0)

#define CHECK_STR(got, want)                                                                       \
	do {                                                                                       \
		const char *g_ = (got), *w_ = (want);                                              \
		if (!g_ || strcmp(g_, w_)) {                                                       \
			fprintf(stderr, "  %s:%d: got \"%s\", want \"%s\"\n", __FILE__, __LINE__,  \
				g_ ? g_ : "(null)", w_);                                           \
			check__failures++;                                                         \
		}                                                                                  \
	} while (0)

static inline int check__run(const char *name, void (*fn)(void))
{
	int before = check__failures;

	fn();
	printf("%s %s\n", check__failures == before ? "PASS" : "FAIL", name);
	return check__failures == before ? 0 : 1;
}

#define RUN(fn) failed += check__run(#fn, fn)

#endif /* CHECK_H */
