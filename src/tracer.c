// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "drainstat.skel.h"
#include "tracer.h"

struct tracer {
	struct drainstat_bpf *skel;
	int nr_cpus;
	bool has_fadvise;
};

static int configure(struct drainstat_bpf *skel, const struct tracer_opts *opts, int nr_cpus)
{
	int err;

	skel->rodata->drain_work_fn = opts->drain_work_fn;
	skel->rodata->filter_tgid = opts->filter_tgid;
	err = bpf_map__set_max_entries(skel->maps.cpus, (__u32)nr_cpus);
	if (!err && opts->max_sites)
		err = bpf_map__set_max_entries(skel->maps.sites, opts->max_sites);
	if (!err && opts->max_stacks)
		err = bpf_map__set_max_entries(skel->maps.stacks, opts->max_stacks);
	return err;
}

static int attach_prog(struct bpf_program *prog, struct bpf_link **link)
{
	*link = bpf_program__attach(prog);
	return *link ? 0 : -errno;
}

/* The workqueue hooks are the tool; the fadvise ones only add the fadvise summary. */
static int attach(struct tracer *t)
{
	struct drainstat_bpf *s = t->skel;
	int err;

	err = attach_prog(s->progs.drainstat_queue_work, &s->links.drainstat_queue_work);
	if (!err)
		err = attach_prog(s->progs.drainstat_execute_start,
				  &s->links.drainstat_execute_start);
	if (!err)
		err = attach_prog(s->progs.drainstat_execute_end, &s->links.drainstat_execute_end);
	if (err)
		return err;
	t->has_fadvise =
	    !attach_prog(s->progs.drainstat_fadvise_enter, &s->links.drainstat_fadvise_enter) &&
	    !attach_prog(s->progs.drainstat_fadvise_exit, &s->links.drainstat_fadvise_exit);
	return 0;
}

int tracer__start(const struct tracer_opts *opts, struct tracer **out, enum tracer_step *failed)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int err;

	*failed = TRACER_OPEN;
	if (!t)
		return -ENOMEM;
	t->nr_cpus = libbpf_num_possible_cpus();
	if (t->nr_cpus < 0) {
		err = t->nr_cpus;
		goto fail;
	}
	t->skel = drainstat_bpf__open();
	if (!t->skel) {
		err = -errno;
		goto fail;
	}
	err = configure(t->skel, opts, t->nr_cpus);
	if (err)
		goto fail;
	*failed = TRACER_LOAD;
	err = drainstat_bpf__load(t->skel);
	if (err)
		goto fail;
	*failed = TRACER_ATTACH;
	err = attach(t);
	if (err)
		goto fail;
	*out = t;
	return 0;
fail:
	tracer__free(t);
	return err;
}

bool tracer__has_fadvise(const struct tracer *t)
{
	return t->has_fadvise;
}

static int read_stack(const struct tracer *t, struct snap_site *site)
{
	__u32 id = (__u32)site->key.stack_id;
	int i, err;

	site->nr_ips = 0;
	if (site->key.stack_id < 0)
		return 0;
	err = bpf_map__lookup_elem(t->skel->maps.stacks, &id, sizeof(id), site->ips,
				   sizeof(site->ips), 0);
	if (err)
		return err == -ENOENT ? 0 : err;
	for (i = 0; i < DRAINSTAT_MAX_STACK_DEPTH && site->ips[i]; i++)
		;
	site->nr_ips = i;
	return 0;
}

static int read_sites(const struct tracer *t, struct snapshot *snap)
{
	const struct bpf_map *map = t->skel->maps.sites;
	__u32 cap = bpf_map__max_entries(map);
	struct site_key key, *prev = NULL;
	int err;

	snap->sites = calloc(cap, sizeof(*snap->sites));
	if (!snap->sites)
		return -ENOMEM;
	while (snap->nr_sites < (int)cap && !bpf_map__get_next_key(map, prev, &key, sizeof(key))) {
		struct snap_site *s = &snap->sites[snap->nr_sites];

		s->key = key;
		prev = &s->key;
		err = bpf_map__lookup_elem(map, &key, sizeof(key), &s->stats, sizeof(s->stats), 0);
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		err = read_stack(t, s);
		if (err)
			return err;
		snap->nr_sites++;
	}
	return 0;
}

static int read_cpus(const struct tracer *t, struct snapshot *snap)
{
	__u32 cpu;
	int err;

	snap->cpus = calloc((size_t)t->nr_cpus, sizeof(*snap->cpus));
	if (!snap->cpus)
		return -ENOMEM;
	snap->nr_cpus = t->nr_cpus;
	for (cpu = 0; cpu < (__u32)t->nr_cpus; cpu++) {
		err = bpf_map__lookup_elem(t->skel->maps.cpus, &cpu, sizeof(cpu), &snap->cpus[cpu],
					   sizeof(snap->cpus[cpu]), 0);
		if (err)
			return err;
	}
	return 0;
}

static int read_fadvise(const struct tracer *t, struct snapshot *snap)
{
	__u32 slot;
	int err;

	for (slot = 0; slot < FADVISE_ADVICE_SLOTS; slot++) {
		err = bpf_map__lookup_elem(t->skel->maps.fadvise, &slot, sizeof(slot),
					   &snap->fadvise[slot], sizeof(snap->fadvise[slot]), 0);
		if (err)
			return err;
	}
	return 0;
}

/* counters is per-CPU: sum the CPUs' slots. */
static int read_counters(const struct tracer *t, struct snapshot *snap)
{
	__u64 *percpu = calloc((size_t)t->nr_cpus, sizeof(__u64));
	__u32 c;
	int cpu, err = 0;

	if (!percpu)
		return -ENOMEM;
	for (c = 0; c < CNT_NR && !err; c++) {
		err = bpf_map__lookup_elem(t->skel->maps.counters, &c, sizeof(c), percpu,
					   sizeof(__u64) * (size_t)t->nr_cpus, 0);
		for (cpu = 0; cpu < t->nr_cpus && !err; cpu++)
			snap->counters[c] += percpu[cpu];
	}
	free(percpu);
	return err;
}

int tracer__snapshot(const struct tracer *t, struct snapshot *snap)
{
	struct timespec ts;
	int err;

	memset(snap, 0, sizeof(*snap));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snap->taken_ns = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
	err = read_sites(t, snap);
	if (!err)
		err = read_cpus(t, snap);
	if (!err)
		err = read_fadvise(t, snap);
	if (!err)
		err = read_counters(t, snap);
	if (err)
		snapshot__free(snap);
	return err;
}

void tracer__free(struct tracer *t)
{
	if (!t)
		return;
	drainstat_bpf__destroy(t->skel);
	free(t);
}
