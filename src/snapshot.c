// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grow.h"
#include "snapshot.h"

static __u64 clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

void snapshot__clock(struct snap_clock *now)
{
	now->mono_ns = clock_ns(CLOCK_MONOTONIC);
	now->wall_ns = clock_ns(CLOCK_REALTIME);
}

__u64 snapshot__wall_ns(const struct snap_clock *now, __u64 mono_ns)
{
	__u64 ago = now->mono_ns > mono_ns ? now->mono_ns - mono_ns : 0;

	return now->wall_ns > ago ? now->wall_ns - ago : 0;
}

void snapshot__free(struct snapshot *snap)
{
	if (!snap)
		return;
	free(snap->sites);
	free(snap->by_key);
	free(snap->cpus);
	free(snap->in_flight.drains);
	free(snap->in_flight.works);
	arena__free(&snap->buckets);
	memset(snap, 0, sizeof(*snap));
}

void snapshot__reset(struct snapshot *snap, __u64 now_ns)
{
	snap->taken_ns = now_ns;
	snap->wall_ns = 0;
	snap->nr_sites = 0;
	snap->sites_sorted = false;
	snap->nr_cpus = 0;
	memset(snap->fadvise, 0, sizeof(snap->fadvise));
	memset(snap->counters, 0, sizeof(snap->counters));
	arena__reset(&snap->buckets);
	snap->in_flight.read_ns = 0;
	snap->in_flight.read = false;
	snap->in_flight.nr_drains = 0;
	snap->in_flight.nr_works = 0;
	memset(snap->in_flight.isolated, 0, sizeof(snap->in_flight.isolated));
	memset(snap->in_flight.nohz_full, 0, sizeof(snap->in_flight.nohz_full));
	memset(&snap->in_flight.system, 0, sizeof(snap->in_flight.system));
}

void snapshot__reset_now(struct snapshot *snap)
{
	struct snap_clock now;

	snapshot__clock(&now);
	snapshot__reset(snap, now.mono_ns);
	snap->wall_ns = now.wall_ns;
}

int snapshot__add_drain(struct snapshot *snap, __u32 tid, const struct drain_state *d,
			const __u64 *ips, int nr_ips)
{
	struct snap_in_flight *f = &snap->in_flight;
	struct snap_drain *sd;
	int err;

	err = grow((void **)&f->drains, f->nr_drains, &f->drains_cap, sizeof(*f->drains), 8);
	if (err)
		return err;
	sd = &f->drains[f->nr_drains++];
	sd->tid = tid;
	sd->d = *d;
	sd->caller = CALLER_UNCHECKED;
	sd->nr_ips = nr_ips < 0				  ? 0
		     : nr_ips > DRAINSTAT_MAX_STACK_DEPTH ? DRAINSTAT_MAX_STACK_DEPTH
							  : nr_ips;
	if (sd->nr_ips)
		memcpy(sd->ips, ips, (size_t)sd->nr_ips * sizeof(*ips));
	return 0;
}

int snapshot__add_work(struct snapshot *snap, const struct in_flight_work *w)
{
	struct snap_in_flight *f = &snap->in_flight;
	int err;

	err = grow((void **)&f->works, f->nr_works, &f->works_cap, sizeof(*f->works), 8);
	if (err)
		return err;
	f->works[f->nr_works++] = *w;
	return 0;
}

static int grow_sites(struct snapshot *snap)
{
	int cap = snap->sites_cap ? snap->sites_cap * 2 : 64;
	struct snap_site *sites = realloc(snap->sites, (size_t)cap * sizeof(*sites));

	if (!sites)
		return -ENOMEM;
	snap->sites = sites;
	snap->sites_cap = cap;
	/* by_key pointed into the old array and was as long: made again when sorted */
	free(snap->by_key);
	snap->by_key = NULL;
	snap->by_key_nr = 0;
	snap->sites_sorted = false;
	return 0;
}

/*
 * The kernel's 16 KB of a site are rarely in cache, and each hist__read()
 * would wait for its histogram's start (the bitmap) and then for its buckets,
 * one histogram after the other: all the starts are asked for at once, then
 * all the buckets in use, so that the misses overlap.
 */
static void prefetch_hists(const struct site_stats *stats)
{
	int i;

	for (i = 0; i < SITE_HISTS; i++) {
		__builtin_prefetch(&stats->hist[i].count);
		__builtin_prefetch(&stats->hist[i].nonzero[HIST_NONZERO_WORDS - 1]);
	}
	for (i = 0; i < SITE_HISTS; i++)
		hist__prefetch(&stats->hist[i]);
}

/*
 * The kernel adds a drain's empty and forced counts after its drain count:
 * read before it, each load ordered after the one before (acquire), so that
 * no reading has more empty or forced drains than drains. A site's works are
 * its self and remote works, each counted apart: summed, never derived by a
 * difference.
 */
static const enum site_count count_read_order[] = {
    SITE_EMPTY_DRAINS, SITE_OWN_ONLY_DRAINS, SITE_FORCED_DRAINS, SITE_DRAINS,
    SITE_SELF_WORKS,   SITE_REMOTE_WORKS,    SITE_IPIS,		 SITE_IN_PLACE,
};

_Static_assert(sizeof(count_read_order) / sizeof(count_read_order[0]) == SITE_COUNTS - 1,
	       "every count is read but SITE_WORKS, which is summed");

static void read_counts(__u64 *out, const struct site_stats *stats)
{
	size_t i;

	for (i = 0; i < sizeof(count_read_order) / sizeof(count_read_order[0]); i++) {
		const enum site_count k = count_read_order[i];

		out[k] = __atomic_load_n(&stats->count[k], __ATOMIC_ACQUIRE);
	}
	out[SITE_WORKS] = out[SITE_SELF_WORKS] + out[SITE_REMOTE_WORKS];
}

