// SPDX-License-Identifier: GPL-2.0
/*
 * src/container.c: runtime, container id, pod UID and QoS class from cgroup
 * paths shaped as the kubelet (systemd and cgroupfs drivers), containerd,
 * CRI-O, docker, podman and systemd-nspawn name them; and paths that only
 * look like them.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "container.h"

#define ID   "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID  "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
#define UID_ "1c2d3e4f_5a6b_4c7d_8e9f_0a1b2c3d4e5f"
#define MD5  "5b8a1e6b8c0f3e7d4c9a2b1f0e3d4c5b"

#define CONTAINERD CONTAINER_RUNTIME_CONTAINERD
#define CRIO	   CONTAINER_RUNTIME_CRIO
#define DOCKER	   CONTAINER_RUNTIME_DOCKER
#define PODMAN	   CONTAINER_RUNTIME_PODMAN
#define NSPAWN	   CONTAINER_RUNTIME_NSPAWN
#define NONE	   CONTAINER_RUNTIME_NONE
#define GUAR	   CONTAINER_QOS_GUARANTEED
#define BURST	   CONTAINER_QOS_BURSTABLE
#define BEST	   CONTAINER_QOS_BESTEFFORT

static const struct {
	const char *path;
	bool known;
	enum container_runtime runtime;
	const char *id;
	const char *pod_uid;
	enum container_qos qos;
	bool conmon;
} cases[] = {
    /* kubelet, systemd driver */
    {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
     ".slice/cri-containerd-" ID ".scope",
     true, CONTAINERD, ID, UID, BURST, false},
    {"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-" ID
     ".scope",
     true, CRIO, ID, UID, BEST, false},
    {"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
     ".slice/crio-conmon-" ID ".scope",
     true, CRIO, ID, UID, BEST, true},
    {"/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope", true, CONTAINERD, ID,
     UID, GUAR, false},
    {"/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID ".scope", true, DOCKER, ID, UID, GUAR,
     false},
    /* a static pod (md5 UID), the pod's own cgroup, a QoS slice alone */
    {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" MD5 ".slice", true, NONE, "",
     MD5, BURST, false},
    {"/kubepods.slice/kubepods-besteffort.slice", true, NONE, "", "", BEST, false},
    {"/kubepods.slice", false, NONE, "", "", CONTAINER_QOS_NONE, false},
    /* a container's own sub-cgroup is the container's */
    {"/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope/init.scope", true,
     CONTAINERD, ID, UID, GUAR, false},
    /* kubelet, cgroupfs driver */
    {"/kubepods/burstable/pod" UID "/" ID, true, NONE, ID, UID, BURST, false},
    {"/kubepods/besteffort/pod" UID "/crio-" ID, true, CRIO, ID, UID, BEST, false},
    {"/kubepods/pod" UID "/" ID, true, NONE, ID, UID, GUAR, false},
    {"/kubepods/pod" UID, true, NONE, "", UID, GUAR, false},
    /*
     * docker, podman (rootful, rootless, cgroupfs), nspawn. libpod-<id>.scope/container
     * and machine-<name>.scope/payload are what Debian 12's podman 4.3 (crun) and
     * systemd 252's nspawn make (tests/debvm/containers.sh).
     */
    {"/system.slice/docker-" ID ".scope", true, DOCKER, ID, "", CONTAINER_QOS_NONE, false},
    {"/docker/" ID, true, DOCKER, ID, "", CONTAINER_QOS_NONE, false},
    {"/machine.slice/libpod-" ID ".scope", true, PODMAN, ID, "", CONTAINER_QOS_NONE, false},
    {"/machine.slice/libpod-" ID ".scope/container", true, PODMAN, ID, "", CONTAINER_QOS_NONE,
     false},
    {"/machine.slice/libpod-conmon-" ID ".scope", true, PODMAN, ID, "", CONTAINER_QOS_NONE, true},
    {"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope", true, PODMAN,
     ID, "", CONTAINER_QOS_NONE, false},
    {"/libpod_parent/libpod-" ID, true, PODMAN, ID, "", CONTAINER_QOS_NONE, false},
    {"/machine.slice/systemd-nspawn@web.service/payload", true, NSPAWN, "web", "",
     CONTAINER_QOS_NONE, false},
    {"/machine.slice/systemd-nspawn@db\\x2dmain.service", true, NSPAWN, "db-main", "",
     CONTAINER_QOS_NONE, false},
    {"/machine.slice/machine-build\\x2d1.scope/payload", true, NSPAWN, "build-1", "",
     CONTAINER_QOS_NONE, false},
    /* a container inside an nspawn machine: the deepest wins */
    {"/machine.slice/systemd-nspawn@web.service/payload/system.slice/docker-" ID ".scope", true,
     DOCKER, ID, "", CONTAINER_QOS_NONE, false},
    /* drainstat's own forms: a removed container named by its pod, an elision */
    {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice//cgroup:4242",
     true, NONE, "", UID, BURST, false},
    {"/kubepods//.../pod" UID "/" ID, true, NONE, ID, "", CONTAINER_QOS_NONE, false},
    /* look-alikes */
    {"/", false, NONE, "", "", CONTAINER_QOS_NONE, false},
    {"", false, NONE, "", "", CONTAINER_QOS_NONE, false},
    {"/system.slice/cron.service", false, NONE, "", "", CONTAINER_QOS_NONE, false},
    {"/system.slice/docker-DEADBEEF0123.scope", false, NONE, "", "", CONTAINER_QOS_NONE, false},
    {"/system.slice/docker-0123.scope", false, NONE, "", "", CONTAINER_QOS_NONE, false},
    {"/system.slice/docker.service", false, NONE, "", "", CONTAINER_QOS_NONE, false},
    {"/system.slice/docker-" ID "0.scope", false, NONE, "", "", CONTAINER_QOS_NONE, false},
    {"/pod" UID "/" ID, true, NONE, ID, "", CONTAINER_QOS_NONE, false},
    {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1c2d3e4f.slice", true, NONE,
     "", "", BURST, false},
    {"/kubepods.slice/kubepods-pod" UID_ "x.slice", false, NONE, "", "", CONTAINER_QOS_NONE, false},
    /* a UID bad past its start leaves none of it (found by fuzz_container) */
    {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1c2d3e4f_5a6b_4c7d_8e;f_"
     "0a1b2c3d4e5f.slice/cri-containerd-" ID ".scope",
     true, CONTAINERD, ID, "", BURST, false},
    {"/kubepods/guaranteed/pod" UID, false, NONE, "", "", CONTAINER_QOS_NONE, false},
    {"/user.slice/machine-x.scope", false, NONE, "", "", CONTAINER_QOS_NONE, false},
    {"/machine.slice/systemd-nspawn@.service", false, NONE, "", "", CONTAINER_QOS_NONE, false},
    {"/machine.slice/systemd-nspawn@a\\x00b.service", false, NONE, "", "", CONTAINER_QOS_NONE,
     false},
    {"/machine.slice/systemd-nspawn@a\\xzz.service", true, NSPAWN, "a\\xzz", "", CONTAINER_QOS_NONE,
     false},
};

