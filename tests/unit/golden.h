/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the emitters' unit tests share: synthetic histograms, and golden files
 * (tests/golden/NAME) that DRAINSTAT_GOLDEN_UPDATE=1 rewrites from the output.
 */
#ifndef GOLDEN_H
#define GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "hist.h"
#include "ksyms.h"
#include "model.h"
#include "snapshot.h"

#define GOLDEN_KALLSYMS "tests/fixtures/kallsyms-report"

/* n samples first, first + step, ... into h, a kernel-layout histogram. */
static inline void golden__hist_fill(struct hist *h, __u64 first, __u64 step, int n)
{
	int i;

	for (i = 0; i < n; i++)
		hist__add(h, first + step * (__u64)i);
}

/* The same samples added to h, a model's histogram, its buckets in a. */
static inline void golden__sparse_fill(struct arena *a, struct sparse_hist *h, __u64 first,
				       __u64 step, int n)
{
	struct hist *dense = calloc(1, sizeof(*dense));
	struct sparse_hist add;

	CHECK(dense != NULL);
	golden__hist_fill(dense, first, step, n);
	CHECK(hist__read(dense, a, &add) == 0);
	CHECK(hist__merge(h, &add, a) == 0);
	free(dense);
}

/* A snapshot as the kernel's maps hold it, before it is read: dense histograms. */
struct golden_maps {
	struct site_stats sites[8];
	const __u64 *ips[8];
	int nr_ips[8];
	int nr_sites;
	struct cpu_stats cpus[2];
	struct fadvise_stats fadvise[FADVISE_ADVICE_SLOTS];
	__u64 counters[CNT_NR];
};

static inline struct site_stats *golden__add_site(struct golden_maps *k, int stack_id,
						  const char *comm, const __u64 *ips, int nr_ips)
{
	struct site_stats *site = &k->sites[k->nr_sites];

	site->key.stack_id = stack_id;
	memcpy(site->key.comm, comm, strnlen(comm, sizeof(site->key.comm)));
	k->ips[k->nr_sites] = ips;
	k->nr_ips[k->nr_sites++] = nr_ips;
	return site;
}

#define GOLDEN_MS 1000000ULL
#define GOLDEN_US 1000ULL

/* A DONTNEED's stack at its queued work: the tracing glue, the drain functions, the caller. */
static const __u64 golden_fadvise_stack[] = {
    0xffffffff814cac10, /* bpf_trace_run3 */
    0xffffffff813880c0, /* __bpf_trace_workqueue_queue_work */
    0xffffffff8138b0a0, /* __queue_work */
    0xffffffff8138b310, /* queue_work_on */
    0xffffffff815bb2a0, /* __lru_add_drain_all */
    0xffffffff815b14c0, /* generic_fadvise */
    0xffffffff815b1600, /* ksys_fadvise64_64 */
    0xffffffff815b16e0, /* __x64_sys_fadvise64 */
    0xffffffff8225a1a0, /* do_syscall_64 */
    0xffffffff81000100, /* entry_SYSCALL_64_after_hwframe */
};

#define GOLDEN_FADVISE_FRAMES ((int)(sizeof(golden_fadvise_stack) / sizeof(__u64)))

static const __u64 golden_compaction_stack[] = {
    0xffffffff8138b0a0, 0xffffffff8138b310, 0xffffffff815bb2a0, 0xffffffff815bb4f0,
    0xffffffff815ec600, 0xffffffff817b0300, 0xffffffff816d8b00, 0xffffffff816d9100,
    0xffffffff8225a1a0, 0xffffffff81000100,
};

/* -C 0,2-3 and -C 2 as bits */
static const __u64 golden_cpus_0_2_3[DRAINSTAT_MAX_CPUS / 64] = {0xd};
static const __u64 golden_cpus_2[DRAINSTAT_MAX_CPUS / 64] = {0x4};

