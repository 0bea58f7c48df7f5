// SPDX-License-Identifier: GPL-2.0
/*
 * export__write() in a temp directory: it writes, it replaces, it refuses a
 * symlink planted at its temp path, it replaces nothing but a regular file, it
 * is a file's one writer, and a full disk (a tiny tmpfs, when root can mount
 * one) leaves the old file whole. No temp file is ever left behind.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "export.h"

static char dir[64];

/* How every export starts: export__write() replaces only a file that does (or an empty one). */
#define P "# HELP drainstat_t t\n"

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

/* One export of text to path, as a writer that opens, writes once and goes. */
static int write_once(const char *path, const char *text)
{
	struct export_why why;
	struct export *e;
	int err = export__open(path, &e, &why);

	if (err)
		return err;
	err = export__write(e, emit_str, text);
	export__free(e);
	return err;
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

	CHECK(write_once(in_dir("a.prom", path, sizeof(path)), P "a 1\n") == 0);
	umask(old);
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "a 1\n");
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
	CHECK(write_once(path, P "old 1\n") == 0);
	reader = fopen(path, "r");
	CHECK(reader != NULL);
	CHECK(write_once(path, P "new 2\n") == 0);
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "new 2\n");
	if (reader) {
		CHECK(fgets(buf, sizeof(buf), reader) != NULL);
		CHECK_STR(buf, P);
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
	CHECK(write_once(path, P "old 1\n") == 0);
	CHECK(write_once(victim, P "keep\n") == 0);
	CHECK(symlink(victim, tmp) == 0);
	CHECK(write_once(path, P "evil 1\n") == -EEXIST);
	CHECK(read_str(victim, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "keep\n");
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "old 1\n");
	CHECK(unlink(tmp) == 0); /* still there: not the writer's to remove */
	unlink(victim);
	unlink(path);
}

static int remove_stale(const char *path)
{
	struct export_why why;
	struct export *e;
	int n;

	if (export__open(path, &e, &why))
		return -1;
	n = export__remove_stale(e);
	export__free(e);
	return n;
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
	CHECK(remove_stale(path) == 1);
	CHECK(access(dead, F_OK) != 0);
	CHECK(access(live, F_OK) == 0);
	CHECK(access(other, F_OK) == 0);
	CHECK(unlink(link) == 0);
	unlink(live);
	unlink(other);
	CHECK(count_entries(dir) == 0);
}

/* Nothing but a regular file is ever replaced: what is there stays, and why says what it is. */
static void test_export_not_regular(void)
{
	char path[128], victim[128], buf[64];
	struct export_why why;
	struct export *e;
	struct stat st;

	in_dir("victim", victim, sizeof(victim));
	CHECK(write_once(victim, P "keep\n") == 0);
	CHECK(symlink(victim, in_dir("l.prom", path, sizeof(path))) == 0);
	CHECK(export__open(path, &e, &why) == 0);
	CHECK(export__write(e, emit_str, P "x 1\n") == -ELOOP);
	CHECK(export__why(e)->found == S_IFLNK);
	export__free(e);
	CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(read_str(victim, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "keep\n");
	unlink(path);
	CHECK(mkfifo(in_dir("f.prom", path, sizeof(path)), 0600) == 0);
	CHECK(export__open(path, &e, &why) == 0);
	CHECK(export__write(e, emit_str, P "x 1\n") == -EINVAL);
	CHECK(export__why(e)->found == S_IFIFO);
	export__free(e);
	CHECK(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode));
	unlink(path);
	CHECK(mkdir(in_dir("d.prom", path, sizeof(path)), 0700) == 0);
	CHECK(write_once(path, P "x 1\n") == -EISDIR);
	rmdir(path);
	CHECK(write_once("/dev/null", P "x 1\n") == -EINVAL);
	CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
	CHECK(write_once(".", P "x 1\n") == -EISDIR);
	CHECK(export__open("/proc/self/status", &e, &why) == -EOPNOTSUPP);
	CHECK_STR(why.fs, "procfs");
	unlink(victim);
	CHECK(count_entries(dir) == 0);
}

/*
 * One writer per file: a second one gets -EBUSY and the first's pid while the
 * first runs, and the file once the first is gone.
 */
