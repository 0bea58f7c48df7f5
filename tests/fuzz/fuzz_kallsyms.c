// SPDX-License-Identifier: GPL-2.0
/*
 * ksyms__load() on arbitrary kallsyms text, then every lookup on the names and
 * addresses that text holds, and ksyms__scan() (setup's fast path) for a few of
 * those names, which must agree with the load and with ksyms__find() on it.
 * Three bytes first put up to 128 KiB of padding before the text, so that its
 * lines fall across the loader's 64 KiB buffer:
 * the style (bits 0-1: none, one long malformed line, the same without its '\n',
 * filler symbols; bit 2: 64 KiB more), then the padding's length (16 bits).
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "ksyms.h"

#define MAX_WORDS	  64
#define MAX_WORD_LEN	  600	       /* longer than KSYM_NAME_LEN (512) */
#define MAX_FUNCTION_SIZE (1ULL << 20) /* ksyms__map_frame()'s limit */
#define SCAN_NAMES	  3	       /* as setup asks for */
#define FILLER		  "ffffffff81000000 t filler\n"

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

static bool is_word_end(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\0';
}

/* The padding that goes before the text; its length in *len. NULL without memory. */
static char *make_padding(struct bytes *b, size_t *len)
{
	__u8 style = bytes__u8(b);
	size_t n = bytes__range(b, 0, 0xffff) + (style & 4 ? 0x10000 : 0), i;
	char *pad;

	*len = (style & 3) ? n : 0;
	pad = malloc(*len + 1);
	if (!pad || !*len)
		return pad;
	if ((style & 3) == 3) {
		for (i = 0; i < n; i++)
			pad[i] = FILLER[i % (sizeof(FILLER) - 1)];
		return pad;
	}
	memset(pad, 'a', n);
	if ((style & 3) == 1)
		pad[n - 1] = '\n';
	return pad;
}

/* 1 to 16 hex digits, as the kallsyms address column. */
static bool parse_hex(const char *s, __u64 *v)
{
	size_t n = strspn(s, "0123456789abcdefABCDEF");

	if (!n || n > 16 || s[n])
		return false;
	*v = strtoull(s, NULL, 16);
	return true;
}

static void check_symbol(const struct ksym *s)
{
	FUZZ_CHECK(s->name && s->name[0], "a symbol without a name");
	FUZZ_CHECK(!strpbrk(s->name, " \t\n"), "name '%s' holds a blank", s->name);
	FUZZ_CHECK(s->addr != 0, "'%s' at address 0", s->name);
	FUZZ_CHECK((s->type >= 'a' && s->type <= 'z') || (s->type >= 'A' && s->type <= 'Z'),
		   "'%s' has type 0x%02x", s->name, (unsigned char)s->type);
	FUZZ_CHECK(!s->module || s->module[0], "'%s' has an empty module", s->name);
	FUZZ_CHECK(strncmp(s->name, "__pfx_", 6), "padding symbol '%s' loaded", s->name);
}

/* Lookups by address: the greatest text symbol at or below, the first of its address. */
static void check_addr(const struct ksyms *ks, __u64 addr)
{
	const struct ksym *s = ksyms__map_addr(ks, addr), *before, *frame;

	frame = ksyms__map_frame(ks, addr);
	if (!s) {
		FUZZ_CHECK(!frame, "map_frame(0x%llx) found what map_addr did not",
			   (unsigned long long)addr);
		return;
	}
	check_symbol(s);
	FUZZ_CHECK(s->addr <= addr, "map_addr(0x%llx) gave '%s' at 0x%llx above it",
		   (unsigned long long)addr, s->name, (unsigned long long)s->addr);
	FUZZ_CHECK(is_text(s->type), "map_addr gave '%s' of type %c", s->name, s->type);
	FUZZ_CHECK(ksyms__map_addr(ks, s->addr) == s, "'%s' is not the first at its address",
		   s->name);
	before = ksyms__map_addr(ks, s->addr - 1);
	FUZZ_CHECK(!before || before->addr < s->addr, "map_addr(0x%llx) went up to '%s'",
		   (unsigned long long)(s->addr - 1), before->name);
	FUZZ_CHECK(frame == (addr - s->addr < MAX_FUNCTION_SIZE ? s : NULL),
		   "map_frame(0x%llx) disagrees with map_addr's '%s'", (unsigned long long)addr,
		   s->name);
}

