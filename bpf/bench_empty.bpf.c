// SPDX-License-Identifier: GPL-2.0
/*
 * The baseline for `make bench`: empty programs on the tracepoints drainstat
 * uses, so that the cost of drainstat's filter path can be read against the
 * cost of merely having a BPF program there.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/workqueue_queue_work")
int BPF_PROG(empty_queue_work, int req_cpu, struct pool_workqueue *pwq, struct work_struct *work)
{
	return 0;
}

SEC("tp_btf/workqueue_execute_start")
int BPF_PROG(empty_execute_start, struct work_struct *work)
{
	return 0;
}

SEC("raw_tp/workqueue_execute_end")
int BPF_PROG(empty_execute_end, struct work_struct *work, work_func_t function)
{
	return 0;
}

SEC("tp_btf/ipi_send_cpu")
int BPF_PROG(empty_ipi_send_cpu, const unsigned int cpu, unsigned long callsite, void *callback)
{
	return 0;
}
