// SPDX-License-Identifier: GPL-2.0
/*
 * The bodies that see a drain's CPUs (bpf/own.bpf.h, bpf/drain.bpf.h) in
 * raw_tp programs, which the kernel can test-run (the fentry, fexit and kprobe
 * programs that run them in drainstat it cannot): for
 * tests/bpf/test_in_place.c, on the calling task.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "drainstat.h"
/* the drain's own local drain finds the caller's CPU batched */
#define OWN_CPU_BATCHED() 1U
#include "own.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * A drain begins in the task, seen at its entry of lru_add_drain_all(), as
 * drain_enter() begins one (which reads its caller from registers a raw_tp
 * program has not).
 */
SEC("raw_tp/sys_enter")
int BPF_PROG(drain_enter_test)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct drain_state *d = drain_state_get((__u32)pid_tgid);

	if (!d)
		return 0;
	drain_begin(ctx, d, pid_tgid, bpf_ktime_get_ns(), NULL, 0, 0, false, true);
	d->in_call = CALL_API;
	return 0;
}

/* The task calls lru_add_drain_cpu(cpu). */
SEC("raw_tp/sys_enter")
int BPF_PROG(own_enter_test, __u64 cpu)
{
	own_enter((int)cpu);
	return 0;
}

/* ... and returns from it. */
SEC("raw_tp/sys_exit")
int BPF_PROG(own_exit_test)
{
	own_exit();
	return 0;
}

/* The task's drain returns. */
SEC("raw_tp/sys_exit")
int BPF_PROG(drain_exit_test)
{
	drain_exit(ctx, CALL_API, false);
	return 0;
}
