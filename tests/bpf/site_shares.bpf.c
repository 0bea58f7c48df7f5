// SPDX-License-Identifier: GPL-2.0
/*
 * The bodies that take new sites (bpf/local.bpf.h, bpf/drain.bpf.h) in raw_tp
 * programs, which the kernel can test-run (the fentry, fexit and kprobe
 * programs that run them in drainstat it cannot): for tests/bpf/test_sites.c,
 * on the calling task.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "drainstat.h"
#include "local.bpf.h"
#include "works.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* A local drain of the task begins, called from caller (0: unknown). */
SEC("raw_tp/sys_enter")
int BPF_PROG(local_enter_test, __u64 caller)
{
	local_enter(ctx, caller, 0);
	return 0;
}

/* The task's local drain in local_calls (seeded, or begun) ends. */
SEC("raw_tp/sys_exit")
int BPF_PROG(local_exit_test)
{
	local_exit();
	return 0;
}

/* A drain begins in the task, seen at its entry: its site_slot (-1, NO_SLOT: none). */
SEC("raw_tp/sys_enter")
int BPF_PROG(drain_begin_test)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct drain_state *d = drain_state_get((__u32)pid_tgid);

	if (!d)
		return 0;
	drain_begin(ctx, d, pid_tgid, bpf_ktime_get_ns(), NULL, 0, 0, false, true);
	return (int)d->site_slot;
}

/* A drain work ends on this CPU (the work state seeded in works). */
SEC("raw_tp/workqueue_execute_end")
int BPF_PROG(work_end_test, struct work_struct *work)
{
	on_end(work);
	return 0;
}