static const __u64 golden_khugepaged_stack[] = {
    0xffffffff8138b0a0, 0xffffffff8138b310, 0xffffffff815bb2a0, 0xffffffff815bb4f0,
    0xffffffff816a2d00, 0xffffffff81394f00, 0xffffffff81311600, 0xffffffff81249150,
};

static inline void golden__site_fill(struct site_stats *s, int drains, int works, int self,
				     __u64 dispatch, __u64 run, __u64 wait)
{
	s->count[SITE_DRAINS] = (__u64)drains;
	s->count[SITE_WORKS] = (__u64)works;
	s->count[SITE_SELF_WORKS] = (__u64)self;
	s->count[SITE_REMOTE_WORKS] = (__u64)(works - self);
	golden__hist_fill(&s->hist[SITE_DISPATCH_NS], dispatch, dispatch / 50, works);
	golden__hist_fill(&s->hist[SITE_RUN_NS], run, run / 100, works);
	golden__hist_fill(&s->hist[SITE_WAIT_NS], wait, wait / 40, drains);
}

/*
 * The maps the emitters' tests read: 300 forced drains (times scale) from
 * drainforce, two compaction stacks (one row), khugepaged, and a comm no
 * terminal or parser should trust, evil.
 */
static inline struct golden_maps *golden__make_maps(int scale, const char *evil)
{
	const __u64 us = GOLDEN_US, ms = GOLDEN_MS;
	struct golden_maps *k = calloc(1, sizeof(*k));
	struct site_stats *site;

	CHECK(k != NULL);
	site = golden__add_site(k, 1, "drainforce", golden_fadvise_stack, GOLDEN_FADVISE_FRAMES);
	golden__site_fill(site, 300 * scale, 300 * scale, scale, 12 * us, 3 * us, 40 * us);
	site = golden__add_site(k, 2, "bash", golden_compaction_stack, 10);
	golden__site_fill(site, 2, 4, 2, 30 * us, 900 * us, 2 * ms);
	site = golden__add_site(k, 3, "bash", golden_compaction_stack, 9);
	golden__site_fill(site, 1, 2, 1, 25 * us, 800 * us, 1800 * us);
	site = golden__add_site(k, 4, "khugepaged", golden_khugepaged_stack, 8);
	golden__site_fill(site, 3, 3, 0, 8 * us, 2 * us, 60 * us);
	site = golden__add_site(k, -1, evil, NULL, 0);
	golden__site_fill(site, 1, 1, 0, 5 * us, 1 * us, 9 * us);
	k->cpus[0].count[CPU_WORKS] = 300 * (__u64)scale + 5;
	golden__hist_fill(&k->cpus[0].hist[CPU_DISPATCH_NS], 12 * us, 240, 300 * scale + 5);
	golden__hist_fill(&k->cpus[0].hist[CPU_RUN_NS], 3 * us, 30, 300 * scale + 5);
	k->cpus[1].count[CPU_WORKS] = 5;
	k->cpus[1].count[CPU_SELF_WORKS] = 3;
	golden__hist_fill(&k->cpus[1].hist[CPU_DISPATCH_NS], 25 * us, 500, 5);
	golden__hist_fill(&k->cpus[1].hist[CPU_RUN_NS], 800 * us, 8000, 5);
	k->fadvise[FADVISE_DONTNEED].escalations = 300 * (__u64)scale;
	golden__hist_fill(&k->fadvise[FADVISE_DONTNEED].latency_ns, 50 * us, 1000, 300 * scale);
	golden__hist_fill(&k->fadvise[1].latency_ns, 900, 0, 1);
	k->counters[CNT_STACK_LOST] = 1;
	k->counters[CNT_WORK_UNSEEN] = 2;
	return k;
}

/*
 * What only full mode sees, added to the first two sites (forced drains at
 * the second): 20 empty drains, 5 that drained only their own CPU (6.18+),
 * the own local drain of 325, 290 IPIs, lock times and 8000 local drains.
 */
