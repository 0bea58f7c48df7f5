// SPDX-License-Identifier: GPL-2.0
/* Unit tests for src/ksyms.c; run from the repository root. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "ksyms.h"

#define FIXTURE "tests/fixtures/kallsyms"
/* Symbols kept from FIXTURE: no __pfx_, malformed or zero-address lines. */
#define FIXTURE_COUNT 31

static struct ksyms *load_fixture(void)
{
	struct ksyms *ks = NULL;
	int err = ksyms__load(FIXTURE, &ks);

	CHECK(err == 0);
	return err ? NULL : ks;
}

/* Writes text to a new temporary file; fills path (size >= 32). */
static int write_temp(const char *text, size_t len, char *path)
{
	int fd;

	strcpy(path, "/tmp/test_ksyms.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		return -EIO;
	}
	close(fd);
	return 0;
}

/* Loads text as a kallsyms file; returns ksyms__load()'s result. */
static int load_text(const char *text, size_t len, struct ksyms **ks)
{
	char path[32];
	int err;

	err = write_temp(text, len, path);
	CHECK(err == 0);
	if (err)
		return err;
	err = ksyms__load(path, ks);
	unlink(path);
	return err;
}

static const char *map_name(const struct ksyms *ks, __u64 addr)
{
	const struct ksym *sym = ksyms__map_addr(ks, addr);

	return sym ? sym->name : NULL;
}

static void test_map_addr_exact_and_inside(void)
{
	struct ksyms *ks = load_fixture();
	const struct ksym *sym;

	if (!ks)
		return;
	sym = ksyms__map_addr(ks, 0xffffffff815b1280);
	CHECK(sym != NULL);
	if (sym) {
		CHECK_STR(sym->name, "generic_fadvise");
		CHECK(sym->module == NULL);
		CHECK(sym->addr == 0xffffffff815b1280);
		CHECK(sym->type == 'T');
	}
	CHECK_STR(map_name(ks, 0xffffffff815b1280 + 0x123), "generic_fadvise");
	CHECK_STR(map_name(ks, 0xffffffff815b154f), "generic_fadvise");
	CHECK_STR(map_name(ks, 0xffffffff815bb4e5), "lru_add_drain_all");
	CHECK_STR(map_name(ks, 0xffffffff812077c8), "abort"); /* W */
	CHECK_STR(map_name(ks, 0xffffffff812082d4), "__queue_work.cold");
	ksyms__free(ks);
}

/* A frame 1 MiB or more past the last symbol before it is in nothing known. */
static void test_map_frame(void)
{
	struct ksyms *ks = load_fixture();
	const struct ksym *sym;

	if (!ks)
		return;
	sym = ksyms__map_frame(ks, 0xffffffffc0b00000 + 0x233);
	CHECK(sym && !strcmp(sym->name, "xfs_fs_fill_super"));
	CHECK(ksyms__map_frame(ks, 0xffffffffc0b00000 + (1ULL << 20)) == NULL);
	CHECK(ksyms__map_addr(ks, 0xffffffffc0b00000 + (1ULL << 20)) != NULL);
	CHECK(ksyms__map_frame(NULL, 0xffffffff815b1280) == NULL);
	ksyms__free(ks);
}

/*
 * BPF code is kallsyms' module "bpf": a stack's frames there (a program, a
 * trampoline made since, past the last program) go; the rest keep their order.
 */
