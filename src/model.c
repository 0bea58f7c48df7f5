// SPDX-License-Identifier: GPL-2.0
/*
 * The report model from two snapshots: the site rows (symbolized, by site,
 * comm and cgroup, largest wait first; their cgroups named), the victim CPUs,
 * fadvise and the counters. The drains in flight are in model_inflight.c, a
 * drain of the -T log in model_slow.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroups.h"
#include "hist.h"
#include "ksyms.h"
#include "model_int.h"
#include "podnames.h"
#include "site.h"

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
    [CNT_LOCAL_SITE_MAP_FULL] = {"local_site_map_full", true},
    [CNT_SLOW_LOST] = {"slow_lost", true},
    [CNT_CPU_OUT_OF_RANGE] = {"cpu_out_of_range", true},
    [CNT_WORK_UNSEEN] = {"work_unseen", false},
    [CNT_WAIT_REVISED] = {"wait_revised", false},
    [CNT_TWIN_SKIPS] = {"twin_skips", false},
    [CNT_SKIPPED] = {"skipped", true},
    [CNT_PHANTOMS_ENDED] = {"phantoms_ended", true},
    [CNT_PHANTOMS_ATTACHING] = {"phantoms_attaching", true},
    [CNT_PARTIAL_WAITS] = {"partial_waits", false},
    [CNT_KRETPROBE_MISSED] = {"kretprobe_missed", true},
    [CNT_SLOW_UNREAD] = {"slow_unread", true},
    [CNT_UFRAMES_OVER_BUDGET] = {"uframes_over_budget", false},
};

const char *model__counter_name(enum drainstat_counter c)
{
	return counter_desc[c].name;
}

bool model__counter_is_loss(enum drainstat_counter c)
{
	return counter_desc[c].loss;
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

/* Rows by site, comm and cgroup: open addressing over a power of two of slots. */
struct row_index {
	int *slots; /* row + 1; 0 is free */
	size_t mask;
};

