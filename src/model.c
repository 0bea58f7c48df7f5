// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "ksyms.h"
#include "model.h"
#include "site.h"
#include "tracer.h"
#include "umaps.h"

static const char *const advice_names[FADVISE_ADVICE_SLOTS] = {
    "normal", "random", "sequential", "willneed", "dontneed", "noreuse", "other",
};

static const struct {
	const char *name;
	bool loss;
} counter_desc[CNT_NR] = {
    [CNT_WORK_MAP_FULL] = {"work_map_full", true},
    [CNT_SITE_MAP_FULL] = {"site_map_full", true},
    [CNT_STACK_LOST] = {"stack_lost", true},
    [CNT_FADVISE_MAP_FULL] = {"fadvise_map_full", true},
    [CNT_LOCAL_MAP_FULL] = {"local_map_full", true},
    [CNT_SLOW_LOST] = {"slow_lost", true},
    [CNT_CPU_OUT_OF_RANGE] = {"cpu_out_of_range", true},
    [CNT_WORK_UNSEEN] = {"work_unseen", false},
    [CNT_WAIT_REVISED] = {"wait_revised", false},
    [CNT_TWIN_SKIPS] = {"twin_skips", false},
    [CNT_SKIPPED] = {"skipped", true},
};

const char *model__counter_name(enum drainstat_counter c)
{
	return counter_desc[c].name;
}

bool model__counter_is_loss(enum drainstat_counter c)
{
	return counter_desc[c].loss;
}

static void format_frame(char *buf, size_t size, __u64 ip, const struct ksym *sym)
{
	if (sym)
		snprintf(buf, size, "%s+0x%llx", sym->name, (unsigned long long)(ip - sym->addr));
	else
		snprintf(buf, size, "0x%llx", (unsigned long long)ip);
}

/*
 * The frames of a stack as "name+0xoff" from the first drain function down (the
 * BPF program and tracing glue above it say nothing; frames in BPF code are
 * dropped wherever they are), in a, and the site: the frame after the outermost
 * drain function. 0 or -ENOMEM.
 */
static int symbolize(const __u64 *all_ips, int nr_all, const struct ksyms *ks, struct arena *a,
		     struct model_stack *st, char *site, size_t site_size)
{
	const struct ksym *syms[DRAINSTAT_MAX_STACK_DEPTH];
	const char *names[DRAINSTAT_MAX_STACK_DEPTH];
	__u64 ips[DRAINSTAT_MAX_STACK_DEPTH];
	char(*frames)[MODEL_NAME_LEN];
	int i, pick, first, nr_ips;

	nr_ips = ksyms__map_stack(ks, all_ips, nr_all, ips, syms);
	for (i = 0; i < nr_ips; i++)
		names[i] = syms[i] ? syms[i]->name : NULL;
	first = site__first_frame(names, nr_ips);
	st->nr_frames = nr_ips - first;
	frames = arena__alloc(a, (size_t)st->nr_frames * sizeof(*frames) + 1);
	if (!frames)
		return -ENOMEM;
	for (i = first; i < nr_ips; i++)
		format_frame(frames[i - first], sizeof(frames[0]), ips[i], syms[i]);
	st->frames = (const char(*)[MODEL_NAME_LEN])frames;
	pick = site__pick(names, nr_ips);
	if (nr_ips == 0 || pick < 0)
		snprintf(site, site_size, "[unknown]");
	else if (names[pick])
		snprintf(site, site_size, "%s", names[pick]);
	else
		snprintf(site, site_size, "0x%llx", (unsigned long long)ips[pick]);
	return 0;
}

static int add_stack(struct model_site *row, const struct model_stack *st)
{
	struct model_stack *stacks =
	    realloc(row->stacks, (size_t)(row->nr_stacks + 1) * sizeof(*st));

	if (!stacks)
		return -ENOMEM;
	row->stacks = stacks;
	row->stacks[row->nr_stacks++] = *st;
	return 0;
}

