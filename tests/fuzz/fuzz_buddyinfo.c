// SPDX-License-Identifier: GPL-2.0
/*
 * probe__free_blocks() on arbitrary text, for every order: it says -EINVAL for
 * the same texts whatever the order, never a negative count otherwise, and a
 * block of one order holds two of the next smaller one.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "harness.h"
#include "probe.h"

#define ORDERS 24

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	char *text = malloc(size + 1);
	long blocks[ORDERS];
	unsigned int o;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (o = 0; o < ORDERS; o++) {
		blocks[o] = probe__free_blocks(text, o);
		FUZZ_CHECK(blocks[o] >= 0 || blocks[o] == -EINVAL, "order %u: %ld", o, blocks[o]);
		FUZZ_CHECK((blocks[o] == -EINVAL) == (blocks[0] == -EINVAL),
			   "order %u says %ld, order 0 %ld", o, blocks[o], blocks[0]);
	}
	for (o = 0; o + 1 < ORDERS && blocks[0] >= 0; o++)
		FUZZ_CHECK(blocks[o] == LONG_MAX || blocks[o] >= 2 * blocks[o + 1] ||
			       blocks[o + 1] > LONG_MAX / 2,
			   "order %u: %ld blocks, order %u: %ld", o, blocks[o], o + 1,
			   blocks[o + 1]);
	free(text);
	return 0;
}
