/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A strict JSON parser (RFC 8259) for reading back what report_json writes:
 * one value and JSON whitespace around it, nothing else; strings of valid UTF-8
 * without raw control bytes; no key twice in an object. A string value then
 * decodes to bytes as report_json__string() promises: its text is what
 * escape__text() makes of bytes (printable ASCII; the backslash and every
 * other byte as \xHH, lowercase, and only those), and each \xHH is its byte.
 * Any other text, such as a code point past ASCII or "\x41", fails the parse.
 */
#ifndef FUZZ_JSON_CHECK_H
#define FUZZ_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum json_type {
	JSON_NULL,
	JSON_FALSE,
	JSON_TRUE,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json_member;

struct json_value {
	enum json_type type;
	char *str; /* JSON_STRING: the bytes it stands for, NUL-terminated; JSON_NUMBER: its text */
	size_t len;  /* of str */
	bool is_u64; /* JSON_NUMBER: an integer in 0..2^64-1, in u64 */
	__u64 u64;
	bool is_s64; /* JSON_NUMBER: an integer in -2^63..2^63-1, in s64 */
	__s64 s64;
	struct json_value **items;   /* JSON_ARRAY */
	struct json_member *members; /* JSON_OBJECT */
	size_t nr;		     /* items or members */
};

struct json_member {
	char *key;
	size_t key_len;
	struct json_value *value;
};

/* text[0, len) as exactly one JSON value; NULL with the reason in err if it is not one. */
struct json_value *json_check__parse(const char *text, size_t len, char *err, size_t size);
void json_check__free(struct json_value *v);
/* The member key of an object, or NULL. */
const struct json_value *json_check__get(const struct json_value *obj, const char *key);

#endif /* FUZZ_JSON_CHECK_H */
