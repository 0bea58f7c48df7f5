// SPDX-License-Identifier: GPL-2.0
/*
 * The report end to end without a kernel: synthetic snapshots and a fixture
 * kallsyms go through model__build() and report_text__print(), and the text
 * must equal the golden files in tests/golden/ (regenerate with
 * DRAINSTAT_GOLDEN_UPDATE=1 after checking the difference by eye).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "golden.h"
#include "hist.h"
#include "ksyms.h"
#include "model.h"
#include "escape.h"
#include "report_json.h"
#include "report_prom.h"
#include "report_text.h"

#define MS  GOLDEN_MS
#define US  GOLDEN_US
#define SEC 1000000000ULL

static struct golden_maps *make_maps(int scale)
{
	return golden__make_maps(scale, "evil\x1b[31m\"\\");
}

static void make_snapshot(struct snapshot *s, int scale)
{
	golden__read_maps(make_maps(scale), s, 10000 * MS * (__u64)scale);
}

static const struct model_info *const info = &golden_info;

/* m's report, after its header when asked; freed by the caller. */
static char *render(const struct model *m, const struct text_opts *o, bool header)
{
	char *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);

	if (header)
		report_text__header(f, &m->info, "0.0.0");
	report_text__print(f, m, o);
	fclose(f);
	return got;
}

/* Renders m and compares with tests/golden/name. */
static void check_golden(const char *name, const struct model *m, const struct text_opts *o)
{
	char path[256], *got = render(m, o, true);

	golden__check(name, got, path, sizeof(path));
	free(got);
}

static void test_report_cumulative(void)
{
	struct text_opts o = {};
	struct golden_fix f;

	golden__open(&f, true);
	make_snapshot(&f.s, 1);
	golden__build(&f, info);
	CHECK(f.m.nr_sites == 4); /* the two compaction stacks share one row */
	CHECK(f.m.total[SITE_DRAINS] == 307 && f.m.total[SITE_WORKS] == 310);
	CHECK_STR(f.m.sites[0].site, "generic_fadvise");
	CHECK(f.m.lost == 1);
	check_golden("report.txt", &f.m, &o);
	o.stacks = true;
	check_golden("report-stacks.txt", &f.m, &o);
	golden__close(&f);
}

/*
 * The model of golden__add_cgroups()' sites, keyed by comm and cgroup (with
 * comm_merged by cgroup alone: the comms zero in the keys, as BPF leaves
 * them), its cgroups named.
 */
static void build_cgroups(struct golden_fix *f, bool comm_merged)
{
	struct model_info i = *info;
	struct golden_maps *k = make_maps(1);
	int j;

	i.by_cgroup = true;
	i.comm_merged = comm_merged;
	golden__add_cgroups(k);
	for (j = 0; comm_merged && j < k->nr_sites; j++)
		memset(k->sites[j].key.comm, 0, sizeof(k->sites[j].key.comm));
	golden__build_maps(f, k, 10000 * MS, &i);
	golden__name_cgroups(&f->m);
}

/*
 * --by's default: one row per site, comm and cgroup; the CGROUP column cut to
 * its last components, whole under -s; an evil name escaped; with no name
 * known (the tree unreadable, the cgroups gone), every row by its id. Then
 * --by=cgroup: no COMM column.
 */
static void test_report_cgroups(void)
{
	struct text_opts o = {};
	struct golden_fix f;
	char *got;

	golden__open(&f, true);
	build_cgroups(&f, false);
	/* drainforce in 3 cgroups, compaction in 2 containers, khugepaged, the evil one */
	CHECK(f.m.nr_sites == 7);
	check_golden("report-cgroup.txt", &f.m, &o);
	o.stacks = true;
	check_golden("report-cgroup-stacks.txt", &f.m, &o);
	CHECK(model__name_cgroups(&f.m, NULL, NULL) == 0);
	CHECK_STR(f.m.sites[0].cgroup, "cgroup:101");
	golden__clear(&f);
	build_cgroups(&f, true);
	o.stacks = false;
	got = render(&f.m, &o, false);
	CHECK(got && !strstr(got, "COMM"));
	CHECK(got && strstr(got, "\nSITE                      CGROUP "));
	CHECK(got && strstr(got, "\ngeneric_fadvise           /system.slice/drainwork.service "));
	free(got);
	golden__close(&f);
}

