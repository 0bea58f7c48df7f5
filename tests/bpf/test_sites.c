// SPDX-License-Identifier: GPL-2.0
/*
 * Local drains cannot take a drain's site (issue 39): the kernel runs the
 * bodies that take new sites (tests/bpf/site_shares.bpf.c's raw_tp wrappers,
 * BPF_PROG_TEST_RUN) on a sites array of MAX_SITES slots:
 *  - local drains of new sites fill their half (local_sites_max()), then are
 *    counted as local_site_map_full, not site_map_full; a local drain of a
 *    site it has still counts there;
 *  - a drain that begins then still gets a slot, and so does a drain whose
 *    work ends with no site yet (tracepoint mode's path), until the drains'
 *    half is full too: counted as site_map_full;
 *  - drains first: they may take every slot, and the local drains after them
 *    find none, counted as theirs;
 *  - a local drain from a known caller that found no room: the caller's next
 *    local drains, in the same comm and cgroup, are counted at once, with no
 *    stack walked and nothing timed.
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
#include "cpu0.h"
#include "counters.h"
#include "drainstat.h"
#include "monotonic.h"
#include "tests/site_shares.skel.h"

#define MAX_SITES 8
#define WORK	  0xffff888012345678ULL

static struct site_shares_bpf *skel;
static int nr_cpus;

static __u64 counter(enum drainstat_counter c)
{
	return counters_sum(skel->maps.counters, nr_cpus, c);
}

/*
 * Runs PROG on CPU 0 with ARG; its return value. main() runs on CPU 0: a run
 * sent to another CPU runs there in an IPI, on whatever task runs there, and
 * the local drains and the drains are this task's.
 */
static int run(struct bpf_program *prog, __u64 arg)
{
	__u64 args[1] = {arg};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
		    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = 0);

	CHECK(!bpf_prog_test_run_opts(bpf_program__fd(prog), &opts));
	return (int)opts.retval;
}

static struct site_key key_of(const char *comm, __u64 cgroup_id)
{
	struct site_key key = {.stack_id = -EFAULT, .cgroup_id = cgroup_id};

	strncpy(key.comm, comm, sizeof(key.comm) - 1);
	return key;
}

/* The site of key, by its slot; false if it has none. */
static bool site_of(const struct site_key *key, struct site_stats *s)
{
	__u32 slot;

	return !bpf_map__lookup_elem(skel->maps.site_slots, key, sizeof(*key), &slot, sizeof(slot),
				     0) &&
	       !bpf_map__lookup_elem(skel->maps.sites, &slot, sizeof(slot), s, sizeof(*s), 0);
}

/* A local drain of this task, begun 1 us ago in cgroup_id, with no slot yet, ends. */
static void local_drain(const char *comm, __u64 cgroup_id)
{
	__u32 tid = (__u32)getpid(); /* one thread: its tid */
	struct local_call call = {
	    .start_ns = now_ns() - 1000, .site = key_of(comm, cgroup_id), .site_slot = NO_SLOT};

	CHECK(!bpf_map__update_elem(skel->maps.local_calls, &tid, sizeof(tid), &call, sizeof(call),
				    BPF_ANY));
	run(skel->progs.local_exit_test, 0);
}

/* Whether this task has a local drain in flight in local_calls. */
static bool local_in_flight(void)
{
	__u32 tid = (__u32)getpid();
	struct local_call call;

	return !bpf_map__lookup_elem(skel->maps.local_calls, &tid, sizeof(tid), &call, sizeof(call),
				     0);
}

/* How many times the local drains of comm in cgroup_id are counted in its site; -1: no site. */
static long local_calls_in(const char *comm, __u64 cgroup_id)
{
	struct site_key key = key_of(comm, cgroup_id);
	struct site_stats s;

	return site_of(&key, &s) ? (long)s.hist[SITE_LOCAL_NS].count : -1;
}

/* A drain begins in this task: its site's drains, -1 if it got no slot. */
static long drain_begins(void)
{
	__u32 slot = (__u32)run(skel->progs.drain_begin_test, 0);
	struct site_stats s;

	if (slot == NO_SLOT ||
	    bpf_map__lookup_elem(skel->maps.sites, &slot, sizeof(slot), &s, sizeof(s), 0))
		return -1;
	return (long)s.count[SITE_DRAINS];
}

/* A drain's work ends on CPU 0 with no site yet (NO_SLOT): its site's works, -1 if none. */
static long work_ends(const char *comm, __u64 cgroup_id)
{
	__u64 now = now_ns();
	struct work_state ws = {
	    .work = WORK,
	    .queue_ns = now - 900000,
	    .start_ns = now - 500000,
	    .drain_start_ns = now - 1000000,
	    .site = key_of(comm, cgroup_id),
	    .site_slot = NO_SLOT,
	    .caller_tid = 4242,
	};
	__u32 cpu = 0;
	struct site_stats s;

	CHECK(!bpf_map__update_elem(skel->maps.works, &cpu, sizeof(cpu), &ws, sizeof(ws), BPF_ANY));
	run(skel->progs.work_end_test, WORK);
	if (!site_of(&ws.site, &s))
		return -1;
	return (long)(s.count[SITE_SELF_WORKS] + s.count[SITE_REMOTE_WORKS]);
}

