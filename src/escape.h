/* SPDX-License-Identifier: GPL-2.0 */
/* Strings from the traced system (comms, paths) made safe for a terminal. */
#ifndef ESCAPE_H
#define ESCAPE_H

#include <stddef.h>

/*
 * Copies at most len bytes of s (up to its NUL) into buf with every byte that is
 * not printable ASCII, and the backslash, as \xNN: no escape sequence, newline or
 * invalid UTF-8 reaches a terminal raw, and the bytes can be read back. Truncated
 * to fit size, never mid-escape. Returns buf.
 *
 * Byte by byte, with no state: the text of a string is the texts of its pieces
 * one after the other, so long strings can be escaped a piece at a time. The
 * JSON report writes every string this way too (report_json__string()).
 */
const char *escape__text(const char *s, size_t len, char *buf, size_t size);

/* The buffer escape__text() needs for len bytes, with its NUL. */
#define ESCAPE_SIZE(len) ((len)*4 + 1)

/* s (a path, up to PATH_MAX) escaped, in memory of its own (free it); NULL: ENOMEM. */
char *escape__dup(const char *s);

#endif /* ESCAPE_H */
