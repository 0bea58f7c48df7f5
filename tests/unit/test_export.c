// SPDX-License-Identifier: GPL-2.0
/*
 * export__write() in a temp directory: it writes, it replaces, symlinks planted
 * at any temp name one can guess change nothing, it replaces nothing but a
 * regular file, it is a file's one writer (its lock file, which no reader of
 * the export takes part in and no planted file passes for), it never follows
 * its directory to a new place, and a full disk (a tiny tmpfs, when root can
 * mount one) leaves the old file whole. No temp file is ever left behind; the
 * lock files stay, by design.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

/* Removes the lock file of x.prom in sub, to remove sub. */
static int unlink_lock_in(const char *sub)
{
	char lock[160];

	snprintf(lock, sizeof(lock), "%s/.x.prom.lock", sub);
	return unlink(lock);
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

static bool is_lock(const char *name)
{
	size_t n = strlen(name);

	return name[0] == '.' && n > 5 && !strcmp(name + n - 5, ".lock");
}

/* The entries in path but the lock files ".<name>.lock", which stay. */
static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !is_lock(e->d_name);
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
	CHECK(lstat(in_dir(".a.prom.lock", path, sizeof(path)), &st) == 0);
	CHECK(S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600 && st.st_size == 0);
	unlink(in_dir("a.prom", path, sizeof(path)));
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

/*
 * Symlinks at every temp name one can guess (the pid's, old and new style):
 * the write goes on under a name no one can guess, the links stay untouched.
 */
static void test_export_symlink_at_temp(void)
{
	char path[128], victim[128], tmp[3][160], buf[64];
	struct stat st;
	int i;

	in_dir("c.prom", path, sizeof(path));
	in_dir("victim", victim, sizeof(victim));
	snprintf(tmp[0], sizeof(tmp[0]), "%s/.c.prom.tmp.%d", dir, (int)getpid());
	snprintf(tmp[1], sizeof(tmp[1]), "%s/.c.prom.tmp.%d.0000000000000000", dir, (int)getpid());
	snprintf(tmp[2], sizeof(tmp[2]), "%s/.c.prom.tmp.%d.ffffffffffffffff", dir, (int)getpid());
	CHECK(write_once(path, P "old 1\n") == 0);
	CHECK(write_once(victim, P "keep\n") == 0);
	for (i = 0; i < 3; i++)
		CHECK(symlink(victim, tmp[i]) == 0);
	CHECK(write_once(path, P "new 1\n") == 0);
	CHECK(read_str(victim, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "keep\n");
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "new 1\n");
	for (i = 0; i < 3; i++) /* still there: not the writer's to remove */
		CHECK(lstat(tmp[i], &st) == 0 && S_ISLNK(st.st_mode) && unlink(tmp[i]) == 0);
	unlink(victim);
	unlink(path);
	CHECK(count_entries(dir) == 0);
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

static void touch(const char *path)
{
	CHECK(close(open(path, O_CREAT | O_WRONLY, 0644)) == 0);
}

/*
 * What a killed writer left is removed (a pid that no longer runs, old and new
 * names); nothing that might be someone else's, nor the lock file.
 */
static void test_export_remove_stale(void)
{
	char path[128], dead[160], dead_old[160], live[160], sym[160], other[160], linked[160],
	    twice[160], lock[160];
	struct stat st;

	in_dir("s.prom", path, sizeof(path));
	/* past pid_max */
	snprintf(dead, sizeof(dead), "%s/.s.prom.tmp.2147483646.0123456789abcdef", dir);
	snprintf(dead_old, sizeof(dead_old), "%s/.s.prom.tmp.2147483644", dir);
	snprintf(live, sizeof(live), "%s/.s.prom.tmp.%d.0123456789abcdef", dir, (int)getppid());
	snprintf(sym, sizeof(sym), "%s/.s.prom.tmp.2147483645.0123456789abcdef", dir);
	snprintf(other, sizeof(other), "%s/.s.prom.tmp.12.x123456789abcdef", dir);
	snprintf(linked, sizeof(linked), "%s/.s.prom.tmp.2147483643.0123456789abcdef", dir);
	snprintf(twice, sizeof(twice), "%s/twice", dir);
	touch(dead);
	touch(dead_old);
	touch(live);
	touch(other);
	touch(linked);
	CHECK(link(linked, twice) == 0); /* a hard link: maybe someone else's name for it */
	CHECK(symlink("/etc/passwd", sym) == 0);
	CHECK(write_once(path, P "s 1\n") == 0);
	in_dir(".s.prom.lock", lock, sizeof(lock));
	CHECK(remove_stale(path) == 2);
	CHECK(access(dead, F_OK) != 0 && access(dead_old, F_OK) != 0);
	CHECK(access(live, F_OK) == 0 && access(other, F_OK) == 0 && access(linked, F_OK) == 0);
	CHECK(lstat(lock, &st) == 0 && S_ISREG(st.st_mode));
	CHECK(unlink(sym) == 0);
	unlink(live);
	unlink(other);
	unlink(linked);
	unlink(twice);
	unlink(path);
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
	CHECK(export__why(e)->holder == child); /* from /proc/locks */
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

/* A reader's lock on the export (its mode 0644 lets anyone take one) stops no writer. */
static void test_export_reader_lock(void)
{
	struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
	char path[128], buf[64];
	int fd;

	in_dir("r.prom", path, sizeof(path));
	CHECK(write_once(path, P "old 1\n") == 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0 && flock(fd, LOCK_SH) == 0);
	CHECK(write_once(path, P "new 2\n") == 0);
	CHECK(read_str(path, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "new 2\n");
	close(fd);
	unlink(path);
}

/* write_once() of path, which must fail -EPERM for a lock file found of type found. */
static void check_planted_lock(const char *path, mode_t found)
{
	struct export_why why;
	struct export *e;

	CHECK(export__open(path, &e, &why) == 0);
	CHECK(export__write(e, emit_str, P "x 1\n") == -EPERM);
	CHECK(export__why(e)->lock_planted && export__why(e)->found == found);
	export__free(e);
}

/*
 * A lock file that is not one drainstat made (a symlink, a FIFO, a hard link)
 * is refused, never followed nor written, and nothing hangs.
 */
static void test_export_planted_lock(void)
{
	char path[128], lock[128], victim[128], buf[64];
	struct stat st;

	in_dir("p.prom", path, sizeof(path));
	in_dir(".p.prom.lock", lock, sizeof(lock));
	in_dir("victim", victim, sizeof(victim));
	CHECK(write_once(victim, P "keep\n") == 0);
	CHECK(symlink(victim, lock) == 0);
	check_planted_lock(path, S_IFLNK);
	CHECK(read_str(victim, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "keep\n");
	CHECK(lstat(lock, &st) == 0 && S_ISLNK(st.st_mode) && unlink(lock) == 0);
	CHECK(mkfifo(lock, 0600) == 0);
	check_planted_lock(path, S_IFIFO);
	CHECK(lstat(lock, &st) == 0 && S_ISFIFO(st.st_mode) && unlink(lock) == 0);
	CHECK(link(victim, lock) == 0);
	check_planted_lock(path, S_IFREG);
	CHECK(read_str(victim, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, P "keep\n");
	CHECK(unlink(lock) == 0);
	CHECK(access(path, F_OK) != 0);
	CHECK(write_once(path, P "x 1\n") == 0);
	unlink(path);
	unlink(victim);
	CHECK(count_entries(dir) == 0);
}

/*
 * The directory, moved away and a symlink put in its place, or removed, is not
 * followed: -ESTALE, and nothing is written where the symlink points.
 */
static void test_export_dir_moved(void)
{
	char sub[128], moved[128], elsewhere[128], path[160];
	struct export_why why;
	struct export *e;

	in_dir("sub", sub, sizeof(sub));
	in_dir("moved", moved, sizeof(moved));
	in_dir("elsewhere", elsewhere, sizeof(elsewhere));
	snprintf(path, sizeof(path), "%s/x.prom", sub);
	CHECK(mkdir(sub, 0755) == 0 && mkdir(elsewhere, 0700) == 0);
	CHECK(export__open(path, &e, &why) == 0);
	CHECK(export__write(e, emit_str, P "x 1\n") == 0);
	CHECK(rename(sub, moved) == 0 && symlink(elsewhere, sub) == 0);
	CHECK(export__write(e, emit_str, P "x 2\n") == -ESTALE);
	CHECK(export__why(e)->dir_moved);
	CHECK(count_entries(elsewhere) == 0);
	export__free(e);
	/* a symlink as the directory's last component is refused at the start */
	CHECK(export__open(path, &e, &why) == -ELOOP && why.dir_link);
	CHECK(unlink(sub) == 0 && rename(moved, sub) == 0);
	CHECK(export__open(path, &e, &why) == 0);
	CHECK(export__write(e, emit_str, P "x 3\n") == 0);
	unlink(path);
	CHECK(unlink_lock_in(sub) == 0 && rmdir(sub) == 0);
	CHECK(export__write(e, emit_str, P "x 4\n") == -ESTALE);
	CHECK(!export__why(e)->dir_moved);
	export__free(e);
	rmdir(elsewhere);
	rmdir(moved);
	CHECK(count_entries(dir) == 0);
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
	/* ".nnn...n.tmp.4194304.<16 hex>" (past PID_MAX_LIMIT), 255 bytes in all */
	snprintf(stale, sizeof(stale), "%s/.%.*s.tmp.4194304.0123456789abcdef", dir, 255 - 30,
		 name);
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
	RUN(test_export_reader_lock);
	RUN(test_export_planted_lock);
	RUN(test_export_dir_moved);
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
