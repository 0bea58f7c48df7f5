// SPDX-License-Identifier: GPL-2.0
/*
 * Drains that drain other CPUs in place (issue 39): the Per-CPU Work helpers
 * (was QPW; CONFIG_PWLOCKS) drain a CPU's batches from the caller's CPU and
 * queue no work. No Debian kernel has the series, so the kernel runs the
 * bodies that recognise it by what it does (tests/bpf/in_place.bpf.c's raw_tp
 * wrappers, BPF_PROG_TEST_RUN), on this task pinned to CPU 0:
 *  - a drain that calls lru_add_drain_cpu(1) from CPU 0: CPU 1 drained in
 *    place, counted and timed in its site, the drain not empty, its lock phase
 *    ended there; while it runs, the drain's state says which CPU;
 *  - lru_add_drain_cpu(0), the caller's own CPU, before: the drain's own local
 *    drain, as before, not a CPU in place;
 *  - a drain that drains nothing and queues nothing: empty, no CPU in place
 *    (the check can fail);
 *  - with -C 0, a CPU in place outside the filter: not counted, and neither is
 *    the drain; -C 1: counted;
 *  - -T: the CPU in place listed in the slow-drain event, as in place.
 * Needs root and a kernel that test-runs raw tracepoint programs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "check.h"
#include "states.h"
#include "cpu0.h"
#include "drainstat.h"
#include "tests/in_place.skel.h"

#define MAX_SITES 8

static struct in_place_bpf *skel;

/* Runs PROG on CPU 0 (this task's) with ARG. */
static void run(struct bpf_program *prog, __u64 arg)
{
	__u64 args[1] = {arg};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
		    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = 0);

	CHECK(!bpf_prog_test_run_opts(bpf_program__fd(prog), &opts));
}

static bool drain_state(struct drain_state *d)
{
	__u32 tid = (__u32)getpid();

	return !states_get(skel->maps.drain_slots, skel->maps.drains, tid, d);
}

/* This task's site (every drain here has the same key): false if none. */
static bool site(struct site_stats *s)
{
	struct drain_state d;

	if (!drain_state(&d) || d.site_slot == NO_SLOT)
		return false;
	return !bpf_map__lookup_elem(skel->maps.sites, &d.site_slot, sizeof(d.site_slot), s,
				     sizeof(*s), 0);
}

/* A drain enters, drains each of cpus (-1 ends the list) itself, and returns. */
static void drain(const int *cpus)
{
	struct drain_state d;

	run(skel->progs.drain_enter_test, 0);
	for (; *cpus >= 0; cpus++) {
		run(skel->progs.own_enter_test, (__u64)*cpus);
		CHECK(drain_state(&d));
		if (*cpus)
			CHECK(d.in_place_start_ns && d.in_place_cpu == (__u32)*cpus);
		run(skel->progs.own_exit_test, 0);
	}
	run(skel->progs.drain_exit_test, 0);
	CHECK(drain_state(&d) && !d.in_call && !d.in_place_start_ns);
}

static void test_in_place(void)
{
	static const int own_then_cpu1[] = {0, 1, -1}, none[] = {-1};
	struct site_stats s;

	drain(own_then_cpu1);
	CHECK(site(&s));
	CHECK(s.count[SITE_DRAINS] == 1 && s.count[SITE_IN_PLACE] == 1);
	CHECK(s.hist[SITE_IN_PLACE_NS].count == 1 && s.hist[SITE_OWN_NS].count == 1);
	CHECK(s.count[SITE_EMPTY_DRAINS] == 0 && s.count[SITE_OWN_ONLY_DRAINS] == 0);
	/* the lock phase ended at CPU 1, the first CPU drained in place */
	CHECK(s.hist[SITE_LOCK_NS].count == 1);
	CHECK(s.count[SITE_SELF_WORKS] + s.count[SITE_REMOTE_WORKS] == 0);
	drain(none);
	CHECK(site(&s));
	CHECK(s.count[SITE_DRAINS] == 2 && s.count[SITE_IN_PLACE] == 1);
	CHECK(s.count[SITE_EMPTY_DRAINS] + s.count[SITE_OWN_ONLY_DRAINS] == 1);
	/* a drain that reached no CPU was in its lock phase until it returned */
	CHECK(s.hist[SITE_LOCK_NS].count == 2 && s.hist[SITE_WAIT_NS].count == 2);
}