static inline void golden__add_full_mode(struct golden_maps *k)
{
	k->sites[0].count[SITE_DRAINS] += 25; /* 20 piggybacked, 5 own only: no work queued */
	k->sites[0].count[SITE_EMPTY_DRAINS] = 20;
	k->sites[0].count[SITE_OWN_ONLY_DRAINS] = 5;
	golden__hist_fill(&k->sites[0].hist[SITE_OWN_NS], 1500, 20, 325);
	k->sites[0].count[SITE_IPIS] = 290;
	golden__hist_fill(&k->sites[0].hist[SITE_LOCK_NS], 2000, 100, 300);
	golden__hist_fill(&k->sites[0].hist[SITE_LOCAL_NS], 700, 10, 8000);
	k->sites[1].count[SITE_FORCED_DRAINS] = 2;
	k->cpus[0].count[CPU_IPIS] = 290;
}

/* A pod's slice, and two of its containers' scopes. */
#define GOLDEN_POD                                                                                 \
	"/kubepods.slice/kubepods-burstable.slice/"                                                \
	"kubepods-burstable-pod1c2d3e4f_5a6b_4c7d_8e9f_0a1b2c3d4e5f.slice"
#define GOLDEN_HEX "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* The cgroups of golden__add_cgroups() by id, as model__name_cgroups() names them. */
static const struct {
	__u64 id;
	const char *path;
} golden_cgroups[] = {
    {1, "/"},
    {101, "/system.slice/drainwork.service"},
    {102, "/system.slice/drainwork2.service"},
    {103, GOLDEN_POD "/cri-containerd-" GOLDEN_HEX ".scope"},
    {104, GOLDEN_POD "/cri-containerd-fedcba9876543210" GOLDEN_HEX ".scope"},
    {105, "/user.slice/evil\x1b[31m\"\\\n\xff"},
};

/*
 * The sites keyed by cgroup too (--by's default): drainforce's DONTNEEDs from
 * two services of the same comm and site, compaction from two containers of
 * one pod, khugepaged in the root cgroup, the evil comm in a cgroup with an
 * evil name, and drainforce in a cgroup gone by the report (999).
 */
static inline void golden__add_cgroups(struct golden_maps *k)
{
	struct site_stats *s;

	k->sites[0].key.cgroup_id = 101;
	k->sites[1].key.cgroup_id = 103;
	k->sites[2].key.cgroup_id = 104;
	k->sites[3].key.cgroup_id = 1;
	k->sites[4].key.cgroup_id = 105;
	s = golden__add_site(k, 5, "drainforce", golden_fadvise_stack, GOLDEN_FADVISE_FRAMES);
	s->key.cgroup_id = 102;
	golden__site_fill(s, 200, 200, 0, 11 * GOLDEN_US, 3 * GOLDEN_US, 35 * GOLDEN_US);
	s = golden__add_site(k, 6, "drainforce", golden_fadvise_stack, GOLDEN_FADVISE_FRAMES);
	s->key.cgroup_id = 999;
	golden__site_fill(s, 1, 1, 0, 10 * GOLDEN_US, 3 * GOLDEN_US, 30 * GOLDEN_US);
}

/*
 * m's rows named as model__name_cgroups() would name golden__add_cgroups()'
 * cgroups, the pod of 103's (not 104's) known by name as /var/log/pods names it.
 */
static inline void golden__name_cgroups(struct model *m)
{
	size_t j;
	int i;

	m->info.by_cgroup = true;
	for (i = 0; i < m->nr_sites; i++) {
		m->sites[i].cgroup = "cgroup:999";
		for (j = 0; j < sizeof(golden_cgroups) / sizeof(golden_cgroups[0]); j++)
			if (golden_cgroups[j].id == m->sites[i].cgroup_id)
				m->sites[i].cgroup = golden_cgroups[j].path;
		if (m->sites[i].cgroup_id == 103)
			m->sites[i].pod = (struct model_pod){"web-0", "default"};
	}
}