static void test_map_stack_drops_bpf(void)
{
	static const char text[] =
	    "ffffffff815b1280 T generic_fadvise\n"
	    "ffffffff815b1580 T ksys_fadvise64_64\n"
	    "ffffffffc0a01000 t ext4_fill_super\t[ext4]\n"
	    "ffffffffc0201000 t bpf_prog_3b185187f1855c4c_drainstat_fentry_drain_all_twin\t[bpf]\n"
	    "ffffffffc0203000 t bpf_prog_9a8f2b1c0d4e5f60_drainstat_running\t[bpf]\n"
	    "ffffffffc0205000 t bpf_trampoline_6442485879\t[bpf]\n";
	const __u64 ips[] = {0xffffffffc02016c0, 0xffffffffc020357b, 0xffffffffc0205010,
			     0xffffffff815b14a9, 0xffffffffc0a01010, 0xffffffffc0400000,
			     0xffffffff815b1600};
	const struct ksym *syms[7];
	struct ksyms *ks = NULL;
	__u64 kept[7];

	CHECK(load_text(text, sizeof(text) - 1, &ks) == 0);
	if (!ks)
		return;
	CHECK(ksyms__is_bpf(ksyms__get_symbol(ks, "bpf_trampoline_6442485879")));
	CHECK(!ksyms__is_bpf(ksyms__get_symbol(ks, "ext4_fill_super")));
	CHECK(!ksyms__is_bpf(ksyms__get_symbol(ks, "generic_fadvise")));
	CHECK(!ksyms__is_bpf(NULL));
	CHECK(ksyms__map_stack(ks, ips, 7, kept, syms) == 4);
	CHECK(kept[0] == 0xffffffff815b14a9 && syms[0] &&
	      !strcmp(syms[0]->name, "generic_fadvise"));
	CHECK(kept[1] == 0xffffffffc0a01010 && syms[1] &&
	      !strcmp(syms[1]->name, "ext4_fill_super"));
	/* 1 MiB or more past the trampoline: in nothing known, kept unnamed */
	CHECK(kept[2] == 0xffffffffc0400000 && syms[2] == NULL);
	CHECK(kept[3] == 0xffffffff815b1600 && syms[3] &&
	      !strcmp(syms[3]->name, "ksys_fadvise64_64"));
	/* no table: nothing is known to be BPF code, every frame is kept unnamed */
	CHECK(ksyms__map_stack(NULL, ips, 7, kept, syms) == 7);
	CHECK(syms[0] == NULL && kept[6] == ips[6]);
	ksyms__free(ks);
}

static void test_map_addr_bounds(void)
{
	struct ksyms *ks = load_fixture();
	const struct ksym *sym;

	if (!ks)
		return;
	CHECK(ksyms__map_addr(ks, 0) == NULL);
	CHECK(ksyms__map_addr(ks, 0xffffffff80ffffff) == NULL);
	sym = ksyms__map_addr(ks, 0xffffffffffffff00);
	CHECK(sym != NULL);
	if (sym) {
		CHECK_STR(sym->name, "xfs_fs_fill_super"); /* last line, no '\n' */
		CHECK_STR(sym->module, "xfs");
	}
	ksyms__free(ks);
}

static void test_map_addr_duplicates_take_first(void)
{
	struct ksyms *ks = load_fixture();

	if (!ks)
		return;
	CHECK_STR(map_name(ks, 0xffffffff81000000), "srso_alias_untrain_ret");
	CHECK_STR(map_name(ks, 0xffffffff8100007f), "srso_alias_untrain_ret");
	CHECK_STR(map_name(ks, 0xffffffff81000080), "entry_SYSCALL_64");
	ksyms__free(ks);
}

static void test_map_addr_module(void)
{
	struct ksyms *ks = load_fixture();
	const struct ksym *sym;

	if (!ks)
		return;
	/* ext4's symbols are listed out of address order. */
	sym = ksyms__map_addr(ks, 0xffffffffc0a01010);
	CHECK(sym != NULL);
	if (sym) {
		CHECK_STR(sym->name, "ext4_fill_super");
		CHECK_STR(sym->module, "ext4");
	}
	CHECK_STR(map_name(ks, 0xffffffffc0a01850), "ext4_iomap_begin");
	CHECK_STR(map_name(ks, 0xffffffffc0a02001), "ext4_exit_fs");
	CHECK_STR(map_name(ks, 0xffffffffc0a00fff), "do_syscall_64");
	ksyms__free(ks);
}