static void test_report_interval_and_histograms(void)
{
	struct text_opts o = {.histograms = true, .timestamp = "10:00:05"};
	struct golden_fix f;

	golden__open(&f, true);
	make_snapshot(&f.prev, 1);
	make_snapshot(&f.s, 2);
	golden__build(&f, info);
	/* only drainforce moved between the two snapshots */
	CHECK(f.m.nr_sites == 1 && f.m.total[SITE_DRAINS] == 300 && f.m.total[SITE_WORKS] == 300);
	CHECK(f.m.span_ns == 10000 * MS);
	check_golden("report-interval.txt", &f.m, &o);
	golden__close(&f);
}

/* Full mode: exact wait, lock time, empty and forced drains, local drains, IPIs. */
static void test_report_full_mode(void)
{
	struct model_info i = *info;
	struct text_opts o = {};
	struct golden_maps *k = make_maps(1);
	struct golden_fix f;

	golden__full_info(&i);
	i.filter_comm = "drainforce";
	i.filter_cgroup = "/sys/fs/cgroup/ds\x1b\"";
	i.filter_cpus = "0,2-3";
	golden__open(&f, true);
	golden__add_full_mode(k);
	golden__build_maps(&f, k, 10000 * MS, &i);
	CHECK(f.m.local_drains == 8000);
	check_golden("report-full.txt", &f.m, &o);
	golden__close(&f);
}

/*
 * Full mode on a kernel with Queue PerCPU Work: the same maps, but nothing that
 * depends on a drain's works (works, SELF, dispatch, run, lock, EMPTY, IPIs,
 * the victim CPUs, the mutex waiters); drains, their wait and FORCED stay.
 */
static void test_report_qpw(void)
{
	struct model_info i = *info;
	struct text_opts o = {.histograms = true};
	struct golden_fix f;

	golden__open(&f, true);
	golden__read_qpw(make_maps(1), &f.s, &i);
	i.stuck_ns = 2000 * MS;
	golden__build(&f, &i);
	CHECK(f.m.total[SITE_WORKS] == 310 && f.m.nr_cpus == 2 && f.m.mutex_waiters == 0);
	CHECK(f.m.in_flight[1].phase == PHASE_NO_WORK);
	check_golden("report-qpw.txt", &f.m, &o);
	golden__close(&f);
}

/*
 * A drain stuck behind a FIFO spinner, a mutex waiter and a young drain: the
 * report opens with all three (-s: with their stacks), under -C 2 too, which
 * does not count the spinner's CPU 3 but names it; in tracepoint mode, a
 * drain in flight under the threshold comes at the end.
 */