/* Lookups by name: the symbol of that very name; a text one maps back to itself. */
static void check_name(const struct ksyms *ks, const char *name)
{
	const struct ksym *s = ksyms__get_symbol(ks, name), *at;

	if (!s)
		return;
	check_symbol(s);
	FUZZ_CHECK(!strcmp(s->name, name), "get_symbol('%s') gave '%s'", name, s->name);
	if (!is_text(s->type))
		return;
	at = ksyms__map_addr(ks, s->addr);
	FUZZ_CHECK(at && at->addr == s->addr, "text symbol '%s' does not map back", name);
	check_addr(ks, s->addr);
}

/* The blank-separated words of a kallsyms text, as the loader splits it. */
struct words {
	char word[MAX_WORDS][MAX_WORD_LEN + 1];
	int n;
};

static void split_words(const char *text, size_t len, struct words *w)
{
	size_t i = 0, start, n;

	for (w->n = 0; i < len && w->n < MAX_WORDS;) {
		for (; i < len && is_word_end(text[i]); i++)
			;
		for (start = i; i < len && !is_word_end(text[i]); i++)
			;
		n = i - start;
		if (!n || n > MAX_WORD_LEN)
			continue;
		memcpy(w->word[w->n], text + start, n);
		w->word[w->n++][n] = '\0';
	}
}

/* Every word as a name, and as an address where it is one. */
static void check_words(const struct ksyms *ks, const struct words *w)
{
	__u64 addr;
	int i;

	for (i = 0; i < w->n; i++) {
		check_name(ks, w->word[i]);
		if (parse_hex(w->word[i], &addr)) {
			check_addr(ks, addr - 1);
			check_addr(ks, addr);
			check_addr(ks, addr + 1);
		}
	}
}

/* Up to SCAN_NAMES distinct words that could name a function; how many. */
static size_t scan_names(const struct words *w, const char **names)
{
	size_t n = 0, k;
	__u64 addr;
	int i;

	for (i = 0; i < w->n && n < SCAN_NAMES; i++) {
		/* the scan keeps __pfx_ symbols: nobody asks it for one */
		if (parse_hex(w->word[i], &addr) || !strncmp(w->word[i], "__pfx_", 6))
			continue;
		for (k = 0; k < n && strcmp(names[k], w->word[i]); k++)
			;
		if (k == n)
			names[n++] = w->word[i];
	}
	return n;
}

/* The loaded table gives the addresses the scan of the same file found. */
static void check_find(const struct ksyms *ks, const char **names, const __u64 *scanned, size_t n)
{
	__u64 addrs[SCAN_NAMES];
	size_t i, nr = 0, got = ksyms__find(ks, names, addrs, n);

	for (i = 0; i < n; i++) {
		FUZZ_CHECK(addrs[i] == scanned[i], "find: '%s' at 0x%llx, scan: at 0x%llx",
			   names[i], (unsigned long long)addrs[i], (unsigned long long)scanned[i]);
		nr += addrs[i] != 0;
	}
	FUZZ_CHECK(got == nr, "find: %zu found, %zu addresses", got, nr);
}

/*
 * With the last two names alternatives (setup's trampolines), the scan gives
 * the other names' addresses as the whole scan did, and of the alternatives
 * one at least where the whole scan found one, each where that scan had it.
 */