/*
 * nr CPUs, each the target of one work of each of 50 wide drains from CPU 0
 * (so CPU 0's are self works), with two among them that matter: CPU 17 runs
 * its works slowly (busy: the largest TOTAL) and CPU 200 was once slow to
 * start one (a late wakeup: the largest max dispatch). Freed by the caller.
 */
static inline struct cpu_stats *golden__wide_cpus(int nr)
{
	const __u64 us = GOLDEN_US;
	struct cpu_stats *c = calloc((size_t)nr, sizeof(*c));
	int cpu;

	CHECK(c != NULL);
	for (cpu = 0; cpu < nr; cpu++) {
		__u64 run = cpu == 17 ? 400 * us : 2 * us + (__u64)(cpu % 7) * 100;

		c[cpu].count[CPU_WORKS] = 50;
		c[cpu].count[CPU_SELF_WORKS] = cpu ? 0 : 50;
		golden__hist_fill(&c[cpu].hist[CPU_DISPATCH_NS], 10 * us + (__u64)cpu * 40, 100,
				  cpu == 200 ? 49 : 50);
		golden__hist_fill(&c[cpu].hist[CPU_RUN_NS], run, 20, 50);
	}
	if (nr > 200)
		hist__add(&c[200].hist[CPU_DISPATCH_NS], 9 * GOLDEN_MS);
	return c;
}

/*
 * How often needle occurs in text. Not inlined: GCC 12 then takes a string
 * of open_memstream()'s for a dangling pointer to its buffer variable.
 */
static __attribute__((noinline, unused)) int golden__count(const char *text, const char *needle)
{
	size_t at = 0;
	int n = 0;
	const char *p;

	while ((p = strstr(text + at, needle))) {
		at = (size_t)(p - text) + 1;
		n++;
	}
	return n;
}

/* Reads k into s, as tracer__snapshot() reads the maps, and frees k. */
static inline void golden__read_maps(struct golden_maps *k, struct snapshot *s, __u64 taken_ns)
{
	int i;

	memset(s, 0, sizeof(*s));
	snapshot__reset(s, taken_ns);
	for (i = 0; i < k->nr_sites; i++)
		CHECK(snapshot__add_site(s, &k->sites[i], k->ips[i], k->nr_ips[i]) == 0);
	CHECK(snapshot__set_cpus(s, k->cpus, 2) == 0);
	for (i = 0; i < FADVISE_ADVICE_SLOTS; i++)
		CHECK(snapshot__set_fadvise(s, i, &k->fadvise[i]) == 0);
	memcpy(s->counters, k->counters, sizeof(s->counters));
	free(k);
}

/* The cgroup ids of golden__add_in_flight()'s tasks, named by golden__name_in_flight(). */
#define GOLDEN_CG_ROOT	  1ULL
#define GOLDEN_CG_DROPPER 4101ULL
#define GOLDEN_CG_SPIN	  4102ULL
#define GOLDEN_CG_GONE	  4103ULL

/*
 * The cgroups of m's drains in flight and of what runs on their CPUs, named
 * as model__name_cgroups() names them from a tree: the dropper's unit, the
 * spinner's container, khugepaged's root, the mover's cgroup gone.
 */
static inline void golden__name_in_flight(struct model *m)
{
	int i, k;

	for (i = 0; i < m->nr_in_flight; i++) {
		struct model_drain *md = &m->in_flight[i];

		md->cgroup = md->cgroup_id == GOLDEN_CG_DROPPER ? "/system.slice/sd-dropper.service"
			     : md->cgroup_id == GOLDEN_CG_ROOT	? "/"
								: "cgroup:4103";
		for (k = 0; k < md->nr_in_flight; k++)
			if (md->in_flight[k].running.known)
				md->in_flight[k].running.cgroup =
				    "/kubepods.slice/kubepods-pod0f1e.slice/cri-containerd-"
				    "9a8b7c6d5e4f.scope";
	}
}

