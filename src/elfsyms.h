/* SPDX-License-Identifier: GPL-2.0 */
/* The function at an offset of an ELF file, from its .symtab or .dynsym (libelf). */
#ifndef ELFSYMS_H
#define ELFSYMS_H

#include <stddef.h>
#include <linux/types.h>

/* An ELF file open for lookups. */
struct elfsyms;

/*
 * What libelf holds in memory for the file: any user can build one that claims
 * 2^32-1 section headers (extended numbering) or tables of gigabytes, and
 * libelf allocates for every header the file claims at elf_begin(). A section
 * costs its Elf_Scn and its header: 272 bytes measured with elfutils 0.188
 * (1M sections, elf_begin() and every header read: 265 MB), 320 counted; a
 * program header its 56 bytes; a table its size (twice when libelf converts
 * it from the other byte order).
 */
#define ELFSYMS_SCN_COST  320
#define ELFSYMS_PHDR_COST 64
/* The most tables (symbols or strings) read from one file: a real file has 4. */
#define ELFSYMS_TABLES_MAX 16

/*
 * What a lookup may spend, spent as it goes: bytes more the file may hold, a
 * count of the section headers and symbols it looks at (work, the same on
 * every machine), and a time (CLOCK_MONOTONIC ns; 0: none).
 */
struct elfsyms_budget {
	__u64 bytes;
	__u64 work;
	__u64 deadline_ns;
};

/*
 * Takes fd, a regular file, for lookups: closed by elfsyms__free(), or here on
 * failure. The file is read (pread), never mapped: its owner may truncate it
 * meanwhile, and a mapping would then kill the reader with SIGBUS. 0, -EINVAL
 * when it is not ELF, or -E2BIG when its headers would take more than
 * bytes_max (their count is read before libelf allocates for them).
 */
int elfsyms__open(int fd, __u64 bytes_max, struct elfsyms **out);
void elfsyms__free(struct elfsyms *es);
/* The bytes libelf holds for the file, as counted against the budgets. */
__u64 elfsyms__bytes(const struct elfsyms *es);

/*
 * The function that holds the byte at file_offset: its name into name, and
 * the offset into it in *off. 0, -ENOENT when no symbol covers it, or -E2BIG
 * when b ran out (or a table did not fit in it) before a symbol was found.
 */
int elfsyms__lookup(struct elfsyms *es, __u64 file_offset, char *name, size_t size, __u64 *off,
		    struct elfsyms_budget *b);

#endif /* ELFSYMS_H */
