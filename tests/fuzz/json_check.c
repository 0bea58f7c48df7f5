// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "json_check.h"

#define JSON_MAX_DEPTH 64

struct parser {
	const unsigned char *start, *p, *end;
	int depth;
	char *err;
	size_t err_size;
};

/* A growing byte buffer, always NUL-terminated. */
struct strbuf {
	char *data;
	size_t len, cap;
};

/* Records the first failure only; returns NULL for the caller to pass up. */
static void *fail(struct parser *ps, const char *fmt, ...)
{
	char what[128];
	va_list ap;

	if (ps->err[0])
		return NULL;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(ps->err, ps->err_size, "%s at byte %zu", what, (size_t)(ps->p - ps->start));
	return NULL;
}

static bool strbuf__put(struct strbuf *b, const void *data, size_t len)
{
	size_t cap = b->cap ? b->cap : 16;
	char *grown;

	while (b->len + len + 1 > cap)
		cap *= 2;
	if (cap != b->cap) {
		grown = realloc(b->data, cap);
		if (!grown)
			return false;
		b->data = grown;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return true;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int hex_value(unsigned char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The 4 hex digits after "\u"; -1 if they are not. */
static long read_hex4(struct parser *ps)
{
	long v = 0;
	int i, d;

	if (ps->end - ps->p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		d = hex_value(ps->p[i]);
		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	ps->p += 4;
	return v;
}

/* cp as its UTF-8 bytes. */
static bool put_code_point(struct strbuf *b, long cp)
{
	unsigned char u[4];
	size_t n;

	if (cp <= 0x7f) {
		u[0] = (unsigned char)cp;
		n = 1;
	} else if (cp <= 0x7ff) {
		u[0] = (unsigned char)(0xc0 | cp >> 6);
		u[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp <= 0xffff) {
		u[0] = (unsigned char)(0xe0 | cp >> 12);
		u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (unsigned char)(0xf0 | cp >> 18);
		u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return strbuf__put(b, u, n);
}

/* "\uXXXX", a surrogate pair taken whole; ps->p is past the 'u'. */
static bool parse_unicode_escape(struct parser *ps, struct strbuf *b)
{
	long cp = read_hex4(ps), low;

	if (cp < 0)
		return fail(ps, "bad \\u escape");
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail(ps, "lone low surrogate");
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u')
			return fail(ps, "lone high surrogate");
		ps->p += 2;
		low = read_hex4(ps);
		if (low < 0xdc00 || low > 0xdfff)
			return fail(ps, "bad low surrogate");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
	}
	return put_code_point(b, cp) || fail(ps, "out of memory");
}

static bool parse_escape(struct parser *ps, struct strbuf *b)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *which;

	if (ps->p == ps->end)
		return fail(ps, "string ends in a backslash");
	if (*ps->p == 'u') {
		ps->p++;
		return parse_unicode_escape(ps, b);
	}
	which = *ps->p ? strchr(from, *ps->p) : NULL;
	if (!which)
		return fail(ps, "bad escape \\%c", *ps->p);
	ps->p++;
	return strbuf__put(b, &to[which - from], 1) || fail(ps, "out of memory");
}

/* A string at ps->p (its opening quote) into b. */
static bool parse_string_into(struct parser *ps, struct strbuf *b)
{
	size_t n;

	if (!strbuf__put(b, "", 0))
		return fail(ps, "out of memory");
	for (ps->p++;;) {
		if (ps->p == ps->end)
			return fail(ps, "unterminated string");
		if (*ps->p == '"') {
			ps->p++;
			return true;
		}
		if (*ps->p < 0x20)
			return fail(ps, "raw control byte 0x%02x in a string", *ps->p);
		if (*ps->p == '\\') {
			ps->p++;
			if (!parse_escape(ps, b))
				return false;
			continue;
		}
		n = utf8_seq_len(ps->p, (size_t)(ps->end - ps->p));
		if (!n)
			return fail(ps, "invalid UTF-8");
		if (!strbuf__put(b, ps->p, n))
			return fail(ps, "out of memory");
		ps->p += n;
	}
}

static struct json_value *new_value(struct parser *ps, enum json_type type)
{
	struct json_value *v = calloc(1, sizeof(*v));

	if (!v)
		return fail(ps, "out of memory");
	v->type = type;
	return v;
}

/* Whether escape__text() writes byte c as itself (else as \xHH). */
static bool is_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '\\';
}

/* A lowercase hex digit's value, as escape__text() writes them; -1 for anything else. */
static int lower_hex_value(unsigned char c)
{
	return c >= 'A' && c <= 'F' ? -1 : hex_value(c);
}

/*
 * The text in b (decoded from JSON) back to the bytes escape__text() wrote it
 * for, in place: fails unless it is exactly what escape__text() writes.
 */
static bool text_to_bytes(struct parser *ps, struct strbuf *b)
{
	unsigned char *t = (unsigned char *)b->data;
	size_t i, o = 0;
	int hi, lo;

	for (i = 0; i < b->len; i++) {
		if (t[i] != '\\') {
			if (!is_plain(t[i]))
				return fail(ps, "byte 0x%02x in a string's text", t[i]);
			t[o++] = t[i];
			continue;
		}
		if (b->len - i < 4 || t[i + 1] != 'x' || (hi = lower_hex_value(t[i + 2])) < 0 ||
		    (lo = lower_hex_value(t[i + 3])) < 0)
			return fail(ps, "a backslash in a string's text that does not start \\xhh");
		if (is_plain((unsigned char)(hi << 4 | lo)))
			return fail(ps, "\\x%c%c in a string's text: a printable byte", t[i + 2],
				    t[i + 3]);
		t[o++] = (unsigned char)(hi << 4 | lo);
		i += 3;
	}
	t[o] = '\0';
	b->len = o;
	return true;
}

static struct json_value *parse_string(struct parser *ps)
{
	struct json_value *v = new_value(ps, JSON_STRING);
	struct strbuf b = {0};

	if (!v)
		return NULL;
	if (!parse_string_into(ps, &b) || !text_to_bytes(ps, &b)) {
		free(b.data);
		free(v);
		return NULL;
	}
	v->str = b.data;
	v->len = b.len;
	return v;
}

static void skip_digits(struct parser *ps)
{
	while (ps->p < ps->end && is_digit(*ps->p))
		ps->p++;
}

/* Whether the text of a number is an integer that fits 64 bits; its value in *v. */
static bool number_u64(const char *s, __u64 *v)
{
	for (*v = 0; *s; s++) {
		if (!is_digit((unsigned char)*s) || *v > (~0ULL - (__u64)(*s - '0')) / 10)
			return false;
		*v = *v * 10 + (__u64)(*s - '0');
	}
	return true;
}

/* Whether the text of a number is an integer that fits 64 bits signed; its value in *v. */
static bool number_s64(const char *s, __s64 *v)
{
	__u64 mag;

	if (*s != '-') {
		if (!number_u64(s, &mag) || mag > (__u64)INT64_MAX)
			return false;
		*v = (__s64)mag;
		return true;
	}
	if (!number_u64(s + 1, &mag) || mag > (__u64)INT64_MAX + 1)
		return false;
	*v = mag == (__u64)INT64_MAX + 1 ? INT64_MIN : -(__s64)mag;
	return true;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static struct json_value *parse_number(struct parser *ps)
{
	const unsigned char *start = ps->p;
	struct json_value *v;

	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (ps->p == ps->end || !is_digit(*ps->p))
		return fail(ps, "bad number");
	if (*ps->p++ != '0')
		skip_digits(ps);
	if (ps->p < ps->end && *ps->p == '.') {
		if (++ps->p == ps->end || !is_digit(*ps->p))
			return fail(ps, "no digit after a decimal point");
		skip_digits(ps);
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (ps->p == ps->end || !is_digit(*ps->p))
			return fail(ps, "no digit in an exponent");
		skip_digits(ps);
	}
	v = new_value(ps, JSON_NUMBER);
	if (!v)
		return NULL;
	v->len = (size_t)(ps->p - start);
	v->str = strndup((const char *)start, v->len);
	if (!v->str) {
		free(v);
		return fail(ps, "out of memory");
	}
	v->is_u64 = number_u64(v->str, &v->u64);
	v->is_s64 = number_s64(v->str, &v->s64);
	return v;
}

static struct json_value *parse_literal(struct parser *ps)
{
	static const struct {
		const char *text;
		enum json_type type;
	} literals[] = {{"true", JSON_TRUE}, {"false", JSON_FALSE}, {"null", JSON_NULL}};
	size_t i, n;

	for (i = 0; i < 3; i++) {
		n = strlen(literals[i].text);
		if ((size_t)(ps->end - ps->p) >= n && !memcmp(ps->p, literals[i].text, n)) {
			ps->p += n;
			return new_value(ps, literals[i].type);
		}
	}
	return fail(ps, "unexpected byte 0x%02x", *ps->p);
}

static struct json_value *parse_value(struct parser *ps);

/* After an item or member: ',' (true, more follow) or the closing bracket (false). */
static bool next_or_close(struct parser *ps, char close, bool *more)
{
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ',') {
		ps->p++;
		*more = true;
		return true;
	}
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		*more = false;
		return true;
	}
	return fail(ps, "expected ',' or '%c'", close);
}

/* Opens an array or object at ps->p; false if it is empty (closed at once). */
static bool open_container(struct parser *ps, char close)
{
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return false;
	}
	return true;
}

static bool add_item(struct parser *ps, struct json_value *arr, struct json_value *item)
{
	struct json_value **items = realloc(arr->items, (arr->nr + 1) * sizeof(*items));

	if (!items) {
		json_check__free(item);
		return fail(ps, "out of memory");
	}
	arr->items = items;
	arr->items[arr->nr++] = item;
	return true;
}

static struct json_value *parse_array(struct parser *ps)
{
	struct json_value *arr = new_value(ps, JSON_ARRAY), *item;
	bool more;

	if (!arr || !open_container(ps, ']'))
		return arr;
	do {
		item = parse_value(ps);
		if (!item || !add_item(ps, arr, item) || !next_or_close(ps, ']', &more)) {
			json_check__free(arr);
			return NULL;
		}
	} while (more);
	return arr;
}

/* One "key": value into obj; a key already there fails. */
static bool parse_member(struct parser *ps, struct json_value *obj)
{
	struct strbuf key = {0};
	struct json_member *members;
	struct json_value *value;
	size_t i;

	skip_ws(ps);
	if (ps->p == ps->end || *ps->p != '"' || !parse_string_into(ps, &key)) {
		free(key.data);
		return fail(ps, "expected a key");
	}
	for (i = 0; i < obj->nr; i++) {
		if (obj->members[i].key_len == key.len &&
		    !memcmp(obj->members[i].key, key.data, key.len)) {
			fail(ps, "key \"%s\" twice", key.data);
			free(key.data);
			return false;
		}
	}
	skip_ws(ps);
	if (ps->p == ps->end || *ps->p != ':') {
		free(key.data);
		return fail(ps, "expected ':'");
	}
	ps->p++;
	value = parse_value(ps);
	members = value ? realloc(obj->members, (obj->nr + 1) * sizeof(*members)) : NULL;
	if (!members) {
		free(key.data);
		json_check__free(value);
		return value ? fail(ps, "out of memory") : NULL;
	}
	obj->members = members;
	obj->members[obj->nr++] = (struct json_member){key.data, key.len, value};
	return true;
}

static struct json_value *parse_object(struct parser *ps)
{
	struct json_value *obj = new_value(ps, JSON_OBJECT);
	bool more;

	if (!obj || !open_container(ps, '}'))
		return obj;
	do {
		if (!parse_member(ps, obj) || !next_or_close(ps, '}', &more)) {
			json_check__free(obj);
			return NULL;
		}
	} while (more);
	return obj;
}

static struct json_value *parse_value(struct parser *ps)
{
	struct json_value *v;

	skip_ws(ps);
	if (ps->p == ps->end)
		return fail(ps, "expected a value");
	if (++ps->depth > JSON_MAX_DEPTH)
		return fail(ps, "nested too deep");
	if (*ps->p == '{')
		v = parse_object(ps);
	else if (*ps->p == '[')
		v = parse_array(ps);
	else if (*ps->p == '"')
		v = parse_string(ps);
	else if (*ps->p == '-' || is_digit(*ps->p))
		v = parse_number(ps);
	else
		v = parse_literal(ps);
	ps->depth--;
	return v;
}

struct json_value *json_check__parse(const char *text, size_t len, char *err, size_t size)
{
	struct parser ps = {(const unsigned char *)text,
			    (const unsigned char *)text,
			    (const unsigned char *)text + len,
			    0,
			    err,
			    size};
	struct json_value *v;

	err[0] = '\0';
	v = parse_value(&ps);
	skip_ws(&ps);
	if (v && ps.p != ps.end) {
		json_check__free(v);
		return fail(&ps, "more after the value");
	}
	return v;
}

void json_check__free(struct json_value *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; v->type == JSON_ARRAY && i < v->nr; i++)
		json_check__free(v->items[i]);
	for (i = 0; v->type == JSON_OBJECT && i < v->nr; i++) {
		free(v->members[i].key);
		json_check__free(v->members[i].value);
	}
	free(v->items);
	free(v->members);
	free(v->str);
	free(v);
}

const struct json_value *json_check__get(const struct json_value *obj, const char *key)
{
	size_t i, len = strlen(key);

	for (i = 0; obj && obj->type == JSON_OBJECT && i < obj->nr; i++)
		if (obj->members[i].key_len == len && !memcmp(obj->members[i].key, key, len))
			return obj->members[i].value;
	return NULL;
}
