// SPDX-License-Identifier: GPL-2.0
/*
 * What a mode loads and what that costs: the plan (which programs a mode
 * attaches, from hooks.c's table), the skeleton configured for it (rodata,
 * autoload, map sizes), and the fds and kernel memory it needs, counted
 * before anything is loaded.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "drainstat.h" /* before the skeleton: its .bss holds a struct of ours */
#include "drainstat.skel.h"
#include "hooks.h"
#include "tracer.h"
#include "tracer_int.h"

static void add(struct plan *p, struct bpf_program *prog, const char *kfunc, bool retprobe,
		bool *seen)
{
	p->hooks[p->nr++] = (struct hook){prog, kfunc, retprobe, seen, NULL, SLEEP_NEVER};
}

/* An optional hook whose failure is explained: why gets its -errno. */
static void add_explained(struct plan *p, struct bpf_program *prog, bool *seen, int *why)
{
	add(p, prog, NULL, false, seen);
	p->hooks[p->nr - 1].why = why;
}

/* Whether row i of the table is hooked here: a missing function, or a load it failed, is not. */
static bool row_hooked(size_t i, const struct tracer_symbols *syms, const struct tracer_features *f)
{
	const struct hook_fn *h = &hook_fns[i];

	if (h->if_in_kallsyms && !(syms->hooks_in_kallsyms & 1U << i))
		return false;
	return !(h->reads_ksyms && f->own_err);
}

/* Full mode: fexit, its twin, fentry, its twin; kprobe mode: kretprobe, kprobe. */
static void plan_row(struct plan *p, struct drainstat_bpf *s, const struct hook_fn *h,
		     enum drain_mode mode, struct tracer_features *f)
{
	const char *full[] = {h->fexit[0], h->fexit[1], h->fentry[0], h->fentry[1]};
	const char *kprobe[] = {h->kretprobe, h->kprobe};
	const char **progs = mode == MODE_FULL ? full : kprobe;
	int i, n = mode == MODE_FULL ? 4 : 2;

	for (i = 0; i < n; i++) {
		if (!progs[i])
			continue;
		add(p, bpf_object__find_program_by_name(s->obj, progs[i]), h->name,
		    mode == MODE_KPROBE && i == 0, hooks__feature(h, f));
		p->hooks[p->nr - 1].callers_sleep = h->callers_sleep;
	}
}

/*
 * What each mode loads and attaches; everything else stays unloaded. In
 * attach order, each end before its begin (a work's end before its start and
 * queue, an exit before its entry): a call that begins while drainstat
 * attaches is then either missed whole or seen to its end. Begins first left
 * a drain that entered, or queued, before its end was hooked in flight for
 * good (started during a drain storm: phantom stuck drains).
 */
void tracer_plan_mode(struct plan *p, struct drainstat_bpf *s, const struct tracer_opts *o,
		      const struct tracer_symbols *syms, enum drain_mode mode,
		      struct tracer_features *f)
{
	size_t i;

	p->nr = 0;
	add(p, s->progs.drainstat_task_exit, NULL, false, NULL);
	add(p, s->progs.drainstat_execute_end, NULL, false, NULL);
	add(p, s->progs.drainstat_execute_start, NULL, false, NULL);
	add(p, s->progs.drainstat_queue_work, NULL, false, NULL);
	add_explained(p, s->progs.drainstat_fadvise_exit, &f->fadvise, &f->fadvise_err);
	add_explained(p, s->progs.drainstat_fadvise_enter, &f->fadvise, &f->fadvise_err);
	/* a tp_btf program on a missing tracepoint would fail the whole load */
	if (o->count_ipis)
		add(p, s->progs.drainstat_ipi_send_cpu, NULL, false, &f->ipi);
	for (i = 0; mode != MODE_TRACEPOINT && i < nr_hook_fns; i++)
		if (row_hooked(i, syms, f))
			plan_row(p, s, &hook_fns[i], mode, f);
}

