// SPDX-License-Identifier: GPL-2.0
/*
 * drainstat's BPF programs run by the kernel on maps seeded here
 * (BPF_PROG_TEST_RUN): the paths no workload reaches on purpose. Needs root
 * and a kernel that test-runs raw tracepoint programs (5.10 and later).
 *
 * workqueue_execute_end (a raw_tp program, which the kernel can test-run) is
 * given a drain work that ends on CPU 0, its drain's state and its work's
 * state seeded as on_queue() and on_start() leave them:
 *  - a work whose start was seen: its numbers and its drain's wait;
 *  - a work whose start was missed (queued while drainstat attached): no
 *    dispatch or run, but the drain's wait is recorded in its site's
 *    histogram, and recorded_wait_ns is what the histogram holds, for a later
 *    drain_join() to take back;
 *  - a drain that -C does not count: no wait in its site's histogram;
 *  - the same with no room for the site: no wait in any histogram, and
 *    recorded_wait_ns 0, so that a join takes nothing back;
 *  - a drain of a caller in a cgroup: its site keyed by its cgroup too, and
 *    with --by=comm (site_key_parts) by its comm alone;
 *  - a work that ends on another CPU than its own (its CPU went offline):
 *    found by its address, its drain ended.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "check.h"
#include "states.h"
#include "counters.h"
#include "drainstat.h"
#include "monotonic.h"
#include "drainstat.skel.h"
#include "filterkey.h"

#define DRAIN_WORK_FN 0xffffffff81234560ULL /* any address: the programs compare it */
#define WORK	      0xffff888012345678ULL
#define CALLER_TID    4242
#define CALLER_CPU    1

static struct drainstat_bpf *skel;
static int nr_cpus;

static __u64 counter(enum drainstat_counter c)
{
	return counters_sum(skel->maps.counters, nr_cpus, c);
}

/*
 * Seeds a drain of CALLER_TID in cgroup_id opened 1 ms ago with one work
 * pending on CPU 0, counted in its site unless it is one that -C does not count.
 */
static void seed_drain(const char *comm, __u64 cgroup_id, bool started, bool counted,
		       struct drain_state *d)
{
	__u64 now = now_ns();
	struct work_state ws = {
	    .work = WORK,
	    .queue_ns = now - 900000,
	    .start_ns = started ? now - 500000 : 0,
	    .drain_start_ns = now - 1000000,
	    .site_slot = NO_SLOT,
	    .caller_tid = CALLER_TID,
	    .caller_cpu = CALLER_CPU,
	};
	__u32 tid = CALLER_TID, cpu = 0;

	memset(d, 0, sizeof(*d));
	d->start_ns = ws.drain_start_ns;
	d->last_queue_ns = ws.queue_ns;
	d->pending = 1;
	d->works = 1;
	d->counted = counted;
	d->caller_cpu = CALLER_CPU;
	d->site_slot = NO_SLOT;
	d->site.stack_id = -EFAULT;
	strncpy(d->site.comm, comm, sizeof(d->site.comm) - 1);
	d->site.cgroup_id = cgroup_id;
	ws.site = d->site;
	CHECK(!states_put(skel->maps.drain_slots, tid, d));
	CHECK(!bpf_map__update_elem(skel->maps.works, &cpu, sizeof(cpu), &ws, sizeof(ws), BPF_ANY));
}

static void seed(const char *comm, bool started, struct drain_state *d)
{
	seed_drain(comm, 0, started, true, d);
}

/* The work ends on cpu; *d is then the drain's state. */
static void end_work_on(__u32 cpu, struct drain_state *d)
{
	__u64 args[2] = {WORK, DRAIN_WORK_FN};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
		    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);
	__u32 tid = CALLER_TID;

	CHECK(!bpf_prog_test_run_opts(bpf_program__fd(skel->progs.drainstat_execute_end), &opts));
	CHECK(!states_get(skel->maps.drain_slots, skel->maps.drains, tid, d));
}

static void end_work(struct drain_state *d)
{
	end_work_on(0, d);
}

