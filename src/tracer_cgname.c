// SPDX-License-Identifier: GPL-2.0
/*
 * A cgroup named by the kernel: drainstat_name_cgroup, a cgroup iterator,
 * attached to one id at a time (BPF_CGROUP_ITER_SELF_ONLY), gives the names of
 * its path's levels from their kernfs nodes. The link is made with
 * bpf_link_create(), not libbpf's attach: a cgroup gone (-ENOENT) is an
 * answer, not a warning to print.
 */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "drainstat.h" /* before the skeleton: its .bss holds structs of ours */
#include "drainstat.skel.h"
#include "tracer.h"
#include "tracer_int.h"

/* The iterator's records into levels, at most max: how many, or -errno. */
static int read_levels(int fd, struct cgroup_level *levels, int max)
{
	size_t size = (size_t)max * sizeof(*levels), got = 0;
	ssize_t n;

	while (got < size) {
		n = read(fd, (char *)levels + got, size - got);
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (int)(got / sizeof(*levels));
}

int tracer_attach_cgname(struct tracer *t)
{
	t->rmdir_link = bpf_program__attach(t->skel->progs.drainstat_cgroup_rmdir);
	return t->rmdir_link ? 0 : -errno;
}

int tracer__cgroup_parent(struct tracer *t, __u64 id, __u64 *parent)
{
	if (!t->rmdir_link)
		return -ENOENT;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.cgroup_parents), &id, parent))
		return -errno;
	return 0;
}

bool tracer__names_cgroups(const struct tracer *t)
{
	return t->skel && bpf_program__fd(t->skel->progs.drainstat_name_cgroup) >= 0;
}

int tracer__name_cgroup(struct tracer *t, __u64 id, struct cgroup_level *levels, int max)
{
	union bpf_iter_link_info info = {};
	struct bpf_link_create_opts opts = {
	    .sz = sizeof(opts), .iter_info = &info, .iter_info_len = sizeof(info)};
	int link, fd, n;

	if (!tracer__names_cgroups(t))
		return -EOPNOTSUPP;
	info.cgroup.order = BPF_CGROUP_ITER_SELF_ONLY;
	info.cgroup.cgroup_id = id;
	link = bpf_link_create(bpf_program__fd(t->skel->progs.drainstat_name_cgroup), 0,
			       BPF_TRACE_ITER, &opts);
	if (link < 0)
		return -errno; /* -ENOENT: the cgroup is gone */
	fd = bpf_iter_create(link);
	n = fd < 0 ? -errno : read_levels(fd, levels, max);
	if (fd >= 0)
		close(fd);
	close(link);
	return n;
}
