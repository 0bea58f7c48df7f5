/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cgroup v2 hierarchy as the reports name it: where it is mounted, the
 * cgroup ids the BPF side takes (bpf_get_current_cgroup_id()) named by their
 * paths under the mount, and those paths as the text report and the export
 * show them (cut to a width, cut to a stable prefix).
 */
#ifndef CGROUPS_H
#define CGROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/*
 * A walk of the tree goes this deep at most (each level holds an fd while
 * its subtree is walked: CGROUPS_FDS_MAX), names this many cgroups at most and
 * keeps this many bytes of paths at most; what is past that stays unnamed.
 */
#define CGROUPS_WALK_DEPTH 64
#define CGROUPS_WALK_MAX   65536
#define CGROUPS_PATHS_MAX  (16 << 20)
#define CGROUPS_FDS_MAX	   CGROUPS_WALK_DEPTH
/* A path the walk names is this long at most (openat() needs no PATH_MAX) */
#define CGROUPS_PATH_MAX 65536

/*
 * The mark of a path's levels left out (a path deeper than the kernel's
 * naming gives): an empty component, which no path has, then "...".
 */
#define CGROUPS_ELIDED "//..."

struct cgroups;
struct cgroup_level;

/* How the kernel names cgroups (the tracer's). */
struct cgroups_namer {
	/*
	 * id's path's levels, top first, at most max (tracer__name_cgroup()):
	 * how many, -ENOENT if the cgroup is gone, or -errno
	 */
	int (*name)(void *arg, __u64 id, struct cgroup_level *levels, int max);
	/* the parent of id, a cgroup removed (tracer__cgroup_parent()): 0 or -errno */
	int (*parent)(void *arg, __u64 id, __u64 *parent);
	void *arg;
};

/* A cgroup gone is named by its nearest ancestor still there within this many levels. */
#define CGROUPS_GONE_HOPS 8

/*
 * The first cgroup2 mount of a mountinfo file (/proc/self/mountinfo) into
 * path: /sys/fs/cgroup on a system of cgroup v2 alone, /sys/fs/cgroup/unified
 * on a hybrid one. 0, -ENOENT when there is none (cgroup v1 alone), -errno.
 */
int cgroups__find_mount(const char *mountinfo, char *path, size_t size);

/* The ids of the tree at root (the mount point, or a test's tree). NULL: ENOMEM. */
struct cgroups *cgroups__new(const char *root);
void cgroups__free(struct cgroups *cg);

/*
 * Makes the n ids known: if any is not yet, one walk of the tree names every
 * cgroup it passes; an id the walk does not find is gone (ids are never
 * reused) and stays unnamed. Names known before are kept for the ids asked
 * (a cgroup removed keeps its name); the others are forgotten, so memory is
 * bounded by the tree and n. 0, -ENOMEM (some left unnamed), or -errno of the
 * root's open (nothing named).
 */
int cgroups__learn(struct cgroups *cg, const __u64 *ids, size_t n);

/*
 * From now on ids are named by namer (the kernel), and the tree is not
 * walked: a cgroup's name is its own levels' names, whatever the rest of the
 * tree holds. A path deeper than CGROUP_NAME_HEAD + CGROUP_NAME_TAIL levels
 * has those between left out, marked CGROUPS_ELIDED. A cgroup gone is named
 * by its nearest ancestor still there, "ANCESTOR//cgroup:ID", where the
 * kernel kept its parents; else "cgroup:ID" (model_cgroup_name()).
 */
void cgroups__name_by(struct cgroups *cg, const struct cgroups_namer *namer);

/*
 * An id that could not be named (the walk was cut before it, the kernel
 * failed) is not asked again for retry_ns (a report's interval): 1 s unless set.
 */
void cgroups__set_retry(struct cgroups *cg, __u64 retry_ns);

/* Whether id is known gone: the kernel or a whole walk did not find it. */
bool cgroups__gone(const struct cgroups *cg, __u64 id);

/* The root given to cgroups__new(); NULL for cg NULL. */
const char *cgroups__root(const struct cgroups *cg);

/* The path of id under the root, "/" for the root itself; NULL when not known. */
const char *cgroups__path(const struct cgroups *cg, __u64 id);

/* Walks of the tree so far (tests: one per learn with an id unknown). */
unsigned int cgroups__walks(const struct cgroups *cg);
/* Ids asked of the kernel so far (cgroups__name_by()). */
unsigned int cgroups__asked(const struct cgroups *cg);

/*
 * text (an escaped path: ASCII) cut to width columns: the last components
 * that fit, after "…/" (U+2026, one column); the last component's end when
 * even that does not fit. Returns buf; *columns its width.
 */
const char *cgroups__shorten(const char *text, int width, char *buf, size_t size, int *columns);

/*
 * The stable prefix of a path, what the export labels it by by default: the
 * path up to its first component that ends in ".service" (a systemd unit's
 * subtree is its unit); else without a last component that is a container's
 * (cri-containerd-, docker-, crio- or libpod-<hex>.scope, or a bare 64-hex
 * id), so that a pod is named by its pod slice and a restarted container
 * keeps its series. Returns its length: the prefix is path's first bytes.
 */
size_t cgroups__unit(const char *path);

#endif /* CGROUPS_H */