/*
 * A module below vmlinux (arm64's are), out of order among its own symbols,
 * and BPF code above it: all found by address. The padding line of a name
 * too short to be __pfx_'s, and one with a short address, are symbols.
 */
static void test_map_addr_module_below(void)
{
	static const char text[] = "ffff800080010000 T _text\n"
				   "ffff800080010100 t __pfx_do_work\n"
				   "ffff800080010110 t do_work\n"
				   "ffff800080010200 t __pfx\n"
				   "ffff800080020000 T _etext\n"
				   "ffff80007a002000 t mod_late\t[m]\n"
				   "ffff80007a001000 t mod_early\t[m]\n"
				   "ffff800081000000 t bpf_prog_2\t[bpf]\n"
				   "ffff800080fff000 t bpf_prog_1\t[bpf]\n"
				   "80030000 t short_addr\n";
	struct ksyms *ks = NULL;

	CHECK(load_text(text, sizeof(text) - 1, &ks) == 0);
	CHECK(ksyms__count(ks) == 9);
	CHECK_STR(map_name(ks, 0xffff80007a001008), "mod_early");
	CHECK_STR(map_name(ks, 0xffff80007a002008), "mod_late");
	CHECK_STR(map_name(ks, 0xffff800080010108), "_text");
	CHECK_STR(map_name(ks, 0xffff800080010118), "do_work");
	CHECK_STR(map_name(ks, 0xffff800080010208), "__pfx");
	CHECK_STR(map_name(ks, 0xffff800080fff008), "bpf_prog_1");
	CHECK_STR(map_name(ks, 0xffff800081000008), "bpf_prog_2");
	CHECK_STR(map_name(ks, 0x80030008), "short_addr");
	ksyms__free(ks);
}

static void test_map_addr_ignores_data_and_padding(void)
{
	struct ksyms *ks = load_fixture();

	if (!ks)
		return;
	CHECK_STR(map_name(ks, 0xffffffff82400010), "do_syscall_64");
	CHECK_STR(map_name(ks, 0xffffffff82a01010), "do_syscall_64");
	CHECK_STR(map_name(ks, 0xffffffff816a0010), "event_filter");
	/* Inside __pfx_generic_fadvise: padding is not loaded. */
	CHECK_STR(map_name(ks, 0xffffffff815b1278), "bpf_trace_run3");
	ksyms__free(ks);
}

static void test_get_symbol(void)
{
	struct ksyms *ks = load_fixture();
	const struct ksym *sym;

	if (!ks)
		return;
	sym = ksyms__get_symbol(ks, "lru_add_drain_per_cpu");
	CHECK(sym && sym->addr == 0xffffffff815bb040 && sym->type == 't');
	sym = ksyms__get_symbol(ks, "ext4_exit_fs");
	CHECK(sym && sym->addr == 0xffffffffc0a02000);
	if (sym)
		CHECK_STR(sym->module, "ext4");
	sym = ksyms__get_symbol(ks, "xfs_fs_fill_super");
	CHECK(sym && sym->addr == 0xffffffffc0b00000);
	sym = ksyms__get_symbol(ks, "__start_rodata");
	CHECK(sym && sym->type == 'D');
	ksyms__free(ks);
}

static void test_get_symbol_duplicates(void)
{
	struct ksyms *ks = load_fixture();
	const struct ksym *sym;

	if (!ks)
		return;
	sym = ksyms__get_symbol(ks, "PageHuge");
	CHECK(sym && sym->addr == 0xffffffff815f8870);
	/* The data symbol comes first in the file, the text one wins. */
	sym = ksyms__get_symbol(ks, "event_filter");
	CHECK(sym && sym->type == 't' && sym->addr == 0xffffffff816a0000);
	ksyms__free(ks);
}

