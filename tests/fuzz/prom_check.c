// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "prom_check.h"

#define MAX_LABELS 8
#define TWO_TO_63  9223372036854775808.0

struct prom_label {
	char *name;
	char *value; /* decoded */
};

struct prom_sample {
	char *name;
	struct prom_label labels[MAX_LABELS]; /* sorted by name */
	int nr_labels;
	double value;
	char *text; /* the value as written */
	bool is_u64;
	__u64 u64;
	char *key; /* the series: name and labels, unlike any other series' */
};

enum family_type { FAMILY_COUNTER, FAMILY_GAUGE, FAMILY_HISTOGRAM, FAMILY_UNTYPED };

struct family {
	char *name;
	enum family_type type;
	bool has_help, has_samples;
};

/* A series of the histogram family being read, named by its labels but le. */
struct hist_series {
	char *key;
	double last_le;
	__u64 last_count, inf_count, count;
	bool any_bucket, has_inf, has_count, has_sum;
};

struct prom_exposition {
	struct prom_sample *samples;
	size_t nr_samples;
	struct family *families;
	size_t nr_families;
	long current; /* the family whose lines are being read; -1 before the first */
	struct hist_series *series;
	size_t nr_series;
	char *err;
	size_t err_size;
	size_t line;
};

/* Records the first broken rule only; returns false for the caller to pass up. */
static bool fail(struct prom_exposition *e, const char *fmt, ...)
{
	char what[192];
	va_list ap;

	if (e->err[0])
		return false;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(e->err, e->err_size, "line %zu: %s", e->line, what);
	return false;
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* for metrics, [a-zA-Z_][a-zA-Z0-9_]* for labels: its length. */
static size_t name_len(const char *s, bool metric)
{
	size_t n = 0;

	while (is_alpha(s[n]) || (metric && s[n] == ':') || (n && is_digit(s[n])))
		n++;
	return n;
}

/* Go's ParseFloat as the format uses it: decimal, exponent, NaN, +Inf, -Inf. */
static bool parse_float(const char *s, double *v)
{
	const char *p = s;
	size_t digits = 0;

	if (!strcmp(s, "+Inf") || !strcmp(s, "-Inf") || !strcmp(s, "NaN")) {
		*v = s[0] == 'N' ? NAN : s[0] == '-' ? -INFINITY : INFINITY;
		return true;
	}
	if (*p == '+' || *p == '-')
		p++;
	for (; is_digit(*p); p++)
		digits++;
	if (*p == '.')
		for (p++; is_digit(*p); p++)
			digits++;
	if (digits && (*p == 'e' || *p == 'E')) {
		p += p[1] == '+' || p[1] == '-' ? 2 : 1;
		if (!is_digit(*p))
			return false;
		while (is_digit(*p))
			p++;
	}
	if (!digits || *p)
		return false;
	*v = strtod(s, NULL);
	return true;
}

static bool parse_u64(const char *s, __u64 *v)
{
	for (*v = 0; *s; s++) {
		if (!is_digit(*s) || *v > (~0ULL - (__u64)(*s - '0')) / 10)
			return false;
		*v = *v * 10 + (__u64)(*s - '0');
	}
	return true;
}

/* No raw control byte but the '\n' ending each line, and valid UTF-8 throughout. */
static bool check_bytes(struct prom_exposition *e, const char *text, size_t len)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t i = 0, n;

	for (e->line = 1; i < len; i += n) {
		if ((p[i] < 0x20 && p[i] != '\n') || p[i] == 0x7f)
			return fail(e, "raw control byte 0x%02x", p[i]);
		n = utf8_seq_len(p + i, len - i);
		if (!n)
			return fail(e, "invalid UTF-8");
		e->line += p[i] == '\n';
	}
	e->line = 0;
	return true;
}

static long find_family(const struct prom_exposition *e, const char *name)
{
	size_t i;

	for (i = 0; i < e->nr_families; i++)
		if (!strcmp(e->families[i].name, name))
			return (long)i;
	return -1;
}