static void test_table(void)
{
	struct container c;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool known = container__parse(cases[i].path, &c);

		if (known != cases[i].known || c.runtime != cases[i].runtime ||
		    strcmp(c.id, cases[i].id) || strcmp(c.pod_uid, cases[i].pod_uid) ||
		    c.qos != cases[i].qos || c.conmon != cases[i].conmon) {
			fprintf(stderr,
				"  case %zu '%s': known %d runtime %d id '%s' pod '%s' qos %d "
				"conmon %d\n",
				i, cases[i].path, known, c.runtime, c.id, c.pod_uid, c.qos,
				c.conmon);
			check__failures++;
		}
	}
}

/* A machine name past CONTAINER_ID_MAX is not one (a hostname is 64 bytes at most). */
static void test_long_names(void)
{
	char path[512], name[CONTAINER_ID_MAX + 2];
	struct container c;

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(path, sizeof(path), "/machine.slice/systemd-nspawn@%s.service", name);
	CHECK(!container__parse(path, &c));
	name[CONTAINER_ID_MAX] = '\0';
	snprintf(path, sizeof(path), "/machine.slice/systemd-nspawn@%s.service", name);
	CHECK(container__parse(path, &c) && strlen(c.id) == CONTAINER_ID_MAX);
}

/* A path of 64 KiB of components, each almost a container's: one pass, nothing found. */
static void test_huge_path(void)
{
	size_t n = 65536, i;
	char *path = malloc(n + 1);
	struct container c;

	CHECK(path != NULL);
	if (!path)
		return;
	for (i = 0; i < n; i++)
		path[i] = i % 20 == 0 ? '/' : "docker-0123456789a"[i % 20 % 18];
	path[n] = '\0';
	CHECK(!container__parse(path, &c));
	free(path);
}