int tracer_configure(struct drainstat_bpf *skel, const struct tracer_opts *opts,
		     const struct plan *plan, enum drain_mode mode, int nr_cpus)
{
	struct bpf_program *prog;
	int i, err = 0;

	skel->rodata->filter_tgid = opts->filter_tgid;
	if (opts->filter_comm)
		strncpy((char *)skel->rodata->filter_comm, opts->filter_comm,
			sizeof(skel->rodata->filter_comm) - 1);
	skel->rodata->filter_cgroup_id = opts->filter_cgroup_id;
	skel->rodata->slow_threshold_ns = opts->slow_threshold_ns;
	skel->rodata->every_stack = opts->every_stack;
	if (opts->site_key_parts)
		skel->rodata->site_key_parts = opts->site_key_parts;
	skel->rodata->count_ipis = opts->count_ipis;
	if (opts->filter_victims) {
		skel->rodata->filter_victims = true;
		memcpy((void *)skel->rodata->victim_cpus, opts->filter_victims,
		       sizeof(skel->rodata->victim_cpus));
	}
	skel->rodata->any_caller_filter =
	    opts->filter_tgid || opts->filter_comm || opts->filter_cgroup_id;
	skel->rodata->entry_visible = mode != MODE_TRACEPOINT;
	for (prog = bpf_object__next_program(skel->obj, NULL); prog;
	     prog = bpf_object__next_program(skel->obj, prog))
		bpf_program__set_autoload(prog, false);
	for (i = 0; i < plan->nr && !err; i++)
		err = bpf_program__set_autoload(plan->hooks[i].prog, true);
	/* run by user space for a report, never attached to an event */
	if (!err)
		err = bpf_program__set_autoload(skel->progs.drainstat_running, true);
	if (!err)
		err = bpf_program__set_autoload(skel->progs.drainstat_check_callers, true);
	if (!err)
		err = bpf_program__set_autoload(skel->progs.drainstat_end_phantom, true);
	if (!err)
		err = bpf_program__set_autoload(skel->progs.drainstat_name_cgroup, true);
	if (!err)
		err = bpf_program__set_autoload(skel->progs.drainstat_cgroup_rmdir, true);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.cpus, (__u32)nr_cpus);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.works, (__u32)nr_cpus);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.work_cpus, (__u32)nr_cpus);
	if (!err && opts->max_sites) {
		skel->rodata->max_sites = opts->max_sites;
		err = bpf_map__set_max_entries(skel->maps.sites, opts->max_sites);
		if (!err)
			err = bpf_map__set_max_entries(skel->maps.site_slots, opts->max_sites);
	}
	if (!err && opts->max_stacks)
		err = bpf_map__set_max_entries(skel->maps.stacks, opts->max_stacks);
	/*
	 * Maps a run does not use get their least size: they are allocated at
	 * load, in locked kernel memory, whether used or not.
	 */
	if (!err && !opts->slow_threshold_ns) {
		err = bpf_map__set_max_entries(skel->maps.slow_targets, 1);
		if (!err)
			err = bpf_map__set_max_entries(skel->maps.ustacks, 1);
		if (!err)
			err = bpf_map__set_max_entries(skel->maps.slow_events,
						       (__u32)sysconf(_SC_PAGESIZE));
	}
	if (!err && mode == MODE_TRACEPOINT)
		err = bpf_map__set_max_entries(skel->maps.local_calls, 1);
	return err;
}

/*
 * A map's kernel memory, as the kernel counts it (bpftool's memlock) within a
 * few percent: hash elements have a 48-byte header and a 16-byte bucket each
 * (preallocated, a CPU's spare ones too), stacks a 16-byte header and an
 * 8-byte bucket, arrays whole pages if mmapable.
 */
static __u64 map_bytes(const struct bpf_map *map, int nr_cpus)
{
	__u64 n = bpf_map__max_entries(map), page = (__u64)sysconf(_SC_PAGESIZE);
	__u64 key = (bpf_map__key_size(map) + 7) & ~7ULL;
	__u64 value = (bpf_map__value_size(map) + 7) & ~7ULL, buckets = 1;

	while (buckets < n)
		buckets *= 2;
	switch (bpf_map__type(map)) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
		return (n + (__u64)nr_cpus) * (48 + key + value) + buckets * 16 + page;
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return n * value * (__u64)nr_cpus + page;
	case BPF_MAP_TYPE_STACK_TRACE:
		return n * (16 + value) + buckets * 8 + page;
	case BPF_MAP_TYPE_RINGBUF:
		return n + 4 * page;
	default:
		return (n * value + page - 1) / page * page + page;
	}
}

