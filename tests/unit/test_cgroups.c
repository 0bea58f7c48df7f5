// SPDX-License-Identifier: GPL-2.0
/*
 * src/cgroups.c: the cgroup2 mount from mountinfo, ids named by a walk of a
 * fixture tree whose inodes the test reads, the width cut, the stable prefix.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include "check.h"
#include "cgroups.h"
#include "escape.h"
#include "drainstat.h"
#include "model.h"

static char tmp[] = "/tmp/test_cgroups.XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static __u64 inode_of(const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	return lstat(path, &st) ? 0 : (__u64)st.st_ino;
}

static void mkdir_in(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	CHECK(mkdir(path, 0755) == 0);
}

static void test_mount_hybrid(void)
{
	char mi[PATH_MAX], path[PATH_MAX] = "";

	snprintf(mi, sizeof(mi), "%s/mountinfo", tmp);
	write_file(mi, "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		       "30 22 0:26 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755\n"
		       "31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime "
		       "shared:10 - cgroup2 cgroup2 rw,nsdelegate\n"
		       "32 30 0:28 / /sys/fs/cgroup/cpu rw shared:11 - cgroup cgroup rw,cpu\n");
	CHECK(cgroups__find_mount(mi, path, sizeof(path)) == 0);
	CHECK_STR(path, "/sys/fs/cgroup/unified");
}

static void test_mount_v2_escaped(void)
{
	char mi[PATH_MAX], path[PATH_MAX] = "";

	snprintf(mi, sizeof(mi), "%s/mountinfo", tmp);
	/* no optional field; a space in the mount point, as the kernel writes it */
	write_file(mi, "29 22 0:25 / /sys/fs/my\\040cgroup rw,nosuid - cgroup2 cgroup2 rw\n");
	CHECK(cgroups__find_mount(mi, path, sizeof(path)) == 0);
	CHECK_STR(path, "/sys/fs/my cgroup");
	CHECK(cgroups__find_mount(mi, path, 5) == -ENAMETOOLONG);
}

/* cgroup v1 alone: the caller falls back to the comm key */
static void test_mount_v1_only(void)
{
	char mi[PATH_MAX], path[PATH_MAX] = "";

	snprintf(mi, sizeof(mi), "%s/mountinfo", tmp);
	write_file(mi, "30 22 0:26 / /sys/fs/cgroup ro shared:9 - tmpfs tmpfs ro\n"
		       "32 30 0:28 / /sys/fs/cgroup/cpu rw shared:11 - cgroup cgroup rw,cpu\n"
		       "33 30 0:29 / /sys/fs/cgroup/x\\040cgroup2 rw - cgroup cgroup rw\n");
	CHECK(cgroups__find_mount(mi, path, sizeof(path)) == -ENOENT);
	CHECK(cgroups__find_mount("/nonexistent/mountinfo", path, sizeof(path)) == -ENOENT);
}

/*
 * The fixture tree under tmp/root: nested cgroups, files beside them, a
 * symlink to a directory outside (never followed), hostile names.
 */
static void make_tree(void)
{
	char path[PATH_MAX];

	mkdir_in("root");
	mkdir_in("root/system.slice");
	mkdir_in("root/system.slice/backup.service");
	mkdir_in("root/user.slice");
	mkdir_in("root/user.slice/evil\n\x1b[31mname");
	mkdir_in("outside");
	mkdir_in("outside/secret");
	snprintf(path, sizeof(path), "%s/root/cgroup.procs", tmp);
	write_file(path, "1\n");
	snprintf(path, sizeof(path), "%s/outside", tmp);
	CHECK(symlink(path, strcat(strcpy((char[PATH_MAX]){0}, tmp), "/root/user.slice/link")) ==
	      0);
}

/* A resolver of the fixture tree; NULL (a failure) out of memory. */
static struct cgroups *fixture(void)
{
	char root[PATH_MAX];
	struct cgroups *cg;

	snprintf(root, sizeof(root), "%s/root", tmp);
	cg = cgroups__new(root);
	CHECK(cg != NULL);
	return cg;
}

