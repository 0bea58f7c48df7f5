// SPDX-License-Identifier: GPL-2.0
/*
 * The fadvise calls in flight (bpf/fadvise.bpf.h), run by the kernel on its
 * maps (BPF_PROG_TEST_RUN) through the raw_tp wrappers of
 * tests/bpf/fadvise_calls.bpf.c, which take the task's tid as an argument and
 * run on the CPU asked for:
 *  - a call whose exit runs on another CPU than its entry (the task migrated),
 *    its escalation seen there too;
 *  - a call preempted by another task's call on the same CPU;
 *  - tasks whose tids share a slot: the one that holds it keeps it, the
 *    other's call goes to the hash, still timed, its escalation still found,
 *    the hash emptied after, and the slot free for the next;
 *  - an exit without its entry (a call begun before attach): not counted.
 * Needs root and a kernel that test-runs raw tracepoint programs.
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "check.h"
#include "drainstat.h"
#include "tests/fadvise_calls.skel.h"

static struct fadvise_calls_bpf *skel;
static int other_cpu; /* 1, or 0 on a machine of one CPU */

/* Runs PROG with the arguments on CPU; its return value. */
static int run(struct bpf_program *prog, int cpu, __u64 tid, __u64 advice)
{
	__u64 args[2] = {tid, advice};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
		    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = (__u32)cpu);

	CHECK(!bpf_prog_test_run_opts(bpf_program__fd(prog), &opts));
	return (int)opts.retval;
}

static void enter(__u32 tid, int cpu)
{
	run(skel->progs.fadvise_enter_test, cpu, tid, FADVISE_DONTNEED);
}

static void leave(__u32 tid, int cpu)
{
	run(skel->progs.fadvise_exit_test, cpu, tid, 0);
}

static int drain_in(__u32 tid, int cpu)
{
	return run(skel->progs.fadvise_drain_test, cpu, tid, 0);
}

/* DONTNEED's calls and escalations so far. */
static void dontneed(__u64 *calls, __u64 *escalations)
{
	__u32 slot = FADVISE_DONTNEED;
	struct fadvise_stats f = {};

	CHECK(!bpf_map__lookup_elem(skel->maps.fadvise, &slot, sizeof(slot), &f, sizeof(f), 0));
	*calls = f.latency_ns.count;
	*escalations = f.escalations;
}

/* Whether tid's call was moved out of its slot, into fadvise_calls. */
static bool moved(__u32 tid)
{
	char call[64];

	return bpf_map__value_size(skel->maps.fadvise_calls) <= sizeof(call) &&
	       !bpf_map__lookup_elem(skel->maps.fadvise_calls, &tid, sizeof(tid), call,
				     bpf_map__value_size(skel->maps.fadvise_calls), 0);
}

static void test_migrated(void)
{
	__u64 c0, e0, c1, e1;

	dontneed(&c0, &e0);
	enter(5001, 0);
	CHECK(drain_in(5001, other_cpu) == 1);
	leave(5001, other_cpu);
	dontneed(&c1, &e1);
	CHECK(c1 == c0 + 1 && e1 == e0 + 1);
	CHECK(drain_in(5001, other_cpu) == 0);
}

static void test_preempted(void)
{
	__u64 c0, e0, c1, e1;

	dontneed(&c0, &e0);
	enter(5002, 0);
	enter(5003, 0);
	leave(5003, 0);
	CHECK(drain_in(5002, 0) == 1);
	leave(5002, 0);
	dontneed(&c1, &e1);
	CHECK(c1 == c0 + 2 && e1 == e0 + 1);
}

static void test_slot_shared(void)
{
	__u32 slots = bpf_map__max_entries(skel->maps.fadvise_slots);
	__u32 first = 5004, second = 5004 + slots, third = 5004 + 2 * slots;
	__u64 c0, e0, c1, e1;

	dontneed(&c0, &e0);
	enter(first, 0);
	/* the slot is the first's: the second's call goes to the hash, the first's stays */
	enter(second, other_cpu);
	CHECK(!moved(first) && moved(second) && skel->bss->fadvise_calls_moved == 1);
	CHECK(drain_in(second, other_cpu) == 1);
	/* the first ends and frees the slot; the second, in the hash, is still timed */
	leave(first, 0);
	dontneed(&c1, &e1);
	CHECK(c1 == c0 + 1 && e1 == e0);
	/* a third takes the free slot while the second is still in flight */
	enter(third, 0);
	CHECK(!moved(third));
	leave(second, other_cpu);
	dontneed(&c1, &e1);
	CHECK(c1 == c0 + 2 && e1 == e0 + 1);
	CHECK(!moved(second) && skel->bss->fadvise_calls_moved == 0);
	leave(third, 0);
	dontneed(&c1, &e1);
	CHECK(c1 == c0 + 3);
	/* the slot is free again, and none of the three is in flight */
	CHECK(drain_in(first, 0) == 0 && drain_in(second, 0) == 0 && drain_in(third, 0) == 0);
}

static void test_exit_unseen(void)
{
	__u64 c0, e0, c1, e1;

	dontneed(&c0, &e0);
	leave(5005, 0);
	dontneed(&c1, &e1);
	CHECK(c1 == c0 && e1 == e0);
}

int main(void)
{
	int failed = 0;

	other_cpu = libbpf_num_possible_cpus() > 1 ? 1 : 0;
	skel = fadvise_calls_bpf__open_and_load();
	if (!skel) {
		printf("FAIL bpf: load the fadvise test programs: %s\n", strerror(errno));
		return 1;
	}
	RUN(test_migrated);
	RUN(test_preempted);
	RUN(test_slot_shared);
	RUN(test_exit_unseen);
	fadvise_calls_bpf__destroy(skel);
	return failed ? 1 : 0;
}
