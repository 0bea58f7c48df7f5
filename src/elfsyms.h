/* SPDX-License-Identifier: GPL-2.0 */
/* The function at an offset of an ELF file, from its .symtab or .dynsym (libelf). */
#ifndef ELFSYMS_H
#define ELFSYMS_H

#include <stddef.h>
#include <linux/types.h>

/* An ELF file open for lookups. */
struct elfsyms;

/*
 * Takes fd, a regular file, for lookups: closed by elfsyms__free(), or here on
 * failure. The file is read (pread), never mapped: its owner may truncate it
 * meanwhile, and a mapping would then kill the reader with SIGBUS. 0, or
 * -EINVAL when it is not ELF.
 */
int elfsyms__open(int fd, struct elfsyms **out);
void elfsyms__free(struct elfsyms *es);

/*
 * The function that holds the byte at file_offset: its name into name, and
 * the offset into it in *off. 0, or -ENOENT when no symbol covers it. A
 * symbol table or string table over ELFSYMS_TABLE_MAX bytes is not read: any
 * user can build a file that claims one of gigabytes.
 */
#define ELFSYMS_TABLE_MAX (256ULL << 20)
int elfsyms__lookup(struct elfsyms *es, __u64 file_offset, char *name, size_t size, __u64 *off);

#endif /* ELFSYMS_H */
