// SPDX-License-Identifier: GPL-2.0
/*
 * The baseline for `make bench`: empty programs on the tracepoints and drain
 * functions drainstat uses, so that the cost of drainstat's programs can be read
 * against the cost of merely having a BPF program there; and the floor_ programs,
 * which add only the clock reads that timing a fadvise call cannot do without.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "drainstat.h"

char LICENSE[] SEC("license") = "GPL";

/* A program that does nothing; head: its name and arguments, as BPF_PROG() takes them. */
#define EMPTY(sec, head)                                                                           \
	SEC(sec) int head                                                                          \
	{                                                                                          \
		return 0;                                                                          \
	}

EMPTY("tp_btf/workqueue_queue_work",
      BPF_PROG(empty_queue_work, int req_cpu, struct pool_workqueue *pwq, struct work_struct *work))
EMPTY("tp_btf/workqueue_execute_start", BPF_PROG(empty_execute_start, struct work_struct *work))
EMPTY("raw_tp/workqueue_execute_end",
      BPF_PROG(empty_execute_end, struct work_struct *work, work_func_t function))
EMPTY("tp_btf/ipi_send_cpu",
      BPF_PROG(empty_ipi_send_cpu, const unsigned int cpu, unsigned long callsite, void *callback))

/* tracepoint/ programs, as drainstat's: the syscall tracepoints have no tp_btf form */
EMPTY("tracepoint/syscalls/sys_enter_" DRAINSTAT_FADVISE_SYSCALL, empty_fadvise_enter(void *ctx))
EMPTY("tracepoint/syscalls/sys_exit_" DRAINSTAT_FADVISE_SYSCALL, empty_fadvise_exit(void *ctx))

/*
 * The floor under timing a DONTNEED call: a program at its entry and one at its
 * exit, each reading the clock once (kept in a global, as a timer keeps it).
 * empty_loader --floor loads these in place of the empty ones; bench/run holds
 * drainstat's BPF time per tree walk to them and the empty workqueue programs.
 */
__u64 floor_enter_ns;
__u64 floor_exit_ns;

SEC("tracepoint/syscalls/sys_enter_" DRAINSTAT_FADVISE_SYSCALL)
int floor_fadvise_enter(void *ctx)
{
	floor_enter_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_" DRAINSTAT_FADVISE_SYSCALL)
int floor_fadvise_exit(void *ctx)
{
	floor_exit_ns = bpf_ktime_get_ns();
	return 0;
}

/*
 * The drain hooks, named empty_<x> after drainstat_<x> so that bench/vm.sh can
 * pair them. empty_loader loads one set: fentry where the kernel allows it, the
 * kprobes (attached by name) otherwise.
 */
EMPTY("fentry/lru_add_drain_all", BPF_PROG(empty_fentry_drain_all))
EMPTY("fexit/lru_add_drain_all", BPF_PROG(empty_fexit_drain_all))
EMPTY("fentry/lru_add_drain", BPF_PROG(empty_fentry_local))
EMPTY("fexit/lru_add_drain", BPF_PROG(empty_fexit_local))
EMPTY("kprobe", BPF_KPROBE(empty_kprobe_drain_all))
EMPTY("kretprobe", BPF_KRETPROBE(empty_kretprobe_drain))
EMPTY("kprobe", BPF_KPROBE(empty_kprobe_local))
EMPTY("kretprobe", BPF_KRETPROBE(empty_kretprobe_local))
