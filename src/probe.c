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
#include <bpf/btf.h>
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
 * The names the facts are about. A tp_btf program attaches through its
 * tracepoint's btf_trace_ typedef.
 */
#define DRAIN_ALL_FN   "lru_add_drain_all"
#define IPI_TP_TYPEDEF "btf_trace_ipi_send_cpu"

/* A BTF lookup by name that the kernel does: the context of btf_lookup_insns. */
struct btf_lookup {
	char name[64]; /* NUL-padded */
	__u32 kind;
	__u32 pad;
};

/*
 * A sleepable syscall program (5.14 and later) that copies the name to its
 * stack and returns bpf_btf_find_by_name_kind(name, 64, kind, 0): the id (with
 * the BTF object's fd, 0 for vmlinux, in the upper half), or -errno.
 */
#define LDX_DW(dst, src, o)                                                                        \
	{                                                                                          \
		.code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = dst, .src_reg = src, .off = o       \
	}
#define STX_DW(dst, src, o)                                                                        \
	{                                                                                          \
		.code = BPF_STX | BPF_MEM | BPF_DW, .dst_reg = dst, .src_reg = src, .off = o       \
	}
#define COPY_NAME(i) LDX_DW(BPF_REG_2, BPF_REG_6, (i)*8), STX_DW(BPF_REG_10, BPF_REG_2, (i)*8 - 64)
static const struct bpf_insn btf_lookup_insns[] = {
    {.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_6, .src_reg = BPF_REG_1},
    COPY_NAME(0),
    COPY_NAME(1),
    COPY_NAME(2),
    COPY_NAME(3),
    COPY_NAME(4),
    COPY_NAME(5),
    COPY_NAME(6),
    COPY_NAME(7),
    {.code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_3, .src_reg = BPF_REG_6, .off = 64},
    {.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_10},
    {.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_1, .imm = -64},
    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 64},
    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4, .imm = 0},
    {.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_btf_find_by_name_kind},
    {.code = BPF_JMP | BPF_EXIT},
};

/*
 * name's BTF id in vmlinux, -ENOENT if it has none, another -errno if the run
 * failed. The names asked for are vmlinux's: a module's would come with an fd
 * in the upper half, which the 32-bit retval drops.
 */
static int kernel_btf_id(int prog_fd, const char *name, __u32 kind)
{
	struct btf_lookup ctx = {.kind = kind};
	struct bpf_test_run_opts run = {
	    .sz = sizeof(run), .ctx_in = &ctx, .ctx_size_in = sizeof(ctx)};

	snprintf(ctx.name, sizeof(ctx.name), "%s", name);
	if (bpf_prog_test_run_opts(prog_fd, &run))
		return -errno;
	return (int)run.retval;
}

/* The facts from the kernel's own lookups: no BTF parsed in user space. */
static int kernel_btf_facts(struct btf_facts *f)
{
	struct bpf_prog_load_opts opts = {.sz = sizeof(opts), .prog_flags = BPF_F_SLEEPABLE};
	int fd, ipi, err = 0;

	fd = bpf_prog_load(BPF_PROG_TYPE_SYSCALL, "btf_lookup", "GPL", btf_lookup_insns,
			   sizeof(btf_lookup_insns) / sizeof(btf_lookup_insns[0]), &opts);
	if (fd < 0)
		return -errno;
	f->drain_all_id = kernel_btf_id(fd, DRAIN_ALL_FN, BTF_KIND_FUNC);
	ipi = kernel_btf_id(fd, IPI_TP_TYPEDEF, BTF_KIND_TYPEDEF);
	if ((f->drain_all_id < 0 && f->drain_all_id != -ENOENT) || (ipi < 0 && ipi != -ENOENT))
		err = -EIO;
	f->ipi_send_cpu = ipi > 0;
	f->err = 0;
	f->parsed = false;
	close(fd);
	return err;
}

void probe__btf_facts(struct btf_facts *f)
{
	struct btf *vmlinux;

	if (!kernel_btf_facts(f))
		return;
	/* before 5.14, or refused: parse the BTF here */
	f->parsed = true;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		f->err = -errno;
		f->drain_all_id = f->err;
		f->ipi_send_cpu = false;
		return;
	}
	f->err = 0;
	f->drain_all_id = btf__find_by_name_kind(vmlinux, DRAIN_ALL_FN, BTF_KIND_FUNC);
	f->ipi_send_cpu = btf__find_by_name_kind(vmlinux, IPI_TP_TYPEDEF, BTF_KIND_TYPEDEF) > 0;
	btf__free(vmlinux);
}

/*
 * Whether an fentry program can attach: a two-instruction program loaded and
 * attached, far cheaper than failing to load the whole object. Kernels without
 * BPF trampolines, or with ftrace locked down, refuse it.
 */
int probe__fentry(int btf_id)
{
	struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	struct bpf_prog_load_opts opts = {.sz = sizeof(opts),
					  .expected_attach_type = BPF_TRACE_FENTRY};
	int prog_fd, link_fd, err = 0;

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