/* A hook's link, and for kprobes and tracefs tracepoints the perf event under it. */
static unsigned int link_fds(const struct hook *h)
{
	enum bpf_prog_type type = bpf_program__type(h->prog);

	return type == BPF_PROG_TYPE_KPROBE || type == BPF_PROG_TYPE_TRACEPOINT ? 2 : 1;
}

/*
 * The load's memory beyond the maps and libbpf's parse of the kernel's BTF
 * (setup's heap): the verifier's states, the programs, libbpf's copy of the
 * object. 1.5 MB measured on 6.18 in tracepoint mode (a memory cgroup's peak
 * usage, less the maps' and the heap's), twice that for full mode's programs
 * and other kernels' verifiers.
 */
#define LOAD_MEMORY (3ULL << 20)

/* What a configured object adds: one fd per map and program, and its BTF's. */
static void count_object(const struct bpf_object *obj, int nr_cpus, struct tracer_needs *needs)
{
	struct bpf_program *prog;
	struct bpf_map *map;

	needs->fds++;
	for (map = bpf_object__next_map(obj, NULL); map; map = bpf_object__next_map(obj, map)) {
		if (!bpf_map__autocreate(map))
			continue;
		needs->fds++;
		needs->memory += map_bytes(map, nr_cpus);
	}
	for (prog = bpf_object__next_program(obj, NULL); prog;
	     prog = bpf_object__next_program(obj, prog))
		needs->fds += bpf_program__autoload(prog);
}

/* What the configured skeleton and the plan need: the object, and a link per hook. */
void tracer_count_needs(const struct drainstat_bpf *skel, const struct plan *plan, int nr_cpus,
			struct tracer_needs *needs)
{
	int i;

	bool kretprobes = false;

	needs->fds = 0;
	needs->memory = LOAD_MEMORY;
	count_object(skel->obj, nr_cpus, needs);
	for (i = 0; i < plan->nr; i++) {
		needs->fds += link_fds(&plan->hooks[i]);
		kretprobes = kretprobes || plan->hooks[i].retprobe;
	}
	/* tracefs kretprobes: the mount, kprobe_events, and a file read at a time */
	if (kretprobes)
		needs->fds += 3;
	/* the check of the callers: its iterator's link, and an iterator while it reads */
	needs->fds += 2;
	/* the naming of cgroups: the same, and the link of the hook on removed cgroups */
	needs->fds += 3;
}

/* What mode needs, without the hooks that depend on the symbols. */
static int mode_needs(const struct tracer_opts *opts, enum drain_mode mode, int nr_cpus,
		      struct tracer_needs *needs)
{
	struct tracer_features features = {};
	struct tracer_symbols syms = {};
	struct drainstat_bpf *skel = drainstat_bpf__open();
	struct plan plan;
	int err;

	if (!skel)
		return -errno;
	tracer_plan_mode(&plan, skel, opts, &syms, mode, &features);
	err = tracer_configure(skel, opts, &plan, mode, nr_cpus);
	if (!err) {
		tracer_count_needs(skel, &plan, nr_cpus, needs);
		needs->fds += opts->fds_beside;
	}
	drainstat_bpf__destroy(skel);
	return err;
}

int tracer__needs(const struct tracer_opts *opts, struct tracer_needs *needs)
{
	bool auto_mode = opts->mode == MODE_AUTO;
	struct tracer_needs most = {};
	int nr_cpus, err;

	/* the fds do not depend on the CPUs: known even when no fd is left to read them */
	err = mode_needs(opts, auto_mode ? MODE_TRACEPOINT : opts->mode, 1, needs);
	nr_cpus = libbpf_num_possible_cpus();
	if (!err && nr_cpus < 0)
		err = nr_cpus;
	if (!err)
		err = mode_needs(opts, auto_mode ? MODE_FULL : opts->mode, nr_cpus, &most);
	if (!err) {
		needs->memory = most.memory;
		needs->nr_cpus = nr_cpus;
	}
	return err;
}
