// SPDX-License-Identifier: GPL-2.0
/*
 * badelf: write the ELF file a hostile user would map for the -T log to read
 * (issue 40), sparse so that it costs little disk: one PT_LOAD over its first
 * MiB (where drainforce -F puts its frames), then either SECTIONS section
 * headers, with extended numbering past 65279 (all SHT_NULL but the count),
 * or TABLES symbol tables of BYTES each, all over the same zeros, with a
 * string table of 4 KiB there too (every symbol read, none a function).
 */
#define _GNU_SOURCE
#include <elf.h>

#define WORKLOAD_NAME "badelf"
#include "workload.h"
#include "hostile_elf.h"

#define LOAD_SIZE HOSTILE_LOAD_SIZE

static void usage(FILE *f)
{
	fprintf(f, "usage: badelf (-s SECTIONS | -t TABLES -z BYTES) FILE\n"
		   "  -s SECTIONS  that many section headers (extended numbering past 65279)\n"
		   "  -t TABLES    that many symbol tables, each of BYTES (-z), overlapping\n");
}

/* Header 1 the strings, 2.. the symbol tables, all over the bytes after the headers. */
static int put_tables(int fd, long tables, long bytes)
{
	off_t data = LOAD_SIZE + (tables + 2) * (off_t)sizeof(Elf64_Shdr);
	Elf64_Shdr sh = {.sh_type = SHT_STRTAB, .sh_offset = data, .sh_size = 4096};
	long i;
	int err = hostile_put(fd, &sh, sizeof(sh), LOAD_SIZE + sizeof(sh));

	/* libelf reads no table whose size is not a multiple of its entries' */
	sh = (Elf64_Shdr){.sh_type = SHT_SYMTAB,
			  .sh_offset = data,
			  .sh_size = (Elf64_Xword)bytes / sizeof(Elf64_Sym) * sizeof(Elf64_Sym),
			  .sh_link = 1,
			  .sh_entsize = sizeof(Elf64_Sym)};
	for (i = 0; !err && i < tables; i++)
		err = hostile_put(fd, &sh, sizeof(sh), LOAD_SIZE + (i + 2) * (off_t)sizeof(sh));
	return err ? err : ftruncate(fd, data + bytes) ? -errno : 0;
}

static int parse_options(int argc, char **argv, long *sections, long *tables, long *bytes)
{
	int opt, err = 0;

	opterr = 0;
	while (!err && (opt = getopt(argc, argv, "s:t:z:h")) != -1) {
		if (opt == 's')
			err = parse_number(opt, optarg, 1, 0xffffffffL, sections);
		else if (opt == 't')
			err = parse_number(opt, optarg, 1, 0xfff0L, tables);
		else if (opt == 'z')
			err = parse_number(opt, optarg, 1, 1L << 40, bytes);
		else if (opt == 'h')
			return usage(stdout), 1;
		else
			err = usage_error("unknown option or missing argument: -%c", optopt);
	}
	if (!err && (optind != argc - 1 || !*sections == !*tables || !*tables != !*bytes))
		err = usage_error("give -s, or -t with -z, and one FILE");
	return err;
}

int main(int argc, char **argv)
{
	long sections = 0, tables = 0, bytes = 0;
	int fd, err = parse_options(argc, argv, &sections, &tables, &bytes);

	if (err)
		return err > 0 ? 0 : EXIT_USAGE;
	fd = open(argv[optind], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return runtime_error("open", argv[optind], -errno);
	err = hostile_elf_head(fd, (unsigned long long)(sections ? sections : tables + 2), 1);
	if (!err && sections)
		err = ftruncate(fd, LOAD_SIZE + sections * (off_t)sizeof(Elf64_Shdr)) ? -errno : 0;
	else if (!err)
		err = put_tables(fd, tables, bytes);
	close(fd);
	return err ? runtime_error("write", argv[optind], err) : 0;
}
