// SPDX-License-Identifier: GPL-2.0
/*
 * bpfstats: "name run_time_ns run_cnt" of every loaded BPF program, one a line;
 * what `bpftool prog show` says, for the VM, which has no bpftool. The times
 * count only while kernel.bpf_stats_enabled is 1.
 *
 * The kernel keeps 15 characters of a name (drainstat_fentr); the full one is
 * the program's BTF function name, as bpftool finds it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>

/* The program's full name from its BTF into NAME, or the kernel's short one. */
static void full_name(int fd, const struct bpf_prog_info *info, char *name, size_t size)
{
	struct bpf_func_info func = {};
	struct bpf_prog_info more = {};
	__u32 len = sizeof(more);
	const struct btf_type *t;
	struct btf *btf;

	snprintf(name, size, "%s", info->name);
	if (!info->btf_id || !info->nr_func_info)
		return;
	more.nr_func_info = 1;
	more.func_info_rec_size = sizeof(func);
	more.func_info = (__u64)(unsigned long)&func;
	if (bpf_obj_get_info_by_fd(fd, &more, &len))
		return;
	btf = btf__load_from_kernel_by_id(info->btf_id);
	if (!btf)
		return;
	t = btf__type_by_id(btf, func.type_id);
	if (t)
		snprintf(name, size, "%s", btf__name_by_offset(btf, t->name_off));
	btf__free(btf);
}

static int print_prog(__u32 id)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char name[128];
	int fd, err = 0;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno; /* unloaded meanwhile */
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		goto out;
	}
	full_name(fd, &info, name, sizeof(name));
	printf("%s %llu %llu\n", name[0] ? name : "-", (unsigned long long)info.run_time_ns,
	       (unsigned long long)info.run_cnt);
out:
	close(fd);
	return err;
}

int main(void)
{
	__u32 id = 0;
	int err;

	while (!bpf_prog_get_next_id(id, &id)) {
		err = print_prog(id);
		if (err) {
			fprintf(stderr, "bpfstats: program %u: %s\n", id, strerror(-err));
			return 1;
		}
	}
	if (errno != ENOENT) {
		fprintf(stderr, "bpfstats: listing programs: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