static void test_locals_then_drains(void)
{
	__u64 local_full = counter(CNT_LOCAL_SITE_MAP_FULL), full = counter(CNT_SITE_MAP_FULL);
	__u64 cg;

	/* a long run's local drains: a new cgroup each, more than the array holds */
	for (cg = 1; cg <= 2 * MAX_SITES; cg++)
		local_drain("exiting", cg);
	CHECK(skel->bss->local_slots_used >= local_sites_max(MAX_SITES));
	CHECK(skel->bss->site_slots_used == local_sites_max(MAX_SITES));
	CHECK(local_calls_in("exiting", 1) == 1);
	CHECK(local_calls_in("exiting", local_sites_max(MAX_SITES)) == 1);
	CHECK(local_calls_in("exiting", local_sites_max(MAX_SITES) + 1) == -1);
	CHECK(counter(CNT_LOCAL_SITE_MAP_FULL) ==
	      local_full + 2 * MAX_SITES - local_sites_max(MAX_SITES));
	CHECK(counter(CNT_SITE_MAP_FULL) == full);
	/* a site the local drains have keeps counting them */
	local_drain("exiting", 1);
	CHECK(local_calls_in("exiting", 1) == 2);
	/* a new caller's drain still finds a slot, and its work's */
	CHECK(drain_begins() == 1);
	CHECK(drain_begins() == 2);
	CHECK(work_ends("newcaller", 1) == 1);
	CHECK(counter(CNT_SITE_MAP_FULL) == full);
	/* the drains take the rest, then count their own losses */
	CHECK(work_ends("newcaller", 2) == 1);
	CHECK(work_ends("newcaller", 3) == 1);
	CHECK(skel->bss->site_slots_used == MAX_SITES);
	CHECK(work_ends("newcaller", 4) == -1);
	CHECK(counter(CNT_SITE_MAP_FULL) == full + 1);
	CHECK(counter(CNT_LOCAL_SITE_MAP_FULL) ==
	      local_full + 2 * MAX_SITES - local_sites_max(MAX_SITES));
}

static void test_drains_then_locals(void)
{
	__u64 local_full = counter(CNT_LOCAL_SITE_MAP_FULL), full = counter(CNT_SITE_MAP_FULL);
	__u64 cg;

	for (cg = 1; cg < MAX_SITES; cg++)
		CHECK(work_ends("caller", cg) == 1);
	/* one slot left: the local drains take it, then find none */
	local_drain("exiting", 1);
	local_drain("exiting", 2);
	CHECK(local_calls_in("exiting", 1) == 1);
	CHECK(local_calls_in("exiting", 2) == -1);
	CHECK(counter(CNT_LOCAL_SITE_MAP_FULL) == local_full + 1);
	CHECK(counter(CNT_SITE_MAP_FULL) == full);
}

static void test_refused_source(void)
{
	__u64 caller = 0xffffffff81234567ULL, local_full = counter(CNT_LOCAL_SITE_MAP_FULL);
	__u64 cg;

	for (cg = 1; cg <= local_sites_max(MAX_SITES); cg++)
		local_drain("exiting", cg);
	CHECK(counter(CNT_LOCAL_SITE_MAP_FULL) == local_full);
	/* its first local drain walks its stack and finds no room */
	run(skel->progs.local_enter_test, caller);
	CHECK(local_in_flight());
	run(skel->progs.local_exit_test, 0);
	CHECK(!local_in_flight());
	CHECK(counter(CNT_LOCAL_SITE_MAP_FULL) == local_full + 1);
	/* the next is counted at its entry, before any walk */
	run(skel->progs.local_enter_test, caller);
	CHECK(!local_in_flight());
	CHECK(counter(CNT_LOCAL_SITE_MAP_FULL) == local_full + 2);
	/* a caller not known is walked, as before */
	run(skel->progs.local_enter_test, 0);
	CHECK(local_in_flight());
	run(skel->progs.local_exit_test, 0);
	CHECK(counter(CNT_LOCAL_SITE_MAP_FULL) == local_full + 3);
}

/* The wrappers loaded on a sites array of MAX_SITES slots. */
static int open_programs(void)
{
	int err;

	skel = site_shares_bpf__open();
	if (!skel)
		return -errno;
	skel->rodata->max_sites = MAX_SITES;
	err = bpf_map__set_max_entries(skel->maps.sites, MAX_SITES);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.site_slots, MAX_SITES);
	return err ? err : site_shares_bpf__load(skel);
}

int main(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
	    {"test_locals_then_drains", test_locals_then_drains},
	    {"test_drains_then_locals", test_drains_then_locals},
	    {"test_refused_source", test_refused_source},
	};
	int failed = 0, err;
	size_t i;

	if (pin_to_cpu0())
		return 1;
	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus < 0) {
		printf("FAIL bpf: the possible CPUs: %s\n", strerror(-nr_cpus));
		return 1;
	}
	/* each test on freshly loaded programs: empty sites, no share taken */
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		err = open_programs();
		if (err) {
			printf("FAIL bpf: load the site-taking programs for %s: %s\n",
			       tests[i].name, strerror(-err));
			return 1;
		}
		failed += check__run(tests[i].name, tests[i].fn);
		site_shares_bpf__destroy(skel);
	}
	return failed ? 1 : 0;
}