static void test_resolve(void)
{
	struct cgroups *cg = fixture();
	__u64 ids[3];

	if (!cg)
		return;
	ids[0] = inode_of("root/system.slice/backup.service");
	ids[1] = inode_of("root");
	ids[2] = inode_of("root/user.slice/evil\n\x1b[31mname");
	CHECK(cgroups__learn(cg, ids, 3) == 0);
	CHECK(cgroups__walks(cg) == 1);
	CHECK_STR(cgroups__path(cg, ids[0]), "/system.slice/backup.service");
	CHECK_STR(cgroups__path(cg, ids[1]), "/");
	CHECK_STR(cgroups__path(cg, ids[2]), "/user.slice/evil\n\x1b[31mname");
	/* every directory the walk passed is known: no walk for them */
	ids[0] = inode_of("root/system.slice");
	CHECK(cgroups__learn(cg, ids, 1) == 0);
	CHECK(cgroups__walks(cg) == 1);
	CHECK_STR(cgroups__path(cg, ids[0]), "/system.slice");
	/* the symlink is not followed, the files are not cgroups */
	CHECK(cgroups__path(cg, inode_of("outside/secret")) == NULL);
	CHECK(cgroups__path(cg, inode_of("root/user.slice/link")) == NULL);
	CHECK(cgroups__path(cg, inode_of("root/cgroup.procs")) == NULL);
	cgroups__free(cg);
}

/* An id the tree lacks: one walk, then known gone (no walk each report); a removed one keeps its
 * name. */
static void test_gone(void)
{
	struct cgroups *cg = fixture();
	char dir[PATH_MAX];
	__u64 ids[2];

	if (!cg)
		return;
	mkdir_in("root/system.slice/short.service");
	ids[0] = inode_of("root/system.slice/short.service");
	CHECK(cgroups__learn(cg, ids, 1) == 0);
	CHECK_STR(cgroups__path(cg, ids[0]), "/system.slice/short.service");
	snprintf(dir, sizeof(dir), "%s/root/system.slice/short.service", tmp);
	CHECK(rmdir(dir) == 0);
	ids[1] = inode_of("outside/secret"); /* in no walk of root */
	CHECK(cgroups__learn(cg, ids, 2) == 0);
	CHECK(cgroups__walks(cg) == 2);
	CHECK_STR(cgroups__path(cg, ids[0]), "/system.slice/short.service");
	CHECK(cgroups__path(cg, ids[1]) == NULL);
	CHECK(cgroups__learn(cg, ids, 2) == 0);
	CHECK(cgroups__walks(cg) == 2);
	cgroups__free(cg);
}

/*
 * The drains in flight and what runs on their pending CPUs are named whatever
 * keys the sites (here comm alone: the rows stay unnamed); a cgroup gone, by
 * id. Without a resolver (no cgroup v2) none is named.
 */
static void test_name_in_flight(void)
{
	struct model_work works[2] = {{.running = {.known = true}}, {.started = true}};
	struct model_site site = {.cgroup_id = 0};
	struct model_drain md = {.in_flight = works, .nr_in_flight = 2};
	struct model m = {.sites = &site, .nr_sites = 1, .in_flight = &md, .nr_in_flight = 1};
	struct cgroups *cg = fixture();
	char gone[32];

	if (!cg)
		return;
	md.cgroup_id = inode_of("root/system.slice/backup.service");
	works[0].running.cgroup_id = inode_of("root/user.slice/evil\n\x1b[31mname");
	CHECK(model__name_cgroups(&m, cg, NULL) == 0);
	CHECK_STR(md.cgroup, "/system.slice/backup.service");
	CHECK_STR(works[0].running.cgroup, "/user.slice/evil\n\x1b[31mname");
	CHECK(works[1].running.cgroup == NULL);
	CHECK(site.cgroup == NULL);
	md.cgroup_id = inode_of("outside/secret");
	snprintf(gone, sizeof(gone), "cgroup:%llu", (unsigned long long)md.cgroup_id);
	CHECK(model__name_cgroups(&m, cg, NULL) == 0);
	CHECK_STR(md.cgroup, gone);
	md.cgroup = works[0].running.cgroup = NULL;
	CHECK(model__name_cgroups(&m, NULL, NULL) == 0);
	CHECK(md.cgroup == NULL && works[0].running.cgroup == NULL);
	arena__free(&m.arena);
	cgroups__free(cg);
}

