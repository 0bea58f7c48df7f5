// SPDX-License-Identifier: GPL-2.0
/*
 * export__write_atomic() in a temp directory: it writes, it replaces, it refuses
 * a symlink planted at its temp path, and a full disk (a tiny tmpfs, when root
 * can mount one) leaves the old file whole. No temp file is ever left behind.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "export.h"

static char dir[64];

static void emit_str(FILE *f, const void *arg)
{
	fputs(arg, f);
}

/* 256 KiB: more than the tiny tmpfs holds. */
static void emit_big(FILE *f, const void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 4096; i++)
		fprintf(f, "drainstat_padding{i=\"%04d\"} %050d\n", i, 0);
}

static const char *in_dir(const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", dir, name);
	return buf;
}

static int read_str(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void test_export_writes(void)
{
	char path[128], buf[64];
	struct stat st;
	mode_t old = umask(077);

	CHECK(export__write_atomic(in_dir("a.prom", path, sizeof(path)), emit_str, "a 1\n") == 0);
	umask(old);
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "a 1\n");
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644);
	CHECK(count_entries(dir) == 1);
	unlink(path);
}

/* A reader holding the old file keeps reading it whole; the path has the new one. */
static void test_export_replaces(void)
{
	char path[128], buf[64];
	FILE *reader;

	in_dir("b.prom", path, sizeof(path));
	CHECK(export__write_atomic(path, emit_str, "old 1\n") == 0);
	reader = fopen(path, "r");
	CHECK(reader != NULL);
	CHECK(export__write_atomic(path, emit_str, "new 2\n") == 0);
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "new 2\n");
	if (reader) {
		CHECK(fgets(buf, sizeof(buf), reader) != NULL);
		CHECK_STR(buf, "old 1\n");
		fclose(reader);
	}
	CHECK(count_entries(dir) == 1);
	unlink(path);
}

static void test_export_symlink_at_temp(void)
{
	char path[128], victim[128], tmp[128], buf[64];

	in_dir("c.prom", path, sizeof(path));
	in_dir("victim", victim, sizeof(victim));
	snprintf(tmp, sizeof(tmp), "%s/.c.prom.tmp.%d", dir, (int)getpid());
	CHECK(export__write_atomic(path, emit_str, "old 1\n") == 0);
	CHECK(export__write_atomic(victim, emit_str, "keep\n") == 0);
	CHECK(symlink(victim, tmp) == 0);
	CHECK(export__write_atomic(path, emit_str, "evil 1\n") == -EEXIST);
	CHECK(read_str(victim, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "keep\n");
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "old 1\n");
	CHECK(unlink(tmp) == 0); /* still there: not the writer's to remove */
	unlink(victim);
	unlink(path);
}

/* What a killed writer left is removed; nothing that might be someone else's. */
static void test_export_remove_stale(void)
{
	char path[128], dead[160], live[160], link[160], other[160];
	FILE *f;

	in_dir("s.prom", path, sizeof(path));
	snprintf(dead, sizeof(dead), "%s/.s.prom.tmp.2147483646", dir); /* past pid_max */
	snprintf(live, sizeof(live), "%s/.s.prom.tmp.%d", dir, (int)getppid());
	snprintf(link, sizeof(link), "%s/.s.prom.tmp.2147483645", dir);
	snprintf(other, sizeof(other), "%s/.s.prom.tmp.12x", dir);
	f = fopen(dead, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	f = fopen(live, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	f = fopen(other, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	CHECK(symlink("/etc/passwd", link) == 0);
	CHECK(export__remove_stale(path) == 1);
	CHECK(access(dead, F_OK) != 0);
	CHECK(access(live, F_OK) == 0);
	CHECK(access(other, F_OK) == 0);
	CHECK(unlink(link) == 0);
	unlink(live);
	unlink(other);
	CHECK(count_entries(dir) == 0);
}

static void test_export_missing_dir(void)
{
	char path[128];

	CHECK(export__write_atomic(in_dir("nope/d.prom", path, sizeof(path)), emit_str, "x 1\n") ==
	      -ENOENT);
	CHECK(export__write_atomic("", emit_str, "x 1\n") == -EISDIR);
	CHECK(count_entries(dir) == 0);
}

static void test_export_enospc(void)
{
	char small[128], path[160], buf[64];

	in_dir("small", small, sizeof(small));
	snprintf(path, sizeof(path), "%s/e.prom", small);
	CHECK(export__write_atomic(path, emit_str, "old 1\n") == 0);
	CHECK(export__write_atomic(path, emit_big, NULL) == -ENOSPC);
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "old 1\n");
	CHECK(count_entries(small) == 1);
}

/* 0 when a 16 KiB tmpfs is mounted at dir/small. */
static int mount_small(void)
{
	char small[128];

	in_dir("small", small, sizeof(small));
	if (mkdir(small, 0755))
		return -errno;
	if (geteuid() || mount("tmpfs", small, "tmpfs", 0, "size=16k")) {
		rmdir(small);
		return -EPERM;
	}
	return 0;
}

static void umount_small(void)
{
	char small[128];

	in_dir("small", small, sizeof(small));
	umount2(small, MNT_DETACH);
	rmdir(small);
}

int main(void)
{
	int failed = 0;

	snprintf(dir, sizeof(dir), "/tmp/drainstat-export.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_export_writes);
	RUN(test_export_replaces);
	RUN(test_export_symlink_at_temp);
	RUN(test_export_remove_stale);
	RUN(test_export_missing_dir);
	if (!mount_small()) {
		RUN(test_export_enospc);
		umount_small();
	} else {
		printf("SKIP test_export_enospc: needs root to mount a tiny tmpfs\n");
	}
	rmdir(dir);
	return failed ? 1 : 0;
}
