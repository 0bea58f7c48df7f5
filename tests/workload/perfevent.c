// SPDX-License-Identifier: GPL-2.0
/*
 * perfevent: does the kernel let this process open a tracepoint as a perf
 * event, as a BPF tracepoint or kprobe program's attach does? The tests' truth
 * for a refusal that drainstat must explain (Debian's kernels leave
 * perf_event_open() to CAP_SYS_ADMIN while kernel.perf_event_paranoid is above 2).
 *
 *   perfevent CATEGORY/EVENT      (for example syscalls/sys_enter_fadvise64)
 *
 * It opens the event of tracefs (/sys/kernel/tracing, mounted) on CPU 0 for every
 * process, as libbpf does, and closes it.
 *
 * Exit codes: 0 opened, 77 refused (EACCES or EPERM), 64 usage, 1 another error
 * (one line on stderr).
 */
#define _GNU_SOURCE
#define WORKLOAD_NAME "perfevent"
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include "workload.h"

#define EXIT_REFUSED 77

static void usage(FILE *f)
{
	print_usage(f, "CATEGORY/EVENT", NULL, 0, "");
}

static int event_id(const char *event, unsigned long long *id)
{
	char path[256];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", event);
	f = fopen(path, "re");
	if (!f)
		return runtime_error("open", path, -errno);
	if (fscanf(f, "%llu", id) != 1)
		err = runtime_error("read", path, -EINVAL);
	fclose(f);
	return err;
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr = {.size = sizeof(attr), .type = PERF_TYPE_TRACEPOINT};
	unsigned long long id;
	long fd;

	if (argc != 2 || !strchr(argv[1], '/')) {
		usage_error("expected one CATEGORY/EVENT");
		return EXIT_USAGE;
	}
	if (event_id(argv[1], &id))
		return 1;
	attr.config = id;
	fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM))
		return EXIT_REFUSED;
	if (fd < 0)
		return runtime_error("perf_event_open", argv[1], -errno);
	close((int)fd);
	return 0;
}