static void test_report_in_flight(void)
{
	struct model_info i = *info;
	struct text_opts o = {.stacks = true};
	struct golden_fix f;

	i.mode = "full";
	i.blind_spots = NULL;
	i.wait_is_lower_bound = false;
	i.entry_visible = true;
	i.stuck_ns = 1000 * MS;
	i.filter_cpus = "2";
	i.filter_cpu_mask = golden_cpus_2;
	golden__open(&f, true);
	golden__read_maps(make_maps(1), &f.s, 10000 * MS);
	golden__add_in_flight(&f.s, 20000 * MS, true, golden_fadvise_stack, GOLDEN_FADVISE_FRAMES);
	golden__build(&f, &i);
	golden__name_in_flight(&f.m);
	CHECK(f.m.nr_in_flight == 3 && f.m.nr_stuck == 2 && f.m.mutex_waiters == 1);
	CHECK(f.m.oldest_in_flight_ns == 11800 * MS);
	CHECK(f.m.in_flight[0].phase == PHASE_PENDING && f.m.in_flight[0].pending_works == 1);
	CHECK(f.m.in_flight[0].in_flight[0].running.since_known);
	CHECK_STR(f.m.in_flight[0].in_flight[0].running.policy, "FIFO");
	CHECK(f.m.in_flight[0].in_flight[0].outside_filter);
	CHECK(f.m.in_flight[1].phase == PHASE_MUTEX && f.m.in_flight[2].phase == PHASE_RUNNING);
	/* the spinner's CPU with RT throttling and its fair server off; the mutex held by the
	 * DONTNEED */
	CHECK(f.m.in_flight[0].in_flight[0].stall.cause == STALL_RT_TASK);
	CHECK(f.m.in_flight[0].in_flight[0].stall.facts.rt_throttling == STALL_NO);
	CHECK(f.m.in_flight[0].in_flight[0].stall.facts.fair_server == FAIR_OFF);
	CHECK(f.m.in_flight[0].in_flight[0].stall.facts.online == STALL_YES);
	CHECK(f.m.in_flight[1].stall.cause == STALL_MUTEX);
	CHECK(f.m.in_flight[1].stall.facts.holder.known &&
	      f.m.in_flight[1].stall.facts.holder.tid == 815);
	CHECK(f.m.in_flight[1].stall.facts.mutex_waiters == 1);
	CHECK(model__drain_cause(&f.m.in_flight[0]) == STALL_RT_TASK);
	CHECK(model__drain_cause(&f.m.in_flight[1]) == STALL_MUTEX);
	CHECK(model__drain_cause(&f.m.in_flight[2]) == STALL_UNKNOWN);
	check_golden("report-stuck.txt", &f.m, &o);
	golden__clear(&f);
	golden__read_maps(make_maps(1), &f.s, 10000 * MS);
	golden__add_in_flight(&f.s, 20000 * MS, false, golden_fadvise_stack, GOLDEN_FADVISE_FRAMES);
	i = *info;
	i.stuck_ns = 20000 * MS;
	golden__build(&f, &i);
	CHECK(f.m.nr_in_flight == 1 && f.m.nr_stuck == 0 && f.m.mutex_waiters == 0);
	o.stacks = false;
	check_golden("report-in-flight.txt", &f.m, &o);
	golden__close(&f);
}

/*
 * A DONTNEED's drain from sd-dropper, its work done, its wait not yet known;
 * with lone (a histogram, or -1), one sample of 1.5 s there: its maps read
 * into s.
 */
static void read_dropper(struct snapshot *s, __u64 taken_ns, int lone)
{
	struct golden_maps *k = calloc(1, sizeof(*k));
	struct site_stats *site;

	CHECK(k != NULL);
	site = golden__add_site(k, 1, "sd-dropper", golden_fadvise_stack, GOLDEN_FADVISE_FRAMES);
	golden__site_fill(site, 1, 1, 0, 40 * US, 20 * US, 0);
	memset(&site->hist[SITE_WAIT_NS], 0, sizeof(site->hist[SITE_WAIT_NS]));
	if (lone >= 0)
		hist__add(&site->hist[lone], 1500 * MS);
	golden__read_maps(k, s, taken_ns);
}

/*
 * Full mode, a DONTNEED's drain that began and ran its work in one interval
 * and ended in the next (its caller woke late): the next interval's row shows
 * its wait alone; one held on the drain mutex across a report shows its lock
 * time alone. Neither interval says "no drains".
 */
static void test_report_wait_alone(void)
{
	const int lone[] = {SITE_WAIT_NS, SITE_LOCK_NS};
	struct model_info i = *info;
	struct text_opts o = {};
	struct golden_fix f;
	char *got;
	int n;

	i.mode = "full";
	i.wait_is_lower_bound = false;
	i.entry_visible = true;
	golden__open(&f, true);
	for (n = 0; n < 2; n++) {
		read_dropper(&f.prev, 1000 * MS, -1);
		read_dropper(&f.s, 1200 * MS, lone[n]);
		golden__build(&f, &i);
		CHECK(f.m.total[SITE_DRAINS] == 0 && f.m.total[SITE_WORKS] == 0);
		got = render(&f.m, &o, false);
		CHECK(got && !strstr(got, "no drains"));
		CHECK(got && golden__count(
				 got, "\ngeneric_fadvise sd-dropper      0     0    0     -     -"
				      "     -     -     -     - ") == 1);
		CHECK(got && strstr(got, n ? "     -     -  1.5s  1.5s     0      0\n"
					   : "  1.5s  1.5s     -     -     0      0\n"));
		free(got);
		golden__clear(&f);
	}
	golden__close(&f);
}

