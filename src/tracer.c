// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "drainstat.h" /* before the skeleton: its .bss holds a struct of ours */
#include "drainstat.skel.h"
#include "probe.h"
#include "tracer.h"

#define MAX_LINKS 24

/* A kernel stack already read: its id names it for good (see read_stack()). */
struct known_stack {
	int nr_ips;
	__u64 ips[DRAINSTAT_MAX_STACK_DEPTH];
};

struct tracer {
	struct drainstat_bpf *skel;
	int nr_cpus;
	const void *sites_area; /* the sites array's slots in use, mmapped read-only */
	size_t sites_area_size;
	struct cpu_stats *cpus_buf;	   /* nr_cpus: the cpus map read into it */
	struct known_stack **known_stacks; /* by stack id, NULL until read */
	__u32 nr_known_stacks;		   /* slots: the stack map's max_entries */
	struct tracer_features features;
	struct tracer_symbols syms;
	bool have_syms;
	struct bpf_link *links[MAX_LINKS];
	int nr_links;
	const struct work_state *works_area; /* the works array, mmapped read-only */
	size_t works_area_size;
	struct drain_state *drains_buf; /* a batch of the drains map: values */
	__u32 *tids_buf;		/* and keys */
	struct ring_buffer *slow;
	slow_drain_fn slow_fn;
	void *slow_arg;
	__u64 skipped; /* CNT_SKIPPED as last read: it never goes back */
};

/* One program to attach: a kprobe names its function, others attach by section. */
struct hook {
	struct bpf_program *prog;
	const char *kfunc;
	bool retprobe;
	bool *seen; /* optional hook: set when attached; NULL: required */
};

struct plan {
	struct hook hooks[MAX_LINKS];
	int nr;
};

static const char *const mode_names[] = {
    [MODE_AUTO] = "auto",
    [MODE_FULL] = "full",
    [MODE_KPROBE] = "kprobe",
    [MODE_TRACEPOINT] = "tracepoint",
};

const char *tracer__mode_name(enum drain_mode mode)
{
	return mode_names[mode];
}

int tracer__parse_mode(const char *s, enum drain_mode *mode)
{
	int m;

	for (m = MODE_AUTO; m <= MODE_TRACEPOINT; m++) {
		if (!strcmp(s, mode_names[m])) {
			*mode = (enum drain_mode)m;
			return 0;
		}
	}
	return -EINVAL;
}

static void add(struct plan *p, struct bpf_program *prog, const char *kfunc, bool retprobe,
		bool *seen)
{
	p->hooks[p->nr++] = (struct hook){prog, kfunc, retprobe, seen};
}

/* __lru_add_drain_all as a compiler clone has no BTF of its own: fentry cannot reach it. */
static bool fentry_reaches(const char *fn)
{
	return fn && !strchr(fn, '.');
}

/*
 * lru_add_drain_all() and lru_cache_disable() are the API. Since 6.18
 * generic_fadvise() calls __lru_add_drain_all() directly, so where that has a
 * symbol it is hooked too; the BPF side counts a nested entry as the same drain.
 * It is optional: "static inline" makes it notrace (6.12: not in
 * available_filter_functions, fentry EBUSY, kprobe EINVAL).
 */
static void plan_full(struct plan *p, struct drainstat_bpf *s, const struct tracer_symbols *o,
		      struct tracer_features *f)
{
	add(p, s->progs.drainstat_fentry_drain_all, NULL, false, NULL);
	add(p, s->progs.drainstat_fentry_drain_all_twin, NULL, false, NULL);
	add(p, s->progs.drainstat_fexit_drain_all, NULL, false, NULL);
	add(p, s->progs.drainstat_fexit_drain_all_twin, NULL, false, NULL);
	if (o->has_cache_disable) {
		add(p, s->progs.drainstat_fentry_cache_disable, NULL, false, &f->forced);
		add(p, s->progs.drainstat_fentry_cache_disable_twin, NULL, false, &f->forced);
		add(p, s->progs.drainstat_fexit_cache_disable, NULL, false, &f->forced);
		add(p, s->progs.drainstat_fexit_cache_disable_twin, NULL, false, &f->forced);
	}
	if (fentry_reaches(o->drain_fn)) {
		add(p, s->progs.drainstat_fentry_drain, NULL, false, &f->inner);
		add(p, s->progs.drainstat_fentry_drain_twin, NULL, false, &f->inner);
		add(p, s->progs.drainstat_fexit_drain, NULL, false, &f->inner);
		add(p, s->progs.drainstat_fexit_drain_twin, NULL, false, &f->inner);
	}
	add(p, s->progs.drainstat_fentry_local, NULL, false, &f->local);
	add(p, s->progs.drainstat_fexit_local, NULL, false, &f->local);
}

