/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A drain's entry and exit as raw_tp programs the kernel can test-run, for the
 * BPF tests' own objects (in_place.bpf.c, partial.bpf.c), on the calling task.
 */
#ifndef TESTS_DRAIN_CALLS_BPF_H
#define TESTS_DRAIN_CALLS_BPF_H

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

/* The task's drain returns. */
SEC("raw_tp/sys_exit")
int BPF_PROG(drain_exit_test)
{
	drain_exit(ctx, CALL_API, false);
	return 0;
}

#endif /* TESTS_DRAIN_CALLS_BPF_H */