static void test_report_empty(void)
{
	struct model_info i = *info;
	struct golden_fix f;
	struct text_opts o = {};

	i.has_fadvise = false;
	i.fadvise_unseen = "no syscalls:sys_enter_fadvise64 tracepoint";
	golden__open(&f, false);
	f.s.taken_ns = 5000 * MS;
	golden__build(&f, &i);
	CHECK(f.m.nr_sites == 0 && f.m.nr_cpus == 0);
	check_golden("report-empty.txt", &f.m, &o);
	golden__close(&f);
}

/* The fadvise line gives the cause setup found, not always a missing tracepoint. */
static void test_fadvise_cause(void)
{
	struct model_info i = *info;
	struct text_opts o = {};
	struct golden_fix f;
	char *got;

	i.has_fadvise = false;
	i.fadvise_unseen = "kernel.perf_event_paranoid=3 leaves their "
			   "syscalls:sys_enter_fadvise64 perf event to CAP_SYS_ADMIN";
	golden__open(&f, false);
	f.s.taken_ns = 5000 * MS;
	golden__build(&f, &i);
	got = render(&f.m, &o, false);
	CHECK(got && strstr(got, "\nfadvise: not traced (kernel.perf_event_paranoid=3 leaves their "
				 "syscalls:sys_enter_fadvise64 perf event to CAP_SYS_ADMIN)\n"));
	CHECK(got && !strstr(got, "tracepoint)"));
	free(got);
	golden__close(&f);
}

/*
 * Many rows in a scrambled order: the rows are sorted by total wait, largest
 * first, and each keeps its own numbers (rows move along permutation cycles).
 */
static void test_rows_sorted(void)
{
	enum { N = 257 };
	struct site_stats *site = malloc(sizeof(*site));
	struct golden_fix f;
	int k, sorted = 1, whole = 1;

	CHECK(site != NULL);
	golden__open(&f, false);
	snapshot__reset(&f.s, 1000 * MS);
	for (k = 0; k < N; k++) {
		int rank = (k * 101) % N; /* 101 and 257 are coprime: every rank once */

		memset(site, 0, sizeof(*site));
		site->key.stack_id = k;
		snprintf(site->key.comm, sizeof(site->key.comm), "c%d", rank);
		site->count[SITE_DRAINS] = (__u64)rank + 1;
		golden__hist_fill(&site->hist[SITE_WAIT_NS], (__u64)(rank + 1) * US, 0, rank + 1);
		CHECK(snapshot__add_site(&f.s, site, NULL, 0) == 0);
	}
	free(site);
	CHECK(snapshot__sort_sites(&f.s) == 0);
	golden__build(&f, info);
	CHECK(f.m.nr_sites == N);
	for (k = 0; k < f.m.nr_sites; k++) {
		const struct model_site *r = &f.m.sites[k];
		char comm[DRAINSTAT_COMM_LEN];

		snprintf(comm, sizeof(comm), "c%llu",
			 (unsigned long long)(r->count[SITE_DRAINS] - 1));
		whole &=
		    !strcmp(r->comm, comm) &&
		    r->hist[SITE_WAIT_NS].count == r->count[SITE_DRAINS] &&
		    r->hist[SITE_WAIT_NS].sum == r->count[SITE_DRAINS] * r->count[SITE_DRAINS] * US;
		sorted &= r->count[SITE_DRAINS] == (__u64)(N - k);
	}
	CHECK(sorted);
	CHECK(whole);
	CHECK(snapshot__find_site(&f.s, &f.s.sites[77].key) == &f.s.sites[77]);
	golden__close(&f);
}

