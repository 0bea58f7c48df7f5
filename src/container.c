// SPDX-License-Identifier: GPL-2.0
/*
 * Containers and pods from a cgroup path. The names read here, by driver:
 *
 *   systemd   /kubepods.slice/kubepods-burstable.slice/
 *               kubepods-burstable-pod<uid, '-' as '_'>.slice/cri-containerd-<id>.scope
 *             /kubepods.slice/kubepods-pod<uid>.slice/crio-<id>.scope    (guaranteed)
 *             /system.slice/docker-<id>.scope, /machine.slice/libpod-<id>.scope,
 *             /machine.slice/systemd-nspawn@<name>.service/payload
 *   cgroupfs  /kubepods/besteffort/pod<uid>/<id>, /kubepods/pod<uid>/crio-<id>,
 *             /docker/<id>, /libpod_parent/libpod-<id>
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "container.h"

/* A container's id: hex digits, this many at least (docker's short id) */
#define ID_MIN 12

struct component {
	const char *s;
	size_t len;
};

static bool has_prefix(struct component c, const char *prefix)
{
	size_t n = strlen(prefix);

	return c.len >= n && !memcmp(c.s, prefix, n);
}

static bool has_suffix(struct component c, const char *suffix)
{
	size_t n = strlen(suffix);

	return c.len >= n && !memcmp(c.s + c.len - n, suffix, n);
}

static bool is(struct component c, const char *name)
{
	return c.len == strlen(name) && !memcmp(c.s, name, c.len);
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* c's value as a hex digit (systemd writes lowercase), or -1 */
static int hex_value(char c)
{
	return is_hex(c) ? (c <= '9' ? c - '0' : c - 'a' + 10) : -1;
}

/* Whether s[0..len) is lowercase hex digits, min to max of them. */
static bool hex_id(const char *s, size_t len, size_t min, size_t max)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!is_hex(s[i]))
			return false;
	return len >= min && len <= max;
}

/* The runtimes' names of a container's cgroup: PREFIX<id>, with ".scope" under systemd. */
static const struct {
	const char *prefix;
	enum container_runtime runtime;
	bool conmon;
} runtimes[] = {
    {"cri-containerd-", CONTAINER_RUNTIME_CONTAINERD, false},
    {"crio-conmon-", CONTAINER_RUNTIME_CRIO, true},
    {"crio-", CONTAINER_RUNTIME_CRIO, false},
    {"docker-", CONTAINER_RUNTIME_DOCKER, false},
    {"libpod-conmon-", CONTAINER_RUNTIME_PODMAN, true},
    {"libpod-", CONTAINER_RUNTIME_PODMAN, false},
};

#define N_RUNTIMES (sizeof(runtimes) / sizeof(runtimes[0]))

/* c's id after the prefix, without ".scope"; scope: whether it had one. */
static struct component id_part(struct component c, size_t prefix, bool *scope)
{
	struct component id = {c.s + prefix, c.len - prefix};

	*scope = has_suffix(id, ".scope");
	if (*scope)
		id.len -= strlen(".scope");
	return id;
}

/*
 * The runtimes[] entry c names (with or without ".scope"), or -1; its id up
 * to max hex digits (an id too long for CONTAINER_ID_MAX is still a
 * container's for cgroups__unit(), which cut such paths before this module).
 */
static int runtime_of(struct component c, bool *scope, size_t max)
{
	struct component id;
	size_t i;

	for (i = 0; i < N_RUNTIMES; i++) {
		if (!has_prefix(c, runtimes[i].prefix))
			continue;
		id = id_part(c, strlen(runtimes[i].prefix), scope);
		if (hex_id(id.s, id.len, ID_MIN, max))
			return (int)i;
	}
	return -1;
}

bool container__is_own(const char *name, size_t len)
{
	struct component c = {name, len};
	bool scope;
	int i;

	if (len == CONTAINER_ID_MAX && hex_id(name, len, CONTAINER_ID_MAX, CONTAINER_ID_MAX))
		return true;
	i = runtime_of(c, &scope, len);
	return i >= 0 && scope && !runtimes[i].conmon;
}

/* Where a component stands in the kubelet's tree: what its parent is for its child. */
enum kube_level { KUBE_NONE, KUBE_ROOT, KUBE_QOS, KUBE_POD };

struct walk {
	enum kube_level level; /* the previous component's */
	enum container_qos qos;
	struct component prev;
};

/*
 * A pod UID as the kubelet names its cgroup: a UUID with '-' (cgroupfs) or
 * '_' (systemd escapes '-') between its groups, or a static pod's 32 hex
 * digits (an md5 of its manifest). Into uid with dashes; false if neither.
 */