static __u32 row_hash(const char *site, const char *comm, __u64 cgroup_id)
{
	__u32 h = 2166136261u; /* FNV-1a */
	size_t i;

	for (; *site; site++)
		h = (h ^ (unsigned char)*site) * 16777619u;
	for (i = 0; i < DRAINSTAT_COMM_LEN && comm[i]; i++)
		h = (h ^ (unsigned char)comm[i]) * 16777619u;
	for (i = 0; i < 8; i++, cgroup_id >>= 8)
		h = (h ^ (unsigned char)cgroup_id) * 16777619u;
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

/* The row of site, comm and cgroup; *fresh when it was made just now (all zero). */
static struct model_site *row_for(struct model *m, struct row_index *ix, const char *site,
				  const char *comm, __u64 cgroup_id, bool *fresh)
{
	size_t i = row_hash(site, comm, cgroup_id) & ix->mask;
	struct model_site *row;

	for (; ix->slots[i]; i = (i + 1) & ix->mask) {
		row = &m->sites[ix->slots[i] - 1];
		if (!strcmp(row->site, site) && !strncmp(row->comm, comm, DRAINSTAT_COMM_LEN) &&
		    row->cgroup_id == cgroup_id) {
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
	row->cgroup_id = cgroup_id;
	return row;
}

/*
 * A site's stack symbolized: sites of one stack (its comms, cgroups) come together in a
 * snapshot read, and share the one made for the first.
 */
struct symbolized {
	__s32 stack_id;
	__u64 ret_ip; /* site_key.ret_ip: one stack, two callers on arm64 */
	bool valid;
	struct model_stack st;
	char site[MODEL_NAME_LEN];
};

static int symbolized_for(struct symbolized *memo, const struct snap_site *s,
			  const struct ksyms *ks, struct arena *a)
{
	int err;

	if (memo->valid && memo->stack_id == s->key.stack_id && memo->ret_ip == s->key.ret_ip &&
	    s->key.stack_id >= 0)
		return 0;
	err = model_symbolize(s->ips, s->nr_ips, ks, a, &memo->st, memo->site, sizeof(memo->site));
	memo->stack_id = s->key.stack_id;
	memo->ret_ip = s->key.ret_ip;
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
	row = row_for(m, ix, memo->site, comm, c->key.cgroup_id, &fresh);
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
	if (!c)
		c = strcmp(x->row->comm, y->row->comm);
	if (!c && x->row->cgroup_id != y->row->cgroup_id)
		c = x->row->cgroup_id < y->row->cgroup_id ? -1 : 1;
	return c;
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
int model__build(const struct snapshot *cur, const struct snapshot *prev, __u64 start_ns,
		 const struct ksyms *ks, const struct model_info *info, struct model *out)
{
	int i, err;

	memset(out, 0, sizeof(*out));
	out->info = *info;
	out->wall_ns = cur->wall_ns;
	out->span_ns = cur->taken_ns - (prev ? prev->taken_ns : start_ns);
	err = build_sites(out, cur, prev, ks);
	out->info.in_place_seen = info->has_in_place && out->total[SITE_IN_PLACE];
	if (!err)
		err = build_cpus(out, cur, prev);
	if (!err)
		err = build_fadvise(out, cur, prev);
	if (!err)
		err = model_build_in_flight(out, cur, ks);
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

/*
 * The cgroup ids of m to name: its rows' where the cgroup keys them; with cg,
 * its drains' in flight and those of what runs on their pending CPUs.
 */
static size_t cgroup_ids(const struct model *m, const struct cgroups *cg, __u64 *ids)
{
	size_t n = 0;
	int i, k;

	for (i = 0; m->info.by_cgroup && i < m->nr_sites; i++)
		ids[n++] = m->sites[i].cgroup_id;
	for (i = 0; cg && i < m->nr_in_flight; i++) {
		const struct model_drain *md = &m->in_flight[i];

		ids[n++] = md->cgroup_id;
		for (k = 0; k < md->nr_in_flight; k++)
			if (md->in_flight[k].running.known)
				ids[n++] = md->in_flight[k].running.cgroup_id;
	}
	return n;
}

/* The cgroup of id named, and its pod: -ENOMEM or 0. */
static int name_one(struct model *m, struct cgroups *cg, const struct podnames *pn, __u64 id,
		    const char **cgroup, struct model_pod *pod)
{
	*cgroup = model_cgroup_name(&m->arena, cg, id);
	if (!*cgroup)
		return -ENOMEM;
	return model_name_pod(&m->arena, pn, *cgroup, pod);
}

int model__name_cgroups(struct model *m, struct cgroups *cg, const struct podnames *pn)
{
	size_t n = (size_t)m->nr_sites + 1;
	__u64 *ids;
	int i, k;

	for (i = 0; i < m->nr_in_flight; i++)
		n += 1 + (size_t)m->in_flight[i].nr_in_flight;
	ids = malloc(n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	n = cgroup_ids(m, cg, ids);
	/* a tree that cannot be read leaves every id unnamed: shown by number */
	if (cg && n)
		cgroups__learn(cg, ids, n);
	free(ids);
	for (i = 0; m->info.by_cgroup && i < m->nr_sites; i++)
		if (name_one(m, cg, pn, m->sites[i].cgroup_id, &m->sites[i].cgroup,
			     &m->sites[i].pod))
			return -ENOMEM;
	for (i = 0; cg && i < m->nr_in_flight; i++) {
		struct model_drain *md = &m->in_flight[i];

		if (name_one(m, cg, pn, md->cgroup_id, &md->cgroup, &md->pod))
			return -ENOMEM;
		for (k = 0; k < md->nr_in_flight; k++) {
			struct model_running *r = &md->in_flight[k].running;

			if (r->known && name_one(m, cg, pn, r->cgroup_id, &r->cgroup, &r->pod))
				return -ENOMEM;
		}
	}
	return 0;
}