/* Sites with stack ids first..first+n-1 (step step, modulo n) into s, read again. */
static void read_sites(struct snapshot *s, int n, int step)
{
	struct site_stats *site = calloc(1, sizeof(*site));
	int k;

	CHECK(site != NULL);
	snapshot__reset(s, 1000 * MS);
	for (k = 0; site && k < n; k++) {
		site->key.stack_id = (k * step) % n;
		CHECK(snapshot__add_site(s, site, NULL, 0) == 0);
	}
	free(site);
	CHECK(snapshot__sort_sites(s) == 0);
}

/*
 * A snapshot read again keeps the order of its last sort when it still holds:
 * lookups must be right whether the sites came in the same order or another.
 */
static void test_sort_kept_across_readings(void)
{
	enum { N = 101 };
	static const int steps[] = {1, 1, 37, 37, 1}; /* orders: the same again, or another */
	struct snapshot s = {};
	int i, k, found = 1;

	for (i = 0; i < (int)(sizeof(steps) / sizeof(steps[0])); i++) {
		read_sites(&s, N, steps[i]);
		for (k = 0; k < N; k++)
			found &= snapshot__find_site(&s, &s.sites[k].key) == &s.sites[k];
	}
	CHECK(found);
	read_sites(&s, N - 1, 1); /* fewer sites: sorted again */
	CHECK(snapshot__find_site(&s, &s.sites[N - 2].key) == &s.sites[N - 2]);
	snapshot__free(&s);
}

/*
 * The rows of the CPU table (lines from "CPU " to the blank line after it).
 * Not inlined, as golden__count(): GCC 12 takes a pointer into render()'s
 * buffer for a dangling pointer to its variable.
 */
static __attribute__((noinline)) int cpu_rows(const char *text)
{
	const char *p = strstr(text, "\nCPU ");
	int rows = 0;

	for (p = p ? strchr(p + 1, '\n') : NULL; p && p[1] && p[1] != '\n'; p = strchr(p + 1, '\n'))
		rows++;
	return rows;
}

/*
 * 255 CPUs, each hit by every one of 50 wide drains: the table shows the
 * costliest (by TOTAL and by max dispatch) and sums up the rest; with
 * --all-cpus (or -C) every CPU has its row.
 */
static void test_report_many_cpus(void)
{
	enum { N = 255 };
	struct cpu_stats *cpus = golden__wide_cpus(N);
	struct text_opts o = {};
	struct golden_fix f;
	char *got;

	golden__open(&f, false);
	golden__read_maps(make_maps(1), &f.s, 10000 * MS);
	CHECK(snapshot__set_cpus(&f.s, cpus, N) == 0);
	free(cpus);
	golden__build(&f, info);
	CHECK(f.m.nr_cpus == N);
	check_golden("report-255-cpus.txt", &f.m, &o);
	o.all_cpus = true;
	got = render(&f.m, &o, false);
	CHECK(cpu_rows(got) == N);
	CHECK(strstr(got, "rest") == NULL);
	free(got);
	golden__close(&f);
}

/*
 * A stack taken at a drain's fentry (full mode) on 7.3: the program, then its
 * trampoline, made at attach after the symbols were read and so past the last
 * program, then the caller (the traced function has no frame); and one with
 * another tracer's fexit trampoline between lru_add_drain_all and its caller.
 * No frame is in BPF code or named after a program it is not in; the first
 * starts at the caller, the second at its first drain function.
 */
static const __u64 fentry_stack[] = {
    0xffffffffc02016c0, /* bpf_prog_..._drainstat_fentry_drain_all_twin+0x6c0 */
    0xffffffffc020357b, /* the trampoline, past bpf_prog_..._drainstat_running */
    0xffffffff815b14a9, /* generic_fadvise+0x229 */
    0xffffffff815b1600, /* ksys_fadvise64_64 */
    0xffffffff8225a1a0, /* do_syscall_64 */
};

static const __u64 fexit_between_stack[] = {
    0xffffffffc02016c0, /* the tracepoint's program */
    0xffffffff8138b0a0, /* __queue_work */
    0xffffffff815bb2a0, /* __lru_add_drain_all */
    0xffffffff815bb4f0, /* lru_add_drain_all */
    0xffffffffc0203a00, /* another tracer's fexit trampoline */
    0xffffffff815ec600, /* sysctl_compaction_handler */
    0xffffffff817b0300, /* proc_sys_call_handler */
};

