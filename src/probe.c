// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/btf.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "hooks.h"
#include "probe.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#define TRACEFS_MAGIC 0x74726163
/* Where libbpf looks for the kernel's BTF first: where the kernel puts it. */
#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/* 1 if this task's effective set holds cap, 0 if not, -errno if capget fails. */
int probe__has_cap(int cap)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	return !!(data[cap / 32].effective & (1U << (cap % 32)));
}

int probe__privileges(void)
{
	int admin = probe__has_cap(CAP_SYS_ADMIN);

	if (admin)
		return admin < 0 ? admin : 0;
	return probe__has_cap(CAP_BPF) > 0 && probe__has_cap(CAP_PERFMON) > 0 ? 0 : -EPERM;
}

int probe__btf(const char *path)
{
	struct btf_header h;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, &h, sizeof(h));
	close(fd);
	if (n < 0)
		return -errno;
	/* libbpf's load would fail on it later, said as a load failure */
	if ((size_t)n < sizeof(h) ||
	    (h.magic != BTF_MAGIC && h.magic != __builtin_bswap16(BTF_MAGIC)))
		return -ENODATA;
	return 0;
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
int probe__mount_tracefs(const char *dir)
{
	if (is_tracefs(dir))
		return 0;
	if (unshare(CLONE_NEWNS) || mount("none", "/", "none", MS_REC | MS_SLAVE, NULL) ||
	    mount("tracefs", dir, "tracefs", 0, NULL))
		return -errno;
	return 1;
}

/*
 * The names the facts are about, besides the required drain hook's (hooks.c).
 * A tp_btf program attaches through its tracepoint's btf_trace_ typedef.
 */
#define IPI_TP_TYPEDEF "btf_trace_ipi_send_cpu"
/*
 * The "Queue PerCPU Work" series (Marcelo Tosatti, 2026; CONFIG_QPW, qpw=):
 * with it enabled, lru_add_drain_all() runs lru_add_drain_per_cpu on the
 * caller's CPU under the target CPU's lock, and queues no work. Its per-CPU
 * works are of this type, whether or not CONFIG_QPW is on: the kernel's
 * lookup gives an id, not the members that would tell.
 */
#define QPW_STRUCT "qpw_struct"

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

/* A lookup's error: none for a name the kernel has no BTF for. */
static int lookup_error(int id)
{
	return id < 0 && id != -ENOENT ? id : 0;
}

/* The facts from the kernel's own lookups: no BTF parsed in user space. */
static int kernel_btf_facts(struct btf_facts *f)
{
	struct bpf_prog_load_opts opts = {.sz = sizeof(opts), .prog_flags = BPF_F_SLEEPABLE};
	int fd, ipi, qpw, err;

	fd = bpf_prog_load(BPF_PROG_TYPE_SYSCALL, "btf_lookup", "GPL", btf_lookup_insns,
			   sizeof(btf_lookup_insns) / sizeof(btf_lookup_insns[0]), &opts);
	if (fd < 0)
		return -errno;
	f->drain_all_id = kernel_btf_id(fd, hooks__required()->name, BTF_KIND_FUNC);
	ipi = kernel_btf_id(fd, IPI_TP_TYPEDEF, BTF_KIND_TYPEDEF);
	qpw = kernel_btf_id(fd, QPW_STRUCT, BTF_KIND_STRUCT);
	err = lookup_error(f->drain_all_id);
	if (!err)
		err = lookup_error(ipi);
	if (!err)
		err = lookup_error(qpw);
	f->ipi_send_cpu = ipi > 0;
	f->qpw = qpw > 0;
	close(fd);
	return err;
}