/*
 * The kernel as the fake namer has it: ids 100 (a unit), 1 (the root), 200
 * (40 levels deep), 300 (gone), 400 (fails).
 */
static int fake_namer(void *arg, __u64 id, struct cgroup_level *levels, int max)
{
	static const char *const unit[] = {"system.slice", "backup.service"};
	int *asked = arg, i, nr = 0;

	(*asked)++;
	if (id == 300)
		return -ENOENT;
	if (id == 400)
		return -EIO;
	if (id == 100)
		for (nr = 0; nr < 2; nr++)
			levels[nr] = (struct cgroup_level){.id = 90 + nr, .level = nr + 1};
	if (id == 200) /* what drainstat_name_cgroup gives: levels 1-16 and 25-40 */
		for (nr = 0; nr < max; nr++)
			levels[nr] = (struct cgroup_level){
			    .id = 1000 + nr, .level = nr < CGROUP_NAME_HEAD ? nr + 1 : nr + 9};
	for (i = 0; i < nr; i++)
		levels[i].len = (__u32)snprintf(levels[i].name, sizeof(levels[i].name), "%s",
						id == 100 ? unit[i] : (i % 2 ? "b" : "a"));
	return nr;
}

/*
 * Named by the kernel: no walk (the root does not even exist), a path of the
 * levels given, the levels left out of a deep one marked; a cgroup gone is
 * asked once and shown by id; one the kernel failed is asked again only after
 * the retry time.
 */
static void test_kernel_names(void)
{
	struct cgroups *cg = cgroups__new("/nonexistent/cgroup");
	__u64 ids[] = {100, 1, 200, 300, 400};
	int asked = 0;

	CHECK(cg != NULL);
	if (!cg)
		return;
	cgroups__name_by(cg, &(struct cgroups_namer){.name = fake_namer, .arg = &asked});
	cgroups__set_retry(cg, 3600000000000ULL);
	CHECK(cgroups__learn(cg, ids, 5) == 0);
	CHECK(cgroups__walks(cg) == 0 && asked == 5 && cgroups__asked(cg) == 5);
	CHECK_STR(cgroups__path(cg, 100), "/system.slice/backup.service");
	CHECK_STR(cgroups__path(cg, 1), "/");
	CHECK_STR(cgroups__path(cg, 200),
		  "/a/b/a/b/a/b/a/b/a/b/a/b/a/b/a/b//.../a/b/a/b/a/b/a/b/a/b/a/b/a/b/a/b");
	CHECK(cgroups__path(cg, 300) == NULL && cgroups__gone(cg, 300));
	CHECK(cgroups__path(cg, 400) == NULL && !cgroups__gone(cg, 400));
	/* nothing asked again: named, gone, or failed within the retry time */
	CHECK(cgroups__learn(cg, ids, 5) == 0);
	CHECK(asked == 5);
	cgroups__set_retry(cg, 0);
	CHECK(cgroups__learn(cg, ids, 5) == 0);
	CHECK(asked == 6 && cgroups__walks(cg) == 0);
	cgroups__free(cg);
}

/* The parents the kernel kept of cgroups removed: 500 in 501, 501 in 100, 600 in the root (1). */
static int fake_parent(void *arg, __u64 id, __u64 *parent)
{
	(void)arg;
	*parent = id == 500 ? 501 : id == 501 ? 100 : id == 600 ? 1 : 0;
	return *parent ? 0 : -ENOENT;
}

static int fake_namer_gone(void *arg, __u64 id, struct cgroup_level *levels, int max)
{
	return id == 501 || id == 500 || id == 600 || id == 700 ? (++*(int *)arg, -ENOENT)
								: fake_namer(arg, id, levels, max);
}

/*
 * A cgroup gone before it was named: by its nearest ancestor still there, up
 * the parents the kernel kept (--prom-cgroup=unit then puts it under its
 * unit); by id where none is known. Gone either way, and not asked again.
 */