static __u64 delta(__u64 cur, const __u64 *prev)
{
	return prev && cur >= *prev ? cur - *prev : prev ? 0 : cur;
}

/*
 * out = cur - prev. Without prev (the export's totals since start) out is cur
 * itself, a view of the snapshot's buckets: no copy of every bucket an
 * interval, and the model is freed before its snapshot (model.h).
 */
static int hist_since(const struct sparse_hist *cur, const struct sparse_hist *prev,
		      struct arena *a, struct sparse_hist *out)
{
	if (prev)
		return hist__delta(cur, prev, a, out);
	*out = *cur;
	return 0;
}

/* into += cur - prev; into is still zero when fresh, and takes the difference directly. */
static int merge_delta(struct arena *a, struct sparse_hist *into, const struct sparse_hist *cur,
		       const struct sparse_hist *prev, bool fresh)
{
	struct sparse_hist h;
	int err;

	/* nothing recorded since (a revised wait changes count as well) */
	if (cur->count == (prev ? prev->count : 0) && cur->sum == (prev ? prev->sum : 0))
		return 0;
	if (fresh)
		return hist_since(cur, prev, a, into);
	err = hist_since(cur, prev, a, &h);
	return err ? err : hist__merge(into, &h, a);
}

static bool site_moved(const struct snap_site *cur, const struct snap_site *prev)
{
	int i;

	for (i = 0; i < SITE_COUNTS; i++)
		if (cur->count[i] != (prev ? prev->count[i] : 0))
			return true;
	for (i = 0; i < SITE_HISTS; i++)
		if (cur->hist[i].count != (prev ? prev->hist[i].count : 0))
			return true;
	return false;
}

/* Rows by site and comm: open addressing over a power of two of slots. */
struct row_index {
	int *slots; /* row + 1; 0 is free */
	size_t mask;
};

static __u32 row_hash(const char *site, const char *comm)
{
	__u32 h = 2166136261u; /* FNV-1a */
	size_t i;

	for (; *site; site++)
		h = (h ^ (unsigned char)*site) * 16777619u;
	for (i = 0; i < DRAINSTAT_COMM_LEN && comm[i]; i++)
		h = (h ^ (unsigned char)comm[i]) * 16777619u;
	return h;
}

static int row_index__init(struct row_index *ix, int rows)
{
	size_t n = 16;

	while (n < (size_t)rows * 2)
		n *= 2;
	ix->slots = calloc(n, sizeof(*ix->slots));
	ix->mask = n - 1;
	return ix->slots ? 0 : -ENOMEM;
}

/* The row of site and comm; *fresh when it was made just now (all zero). */
static struct model_site *row_for(struct model *m, struct row_index *ix, const char *site,
				  const char *comm, bool *fresh)
{
	size_t i = row_hash(site, comm) & ix->mask;
	struct model_site *row;

	for (; ix->slots[i]; i = (i + 1) & ix->mask) {
		row = &m->sites[ix->slots[i] - 1];
		if (!strcmp(row->site, site) && !strncmp(row->comm, comm, DRAINSTAT_COMM_LEN)) {
			*fresh = false;
			return row;
		}
	}
	*fresh = true;
	row = &m->sites[m->nr_sites++];
	ix->slots[i] = m->nr_sites;
	memset(row, 0, sizeof(*row));
	/* site is a symbolized's, of the same size: it fits (no snprintf per row) */
	memcpy(row->site, site, strnlen(site, sizeof(row->site) - 1));
	memcpy(row->comm, comm, sizeof(row->comm));
	return row;
}

/*
 * A site's stack symbolized: sites of one stack (its comms) come together in a
 * snapshot read, and share the one made for the first.
 */
struct symbolized {
	__s32 stack_id;
	bool valid;
	struct model_stack st;
	char site[MODEL_NAME_LEN];
};