/* -C: a drain counts where it reaches a chosen CPU, in place as by a work. */
static void test_in_place_filtered(void)
{
	static const int cpu1[] = {1, -1};
	struct site_stats s;

	drain(cpu1);
	CHECK(!site(&s) || (s.count[SITE_DRAINS] == 0 && s.count[SITE_IN_PLACE] == 0));
}

static void test_in_place_chosen(void)
{
	static const int cpu1[] = {1, -1};
	struct site_stats s;

	drain(cpu1);
	CHECK(site(&s));
	CHECK(s.count[SITE_DRAINS] == 1 && s.count[SITE_IN_PLACE] == 1);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct slow_drain_event *out = ctx;

	if (size >= sizeof(*out))
		memcpy(out, data, sizeof(*out));
	return 0;
}

/* -T 1ns: the drain's event lists CPU 1 as drained in place. */
static void test_in_place_slow(void)
{
	static const int cpu1[] = {1, -1};
	struct slow_drain_event e = {};
	struct ring_buffer *rb;

	drain(cpu1);
	rb = ring_buffer__new(bpf_map__fd(skel->maps.slow_events), on_event, &e, NULL);
	CHECK(rb);
	if (!rb)
		return;
	CHECK(ring_buffer__consume(rb) == 1);
	ring_buffer__free(rb);
	CHECK(e.nr_targets == 1 && e.nr_in_place == 1);
	CHECK(e.targets[0].cpu == 1 && e.targets[0].how == SLOW_IN_PLACE);
	CHECK(e.targets[0].dispatch_ns == 0 && e.targets[0].run_ns > 0);
}

enum setting { PLAIN, VICTIM_CPU0, VICTIM_CPU1, SLOW };

static int open_programs(enum setting how)
{
	int err;

	skel = in_place_bpf__open();
	if (!skel)
		return -errno;
	skel->rodata->max_sites = MAX_SITES;
	skel->rodata->entry_visible = true;
	if (how == VICTIM_CPU0 || how == VICTIM_CPU1) {
		skel->rodata->filter_victims = true;
		skel->rodata->victim_cpus[0] = how == VICTIM_CPU0 ? 1 : 2;
	}
	if (how == SLOW)
		skel->rodata->slow_threshold_ns = 1;
	err = bpf_map__set_max_entries(skel->maps.sites, MAX_SITES);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.site_slots, MAX_SITES);
	return err ? err : in_place_bpf__load(skel);
}

int main(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
		enum setting how;
	} tests[] = {
	    {"test_in_place", test_in_place, PLAIN},
	    {"test_in_place_filtered", test_in_place_filtered, VICTIM_CPU0},
	    {"test_in_place_chosen", test_in_place_chosen, VICTIM_CPU1},
	    {"test_in_place_slow", test_in_place_slow, SLOW},
	};
	int failed = 0, err;
	size_t i;

	if (libbpf_num_possible_cpus() < 2) {
		printf("SKIP bpf_in_place: one CPU, none to drain in place\n");
		return 0;
	}
	if (pin_to_cpu0())
		return 1;
	/* each test on freshly loaded programs: no drain state, empty sites */
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		err = open_programs(tests[i].how);
		if (err) {
			printf("FAIL bpf: load the in-place programs for %s: %s\n", tests[i].name,
			       strerror(-err));
			return 1;
		}
		failed += check__run(tests[i].name, tests[i].fn);
		in_place_bpf__destroy(skel);
	}
	return failed ? 1 : 0;
}
