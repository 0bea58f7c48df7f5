// SPDX-License-Identifier: GPL-2.0
/*
 * kallsyms symbolizer.
 *
 * Loading runs once at start and must stay far below what the kernel itself
 * spends producing /proc/kallsyms (~25 ms for 120k lines), so memory is kept
 * small: the file streams through one small buffer, names are copied into a few
 * large blocks that never move, and there is no allocation per symbol. On a
 * virtual machine a first touch of a page can cost ~10 us, so every page counts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksyms.h"
#include "prefetch.h"

/* Bytes per read(), and the longest line kept: KSYM_NAME_LEN is 512. */
#define KSYMS_READ_SIZE	      (64 * 1024)
#define KSYMS_NAME_BLOCK_SIZE (256 * 1024)
#define KSYMS_MIN_CAP	      4096

/* Names live in blocks that never move, so struct ksym can point into them. */
struct name_block {
	struct name_block *next;
	size_t used;
	char data[KSYMS_NAME_BLOCK_SIZE];
};

struct ksyms {
	struct ksym *syms; /* every symbol, in file order */
	size_t nr_syms;
	size_t cap_syms;
	struct name_block *names;
	const struct ksym **by_addr; /* text symbols by address, then file order */
	size_t nr_text;
};

/* One line of kallsyms, split in place. */
struct ksyms_line {
	__u64 addr;
	char type;
	const char *name;
	size_t name_len;
	const char *module;
};

