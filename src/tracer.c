// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer's lifecycle: which programs a mode loads (the plan), what they
 * need, their load and attach, mode by mode for auto, the slow-drain ring
 * buffer, and the unload. tracer_read.c reads their maps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "drainstat.h" /* before the skeletons: running's .bss holds a struct of ours */
#include "drainstat.skel.h"
#include "running.skel.h"
#include "hooks.h"
#include "probe.h"
#include "site.h"
#include "tracer.h"
#include "tracer_int.h"

/* One program to attach. */
struct hook {
	struct bpf_program *prog;
	const char *kfunc; /* a drain hook's function: a kprobe's, an fentry's target; else NULL */
	bool retprobe;
	bool *seen; /* optional hook: set when attached; NULL: required */
	int *why;   /* optional hook: -errno of its attach when it failed */
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
	p->hooks[p->nr++] = (struct hook){prog, kfunc, retprobe, seen, NULL};
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

/* Full mode: fentry, its twin, fexit, its twin; kprobe mode: kprobe, kretprobe. */
static void plan_row(struct plan *p, struct drainstat_bpf *s, const struct hook_fn *h,
		     enum drain_mode mode, struct tracer_features *f)
{
	const char *full[] = {h->fentry[0], h->fentry[1], h->fexit[0], h->fexit[1]};
	const char *kprobe[] = {h->kprobe, h->kretprobe};
	const char **progs = mode == MODE_FULL ? full : kprobe;
	int i, n = mode == MODE_FULL ? 4 : 2;

	for (i = 0; i < n; i++)
		if (progs[i])
			add(p, bpf_object__find_program_by_name(s->obj, progs[i]), h->name,
			    mode == MODE_KPROBE && i == 1, hooks__feature(h, f));
}

/* What each mode loads and attaches; everything else stays unloaded. */
static void plan_mode(struct plan *p, struct drainstat_bpf *s, const struct tracer_opts *o,
		      const struct tracer_symbols *syms, enum drain_mode mode,
		      struct tracer_features *f)
{
	size_t i;

