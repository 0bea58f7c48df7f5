// SPDX-License-Identifier: GPL-2.0
/*
 * A drain whose entry went unseen in full or kprobe mode (both twins skipped
 * under full preemption, or drainstat attached during the call) begins at its
 * first work, as in tracepoint mode. Its caller preempted between two queues
 * for longer than the join window, its first work ended meanwhile: seen on
 * Debian's 6.12 with preempt=full as 601 drains of 600 calls. The kernel runs
 * the bodies (tests/bpf/partial.bpf.c's raw_tp wrappers, BPF_PROG_TEST_RUN),
 * this task pinned to CPU 0, the works run on CPUs 0 and 1:
 *  - entry visible: the second work joins the drain, one drain of two works,
 *    its wait revised to the second's end;
 *  - tracepoint mode: the join window parts them, two drains (the rule that
 *    tells back-to-back drains apart where no entry is seen; the check can fail);
 *    the task's state in its slot of drain_slots, or, where another task holds
 *    that, in drains (drains_moved), found there by its works' ends;
 *  - entry visible: a drain seen at its entry after one whose entry went
 *    unseen is a drain of its own.
 * Needs root and a kernel that test-runs raw tracepoint programs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "check.h"
#include "cpu0.h"
#include "counters.h"
#include "drainstat.h"
#include "states.h"
#include "tests/partial.skel.h"

#define MAX_SITES 8
/* longer than the join window (globals.bpf.h: 1 ms) */
#define PREEMPTED_NS 3000000L

static struct partial_bpf *skel;

/* Runs PROG on cpu with up to two arguments. */
static void run(struct bpf_program *prog, int cpu, __u64 a, __u64 b)
{
	__u64 args[2] = {a, b};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
		    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = (__u32)cpu);

	CHECK(!bpf_prog_test_run_opts(bpf_program__fd(prog), &opts));
}

/*
 * A work (its address) queued by this task to cpu, then run there to its end;
 * after_preemption: the task was preempted (not asleep) since its last queue.
 */
static void work(int cpu, __u64 address, bool after_preemption)
{
	run(after_preemption ? skel->progs.queue_after_preemption_test : skel->progs.queue_test, 0,
	    (__u64)cpu, address);
	run(skel->progs.start_test, cpu, address, 0);
	run(skel->progs.end_test, cpu, address, 0);
}

/* The time a preemption took: the task sleeps, queue_after_preemption_test() says it did not. */
static void preempted(void)
{
	struct timespec t = {0, PREEMPTED_NS};

	nanosleep(&t, NULL);
}

/*
 * The sites' counts summed: the drains here differ in their program, which
 * their stacks name, so in their site. False if none.
 */
static bool site(struct site_stats *sum)
{
	struct site_stats s;
	bool any = false;
	__u32 slot;
	int i;

	memset(sum, 0, sizeof(*sum));
	for (slot = 0; slot < MAX_SITES; slot++) {
		if (bpf_map__lookup_elem(skel->maps.sites, &slot, sizeof(slot), &s, sizeof(s), 0))
			continue;
		any = true;
		for (i = 0; i < SITE_COUNTS; i++)
			sum->count[i] += s.count[i];
		for (i = 0; i < SITE_HISTS; i++)
			sum->hist[i].count += s.hist[i].count;
	}
	return any;
}

static __u64 counter(enum drainstat_counter c)
{
	return counters_sum(skel->maps.counters, libbpf_num_possible_cpus(), c);
}

/* One drain whose entry went unseen: a work to CPU 0, the caller preempted, a work to CPU 1. */
static void unseen_entry_drain(void)
{
	work(0, 0x1000, false);
	preempted();
	work(1, 0x2000, true);
}

static void test_unseen_entry_joined(void)
{
	struct site_stats s;

	unseen_entry_drain();
	CHECK(site(&s));
	CHECK(s.count[SITE_DRAINS] == 1);
	CHECK(s.count[SITE_SELF_WORKS] == 1 && s.count[SITE_REMOTE_WORKS] == 1);
	/* its wait recorded at the first work's end, then taken back for the second's */
	CHECK(s.hist[SITE_WAIT_NS].count == 1 && counter(CNT_WAIT_REVISED) == 1);
	CHECK(counter(CNT_PARTIAL_WAITS) == 1);
	/* the exit, seen, finds no call entered: the drain ended at its last work */
	run(skel->progs.drain_exit_test, 0, 0, 0);
	CHECK(site(&s) && s.count[SITE_DRAINS] == 1 && s.hist[SITE_WAIT_NS].count == 1);
}