/* Every series of a histogram family is whole: buckets to +Inf, _count equal to it, _sum. */
static bool close_family(struct prom_exposition *e)
{
	bool ok = true;
	size_t i;

	for (i = 0; i < e->nr_series; i++) {
		const struct hist_series *s = &e->series[i];

		if (ok && (!s->has_inf || !s->has_count || !s->has_sum))
			ok = fail(e, "%s: a histogram without its +Inf bucket, _count or _sum",
				  e->families[e->current].name);
		else if (ok && s->inf_count != s->count)
			ok = fail(e, "%s: +Inf bucket %llu, _count %llu",
				  e->families[e->current].name, (unsigned long long)s->inf_count,
				  (unsigned long long)s->count);
		free(s->key);
	}
	free(e->series);
	e->series = NULL;
	e->nr_series = 0;
	return ok;
}

/* The family named name becomes the current one: a family's lines come together. */
static struct family *enter_family(struct prom_exposition *e, const char *name)
{
	long i = find_family(e, name);
	struct family *grown, *f;
	char *copy;

	if (i >= 0 && i == e->current)
		return &e->families[i];
	if (e->current >= 0 && !close_family(e))
		return NULL;
	if (i >= 0) {
		fail(e, "%s: its lines are apart", name);
		return NULL;
	}
	grown = realloc(e->families, (e->nr_families + 1) * sizeof(*grown));
	if (grown)
		e->families = grown;
	copy = strdup(name);
	if (!grown || !copy) {
		free(copy);
		fail(e, "out of memory");
		return NULL;
	}
	f = &e->families[e->nr_families];
	memset(f, 0, sizeof(*f));
	f->name = copy;
	f->type = FAMILY_UNTYPED;
	e->current = (long)e->nr_families++;
	return f;
}

/* "# HELP name text" (only \\ and \n escaped) or "# TYPE name type". */
static bool parse_comment(struct prom_exposition *e, char *s)
{
	static const char *const types[] = {"counter", "gauge", "histogram"};
	bool help = !strncmp(s, "# HELP ", 7);
	char *name = s + 7, *rest;
	struct family *f;
	size_t n;
	int t;

	if (!help && strncmp(s, "# TYPE ", 7))
		return fail(e, "a comment that is no HELP or TYPE");
	n = name_len(name, true);
	if (!n || name[n] != ' ')
		return fail(e, "bad metric name in %.7s", s);
	name[n] = '\0';
	rest = name + n + 1;
	f = enter_family(e, name);
	if (!f)
		return false;
	if (f->has_samples)
		return fail(e, "%s: %.4s after its samples", name, s + 2);
	if (help) {
		for (; *rest; rest++)
			if (*rest == '\\' && *++rest != '\\' && *rest != 'n')
				return fail(e, "%s: bad escape in HELP", name);
		if (f->has_help)
			return fail(e, "%s: HELP twice", name);
		f->has_help = true;
		return true;
	}
	if (f->type != FAMILY_UNTYPED)
		return fail(e, "%s: TYPE twice", name);
	for (t = 0; t < 3; t++)
		if (!strcmp(rest, types[t]))
			f->type = (enum family_type)t;
	return f->type != FAMILY_UNTYPED || fail(e, "%s: type '%s'", name, rest);
}

/* A label value between quotes, decoded in place; *p is past its opening quote. */
static bool parse_label_value(struct prom_exposition *e, char **p, char **value)
{
	char *in = *p, *out = *p;

	*value = out;
	for (; *in != '"'; in++) {
		if (!*in)
			return fail(e, "unterminated label value");
		if (*in == '\\') {
			in++;
			if (*in != '\\' && *in != '"' && *in != 'n')
				return fail(e, "bad escape in a label value");
			*out++ = *in == 'n' ? '\n' : *in;
		} else {
			*out++ = *in;
		}
	}
	*out = '\0';
	*p = in + 1;
	return true;
}