	p->nr = 0;
	add(p, s->progs.drainstat_queue_work, NULL, false, NULL);
	add(p, s->progs.drainstat_execute_start, NULL, false, NULL);
	add(p, s->progs.drainstat_execute_end, NULL, false, NULL);
	add_explained(p, s->progs.drainstat_fadvise_enter, &f->fadvise, &f->fadvise_err);
	add_explained(p, s->progs.drainstat_fadvise_exit, &f->fadvise, &f->fadvise_err);
	/* a tp_btf program on a missing tracepoint would fail the whole load */
	if (o->count_ipis)
		add(p, s->progs.drainstat_ipi_send_cpu, NULL, false, &f->ipi);
	for (i = 0; mode != MODE_TRACEPOINT && i < nr_hook_fns; i++)
		if (row_hooked(i, syms, f))
			plan_row(p, s, &hook_fns[i], mode, f);
}

static int configure(struct drainstat_bpf *skel, const struct tracer_opts *opts,
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

/* What the configured skeletons and the plan need: both objects, and a link per hook. */
static void count_needs(const struct drainstat_bpf *skel, const struct running_bpf *running,
			const struct plan *plan, int nr_cpus, struct tracer_needs *needs)
{
	int i;

	needs->fds = 0;
	needs->memory = LOAD_MEMORY;
	count_object(skel->obj, nr_cpus, needs);
	count_object(running->obj, nr_cpus, needs);
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
	struct running_bpf *running = skel ? running_bpf__open() : NULL;
	struct plan plan;
	int err;

	if (!running) {
		err = -errno;
		drainstat_bpf__destroy(skel);
		return err;
	}
	plan_mode(&plan, skel, opts, &syms, mode, &features);
	err = configure(skel, opts, &plan, mode, nr_cpus);
	if (!err) {
		count_needs(skel, running, &plan, nr_cpus, needs);
		needs->fds += opts->fds_beside;
	}
	running_bpf__destroy(running);
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
	if (!err) {
		needs->memory = most.memory;
		needs->nr_cpus = nr_cpus;
	}
	return err;
}

/* h attached: its link in t->links[*at], else *at -1 and -errno. */
static int attach_hook(struct tracer *t, const struct hook *h, int *at)
{
	struct bpf_link *link;

	*at = -1;
	if (bpf_program__type(h->prog) == BPF_PROG_TYPE_KPROBE)
		link = bpf_program__attach_kprobe(h->prog, h->retprobe, h->kfunc);
	else
		link = bpf_program__attach(h->prog);
	if (!link)
		return -errno;
	*at = t->nr_links;
	t->links[t->nr_links++] = link;
	return 0;
}

static void note_failed(struct tracer_features *f, const struct hook *h, int err)
{
	struct tracer_failed_hook *fh;

	if (f->nr_failed == TRACER_MAX_FAILED)
		return;
	fh = &f->failed[f->nr_failed++];
	snprintf(fh->prog, sizeof(fh->prog), "%s", bpf_program__name(h->prog));
	fh->err = err;
}

/*
 * A feature is on when every hook that serves it attached; the hooks of a
 * feature turned off are detached, so that none runs half a feature (an
 * entry whose exit never runs leaves its calls open: drains in flight for
 * good). links[i]: where hook i's link is in t->links, -1 if none.
 */
static void settle_features(struct tracer *t, const struct plan *plan, const int *errs,
			    const int *links)
{
	int i, n = 0;

	for (i = 0; i < plan->nr; i++)
		if (plan->hooks[i].seen)
			*plan->hooks[i].seen = true;
	for (i = 0; i < plan->nr; i++) {
		if (!plan->hooks[i].seen || !errs[i])
			continue;
		*plan->hooks[i].seen = false;
		if (plan->hooks[i].why)
			*plan->hooks[i].why = errs[i];
		note_failed(&t->features, &plan->hooks[i], errs[i]);
	}
	for (i = 0; i < plan->nr; i++) {
		if (links[i] < 0 || !plan->hooks[i].seen || *plan->hooks[i].seen)
			continue;
		bpf_link__destroy(t->links[links[i]]);
		t->links[links[i]] = NULL;
		t->features.nr_detached++;
	}
	for (i = 0; i < t->nr_links; i++)
		if (t->links[i])
			t->links[n++] = t->links[i];
	t->nr_links = n;
}

/*
 * Required hooks must attach; an optional one that the kernel refuses only
 * leaves its feature off (one short of fds or memory is not a missing feature).
 */
static int attach(struct tracer *t, const struct plan *plan)
{
	int errs[MAX_LINKS] = {}, links[MAX_LINKS];
	int i, err;

	for (i = 0; i < plan->nr; i++) {
		err = attach_hook(t, &plan->hooks[i], &links[i]);
		if (err && (!plan->hooks[i].seen || probe__short_of_resources(err)))
			return err;
		errs[i] = err;
	}
	settle_features(t, plan, errs, links);
	return 0;
}

/* An array map of nr_cpus values, mmapped read-only: read in place when a report is made. */
static int map_per_cpu(const struct tracer *t, const struct bpf_map *map, const void **area,
		       size_t *size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (size_t)t->nr_cpus * bpf_map__value_size(map);
	void *p;

	len = (len + page - 1) / page * page;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, bpf_map__fd(map), 0);
	if (p == MAP_FAILED)
		return -errno;
	*area = p;
	*size = len;
	return 0;
}

/* The works array and the cpus array: no copy and no system call a CPU at each report. */
static int map_per_cpu_arrays(struct tracer *t)
{
	const void *works = NULL, *cpus = NULL;
	int err;

	err = map_per_cpu(t, t->skel->maps.works, &works, &t->works_area_size);
	t->works_area = works;
	if (!err)
		err = map_per_cpu(t, t->skel->maps.cpus, &cpus, &t->cpus_area_size);
	t->cpus_area = cpus;
	return err;
}

/* Everything try_mode() made: the mappings, the links, the programs and maps. */
static void unload(struct tracer *t)
{
	ring_buffer__free(t->slow);
	t->slow = NULL;
	while (t->nr_links > 0)
		bpf_link__destroy(t->links[--t->nr_links]);
	if (t->works_area)
		munmap((void *)t->works_area, t->works_area_size);
	if (t->cpus_area)
		munmap((void *)t->cpus_area, t->cpus_area_size);
	t->works_area = NULL;
	t->cpus_area = NULL;
	running_bpf__destroy(t->running);
	t->running = NULL;
	drainstat_bpf__destroy(t->skel);
	t->skel = NULL;
}

/* The symbols, asked for once: setup may still be reading them. */
static int need_symbols(struct tracer *t, const struct tracer_opts *opts)
{
	int err;

	if (t->have_syms)
		return 0;
	err = opts->symbols(opts->callback_arg, &t->syms);
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

	count_needs(t->skel, t->running, plan, t->nr_cpus, &needs);
	if (opts->fds_beside + needs.fds <= probe__fds_limit())
		return 0;
	if (opts->fds_needed)
		*opts->fds_needed = opts->fds_beside + needs.fds;
	return -EMFILE;
}

/*
 * Full mode's programs name no function in their section: each gets its row's
 * before the load, which resolves it in the kernel's BTF as it would a section's.
 */
static int set_targets(const struct plan *plan)
{
	const struct hook *h;
	int i, err = 0;

	for (i = 0; i < plan->nr && !err; i++) {
		h = &plan->hooks[i];
		if (h->kfunc && bpf_program__type(h->prog) == BPF_PROG_TYPE_TRACING)
			err = bpf_program__set_attach_target(h->prog, 0, h->kfunc);
	}
	return err;
}

/* libbpf says ESRCH for a kernel BTF it could not parse, whatever the cause: which was it? */
static int load_error(int err)
{
	int why = err == -ESRCH ? probe__btf_parse() : 0;

	return why ? why : err;
}

/*
 * The own local drain's programs read per-CPU variables (typed ksyms) that
 * the kernel resolves by name in its symbol table at load: one whose table
 * lacks them (Debian's arm64 6.1) refuses the whole load. Once, load again
 * without them (their feature off, err kept for -v, and for the next mode:
 * the symbol table is the kernel's, whatever the mode).
 */
static bool retry_without_own(struct tracer *t, enum drain_mode mode, int err)
{
	if (mode == MODE_TRACEPOINT || t->own_load_err || probe__short_of_resources(err))
		return false;
	t->own_load_err = err;
	return true;
}

/* The per-event object and drainstat_running's, opened: 0 or -errno. */
static int open_objects(struct tracer *t)
{
	t->skel = drainstat_bpf__open();
	if (!t->skel)
		return -errno;
	t->running = running_bpf__open();
	return t->running ? 0 : -errno;
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
	t->features.own_err = t->own_load_err;
	err = open_objects(t);
	if (err) {
		unload(t);
		return err;
	}
	plan_mode(&plan, t->skel, opts, &t->syms, mode, &t->features);
	err = configure(t->skel, opts, &plan, mode, t->nr_cpus);
	if (!err) {
		*failed = TRACER_LOAD;
		err = check_fds(t, opts, &plan);
	}
	if (!err) {
		err = set_targets(&plan);
		if (!err)
			err = drainstat_bpf__load(t->skel);
		if (!err)
			err = running_bpf__load(t->running);
		err = load_error(err);
		if (err && retry_without_own(t, mode, err)) {
			unload(t);
			return try_mode(t, opts, mode, failed);
		}
	}
	if (!err && opts->loaded) {
		*failed = TRACER_SYMBOLS;
		err = opts->loaded(opts->callback_arg);
	}
	if (!err && late) {
		*failed = TRACER_SYMBOLS;
		err = need_symbols(t, opts);
	}
	if (!err) {
		/* no program runs before it is attached: none sees the address unset */
		t->skel->data_symbols->drain_work_fn = t->syms.drain_work_fn;
		t->skel->data_symbols->kretprobe_trampoline = t->syms.kretprobe_trampoline;
		t->skel->data_symbols->rethook_trampoline = t->syms.rethook_trampoline;
		*failed = TRACER_ATTACH;
		err = attach(t, &plan);
	}
	if (!err)
		err = map_per_cpu_arrays(t);
	if (err)
		unload(t);
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

static int on_slow_event(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	struct slow_drain d = {};

	if (size < sizeof(d.ev))
		return 0;
	memcpy(&d.ev, data, sizeof(d.ev));
	tracer_read_ips(t->skel->maps.stacks, d.ev.kstack_id, d.kips, &d.nr_kips);
	site__put_back_caller(d.kips, &d.nr_kips, DRAINSTAT_MAX_STACK_DEPTH, d.ev.kstack_ret_ip);
	tracer_read_ips(t->skel->maps.ustacks, d.ev.ustack_id, d.uips, &d.nr_uips);
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

void tracer__free(struct tracer *t)
{
	if (!t)
		return;
	unload(t);
	tracer_read_free(t);
	free(t);
}