static bool frames_outside_bpf(const struct model_stack *st)
{
	int i;

	for (i = 0; i < st->nr_frames; i++)
		if (!strncmp(st->frames[i], "bpf_", 4) || !strncmp(st->frames[i], "0x", 2))
			return false;
	return true;
}

static void test_bpf_frames_dropped(void)
{
	struct golden_maps *k = calloc(1, sizeof(*k));
	struct golden_fix f;

	golden__open(&f, true);
	CHECK(k != NULL);
	if (!k || !f.ks)
		return; /* failed already: nothing to read the stacks with */
	golden__site_fill(golden__add_site(k, 1, "df-full", fentry_stack, 5), 100, 100, 0, US, US,
			  10 * US);
	golden__site_fill(golden__add_site(k, 2, "bash", fexit_between_stack, 7), 1, 2, 1, US, US,
			  10 * US);
	golden__build_maps(&f, k, 10000 * MS, info);
	CHECK(f.m.nr_sites == 2);
	CHECK_STR(f.m.sites[0].site, "generic_fadvise");
	CHECK(f.m.sites[0].nr_stacks == 1 && f.m.sites[0].stacks[0].nr_frames == 3);
	CHECK_STR(f.m.sites[0].stacks[0].frames[0], "generic_fadvise+0x229");
	CHECK(frames_outside_bpf(&f.m.sites[0].stacks[0]));
	CHECK_STR(f.m.sites[1].site, "sysctl_compaction_handler");
	CHECK(f.m.sites[1].nr_stacks == 1 && f.m.sites[1].stacks[0].nr_frames == 5);
	CHECK_STR(f.m.sites[1].stacks[0].frames[0], "__queue_work+0x250");
	CHECK_STR(f.m.sites[1].stacks[0].frames[3], "sysctl_compaction_handler+0x30");
	CHECK(frames_outside_bpf(&f.m.sites[1].stacks[0]));
	golden__close(&f);
}

/*
 * arm64's kprobe mode: a stack taken at lru_add_drain_all()'s first instruction
 * lacks the caller, which BPF keeps as the key's ret_ip and the reader puts
 * back: one stack id, two callers (one indirect call reached from two
 * functions) are two sites, named each after its caller, not merged under
 * the first's name.
 */
static void test_one_stack_two_callers(void)
{
	static const __u64 from_fadvise[] = {0xffffffff815bb4f0, 0xffffffff815b14a9};
	static const __u64 from_compaction[] = {0xffffffff815bb4f0, 0xffffffff815ec600};
	struct site_stats *site = calloc(1, sizeof(*site));
	struct golden_fix f;

	golden__open(&f, true);
	CHECK(site != NULL);
	if (!site || !f.ks)
		return; /* failed already: nothing to read the stacks with */
	snapshot__reset(&f.s, 1000 * MS);
	site->key.stack_id = 3;
	strcpy(site->key.comm, "indirect");
	site->key.ret_ip = from_fadvise[1];
	site->count[SITE_DRAINS] = 5;
	CHECK(snapshot__add_site(&f.s, site, from_fadvise, 2) == 0);
	site->key.ret_ip = from_compaction[1];
	site->count[SITE_DRAINS] = 2;
	CHECK(snapshot__add_site(&f.s, site, from_compaction, 2) == 0);
	CHECK(snapshot__sort_sites(&f.s) == 0);
	CHECK(snapshot__find_site(&f.s, &f.s.sites[1].key) == &f.s.sites[1]);
	golden__build(&f, info);
	CHECK(f.m.nr_sites == 2);
	if (f.m.nr_sites == 2) {
		CHECK_STR(f.m.sites[0].site, "generic_fadvise");
		CHECK(f.m.sites[0].count[SITE_DRAINS] == 5);
		CHECK_STR(f.m.sites[1].site, "sysctl_compaction_handler");
		CHECK(f.m.sites[1].count[SITE_DRAINS] == 2);
	}
	golden__close(&f);
	free(site);
}

