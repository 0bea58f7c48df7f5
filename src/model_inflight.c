// SPDX-License-Identifier: GPL-2.0
/*
 * The drains in flight when a report is made: each one's phase, its works
 * (pending first) and what runs on the CPUs they wait for; which are stuck.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

static const char *policy_name(__u32 policy)
{
	static const char *const names[] = {"OTHER", "FIFO", "RR",	 "BATCH",
					    "ISO",   "IDLE", "DEADLINE", "EXT"};

	return policy < sizeof(names) / sizeof(names[0]) ? names[policy] : "?";
}

static __u64 age(__u64 now, __u64 since)
{
	return now > since ? now - since : 0;
}

static bool cpu_in(const __u64 *mask, __u32 cpu)
{
	return cpu < DRAINSTAT_MAX_CPUS && (mask[cpu / 64] >> (cpu % 64) & 1);
}

static void model_running(struct model_running *m, const struct running_task *r)
{
	m->known = r->flags & RUNNING_KNOWN;
	if (!m->known)
		return;
	m->idle = r->flags & RUNNING_IDLE;
	m->since_known = r->flags & RUNNING_SINCE;
	m->kthread = r->flags & RUNNING_KTHREAD;
	m->worker = r->flags & RUNNING_WORKER;
	m->tid = r->tid;
	m->pid = r->tgid;
	memcpy(m->comm, r->comm, sizeof(m->comm));
	m->comm[sizeof(m->comm) - 1] = '\0';
	m->policy = policy_name(r->policy);
	m->priority = r->prio;
	m->running_ns = r->running_ns;
	m->cgroup_id = r->cgroup_id;
}

/*
 * A work of a drain in flight, on any CPU: -C narrows what the sites and CPUs
 * count, never what a drain waits on (info: the -C CPUs, or NULL).
 */
static void model_work(struct model_work *w, const struct in_flight_work *fw,
		       const struct snap_in_flight *f, const struct model_info *info)
{
	memset(w, 0, sizeof(*w));
	w->target_cpu = (int)fw->target_cpu;
	w->started = fw->ws.start_ns != 0;
	w->self = fw->target_cpu == fw->ws.caller_cpu;
	w->isolated = cpu_in(f->isolated, fw->target_cpu);
	w->nohz_full = cpu_in(f->nohz_full, fw->target_cpu);
	w->outside_filter = info->filter_cpu_mask && !cpu_in(info->filter_cpu_mask, fw->target_cpu);
	w->age_ns = age(f->read_ns, w->started ? fw->ws.start_ns : fw->ws.queue_ns);
	if (w->started)
		return;
	model_running(&w->running, &fw->running);
	model__explain_work(w, &f->system, f->isolated);
}

/* The works of drain sd: pending first, then by CPU. 0 or -ENOMEM. */
static int drain_works(struct model *m, struct model_drain *md, const struct snap_drain *sd,
		       const struct snap_in_flight *f)
{
	int i, pass, n = 0;

	md->in_flight = arena__alloc(&m->arena, (size_t)f->nr_works * sizeof(*md->in_flight) + 1);
	if (!md->in_flight)
		return -ENOMEM;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < f->nr_works; i++) {
			const struct in_flight_work *fw = &f->works[i];

			if (fw->ws.caller_tid != sd->tid ||
			    fw->ws.drain_start_ns != sd->d.start_ns ||
			    (fw->ws.start_ns != 0) != (pass == 1))
				continue;
			model_work(&md->in_flight[n++], fw, f, &m->info);
			md->pending_works += pass == 0;
		}
	}
	md->nr_in_flight = n;
	return 0;
}

static enum drain_phase drain_phase(const struct model_drain *md, const struct drain_state *d,
				    bool works_unseen)
{
	if (d->by_entry && !d->works && drain_reached_cpu(d))
		return PHASE_IN_PLACE;
	/* Queue PerCPU Work may run the works on the caller's CPU, queueing none */
	if (d->by_entry && !d->works)
		return works_unseen ? PHASE_NO_WORK : PHASE_MUTEX;
	if (md->pending_works)
		return PHASE_PENDING;
	if (md->nr_in_flight)
		return PHASE_RUNNING;
	/*
	 * none of its works is in flight: they ended, or were queued after the
	 * works were read; never "works pending" with no pending work shown
	 */
	return PHASE_RETURNING;
}

static int model_drain(struct model *m, struct model_drain *md, const struct snap_drain *sd,
		       const struct snap_in_flight *f, const struct ksyms *ks)
{
	int err;

	memset(md, 0, sizeof(*md));
	md->id_ns = sd->d.start_ns;
	md->tid = sd->tid;
	md->pid = sd->d.tgid;
	md->caller_cpu = (int)sd->d.caller_cpu;
	memcpy(md->comm, sd->d.site.comm, sizeof(md->comm));
	md->comm[sizeof(md->comm) - 1] = '\0';
	md->cgroup_id = sd->d.site.cgroup_id;
	md->age_ns = age(f->read_ns, sd->d.start_ns);
	md->stuck = md->age_ns >= m->info.stuck_ns;
	md->works = sd->d.works;
	md->in_place = sd->d.in_place;
	md->in_place_cpu = sd->d.in_place_start_ns ? (int)sd->d.in_place_cpu : -1;
	err = model_symbolize(sd->ips, sd->nr_ips, ks, &m->arena, &md->stack, md->site,
			      sizeof(md->site));
	if (!err)
		err = drain_works(m, md, sd, f);
	md->phase = drain_phase(md, &sd->d, m->info.works_unseen);
	return err;
}

static int cmp_age(const void *a, const void *b)
{
	const struct model_drain *x = a, *y = b;

	if (x->age_ns != y->age_ns)
		return x->age_ns > y->age_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int model_build_in_flight(struct model *m, const struct snapshot *cur, const struct ksyms *ks)
{
	const struct snap_in_flight *f = &cur->in_flight;
	int i, err;

	m->in_flight = calloc((size_t)f->nr_drains + 1, sizeof(*m->in_flight));
	if (!m->in_flight)
		return -ENOMEM;
	for (i = 0; i < f->nr_drains; i++) {
		err = model_drain(m, &m->in_flight[m->nr_in_flight++], &f->drains[i], f, ks);
		if (err)
			return err;
	}
	model__sum_in_flight(m);
	return 0;
}

void model__sum_in_flight(struct model *m)
{
	int i;

	m->nr_stuck = m->mutex_waiters = 0;
	m->oldest_in_flight_ns = 0;
	for (i = 0; i < m->nr_in_flight; i++) {
		const struct model_drain *md = &m->in_flight[i];

		m->nr_stuck += md->stuck;
		m->mutex_waiters += md->phase == PHASE_MUTEX;
		if (md->age_ns > m->oldest_in_flight_ns)
			m->oldest_in_flight_ns = md->age_ns;
	}
	qsort(m->in_flight, (size_t)m->nr_in_flight, sizeof(*m->in_flight), cmp_age);
	model_stall_mutex(m);
}