static void plan_kprobe(struct plan *p, struct drainstat_bpf *s, const struct tracer_symbols *o,
			struct tracer_features *f)
{
	add(p, s->progs.drainstat_kprobe_drain_all, "lru_add_drain_all", false, NULL);
	add(p, s->progs.drainstat_kretprobe_api, "lru_add_drain_all", true, NULL);
	if (o->has_cache_disable) {
		add(p, s->progs.drainstat_kprobe_cache_disable, "lru_cache_disable", false,
		    &f->forced);
		add(p, s->progs.drainstat_kretprobe_api, "lru_cache_disable", true, &f->forced);
	}
	if (o->drain_fn) {
		add(p, s->progs.drainstat_kprobe_drain, o->drain_fn, false, &f->inner);
		add(p, s->progs.drainstat_kretprobe_drain, o->drain_fn, true, &f->inner);
	}
	add(p, s->progs.drainstat_kprobe_local, "lru_add_drain", false, &f->local);
	add(p, s->progs.drainstat_kretprobe_local, "lru_add_drain", true, &f->local);
}

/* What each mode loads and attaches; everything else stays unloaded. */
static void plan_mode(struct plan *p, struct drainstat_bpf *s, const struct tracer_opts *o,
		      const struct tracer_symbols *syms, enum drain_mode mode,
		      struct tracer_features *f)
{
	p->nr = 0;
	add(p, s->progs.drainstat_queue_work, NULL, false, NULL);
	add(p, s->progs.drainstat_execute_start, NULL, false, NULL);
	add(p, s->progs.drainstat_execute_end, NULL, false, NULL);
	add(p, s->progs.drainstat_fadvise_enter, NULL, false, &f->fadvise);
	add(p, s->progs.drainstat_fadvise_exit, NULL, false, &f->fadvise);
	/* a tp_btf program on a missing tracepoint would fail the whole load */
	if (o->has_ipi_send_cpu)
		add(p, s->progs.drainstat_ipi_send_cpu, NULL, false, &f->ipi);
	if (mode == MODE_FULL)
		plan_full(p, s, syms, f);
	else if (mode == MODE_KPROBE)
		plan_kprobe(p, s, syms, f);
}

static int configure(struct drainstat_bpf *skel, const struct tracer_opts *opts,
		     const struct tracer_symbols *syms, const struct plan *plan,
		     enum drain_mode mode, int nr_cpus)
{
	struct bpf_program *prog;
	int i, err = 0;

	skel->rodata->filter_tgid = opts->filter_tgid;
	if (opts->filter_comm)
		strncpy((char *)skel->rodata->filter_comm, opts->filter_comm,
			sizeof(skel->rodata->filter_comm) - 1);
	skel->rodata->filter_cgroup_id = opts->filter_cgroup_id;
	skel->rodata->slow_threshold_ns = opts->slow_threshold_ns;
	if (opts->filter_victims) {
		skel->rodata->filter_victims = true;
		memcpy((void *)skel->rodata->victim_cpus, opts->filter_victims,
		       sizeof(skel->rodata->victim_cpus));
	}
	skel->rodata->any_filter = opts->filter_tgid || opts->filter_comm ||
				   opts->filter_cgroup_id || opts->filter_victims;
	skel->rodata->entry_visible = mode != MODE_TRACEPOINT;
	for (prog = bpf_object__next_program(skel->obj, NULL); prog;
	     prog = bpf_object__next_program(skel->obj, prog))
		bpf_program__set_autoload(prog, false);
	for (i = 0; i < plan->nr && !err; i++)
		err = bpf_program__set_autoload(plan->hooks[i].prog, true);
	if (!err)
		err = bpf_program__set_autoload(skel->progs.drainstat_running, true);
	if (!err && mode == MODE_FULL && fentry_reaches(syms->drain_fn)) {
		struct bpf_program *inner[] = {
		    skel->progs.drainstat_fentry_drain, skel->progs.drainstat_fentry_drain_twin,
		    skel->progs.drainstat_fexit_drain, skel->progs.drainstat_fexit_drain_twin};

		for (i = 0; i < (int)(sizeof(inner) / sizeof(inner[0])) && !err; i++)
			err = bpf_program__set_attach_target(inner[i], 0, syms->drain_fn);
	}
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.cpus, (__u32)nr_cpus);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.works, (__u32)nr_cpus);
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