static bool pod_uid(struct component c, char uid[CONTAINER_POD_UID_MAX + 1])
{
	char found[CONTAINER_POD_UID_MAX + 1];
	size_t i;

	if (c.len == 32 && hex_id(c.s, c.len, 32, 32)) {
		memcpy(found, c.s, c.len);
		found[c.len] = '\0';
	} else if (c.len == 36) {
		for (i = 0; i < 36; i++) {
			bool dash = i == 8 || i == 13 || i == 18 || i == 23;

			if (dash ? c.s[i] != '-' && c.s[i] != '_' : !is_hex(c.s[i]))
				return false; /* uid untouched: a look-alike leaves no half */
			found[i] = dash ? '-' : c.s[i];
		}
		found[36] = '\0';
	} else {
		return false;
	}
	memcpy(uid, found, sizeof(found));
	return true;
}

bool container__pod_uid(const char *s, size_t len, char uid[CONTAINER_POD_UID_MAX + 1])
{
	return pod_uid((struct component){s, len}, uid);
}

/* The QoS class a systemd name carries after "kubepods-": "burstable-", "besteffort-" or none. */
static enum container_qos slice_qos(struct component *rest)
{
	static const struct {
		const char *name;
		enum container_qos qos;
	} classes[] = {{"burstable", CONTAINER_QOS_BURSTABLE},
		       {"besteffort", CONTAINER_QOS_BESTEFFORT}};
	size_t i, n;

	for (i = 0; i < 2; i++) {
		n = strlen(classes[i].name);
		if (has_prefix(*rest, classes[i].name) && rest->len > n &&
		    (rest->s[n] == '-' || rest->s[n] == '.')) {
			rest->s += n + 1;
			rest->len -= n + 1;
			return classes[i].qos;
		}
	}
	return CONTAINER_QOS_GUARANTEED;
}

/* "kubepods[-QOS][-pod<uid>].slice", the systemd driver's: self-describing, anywhere. */
static enum kube_level systemd_kube(struct component c, struct walk *w, struct container *out)
{
	struct component rest = {c.s + strlen("kubepods-"), 0};
	enum container_qos qos;

	if (is(c, "kubepods.slice"))
		return KUBE_ROOT;
	if (!has_prefix(c, "kubepods-") || !has_suffix(c, ".slice"))
		return KUBE_NONE;
	rest.len = c.len - strlen("kubepods-");
	qos = slice_qos(&rest);
	if (qos != CONTAINER_QOS_GUARANTEED && is(rest, "slice")) {
		w->qos = qos; /* "kubepods-burstable.slice" */
		return KUBE_QOS;
	}
	if (!has_prefix(rest, "pod") || rest.len < strlen("pod.slice"))
		return KUBE_NONE;
	rest.s += strlen("pod");
	rest.len -= strlen("pod.slice");
	if (!pod_uid(rest, out->pod_uid))
		return KUBE_NONE;
	w->qos = qos;
	return KUBE_POD;
}

/* "kubepods", "burstable", "pod<uid>": the cgroupfs driver's, known by their parents. */
static enum kube_level cgroupfs_kube(struct component c, struct walk *w, struct container *out)
{
	struct component uid = {c.s + strlen("pod"), c.len - strlen("pod")};

	if (is(c, "kubepods"))
		return KUBE_ROOT;
	if (w->level == KUBE_ROOT && (is(c, "burstable") || is(c, "besteffort"))) {
		w->qos = c.s[1] == 'u' ? CONTAINER_QOS_BURSTABLE : CONTAINER_QOS_BESTEFFORT;
		return KUBE_QOS;
	}
	if ((w->level != KUBE_ROOT && w->level != KUBE_QOS) || !has_prefix(c, "pod") ||
	    !pod_uid(uid, out->pod_uid))
		return KUBE_NONE;
	if (w->level == KUBE_ROOT)
		w->qos = CONTAINER_QOS_GUARANTEED; /* a pod right under kubepods */
	return KUBE_POD;
}

/*
 * A machine's name as systemd writes it in a unit name (machine-<name>.scope,
 * systemd-nspawn@<name>.service): '-' and other bytes as "\xNN". Into id;
 * false if it is empty, longer than CONTAINER_ID_MAX or holds a NUL.
 */
static bool machine_name(struct component c, char id[CONTAINER_ID_MAX + 1])
{
	size_t i, n = 0;
	int hi, lo;

	for (i = 0; i < c.len; i++, n++) {
		if (n == CONTAINER_ID_MAX)
			return false;
		id[n] = c.s[i];
		if (c.s[i] != '\\' || i + 3 >= c.len || c.s[i + 1] != 'x')
			continue;
		hi = hex_value(c.s[i + 2]);
		lo = hex_value(c.s[i + 3]);
		if (hi < 0 || lo < 0)
			continue; /* not an escape: the backslash as it is */
		if ((hi | lo) == 0)
			return false;
		id[n] = (char)(hi << 4 | lo);
		i += 3;
	}
	id[n] = '\0';
	return n > 0;
}

/* An nspawn machine: "systemd-nspawn@<name>.service", or "machine-<name>.scope" in machine.slice.
 */
