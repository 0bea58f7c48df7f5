/* SPDX-License-Identifier: GPL-2.0 */
/* The function at an offset of an ELF file, from its .symtab or .dynsym (libelf). */
#ifndef ELFSYMS_H
#define ELFSYMS_H

#include <stddef.h>
#include <linux/types.h>

/*
 * The function of path that holds the byte at file_offset: its name into name,
 * and the offset into it in *off. 0, or -ENOENT when no symbol covers it, or
 * -errno when the file cannot be read as ELF.
 */
int elfsyms__lookup(const char *path, __u64 file_offset, char *name, size_t size, __u64 *off);

#endif /* ELFSYMS_H */
