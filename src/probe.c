// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/capability.h>

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

int probe__tracefs(const char *dir)
{
	if (is_tracefs(dir))
		return 0;
	if (mount("tracefs", dir, "tracefs", 0, NULL))
		return -errno;
	return 1;
}

/* Leave the system as found: a tracefs drainstat mounted goes away with it. */
void probe__tracefs_release(const char *dir, int mounted)
{
	if (mounted == 1)
		umount2(dir, MNT_DETACH);
}
