/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every fuzz target shares: the input read as a stream of choices, the
 * check that turns a broken invariant into a crash libFuzzer keeps, an in-memory
 * file for the parsers that take a path, and a UTF-8 reader for the checkers.
 */
#ifndef FUZZ_HARNESS_H
#define FUZZ_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/types.h>

/* abort() is a crash to libFuzzer: it saves the input as an artifact. */
#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: ", __FILE__, __LINE__,      \
				#cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* The fuzz input as choices, consumed from the front; past its end every read is 0. */
struct bytes {
	const __u8 *p;
	size_t left;
};

__u8 bytes__u8(struct bytes *b);
bool bytes__bool(struct bytes *b);
/* lo..hi inclusive, from as few bytes as the span needs. */
__u64 bytes__range(struct bytes *b, __u64 lo, __u64 hi);
__u64 bytes__u64(struct bytes *b);
/* A length byte (mod size), then that many raw bytes into buf, NUL-terminated. */
size_t bytes__string(struct bytes *b, char *buf, size_t size);

/* A memfd that parsers taking a path read as "/proc/self/fd/N". */
struct memfile {
	int fd;
	char path[32];
};

/* Opens mf once (later calls do nothing); 0 or -errno. */
int memfile__open(struct memfile *mf);
/* Empties the file. 0 or -errno. */
int memfile__reset(struct memfile *mf);
/* Appends len bytes. 0 or -errno. */
int memfile__append(struct memfile *mf, const void *data, size_t len);

/* The length of the well-formed UTF-8 sequence at s (n bytes left); 0 if there is none. */
size_t utf8_seq_len(const unsigned char *s, size_t n);

#endif /* FUZZ_HARNESS_H */