/* What a configured skeleton and its plan need: one fd per map, program and link, and its BTF's. */
static void count_needs(const struct drainstat_bpf *skel, const struct plan *plan, int nr_cpus,
			struct tracer_needs *needs)
{
	struct bpf_program *prog;
	struct bpf_map *map;
	int i;

	needs->fds = 1;
	needs->memory = LOAD_MEMORY;
	for (map = bpf_object__next_map(skel->obj, NULL); map;
	     map = bpf_object__next_map(skel->obj, map)) {
		if (!bpf_map__autocreate(map))
			continue;
		needs->fds++;
		needs->memory += map_bytes(map, nr_cpus);
	}
	for (prog = bpf_object__next_program(skel->obj, NULL); prog;
	     prog = bpf_object__next_program(skel->obj, prog))
		needs->fds += bpf_program__autoload(prog);
	for (i = 0; i < plan->nr; i++)
		needs->fds += link_fds(&plan->hooks[i]);
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
	plan_mode(&plan, skel, opts, &syms, mode, &features);
	err = configure(skel, opts, &syms, &plan, mode, nr_cpus);
	if (!err) {
		count_needs(skel, &plan, nr_cpus, needs);
		needs->fds += opts->fds_beside;
	}
	drainstat_bpf__destroy(skel);
	return err;
}

int tracer__needs(const struct tracer_opts *opts, struct tracer_needs *needs)
{
	bool auto_mode = opts->mode == MODE_AUTO;
	struct tracer_needs most;
	int nr_cpus, err;

	/* the fds do not depend on the CPUs: known even when no fd is left to read them */
	err = mode_needs(opts, auto_mode ? MODE_TRACEPOINT : opts->mode, 1, needs);
	nr_cpus = libbpf_num_possible_cpus();
	if (!err && nr_cpus < 0)
		err = nr_cpus;
	if (!err)
		err = mode_needs(opts, auto_mode ? MODE_FULL : opts->mode, nr_cpus, &most);
	if (!err)
		needs->memory = most.memory;
	return err;
}

static int attach_hook(struct tracer *t, const struct hook *h)
{
	struct bpf_link *link;

	if (h->kfunc)
		link = bpf_program__attach_kprobe(h->prog, h->retprobe, h->kfunc);
	else
		link = bpf_program__attach(h->prog);
	if (!link)
		return -errno;
	t->links[t->nr_links++] = link;
	return 0;
}

/*
 * Required hooks must attach; an optional one that the kernel refuses only
 * leaves its feature off (one short of fds or memory is not a missing feature).
 */
static int attach(struct tracer *t, const struct plan *plan)
{
	bool failed[MAX_LINKS] = {};
	int i, err;

	for (i = 0; i < plan->nr; i++) {
		err = attach_hook(t, &plan->hooks[i]);
		if (err && (!plan->hooks[i].seen || probe__short_of_resources(err)))
			return err;
		failed[i] = err != 0;
	}
	/* a feature is on when all the hooks that serve it attached */
	for (i = 0; i < plan->nr; i++)
		if (plan->hooks[i].seen)
			*plan->hooks[i].seen = true;
	for (i = 0; i < plan->nr; i++)
		if (plan->hooks[i].seen && failed[i])
			*plan->hooks[i].seen = false;
	return 0;
}

/*
 * The sites array, read in place: the slots taken so far, mapped anew (twice
 * as many) when more are taken. A mapping holds all its pages from the start,
 * so mapping the whole array would show all of it in drainstat's RSS.
 */
