// SPDX-License-Identifier: GPL-2.0
/* User frames: /proc/PID/maps parsing and function names from ELF symbols (libelf). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <dirent.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <libelf.h>
#include <zlib.h>

#include "check.h"
#include "elfsyms.h"
#include "escape.h"
#include "umaps.h"

/* A test's budget: an event's work, no deadline (the same on every machine). */
static struct umaps_budget *budget(void)
{
	static struct umaps_budget b;

	b = (struct umaps_budget){.work = UMAPS_EVENT_WORK};
	return &b;
}

/* Not inlined, so that its address is its own. */
__attribute__((noinline)) int umaps_test_marker(int x)
{
	return x * 3 + 1;
}

static void test_own_function_named(void)
{
	struct umaps *um = NULL;
	char buf[256];

	CHECK(umaps__load(getpid(), NULL, &um) == 0);
	umaps__describe(um, (__u64)(unsigned long)umaps_test_marker + 4, buf, sizeof(buf),
			budget());
	CHECK_STR(buf, "umaps_test_marker+0x4 (test_umaps)");
	/* a libc function through .dynsym */
	umaps__describe(um, (__u64)(unsigned long)getpid, buf, sizeof(buf), budget());
	CHECK(!strncmp(buf, "getpid+0x0 (libc.so.6)", 22) || strstr(buf, "(libc.so.6)"));
	umaps__describe(um, 0x10, buf, sizeof(buf), budget());
	CHECK_STR(buf, "0x10");
	umaps__free(um);
}

static void test_maps_fixture(void)
{
	char path[] = "/tmp/umaps-test.XXXXXX", buf[256];
	struct umaps *um = NULL;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fputs("55d0c5a00000-55d0c5a02000 r-xp 00002000 fd:01 123 /nonexistent/bin/app\n"
	      "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
	      "7fff00000000-7fff00021000 rw-p 00000000 00:00 0 [stack]\n"
	      "garbage line\n",
	      f);
	fclose(f);
	CHECK(umaps__load(0, path, &um) == 0);
	/* an unreadable file: the offset in it */
	CHECK_STR(umaps__describe(um, 0x55d0c5a00010, buf, sizeof(buf), budget()), "app+0x2010");
	CHECK_STR(umaps__describe(um, 0x7f0000000010, buf, sizeof(buf), budget()),
		  "0x7f0000000010");
	CHECK_STR(umaps__describe(um, 0x7fff00000010, buf, sizeof(buf), budget()),
		  "0x7fff00000010");
	umaps__free(um);
	unlink(path);
	CHECK(umaps__load(0, "/nonexistent", &um) < 0);
}

/*
 * A process's owner chooses how many mappings it has, and their paths: past
 * 16384 mappings, or 4 MiB of paths, the rest are not kept (a frame there is
 * its address).
 */
static void test_maps_bounded(void)
{
	char path[] = "/tmp/umaps-test.XXXXXX", buf[8192];
	struct umaps *um = NULL;
	int fd = mkstemp(path), i;
	FILE *f = fdopen(fd, "w");

	for (i = 0; i < 20000; i++)
		fprintf(f, "%x000-%x000 r-xp 00000000 fd:01 %d /m/%d\n", 0x10000 + i, 0x10001 + i,
			i, i);
	fclose(f);
	CHECK(umaps__load(0, path, &um) == 0);
	CHECK_STR(umaps__describe(um, 0x10000010, buf, sizeof(buf), budget()), "0+0x10");
	CHECK_STR(umaps__describe(um, 0x13fff010, buf, sizeof(buf), budget()), "16383+0x10");
	CHECK_STR(umaps__describe(um, 0x14000010, buf, sizeof(buf), budget()), "0x14000010");
	umaps__free(um);
	/* long paths: 4 MiB of them is some 1000 of PATH_MAX */
	f = fopen(path, "w");
	for (i = 0; i < 2000; i++)
		fprintf(f, "%x000-%x000 r-xp 00000000 fd:01 %d /%04095d\n", 0x10000 + i,
			0x10001 + i, i, i);
	fclose(f);
	CHECK(umaps__load(0, path, &um) == 0);
	CHECK(strstr(umaps__describe(um, 0x10000010, buf, sizeof(buf), budget()), "+0x10") != NULL);
	CHECK_STR(umaps__describe(um, 0x107d0010, buf, sizeof(buf), budget()), "0x107d0010");
	umaps__free(um);
	unlink(path);
}

/* A hostile file name reaches the -T log only through escape__text(): inert there. */
static void test_hostile_file_name(void)
{
	char path[] = "/tmp/umaps-test.XXXXXX", buf[256], shown[ESCAPE_SIZE(256)];
	struct umaps *um = NULL;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	/* the kernel writes a newline in a path as \012 (seq_path) */
	fputs("55d0c5a00000-55d0c5a02000 r-xp 00000000 fd:01 123 /tmp/ev\x1b[31m\"\\\xff\\012\n",
	      f);
	fclose(f);
	CHECK(umaps__load(0, path, &um) == 0);
	umaps__describe(um, 0x55d0c5a00010, buf, sizeof(buf), budget());
	CHECK_STR(escape__text(buf, sizeof(buf), shown, sizeof(shown)),
		  "ev\\x1b[31m\"\\x5c\\xff\\x0a+0x10");
	umaps__free(um);
	unlink(path);
}

