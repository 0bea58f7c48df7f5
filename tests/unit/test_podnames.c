// SPDX-License-Identifier: GPL-2.0
/*
 * src/podnames.c on fake /var/log/pods directories: the names of well-formed
 * entries, and nothing from hostile ones (symlinks, files, names without the
 * three parts), a root that is a symlink, another's or writable by others,
 * a directory with more entries than are read or pods than are kept, and the
 * refresh at most once an interval.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "arena.h"
#include "check.h"
#include "model_int.h"
#include "podnames.h"

#define UID1 "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
#define UID2 "2c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
#define UID3 "3c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
#define MD5  "5b8a1e6b8c0f3e7d4c9a2b1f0e3d4c5b"
#define SEC  1000000000ULL

static char tmp[] = "/tmp/test_podnames.XXXXXX";

static const char *in_tmp(const char *rel, char *buf)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmp, rel);
	return buf;
}

static void mkdir_in(const char *rel)
{
	char path[PATH_MAX];

	CHECK(mkdir(in_tmp(rel, path), 0755) == 0);
}

static void touch_in(const char *rel)
{
	char path[PATH_MAX];
	int fd = open(in_tmp(rel, path), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
}

static void test_parse(void)
{
	struct podname p;
	char longns[128];

	CHECK(podnames__parse("default_web-0_" UID1, &p));
	CHECK_STR(p.namespace, "default");
	CHECK_STR(p.name, "web-0");
	CHECK_STR(p.uid, UID1);
	CHECK(podnames__parse("kube-system_etcd-node1.example_" MD5, &p));
	CHECK_STR(p.name, "etcd-node1.example");
	CHECK(!podnames__parse("default_web-0", &p));
	CHECK(!podnames__parse("a_b_c_" UID1, &p));
	CHECK(!podnames__parse("_web_" UID1, &p));
	CHECK(!podnames__parse("default__" UID1, &p));
	CHECK(!podnames__parse("Default_web_" UID1, &p));
	CHECK(!podnames__parse("default_web_1c2d3e4f", &p));
	CHECK(!podnames__parse("default_web_" UID1 "0", &p));
	CHECK(!podnames__parse("de.fault_web_" UID1, &p));
	CHECK(!podnames__parse("default_we\x1b[31mb_" UID1, &p));
	memset(longns, 'a', 64);
	strcpy(longns + 64, "_web_" UID1);
	CHECK(!podnames__parse(longns, &p));
	strcpy(longns + 63, "_web_" UID1);
	CHECK(podnames__parse(longns, &p) && strlen(p.namespace) == 63);
}

/* The good entries among hostile ones; then a new pod seen only after the interval. */
static void test_read(void)
{
	char path[PATH_MAX], target[PATH_MAX];
	struct podnames *pn;
	const struct podname *p;

	mkdir_in("pods");
	mkdir_in("pods/default_web-0_" UID1);
	mkdir_in("pods/kube-system_etcd-node1_" MD5);
	mkdir_in("elsewhere");
	CHECK(symlink(in_tmp("elsewhere", target), in_tmp("pods/evil_link_" UID2, path)) == 0);
	touch_in("pods/evil_file_" UID2);
	mkdir_in("pods/noparts");
	mkdir_in("pods/a_b_c_" UID2);
	pn = podnames__new(in_tmp("pods", path), getuid(), 5 * SEC);
	CHECK(pn != NULL);
	if (!pn)
		return;
	CHECK(podnames__refresh(pn, 100 * SEC) == 0);
	CHECK(podnames__count(pn) == 2);
	p = podnames__find(pn, UID1);
	CHECK(p && !strcmp(p->namespace, "default") && !strcmp(p->name, "web-0"));
	p = podnames__find(pn, MD5);
	CHECK(p && !strcmp(p->namespace, "kube-system"));
	CHECK(podnames__find(pn, UID2) == NULL);
	CHECK(podnames__find(pn, "x") == NULL);
	mkdir_in("pods/team-a_job-7_" UID3);
	CHECK(podnames__refresh(pn, 104 * SEC) == 0 && podnames__find(pn, UID3) == NULL);
	CHECK(podnames__refresh(pn, 105 * SEC) == 0 && podnames__find(pn, UID3) != NULL);
	podnames__free(pn);
}