static int map_sites(struct tracer *t, __u32 used)
{
	const struct bpf_map *map = t->skel->maps.sites;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), value_size = bpf_map__value_size(map);
	size_t size = (size_t)used * value_size, all = value_size * bpf_map__max_entries(map);
	void *area;

	if (size <= t->sites_area_size)
		return 0;
	if (size < 2 * t->sites_area_size)
		size = 2 * t->sites_area_size;
	size = ((size < all ? size : all) + page - 1) / page * page;
	area = mmap(NULL, size, PROT_READ, MAP_SHARED, bpf_map__fd(map), 0);
	if (area == MAP_FAILED)
		return -errno;
	if (t->sites_area)
		munmap((void *)t->sites_area, t->sites_area_size);
	t->sites_area = area;
	t->sites_area_size = size;
	return 0;
}

/* The works array, read in place when a report is made. */
static int map_works(struct tracer *t)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = (size_t)t->nr_cpus * sizeof(struct work_state);
	void *area;

	size = (size + page - 1) / page * page;
	area = mmap(NULL, size, PROT_READ, MAP_SHARED, bpf_map__fd(t->skel->maps.works), 0);
	if (area == MAP_FAILED)
		return -errno;
	t->works_area = area;
	t->works_area_size = size;
	return 0;
}

static void detach(struct tracer *t)
{
	if (t->sites_area)
		munmap((void *)t->sites_area, t->sites_area_size);
	t->sites_area = NULL;
	t->sites_area_size = 0;
	ring_buffer__free(t->slow);
	t->slow = NULL;
	while (t->nr_links > 0)
		bpf_link__destroy(t->links[--t->nr_links]);
	if (t->works_area)
		munmap((void *)t->works_area, t->works_area_size);
	t->works_area = NULL;
	drainstat_bpf__destroy(t->skel);
	t->skel = NULL;
}

/* The symbols, asked for once: setup may still be reading them. */
static int need_symbols(struct tracer *t, const struct tracer_opts *opts)
{
	int err;

	if (t->have_syms)
		return 0;
	err = opts->symbols(opts->symbols_arg, &t->syms);
	t->have_syms = !err;
	return err;
}

/*
 * Enough fds for the whole run, checked before libbpf's load: a feature probe
 * of libbpf's that gets EMFILE takes the feature for missing (and keeps that),
 * and the load fails later with another error, or none.
 */
static int check_fds(const struct tracer *t, const struct tracer_opts *opts,
		     const struct plan *plan)
{
	struct tracer_needs needs;

	count_needs(t->skel, plan, t->nr_cpus, &needs);
	if (opts->fds_beside + needs.fds <= probe__fds_limit())
		return 0;
	if (opts->fds_needed)
		*opts->fds_needed = opts->fds_beside + needs.fds;
	return -EMFILE;
}

/* libbpf says ESRCH for a kernel BTF it could not parse, whatever the cause: which was it? */
static int load_error(int err)
{
	int why = err == -ESRCH ? probe__btf_parse() : 0;

	return why ? why : err;
}

static int try_mode(struct tracer *t, const struct tracer_opts *opts, enum drain_mode mode,
		    enum tracer_step *failed)
{
	/* tracepoint mode's hooks do not depend on the symbols: asked for after load */
	bool late = mode == MODE_TRACEPOINT;
	struct plan plan;
	int err;

	*failed = TRACER_SYMBOLS;
	if (!late && (err = need_symbols(t, opts)))
		return err;
	*failed = TRACER_OPEN;
	memset(&t->features, 0, sizeof(t->features));
	t->features.mode = mode;
	t->skel = drainstat_bpf__open();
	if (!t->skel)
		return -errno;
	plan_mode(&plan, t->skel, opts, &t->syms, mode, &t->features);
	err = configure(t->skel, opts, &t->syms, &plan, mode, t->nr_cpus);
	if (!err) {
		*failed = TRACER_LOAD;
		err = check_fds(t, opts, &plan);
	}
	if (!err)
		err = load_error(drainstat_bpf__load(t->skel));
	if (!err && late) {
		*failed = TRACER_SYMBOLS;
		err = need_symbols(t, opts);
	}
	if (!err) {
		/* no program runs before it is attached: none sees the address unset */
		t->skel->bss->drain_work_fn = t->syms.drain_work_fn;
		*failed = TRACER_ATTACH;
		err = attach(t, &plan);
	}
	if (!err)
		err = map_works(t);
	if (err)
		detach(t);
	return err;
}