static void test_get_symbol_not_found(void)
{
	static const char *const missing[] = {
	    "no_such_symbol",	  "__pfx_generic_fadvise", "hidden_by_kptr_restrict",
	    "bad_hex_digit",	  "two_letter_type",	   "seventeen_digits",
	    "ext4_broken_module", "lru_add_drain_",	   "",
	};
	struct ksyms *ks = load_fixture();
	size_t i;

	if (!ks)
		return;
	for (i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
		if (ksyms__get_symbol(ks, missing[i])) {
			fprintf(stderr, "  found \"%s\"\n", missing[i]);
			CHECK(0);
		}
	}
	CHECK(ksyms__get_symbol(ks, NULL) == NULL);
	ksyms__free(ks);
}

static void test_count(void)
{
	struct ksyms *ks = load_fixture();

	if (!ks)
		return;
	CHECK(ksyms__count(ks) == FIXTURE_COUNT);
	ksyms__free(ks);
}

static void test_load_errors(void)
{
	static const char hidden[] = "0000000000000000 T _text\n"
				     "0000000000000000 t lru_add_drain_per_cpu\n"
				     "0000000000000000 t foo\t[ext4]\n";
	static const char garbage[] = "hello\nworld\n\n";
	struct ksyms *ks = NULL;

	CHECK(ksyms__load("tests/fixtures/does-not-exist", &ks) == -ENOENT);
	CHECK(load_text(hidden, sizeof(hidden) - 1, &ks) == -EPERM);
	CHECK(load_text(garbage, sizeof(garbage) - 1, &ks) == -EINVAL);
	CHECK(load_text("", 0, &ks) == -EINVAL);
	CHECK(ksyms__load(NULL, &ks) == -EINVAL);
	CHECK(ks == NULL);
	ksyms__free(NULL);
}

/* Appends c n times. */
static size_t fill(char *text, char c, size_t n)
{
	memset(text, c, n);
	return n;
}

/* A line longer than the read buffer is skipped whole; long names still parse. */
static void test_long_lines(void)
{
	size_t huge = 200 * 1024, name = 3000, len = 0;
	char *text = malloc(huge + 64 * 1024 + name + 200);
	struct ksyms *ks = NULL;
	const struct ksym *sym;

	CHECK(text != NULL);
	if (!text)
		return;
	/* Its tail looks like a line and starts where a 64 KiB read would cut it. */
	len += sprintf(text, "ffffffff81000000 T ");
	len += fill(text + len, 'g', 64 * 1024 - 1 - len);
	len += sprintf(text + len, "ffffffff81000050 T tail_of_long_line\n");
	len += sprintf(text + len, "ffffffff81000000 T ");
	len += fill(text + len, 'a', huge);
	len += sprintf(text + len, "\nffffffff81000100 T after_long_line\nffffffff81000200 T ");
	len += fill(text + len, 'b', name);
	text[len++] = '\n';
	CHECK(load_text(text, len, &ks) == 0);
	free(text);
	if (!ks)
		return;
	CHECK(ksyms__count(ks) == 2);
	CHECK(ksyms__get_symbol(ks, "tail_of_long_line") == NULL);
	CHECK(map_name(ks, 0xffffffff81000000) == NULL);
	CHECK_STR(map_name(ks, 0xffffffff81000100), "after_long_line");
	sym = ksyms__map_addr(ks, 0xffffffff81000300);
	CHECK(sym && strlen(sym->name) == name);
	ksyms__free(ks);
}