static int symbolized_for(struct symbolized *memo, const struct snap_site *s,
			  const struct ksyms *ks, struct arena *a)
{
	int err;

	if (memo->valid && memo->stack_id == s->key.stack_id && s->key.stack_id >= 0)
		return 0;
	err = symbolize(s->ips, s->nr_ips, ks, a, &memo->st, memo->site, sizeof(memo->site));
	memo->stack_id = s->key.stack_id;
	memo->valid = !err;
	return err;
}

/* Adds the activity of one snapshot site (minus its previous reading) to its row. */
static int add_site(struct model *m, struct row_index *ix, const struct snap_site *c,
		    const struct snap_site *p, const struct ksyms *ks, struct symbolized *memo)
{
	char comm[DRAINSTAT_COMM_LEN];
	struct arena *a = &m->arena;
	struct model_stack st;
	struct model_site *row;
	bool fresh;
	int i, err;

	if (!site_moved(c, p))
		return 0;
	err = symbolized_for(memo, c, ks, a);
	if (err)
		return err;
	memcpy(comm, c->key.comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	row = row_for(m, ix, memo->site, comm, &fresh);
	for (i = 0; i < SITE_COUNTS; i++)
		row->count[i] += delta(c->count[i], p ? &p->count[i] : NULL);
	for (i = 0; i < SITE_HISTS; i++)
		if ((err =
			 merge_delta(a, &row->hist[i], &c->hist[i], p ? &p->hist[i] : NULL, fresh)))
			return err;
	st = memo->st;
	st.drains = delta(c->count[SITE_DRAINS], p ? &p->count[SITE_DRAINS] : NULL);
	return add_stack(row, &st);
}

static int cmp_stacks(const void *a, const void *b)
{
	const struct model_stack *x = a, *y = b;

	return x->drains == y->drains ? 0 : x->drains > y->drains ? -1 : 1;
}

/* A row's place in the sort: its keys beside it, so that comparing reads no row but on a tie. */
struct row_rank {
	__u64 wait_ns;
	__u64 drains;
	struct model_site *row; /* NULL once moved */
};

static int cmp_rank(const void *a, const void *b)
{
	const struct row_rank *x = a, *y = b;
	int c;

	if (x->wait_ns != y->wait_ns)
		return x->wait_ns > y->wait_ns ? -1 : 1;
	if (x->drains != y->drains)
		return x->drains > y->drains ? -1 : 1;
	c = strcmp(x->row->site, y->row->site);
	return c ? c : strcmp(x->row->comm, y->row->comm);
}

/*
 * Sorts the rows, largest total wait first: their ranks are sorted, then each
 * row moves once, along the cycles of the permutation.
 */
static int sort_sites(struct model *m)
{
	size_t n = (size_t)m->nr_sites, i, j, from;
	struct row_rank *order = malloc((n + 1) * sizeof(*order));
	struct model_site *held = malloc(sizeof(*held));
	int err = order && held ? 0 : -ENOMEM;

	for (i = 0; !err && i < n; i++)
		order[i] = (struct row_rank){m->sites[i].hist[SITE_WAIT_NS].sum,
					     m->sites[i].count[SITE_DRAINS], &m->sites[i]};
	if (!err)
		qsort(order, n, sizeof(*order), cmp_rank);
	for (i = 0; !err && i < n; i++) {
		if (!order[i].row || order[i].row == &m->sites[i])
			continue;
		/* row i goes where it belongs; each place takes the row sorted to it */
		*held = m->sites[i];
		for (j = i; (from = (size_t)(order[j].row - m->sites)) != i; j = from) {
			m->sites[j] = m->sites[from];
			order[j].row = NULL;
		}
		m->sites[j] = *held;
		order[j].row = NULL;
	}
	free(order);
	free(held);
	return err;
}

static int build_sites(struct model *m, const struct snapshot *cur, const struct snapshot *prev,
		       const struct ksyms *ks)
{
	struct symbolized memo = {};
	struct row_index ix = {};
	int i, k, err = 0;

	/* rows are filled as they are used: malloc, not calloc (row_for() clears each) */
	m->sites = malloc(((size_t)cur->nr_sites + 1) * sizeof(*m->sites));
	if (!m->sites || row_index__init(&ix, cur->nr_sites)) {
		free(ix.slots);
		return -ENOMEM;
	}
	for (i = 0; i < cur->nr_sites && !err; i++) {
		const struct snap_site *p =
		    prev ? snapshot__find_site(prev, &cur->sites[i].key) : NULL;

		err = add_site(m, &ix, &cur->sites[i], p, ks, &memo);
	}
	free(ix.slots);
	if (!err)
		err = sort_sites(m);
	for (i = 0; i < m->nr_sites; i++) {
		qsort(m->sites[i].stacks, (size_t)m->sites[i].nr_stacks, sizeof(struct model_stack),
		      cmp_stacks);
		for (k = 0; k < SITE_COUNTS; k++)
			m->total[k] += m->sites[i].count[k];
		m->local_drains += m->sites[i].hist[SITE_LOCAL_NS].count;
	}
	return err;
}

static int build_cpus(struct model *m, const struct snapshot *cur, const struct snapshot *prev)
{
	int cpu, i, err;

	m->cpus = calloc((size_t)cur->nr_cpus + 1, sizeof(*m->cpus));
	if (!m->cpus)
		return -ENOMEM;
	for (cpu = 0; cpu < cur->nr_cpus; cpu++) {
		const struct snap_cpu *c = &cur->cpus[cpu];
		const struct snap_cpu *p = prev && cpu < prev->nr_cpus ? &prev->cpus[cpu] : NULL;
		struct model_cpu *mc = &m->cpus[m->nr_cpus];

		if (c->count[CPU_WORKS] == (p ? p->count[CPU_WORKS] : 0))
			continue;
		mc->cpu = cpu;
		for (i = 0; i < CPU_COUNTS; i++)
			mc->count[i] = delta(c->count[i], p ? &p->count[i] : NULL);
		for (i = 0; i < CPU_HISTS; i++)
			if ((err = hist_since(&c->hist[i], p ? &p->hist[i] : NULL, &m->arena,
					      &mc->hist[i])))
				return err;
		m->nr_cpus++;
	}
	return 0;
}

static int build_fadvise(struct model *m, const struct snapshot *cur, const struct snapshot *prev)
{
	int i, err;

	for (i = 0; i < FADVISE_ADVICE_SLOTS; i++) {
		const struct snap_fadvise *c = &cur->fadvise[i];
		const struct snap_fadvise *p = prev ? &prev->fadvise[i] : NULL;
		struct model_fadvise *f = &m->fadvise[i];

		f->advice = advice_names[i];
		f->calls = delta(c->calls, p ? &p->calls : NULL);
		f->escalations = delta(c->escalations, p ? &p->escalations : NULL);
		err = hist_since(&c->latency_ns, p ? &p->latency_ns : NULL, &m->arena,
				 &f->latency_ns);
		if (err)
			return err;
	}
	return 0;
}

static const char *const phase_names[] = {
    [PHASE_MUTEX] = "waiting for the drain mutex",
    [PHASE_PENDING] = "works pending",
    [PHASE_RUNNING] = "works running",
    [PHASE_RETURNING] = "works done, returning",
    [PHASE_NO_WORK] = "no work queued (the drain mutex, or its works run in place)",
};

static const char *const phase_keys[] = {
    [PHASE_MUTEX] = "waiting_for_mutex", [PHASE_PENDING] = "works_pending",
    [PHASE_RUNNING] = "works_running",	 [PHASE_RETURNING] = "returning",
    [PHASE_NO_WORK] = "no_work_queued",
};

const char *model__phase_name(enum drain_phase p)
{
	return phase_names[p];
}

const char *model__phase_key(enum drain_phase p)
{
	return phase_keys[p];
}

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
	m->tid = r->tid;
	m->pid = r->tgid;
	memcpy(m->comm, r->comm, sizeof(m->comm));
	m->comm[sizeof(m->comm) - 1] = '\0';
	m->policy = policy_name(r->policy);
	m->priority = r->prio;
	m->running_ns = r->running_ns;
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
	if (!w->started)
		model_running(&w->running, &fw->running);
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
				    bool qpw)
{
	/* Queue PerCPU Work may run the works on the caller's CPU, queueing none */
	if (d->by_entry && !d->works)
		return qpw ? PHASE_NO_WORK : PHASE_MUTEX;
	if (md->pending_works)
		return PHASE_PENDING;
	if (md->nr_in_flight)
		return PHASE_RUNNING;
	/* its works were queued after they were read */
	return d->pending ? PHASE_PENDING : PHASE_RETURNING;
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
	md->age_ns = age(f->read_ns, sd->d.start_ns);
	md->stuck = md->age_ns >= m->info.stuck_ns;
	md->works = sd->d.works;
	err = symbolize(sd->ips, sd->nr_ips, ks, &m->arena, &md->stack, md->site, sizeof(md->site));
	if (!err)
		err = drain_works(m, md, sd, f);
	md->phase = drain_phase(md, &sd->d, m->info.qpw);
	return err;
}