/* Auto skips, cheaply, the modes this kernel cannot have: 0 to try mode, else why not. */
static int mode_possible(const struct tracer_opts *opts, enum drain_mode mode)
{
	if (opts->mode != MODE_AUTO)
		return 0;
	if (mode == MODE_FULL)
		return probe__fentry(opts->drain_all_btf_id);
	if (mode == MODE_KPROBE)
		return probe__kprobes(opts->tracefs);
	return 0;
}

int tracer__start(const struct tracer_opts *opts, struct tracer **out, enum tracer_step *failed)
{
	struct tracer *t = calloc(1, sizeof(*t));
	enum drain_mode mode, first = opts->mode, last = opts->mode;
	int err = -EINVAL;

	*failed = TRACER_OPEN;
	if (!t)
		return -ENOMEM;
	t->nr_cpus = libbpf_num_possible_cpus();
	if (t->nr_cpus < 0) {
		err = t->nr_cpus;
		goto fail;
	}
	if (opts->mode == MODE_AUTO) {
		first = MODE_FULL;
		last = MODE_TRACEPOINT;
	}
	for (mode = first; mode <= last; mode++) {
		err = mode_possible(opts, mode);
		if (probe__short_of_resources(err))
			break;
		if (err)
			continue;
		err = try_mode(t, opts, mode, failed);
		if (!err) {
			*out = t;
			return 0;
		}
		if (*failed == TRACER_SYMBOLS || probe__short_of_resources(err))
			break;
	}
fail:
	free(t);
	return err;
}

static int read_ips(const struct bpf_map *map, __s32 id, __u64 *ips, int *nr)
{
	__u32 key = (__u32)id;
	int i;

	*nr = 0;
	if (id < 0 || bpf_map__lookup_elem(map, &key, sizeof(key), ips,
					   DRAINSTAT_MAX_STACK_DEPTH * sizeof(__u64), 0))
		return 0;
	for (i = 0; i < DRAINSTAT_MAX_STACK_DEPTH && ips[i]; i++)
		;
	*nr = i;
	return 0;
}

static int on_slow_event(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	struct slow_drain d = {};

	if (size < sizeof(d.ev))
		return 0;
	memcpy(&d.ev, data, sizeof(d.ev));
	read_ips(t->skel->maps.stacks, d.ev.kstack_id, d.kips, &d.nr_kips);
	read_ips(t->skel->maps.ustacks, d.ev.ustack_id, d.uips, &d.nr_uips);
	t->slow_fn(&d, t->slow_arg);
	return 0;
}

int tracer__watch_slow(struct tracer *t, slow_drain_fn fn, void *arg)
{
	t->slow_fn = fn;
	t->slow_arg = arg;
	t->slow = ring_buffer__new(bpf_map__fd(t->skel->maps.slow_events), on_slow_event, t, NULL);
	return t->slow ? 0 : -errno;
}

int tracer__slow_fd(const struct tracer *t)
{
	return t->slow ? ring_buffer__epoll_fd(t->slow) : -1;
}

int tracer__consume_slow(struct tracer *t)
{
	int n = t->slow ? ring_buffer__consume(t->slow) : 0;

	return n < 0 ? n : 0;
}

const struct tracer_features *tracer__features(const struct tracer *t)
{
	return &t->features;
}

/* Keeps a copy of the stack read under id; no memory only means no copy. */
static void remember_stack(struct tracer *t, __u32 id, const __u64 *ips, int nr_ips)
{
	struct known_stack *k;

	if (!t->known_stacks) {
		t->nr_known_stacks = bpf_map__max_entries(t->skel->maps.stacks);
		t->known_stacks = calloc(t->nr_known_stacks, sizeof(*t->known_stacks));
		if (!t->known_stacks)
			return;
	}
	if (id >= t->nr_known_stacks || t->known_stacks[id])
		return;
	k = malloc(sizeof(*k));
	if (!k)
		return;
	k->nr_ips = nr_ips;
	memcpy(k->ips, ips, sizeof(k->ips));
	t->known_stacks[id] = k;
}

