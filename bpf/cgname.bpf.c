// SPDX-License-Identifier: GPL-2.0
/*
 * A cgroup named by the kernel: user space attaches this iterator to one
 * cgroup id (BPF_CGROUP_ITER_SELF_ONLY, since 6.1) when a report or a -T event
 * needs a name it does not know, and reads the names of the cgroup's levels
 * from their kernfs nodes. No directory is read: nothing a user makes under a
 * delegated subtree (permissions, lengths, numbers of cgroups) can hide a
 * name or make it cost more than its own levels. A cgroup removed before it
 * is asked for leaves its parent in cgroup_parents (drainstat_cgroup_rmdir):
 * it is named by its nearest ancestor still there. Linked into drainstat's
 * object (see running.bpf.c), loaded apart from nothing: a kernel that refuses
 * it loses only this (the walk of the tree names cgroups then).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "drainstat.h"

char LICENSE[] SEC("license") = "GPL";

/* A cgroup removed: its id's parent's id, the oldest forgotten first. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CGROUP_PARENTS_MAX);
	__type(key, __u64);
	__type(value, __u64);
} cgroup_parents SEC(".maps");

/*
 * The cgroup at depth level of cgrp's path: cgroup->ancestors[] (since 6.0),
 * indexed by depth, the root at 0.
 */
static __always_inline struct cgroup *ancestor_at(struct cgroup *cgrp, __u32 level)
{
	__u64 off = bpf_core_field_offset(cgrp->ancestors);
	struct cgroup *a = NULL;

	bpf_probe_read_kernel(&a, sizeof(a), (char *)cgrp + off + (__u64)level * sizeof(a));
	return a;
}

/* The depth of the i-th record written: the head's levels, then the tail's. */
static __always_inline __u32 level_of(__u32 i, __u32 depth)
{
	__u32 tail = depth > CGROUP_NAME_HEAD + CGROUP_NAME_TAIL ? depth - CGROUP_NAME_TAIL + 1
								 : CGROUP_NAME_HEAD + 1;

	return i < CGROUP_NAME_HEAD ? i + 1 : tail + i - CGROUP_NAME_HEAD;
}

/*
 * A cgroup of the unified hierarchy (hierarchy_id 0) removed: its parent
 * kept, for a drain of it that a report names only after. On rmdir, a path
 * no workqueue event takes.
 */
SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(drainstat_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	__u32 level = (__u32)BPF_CORE_READ(cgrp, level);
	__u64 id, parent;

	if (BPF_CORE_READ(cgrp, root, hierarchy_id) != 0 || !level)
		return 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	parent = BPF_CORE_READ(ancestor_at(cgrp, level - 1), kn, id);
	bpf_map_update_elem(&cgroup_parents, &id, &parent, BPF_ANY);
	return 0;
}

SEC("iter/cgroup")
int drainstat_name_cgroup(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup, *a;
	struct cgroup_level rec;
	struct kernfs_node *kn;
	__u32 depth, i;
	long n;

	if (!cgrp)
		return 0;
	depth = (__u32)BPF_CORE_READ(cgrp, level);
	for (i = 0; i < CGROUP_NAME_HEAD + CGROUP_NAME_TAIL; i++) {
		rec.level = level_of(i, depth);
		if (rec.level > depth)
			break;
		a = ancestor_at(cgrp, rec.level);
		kn = BPF_CORE_READ(a, kn);
		rec.id = BPF_CORE_READ(kn, id);
		n = bpf_probe_read_kernel_str(rec.name, sizeof(rec.name), BPF_CORE_READ(kn, name));
		rec.len = n > 0 ? (__u32)n - 1 : 0;
		bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	}
	return 0;
}