/* {name="value",...} at *p into sm, sorted by name; *p ends past the '}'. */
static bool parse_labels(struct prom_exposition *e, char **p, struct prom_sample *sm)
{
	struct prom_label l;
	char *s = *p + 1;
	size_t n;
	int i;

	for (;;) {
		n = name_len(s, false);
		if (!n || s[n] != '=' || s[n + 1] != '"')
			return fail(e, "bad label in %s", sm->name);
		if (sm->nr_labels == MAX_LABELS)
			return fail(e, "%s: more than %d labels", sm->name, MAX_LABELS);
		l.name = s;
		s[n] = '\0';
		s += n + 2;
		if (!parse_label_value(e, &s, &l.value))
			return false;
		if (!strncmp(l.name, "__", 2))
			return fail(e, "%s: reserved label name %s", sm->name, l.name);
		for (i = sm->nr_labels; i > 0 && strcmp(sm->labels[i - 1].name, l.name) > 0; i--)
			sm->labels[i] = sm->labels[i - 1];
		if (i > 0 && !strcmp(sm->labels[i - 1].name, l.name))
			return fail(e, "%s: label %s twice", sm->name, l.name);
		sm->labels[i] = l;
		sm->nr_labels++;
		if (*s == '}')
			break;
		if (*s++ != ',')
			return fail(e, "%s: expected ',' or '}'", sm->name);
	}
	*p = s + 1;
	return true;
}

static const char *label(const struct prom_sample *sm, const char *name)
{
	int i;

	for (i = 0; i < sm->nr_labels; i++)
		if (!strcmp(sm->labels[i].name, name))
			return sm->labels[i].value;
	return NULL;
}

/* The series' name: the sample name and its labels (but le if without_le), one string. */
static char *series_key(const struct prom_sample *sm, const char *name, bool without_le)
{
	size_t len = strlen(name) + 1, n;
	char *key;
	int i;

	for (i = 0; i < sm->nr_labels; i++)
		len += strlen(sm->labels[i].name) + strlen(sm->labels[i].value) + 2;
	key = malloc(len);
	if (!key)
		return NULL;
	n = (size_t)sprintf(key, "%s", name);
	for (i = 0; i < sm->nr_labels; i++) {
		if (without_le && !strcmp(sm->labels[i].name, "le"))
			continue;
		/* no label value holds a control byte: \1 and \2 are free as separators */
		n += (size_t)sprintf(key + n, "\1%s\2%s", sm->labels[i].name, sm->labels[i].value);
	}
	return key;
}

static struct hist_series *find_series(struct prom_exposition *e, const struct prom_sample *sm)
{
	char *key = series_key(sm, e->families[e->current].name, true);
	struct hist_series *grown;
	size_t i;

	if (!key)
		return NULL;
	for (i = 0; i < e->nr_series; i++) {
		if (!strcmp(e->series[i].key, key)) {
			free(key);
			return &e->series[i];
		}
	}
	grown = realloc(e->series, (e->nr_series + 1) * sizeof(*grown));
	if (!grown) {
		free(key);
		return NULL;
	}
	e->series = grown;
	memset(&e->series[e->nr_series], 0, sizeof(*grown));
	e->series[e->nr_series].key = key;
	return &e->series[e->nr_series++];
}

/* _bucket with a rising le and a count that never falls, up to +Inf; _count; _sum >= 0. */
static bool check_histogram(struct prom_exposition *e, const struct prom_sample *sm,
			    const char *suffix)
{
	const char *le = label(sm, "le");
	struct hist_series *s = find_series(e, sm);
	double edge;

	if (!s)
		return fail(e, "out of memory");
	if (!strcmp(suffix, "_sum")) {
		s->has_sum = true;
		return (!le && sm->value >= 0) || fail(e, "%s: bad _sum", sm->name);
	}
	if (!sm->is_u64)
		return fail(e, "%s: not a count", sm->name);
	if (!strcmp(suffix, "_count")) {
		s->has_count = true;
		s->count = sm->u64;
		return !le || fail(e, "%s: le on _count", sm->name);
	}
	if (!le || !parse_float(le, &edge) || isnan(edge))
		return fail(e, "%s: bucket without a good le", sm->name);
	if (s->has_inf)
		return fail(e, "%s: a bucket after +Inf (a series twice?)", sm->name);
	if (s->any_bucket && !(edge > s->last_le))
		return fail(e, "%s: le=\"%s\" does not rise", sm->name, le);
	if (s->any_bucket && sm->u64 < s->last_count)
		return fail(e, "%s: le=\"%s\" counts fewer than the bucket before", sm->name, le);
	s->any_bucket = true;
	s->last_le = edge;
	s->last_count = sm->u64;
	s->has_inf = isinf(edge) && edge > 0;
	s->inf_count = sm->u64;
	return true;
}

