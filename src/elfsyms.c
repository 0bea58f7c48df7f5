// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"

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

/* .symtab when the file has one (not stripped), else the dynamic symbols. */
static int find_symbol(Elf *elf, __u64 vaddr, char *name, size_t size, __u64 *off)
{
	int types[] = {SHT_SYMTAB, SHT_DYNSYM}, t;

	for (t = 0; t < 2; t++) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;

		while ((scn = elf_nextscn(elf, scn)))
			if (gelf_getshdr(scn, &sh) && sh.sh_type == (__u32)types[t] &&
			    !find_in_table(elf, scn, &sh, vaddr, name, size, off))
				return 0;
	}
	return -ENOENT;
}

int elfsyms__lookup(const char *path, __u64 file_offset, char *name, size_t size, __u64 *off)
{
	int fd, err;
	__u64 vaddr;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return -EINVAL;
	}
	err = offset_to_vaddr(elf, file_offset, &vaddr);
	if (!err)
		err = find_symbol(elf, vaddr, name, size, off);
	elf_end(elf);
	close(fd);
	return err;
}
