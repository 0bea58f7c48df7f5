// SPDX-License-Identifier: GPL-2.0
/*
 * drainstat's fadvise bookkeeping (bpf/fadvise.bpf.h) in raw_tp programs,
 * which the kernel can test-run (the syscall tracepoints' programs it cannot).
 * Each takes the calling task's tid as its first argument, so that a test
 * plays tasks whose tids share a slot, on the CPUs it chooses.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "drainstat.h"
#include "fadvise.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The task's call starts, with advice. */
SEC("raw_tp/sys_enter")
int BPF_PROG(fadvise_enter_test, __u64 tid, __u64 advice)
{
	fadvise_enter(tid, (__u32)advice);
	return 0;
}

/* The task's call ends. */
SEC("raw_tp/sys_exit")
int BPF_PROG(fadvise_exit_test, __u64 tid)
{
	fadvise_exit(tid);
	return 0;
}

/* A drain starts in the task: 1 if it found the task's call (and marked a DONTNEED escalated). */
SEC("raw_tp/sys_enter")
int BPF_PROG(fadvise_drain_test, __u64 tid)
{
	return mark_escalation(fadvise_call_of((__u32)tid)) ? 1 : 0;
}