/* What loading needs beyond the result. */
struct ksyms_loader {
	struct ksyms *ks;
	const char *module; /* the last module name stored: modules come in runs */
	size_t nr_hidden;   /* lines with address 0: kptr_restrict */
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/*
 * Since 6.2 every function has a __pfx_ symbol over the padding before it (half
 * of all symbols): never executed, so never in a stack, and not worth loading.
 */
static bool is_padding(const char *name)
{
	return name[0] == '_' && name[1] == '_' && !strncmp(name + 2, "pfx_", 4);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parses 1 to 16 hex digits; returns the first character after them, or NULL. */
static char *parse_addr(char *p, __u64 *addr)
{
	__u64 val = 0;
	int i, d;

	for (i = 0; (d = hex_digit(p[i])) >= 0; i++) {
		if (i == 16)
			return NULL;
		val = val << 4 | d;
	}
	*addr = val;
	return i ? p + i : NULL;
}

static char *skip_blanks(char *p)
{
	while (is_blank(*p))
		p++;
	return p;
}

/* Parses what follows a name: nothing, or "[module]". */
static int parse_module(char *p, const char **module)
{
	size_t len;

	*module = NULL;
	p = skip_blanks(p);
	len = strlen(p);
	while (len && is_blank(p[len - 1]))
		len--;
	if (!len)
		return 0;
	if (len < 3 || p[0] != '[' || p[len - 1] != ']')
		return -EINVAL;
	p[len - 1] = '\0';
	*module = p + 1;
	return 0;
}

/*
 * Parses "ffffffff815bb040 t name" or "ffffffffc0a01000 t name\t[ext4]", writing
 * NULs into line. Returns 0 or -EINVAL.
 */
static int parse_line(char *line, struct ksyms_line *out)
{
	char *p, *name;

	p = parse_addr(line, &out->addr);
	if (!p || !is_blank(*p))
		return -EINVAL;
	p = skip_blanks(p);
	if (!is_alpha(p[0]) || !is_blank(p[1]))
		return -EINVAL;
	out->type = p[0];
	name = skip_blanks(p + 1);
	for (p = name; *p && !is_blank(*p); p++)
		;
	if (p == name)
		return -EINVAL;
	out->name = name;
	out->name_len = p - name;
	if (*p)
		*p++ = '\0';
	return parse_module(p, &out->module);
}

/* Copies s and its NUL into the name blocks; returns the copy, or NULL. */
static const char *names__add(struct ksyms *ks, const char *s, size_t len)
{
	struct name_block *blk = ks->names;
	size_t size = len + 1;
	char *copy;

	if (!blk || blk->used + size > sizeof(blk->data)) {
		blk = malloc(sizeof(*blk));
		if (!blk)
			return NULL;
		blk->next = ks->names;
		blk->used = 0;
		ks->names = blk;
	}
	copy = memcpy(blk->data + blk->used, s, size);
	blk->used += size;
	return copy;
}

static void names__free(struct name_block *blk)
{
	struct name_block *next;

	for (; blk; blk = next) {
		next = blk->next;
		free(blk);
	}
}

static struct ksym *ksyms__new_sym(struct ksyms *ks)
{
	size_t cap = ks->cap_syms ? 2 * ks->cap_syms : KSYMS_MIN_CAP;
	struct ksym *syms;

	if (ks->nr_syms == ks->cap_syms) {
		syms = realloc(ks->syms, cap * sizeof(*syms));
		if (!syms)
			return NULL;
		ks->syms = syms;
		ks->cap_syms = cap;
	}
	return &ks->syms[ks->nr_syms];
}

/*
 * True for a line of a __pfx_ symbol, told by its first bytes: the address's
 * digits, a blank, the type and a blank (the kernel prints no more than one of
 * each), without parsing the rest. Half the lines since 6.2.
 */
static bool is_padding_line(const char *line)
{
	const char *p = line;

	while (hex_digit(*p) >= 0)
		p++;
	return p - line == 16 && p[0] == ' ' && p[1] && p[2] == ' ' && is_padding(p + 3);
}

/* Stores the symbol on line, if it is one worth keeping. Returns 0 or -ENOMEM. */
static int loader__add_line(struct ksyms_loader *ld, char *line)
{
	struct ksyms_line parsed;
	struct ksym *sym;

	if (is_padding_line(line) || parse_line(line, &parsed))
		return 0;
	if (!parsed.addr) {
		ld->nr_hidden++;
		return 0;
	}
	if (is_padding(parsed.name))
		return 0;
	if (parsed.module && (!ld->module || strcmp(parsed.module, ld->module))) {
		ld->module = names__add(ld->ks, parsed.module, strlen(parsed.module));
		if (!ld->module)
			return -ENOMEM;
	}
	sym = ksyms__new_sym(ld->ks);
	if (!sym)
		return -ENOMEM;
	sym->name = names__add(ld->ks, parsed.name, parsed.name_len);
	if (!sym->name)
		return -ENOMEM;
	sym->module = parsed.module ? ld->module : NULL;
	sym->addr = parsed.addr;
	sym->type = parsed.type;
	ld->ks->nr_syms++;
	return 0;
}

/*
 * Hands each complete line in buf[0, *len) to the loader, then moves the partial
 * last line to the front. *skipping: the line begun in buf is the tail of one
 * too long to parse.
 */
static int loader__add_lines(struct ksyms_loader *ld, char *buf, size_t *len, bool *skipping)
{
	char *line = buf, *end = buf + *len, *nl;
	int err;

	while ((nl = memchr(line, '\n', end - line))) {
		*nl = '\0';
		if (!*skipping) {
			err = loader__add_line(ld, line);
			if (err)
				return err;
		}
		*skipping = false;
		line = nl + 1;
	}
	*len = end - line;
	memmove(buf, line, *len);
	return 0;
}

/* Reads p to its end through buf, one line at a time. Returns 0 or -errno. */
static int loader__read(struct ksyms_loader *ld, struct prefetch *p, char *buf, size_t size)
{
	bool skipping = false;
	size_t len = 0;
	ssize_t n;
	int err;

	for (;;) {
		n = prefetch__read(p, buf + len, size - 1 - len);
		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		len += (size_t)n;
		err = loader__add_lines(ld, buf, &len, &skipping);
		if (err)
			return err;
		if (len == size - 1) {
			skipping = true;
			len = 0;
		}
	}
	if (!len || skipping)
		return 0;
	buf[len] = '\0'; /* the last line had no '\n' */
	return loader__add_line(ld, buf);
}

static int ksyms__read(struct ksyms *ks, const char *path, size_t *nr_hidden)
{
	struct ksyms_loader ld = {.ks = ks};
	struct prefetch *p = NULL;
	char *buf = malloc(KSYMS_READ_SIZE);
	int err = buf ? prefetch__open(path, &p) : -ENOMEM;

	if (!err)
		err = loader__read(&ld, p, buf, KSYMS_READ_SIZE);
	prefetch__close(p);
	free(buf);
	*nr_hidden = ld.nr_hidden;
	return err;
}

/* Ties keep file order, as the kernel's own lookup takes the first alias. */
static int cmp_addr(const void *pa, const void *pb)
{
	const struct ksym *a = *(const struct ksym *const *)pa;
	const struct ksym *b = *(const struct ksym *const *)pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* How many text symbols come first in address order: vmlinux's at least. */
static size_t ksyms__nr_sorted(const struct ksyms *ks)
{
	size_t i;

	for (i = 1; i < ks->nr_text; i++) {
		if (ks->by_addr[i - 1]->addr > ks->by_addr[i]->addr)
			return i;
	}
	return ks->nr_text;
}

/*
 * vmlinux comes in address order, modules and BPF code after it may not. The
 * tail after the sorted run is sorted alone: where it lies above vmlinux (x86:
 * modules and BPF code are mapped above the kernel) that is all; where not
 * (arm64's modules lie below it), the whole is sorted.
 */
static void ksyms__sort(struct ksyms *ks)
{
	size_t n = ksyms__nr_sorted(ks);

	if (n == ks->nr_text)
		return;
	qsort(ks->by_addr + n, ks->nr_text - n, sizeof(*ks->by_addr), cmp_addr);
	if (ks->by_addr[n - 1]->addr > ks->by_addr[n]->addr)
		qsort(ks->by_addr, ks->nr_text, sizeof(*ks->by_addr), cmp_addr);
}

static int ksyms__index(struct ksyms *ks)
{
	size_t i;

	ks->by_addr = malloc(ks->nr_syms * sizeof(*ks->by_addr));
	if (!ks->by_addr)
		return -ENOMEM;
	for (i = 0; i < ks->nr_syms; i++) {
		if (is_text(ks->syms[i].type))
			ks->by_addr[ks->nr_text++] = &ks->syms[i];
	}
	ksyms__sort(ks);
	return 0;
}

int ksyms__load(const char *path, struct ksyms **out)
{
	struct ksyms *ks;
	size_t nr_hidden = 0;
	int err;

	if (!path || !out)
		return -EINVAL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	err = ksyms__read(ks, path, &nr_hidden);
	if (!err && !ks->nr_syms)
		err = nr_hidden ? -EPERM : -EINVAL;
	if (!err)
		err = ksyms__index(ks);
	if (err) {
		ksyms__free(ks);
		return err;
	}
	*out = ks;
	return 0;
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->by_addr);
	names__free(ks->names);
	free(ks->syms);
	free(ks);
}

/* How many text symbols start at or below addr. */
static size_t ksyms__nr_text_upto(const struct ksyms *ks, __u64 addr)
{
	size_t lo = 0, hi = ks->nr_text, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ks->by_addr[mid]->addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct ksym *ksyms__map_addr(const struct ksyms *ks, __u64 addr)
{
	size_t n;

	if (!ks)
		return NULL;
	n = ksyms__nr_text_upto(ks, addr);
	if (!n)
		return NULL;
	/* The first of the symbols sharing that start (addresses are never 0). */
	return ks->by_addr[ksyms__nr_text_upto(ks, ks->by_addr[n - 1]->addr - 1)];
}

#define KSYMS_MAX_FUNCTION_SIZE (1ULL << 20)

const struct ksym *ksyms__map_frame(const struct ksyms *ks, __u64 addr)
{
	const struct ksym *sym = ks ? ksyms__map_addr(ks, addr) : NULL;

	return sym && addr - sym->addr < KSYMS_MAX_FUNCTION_SIZE ? sym : NULL;
}

bool ksyms__is_bpf(const struct ksym *sym)
{
	return sym && sym->module && !strcmp(sym->module, "bpf");
}

int ksyms__map_stack(const struct ksyms *ks, const __u64 *ips, int nr, __u64 *kept,
		     const struct ksym **syms)
{
	const struct ksym *sym;
	int i, n = 0;

	for (i = 0; i < nr; i++) {
		sym = ksyms__map_frame(ks, ips[i]);
		if (ksyms__is_bpf(sym))
			continue;
		kept[n] = ips[i];
		syms[n++] = sym;
	}
	return n;
}

/* A linear search: no index is kept for a lookup that setup does not make. */
const struct ksym *ksyms__get_symbol(const struct ksyms *ks, const char *name)
{
	const struct ksym *first = NULL;
	size_t i;

	for (i = 0; ks && name && i < ks->nr_syms; i++) {
		const struct ksym *sym = &ks->syms[i];

		if (strcmp(sym->name, name))
			continue;
		if (is_text(sym->type))
			return sym;
		if (!first)
			first = sym;
	}
	return first;
}

size_t ksyms__count(const struct ksyms *ks)
{
	return ks ? ks->nr_syms : 0;
}

/*
 * The symbol as the first text symbol of vmlinux named names[i], if not found
 * yet: i, or -1 when it is none of them.
 */
static int match_name(const struct ksym *sym, const char *const *names, __u64 *addrs, size_t n)
{
	size_t i;

	if (sym->module || !is_text(sym->type))
		return -1;
	for (i = 0; i < n; i++) {
		if (addrs[i] || strcmp(sym->name, names[i]))
			continue;
		addrs[i] = sym->addr;
		return (int)i;
	}
	return -1;
}

size_t ksyms__find(const struct ksyms *ks, const char *const *names, __u64 *addrs, size_t n)
{
	size_t found = 0, i;

	for (i = 0; i < n; i++)
		addrs[i] = 0;
	for (i = 0; ks && found < n && i < ks->nr_syms; i++)
		found += match_name(&ks->syms[i], names, addrs, n) >= 0;
	return found;
}

/* The next line into *line: 1, 0 at the end, -errno (getline() runs short of memory too). */
static int next_line(FILE *f, char **line, size_t *size)
{
	errno = 0;
	if (getline(line, size, f) > 0)
		return 1;
	if (feof(f))
		return 0;
	return errno ? -errno : -EIO;
}

int ksyms__scan(const char *path, const char *const *names, __u64 *addrs, size_t n, size_t either)
{
	size_t found = 0, lines = 0, i, size = 0, all = either ? n - either + 1 : n;
	struct ksyms_line l;
	bool any_addr = false, other = false;
	char *line = NULL;
	FILE *f;
	int err = 0, k;

	for (i = 0; i < n; i++)
		addrs[i] = 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* whole lines: the rest of one longer than a buffer would parse as a line of its own */
	while (found < all && (err = next_line(f, &line, &size)) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (parse_line(line, &l))
			continue;
		lines++;
		/* percpu symbols are at 0; kptr_restrict shows every address as 0 */
		if (!l.addr)
			continue;
		any_addr = true;
		k = match_name(
		    &(struct ksym){
			.name = l.name, .module = l.module, .addr = l.addr, .type = l.type},
		    names, addrs, n);
		if (k < 0)
			continue;
		/* of the alternatives, the first found counts */
		if ((size_t)k < n - either) {
			found++;
		} else if (!other) {
			other = true;
			found++;
		}
	}
	/* 1: stopped with every name found */
	if (err >= 0)
		err = !lines ? -EINVAL : !any_addr ? -EPERM : 0;
	free(line);
	fclose(f);
	return err;
}