/* Enough lines to cross many read buffers; every one must come back. */
static void test_many_lines(void)
{
	const int nr = 50000;
	char *text = malloc(nr * 48), name[32];
	struct ksyms *ks = NULL;
	size_t len = 0;
	int i, bad = 0;

	CHECK(text != NULL);
	if (!text)
		return;
	for (i = 0; i < nr; i++)
		len +=
		    sprintf(text + len, "ffffffff8%07x %c sym_%d\n", i * 16, i % 2 ? 't' : 'T', i);
	CHECK(load_text(text, len, &ks) == 0);
	free(text);
	if (!ks)
		return;
	CHECK(ksyms__count(ks) == (size_t)nr);
	for (i = 0; i < nr; i++) {
		const struct ksym *sym = ksyms__map_addr(ks, 0xffffffff80000000 + i * 16 + 7);

		snprintf(name, sizeof(name), "sym_%d", i);
		/* by name too, for some: a lookup by name searches every symbol */
		bad += !sym || strcmp(sym->name, name) ||
		       (i % 997 == 0 && ksyms__get_symbol(ks, name) != sym);
	}
	CHECK(bad == 0);
	ksyms__free(ks);
}

static double elapsed_ms(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1e3 + (b->tv_nsec - a->tv_nsec) / 1e6;
}

/* The few symbols setup asks FIXTURE for, by ksyms__scan() and ksyms__find() alike. */
static const char *const setup_names[] = {"lru_add_drain_per_cpu", "lru_cache_disable",
					  "no_such_symbol", "__start_rodata", "PageHuge"};
#define SETUP_NAMES (sizeof(setup_names) / sizeof(setup_names[0]))

/* Their addresses in FIXTURE: found, missing, from vmlinux text only. */
static void check_setup_addrs(const __u64 *addrs)
{
	CHECK(addrs[0] == 0xffffffff815bb040ULL);
	CHECK(addrs[1] == 0xffffffff815bb500ULL);
	CHECK(addrs[2] == 0);
	CHECK(addrs[3] == 0);			  /* data, not text */
	CHECK(addrs[4] == 0xffffffff815f8870ULL); /* the first of two */
}

static void test_scan(void)
{
	const char *const *names = setup_names;
	__u64 addrs[SETUP_NAMES];
	char path[32];

	CHECK(ksyms__scan(FIXTURE, names, addrs, SETUP_NAMES, 0) == 0);
	check_setup_addrs(addrs);
	CHECK(ksyms__scan("/nonexistent", names, addrs, 1, 0) == -ENOENT);
	CHECK(write_temp("0000000000000000 T a\n0000000000000000 T b\n", 42, path) == 0);
	CHECK(ksyms__scan(path, names, addrs, 1, 0) == -EPERM);
	unlink(path);
	CHECK(write_temp("", 0, path) == 0);
	CHECK(ksyms__scan(path, names, addrs, 1, 0) == -EINVAL);
	unlink(path);
	/* Debian's kernels list percpu symbols at 0 first: not hidden addresses */
	CHECK(write_temp("0000000000000000 A fixed_percpu_data\n"
			 "ffffffff815bb040 t lru_add_drain_per_cpu\n",
			 78, path) == 0);
	CHECK(ksyms__scan(path, names, addrs, 1, 0) == 0 && addrs[0] == 0xffffffff815bb040ULL);
	unlink(path);
}

/*
 * The last names alternatives, as setup's trampolines: the first found ends
 * the scan once the others are found, and those after it stay unread.
 */
static void test_scan_either(void)
{
	static const char text[] = "ffffffff81000100 t rethook_tramp\n"
				   "ffffffff81000200 T lru_add_drain_per_cpu\n"
				   "ffffffff81000300 t kretprobe_tramp\n"
				   "ffffffff81000400 T lru_cache_disable\n";
	const char *names[] = {"lru_add_drain_per_cpu", "kretprobe_tramp", "rethook_tramp"};
	__u64 addrs[3];
	char path[32];

	CHECK(write_temp(text, sizeof(text) - 1, path) == 0);
	CHECK(ksyms__scan(path, names, addrs, 3, 2) == 0);
	CHECK(addrs[0] == 0xffffffff81000200ULL && addrs[2] == 0xffffffff81000100ULL);
	CHECK(addrs[1] == 0); /* after the line that ended the scan */
	/* no alternative: on to the end, the others found all the same */
	names[0] = "lru_cache_disable";
	names[1] = names[2] = "no_such_symbol";
	CHECK(ksyms__scan(path, names, addrs, 3, 2) == 0);
	CHECK(addrs[0] == 0xffffffff81000400ULL && !addrs[1] && !addrs[2]);
	/* alternatives found before the others do not end it */
	names[0] = "lru_cache_disable";
	names[1] = "rethook_tramp";
	names[2] = "kretprobe_tramp";
	CHECK(ksyms__scan(path, names, addrs, 3, 2) == 0);
	CHECK(addrs[0] == 0xffffffff81000400ULL && addrs[1] == 0xffffffff81000100ULL &&
	      addrs[2] == 0xffffffff81000300ULL);
	unlink(path);
}