/* A cgroup of a known pod's gets its name from the model (model_name_pod()); others none. */
static void test_model_pod(void)
{
	const char *cg =
	    "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
	    "1c2d3e4f_5a6b_4c7d_8e9f_0a1b2c3d4e5f.slice/cri-containerd-0123456789ab.scope";
	struct arena a = {0};
	struct model_pod pod = {0};
	struct podnames *pn;
	char path[PATH_MAX];

	mkdir_in("named");
	mkdir_in("named/default_web-0_" UID1);
	pn = podnames__new(in_tmp("named", path), getuid(), SEC);
	CHECK(pn && podnames__refresh(pn, SEC) == 0);
	CHECK(model_name_pod(&a, pn, cg, &pod) == 0);
	CHECK_STR(pod.name, "web-0");
	CHECK_STR(pod.namespace, "default");
	pod = (struct model_pod){0};
	CHECK(model_name_pod(&a, pn, "/kubepods/pod" UID2 "/crio-0123456789ab", &pod) == 0);
	CHECK(model_name_pod(&a, pn, "/system.slice/cron.service", &pod) == 0);
	CHECK(model_name_pod(&a, NULL, cg, &pod) == 0);
	CHECK(!pod.name && !pod.namespace);
	podnames__free(pn);
	arena__free(&a);
}

/* refresh of root, owned by owner: the error, and no pods after it. */
static void expect_refused(const char *root, uid_t owner, int want)
{
	struct podnames *pn = podnames__new(root, owner, SEC);
	int err;

	CHECK(pn != NULL);
	if (!pn)
		return;
	err = podnames__refresh(pn, SEC);
	if (err != want)
		fprintf(stderr, "  %s: %d, want %d\n", root, err, want);
	CHECK(err == want);
	CHECK(podnames__count(pn) == 0);
	podnames__free(pn);
}

static void test_hostile_root(void)
{
	char path[PATH_MAX], link[PATH_MAX];

	mkdir_in("trusted");
	mkdir_in("trusted/default_web-0_" UID1);
	CHECK(symlink(in_tmp("trusted", path), in_tmp("link", link)) == 0);
	expect_refused(link, getuid(), -EPERM);
	/* a user's directory: another owner than the one expected */
	expect_refused(in_tmp("trusted", path), getuid() + 1, -EPERM);
	CHECK(chmod(path, 0775) == 0);
	expect_refused(path, getuid(), -EPERM);
	CHECK(chmod(path, 0757) == 0);
	expect_refused(path, getuid(), -EPERM);
	expect_refused(in_tmp("missing", path), getuid(), -ENOENT);
	touch_in("file");
	expect_refused(in_tmp("file", path), getuid(), -EPERM);
}

/* Past PODNAMES_MAX pods, the rest unkept; past PODNAMES_SCAN entries, unread. */
static void test_bounds(void)
{
	char rel[128], path[PATH_MAX];
	struct podnames *pn;
	int i;

	mkdir_in("many");
	for (i = 0; i < PODNAMES_MAX + 4; i++) {
		snprintf(rel, sizeof(rel), "many/ns_pod-%d_%08x-5a6b-4c7d-8e9f-0a1b2c3d4e5f", i, i);
		mkdir_in(rel);
	}
	pn = podnames__new(in_tmp("many", path), getuid(), SEC);
	CHECK(pn && podnames__refresh(pn, SEC) == 0 && podnames__count(pn) == PODNAMES_MAX);
	podnames__free(pn);
	mkdir_in("flood");
	for (i = 0; i < PODNAMES_SCAN; i++) {
		snprintf(rel, sizeof(rel), "flood/%d", i);
		touch_in(rel);
	}
	pn = podnames__new(in_tmp("flood", path), getuid(), SEC);
	CHECK(pn && podnames__refresh(pn, SEC) == -E2BIG);
	podnames__free(pn);
}

/* The fake directories go with the test, whatever it found. */
static int remove_tmp(int failed)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) ? 1 : failed;
}

int main(void)
{
	int failed = 0;

	RUN(test_parse);
	if (!mkdtemp(tmp))
		return perror("mkdtemp"), 1;
	RUN(test_read);
	RUN(test_hostile_root);
	RUN(test_model_pod);
	RUN(test_bounds);
	return remove_tmp(failed) ? 1 : 0;
}
