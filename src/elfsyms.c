// SPDX-License-Identifier: GPL-2.0
/*
 * Function names from an ELF file that any user may have written (the -T
 * log's user frames): what libelf holds for the file and each lookup's work
 * are counted against a budget before libelf is asked (elfsyms.h).
 */
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
#include "monotonic.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif

/* The clock is read once every this many units of work. */
#define DEADLINE_EVERY 1024

struct elfsyms {
	int fd;
	Elf *elf;
	bool swapped; /* the other byte order: libelf converts a table into a copy */
	__u64 bytes;  /* what libelf holds for it, as counted */
	size_t tables[ELFSYMS_TABLES_MAX]; /* the sections read whole, each counted once */
	int nr_tables;
};

/* The counts the ELF header claims, read before libelf allocates for them. */
struct elf_head {
	unsigned char ident[EI_NIDENT];
	__u64 shoff, shnum, phnum;
};

/* size bytes at at, converted from the file's class and byte order into memory's. */
static int read_as(int fd, void *buf, Elf_Type type, __u64 at, const unsigned char *ident)
{
	bool is32 = ident[EI_CLASS] == ELFCLASS32;
	size_t size = is32 ? elf32_fsize(type, 1, EV_CURRENT) : elf64_fsize(type, 1, EV_CURRENT);
	Elf_Data d = {.d_buf = buf, .d_type = type, .d_size = size, .d_version = EV_CURRENT};

	if (!size || pread(fd, buf, size, (off_t)at) != (ssize_t)size)
		return -EINVAL;
	if (is32)
		return elf32_xlatetom(&d, &d, ident[EI_DATA]) ? 0 : -EINVAL;
	return elf64_xlatetom(&d, &d, ident[EI_DATA]) ? 0 : -EINVAL;
}

/* The first section header's fields that extended numbering (more than 65279) uses. */
static int read_extended(int fd, struct elf_head *h)
{
	union {
		Elf32_Shdr s32;
		Elf64_Shdr s64;
	} first;
	bool is32 = h->ident[EI_CLASS] == ELFCLASS32;

	if (read_as(fd, &first, ELF_T_SHDR, h->shoff, h->ident))
		return -EINVAL;
	if (!h->shnum)
		h->shnum = is32 ? first.s32.sh_size : first.s64.sh_size;
	if (h->phnum == PN_XNUM)
		h->phnum = is32 ? first.s32.sh_info : first.s64.sh_info;
	return 0;
}

static int read_head(int fd, struct elf_head *h)
{
	union {
		Elf32_Ehdr e32;
		Elf64_Ehdr e64;
	} eh;
	unsigned char *id = h->ident;
	bool is32;

	if (pread(fd, id, EI_NIDENT, 0) != EI_NIDENT || memcmp(id, ELFMAG, SELFMAG) ||
	    (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64) ||
	    (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB) ||
	    read_as(fd, &eh, ELF_T_EHDR, 0, id))
		return -EINVAL;
	is32 = id[EI_CLASS] == ELFCLASS32;
	h->shoff = is32 ? eh.e32.e_shoff : eh.e64.e_shoff;
	h->shnum = is32 ? eh.e32.e_shnum : eh.e64.e_shnum;
	h->phnum = is32 ? eh.e32.e_phnum : eh.e64.e_phnum;
	if (h->shoff && (!h->shnum || h->phnum == PN_XNUM))
		return read_extended(fd, h);
	return 0;
}

/* One unit of work from b: false when none is left, or its time is up. */
static bool spend(struct elfsyms_budget *b)
{
	if (b->work && b->deadline_ns && b->work % DEADLINE_EVERY == 0 &&
	    now_ns() >= b->deadline_ns)
		b->work = 0;
	if (!b->work)
		return false;
	b->work--;
	return true;
}