static void test_export_one_writer(void)
{
	char path[128], buf[64], go;
	int ready[2], done[2];
	struct export_why why;
	struct export *e;
	pid_t child;

	in_dir("w.prom", path, sizeof(path));
	CHECK(pipe(ready) == 0 && pipe(done) == 0);
	child = fork();
	if (child == 0) {
		int err = export__open(path, &e, &why);

		err = err ? err : export__write(e, emit_str, P "first 1\n");
		if (write(ready[1], "r", 1) != 1 || read(done[0], &go, 1) != 1)
			_exit(2);
		export__free(e);
		_exit(err ? 1 : 0);
	}
	CHECK(read(ready[0], &go, 1) == 1);
	CHECK(export__open(path, &e, &why) == 0);
	CHECK(export__write(e, emit_str, P "second 2\n") == -EBUSY);
	CHECK(export__why(e)->holder == child);
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "first 1\n");
	CHECK(write(done[1], "d", 1) == 1);
	CHECK(waitpid(child, NULL, 0) == child);
	CHECK(export__write(e, emit_str, P "second 2\n") == 0);
	CHECK(export__write(e, emit_str, P "second 3\n") == 0);
	export__free(e);
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "second 3\n");
	close(ready[0]);
	close(ready[1]);
	close(done[0]);
	close(done[1]);
	unlink(path);
}

/* A legal 255-byte name: its temp name is cut to fit, and it is its own. */
static void test_export_long_name(void)
{
	char name[256], path[400], stale[400], buf[64];

	memset(name, 'n', 255);
	name[255] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK(write_once(path, P "long 1\n") == 0);
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "long 1\n");
	/* ".nnn...n.tmp.4194304" (past PID_MAX_LIMIT), 255 bytes in all */
	snprintf(stale, sizeof(stale), "%s/.%.*s.tmp.4194304", dir, 255 - 13, name);
	CHECK(close(open(stale, O_CREAT | O_WRONLY, 0644)) == 0);
	CHECK(remove_stale(path) == 1);
	unlink(path);
	CHECK(count_entries(dir) == 0);
}

/* A file that no drainstat wrote stays; an empty one is taken. */
static void test_export_foreign_file(void)
{
	char path[128], buf[64];
	struct export_why why;
	struct export *e;
	FILE *f;

	in_dir("passwd", path, sizeof(path));
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("root:x:0:0::/root:/bin/sh\n", f);
		fclose(f);
	}
	CHECK(export__open(path, &e, &why) == 0);
	CHECK(export__write(e, emit_str, P "x 1\n") == -EEXIST);
	CHECK(export__why(e)->foreign);
	export__free(e);
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "root:x:0:0::/root:/bin/sh\n");
	CHECK(truncate(path, 0) == 0);
	CHECK(write_once(path, P "x 1\n") == 0);
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "x 1\n");
	unlink(path);
	CHECK(count_entries(dir) == 0);
}

static void test_export_missing_dir(void)
{
	char path[128];

	CHECK(write_once(in_dir("nope/d.prom", path, sizeof(path)), P "x 1\n") == -ENOENT);
	CHECK(write_once("", P "x 1\n") == -EISDIR);
	CHECK(count_entries(dir) == 0);
}

static void test_export_enospc(void)
{
	char small[128], path[160], buf[64];

	in_dir("small", small, sizeof(small));
	snprintf(path, sizeof(path), "%s/e.prom", small);
	CHECK(write_once(path, P "old 1\n") == 0);
	{
		struct export_why why;
		struct export *e;

		CHECK(export__open(path, &e, &why) == 0);
		CHECK(export__write(e, emit_big, NULL) == -ENOSPC);
		export__free(e);
	}
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "old 1\n");
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
	RUN(test_export_not_regular);
	RUN(test_export_foreign_file);
	RUN(test_export_one_writer);
	RUN(test_export_long_name);
	if (!mount_small()) {
		RUN(test_export_enospc);
		umount_small();
	} else {
		printf("SKIP test_export_enospc: needs root to mount a tiny tmpfs\n");
	}
	rmdir(dir);
	return failed ? 1 : 0;
}