/*
 * What the kernel said of the 4-CPU machine of golden__add_in_flight(), as
 * stall__read_system() reads it: RT throttling off, every CPU online, the
 * preemption model voluntary, and CPU 3's fair server off.
 */
static inline void golden__stall_system(struct stall_system *sys)
{
	memset(sys, 0, sizeof(*sys));
	sys->rt_runtime_known = true;
	sys->rt_runtime_us = -1;
	sys->online_known = true;
	sys->online[0] = 0xf;
	snprintf(sys->preempt, sizeof(sys->preempt), "voluntary");
	sys->fair_dir = FAIR_ON;
	sys->fair_read[0] = sys->fair_off[0] = 1ULL << 3;
}

/*
 * Drains in flight at now_ns, on a 4-CPU machine, read as tracer__snapshot()
 * reads them: a DONTNEED held for 11.8 s by CPU 3, where a SCHED_FIFO spinner
 * runs (an isolated, nohz_full CPU); with full, khugepaged waiting 7.9 s for
 * the drain mutex behind it and a young drain whose only work runs. Their
 * cgroups: GOLDEN_CG_*.
 */
static inline void golden__add_in_flight(struct snapshot *s, __u64 now_ns, bool full,
					 const __u64 *ips, int nr_ips)
{
	const __u64 held = now_ns - 11800000000ULL;
	struct drain_state d = {.start_ns = held, .tgid = 812, .caller_cpu = 0, .works = 3};
	struct in_flight_work w = {.target_cpu = 3};

	d.pending = 1;
	d.by_entry = d.in_call = full;
	memcpy(d.site.comm, "sd-dropper", 11);
	d.site.cgroup_id = GOLDEN_CG_DROPPER;
	CHECK(snapshot__add_drain(s, 815, &d, ips, nr_ips) == 0);
	w.ws = (struct work_state){.work = 1,
				   .queue_ns = held + 4000,
				   .drain_start_ns = held,
				   .caller_tid = 815,
				   .caller_cpu = 0};
	w.running = (struct running_task){.running_ns = 12000000000ULL,
					  .cpu = 3,
					  .flags = RUNNING_KNOWN | RUNNING_SINCE,
					  .tid = 820,
					  .tgid = 812,
					  .policy = 1,
					  .prio = 50,
					  .cgroup_id = GOLDEN_CG_SPIN};
	memcpy(w.running.comm, "sd-spin", 8);
	CHECK(snapshot__add_work(s, &w) == 0);
	s->in_flight.isolated[0] = s->in_flight.nohz_full[0] = 1ULL << 3;
	golden__stall_system(&s->in_flight.system);
	s->in_flight.read_ns = now_ns;
	s->in_flight.read = true;
	if (!full)
		return;
	d = (struct drain_state){.start_ns = now_ns - 7900000000ULL,
				 .tgid = 77,
				 .caller_cpu = 1,
				 .in_call = 1,
				 .by_entry = 1};
	memcpy(d.site.comm, "khugepaged", 11);
	d.site.cgroup_id = GOLDEN_CG_ROOT;
	CHECK(snapshot__add_drain(s, 77, &d, ips, nr_ips) == 0);
	d = (struct drain_state){.start_ns = now_ns - 300000,
				 .tgid = 90,
				 .caller_cpu = 2,
				 .in_call = 1,
				 .by_entry = 1,
				 .works = 1,
				 .pending = 1};
	memcpy(d.site.comm, "mover", 6);
	d.site.cgroup_id = GOLDEN_CG_GONE;
	CHECK(snapshot__add_drain(s, 91, &d, ips, nr_ips) == 0);
	w = (struct in_flight_work){.target_cpu = 1};
	w.ws = (struct work_state){.work = 2,
				   .queue_ns = now_ns - 250000,
				   .start_ns = now_ns - 200000,
				   .drain_start_ns = now_ns - 300000,
				   .caller_tid = 91,
				   .caller_cpu = 2};
	CHECK(snapshot__add_work(s, &w) == 0);
}