/* The family of a sample, and which of _bucket, _sum, _count it is for a histogram. */
static long sample_family(const struct prom_exposition *e, const char *name, const char **suffix)
{
	static const char *const suffixes[] = {"_bucket", "_sum", "_count"};
	size_t len = strlen(name), n;
	char base[256];
	long i;
	int k;

	*suffix = "";
	i = find_family(e, name);
	if (i >= 0 && e->families[i].type != FAMILY_HISTOGRAM)
		return i;
	for (k = 0; k < 3; k++) {
		n = strlen(suffixes[k]);
		if (len <= n || len - n >= sizeof(base) || strcmp(name + len - n, suffixes[k]))
			continue;
		snprintf(base, sizeof(base), "%.*s", (int)(len - n), name);
		i = find_family(e, base);
		if (i >= 0 && e->families[i].type == FAMILY_HISTOGRAM) {
			*suffix = suffixes[k];
			return i;
		}
	}
	return -1;
}

static bool check_sample(struct prom_exposition *e, struct prom_sample *sm)
{
	const char *suffix;
	long f = sample_family(e, sm->name, &suffix);

	if (f < 0 || e->families[f].type == FAMILY_UNTYPED)
		return fail(e, "%s: a sample before its TYPE", sm->name);
	if (f != e->current)
		return fail(e, "%s: a sample apart from its family", sm->name);
	e->families[f].has_samples = true;
	if (e->families[f].type == FAMILY_HISTOGRAM)
		return check_histogram(e, sm, suffix);
	if (e->families[f].type != FAMILY_COUNTER)
		return true;
	if (!(sm->value >= 0))
		return fail(e, "%s: counter below 0", sm->name);
	/* a u64 that wrapped below 0 prints as more than 2^63 */
	return sm->value < TWO_TO_63 || fail(e, "%s: counter near 2^64", sm->name);
}

static bool add_sample(struct prom_exposition *e, const struct prom_sample *sm)
{
	struct prom_sample *grown = realloc(e->samples, (e->nr_samples + 1) * sizeof(*grown));

	if (!grown)
		return fail(e, "out of memory");
	e->samples = grown;
	e->samples[e->nr_samples++] = *sm;
	return true;
}

/* Copies the strings of sm that point into the line, so that they outlive it. */
static bool own_strings(struct prom_sample *sm)
{
	bool ok = true;
	int i;

	for (i = 0; i < sm->nr_labels; i++) {
		sm->labels[i].name = strdup(sm->labels[i].name);
		sm->labels[i].value = strdup(sm->labels[i].value);
		ok = ok && sm->labels[i].name && sm->labels[i].value;
	}
	return ok;
}

static void free_sample(struct prom_sample *sm)
{
	int i;

	for (i = 0; i < sm->nr_labels; i++) {
		free(sm->labels[i].name);
		free(sm->labels[i].value);
	}
	free(sm->name);
	free(sm->text);
	free(sm->key);
}

