// SPDX-License-Identifier: GPL-2.0
/*
 * What runs on a CPU that holds a drain work. User space runs this (a test
 * run on that CPU: an IPI) only when a report is made and only for CPUs whose
 * drain work has not started: nothing here runs on the hot paths, hence a
 * file of its own, apart from drainstat.bpf.c's per-event programs; the
 * Makefile links both into one object, so that libbpf parses the kernel's BTF
 * once at load. The IPI interrupts whatever runs there, so current is that
 * task. It reads the task and nothing of drainstat's: no map is shared.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "drainstat.h"

char LICENSE[] SEC("license") = "GPL";

/* include/linux/sched.h: the same bits from 5.10 to 6.18 */
#define PF_WQ_WORKER 0x00000020
#define PF_KTHREAD   0x00200000

struct running_task running_now; /* read by user space after each run */

/* rt_priority for the real-time policies, nice for the others. */
static __always_inline __s32 priority_of(const struct task_struct *p, __u32 policy)
{
	if (policy == 1 || policy == 2) /* SCHED_FIFO, SCHED_RR */
		return (__s32)p->rt_priority;
	return p->static_prio - 120;
}

/*
 * Now in the runqueue's clock, that of sched_info.last_arrival: rq->clock,
 * updated at each tick and switch. Without group scheduling the task has no
 * path to its runqueue; the time of its last accounting (exec_start, also at
 * each tick) is that clock too where IRQ and steal time are not accounted.
 */
static __always_inline __u64 rq_clock_of(const struct task_struct *p)
{
	if (bpf_core_field_exists(p->se.cfs_rq))
		return BPF_CORE_READ(p, se.cfs_rq, rq, clock);
	return BPF_CORE_READ(p, se.exec_start);
}

SEC("raw_tp")
int drainstat_running(void *ctx)
{
	struct task_struct *p = bpf_get_current_task_btf();
	struct running_task r = {.cpu = bpf_get_smp_processor_id(), .flags = RUNNING_KNOWN};
	__u64 now, since;

	r.cgroup_id = bpf_get_current_cgroup_id();
	r.tid = (__u32)p->pid;
	r.tgid = (__u32)p->tgid;
	if (!r.tid)
		r.flags |= RUNNING_IDLE;
	if (p->flags & PF_KTHREAD)
		r.flags |= RUNNING_KTHREAD;
	if (p->flags & PF_WQ_WORKER)
		r.flags |= RUNNING_WORKER;
	r.policy = p->policy;
	r.prio = priority_of(p, r.policy);
	bpf_probe_read_kernel_str(r.comm, sizeof(r.comm), p->comm);
	if (bpf_core_field_exists(p->sched_info.last_arrival)) {
		since = p->sched_info.last_arrival;
		now = rq_clock_of(p);
		if (since && since <= now) {
			r.running_ns = now - since;
			r.flags |= RUNNING_SINCE;
		}
	}
	running_now = r;
	return 0;
}
