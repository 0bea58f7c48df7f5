// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel facts read from text: the free huge-page-sized blocks of
 * /proc/buddyinfo, which decide whether setup's heap asks for huge pages.
 */
#include <errno.h>

#include "check.h"
#include "probe.h"

/* This project's 6.18 guest, 24 GB: DMA's blocks do not count. */
static const char guest[] = "Node 0, zone      DMA      0      0      0      0      0      0      "
			    "0      0      1      1      3 \n"
			    "Node 0, zone    DMA32      4      1      2      2      2      2      "
			    "1      4      4      2    752 \n"
			    "Node 0, zone   Normal   2707   2197   1201    758    434    213    "
			    "124    133     99     43    406 \n";

static void test_free_blocks_by_order(void)
{
	/* order 9 (2 MB of 4 KB pages): each order-10 block holds two */
	CHECK(probe__free_blocks(guest, 9) == 2 + 2 * 752 + 43 + 2 * 406);
	CHECK(probe__free_blocks(guest, 10) == 752 + 406);
	/* order 0 counts every free page */
	CHECK(probe__free_blocks(guest, 0) ==
	      4 + 2 * 1 + 4 * 2 + 8 * 2 + 16 * 2 + 32 * 2 + 64 * 1 + 128 * 4 + 256 * 4 + 512 * 2 +
		  1024 * 752 + 2707 + 2 * 2197 + 4 * 1201 + 8 * 758 + 16 * 434 + 32 * 213 +
		  64 * 124 + 128 * 133 + 256 * 99 + 512 * 43 + 1024 * 406);
	/* above the largest order listed there are none */
	CHECK(probe__free_blocks(guest, 11) == 0);
}

static void test_free_blocks_fragmented(void)
{
	/* a fragmented machine: small blocks only, no huge page without compaction */
	static const char frag[] =
	    "Node 0, zone   Normal  90000  40000  9000  100  3  1  0  0  0  0  0\n"
	    "Node 1, zone   Normal  80000  30000  8000  100  3  1  0  0  0  0  0\n";

	CHECK(probe__free_blocks(frag, 9) == 0);
	CHECK(probe__free_blocks(frag, 5) == 2);
}

static void test_free_blocks_not_buddyinfo(void)
{
	CHECK(probe__free_blocks("", 9) == -EINVAL);
	CHECK(probe__free_blocks("MemTotal: 24684000 kB\n", 9) == -EINVAL);
	CHECK(probe__free_blocks("Node 0, zone Normal 1 2 3\ngarbage\n", 9) == -EINVAL);
	/* no trailing newline, fewer orders (another MAX_PAGE_ORDER) */
	CHECK(probe__free_blocks("Node 0, zone Normal 1 2 3 4 5 6 7 8 9 7", 9) == 7);
}

int main(void)
{
	int failed = 0;

	RUN(test_free_blocks_by_order);
	RUN(test_free_blocks_fragmented);
	RUN(test_free_blocks_not_buddyinfo);
	return failed ? 1 : 0;
}