/* The site with comm and cgroup_id, NULL if it has none (the caller frees it). */
static struct site_stats *site_in(const char *comm, __u64 cgroup_id)
{
	struct site_key key = {.stack_id = -EFAULT, .cgroup_id = cgroup_id};
	struct site_stats *s = calloc(1, sizeof(*s));
	__u32 slot;

	strncpy(key.comm, comm, sizeof(key.comm) - 1);
	if (!s ||
	    bpf_map__lookup_elem(skel->maps.site_slots, &key, sizeof(key), &slot, sizeof(slot),
				 0) ||
	    bpf_map__lookup_elem(skel->maps.sites, &slot, sizeof(slot), s, sizeof(*s), 0)) {
		free(s);
		return NULL;
	}
	return s;
}

static struct site_stats *site_of(const char *comm)
{
	return site_in(comm, 0);
}

static void test_work_seen(void)
{
	struct drain_state d;
	struct site_stats *s;

	seed("seen", true, &d);
	end_work(&d);
	s = site_of("seen");
	CHECK(s);
	if (!s)
		return;
	CHECK(s->count[SITE_SELF_WORKS] + s->count[SITE_REMOTE_WORKS] == 1);
	CHECK(s->hist[SITE_DISPATCH_NS].count == 1 && s->hist[SITE_DISPATCH_NS].sum >= 400000);
	CHECK(s->hist[SITE_RUN_NS].count == 1);
	CHECK(d.pending == 0 && d.closed == 1);
	CHECK(d.recorded_wait_ns >= 1000000);
	CHECK(s->hist[SITE_WAIT_NS].count == 1 && s->hist[SITE_WAIT_NS].sum == d.recorded_wait_ns);
	free(s);
}

/*
 * CPU 0's work ends on CPU 1, as the workqueue runs it once CPU 0 went
 * offline: found in CPU 0's slot by its address (work_cpus, which its first
 * queue filled), its drain's wait recorded, its slot emptied, nothing unseen.
 */
static void test_ended_elsewhere(void)
{
	__u64 unseen = counter(CNT_WORK_UNSEEN), work = WORK;
	struct work_state ws;
	struct drain_state d;
	struct site_stats *s;
	__u32 cpu0 = 0;

	if (nr_cpus < 2) {
		printf("SKIP test_ended_elsewhere: one CPU\n");
		return;
	}
	seed("elsewhere", true, &d);
	CHECK(!bpf_map__update_elem(skel->maps.work_cpus, &work, sizeof(work), &cpu0, sizeof(cpu0),
				    BPF_ANY));
	end_work_on(1, &d);
	CHECK(d.pending == 0 && d.closed == 1 && d.recorded_wait_ns >= 1000000);
	CHECK(counter(CNT_WORK_UNSEEN) == unseen);
	CHECK(!bpf_map__lookup_elem(skel->maps.works, &cpu0, sizeof(cpu0), &ws, sizeof(ws), 0));
	CHECK(ws.work == 0);
	s = site_of("elsewhere");
	CHECK(s && s->count[SITE_REMOTE_WORKS] == 1 && s->hist[SITE_WAIT_NS].count == 1);
	free(s);
	bpf_map__delete_elem(skel->maps.work_cpus, &work, sizeof(work), 0);
}

static void test_start_missed(void)
{
	__u64 unseen = counter(CNT_WORK_UNSEEN);
	struct drain_state d;
	struct site_stats *s;

	seed("missed", false, &d);
	end_work(&d);
	CHECK(counter(CNT_WORK_UNSEEN) == unseen + 1);
	s = site_of("missed");
	CHECK(s);
	if (!s)
		return;
	CHECK(s->count[SITE_SELF_WORKS] + s->count[SITE_REMOTE_WORKS] == 0);
	CHECK(s->hist[SITE_DISPATCH_NS].count == 0 && s->hist[SITE_RUN_NS].count == 0);
	CHECK(d.pending == 0 && d.closed == 1);
	CHECK(d.recorded_wait_ns >= 1000000);
	/* what a later join takes back is in the histogram */
	CHECK(s->hist[SITE_WAIT_NS].count == 1 && s->hist[SITE_WAIT_NS].sum == d.recorded_wait_ns);
	free(s);
}