static int cmp_age(const void *a, const void *b)
{
	const struct model_drain *x = a, *y = b;

	if (x->age_ns != y->age_ns)
		return x->age_ns > y->age_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int build_in_flight(struct model *m, const struct snapshot *cur, const struct ksyms *ks)
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
}

int model__build(const struct snapshot *cur, const struct snapshot *prev, __u64 start_ns,
		 const struct ksyms *ks, const struct model_info *info, struct model *out)
{
	int i, err;

	memset(out, 0, sizeof(*out));
	out->info = *info;
	out->wall_ns = cur->wall_ns;
	out->span_ns = cur->taken_ns - (prev ? prev->taken_ns : start_ns);
	err = build_sites(out, cur, prev, ks);
	if (!err)
		err = build_cpus(out, cur, prev);
	if (!err)
		err = build_fadvise(out, cur, prev);
	if (!err)
		err = build_in_flight(out, cur, ks);
	if (err) {
		model__free(out);
		return err;
	}
	for (i = 0; i < CNT_NR; i++) {
		out->counters[i] = cur->counters[i] - (prev ? prev->counters[i] : 0);
		if (model__counter_is_loss(i))
			out->lost += out->counters[i];
	}
	return 0;
}

void model__free(struct model *m)
{
	int i;

	if (!m)
		return;
	for (i = 0; i < m->nr_sites; i++)
		free(m->sites[i].stacks);
	free(m->sites);
	free(m->cpus);
	free(m->in_flight);
	arena__free(&m->arena);
	memset(m, 0, sizeof(*m));
}

int model__slow_drain(const struct slow_drain *d, const struct ksyms *ks, struct umaps *um,
		      const struct snap_clock *now, struct model_slow_drain *out)
{
	char site[MODEL_NAME_LEN], (*uframes)[MODEL_UFRAME_LEN];
	int i, err;

	memset(out, 0, sizeof(*out));
	out->ev = &d->ev;
	out->wall_ns = snapshot__wall_ns(now, d->ev.end_ns);
	err = symbolize(d->kips, d->nr_kips, ks, &out->arena, &out->kstack, site, sizeof(site));
	uframes = err ? NULL : arena__alloc(&out->arena, (size_t)d->nr_uips * sizeof(*uframes) + 1);
	if (!uframes) {
		model__slow_drain_free(out);
		return -ENOMEM;
	}
	for (i = 0; i < d->nr_uips; i++)
		umaps__describe(um, d->uips[i], uframes[i], sizeof(uframes[i]));
	out->uframes = (const char(*)[MODEL_UFRAME_LEN])uframes;
	out->nr_uframes = d->nr_uips;
	return 0;
}

void model__slow_drain_free(struct model_slow_drain *sd)
{
	arena__free(&sd->arena);
	memset(sd, 0, sizeof(*sd));
}
