/* SPDX-License-Identifier: GPL-2.0 */
/* A process's file mappings, to name user-space frames "module+0xoffset". */
#ifndef UMAPS_H
#define UMAPS_H

#include <stddef.h>
#include <linux/types.h>

struct umaps;

/*
 * The most fds a struct umaps holds at once: the mapped files it keeps open
 * for their symbols (its load reads one /proc file at a time, none kept).
 */
#define UMAPS_FDS_MAX 4

/*
 * Reads /proc/PID/maps (or path if not NULL, for tests), each file under its
 * real name: the kernel's \012 for a newline in it decoded. 0 or -errno.
 */
int umaps__load(int pid, const char *path, struct umaps **out);
void umaps__free(struct umaps *um);

/*
 * What naming user frames may spend (issue 40: every user frame is an address
 * a user chose, in a file a user wrote). libelf's memory for one file (its
 * headers, symbol and string tables: elfsyms.h), and for the files open at
 * once: a file that needs room closes the least used others first. Per frame
 * and per -T event, the symbols and section headers looked at (10 to 20 ns
 * each, their reading included: 1M took 18 ms) and the time.
 */
#define UMAPS_FILE_BYTES  (64ULL << 20)
#define UMAPS_TOTAL_BYTES (128ULL << 20)
#define UMAPS_FRAME_WORK  (1ULL << 20)
#define UMAPS_EVENT_WORK  (4ULL << 20)
#define UMAPS_FRAME_NS	  (20ULL * 1000000)
#define UMAPS_EVENT_NS	  (100ULL * 1000000)
/* What a frame not named for the budget shows after the offset in its file. */
#define UMAPS_BUDGET_MARK "[budget]"

/* One event's budget, spent frame by frame. */
struct umaps_budget {
	__u64 work;	   /* symbols and section headers still to look at */
	__u64 deadline_ns; /* CLOCK_MONOTONIC; 0: none (tests) */
	unsigned int over; /* frames not named for the budget */
};

/* What libelf holds for the files open now, as counted: at most UMAPS_TOTAL_BYTES. */
__u64 umaps__bytes(const struct umaps *um);
/* A -T event's budget, from now: UMAPS_EVENT_WORK and UMAPS_EVENT_NS. */
void umaps__event_budget(struct umaps_budget *b);
/*
 * "posix_fadvise+0x1a (libc.so.6)": the function from the file's symbols, or
 * "libc.so.6+0xfb2d3" (the offset in the file) without one, "libc.so.6+0xfb2d3
 * [budget]" when b ran out first (counted in b->over), or "0x..." outside
 * every file mapping.
 */
const char *umaps__describe(struct umaps *um, __u64 addr, char *buf, size_t size,
			    struct umaps_budget *b);

#endif /* UMAPS_H */