/* Where this test's own code lies in its file: the offset of umaps_test_marker. */
static __u64 marker_file_offset(void)
{
	unsigned long long start, end, offset,
	    at = (unsigned long long)(unsigned long)umaps_test_marker;
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	__u64 found = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %*s %llx", &start, &end, &offset) == 3 && at >= start &&
		    at < end)
			found = at - start + offset;
	if (f)
		fclose(f);
	CHECK(found != 0);
	return found;
}

/* A copy of this test's own file at path, mapped whole; *len gets its length. */
static void *map_copy(const char *path, size_t *len)
{
	int in = open("/proc/self/exe", O_RDONLY), out;
	void *base = MAP_FAILED;
	char buf[65536];
	ssize_t n;

	out = open(path, O_WRONLY | O_CREAT | O_EXCL, 0700);
	CHECK(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		CHECK(write(out, buf, (size_t)n) == n);
	close(in);
	close(out);
	out = open(path, O_RDONLY);
	*len = (size_t)lseek(out, 0, SEEK_END);
	if (out >= 0 && *len)
		base = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, out, 0);
	CHECK(base != MAP_FAILED);
	close(out);
	return base;
}

/* umaps_test_marker+0x4 in the copy mapped at base, as the -T log shows it. */
static const char *describe_marker(const char *base, __u64 file_off, char shown[ESCAPE_SIZE(256)])
{
	struct umaps *um = NULL;
	char buf[256];

	CHECK(umaps__load(getpid(), NULL, &um) == 0);
	umaps__describe(um, (__u64)(unsigned long)(base + file_off + 4), buf, sizeof(buf),
			budget());
	umaps__free(um);
	return escape__text(buf, sizeof(buf), shown, ESCAPE_SIZE(256));
}

/*
 * The kernel writes a newline in a mapped file's name as \012, and a backslash
 * as itself: a file named with a newline is found under its real name, and one
 * named with a real "\012" too, even beside the other.
 */
static void test_newline_in_file_name(void)
{
	char dir[] = "/tmp/umaps-test.XXXXXX", nl[256], lit[256], shown[ESCAPE_SIZE(256)];
	__u64 file_off = marker_file_offset();
	size_t nl_len, lit_len;
	char *nl_base, *lit_base;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(nl, sizeof(nl), "%s/ev\nil", dir);
	snprintf(lit, sizeof(lit), "%s/ev\\012il", dir);
	nl_base = map_copy(nl, &nl_len);
	CHECK_STR(describe_marker(nl_base, file_off, shown), "umaps_test_marker+0x4 (ev\\x0ail)");
	lit_base = map_copy(lit, &lit_len);
	CHECK_STR(describe_marker(lit_base, file_off, shown),
		  "umaps_test_marker+0x4 (ev\\x5c012il)");
	/* both names exist now: each mapping still gets its own file */
	CHECK_STR(describe_marker(nl_base, file_off, shown), "umaps_test_marker+0x4 (ev\\x0ail)");
	munmap(nl_base, nl_len);
	munmap(lit_base, lit_len);
	unlink(nl);
	unlink(lit);
	rmdir(dir);
}

/* The fds this process has open. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/*
 * Frames in more files than are kept open: each still named, the files
 * closed least used first and opened again, never more than UMAPS_FDS_MAX
 * open (the run's fd budget counts that many).
 */
static void test_open_files_bounded(void)
{
	const struct {
		unsigned long addr;
		const char *name;
	} frames[] = {
	    {(unsigned long)umaps_test_marker, "umaps_test_marker+0x0 (test_umaps)"},
	    {(unsigned long)getpid, "(libc.so.6)"},
	    {(unsigned long)elf_version, "elf_version+0x0 (libelf"},
	    {(unsigned long)libbpf_major_version, "libbpf_major_version+0x0 (libbpf.so"},
	    {(unsigned long)zlibVersion, "zlibVersion+0x0 (libz.so"},
	};
	struct umaps *um = NULL;
	int before = open_fds(), most = 0, round, n;
	size_t i;
	char buf[256];

	CHECK(umaps__load(getpid(), NULL, &um) == 0);
	for (round = 0; round < 2; round++)
		for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
			umaps__describe(um, frames[i].addr, buf, sizeof(buf), budget());
			CHECK(strstr(buf, frames[i].name) != NULL);
			n = open_fds() - before;
			most = n > most ? n : most;
		}
	CHECK(most == UMAPS_FDS_MAX);
	umaps__free(um);
	CHECK(open_fds() == before);
}

static void test_elfsyms_errors(void)
{
	struct elfsyms *es = NULL;
	char name[64];
	__u64 off;

	struct elfsyms_budget b = {.bytes = UMAPS_FILE_BYTES, .work = UMAPS_FRAME_WORK};

	CHECK(elfsyms__open(open("/proc/self/status", O_RDONLY), UMAPS_FILE_BYTES, &es) == -EINVAL);
	CHECK(elfsyms__open(open("/dev/null", O_RDONLY), UMAPS_FILE_BYTES, &es) == -EINVAL);
	CHECK(elfsyms__open(open("/proc/self/exe", O_RDONLY), UMAPS_FILE_BYTES, &es) == 0);
	CHECK(elfsyms__lookup(es, 0x7fffffffffffULL, name, sizeof(name), &off, &b) == -ENOENT);
	elfsyms__free(es);
}

int main(void)
{
	int failed = 0;

	RUN(test_own_function_named);
	RUN(test_maps_fixture);
	RUN(test_maps_bounded);
	RUN(test_hostile_file_name);
	RUN(test_newline_in_file_name);
	RUN(test_open_files_bounded);
	RUN(test_elfsyms_errors);
	return failed ? 1 : umaps_test_marker(0) - 1;
}
