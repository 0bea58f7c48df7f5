// SPDX-License-Identifier: GPL-2.0
/*
 * The bodies that see a drain's works (bpf/works.bpf.h) and its entry and exit
 * (bpf/drain.bpf.h) in raw_tp programs, which the kernel can test-run: for
 * tests/bpf/test_partial.c, a drain whose entry went unseen.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "drainstat.h"
#include "works.bpf.h"
#include "drain_calls.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The task queues the work at address work to target_cpu. */
SEC("raw_tp/sys_enter")
int BPF_PROG(queue_test, __u64 target_cpu, __u64 work)
{
	on_queue(ctx, (int)target_cpu, (struct work_struct *)work);
	return 0;
}

/*
 * The same after the task was preempted since its last queue: a preemption is
 * not a sleep, so its count of voluntary switches is the one that queue saw
 * (the test's task slept meanwhile, to let the time pass).
 */
SEC("raw_tp/sys_enter")
int BPF_PROG(queue_after_preemption_test, __u64 target_cpu, __u64 work)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct drain_state *d = drain_state_of(tid);

	if (d)
		d->last_queue_nvcsw = bpf_get_current_task_btf()->nvcsw;
	on_queue(ctx, (int)target_cpu, (struct work_struct *)work);
	return 0;
}

/* The work at address work starts, on the CPU this runs on. */
SEC("raw_tp/sys_enter")
int BPF_PROG(start_test, __u64 work)
{
	on_start((struct work_struct *)work);
	return 0;
}

/* ... and ends there. */
SEC("raw_tp/sys_exit")
int BPF_PROG(end_test, __u64 work)
{
	on_end((struct work_struct *)work);
	return 0;
}
