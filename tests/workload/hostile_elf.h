/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The head of an ELF file a hostile user would map for the -T log to read
 * (issue 40), for badelf and tests/unit/test_elfsyms.c: one PT_LOAD over its
 * first MiB, where the section headers begin.
 */
#ifndef HOSTILE_ELF_H
#define HOSTILE_ELF_H

#include <elf.h>
#include <errno.h>
#include <unistd.h>

#define HOSTILE_LOAD_SIZE (1L << 20)
#define HOSTILE_VADDR	  0x400000ULL

static inline int hostile_put(int fd, const void *buf, size_t size, off_t at)
{
	return pwrite(fd, buf, size, at) == (ssize_t)size ? 0 : -errno;
}

/*
 * The ELF header, the PT_LOAD and section header 0: shnum section headers
 * (their count in header 0 past 65279: extended numbering), and phnum program
 * headers (past 1, PN_XNUM and the count in header 0's sh_info). 0 or -errno.
 */
static inline int hostile_elf_head(int fd, unsigned long long shnum, unsigned int phnum)
{
	Elf64_Ehdr eh = {
	    .e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT},
	    .e_type = ET_DYN,
	    .e_machine = EM_X86_64,
	    .e_version = EV_CURRENT,
	    .e_phoff = sizeof(eh),
	    .e_shoff = HOSTILE_LOAD_SIZE,
	    .e_ehsize = sizeof(eh),
	    .e_phentsize = sizeof(Elf64_Phdr),
	    .e_phnum = phnum > 1 ? PN_XNUM : 1,
	    .e_shentsize = sizeof(Elf64_Shdr),
	    .e_shnum = shnum < SHN_LORESERVE ? (Elf64_Half)shnum : 0,
	};
	Elf64_Phdr ph = {.p_type = PT_LOAD,
			 .p_flags = PF_R | PF_X,
			 .p_vaddr = HOSTILE_VADDR,
			 .p_filesz = HOSTILE_LOAD_SIZE,
			 .p_memsz = HOSTILE_LOAD_SIZE};
	Elf64_Shdr first = {.sh_size = shnum < SHN_LORESERVE ? 0 : shnum,
			    .sh_info = phnum > 1 ? phnum : 0};
	int err = hostile_put(fd, &eh, sizeof(eh), 0);

	if (!err)
		err = hostile_put(fd, &ph, sizeof(ph), sizeof(eh));
	return err ? err : hostile_put(fd, &first, sizeof(first), HOSTILE_LOAD_SIZE);
}

#endif /* HOSTILE_ELF_H */