static void test_kernel_names_gone(void)
{
	struct cgroups *cg = cgroups__new("/nonexistent/cgroup");
	__u64 ids[] = {500, 600, 700};
	const char *path;
	int asked = 0;

	CHECK(cg != NULL);
	if (!cg)
		return;
	cgroups__name_by(cg, &(struct cgroups_namer){fake_namer_gone, fake_parent, &asked});
	CHECK(cgroups__learn(cg, ids, 3) == 0);
	path = cgroups__path(cg, 500);
	CHECK_STR(path, "/system.slice/backup.service//cgroup:500");
	CHECK(path && cgroups__unit(path) == strlen("/system.slice/backup.service"));
	CHECK_STR(cgroups__path(cg, 600), "//cgroup:600");
	CHECK(cgroups__path(cg, 700) == NULL);
	CHECK(cgroups__gone(cg, 500) && cgroups__gone(cg, 600) && cgroups__gone(cg, 700));
	CHECK(asked == 6 && cgroups__asked(cg) == 6);
	CHECK(cgroups__learn(cg, ids, 3) == 0);
	CHECK(asked == 6);
	cgroups__free(cg);
}

/*
 * The walk (a kernel that refuses the iterator), cut at its depth bound: the
 * cgroup past it is not named, and not walked for again within the retry
 * time; a path past PATH_MAX is named.
 */
static void test_walk_retry(void)
{
	struct cgroups *cg = fixture();
	char rel[PATH_MAX] = "root/deep", name[256];
	__u64 id, id_long;
	struct stat st;
	int i;

	if (!cg)
		return;
	for (i = 0; i <= CGROUPS_WALK_DEPTH + 1; i++) {
		mkdir_in(rel);
		strcat(rel, "/d");
	}
	rel[strlen(rel) - 2] = '\0';
	id = inode_of(rel);
	CHECK(cgroups__learn(cg, &id, 1) == 0);
	CHECK(cgroups__walks(cg) == 1 && cgroups__path(cg, id) == NULL && !cgroups__gone(cg, id));
	CHECK(cgroups__learn(cg, &id, 1) == 0);
	CHECK(cgroups__walks(cg) == 1);
	cgroups__set_retry(cg, 0);
	CHECK(cgroups__learn(cg, &id, 1) == 0);
	CHECK(cgroups__walks(cg) == 2);
	/* 17 levels of 250 bytes: 4,267 bytes, past PATH_MAX */
	memset(name, 'x', 250);
	name[250] = '\0';
	snprintf(rel, sizeof(rel), "%s/root/long", tmp);
	CHECK(mkdir(rel, 0755) == 0 && chdir(rel) == 0);
	for (i = 0; i < 17; i++)
		CHECK(mkdir(name, 0755) == 0 && chdir(name) == 0);
	CHECK(stat(".", &st) == 0);
	id_long = (__u64)st.st_ino;
	CHECK(chdir("/") == 0);
	CHECK(cgroups__learn(cg, &id_long, 1) == 0);
	CHECK(cgroups__path(cg, id_long) && strlen(cgroups__path(cg, id_long)) == 5 + 17 * 251);
	cgroups__free(cg);
}

static void test_no_root(void)
{
	struct cgroups *cg = cgroups__new("/nonexistent/cgroup");
	__u64 id = 12345;

	CHECK(cg != NULL);
	if (!cg)
		return;
	CHECK(cgroups__learn(cg, &id, 1) == -ENOENT);
	CHECK(cgroups__path(cg, id) == NULL);
	cgroups__free(cg);
}

static const char *shorten(const char *path, int width, int *cols)
{
	static char buf[512];

	return cgroups__shorten(path, width, buf, sizeof(buf), cols);
}