/* A site whose 100 drains each waited from wait on, 100 ms apart: one work each. */
static void add_long_site(struct model *m, const char *site, __u64 wait)
{
	struct model_site *r = &m->sites[m->nr_sites++];

	snprintf(r->site, sizeof(r->site), "%s", site);
	snprintf(r->comm, sizeof(r->comm), "%s", "stuckdrain");
	r->count[SITE_DRAINS] = r->count[SITE_WORKS] = r->count[SITE_REMOTE_WORKS] = 100;
	golden__sparse_fill(&m->arena, &r->hist[SITE_DISPATCH_NS], wait - 2 * MS, 100 * MS, 100);
	golden__sparse_fill(&m->arena, &r->hist[SITE_RUN_NS], 3 * US, 0, 100);
	golden__sparse_fill(&m->arena, &r->hist[SITE_WAIT_NS], wait, 100 * MS, 100);
	golden__sparse_fill(&m->arena, &r->hist[SITE_LOCK_NS], 2 * US, 0, 100);
	m->total[SITE_DRAINS] += 100;
	m->total[SITE_WORKS] += 100;
}

/* *got: what emit printed of m, freed by the caller. */
static char *emitted(const struct model *m, int emitter)
{
	struct prom_opts po = {.max_sites = 10, .version = "0.0.0"};
	struct text_opts to = {.histograms = true};
	char *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);

	if (emitter == 0) {
		report_text__header(f, &m->info, "0.0.0");
		report_text__print(f, m, &to);
	} else if (emitter == 1) {
		report_json__print(f, m, "0.0.0");
	} else {
		report_prom__print(f, m, &po);
	}
	fclose(f);
	return got;
}

/*
 * Drains stuck for minutes (issue 39): waits of 10 minutes read as about 10
 * minutes in text, JSON and the export; waits of 2 hours, past the
 * histograms' last finite bucket (2^42 ns, 73.3 minutes), as at least that:
 * ">=73m", "p50_is_lower_bound": true, and only the +Inf bucket.
 */
static void test_long_waits(void)
{
	char path[256], *text, *json, *prom;
	struct model m = {};

	m.info = *info;
	m.info.mode = "full";
	m.info.blind_spots = NULL;
	m.info.wait_is_lower_bound = false;
	m.info.entry_visible = true;
	m.info.has_fadvise = false;
	m.span_ns = 3 * 3600 * SEC;
	m.sites = calloc(2, sizeof(*m.sites));
	add_long_site(&m, "khugepaged", 7200 * SEC);
	add_long_site(&m, "generic_fadvise", 600 * SEC);

	text = emitted(&m, 0);
	golden__check("report-long.txt", text, path, sizeof(path));
	/* 10 minutes: the bucket [9.2m, 10.3m)'s middle, and max exact; 2 hours: >= 73m */
	CHECK(strstr(text, "\ngeneric_fadvise stuckdrain    100   100    0  584s  584s  610s"));
	CHECK(strstr(text, "\nkhugepaged      stuckdrain    100   100    0 >=73m >=73m  120m"));
	CHECK(strstr(text, "  73m .. +Inf        100 |****************************************|"));
	CHECK(!strstr(text, "18446744074s"));

	json = emitted(&m, 1);
	CHECK(strstr(
	    json, "\"wait_ns\":{\"count\":100,\"sum\":60495000000000,\"p50\":584115552256,"
		  "\"p50_is_lower_bound\":false,\"p90\":584115552256,\"p90_is_lower_bound\":false,"
		  "\"p99\":584115552256,\"p99_is_lower_bound\":false,\"max\":609900000000}"));
	CHECK(strstr(
	    json, "\"wait_ns\":{\"count\":100,\"sum\":720495000000000,\"p50\":4398046511104,"
		  "\"p50_is_lower_bound\":true,\"p90\":4398046511104,\"p90_is_lower_bound\":true,"
		  "\"p99\":4398046511104,\"p99_is_lower_bound\":true,\"max\":7209900000000}"));

	/* what tests/prom/dashboard gives histogram_quantile() */
	prom = emitted(&m, 2);
	golden__check("report-long.prom", prom, path, sizeof(path));
	CHECK(strstr(
	    prom,
	    "\ndrainstat_wait_seconds_bucket{site=\"generic_fadvise\",le=\"274.877906944\"} 0\n"
	    "drainstat_wait_seconds_bucket{site=\"generic_fadvise\",le=\"1099.511627776\"} 100\n"));
	CHECK(strstr(
	    prom, "\ndrainstat_wait_seconds_bucket{site=\"khugepaged\",le=\"4398.046511104\"} 0\n"
		  "drainstat_wait_seconds_bucket{site=\"khugepaged\",le=\"+Inf\"} 100\n"));
	free(text);
	free(json);
	free(prom);
	model__free(&m);
}

