// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"

struct elfsyms {
	int fd;
	Elf *elf;
};

/* The virtual address the loader gave the byte at file_offset: through its PT_LOAD. */
static int offset_to_vaddr(Elf *elf, __u64 file_offset, __u64 *vaddr)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (file_offset >= ph.p_offset && file_offset < ph.p_offset + ph.p_filesz) {
			*vaddr = file_offset - ph.p_offset + ph.p_vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* The function symbol of one symbol table that covers vaddr. */
static int find_in_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, __u64 vaddr, char *name,
			 size_t size, __u64 *off)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	const char *sym_name;
	GElf_Sym sym;

	for (i = 0; data && i < n; i++) {
		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    !sym.st_value)
			continue;
		if (vaddr < sym.st_value || vaddr >= sym.st_value + (sym.st_size ? sym.st_size : 1))
			continue;
		/* NULL for a name outside the string table: any user can build such a file */
		sym_name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!sym_name)
			continue;
		snprintf(name, size, "%s", sym_name);
		*off = vaddr - sym.st_value;
		return 0;
	}
	return -ENOENT;
}

/* A symbol table and its string table small enough to read whole. */
static bool readable_table(Elf *elf, const GElf_Shdr *sh)
{
	Elf_Scn *strings = elf_getscn(elf, sh->sh_link);
	GElf_Shdr str_sh;

	return sh->sh_size <= ELFSYMS_TABLE_MAX && strings && gelf_getshdr(strings, &str_sh) &&
	       str_sh.sh_size <= ELFSYMS_TABLE_MAX;
}

/* .symtab when the file has one (not stripped), else the dynamic symbols. */
static int find_symbol(Elf *elf, __u64 vaddr, char *name, size_t size, __u64 *off)
{
	int types[] = {SHT_SYMTAB, SHT_DYNSYM}, t;

	for (t = 0; t < 2; t++) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;

		while ((scn = elf_nextscn(elf, scn)))
			if (gelf_getshdr(scn, &sh) && sh.sh_type == (__u32)types[t] &&
			    readable_table(elf, &sh) &&
			    !find_in_table(elf, scn, &sh, vaddr, name, size, off))
				return 0;
	}
	return -ENOENT;
}

int elfsyms__open(int fd, struct elfsyms **out)
{
	struct elfsyms *es;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		return -EINVAL;
	}
	es = calloc(1, sizeof(*es));
	if (!es) {
		close(fd);
		return -ENOMEM;
	}
	es->fd = fd;
	es->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!es->elf || elf_kind(es->elf) != ELF_K_ELF) {
		elfsyms__free(es);
		return -EINVAL;
	}
	*out = es;
	return 0;
}

void elfsyms__free(struct elfsyms *es)
{
	if (!es)
		return;
	elf_end(es->elf);
	close(es->fd);
	free(es);
}

int elfsyms__lookup(struct elfsyms *es, __u64 file_offset, char *name, size_t size, __u64 *off)
{
	__u64 vaddr;
	int err = offset_to_vaddr(es->elf, file_offset, &vaddr);

	return err ? err : find_symbol(es->elf, vaddr, name, size, off);
}
