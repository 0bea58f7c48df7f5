/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a cgroup path says of a container: the runtime that made it, its id,
 * the Kubernetes pod it belongs to and the pod's QoS class, read from the
 * names the runtimes and the kubelet give their cgroups under the systemd
 * and the cgroupfs drivers. Pure string work: no I/O, bounded by the path.
 */
#ifndef CONTAINER_H
#define CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

enum container_runtime {
	CONTAINER_RUNTIME_NONE,
	CONTAINER_RUNTIME_CONTAINERD, /* cri-containerd-<id>.scope, or a bare id under a pod */
	CONTAINER_RUNTIME_CRIO,	      /* crio-<id>.scope, crio-conmon-<id>.scope */
	CONTAINER_RUNTIME_DOCKER,     /* docker-<id>.scope, /docker/<id> */
	CONTAINER_RUNTIME_PODMAN,     /* libpod-<id>.scope, libpod-conmon-<id>.scope */
	CONTAINER_RUNTIME_NSPAWN,     /* systemd-nspawn@<name>.service, machine-<name>.scope */
};

enum container_qos {
	CONTAINER_QOS_NONE, /* not in a pod, or its class not in the path */
	CONTAINER_QOS_GUARANTEED,
	CONTAINER_QOS_BURSTABLE,
	CONTAINER_QOS_BESTEFFORT,
};

/* A container id is 64 hex digits; an nspawn machine name a hostname, 64 bytes at most. */
#define CONTAINER_ID_MAX 64
/* A pod UID: a UUID (36), or a static pod's 32 hex digits */
#define CONTAINER_POD_UID_MAX 36

struct container {
	enum container_runtime runtime;
	enum container_qos qos;
	/* the runtime's monitor (conmon) of the container, not the container */
	bool conmon;
	/* the container's id (lowercase hex) or the nspawn machine's name; "" when none */
	char id[CONTAINER_ID_MAX + 1];
	/* the pod's UID with dashes, as the API and /var/log/pods give it; "" when none */
	char pod_uid[CONTAINER_POD_UID_MAX + 1];
};

/*
 * Reads path (a cgroup path as cgroups__path() gives it, "//..." elisions and
 * "//cgroup:ID" tails included) into *out. The component deepest in the path
 * that names a container wins (a container's own sub-cgroups are its). Returns
 * whether anything was recognised (a runtime or a pod); *out is zeroed if not.
 */
bool container__parse(const char *path, struct container *out);

/*
 * A pod UID, s[0..len): a UUID with '-' or '_' (the systemd driver's escape)
 * between its groups, or a static pod's 32 hex digits. Into uid with dashes;
 * false (uid untouched) if neither.
 */
bool container__pod_uid(const char *s, size_t len, char uid[CONTAINER_POD_UID_MAX + 1]);

/*
 * Whether the component name[0..len) is a container's own cgroup, as
 * cgroups__unit() cuts it off: a bare 64-hex id, or "<runtime>-<hex>.scope"
 * with 12 hex digits or more (more than container__parse() takes: a longer
 * id is still cut, as it was before this module).
 */
bool container__is_own(const char *name, size_t len);

/*
 * The runtime as JSON and the text name it: "containerd", "crio", "docker",
 * "podman", "nspawn"; a monitor as "crio-conmon", "podman-conmon" (its drains
 * are not the container's). NULL when no runtime is known.
 */
const char *container__runtime_name(const struct container *c);

/* The id as a CGROUP column shows it: a container's first 12 hex digits, a machine's name. */
#define CONTAINER_SHORT_ID 12

/*
 * "containerd:0123456789ab", "nspawn:web", or the short id alone when the
 * runtime is not known, into buf (raw: a machine's name may need escaping).
 * Returns buf, or NULL when c has no container id.
 */
const char *container__short(const struct container *c, char *buf, size_t size);
/* "guaranteed", "burstable", "besteffort"; NULL for NONE. */
const char *container__qos_name(enum container_qos qos);

#endif /* CONTAINER_H */