/*
 * A stack id names one stack for good: the map's bucket is written before its
 * id is returned, and never again (no BPF_F_REUSE_STACKID; a different stack
 * that hashes there is stack_lost), and drainstat deletes none. So each id is
 * read once; every interval after takes the copy. ips is
 * DRAINSTAT_MAX_STACK_DEPTH long; *nr_ips is 0 for a stack lost or unread.
 */
static void read_stack(struct tracer *t, __s32 stack_id, __u64 *ips, int *nr_ips)
{
	__u32 id = (__u32)stack_id;

	*nr_ips = 0;
	if (stack_id < 0)
		return;
	if (t->known_stacks && id < t->nr_known_stacks && t->known_stacks[id]) {
		*nr_ips = t->known_stacks[id]->nr_ips;
		memcpy(ips, t->known_stacks[id]->ips, sizeof(t->known_stacks[id]->ips));
		return;
	}
	read_ips(t->skel->maps.stacks, stack_id, ips, nr_ips);
	if (*nr_ips)
		remember_stack(t, id, ips, *nr_ips);
}

/* The slots taken and ready, read in place: no copy of the slots, no system call. */
static int read_sites(struct tracer *t, struct snapshot *snap)
{
	const struct bpf_map *map = t->skel->maps.sites;
	size_t value_size = bpf_map__value_size(map);
	__u32 used = __atomic_load_n(&t->skel->bss->site_slots_used, __ATOMIC_ACQUIRE);
	__u64 ips[DRAINSTAT_MAX_STACK_DEPTH];
	__u32 i;
	int nr_ips, err;

	if (used > bpf_map__max_entries(map))
		used = bpf_map__max_entries(map);
	err = map_sites(t, used);
	if (err)
		return err;
	for (i = 0; i < used; i++) {
		const struct site_stats *s =
		    (const void *)((const char *)t->sites_area + i * value_size);

		/* ready before key: the BPF side wrote the key before it set ready */
		if (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
			continue;
		read_stack(t, s->key.stack_id, ips, &nr_ips);
		err = snapshot__add_site(snap, s, ips, nr_ips);
		if (err)
			return err;
	}
	return snapshot__sort_sites(snap);
}

static int read_cpus(struct tracer *t, struct snapshot *snap)
{
	__u32 cpu;
	int err;

	if (!t->cpus_buf) {
		t->cpus_buf = calloc((size_t)t->nr_cpus, sizeof(*t->cpus_buf));
		if (!t->cpus_buf)
			return -ENOMEM;
	}
	for (cpu = 0; cpu < (__u32)t->nr_cpus; cpu++) {
		err = bpf_map__lookup_elem(t->skel->maps.cpus, &cpu, sizeof(cpu), &t->cpus_buf[cpu],
					   sizeof(t->cpus_buf[cpu]), 0);
		if (err)
			return err;
	}
	return snapshot__set_cpus(snap, t->cpus_buf, t->nr_cpus);
}

static int read_fadvise(const struct tracer *t, struct snapshot *snap)
{
	struct fadvise_stats f;
	__u32 slot;
	int err;

	for (slot = 0; slot < FADVISE_ADVICE_SLOTS; slot++) {
		err = bpf_map__lookup_elem(t->skel->maps.fadvise, &slot, sizeof(slot), &f,
					   sizeof(f), 0);
		if (!err)
			err = snapshot__set_fadvise(snap, (int)slot, &f);
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

/*
 * What runs on cpu now: drainstat_running run there, in an IPI that
 * interrupts it. flags stays 0 where the run fails (the CPU went offline).
 */
static void read_running(struct tracer *t, __u32 cpu, struct running_task *r)
{
	struct bpf_test_run_opts opts = {
	    .sz = sizeof(opts), .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu};

	memset(r, 0, sizeof(*r));
	r->cpu = cpu;
	t->skel->bss->running_now.flags = 0;
	if (!bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.drainstat_running), &opts) &&
	    t->skel->bss->running_now.cpu == cpu)
		*r = t->skel->bss->running_now;
}

/*
 * The works queued and not ended, from the array in place; the pending ones
 * of drains in flight running_min_ns or longer with what runs on their CPU.
 */
static int read_works_in_flight(struct tracer *t, struct snapshot *snap, __u64 running_min_ns)
{
	struct in_flight_work w;
	__u32 cpu;
	__u64 age;
	int err = 0;

	for (cpu = 0; cpu < (__u32)t->nr_cpus && !err; cpu++) {
		const struct work_state *ws = &t->works_area[cpu];

		if (!__atomic_load_n(&ws->work, __ATOMIC_ACQUIRE))
			continue;
		memset(&w, 0, sizeof(w));
		w.ws = *ws;
		w.target_cpu = cpu;
		/* it may have ended since: an empty slot is no work */
		if (!w.ws.work)
			continue;
		/*
		 * the drain's age (from its entry where seen), not the work's, at
		 * read_ns as the model has it: a -T event past running_min_ns
		 * always says what runs there
		 */
		age = snap->in_flight.read_ns > w.ws.drain_id_ns
			  ? snap->in_flight.read_ns - w.ws.drain_id_ns
			  : 0;
		if (!w.ws.start_ns && age >= running_min_ns)
			read_running(t, cpu, &w.running);
		err = snapshot__add_work(snap, &w);
	}
	return err;
}

/* The drains map is read this many entries at a time: a few KB of buffer. */
#define DRAINS_BATCH 128

/* The drains in flight among the n entries read: their stacks, into snap. */
static int add_drains_in_flight(struct tracer *t, struct snapshot *snap, const __u32 *tids,
				const struct drain_state *drains, __u32 n)
{
	__u64 ips[DRAINSTAT_MAX_STACK_DEPTH];
	int nr_ips, err = 0;
	__u32 i;

	for (i = 0; i < n && !err; i++) {
		if (!drains[i].in_call && !drains[i].pending)
			continue;
		read_stack(t, drains[i].site.stack_id, ips, &nr_ips);
		err = snapshot__add_drain(snap, tids[i], &drains[i], ips, nr_ips);
	}
	return err;
}

/*
 * The drains in flight, from the drains map by batches: read only when the
 * BPF side counts drains open (open_drains) or works are in flight.
 */
static int read_drains_in_flight(struct tracer *t, struct snapshot *snap)
{
	int fd = bpf_map__fd(t->skel->maps.drains), err;
	struct bpf_map_batch_opts opts = {.sz = sizeof(opts)};
	__u32 *in = NULL, out, n;
	bool last;

	if (!t->drains_buf) {
		t->drains_buf = calloc(DRAINS_BATCH, sizeof(*t->drains_buf));
		t->tids_buf = calloc(DRAINS_BATCH, sizeof(*t->tids_buf));
		if (!t->drains_buf || !t->tids_buf)
			return -ENOMEM;
	}
	for (last = false; !last; in = &out) {
		n = DRAINS_BATCH;
		err = bpf_map_lookup_batch(fd, in, &out, t->tids_buf, t->drains_buf, &n, &opts);
		/* ENOENT: the last batch, n entries long */
		last = err == -ENOENT;
		if (err && !last)
			return err;
		err = add_drains_in_flight(t, snap, t->tids_buf, t->drains_buf, n);
		if (err)
			return err;
	}
	return 0;
}

/* Drains and works in flight: nothing on the hot paths keeps a list of them. */
static int read_in_flight(struct tracer *t, struct snapshot *snap, __u64 running_min_ns)
{
	struct timespec ts;
	int err;

	/* before the reads: a drain or work that begins during them is of age 0 */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snap->in_flight.read_ns = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
	err = read_works_in_flight(t, snap, running_min_ns);
	if (!err && (snap->in_flight.nr_works ||
		     __atomic_load_n(&t->skel->bss->open_drains, __ATOMIC_RELAXED)))
		err = read_drains_in_flight(t, snap);
	snap->in_flight.read = !err;
	return err;
}

/*
 * Whether prog is one of the twins of a drain entry or exit (see drain_enter()):
 * TWINS() names them NAME and NAME_twin.
 */
static bool is_twin(const struct bpf_object *obj, const struct bpf_program *prog)
{
	static const char suffix[] = "_twin";
	const char *name = bpf_program__name(prog);
	size_t n = strlen(name);
	char twin[128];

	if (n >= sizeof(suffix) - 1 && !strcmp(name + n - (sizeof(suffix) - 1), suffix))
		return true;
	snprintf(twin, sizeof(twin), "%s%s", name, suffix);
	return bpf_object__find_program_by_name(obj, twin) != NULL;
}

/*
 * Whether the kernel's skips of prog can be of a drain event. A tracepoint
 * program (tp_btf, raw_tp) runs with preemption off, so it is skipped only
 * when a run nests in an interrupt on top of another: the workqueue and IPI
 * tracepoints of a drain come from process context (the caller's queue, a
 * kworker's start and end) and are the outer run, never the skipped one. Seen
 * in a 1-minute drain storm on 6.18 (tests/soak): 16 such skips, while the
 * works, drains and escalations all matched bpftrace's and the workload's.
 */
static bool skips_matter(const struct bpf_program *prog)
{
	enum bpf_prog_type type = bpf_program__type(prog);

	return type != BPF_PROG_TYPE_RAW_TRACEPOINT &&
	       !(type == BPF_PROG_TYPE_TRACING &&
		 bpf_program__expected_attach_type(prog) == BPF_TRACE_RAW_TP);
}

/*
 * The runs of our programs the kernel skipped where a drain event may be lost:
 * it runs a program on a CPU only when no other run of it is there (fentry,
 * fexit), or no other kprobe or perf program and no BPF map syscall (kprobes,
 * syscall tracepoints: bpf_prog_active); under full preemption such a run can
 * be preempted. A twin's skip is covered by the other twin unless both missed
 * the call: the BPF side's count after read_counters() is the calls only one
 * twin saw, each one skip, so the calls neither saw are half of the rest. Read
 * after the counters, a skip whose cover is not counted yet is at most half a
 * call more; the total never goes back.
 */
static int read_skipped(struct tracer *t, struct snapshot *snap)
{
	__u64 alone = 0, twins = 0, seen_once = snap->counters[CNT_TWIN_SKIPS], skipped;
	struct bpf_program *prog;

	for (prog = bpf_object__next_program(t->skel->obj, NULL); prog;
	     prog = bpf_object__next_program(t->skel->obj, prog)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || !skips_matter(prog))
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		if (is_twin(t->skel->obj, prog))
			twins += info.recursion_misses;
		else
			alone += info.recursion_misses;
	}
	skipped = alone + (twins > seen_once ? (twins - seen_once) / 2 : 0);
	if (skipped < t->skipped)
		skipped = t->skipped;
	t->skipped = skipped;
	snap->counters[CNT_SKIPPED] = skipped;
	snap->counters[CNT_TWIN_SKIPS] = twins;
	return 0;
}

int tracer__snapshot(struct tracer *t, struct snapshot *snap)
{
	int err;

	/* a snapshot read before keeps its memory: no fresh pages to fault in */
	snapshot__reset_now(snap);
	err = read_sites(t, snap);
	if (!err)
		err = read_cpus(t, snap);
	if (!err)
		err = read_fadvise(t, snap);
	if (!err)
		err = read_counters(t, snap);
	if (!err)
		err = read_skipped(t, snap);
	if (!err)
		err = read_in_flight(t, snap, 0);
	if (err)
		snapshot__free(snap);
	return err;
}

int tracer__in_flight(struct tracer *t, struct snapshot *snap, __u64 running_min_ns)
{
	snapshot__reset_now(snap);
	return read_in_flight(t, snap, running_min_ns);
}

void tracer__free(struct tracer *t)
{
	__u32 i;

	if (!t)
		return;
	detach(t);
	for (i = 0; t->known_stacks && i < t->nr_known_stacks; i++)
		free(t->known_stacks[i]);
	free(t->known_stacks);
	free(t->cpus_buf);
	free(t->drains_buf);
	free(t->tids_buf);
	free(t);
}