/* This task's slot of drain_slots: its task's tid (0: free). */
static __u32 slot_owner(void)
{
	__u32 i = (__u32)gettid() % DRAIN_SLOTS;
	struct drain_slot s;

	CHECK(!bpf_map__lookup_elem(skel->maps.drain_slots, &i, sizeof(i), &s, sizeof(s), 0));
	return s.tid;
}

/*
 * Tracepoint mode: no entry parts back-to-back drains, the join window does.
 * The task's first drain claims its slot, and no state goes to drains.
 */
static void test_tracepoint_window(void)
{
	struct site_stats s;

	unseen_entry_drain();
	CHECK(site(&s));
	CHECK(s.count[SITE_DRAINS] == 2 && s.hist[SITE_WAIT_NS].count == 2);
	CHECK(slot_owner() == (__u32)gettid() && skel->bss->drains_moved == 0);
}

/*
 * The task's slot held by another live task (their tids collide): its state
 * goes to drains, counted in drains_moved, where its works' ends find it (the
 * waits recorded); the other task's slot is left as it was.
 */
static void test_slot_taken(void)
{
	struct drain_state other = {.start_ns = 77, .site_slot = NO_SLOT};
	__u32 other_tid = (__u32)gettid() + DRAIN_SLOTS;
	struct drain_state d;
	struct site_stats s;

	CHECK(!states_put(skel->maps.drain_slots, other_tid, &other));
	unseen_entry_drain();
	CHECK(site(&s));
	CHECK(s.count[SITE_DRAINS] == 2 && s.hist[SITE_WAIT_NS].count == 2);
	CHECK(skel->bss->drains_moved == 1 && slot_owner() == other_tid);
	CHECK(!states_get(skel->maps.drain_slots, skel->maps.drains, other_tid, &d) &&
	      d.start_ns == 77);
	CHECK(!states_get(skel->maps.drain_slots, skel->maps.drains, (__u32)gettid(), &d) &&
	      d.works == 1 && !drain_in_flight(&d));
}

/* A drain whose entry is seen after one whose entry was not: two drains. */
static void test_entry_after_unseen(void)
{
	struct site_stats s;

	work(1, 0x1000, false);
	run(skel->progs.drain_enter_test, 0, 0, 0);
	work(1, 0x2000, true);
	run(skel->progs.drain_exit_test, 0, 0, 0);
	CHECK(site(&s));
	CHECK(s.count[SITE_DRAINS] == 2 && s.count[SITE_REMOTE_WORKS] == 2);
	CHECK(s.hist[SITE_WAIT_NS].count == 2 && counter(CNT_PARTIAL_WAITS) == 1);
}

static int open_programs(bool entry_visible)
{
	int err;

	skel = partial_bpf__open();
	if (!skel)
		return -errno;
	skel->rodata->max_sites = MAX_SITES;
	skel->rodata->entry_visible = entry_visible;
	err = bpf_map__set_max_entries(skel->maps.sites, MAX_SITES);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.site_slots, MAX_SITES);
	return err ? err : partial_bpf__load(skel);
}

int main(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
		bool entry_visible;
	} tests[] = {
	    {"test_unseen_entry_joined", test_unseen_entry_joined, true},
	    {"test_tracepoint_window", test_tracepoint_window, false},
	    {"test_slot_taken", test_slot_taken, false},
	    {"test_entry_after_unseen", test_entry_after_unseen, true},
	};
	int failed = 0, err;
	size_t i;

	if (libbpf_num_possible_cpus() < 2) {
		printf("SKIP bpf_partial: one CPU, no remote work\n");
		return 0;
	}
	if (pin_to_cpu0())
		return 1;
	/* each test on freshly loaded programs: no drain state, empty sites */
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		err = open_programs(tests[i].entry_visible);
		if (err) {
			printf("FAIL bpf: load the programs for %s: %s\n", tests[i].name,
			       strerror(-err));
			return 1;
		}
		failed += check__run(tests[i].name, tests[i].fn);
		partial_bpf__destroy(skel);
	}
	return failed ? 1 : 0;
}