/* name{labels} value: one space before the value, no timestamp after it. */
static bool parse_sample(struct prom_exposition *e, char *s)
{
	struct prom_sample sm = {0};
	size_t n = name_len(s, true);
	char *p = s + n;
	bool ok;

	if (!n)
		return fail(e, "bad metric name");
	sm.name = strndup(s, n);
	if (!sm.name)
		return fail(e, "out of memory");
	ok = *p != '{' || parse_labels(e, &p, &sm);
	if (ok && (*p != ' ' || strchr(p + 1, ' ') || !parse_float(p + 1, &sm.value)))
		ok = fail(e, "%s: bad value", sm.name);
	if (!ok) {
		free(sm.name); /* the labels are still in the line */
		return false;
	}
	sm.is_u64 = parse_u64(p + 1, &sm.u64);
	sm.text = strdup(p + 1);
	if (!own_strings(&sm) || !sm.text || !(sm.key = series_key(&sm, sm.name, false)))
		ok = fail(e, "out of memory");
	ok = ok && check_sample(e, &sm) && add_sample(e, &sm);
	if (!ok)
		free_sample(&sm);
	return ok;
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool no_duplicates(struct prom_exposition *e)
{
	char **keys = malloc((e->nr_samples + 1) * sizeof(*keys));
	bool ok = true;
	size_t i;

	if (!keys)
		return fail(e, "out of memory");
	for (i = 0; i < e->nr_samples; i++)
		keys[i] = e->samples[i].key;
	qsort(keys, e->nr_samples, sizeof(*keys), cmp_keys);
	for (i = 1; ok && i < e->nr_samples; i++)
		if (!strcmp(keys[i - 1], keys[i]))
			ok = fail(e, "series %.*s twice", (int)strcspn(keys[i], "\1"), keys[i]);
	free(keys);
	return ok;
}

static bool parse_line(struct prom_exposition *e, const char *line, size_t len)
{
	char *s = strndup(line, len);
	bool ok;

	if (!s)
		return fail(e, "out of memory");
	if (!len)
		ok = fail(e, "empty line");
	else if (s[0] == '#')
		ok = parse_comment(e, s);
	else
		ok = parse_sample(e, s);
	free(s);
	return ok;
}

struct prom_exposition *prom_check__parse(const char *text, size_t len, char *err, size_t size)
{
	struct prom_exposition *e = calloc(1, sizeof(*e));
	const char *line, *nl, *end = text + len;
	bool ok;

	err[0] = '\0';
	if (!e) {
		snprintf(err, size, "out of memory");
		return NULL;
	}
	e->err = err;
	e->err_size = size;
	e->current = -1;
	ok = check_bytes(e, text, len);
	for (line = text; ok && line < end; line = nl ? nl + 1 : end) {
		e->line++;
		nl = memchr(line, '\n', (size_t)(end - line));
		ok = nl ? parse_line(e, line, (size_t)(nl - line)) : fail(e, "no '\\n' at the end");
	}
	ok = ok && (e->current < 0 || close_family(e)) && no_duplicates(e);
	if (!ok) {
		prom_check__free(e);
		return NULL;
	}
	return e;
}

void prom_check__free(struct prom_exposition *e)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < e->nr_samples; i++)
		free_sample(&e->samples[i]);
	for (i = 0; i < e->nr_families; i++)
		free(e->families[i].name);
	for (i = 0; i < e->nr_series; i++)
		free(e->series[i].key);
	free(e->samples);
	free(e->families);
	free(e->series);
	free(e);
}

__u64 prom_check__sum(const struct prom_exposition *e, const char *name, const char *label_name,
		      const char *value, size_t *n)
{
	__u64 sum = 0;
	size_t i;

	*n = 0;
	for (i = 0; i < e->nr_samples; i++) {
		const struct prom_sample *sm = &e->samples[i];
		const char *v = label_name ? label(sm, label_name) : NULL;

		if (strcmp(sm->name, name) || (label_name && (!v || strcmp(v, value))))
			continue;
		(*n)++;
		sum += sm->is_u64 ? sm->u64 : 0;
	}
	return sum;
}

size_t prom_check__zeros(const struct prom_exposition *e, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < e->nr_samples; i++)
		n +=
		    !strcmp(e->samples[i].name, name) && e->samples[i].is_u64 && !e->samples[i].u64;
	return n;
}

const char *prom_check__family(const struct prom_exposition *e, const char *name, bool *has_help)
{
	static const char *const types[] = {
	    [FAMILY_COUNTER] = "counter",
	    [FAMILY_GAUGE] = "gauge",
	    [FAMILY_HISTOGRAM] = "histogram",
	    [FAMILY_UNTYPED] = NULL,
	};
	long i = find_family(e, name);

	*has_help = i >= 0 && e->families[i].has_help;
	return i >= 0 ? types[e->families[i].type] : NULL;
}

const char *prom_check__value(const struct prom_exposition *e, const char *name,
			      const char *label_name, const char *value)
{
	const char *text = NULL;
	size_t i, n = 0;

	for (i = 0; i < e->nr_samples; i++) {
		const struct prom_sample *sm = &e->samples[i];
		const char *v = label_name ? label(sm, label_name) : NULL;

		if (strcmp(sm->name, name) || (label_name && (!v || strcmp(v, value))))
			continue;
		n++;
		text = sm->text;
	}
	return n == 1 ? text : NULL;
}
