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
#include "drain_calls.bpf.h"

char LICENSE[] SEC("license") = "GPL";

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
