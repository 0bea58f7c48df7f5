// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "probe.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#define TRACEFS_MAGIC 0x74726163

static bool has_cap(const struct __user_cap_data_struct *data, int cap)
{
	return data[cap / 32].effective & (1U << (cap % 32));
}

int probe__privileges(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	if (has_cap(data, CAP_SYS_ADMIN))
		return 0;
	return has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON) ? 0 : -EPERM;
}

int probe__btf(const char *path)
{
	return access(path, R_OK) ? -errno : 0;
}

static bool is_tracefs(const char *dir)
{
	struct statfs st;

	return !statfs(dir, &st) && st.f_type == TRACEFS_MAGIC;
}

/*
 * tracefs is mounted in a mount namespace of drainstat's own, a slave of the
 * caller's (mounts made outside still reach it): it goes away with the process,
 * however that ends, and nobody else sees it. unshare(CLONE_NEWNS) needs a
 * single-threaded process, as drainstat is during setup.
 */
int probe__tracefs(const char *dir)
{
	if (is_tracefs(dir))
		return 0;
	if (unshare(CLONE_NEWNS) || mount("none", "/", "none", MS_REC | MS_SLAVE, NULL) ||
	    mount("tracefs", dir, "tracefs", 0, NULL))
		return -errno;
	return 1;
}

/*
 * Whether an fentry program can attach to fn: a two-instruction program loaded
 * and attached, far cheaper than failing to load the whole object. Kernels
 * without BPF trampolines, or with ftrace locked down, refuse it.
 */
int probe__fentry(const char *fn)
{
	struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	struct bpf_prog_load_opts opts = {.sz = sizeof(opts),
					  .expected_attach_type = BPF_TRACE_FENTRY};
	int btf_id, prog_fd, link_fd, err = 0;

	btf_id = libbpf_find_vmlinux_btf_id(fn, BPF_TRACE_FENTRY);
	if (btf_id < 0)
		return btf_id;
	opts.attach_btf_id = (__u32)btf_id;
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "probe_fentry", "GPL", insns, 2, &opts);
	if (prog_fd < 0)
		return -errno;
	link_fd = bpf_link_create(prog_fd, 0, BPF_TRACE_FENTRY, NULL);
	if (link_fd < 0)
		err = -errno;
	else
		close(link_fd);
	close(prog_fd);
	return err;
}

/* Whether kprobes exist at all: the kprobe PMU, or the legacy tracefs interface. */
int probe__kprobes(const char *tracefs)
{
	char path[256];

	if (!access("/sys/bus/event_source/devices/kprobe/type", R_OK))
		return 0;
	snprintf(path, sizeof(path), "%s/kprobe_events", tracefs);
	return access(path, W_OK) ? -ENOENT : 0;
}
