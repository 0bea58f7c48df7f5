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

struct options {
	struct common_options common;
	long sections;
	long tables;
	long bytes;
};

static void usage(FILE *f)
{
	static const struct usage_option opts[] = {
	    {"-s SECTIONS", "that many section headers (extended numbering past 65279)"},
	    {"-t TABLES", "that many symbol tables, each of BYTES (-z), overlapping"},
	};

	print_usage(f, "(-s SECTIONS | -t TABLES -z BYTES) FILE", USAGE_OPTIONS(opts), "");
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

/* badelf's own options into self, a struct options. */
static int parse_option(int opt, const char *arg, void *self)
{
	struct options *o = self;

	if (opt == 's')
		return parse_number(opt, arg, 1, 0xffffffffL, &o->sections);
	if (opt == 't')
		return parse_number(opt, arg, 1, 0xfff0L, &o->tables);
	if (opt == 'z')
		return parse_number(opt, arg, 1, 1L << 40, &o->bytes);
	return -ENOENT;
}

/* 0, or 1 after -h, or -EINVAL after a usage error was reported. */
static int parse_options(int argc, char **argv, struct options *o)
{
	int err = parse_workload_options(argc, argv, "s:t:z:h", &o->common, parse_option, o);

	if (!err && (optind != argc - 1 || !o->sections == !o->tables || !o->tables != !o->bytes))
		err = usage_error("give -s, or -t with -z, and one FILE");
	return err;
}

int main(int argc, char **argv)
{
	struct options o = {0};
	int fd, err = parse_options(argc, argv, &o);

	if (err)
		return err > 0 ? 0 : EXIT_USAGE;
	fd = open(argv[optind], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return runtime_error("open", argv[optind], -errno);
	err = hostile_elf_head(fd, (unsigned long long)(o.sections ? o.sections : o.tables + 2), 1);
	if (!err && o.sections)
		err =
		    ftruncate(fd, LOAD_SIZE + o.sections * (off_t)sizeof(Elf64_Shdr)) ? -errno : 0;
	else if (!err)
		err = put_tables(fd, o.tables, o.bytes);
	close(fd);
	return err ? runtime_error("write", argv[optind], err) : 0;
}