void probe__btf_facts_of_file(const char *path, struct btf_facts *f)
{
	struct btf *btf;

	*f = (struct btf_facts){.parsed = true};
	/* btf__parse() keeps its errno */
	btf = btf__parse(path, NULL);
	if (!btf) {
		f->err = -errno;
		f->drain_all_id = f->err;
		return;
	}
	f->drain_all_id = btf__find_by_name_kind(btf, hooks__required()->name, BTF_KIND_FUNC);
	f->ipi_send_cpu = btf__find_by_name_kind(btf, IPI_TP_TYPEDEF, BTF_KIND_TYPEDEF) > 0;
	f->qpw = btf__find_by_name_kind(btf, QPW_STRUCT, BTF_KIND_STRUCT) > 0;
	btf__free(btf);
}

void probe__btf_facts(struct btf_facts *f)
{
	int err;

	*f = (struct btf_facts){};
	err = kernel_btf_facts(f);
	if (!err)
		return;
	/* parsing would run short too, and say less */
	if (probe__short_of_resources(err)) {
		*f = (struct btf_facts){.err = err, .drain_all_id = err};
		return;
	}
	/* before 5.14, or refused: parse the BTF here */
	probe__btf_facts_of_file(VMLINUX_BTF, f);
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

/* "#1 SMP PREEMPT_RT Debian 6.12...": init/version-timestamp.c's UTS_VERSION. */
bool probe__preempt_rt(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.version, " PREEMPT_RT ");
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

int probe__btf_parse(void)
{
	struct btf *vmlinux = btf__parse(VMLINUX_BTF, NULL);

	if (!vmlinux)
		return -errno;
	btf__free(vmlinux);
	return 0;
}

int probe__sysctl(const char *name, int *value)
{
	char path[128], *p;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	for (p = path + strlen("/proc/sys/"); *p; p++)
		if (*p == '.')
			*p = '/';
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fscanf(f, "%d", value) != 1)
		err = -EINVAL;
	fclose(f);
	return err;
}

/*
 * Debian's (and Android's) kernels take kernel.perf_event_paranoid above 2 to
 * mean: perf_event_open() only with CAP_SYS_ADMIN, CAP_PERFMON is not enough.
 * Upstream treats 3 as 2, so this explains a refusal, it never predicts one.
 */
int probe__perf_restricted(int err)
{
	int paranoid;

	if (err != -EACCES && err != -EPERM)
		return 0;
	if (probe__sysctl("kernel.perf_event_paranoid", &paranoid) || paranoid <= 2)
		return 0;
	return probe__has_cap(CAP_SYS_ADMIN) ? 0 : paranoid;
}

bool probe__short_of_resources(int err)
{
	return err == -EMFILE || err == -ENFILE || err == -ENOMEM;
}

unsigned long long probe__fds_limit(void)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_NOFILE, &rl) ? ~0ULL : (unsigned long long)rl.rlim_cur;
}

/* Without /proc, or an fd to spare to read it: each fd asked about (the first 64 Ki). */
static unsigned int fds_in_use_by_fcntl(void)
{
	unsigned int n = 0;
	int fd;

	for (fd = 0; fd < 65536; fd++)
		n += fcntl(fd, F_GETFD) != -1;
	return n;
}

/*
 * Those above the limit too: raised to take them in, the limit would hold
 * them, and the need it is compared with stays a need for every limit.
 */
unsigned int probe__fds_in_use(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *d;
	unsigned int n = 0;
	char *end;
	long fd;

	if (!dir)
		return fds_in_use_by_fcntl();
	while ((d = readdir(dir))) {
		fd = strtol(d->d_name, &end, 10);
		n += !*end && end != d->d_name && fd != dirfd(dir);
	}
	closedir(dir);
	return n;
}

/* Where a cgroup hierarchy is mounted, and the cgroup path its root stands for. */
struct cgroup_mount {
	char dir[256];
	char root[256];
};

/* The comma-separated list has word in it. */
static bool has_word(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p;

	for (p = list; (p = strstr(p, word)); p += len)
		if ((p == list || p[-1] == ',') &&
		    (!p[len] || p[len] == ',' || p[len] == ' ' || p[len] == '\n'))
			return true;
	return false;
}

