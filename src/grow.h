/* SPDX-License-Identifier: GPL-2.0 */
/* The one growth rule of the arrays that only ever grow: twice as long. */
#ifndef GROW_H
#define GROW_H

#include <errno.h>
#include <stdlib.h>

/*
 * Room for one more of size bytes at *array (n in use, *cap allocated):
 * twice *cap, or first when there is none yet. 0 or -ENOMEM, *array kept.
 */
static inline int grow(void **array, size_t n, size_t *cap, size_t size, size_t first)
{
	size_t want = *cap ? *cap * 2 : first;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*array, want * size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = want;
	return 0;
}

#endif /* GROW_H */