static void check_either(const char *path, const char **names, const __u64 *whole, size_t n)
{
	__u64 addrs[SCAN_NAMES];
	size_t i, either = 2, alternatives = 0, had = 0;

	FUZZ_CHECK(!ksyms__scan(path, names, addrs, n, either), "ksyms__scan, either: failed");
	for (i = 0; i < n; i++) {
		FUZZ_CHECK(addrs[i] == whole[i] || (i >= n - either && !addrs[i]),
			   "either: '%s' at 0x%llx, the whole scan: at 0x%llx", names[i],
			   (unsigned long long)addrs[i], (unsigned long long)whole[i]);
		alternatives += i >= n - either && addrs[i];
		had += i >= n - either && whole[i];
	}
	FUZZ_CHECK(alternatives || !had, "either: no alternative, the whole scan found %zu", had);
}

/*
 * The scan finds a vmlinux text symbol where the load does: the first of that
 * name in the file (ks NULL: the load failed).
 */
static void check_scan(const char *path, const struct ksyms *ks, const struct words *w)
{
	const char *names[SCAN_NAMES];
	__u64 addrs[SCAN_NAMES];
	const struct ksym *s;
	size_t i, n = scan_names(w, names);
	int err = ksyms__scan(path, names, addrs, n, 0);

	FUZZ_CHECK(!err || err == -EINVAL || err == -EPERM, "ksyms__scan: %d", err);
	for (i = 0; !err && i < n; i++) {
		s = ks ? ksyms__get_symbol(ks, names[i]) : NULL;
		if (s && !s->module && is_text(s->type))
			FUZZ_CHECK(addrs[i] == s->addr, "scan: '%s' at 0x%llx, load: at 0x%llx",
				   names[i], (unsigned long long)addrs[i],
				   (unsigned long long)s->addr);
		if (!addrs[i])
			continue;
		FUZZ_CHECK(ks, "scan found '%s', the load failed", names[i]);
		s = ksyms__map_addr(ks, addrs[i]);
		FUZZ_CHECK(s && s->addr == addrs[i],
			   "scan: '%s' at 0x%llx, where the load has none", names[i],
			   (unsigned long long)addrs[i]);
	}
	if (!err && ks)
		check_find(ks, names, addrs, n);
	if (!err && n >= 2)
		check_either(path, names, addrs, n);
}

static size_t count_lines(const char *s, size_t len)
{
	size_t n = 1, i;

	for (i = 0; i < len; i++)
		n += s[i] == '\n';
	return n;
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	static struct memfile mf;
	static struct words words;
	struct bytes b = {data, size};
	struct ksyms *ks = NULL;
	size_t pad_len, lines;
	char *pad;
	int err;

	FUZZ_CHECK(!memfile__open(&mf) && !memfile__reset(&mf), "memfd: %s", strerror(errno));
	pad = make_padding(&b, &pad_len);
	FUZZ_CHECK(pad, "out of memory");
	FUZZ_CHECK(!memfile__append(&mf, pad, pad_len) && !memfile__append(&mf, b.p, b.left),
		   "memfd write: %s", strerror(errno));
	lines = count_lines(pad, pad_len) + count_lines((const char *)b.p, b.left);
	free(pad);
	split_words((const char *)b.p, b.left, &words);
	err = ksyms__load(mf.path, &ks);
	FUZZ_CHECK(err == 0 || err == -EINVAL || err == -EPERM, "ksyms__load: %d", err);
	check_scan(mf.path, err ? NULL : ks, &words);
	if (err)
		return 0;
	FUZZ_CHECK(ksyms__count(ks) >= 1 && ksyms__count(ks) <= lines, "%zu symbols from %zu lines",
		   ksyms__count(ks), lines);
	check_words(ks, &words);
	check_addr(ks, 0);
	check_addr(ks, ~0ULL);
	FUZZ_CHECK(!ksyms__get_symbol(ks, ""), "a symbol without a name");
	ksyms__free(ks);
	return 0;
}