/* The memory controller's v1 mount, else the v2 one: 1 for v1, 2 for v2, -ENOENT. */
static int memory_mount(struct cgroup_mount *m)
{
	char line[1024], root[256], dir[256], type[32], opts[512];
	int version = -ENOENT;
	const char *sep;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	while (version != 1 && fgets(line, sizeof(line), f)) {
		sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %255s %255s", root, dir) != 2 ||
		    sscanf(sep, " - %31s %*s %511s", type, opts) != 2)
			continue;
		if (!strcmp(type, "cgroup") && has_word(opts, "memory"))
			version = 1;
		else if (!strcmp(type, "cgroup2") && version < 0)
			version = 2;
		else
			continue;
		snprintf(m->dir, sizeof(m->dir), "%s", dir);
		snprintf(m->root, sizeof(m->root), "%s", root);
	}
	fclose(f);
	return version;
}

/* This process's cgroup directory in the hierarchy m of that version. */
static int memory_cgroup(const struct cgroup_mount *m, int version, char *path, size_t size)
{
	char line[1024], *ctrl, *cg;
	size_t root = strcmp(m->root, "/") ? strlen(m->root) : 0;
	int err = -ENOENT;
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ctrl = strchr(line, ':');
		cg = ctrl ? strchr(ctrl + 1, ':') : NULL;
		if (!cg)
			continue;
		*cg++ = '\0';
		if (version == 1 ? !has_word(ctrl + 1, "memory") : !!ctrl[1])
			continue;
		/* a path outside the mount's root (another namespace's) is not ours to read */
		if (strncmp(cg, m->root, root) || (cg[root] && cg[root] != '/'))
			continue;
		snprintf(path, size, "%s%s", m->dir, cg + root);
		err = 0;
	}
	fclose(f);
	return err;
}

/* The first number in dir/file after key (NULL: at the start); "max" is ~0ULL. */
static int read_number(const char *dir, const char *file, const char *key, __u64 *value)
{
	char path[512], line[256], name[64];
	unsigned long long v;
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		if (!key && !strncmp(line, "max", 3))
			v = ~0ULL;
		else if (key ? sscanf(line, "%63s %llu", name, &v) != 2 || strcmp(name, key)
			     : sscanf(line, "%llu", &v) != 1)
			continue;
		*value = v;
		err = 0;
	}
	fclose(f);
	return err;
}

/* A cgroup's limit and the memory under it that is free or cheap to reclaim: 0 or -errno. */
static int cgroup_room(const char *dir, int version, struct memory_room *r)
{
	bool v1 = version == 1;
	__u64 usage, cache = 0;

	if (read_number(dir, v1 ? "memory.limit_in_bytes" : "memory.max", NULL, &r->limit) ||
	    read_number(dir, v1 ? "memory.usage_in_bytes" : "memory.current", NULL, &usage))
		return -ENOENT;
	/* v1 says "no limit" with a number: the largest page counter */
	if (r->limit >= 1ULL << 60) {
		*r = (struct memory_room){~0ULL, ~0ULL};
		return 0;
	}
	read_number(dir, "memory.stat", v1 ? "total_inactive_file" : "inactive_file", &cache);
	usage -= cache < usage ? cache : usage;
	r->free = usage < r->limit ? r->limit - usage : 0;
	return 0;
}

/*
 * Every cgroup from this process's up to the hierarchy's root limits it (v1
 * with use_hierarchy, v2 always): the tightest one is what is left.
 */
void probe__memory_room(struct memory_room *room)
{
	struct cgroup_mount m;
	struct memory_room r;
	char dir[768], *slash;
	int version = memory_mount(&m);

	*room = (struct memory_room){~0ULL, ~0ULL};
	if (version < 0 || memory_cgroup(&m, version, dir, sizeof(dir)))
		return;
	for (;;) {
		if (!cgroup_room(dir, version, &r) && r.free < room->free)
			*room = r;
		slash = strrchr(dir, '/');
		if (strlen(dir) <= strlen(m.dir) || !slash)
			break;
		*slash = '\0';
	}
}

unsigned long long probe__address_space_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_AS, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return ~0ULL;
	return (unsigned long long)rl.rlim_cur;
}