static void test_names(void)
{
	struct container c = {.runtime = CONTAINER_RUNTIME_CONTAINERD, .id = ID};
	char buf[96];

	CHECK_STR(container__runtime_name(&c), "containerd");
	CHECK_STR(container__short(&c, buf, sizeof(buf)), "containerd:0123456789ab");
	c.runtime = CONTAINER_RUNTIME_CRIO;
	c.conmon = true;
	CHECK_STR(container__runtime_name(&c), "crio-conmon");
	c.runtime = CONTAINER_RUNTIME_PODMAN;
	CHECK_STR(container__short(&c, buf, sizeof(buf)), "podman-conmon:0123456789ab");
	c.conmon = false;
	c.runtime = CONTAINER_RUNTIME_NONE;
	CHECK(container__runtime_name(&c) == NULL);
	CHECK_STR(container__short(&c, buf, sizeof(buf)), "0123456789ab");
	c.runtime = CONTAINER_RUNTIME_NSPAWN;
	strcpy(c.id, "a-machine-name-longer-than-twelve");
	CHECK_STR(container__short(&c, buf, sizeof(buf)),
		  "nspawn:a-machine-name-longer-than-twelve");
	c.id[0] = '\0';
	CHECK(container__short(&c, buf, sizeof(buf)) == NULL);
	c.runtime = (enum container_runtime)99;
	CHECK(container__runtime_name(&c) == NULL);
	CHECK_STR(container__qos_name(CONTAINER_QOS_BESTEFFORT), "besteffort");
	CHECK(container__qos_name(CONTAINER_QOS_NONE) == NULL);
}

/* cgroups__unit()'s rule: a runtime's own scope or a bare id, never a monitor */
static void test_is_own(void)
{
	CHECK(container__is_own("cri-containerd-" ID ".scope",
				strlen("cri-containerd-" ID ".scope")));
	CHECK(container__is_own(ID, 64));
	/* an id too long to be one is still cut off (cgroups__unit()'s rule), not parsed */
	CHECK(container__is_own("docker-fedcba9876543210" ID ".scope",
				strlen("docker-fedcba9876543210" ID ".scope")));
	CHECK(container__is_own("libpod-0123456789ab.scope", 25));
	CHECK(
	    !container__is_own("libpod-conmon-" ID ".scope", strlen("libpod-conmon-" ID ".scope")));
	CHECK(!container__is_own("crio-" ID, strlen("crio-" ID)));
	CHECK(!container__is_own("docker.service", 14));
}

int main(void)
{
	int failed = 0;

	RUN(test_table);
	RUN(test_long_names);
	RUN(test_huge_path);
	RUN(test_names);
	RUN(test_is_own);
	return failed ? 1 : 0;
}