/* What full mode sees, with the IPIs counted and the local drains hooked, into i. */
static inline void golden__full_info(struct model_info *i)
{
	i->mode = "full";
	i->blind_spots = NULL;
	i->wait_is_lower_bound = false;
	i->entry_visible = true;
	i->has_ipi = true;
	i->has_local = true;
}

/*
 * Full mode on a kernel with Queue PerCPU Work, into i and s: k's maps with
 * what full mode sees (golden__add_full_mode()), read at 10 s, and the drains
 * in flight at 20 s.
 */
static inline void golden__read_qpw(struct golden_maps *k, struct snapshot *s, struct model_info *i)
{
	golden__full_info(i);
	i->blind_spots = "the works of drains, which Queue PerCPU Work may run on the caller's CPU";
	i->qpw = true;
	i->works_unseen = true;
	golden__add_full_mode(k);
	golden__read_maps(k, s, 10000000000ULL);
	golden__add_in_flight(s, 20000000000ULL, true, golden_fadvise_stack, GOLDEN_FADVISE_FRAMES);
}

/* What the reports' header says of the kernel and mode by default: tracepoint mode on 6.18. */
static const struct model_info golden_info = {
    .mode = "tracepoint",
    .kernel = "6.18.44-test",
    .blind_spots = "drain entry or exit",
    .wait_is_lower_bound = true,
    .has_fadvise = true,
    .cumulative = true,
};

/*
 * A report test's fixture: the symbols of tests/fixtures/kallsyms-report, the
 * snapshot s (and prev before it, for an interval) that a test reads, and the
 * model m built from them. A test opens it, reads its snapshots, builds, checks
 * and closes it; between two models, golden__clear() keeps the symbols.
 */
struct golden_fix {
	struct ksyms *ks;
	struct snapshot s;
	struct snapshot prev;
	struct model m;
};

/* f empty, its symbols loaded when symbols (else the model's frames stay addresses). */
static inline void golden__open(struct golden_fix *f, bool symbols)
{
	memset(f, 0, sizeof(*f));
	if (symbols)
		CHECK(ksyms__load(GOLDEN_KALLSYMS, &f->ks) == 0);
}

/* f->m from f->s with i; the interval since f->prev when prev was read (taken_ns set). */
static inline void golden__build(struct golden_fix *f, const struct model_info *i)
{
	const struct snapshot *prev = f->prev.taken_ns ? &f->prev : NULL;

	CHECK(model__build(&f->s, prev, 0, f->ks, i, &f->m) == 0);
}

/* k read at taken_ns into f->s (golden__read_maps()), then f->m from it with i. */
static inline void golden__build_maps(struct golden_fix *f, struct golden_maps *k, __u64 taken_ns,
				      const struct model_info *i)
{
	golden__read_maps(k, &f->s, taken_ns);
	golden__build(f, i);
}

/* f's model and snapshots freed, its symbols kept: ready for the next model. */
static inline void golden__clear(struct golden_fix *f)
{
	model__free(&f->m);
	snapshot__free(&f->s);
	snapshot__free(&f->prev);
}

static inline void golden__close(struct golden_fix *f)
{
	golden__clear(f);
	ksyms__free(f->ks);
	f->ks = NULL;
}

/* The whole file at path, NUL-terminated (free it), or NULL. */
static inline char *golden__read(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Checks got against tests/golden/name (rewritten first when updating); path gets its path. */
static inline void golden__check(const char *name, const char *got, char *path, size_t size)
{
	char *want;
	FILE *f;

	snprintf(path, size, "tests/golden/%s", name);
	if (getenv("DRAINSTAT_GOLDEN_UPDATE")) {
		f = fopen(path, "w");
		fputs(got, f);
		fclose(f);
	}
	want = golden__read(path);
	CHECK(want != NULL);
	if (want && strcmp(got, want))
		fprintf(stderr, "  %s differs; got:\n%s", path, got);
	CHECK(want && !strcmp(got, want));
	free(want);
}

#endif /* GOLDEN_H */