int snapshot__add_site(struct snapshot *snap, const struct site_stats *stats, const __u64 *ips,
		       int nr_ips)
{
	struct snap_site *s;
	int i, err;

	if (snap->nr_sites == snap->sites_cap && (err = grow_sites(snap)))
		return err;
	s = &snap->sites[snap->nr_sites];
	prefetch_hists(stats);
	s->key = stats->key;
	read_counts(s->count, stats);
	for (i = 0; i < SITE_HISTS; i++)
		if ((err = hist__read(&stats->hist[i], &snap->buckets, &s->hist[i])))
			return err;
	s->nr_ips = nr_ips < 0				 ? 0
		    : nr_ips > DRAINSTAT_MAX_STACK_DEPTH ? DRAINSTAT_MAX_STACK_DEPTH
							 : nr_ips;
	if (s->nr_ips)
		memcpy(s->ips, ips, (size_t)s->nr_ips * sizeof(*ips));
	snap->nr_sites++;
	snap->sites_sorted = false;
	return 0;
}

int snapshot__set_cpus(struct snapshot *snap, const struct cpu_stats *cpus, int nr)
{
	int cpu, i, err;

	if (nr > snap->cpus_cap) {
		struct snap_cpu *c = realloc(snap->cpus, (size_t)nr * sizeof(*c));

		if (!c)
			return -ENOMEM;
		snap->cpus = c;
		snap->cpus_cap = nr;
	}
	snap->nr_cpus = nr;
	for (cpu = 0; cpu < nr; cpu++) {
		struct snap_cpu *c = &snap->cpus[cpu];

		for (i = 0; i < CPU_COUNTS; i++)
			c->count[i] = cpus[cpu].count[i];
		for (i = 0; i < CPU_HISTS; i++)
			if ((err = hist__read(&cpus[cpu].hist[i], &snap->buckets, &c->hist[i])))
				return err;
	}
	return 0;
}

int snapshot__set_fadvise(struct snapshot *snap, int slot, const struct fadvise_stats *f)
{
	struct snap_fadvise *s = &snap->fadvise[slot];

	/* the kernel counts a call before its escalation: read after it, as read_counts() */
	s->escalations = __atomic_load_n(&f->escalations, __ATOMIC_ACQUIRE);
	s->calls = __atomic_load_n(&f->latency_ns.count, __ATOMIC_ACQUIRE);
	return hist__read(&f->latency_ns, &snap->buckets, &s->latency_ns);
}

static int cmp_key(const struct site_key *a, const struct site_key *b)
{
	if (a->stack_id != b->stack_id)
		return a->stack_id < b->stack_id ? -1 : 1;
	/*
	 * arm64's kprobe mode: one stack, two callers (one indirect call site
	 * reached from two functions), told apart by the caller put back
	 */
	if (a->ret_ip != b->ret_ip)
		return a->ret_ip < b->ret_ip ? -1 : 1;
	if (a->cgroup_id != b->cgroup_id)
		return a->cgroup_id < b->cgroup_id ? -1 : 1;
	return memcmp(a->comm, b->comm, sizeof(a->comm));
}

static int cmp_site(const void *a, const void *b)
{
	return cmp_key(&(*(const struct snap_site *const *)a)->key,
		       &(*(const struct snap_site *const *)b)->key);
}

/*
 * by_key as the last sort left it, if that was of as many sites, is every site
 * still (the array has not moved since: growing it drops by_key); and the
 * kernel's table is read in the same order every interval, so that order is
 * most often right as it is: checking it takes n comparisons, a sort n log n.
 */
static bool still_sorted(const struct snapshot *snap)
{
	int i;

	if (!snap->by_key || snap->by_key_nr != snap->nr_sites)
		return false;
	for (i = 1; i < snap->nr_sites; i++)
		if (cmp_key(&snap->by_key[i - 1]->key, &snap->by_key[i]->key) > 0)
			return false;
	return true;
}

int snapshot__sort_sites(struct snapshot *snap)
{
	int i;

	if (snap->sites_cap < snap->nr_sites)
		return -EINVAL;
	if (still_sorted(snap)) {
		snap->sites_sorted = true;
		return 0;
	}
	/* as many as sites_cap: the tracer frees it when the sites grow */
	if (!snap->by_key) {
		snap->by_key = malloc((size_t)(snap->sites_cap + 1) * sizeof(*snap->by_key));
		if (!snap->by_key)
			return -ENOMEM;
	}
	for (i = 0; i < snap->nr_sites; i++)
		snap->by_key[i] = &snap->sites[i];
	qsort(snap->by_key, (size_t)snap->nr_sites, sizeof(*snap->by_key), cmp_site);
	snap->by_key_nr = snap->nr_sites;
	snap->sites_sorted = true;
	return 0;
}

const struct snap_site *snapshot__find_site(const struct snapshot *snap, const struct site_key *key)
{
	int i, lo = 0, hi = snap->nr_sites - 1, c;

	if (!snap->sites_sorted) {
		for (i = 0; i < snap->nr_sites; i++)
			if (!cmp_key(&snap->sites[i].key, key))
				return &snap->sites[i];
		return NULL;
	}
	while (lo <= hi) {
		i = lo + (hi - lo) / 2;
		c = cmp_key(&snap->by_key[i]->key, key);
		if (!c)
			return snap->by_key[i];
		if (c < 0)
			lo = i + 1;
		else
			hi = i - 1;
	}
	return NULL;
}
