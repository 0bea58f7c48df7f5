// SPDX-License-Identifier: GPL-2.0
/*
 * drainstat's kernel side: follows the work items of lru_add_drain_all() from
 * queue to end, groups them into drains, and aggregates per site, per target CPU
 * and per fadvise advice in maps that user space reads once per interval.
 * Nothing per event crosses to user space.
 *
 * Where the drain's entry and exit are visible (full mode: fentry/fexit;
 * kprobe mode: kprobe/kretprobe) a drain is exactly one call; in tracepoint
 * mode it is inferred from the works. This file is the list of what is hooked:
 * thin wrappers per attach type around one body each, which lives in the
 * header of its concern (works, drain, local, fadvise .bpf.h); user space
 * loads the ones its mode uses.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "drainstat.h"
#include "fadvise.bpf.h"
#include "local.bpf.h"
#include "own.bpf.h"
#include "works.bpf.h"
#include "inflight.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * The filter path: every workqueue event on the system comes through here, so
 * it is one load (the work's function, on the line the queueing just wrote)
 * and one compare with an immediate (drain_work_fn()) before returning. The
 * bodies are functions of their own (noinline): the programs then save no
 * registers and set up no stack frame of the bodies' size on that path, which
 * is what an event that is not a drain pays (1.5x to 1.9x an empty program's
 * time with the bodies inlined; doc/performance-history.md).
 */
static __noinline int drain_work_queued(void *ctx, int req_cpu, struct work_struct *work)
{
	on_queue(ctx, req_cpu, work);
	return 0;
}

static __noinline int drain_work_started(struct work_struct *work)
{
	on_start(work);
	return 0;
}

static __noinline int drain_work_ended(struct work_struct *work)
{
	on_end(work);
	return 0;
}

SEC("tp_btf/workqueue_queue_work")
int BPF_PROG(drainstat_queue_work, int req_cpu, struct pool_workqueue *pwq,
	     struct work_struct *work)
{
	if ((__u64)work->func != drain_work_fn())
		return 0;
	/* req_cpu: queue_work_on()'s cpu, the target of a per-CPU drain work */
	return drain_work_queued(ctx, req_cpu, work);
}

SEC("tp_btf/workqueue_execute_start")
int BPF_PROG(drainstat_execute_start, struct work_struct *work)
{
	if ((__u64)work->func != drain_work_fn())
		return 0;
	return drain_work_started(work);
}

/*
 * The work may be freed by now, hence the function argument. raw_tp, not
 * tp_btf: the verifier refuses tp_btf reads of a function-pointer argument
 * ("arg1 type FUNC_PROTO is not a struct"); raw_tp arguments are plain u64s.
 */
SEC("raw_tp/workqueue_execute_end")
int BPF_PROG(drainstat_execute_end, struct work_struct *work, work_func_t function)
{
	if ((__u64)function != drain_work_fn())
		return 0;
	return drain_work_ended(work);
}

SEC("tracepoint/syscalls/sys_enter_" DRAINSTAT_FADVISE_SYSCALL)
int drainstat_fadvise_enter(struct trace_event_raw_sys_enter *ctx)
{
	fadvise_enter(bpf_get_current_pid_tgid(), (__u32)ctx->args[3]);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_" DRAINSTAT_FADVISE_SYSCALL)
int drainstat_fadvise_exit(struct trace_event_raw_sys_exit *ctx)
{
	fadvise_exit(bpf_get_current_pid_tgid());
	return 0;
}

/*
 * Drain entry and exit: lru_add_drain_all(), lru_cache_disable() (forced), and
 * where it has a symbol __lru_add_drain_all(), which generic_fadvise() calls
 * directly since 6.18 (elsewhere it is inlined). The fentry and fexit
 * programs name no function: user space sets each one's target, and picks
 * the set, from its table of the hooked functions (src/hooks.c).
 */
/* A drain hook's twins (see twin_second()): two programs, one body. */
#define TWINS(sec, name, body)                                                                     \
	SEC(sec) int name(unsigned long long *ctx)                                                 \
	{                                                                                          \
		body;                                                                              \
		return 0;                                                                          \
	}                                                                                          \
	SEC(sec) int name##_twin(unsigned long long *ctx)                                          \
	{                                                                                          \
		body;                                                                              \
		return 0;                                                                          \
	}

/* __lru_add_drain_all(bool force_all_cpus) */
TWINS("fentry", drainstat_fentry_drain, drain_enter(ctx, (bool)ctx[0], CALL_INNER, true, 1))
TWINS("fexit", drainstat_fexit_drain, drain_exit(ctx, CALL_INNER, true))
/* lru_add_drain_all(void) */
TWINS("fentry", drainstat_fentry_drain_all, drain_enter(ctx, false, CALL_API, true, 0))
TWINS("fexit", drainstat_fexit_drain_all, drain_exit(ctx, CALL_API, true))
/* lru_cache_disable(void) */
TWINS("fentry", drainstat_fentry_cache_disable, drain_enter(ctx, true, CALL_API, true, 0))
TWINS("fexit", drainstat_fexit_cache_disable, drain_exit(ctx, CALL_API, true))

/* lru_add_drain(void) */
SEC("fentry")
int BPF_PROG(drainstat_fentry_local)
{
	local_enter(ctx, fentry_caller(ctx, 0), 0);
	return 0;
}

SEC("fexit")
int BPF_PROG(drainstat_fexit_local)
{
	local_exit();
	return 0;
}

/* lru_add_drain_cpu(int cpu) */
SEC("fentry")
int BPF_PROG(drainstat_fentry_own, int cpu)
{
	own_enter(cpu);
	return 0;
}

SEC("fexit")
int BPF_PROG(drainstat_fexit_own)
{
	own_exit();
	return 0;
}

/* kprobe mode: the same bodies; user space attaches them to the names it found. */
SEC("kprobe")
int BPF_KPROBE(drainstat_kprobe_drain, bool force_all_cpus)
{
	drain_enter(ctx, force_all_cpus, CALL_INNER, false, 0);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(drainstat_kprobe_drain_all)
{
	drain_enter(ctx, false, CALL_API, false, 0);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(drainstat_kprobe_cache_disable)
{
	drain_enter(ctx, true, CALL_API, false, 0);
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(drainstat_kretprobe_drain)
{
	drain_exit(ctx, CALL_INNER, false);
	return 0;
}

/* lru_add_drain_all() and lru_cache_disable() */
SEC("kretprobe")
int BPF_KRETPROBE(drainstat_kretprobe_api)
{
	drain_exit(ctx, CALL_API, false);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(drainstat_kprobe_local)
{
	__u64 caller = kprobe_caller(ctx);

	local_enter(ctx, caller, kprobe_ret_ip(caller));
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(drainstat_kretprobe_local)
{
	local_exit();
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(drainstat_kprobe_own, int cpu)
{
	own_enter(cpu);
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(drainstat_kretprobe_own)
{
	own_exit();
	return 0;
}

/*
 * A thread's exit (do_exit(), current is the thread): its drain state goes.
 * raw_tp, which the kernel can test-run (tests/bpf/test_check.c).
 */
SEC("raw_tp/sched_process_exit")
int drainstat_task_exit(void *ctx)
{
	drain_task_exit();
	return 0;
}

/* Since about 6.4; absent in 6.1, where IPIs are simply not counted. */
SEC("tp_btf/ipi_send_cpu")
int BPF_PROG(drainstat_ipi_send_cpu, const unsigned int cpu, unsigned long callsite, void *callback)
{
	on_ipi(cpu);
	return 0;
}