static bool nspawn(struct component c, const struct walk *w, struct container *out)
{
	struct component name;

	if (has_prefix(c, "systemd-nspawn@") && has_suffix(c, ".service")) {
		name.s = c.s + strlen("systemd-nspawn@");
		name.len = c.len - strlen("systemd-nspawn@.service");
	} else if (is(w->prev, "machine.slice") && has_prefix(c, "machine-") &&
		   has_suffix(c, ".scope")) {
		name.s = c.s + strlen("machine-");
		name.len = c.len - strlen("machine-.scope");
	} else {
		return false;
	}
	return machine_name(name, out->id);
}

/* c names a container (a runtime's, or a bare id): into out, which it replaces. */
static bool container_at(struct component c, const struct walk *w, struct container *out)
{
	struct container found = {0};
	bool scope;
	int i = runtime_of(c, &scope, CONTAINER_ID_MAX);

	if (i >= 0) {
		found.runtime = runtimes[i].runtime;
		found.conmon = runtimes[i].conmon;
		memcpy(found.id, c.s + strlen(runtimes[i].prefix),
		       c.len - strlen(runtimes[i].prefix) - (scope ? strlen(".scope") : 0));
	} else if (c.len == CONTAINER_ID_MAX &&
		   hex_id(c.s, c.len, CONTAINER_ID_MAX, CONTAINER_ID_MAX)) {
		/* a bare id: docker's under "docker"; under a pod, containerd's or cri-dockerd's */
		found.runtime =
		    is(w->prev, "docker") ? CONTAINER_RUNTIME_DOCKER : CONTAINER_RUNTIME_NONE;
		memcpy(found.id, c.s, c.len);
	} else if (nspawn(c, w, &found)) {
		found.runtime = CONTAINER_RUNTIME_NSPAWN;
	} else {
		return false;
	}
	out->runtime = found.runtime;
	out->conmon = found.conmon;
	memcpy(out->id, found.id, sizeof(out->id));
	return true;
}

/* One component: the pod and QoS levels, then a container. */
static void step(struct component c, struct walk *w, struct container *out)
{
	enum kube_level level;

	if (!c.len) { /* "//...", "//cgroup:ID": what follows is not the child of what went before
		       */
		w->level = KUBE_NONE;
		w->prev = c;
		return;
	}
	level = systemd_kube(c, w, out);
	if (level == KUBE_NONE)
		level = cgroupfs_kube(c, w, out);
	if (level == KUBE_QOS || level == KUBE_POD)
		out->qos = w->qos;
	if (level == KUBE_NONE)
		container_at(c, w, out);
	w->level = level;
	w->prev = c;
}

bool container__parse(const char *path, struct container *out)
{
	struct walk w = {0};
	struct component c;
	const char *end;

	memset(out, 0, sizeof(*out));
	for (c.s = path; *c.s == '/'; c.s++)
		;
	while (*c.s) {
		end = strchrnul(c.s, '/');
		c.len = (size_t)(end - c.s);
		step(c, &w, out);
		c.s = *end ? end + 1 : end;
	}
	if (out->runtime != CONTAINER_RUNTIME_NONE || out->id[0] || out->pod_uid[0] ||
	    out->qos != CONTAINER_QOS_NONE)
		return true;
	return false;
}

const char *container__runtime_name(const struct container *c)
{
	static const char *const names[] = {
	    [CONTAINER_RUNTIME_CONTAINERD] = "containerd", [CONTAINER_RUNTIME_CRIO] = "crio",
	    [CONTAINER_RUNTIME_DOCKER] = "docker",	   [CONTAINER_RUNTIME_PODMAN] = "podman",
	    [CONTAINER_RUNTIME_NSPAWN] = "nspawn",
	};

	if (c->conmon)
		return c->runtime == CONTAINER_RUNTIME_CRIO ? "crio-conmon" : "podman-conmon";
	return (unsigned int)c->runtime < sizeof(names) / sizeof(names[0]) ? names[c->runtime]
									   : NULL;
}

const char *container__short(const struct container *c, char *buf, size_t size)
{
	const char *runtime = container__runtime_name(c);
	/* a machine's name is its whole id; a container's id is cut as docker ps cuts it */
	int len = c->runtime == CONTAINER_RUNTIME_NSPAWN ? CONTAINER_ID_MAX : CONTAINER_SHORT_ID;

	if (!c->id[0])
		return NULL;
	if (runtime)
		snprintf(buf, size, "%s:%.*s", runtime, len, c->id);
	else
		snprintf(buf, size, "%.*s", len, c->id);
	return buf;
}

const char *container__qos_name(enum container_qos qos)
{
	static const char *const names[] = {
	    [CONTAINER_QOS_GUARANTEED] = "guaranteed",
	    [CONTAINER_QOS_BURSTABLE] = "burstable",
	    [CONTAINER_QOS_BESTEFFORT] = "besteffort",
	};

	return (unsigned int)qos < sizeof(names) / sizeof(names[0]) ? names[qos] : NULL;
}
