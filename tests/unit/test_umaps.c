// SPDX-License-Identifier: GPL-2.0
/* User frames: /proc/PID/maps parsing and function names from ELF symbols (libelf). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "elfsyms.h"
#include "escape.h"
#include "umaps.h"

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
	umaps__describe(um, (__u64)(unsigned long)umaps_test_marker + 4, buf, sizeof(buf));
	CHECK_STR(buf, "umaps_test_marker+0x4 (test_umaps)");
	/* a libc function through .dynsym */
	umaps__describe(um, (__u64)(unsigned long)getpid, buf, sizeof(buf));
	CHECK(!strncmp(buf, "getpid+0x0 (libc.so.6)", 22) || strstr(buf, "(libc.so.6)"));
	umaps__describe(um, 0x10, buf, sizeof(buf));
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
	CHECK_STR(umaps__describe(um, 0x55d0c5a00010, buf, sizeof(buf)), "app+0x2010");
	CHECK_STR(umaps__describe(um, 0x7f0000000010, buf, sizeof(buf)), "0x7f0000000010");
	CHECK_STR(umaps__describe(um, 0x7fff00000010, buf, sizeof(buf)), "0x7fff00000010");
	umaps__free(um);
	unlink(path);
	CHECK(umaps__load(0, "/nonexistent", &um) < 0);
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
	umaps__describe(um, 0x55d0c5a00010, buf, sizeof(buf));
	CHECK_STR(escape__text(buf, sizeof(buf), shown, sizeof(shown)),
		  "ev\\x1b[31m\"\\x5c\\xff\\x5c012+0x10");
	umaps__free(um);
	unlink(path);
}

static void test_elfsyms_errors(void)
{
	char name[64];
	__u64 off;

	CHECK(elfsyms__lookup("/nonexistent", 0, name, sizeof(name), &off) < 0);
	CHECK(elfsyms__lookup("/proc/self/status", 0, name, sizeof(name), &off) < 0);
}

int main(void)
{
	int failed = 0;

	RUN(test_own_function_named);
	RUN(test_maps_fixture);
	RUN(test_hostile_file_name);
	RUN(test_elfsyms_errors);
	return failed ? 1 : umaps_test_marker(0) - 1;
}
