// SPDX-License-Identifier: GPL-2.0
/*
 * The -T log's symbols under a budget (issue 40): ELF files a hostile user
 * would map, sparse, cost no more memory, work or time than the budget says,
 * whatever their headers claim (elfsyms.h, umaps.h).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "check.h"
#include "elfsyms.h"
#include "monotonic.h"
#include "umaps.h"
#include "../workload/hostile_elf.h"

#define LOAD_SIZE HOSTILE_LOAD_SIZE
#define VADDR	  HOSTILE_VADDR
#define SYM	  sizeof(Elf64_Sym)

/* A file's ELF header claims: its section headers from LOAD_SIZE on. */
struct claims {
	__u64 shnum; /* past 65279 in header 0 (extended numbering) */
	__u32 phnum; /* 1; or PN_XNUM's count, in header 0's sh_info */
};

static char paths[16][64];
static int nr_paths;

/* A new file with the claims made: its fd, its path in paths[]. */
static int hostile(const struct claims *c)
{
	char *path = paths[nr_paths++];
	int fd;

	snprintf(path, sizeof(paths[0]), "/var/tmp/elfsyms-test.XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(hostile_elf_head(fd, c->shnum, c->phnum ? c->phnum : 1) == 0);
	CHECK(ftruncate(fd, LOAD_SIZE + (off_t)(c->shnum * sizeof(Elf64_Shdr))) == 0);
	return fd;
}

static void put_shdr(int fd, __u64 i, const Elf64_Shdr *sh)
{
	CHECK(pwrite(fd, sh, sizeof(*sh), LOAD_SIZE + (off_t)(i * sizeof(*sh))) == sizeof(*sh));
}

/* Symbol tables 2..tables+1 of bytes each, all over the same zeros as the strings, 1. */
static int tables_file(int tables, __u64 bytes)
{
	struct claims c = {.shnum = (__u64)tables + 2};
	int fd = hostile(&c), i;
	off_t data = LOAD_SIZE + (off_t)(c.shnum * sizeof(Elf64_Shdr));
	Elf64_Shdr str = {.sh_type = SHT_STRTAB, .sh_offset = data, .sh_size = 4096};
	Elf64_Shdr sym = {.sh_type = SHT_SYMTAB,
			  .sh_offset = data,
			  .sh_size = bytes / SYM * SYM,
			  .sh_link = 1,
			  .sh_entsize = SYM};

	put_shdr(fd, 1, &str);
	for (i = 0; i < tables; i++)
		put_shdr(fd, (__u64)i + 2, &sym);
	CHECK(ftruncate(fd, data + (off_t)bytes) == 0);
	return fd;
}

static struct elfsyms *open_fd(int fd, int want)
{
	struct elfsyms *es = NULL;

	CHECK(elfsyms__open(dup(fd), UMAPS_FILE_BYTES, &es) == want);
	close(fd);
	return es;
}

static long maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static int lookup(struct elfsyms *es, __u64 file_off, struct elfsyms_budget *b, char *name)
{
	__u64 off;

	return elfsyms__lookup(es, file_off, name, 128, &off, b);
}

/*
 * 4M section headers (extended numbering), as in the attack: 1.07 GB before;
 * and 2^32-1 sections or program headers: refused before libelf sees them.
 */
static void test_hostile_header_counts(void)
{
	struct claims many = {.shnum = 4U << 20}, most = {.shnum = 0xffffffffULL},
		      phdrs = {.shnum = 1, .phnum = 0xffffffffU};
	long before = maxrss_kb();

	open_fd(hostile(&many), -E2BIG);
	/* the file is too short for them: libelf would refuse too, only later */
	open_fd(hostile(&most), -E2BIG);
	open_fd(hostile(&phdrs), -E2BIG);
	CHECK(maxrss_kb() - before < 8192);
}

/* 100,000 section headers fit in the budget: their count is work, spent each lookup. */
static void test_sections_are_work(void)
{
	struct claims c = {.shnum = 100000};
	struct elfsyms *es = open_fd(hostile(&c), 0);
	struct elfsyms_budget b = {.bytes = UMAPS_FILE_BYTES, .work = 50000};
	char name[128];

	CHECK(elfsyms__bytes(es) == 100000 * ELFSYMS_SCN_COST + ELFSYMS_PHDR_COST);
	CHECK(lookup(es, 0x1000, &b, name) == -E2BIG);
	CHECK(b.work == 0);
	b.work = 1000000;
	CHECK(lookup(es, 0x1000, &b, name) == -ENOENT);
	/* each header twice (.symtab, then .dynsym), the PT_LOAD once */
	CHECK(b.work == 1000000 - 2 * 99999 - 1);
	elfsyms__free(es);
}

/*
 * Tables over the file's budget are not read, each alone (8 of 128 MB: 1.05
 * GB and 4.9 s before) or together; past 16 tables none is read either.
 */
static void test_many_tables(void)
{
	struct elfsyms_budget b = {.bytes = UMAPS_FILE_BYTES, .work = UMAPS_FRAME_WORK};
	struct elfsyms *es = open_fd(tables_file(8, 128ULL << 20), 0);
	__u64 headers = elfsyms__bytes(es), t0 = now_ns();
	long before = maxrss_kb();
	char name[128];

	CHECK(lookup(es, 0x1000, &b, name) == -E2BIG);
	CHECK(elfsyms__bytes(es) == headers);
	CHECK(now_ns() - t0 < 100000000ULL && maxrss_kb() - before < 8192);
	elfsyms__free(es);
	es = open_fd(tables_file(40, 24 * 100), 0);
	headers = elfsyms__bytes(es);
	b = (struct elfsyms_budget){.bytes = UMAPS_FILE_BYTES, .work = UMAPS_FRAME_WORK};
	CHECK(lookup(es, 0x1000, &b, name) == -E2BIG);
	CHECK(elfsyms__bytes(es) == headers + 4096 + (ELFSYMS_TABLES_MAX - 1) * 2400);
	elfsyms__free(es);
}

/*
 * 15 tables of 4 MB over the same zeros, the budget's worth (64 MiB with the
 * strings): what is read is counted, and a lookup stops at its work (the same
 * count on every machine) or its time.
 */
static void test_tables_in_budget(void)
{
	struct elfsyms_budget b = {.bytes = UMAPS_FILE_BYTES, .work = UMAPS_FRAME_WORK};
	struct elfsyms *es = open_fd(tables_file(15, 4ULL << 20), 0);
	__u64 headers = elfsyms__bytes(es), per_table = (4ULL << 20) / SYM * SYM;
	long before = maxrss_kb();
	char name[128];

	CHECK(lookup(es, 0x1000, &b, name) == -E2BIG);
	CHECK(b.work == 0);
	/* 1M symbols and headers: 5 tables of 174762 read whole, and a 6th begun */
	CHECK(elfsyms__bytes(es) == headers + 4096 + 6 * per_table);
	CHECK(maxrss_kb() - before < (long)(elfsyms__bytes(es) >> 10) + 8192);
	b = (struct elfsyms_budget){.bytes = UMAPS_FILE_BYTES, .work = 100ULL << 20};
	CHECK(lookup(es, 0x1000, &b, name) == -ENOENT);
	CHECK(elfsyms__bytes(es) == headers + 4096 + 15 * per_table);
	CHECK(elfsyms__bytes(es) <= UMAPS_FILE_BYTES);
	/* its time up: stopped at the first look at the clock */
	b = (struct elfsyms_budget){
	    .bytes = UMAPS_FILE_BYTES, .work = UMAPS_FRAME_WORK, .deadline_ns = now_ns() - 1};
	CHECK(lookup(es, 0x1000, &b, name) == -E2BIG);
	CHECK(b.work == 0);
	elfsyms__free(es);
}

/* Names outside the strings, and tables whose strings are not strings: never read. */
static void test_strings_out_of_range(void)
{
	struct claims c = {.shnum = 5};
	int fd = hostile(&c);
	off_t data = LOAD_SIZE + 5 * sizeof(Elf64_Shdr);
	Elf64_Sym syms[3] = {
	    {0},
	    {.st_name = 1000000,
	     .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
	     .st_value = VADDR + 0x100,
	     .st_size = 0x10},
	    {.st_name = 1,
	     .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
	     .st_value = VADDR + 0x200,
	     .st_size = 0x10},
	};
	Elf64_Shdr str = {.sh_type = SHT_STRTAB, .sh_offset = data + sizeof(syms), .sh_size = 6};
	Elf64_Shdr sym = {.sh_type = SHT_SYMTAB,
			  .sh_offset = data,
			  .sh_size = sizeof(syms),
			  .sh_link = 1,
			  .sh_entsize = SYM};
	struct elfsyms_budget b = {.bytes = UMAPS_FILE_BYTES, .work = UMAPS_FRAME_WORK};
	struct elfsyms *es;
	char name[128];

	CHECK(pwrite(fd, syms, sizeof(syms), data) == sizeof(syms));
	CHECK(pwrite(fd, "\0good", 6, data + (off_t)sizeof(syms)) == 6);
	put_shdr(fd, 1, &str);
	put_shdr(fd, 2, &sym);
	sym.sh_link = 2; /* its strings: itself, not SHT_STRTAB */
	put_shdr(fd, 3, &sym);
	sym.sh_link = 9999; /* no such section */
	put_shdr(fd, 4, &sym);
	es = open_fd(fd, 0);
	CHECK(lookup(es, 0x105, &b, name) == -ENOENT);
	CHECK(lookup(es, 0x205, &b, name) == 0);
	CHECK_STR(name, "good");
	CHECK(lookup(es, LOAD_SIZE + 1, &b, name) == -ENOENT);
	elfsyms__free(es);
}

/* file mapped whole from 0 (LOAD_SIZE): its PT_LOAD. */
static char *map_file(int fd)
{
	char *base = mmap(NULL, LOAD_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);

	CHECK(base != MAP_FAILED);
	close(fd);
	return base;
}

/*
 * Frames in three files of a 60 MB table each: each frame past its work shows
 * "[budget]", counted; the files open hold 128 MiB at most, the least used
 * closed first; an event past its budget names no more frames.
 */
static void test_frames_over_budget(void)
{
	struct umaps_budget b = {.work = UMAPS_EVENT_WORK};
	char *base[3], buf[256], want[128];
	struct umaps *um = NULL;
	int i;

	for (i = 0; i < 3; i++)
		base[i] = map_file(tables_file(1, 60ULL << 20));
	CHECK(umaps__load(getpid(), NULL, &um) == 0);
	for (i = 0; i < 3; i++) {
		umaps__describe(um, (__u64)(unsigned long)(base[i] + 0x1000), buf, sizeof(buf), &b);
		snprintf(want, sizeof(want), "%s+0x1000 [budget]",
			 strrchr(paths[nr_paths - 3 + i], '/') + 1);
		CHECK_STR(buf, want);
		CHECK(umaps__bytes(um) <= UMAPS_TOTAL_BYTES);
		CHECK(umaps__bytes(um) > (60ULL << 20) * (i ? 2 : 1));
	}
	CHECK(b.over == 3 && b.work == UMAPS_EVENT_WORK - 3 * UMAPS_FRAME_WORK);
	umaps__describe(um, (__u64)(unsigned long)(base[0] + 0x1000), buf, sizeof(buf), &b);
	CHECK(b.over == 4 && b.work == 0);
	/* spent: the next frame is not looked up */
	umaps__describe(um, (__u64)(unsigned long)(base[1] + 0x1000), buf, sizeof(buf), &b);
	CHECK(b.over == 5 && strstr(buf, " [budget]"));
	umaps__free(um);
	for (i = 0; i < 3; i++)
		munmap(base[i], LOAD_SIZE);
}

int main(void)
{
	int failed = 0, i;

	RUN(test_hostile_header_counts);
	RUN(test_sections_are_work);
	RUN(test_many_tables);
	RUN(test_tables_in_budget);
	RUN(test_strings_out_of_range);
	RUN(test_frames_over_budget);
	for (i = 0; i < nr_paths; i++)
		unlink(paths[i]);
	return failed ? 1 : 0;
}