/*
 * A site slow from dispatch on one CPU: its slow line names that CPU from the
 * victim table, with the others' slowest, in text and JSON.
 */
static void test_slow_dispatch_cpu(void)
{
	static const __u64 p99[] = {60 * US, 40 * MS, 80 * US};
	char *text, *json;
	struct model m = {};
	int c;

	m.info = *info;
	m.info.mode = "full";
	m.info.blind_spots = NULL;
	m.info.entry_visible = true;
	m.info.has_fadvise = false;
	m.span_ns = 60 * SEC;
	m.sites = calloc(1, sizeof(*m.sites));
	add_long_site(&m, "generic_fadvise", 40 * MS);
	m.cpus = calloc(3, sizeof(*m.cpus));
	for (c = 0; c < 3; c++) {
		m.cpus[c].cpu = c + 1;
		m.cpus[c].count[CPU_WORKS] = 100;
		golden__sparse_fill(&m.arena, &m.cpus[c].hist[CPU_DISPATCH_NS], p99[c], 0, 100);
		golden__sparse_fill(&m.arena, &m.cpus[c].hist[CPU_RUN_NS], 3 * US, 0, 100);
	}
	m.nr_cpus = 3;

	text = emitted(&m, 0);
	CHECK(strstr(text, "\n    slow: wait p99 9.9s; own -, lock 0%, dispatch 100%, run 0%: "
			   "dispatch dominates: the works are slow to start on CPU 2 (dispatch p99 "
			   "40ms); at most 78us on the 2 other CPUs\n"));
	json = emitted(&m, 1);
	CHECK(strstr(json, "\"dominant\":\"dispatch\""));
	CHECK(strstr(json, "},\"slow_cpus\":[{\"cpu\":2,\"dispatch_p99_ns\":"));
	CHECK(strstr(json,
		     "}],\"slow_cpus_more\":0,\"other_cpus\":2,\"other_cpus_dispatch_p99_ns\":"));
	free(text);
	free(json);
	model__free(&m);
}

static void test_escape(void)
{
	char buf[64];

	CHECK_STR(escape__text("a\x1b[1m\n\\\"", 16, buf, sizeof(buf)), "a\\x1b[1m\\x0a\\x5c\"");
	CHECK_STR(escape__text("\xff\xfe", 16, buf, sizeof(buf)), "\\xff\\xfe");
	CHECK_STR(escape__text("abcdef", 3, buf, sizeof(buf)), "abc");
	CHECK_STR(escape__text("abcdef", 16, buf, 4), "abc");
}

int main(void)
{
	int failed = 0;

	RUN(test_report_cumulative);
	RUN(test_report_interval_and_histograms);
	RUN(test_report_full_mode);
	RUN(test_report_qpw);
	RUN(test_report_in_flight);
	RUN(test_report_wait_alone);
	RUN(test_report_empty);
	RUN(test_fadvise_cause);
	RUN(test_rows_sorted);
	RUN(test_sort_kept_across_readings);
	RUN(test_report_many_cpus);
	RUN(test_one_stack_two_callers);
	RUN(test_bpf_frames_dropped);
	RUN(test_escape);
	RUN(test_report_cgroups);
	RUN(test_long_waits);
	RUN(test_slow_dispatch_cpu);
	return failed ? 1 : 0;
}