/* The virtual address the loader gave the byte at file_offset: through its PT_LOAD. */
static int offset_to_vaddr(Elf *elf, __u64 file_offset, __u64 *vaddr, struct elfsyms_budget *b)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!spend(b))
			return -E2BIG;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (file_offset >= ph.p_offset && file_offset - ph.p_offset < ph.p_filesz) {
			*vaddr = file_offset - ph.p_offset + ph.p_vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* The function symbol of one symbol table that covers vaddr. */
static int find_in_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, __u64 vaddr, char *name,
			 size_t size, __u64 *off, struct elfsyms_budget *b)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	const char *sym_name;
	GElf_Sym sym;

	for (i = 0; data && i < n; i++) {
		if (!spend(b))
			return -E2BIG;
		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    !sym.st_value)
			continue;
		if (vaddr < sym.st_value || vaddr - sym.st_value >= (sym.st_size ? sym.st_size : 1))
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

/* Section ndx, size bytes, about to be read whole: counted once, if b has room. */
static int charge(struct elfsyms *es, size_t ndx, __u64 size, struct elfsyms_budget *b)
{
	int i;

	for (i = 0; i < es->nr_tables; i++)
		if (es->tables[i] == ndx)
			return 0;
	if (es->nr_tables == ELFSYMS_TABLES_MAX || size > b->bytes ||
	    (es->swapped && size > b->bytes - size))
		return -ENOSPC;
	size *= es->swapped ? 2 : 1;
	es->tables[es->nr_tables++] = ndx;
	es->bytes += size;
	b->bytes -= size;
	return 0;
}

/* A symbol table and its strings, counted before libelf reads them: -ENOSPC past b. */
static int charge_table(struct elfsyms *es, Elf_Scn *scn, const GElf_Shdr *sh,
			struct elfsyms_budget *b)
{
	Elf_Scn *strings = elf_getscn(es->elf, sh->sh_link);
	GElf_Shdr str_sh;
	int err;

	if (!strings || !gelf_getshdr(strings, &str_sh) || str_sh.sh_type != SHT_STRTAB)
		return -ENOENT;
	err = charge(es, elf_ndxscn(scn), sh->sh_size, b);
	return err ? err : charge(es, sh->sh_link, str_sh.sh_size, b);
}

/*
 * .symtab when the file has one (not stripped), else the dynamic symbols; a
 * table that does not fit in b is passed over, and -E2BIG said if no other
 * has the symbol.
 */
static int find_symbol(struct elfsyms *es, __u64 vaddr, char *name, size_t size, __u64 *off,
		       struct elfsyms_budget *b)
{
	int types[] = {SHT_SYMTAB, SHT_DYNSYM}, t, err;
	bool passed_over = false;

	for (t = 0; t < 2; t++) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;

		while ((scn = elf_nextscn(es->elf, scn))) {
			if (!spend(b))
				return -E2BIG;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (__u32)types[t])
				continue;
			err = charge_table(es, scn, &sh, b);
			passed_over |= err == -ENOSPC;
			if (!err)
				err = find_in_table(es->elf, scn, &sh, vaddr, name, size, off, b);
			if (err != -ENOENT && err != -ENOSPC)
				return err;
		}
	}
	return passed_over ? -E2BIG : -ENOENT;
}

int elfsyms__open(int fd, __u64 bytes_max, struct elfsyms **out)
{
	struct elf_head h = {};
	struct elfsyms *es;
	int err = -EINVAL;
	__u64 cost;

	if (elf_version(EV_CURRENT) == EV_NONE || read_head(fd, &h)) {
		close(fd);
		return err;
	}
	/* at most 2^32-1 of each: no overflow */
	cost = h.shnum * ELFSYMS_SCN_COST + h.phnum * ELFSYMS_PHDR_COST;
	es = cost > bytes_max ? NULL : calloc(1, sizeof(*es));
	if (!es) {
		close(fd);
		return cost > bytes_max ? -E2BIG : -ENOMEM;
	}
	es->fd = fd;
	es->bytes = cost;
	es->swapped = h.ident[EI_DATA] != NATIVE_DATA;
	es->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!es->elf || elf_kind(es->elf) != ELF_K_ELF) {
		elfsyms__free(es);
		return err;
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

__u64 elfsyms__bytes(const struct elfsyms *es)
{
	return es->bytes;
}

int elfsyms__lookup(struct elfsyms *es, __u64 file_offset, char *name, size_t size, __u64 *off,
		    struct elfsyms_budget *b)
{
	__u64 vaddr;
	int err = offset_to_vaddr(es->elf, file_offset, &vaddr, b);

	return err ? err : find_symbol(es, vaddr, name, size, off, b);
}
