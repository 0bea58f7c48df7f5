// SPDX-License-Identifier: GPL-2.0
/*
 * The facts of a stall from the model's drains in flight and the kernel's
 * state read with them (stall.h classifies): a pending work's CPU, or the
 * drain mutex a waiter waits for.
 */
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "model_int.h"

static bool cpu_in(const __u64 *mask, int cpu)
{
	return cpu >= 0 && cpu < DRAINSTAT_MAX_CPUS && (mask[cpu / 64] >> (cpu % 64) & 1);
}

static void running_facts(struct stall_facts *sf, const struct model_running *r)
{
	sf->running_known = r->known;
	sf->idle = r->idle;
	sf->since_known = r->since_known;
	sf->kthread = r->kthread;
	sf->worker = r->worker;
	memcpy(sf->comm, r->comm, sizeof(sf->comm));
	sf->pid = r->pid;
	sf->tid = r->tid;
	sf->policy = r->known ? r->policy : NULL;
	sf->priority = r->priority;
	sf->running_ns = r->running_ns;
}

/*
 * The online CPUs other than cpu and not isolated (where known), as a CPU
 * list; none where the list is not known, empty, or cut.
 */
static void move_to(struct stall_facts *sf, const struct stall_system *sys, int cpu,
		    const __u64 *isolated)
{
	__u64 mask[DRAINSTAT_MAX_CPUS / 64];
	bool any = false;
	size_t i;

	sf->move_to[0] = '\0';
	if (!sys->online_known || cpu < 0 || cpu >= DRAINSTAT_MAX_CPUS)
		return;
	for (i = 0; i < DRAINSTAT_MAX_CPUS / 64; i++) {
		mask[i] = sys->online[i] & ~(isolated ? isolated[i] : 0);
		if (i == (size_t)cpu / 64)
			mask[i] &= ~(1ULL << (cpu % 64));
		any |= mask[i] != 0;
	}
	if (!any)
		return;
	cpulist__format(mask, sf->move_to, sizeof(sf->move_to));
	if (strstr(sf->move_to, "..."))
		sf->move_to[0] = '\0';
}

/* The system's facts, and those of the CPU: its fair server, whether it is online. */
static void system_facts(struct stall_facts *sf, const struct stall_system *sys, int cpu)
{
	if (sys->rt_runtime_known) {
		sf->rt_throttling = sys->rt_runtime_us < 0 ? STALL_NO : STALL_YES;
		sf->rt_runtime_us = sys->rt_runtime_us;
	}
	memcpy(sf->preempt, sys->preempt, sizeof(sf->preempt));
	sf->preempt[sizeof(sf->preempt) - 1] = '\0';
	if (sys->online_known)
		sf->online = cpu_in(sys->online, cpu) ? STALL_YES : STALL_NO;
	sf->fair_server = sys->fair_dir;
	if (sys->fair_dir == FAIR_ON && !cpu_in(sys->fair_read, cpu))
		sf->fair_server = FAIR_NOT_KNOWN;
	else if (sys->fair_dir == FAIR_ON && cpu_in(sys->fair_off, cpu))
		sf->fair_server = FAIR_OFF;
}

void model__explain_work(struct model_work *w, const struct stall_system *sys,
			 const __u64 *isolated)
{
	struct stall_facts sf = {.cpu = w->target_cpu, .pending_ns = w->age_ns};

	running_facts(&sf, &w->running);
	sf.isolated = w->isolated;
	sf.nohz_full = w->nohz_full;
	system_facts(&sf, sys, w->target_cpu);
	move_to(&sf, sys, w->target_cpu, isolated);
	stall__explain(&sf, &w->stall);
}

/*
 * The drain that holds the mutex: the oldest in flight past its lock phase
 * (works queued, or CPUs drained in place); m's drains sorted oldest first.
 */
static const struct model_drain *mutex_holder(const struct model *m)
{
	int i;

	for (i = 0; i < m->nr_in_flight; i++) {
		enum drain_phase p = m->in_flight[i].phase;

		if (p == PHASE_PENDING || p == PHASE_RUNNING || p == PHASE_IN_PLACE)
			return &m->in_flight[i];
	}
	return NULL;
}

void model_stall_mutex(struct model *m)
{
	const struct model_drain *h = mutex_holder(m);
	struct stall_facts sf = {.cpu = -1, .mutex_waiter = true};
	int i;

	sf.mutex_waiters = m->mutex_waiters;
	if (h) {
		sf.holder = (struct stall_holder){.known = true,
						  .pid = h->pid,
						  .tid = h->tid,
						  .age_ns = h->age_ns,
						  .state_key = model__phase_key(h->phase),
						  .state_name = model__phase_name(h->phase)};
		memcpy(sf.holder.comm, h->comm, sizeof(sf.holder.comm));
	}
	for (i = 0; i < m->nr_in_flight; i++) {
		struct model_drain *md = &m->in_flight[i];

		if (md->phase != PHASE_MUTEX)
			continue;
		sf.pending_ns = md->age_ns;
		stall__explain(&sf, &md->stall);
	}
}

enum stall_cause model__drain_cause(const struct model_drain *md)
{
	if (md->phase == PHASE_MUTEX)
		return STALL_MUTEX;
	if (md->phase == PHASE_PENDING && md->nr_in_flight && !md->in_flight[0].started)
		return md->in_flight[0].stall.cause;
	return STALL_UNKNOWN;
}

/* The dispatch p99 of each CPU with works, into the slow site's named CPUs. */
static void slow_cpus(const struct model *m, struct slow_site *out)
{
	struct cpu_dispatch *cpus;
	bool lower_bound;
	int i, n = 0;

	cpus = m->nr_cpus ? calloc((size_t)m->nr_cpus, sizeof(*cpus)) : NULL;
	if (!cpus)
		return;
	for (i = 0; i < m->nr_cpus; i++) {
		if (!m->cpus[i].hist[CPU_DISPATCH_NS].count)
			continue;
		cpus[n].cpu = m->cpus[i].cpu;
		cpus[n++].p99_ns =
		    hist__percentile(&m->cpus[i].hist[CPU_DISPATCH_NS], 0.99, &lower_bound);
	}
	stall__slow_cpus(cpus, n, out);
	free(cpus);
}

void model__slow_site(const struct model *m, const struct model_site *s, struct slow_site *out)
{
	const struct model_info *info = &m->info;
	static const enum site_hist hists[WAIT_PARTS] = {
	    [PART_OWN] = SITE_OWN_NS,
	    [PART_LOCK] = SITE_LOCK_NS,
	    [PART_DISPATCH] = SITE_DISPATCH_NS,
	    [PART_RUN] = SITE_RUN_NS,
	};
	const struct sparse_hist *wait = &s->hist[SITE_WAIT_NS];
	bool works = !info->works_unseen, lower_bound = false;
	__u64 parts[WAIT_PARTS] = {0};
	int p;

	memset(out, 0, sizeof(*out));
	out->measured[PART_OWN] = info->has_local;
	out->measured[PART_LOCK] = info->entry_visible && works;
	out->measured[PART_DISPATCH] = out->measured[PART_RUN] = works;
	for (p = 0; p < WAIT_PARTS; p++)
		parts[p] = out->measured[p] ? s->hist[hists[p]].sum : 0;
	stall__slow_site(hist__percentile(wait, 0.99, &lower_bound), wait->sum, parts, out);
	out->wait_p99_is_lower_bound = lower_bound;
	if (out->slow && out->dominant == PART_DISPATCH)
		slow_cpus(m, out);
}