/* The same from a loaded table, as setup takes them in tracepoint mode. */
static void test_find(void)
{
	static const char module_first[] = "ffffffffc0001000 t lru_add_drain_per_cpu\t[fake]\n"
					   "ffffffff815bb040 t lru_add_drain_per_cpu\n";
	const char *const *names = setup_names;
	__u64 addrs[SETUP_NAMES] = {1, 1, 1, 1, 1};
	struct ksyms *ks = NULL;

	CHECK(ksyms__load(FIXTURE, &ks) == 0);
	CHECK(ksyms__find(ks, names, addrs, SETUP_NAMES) == 3);
	check_setup_addrs(addrs);
	CHECK(ksyms__find(NULL, names, addrs, 1) == 0 && addrs[0] == 0);
	ksyms__free(ks);
	ks = NULL;
	/* a module's symbol of the name, listed first, is not vmlinux's */
	CHECK(load_text(module_first, sizeof(module_first) - 1, &ks) == 0);
	CHECK(ksyms__find(ks, names, addrs, 1) == 1 && addrs[0] == 0xffffffff815bb040ULL);
	ksyms__free(ks);
}

static void test_proc_kallsyms(void)
{
	struct timespec start, end;
	struct ksyms *ks = NULL;
	const struct ksym *sym;
	int err;

	if (access("/proc/kallsyms", R_OK)) {
		printf("  skip: /proc/kallsyms not readable\n");
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	err = ksyms__load("/proc/kallsyms", &ks);
	clock_gettime(CLOCK_MONOTONIC, &end);
	if (err == -EPERM) {
		printf("  skip: kernel addresses hidden (kptr_restrict)\n");
		return;
	}
	CHECK(err == 0);
	if (err)
		return;
	printf("  /proc/kallsyms: %zu symbols in %.1f ms\n", ksyms__count(ks),
	       elapsed_ms(&start, &end));
	CHECK(ksyms__count(ks) > 1000);
	sym = ksyms__get_symbol(ks, "lru_add_drain_all");
	CHECK(sym != NULL);
	if (sym) {
		__u64 addr = sym->addr;

		sym = ksyms__map_addr(ks, addr + 1);
		CHECK(sym && sym->addr == addr);
	}
	ksyms__free(ks);
}

int main(void)
{
	int failed = 0;

	RUN(test_map_addr_exact_and_inside);
	RUN(test_map_addr_bounds);
	RUN(test_map_frame);
	RUN(test_map_stack_drops_bpf);
	RUN(test_map_addr_duplicates_take_first);
	RUN(test_map_addr_module);
	RUN(test_map_addr_module_below);
	RUN(test_map_addr_ignores_data_and_padding);
	RUN(test_get_symbol);
	RUN(test_get_symbol_duplicates);
	RUN(test_get_symbol_not_found);
	RUN(test_count);
	RUN(test_load_errors);
	RUN(test_long_lines);
	RUN(test_many_lines);
	RUN(test_scan);
	RUN(test_scan_either);
	RUN(test_find);
	RUN(test_proc_kallsyms);
	return failed ? 1 : 0;
}