static void test_shorten(void)
{
	const char *pod = "/kubepods.slice/kubepods-burstable.slice/"
			  "kubepods-burstable-pod1c2d3e4f_5a6b.slice/cri-containerd-"
			  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope";
	char esc[ESCAPE_SIZE(64)];
	int cols;

	CHECK_STR(shorten("/", 32, &cols), "/");
	CHECK(cols == 1);
	CHECK_STR(shorten("/system.slice/backup.service", 32, &cols),
		  "/system.slice/backup.service");
	CHECK(cols == 28);
	CHECK_STR(shorten("/system.slice/a-long-unit-name.service", 32, &cols),
		  "\xe2\x80\xa6/a-long-unit-name.service");
	CHECK(cols == 26);
	CHECK_STR(shorten("/user.slice/user-1000.slice/user@1000.service/app.slice", 32, &cols),
		  "\xe2\x80\xa6/user@1000.service/app.slice");
	CHECK(cols <= 32);
	/* the last component alone too long: its head and tail, two containers told apart */
	CHECK_STR(shorten(pod, 32, &cols), "\xe2\x80\xa6/cri-containerd-01234\xe2\x80\xa6"
					   "def.scope");
	CHECK(cols == 32);
	/* never inside an escape */
	escape__text("/a/\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b", 64, esc, sizeof(esc));
	CHECK_STR(shorten(esc, 10, &cols), "\xe2\x80\xa6/\\x1b\xe2\x80\xa6");
	CHECK(cols == 7);
	escape__text("/a/b/\x1b\x1b\x1b", 64, esc, sizeof(esc));
	CHECK_STR(shorten(esc, 14, &cols), "\xe2\x80\xa6/\\x1b\\x1b\\x1b");
	CHECK(cols == 14);
	escape__text("/a\x1b\x1b\x1b/b/c", 64, esc, sizeof(esc));
	CHECK_STR(shorten(esc, 10, &cols), "\xe2\x80\xa6/b/c");
	CHECK(cols == 5);
}

static const char *unit(const char *path)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%.*s", (int)cgroups__unit(path), path);
	return buf;
}

static void test_unit(void)
{
	CHECK_STR(unit("/"), "/");
	CHECK_STR(unit("/system.slice/backup.service"), "/system.slice/backup.service");
	CHECK_STR(unit("/system.slice/docker.service/inner/deeper"),
		  "/system.slice/docker.service");
	CHECK_STR(unit("/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope"),
		  "/user.slice/user-1000.slice/user@1000.service");
	CHECK_STR(unit("/system.slice"), "/system.slice");
	CHECK_STR(unit("/init.scope"), "/init.scope");
	/* a .service prefix of a name is not a unit */
	CHECK_STR(unit("/a.services/b"), "/a.services/b");
	CHECK_STR(unit("/kubepods.slice/kubepods-burstable.slice/"
		       "kubepods-burstable-pod1c2d3e4f_5a6b_4c7d_8e9f_0a1b2c3d4e5f.slice/"
		       "cri-containerd-"
		       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope"),
		  "/kubepods.slice/kubepods-burstable.slice/"
		  "kubepods-burstable-pod1c2d3e4f_5a6b_4c7d_8e9f_0a1b2c3d4e5f.slice");
	CHECK_STR(unit("/kubepods.slice/kubepods-pod12.slice/crio-0123456789abcdef.scope"),
		  "/kubepods.slice/kubepods-pod12.slice");
	CHECK_STR(unit("/machine.slice/libpod-0123456789abcdef01.scope"), "/machine.slice");
	CHECK_STR(unit("/system.slice/docker-0123456789abcdef0123.scope"), "/system.slice");
	/* cgroupfs driver: a bare 64-hex container id */
	CHECK_STR(unit("/kubepods/burstable/pod1c2d/"
		       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
		  "/kubepods/burstable/pod1c2d");
	/* not a container's: too short, not hex, not the last component */
	CHECK_STR(unit("/x/docker-12.scope"), "/x/docker-12.scope");
	CHECK_STR(unit("/x/docker-0123456789abcdefzz.scope"), "/x/docker-0123456789abcdefzz.scope");
	CHECK_STR(unit("/docker-0123456789abcdef0123.scope"), "/");
}

int main(void)
{
	char cmd[PATH_MAX + 16];
	int failed = 0;

	if (!mkdtemp(tmp))
		return 1;
	RUN(test_mount_hybrid);
	RUN(test_mount_v2_escaped);
	RUN(test_mount_v1_only);
	make_tree();
	RUN(test_resolve);
	RUN(test_gone);
	RUN(test_name_in_flight);
	RUN(test_no_root);
	RUN(test_kernel_names);
	RUN(test_kernel_names_gone);
	RUN(test_walk_retry);
	RUN(test_shorten);
	RUN(test_unit);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	failed += system(cmd) != 0;
	return failed ? 1 : 0;
}