static void test_start_missed_no_room(void)
{
	__u64 full = counter(CNT_SITE_MAP_FULL);
	struct drain_state d;

	skel->bss->site_slots_used = skel->rodata->max_sites;
	seed("noroom", false, &d);
	end_work(&d);
	CHECK(!site_of("noroom"));
	CHECK(counter(CNT_SITE_MAP_FULL) > full);
	CHECK(d.pending == 0 && d.closed == 1);
	/* in no histogram: a later join takes nothing back */
	CHECK(d.recorded_wait_ns == 0);
}

/*
 * A drain that -C does not count (it reached no selected CPU before this work
 * ended elsewhere): its work ends, its wait goes in no histogram.
 */
static void test_not_counted(void)
{
	struct drain_state d;
	struct site_stats *s;

	seed_drain("uncounted", 0, true, false, &d);
	end_work(&d);
	CHECK(d.pending == 0 && d.closed == 1);
	CHECK(d.recorded_wait_ns == 0);
	s = site_of("uncounted");
	CHECK(s);
	if (!s)
		return;
	CHECK(s->hist[SITE_WAIT_NS].count == 0);
	free(s);
}

/* --by's default: a drain's site is keyed by its caller's cgroup too. */
static void test_cgroup_key(void)
{
	struct site_stats *s = NULL;
	struct drain_state d;

	seed_drain("cgkeyed", 4711, true, true, &d);
	end_work(&d);
	CHECK(!site_of("cgkeyed"));
	s = site_in("cgkeyed", 4711);
	CHECK(s && s->count[SITE_REMOTE_WORKS] + s->count[SITE_SELF_WORKS] == 1);
	CHECK(s && s->key.cgroup_id == 4711);
	free(s);
}

/* --by=comm: the cgroup is zero in the site's key, so that the cgroups' drains merge. */
static void test_comm_key(void)
{
	struct site_stats *s = NULL;
	struct drain_state d;

	seed_drain("commkeyed", 4711, true, true, &d);
	end_work(&d);
	CHECK(!site_in("commkeyed", 4711));
	s = site_of("commkeyed");
	CHECK(s && s->count[SITE_REMOTE_WORKS] + s->count[SITE_SELF_WORKS] == 1);
	free(s);
	seed_drain("commkeyed", 4712, true, true, &d);
	end_work(&d);
	s = site_of("commkeyed");
	CHECK(s && s->count[SITE_REMOTE_WORKS] + s->count[SITE_SELF_WORKS] == 2);
	free(s);
}

/* The work end program loaded, the sites keyed by parts (SITE_KEY_*). */
static int open_programs(__u32 parts)
{
	struct bpf_program *prog;
	int err;

	skel = drainstat_bpf__open();
	if (!skel)
		return -errno;
	skel->rodata->site_key_parts = parts;
	bpf_object__for_each_program(prog, skel->obj)
	    bpf_program__set_autoload(prog, prog == skel->progs.drainstat_execute_end);
	err = filterkey__set(skel->progs.drainstat_execute_end, DRAIN_WORK_FN);
	return err ? err : drainstat_bpf__load(skel);
}

int main(void)
{
	int failed = 0, err;

	nr_cpus = libbpf_num_possible_cpus();
	err = nr_cpus < 0 ? nr_cpus : open_programs(SITE_KEY_COMM | SITE_KEY_CGROUP);
	if (err) {
		printf("FAIL bpf: load drainstat's programs: %s\n", strerror(-err));
		return 1;
	}
	RUN(test_work_seen);
	RUN(test_start_missed);
	RUN(test_ended_elsewhere);
	RUN(test_not_counted);
	RUN(test_cgroup_key);
	RUN(test_start_missed_no_room);
	drainstat_bpf__destroy(skel);
	err = open_programs(SITE_KEY_COMM);
	if (err) {
		printf("FAIL bpf: load drainstat's programs keyed by comm: %s\n", strerror(-err));
		return 1;
	}
	RUN(test_comm_key);
	drainstat_bpf__destroy(skel);
	return failed ? 1 : 0;
}
