// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer's lifecycle: the load and attach of a mode's programs (which
 * ones, and what they need: tracer_plan.c), mode by mode for auto, the
 * slow-drain ring buffer, and the unload. tracer_read.c reads their maps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "drainstat.h" /* before the skeleton: its .bss holds a struct of ours */
#include "drainstat.skel.h"
#include "filterkey.h"
#include "kretprobe.h"
#include "monotonic.h"
#include "probe.h"
#include "site.h"
#include "tracer.h"
#include "tracer_int.h"

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

void tracer__mode_list(char *buf, size_t size)
{
	size_t len = 0;
	int m;

	buf[0] = '\0';
	for (m = MODE_AUTO; m <= MODE_TRACEPOINT && len < size; m++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					m == MODE_AUTO	       ? ""
					: m == MODE_TRACEPOINT ? " or "
							       : ", ",
					mode_names[m]);
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

/*
 * Where kprobe mode looks for tracefs's kprobe_events: where setup made sure
 * it is mounted, else where debugfs mounts it.
 */
static void kretprobe_dirs(const struct tracer *t, const char *dirs[3])
{
	dirs[0] = t->opts.tracefs;
	dirs[1] = "/sys/kernel/debug/tracing";
	dirs[2] = NULL;
}

/*
 * A kretprobe through tracefs, with room for a pile-up where the callers
 * sleep; the first one that tracefs will not make sends this attach and
 * every kretprobe after it to the kprobe PMU (the kernel's maxactive).
 */
static struct bpf_link *attach_kretprobe(struct tracer *t, const struct hook *h)
{
	struct tracer_features *f = &t->features;
	struct bpf_link *link;
	const char *dirs[3];
	bool room;

	if (!t->kret_tried) {
		t->kret_tried = true;
		kretprobe_dirs(t, dirs);
		f->kret_err = kretprobes__open(dirs, &t->kret);
		if (t->kret)
			snprintf(f->kret_dir, sizeof(f->kret_dir), "%s", kretprobes__dir(t->kret));
		f->kret_maxactive = kretprobes__maxactive(t->nr_cpus);
		f->kret_rt = t->preempt_rt;
	}
	if (t->kret) {
		room = h->callers_sleep == SLEEP_ALWAYS ||
		       (h->callers_sleep == SLEEP_ON_RT && t->preempt_rt);
		link = kretprobes__attach(t->kret, h->prog, h->kfunc, room ? f->kret_maxactive : 0);
		f->kret_tracefs = link || kretprobes__count(t->kret);
		if (f->kret_tracefs)
			return link;
		f->kret_err = -errno;
		kretprobes__free(t->kret);
		t->kret = NULL;
	}
	return bpf_program__attach_kprobe(h->prog, true, h->kfunc);
}

/* h attached: its link in t->links[*at], else *at -1 and -errno. */
static int attach_hook(struct tracer *t, const struct hook *h, int *at)
{
	struct bpf_link *link;

	*at = -1;
	if (bpf_program__type(h->prog) == BPF_PROG_TYPE_KPROBE && h->retprobe)
		link = attach_kretprobe(t, h);
	else if (bpf_program__type(h->prog) == BPF_PROG_TYPE_KPROBE)
		link = bpf_program__attach_kprobe(h->prog, false, h->kfunc);
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

/* An array map's first n values, mmapped read-only: read in place when a report is made. */
static int map_array(const struct bpf_map *map, size_t n, const void **area, size_t *size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = n * bpf_map__value_size(map);
	void *p;

	len = (len + page - 1) / page * page;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, bpf_map__fd(map), 0);
	if (p == MAP_FAILED)
		return -errno;
	*area = p;
	*size = len;
	return 0;
}

/*
 * The works array and the cpus array, a value a CPU, and the drain slots: no
 * copy and no system call a CPU or a slot at each report.
 */
static int map_arrays(struct tracer *t)
{
	const void *works = NULL, *cpus = NULL, *slots = NULL;
	int err;

	err = map_array(t->skel->maps.works, (size_t)t->nr_cpus, &works, &t->works_area_size);
	t->works_area = works;
	if (!err)
		err = map_array(t->skel->maps.cpus, (size_t)t->nr_cpus, &cpus, &t->cpus_area_size);
	t->cpus_area = cpus;
	if (!err)
		err =
		    map_array(t->skel->maps.drain_slots, DRAIN_SLOTS, &slots, &t->drain_slots_size);
	t->drain_slots = slots;
	return err;
}

/* Everything try_mode() made: the mappings, the links, the programs and maps. */
static void unload(struct tracer *t)
{
	ring_buffer__free(t->slow);
	t->slow = NULL;
	bpf_link__destroy(t->check_link);
	t->check_link = NULL;
	bpf_link__destroy(t->rmdir_link);
	t->rmdir_link = NULL;
	while (t->nr_links > 0)
		bpf_link__destroy(t->links[--t->nr_links]);
	/* the events once no link holds them */
	kretprobes__free(t->kret);
	t->kret = NULL;
	t->kret_tried = false;
	if (t->works_area)
		munmap((void *)t->works_area, t->works_area_size);
	if (t->cpus_area)
		munmap((void *)t->cpus_area, t->cpus_area_size);
	if (t->drain_slots)
		munmap((void *)t->drain_slots, t->drain_slots_size);
	t->drain_slots = NULL;
	t->works_area = NULL;
	t->cpus_area = NULL;
	drainstat_bpf__destroy(t->skel);
	t->skel = NULL;
}

/*
 * Enough fds for the whole run, checked before libbpf's load: a feature probe
 * of libbpf's that gets EMFILE takes the feature for missing (and keeps that),
 * and the load fails later with another error, or none.
 */
static int check_fds(const struct tracer *t, unsigned int *fds_needed)
{
	struct tracer_needs needs;

	tracer_count_needs(t->skel, &t->plan, t->nr_cpus, &needs);
	if (t->opts.fds_beside + needs.fds <= probe__fds_limit())
		return 0;
	*fds_needed = t->opts.fds_beside + needs.fds;
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

/*
 * The check of the drains in flight (a task iterator, a test-run program)
 * reads the kernel's task_struct: a kernel whose layout defeats it (7.3.4
 * narrowed on_cpu) must not cost the whole load. Once, load again without
 * it: the drains in flight are then shown as the events left them (-v).
 */
static bool retry_without_check(struct tracer *t, int err)
{
	if (t->check_load_err || probe__short_of_resources(err))
		return false;
	t->check_load_err = err;
	return true;
}

/* The check's programs left unloaded after a load they failed. 0 or -errno. */
static int skip_check(struct tracer *t)
{
	int err = 0;

	if (!t->check_load_err)
		return 0;
	err = bpf_program__set_autoload(t->skel->progs.drainstat_check_callers, false);
	if (!err)
		err = bpf_program__set_autoload(t->skel->progs.drainstat_end_phantom, false);
	return err;
}

/*
 * The naming of cgroups (a cgroup iterator, 6.1+) reads struct cgroup: a
 * kernel that refuses it loses only that, and cgroups are named by a walk of
 * the tree instead. Once, load again without it.
 */
static bool retry_without_cgname(struct tracer *t, int err)
{
	if (t->cgname_load_err || probe__short_of_resources(err))
		return false;
	t->cgname_load_err = err;
	/* the check, left out first, may have been refused for this one's failure: tried again */
	if (t->check_load_err && !t->check_tried_again) {
		t->check_load_err = 0;
		t->check_tried_again = true;
	}
	return true;
}

/* The object, per-event programs and drainstat_running's, opened: 0 or -errno. */
static int open_objects(struct tracer *t)
{
	t->skel = drainstat_bpf__open();
	return t->skel ? 0 : -errno;
}

/* Auto skips, cheaply, the modes this kernel cannot have: 0 to try mode, else why not. */
static int mode_possible(const struct tracer_opts *opts, enum drain_mode mode)
{
	if (mode == MODE_FULL)
		return probe__fentry(opts->drain_all_btf_id);
	if (mode == MODE_KPROBE)
		return probe__kprobes(opts->tracefs);
	return 0;
}

int tracer__new(const struct tracer_opts *opts, struct tracer **out)
{
	struct tracer *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->nr_cpus = libbpf_num_possible_cpus();
	if (t->nr_cpus < 0) {
		int err = t->nr_cpus;

		free(t);
		return err;
	}
	t->opts = *opts;
	t->preempt_rt = probe__preempt_rt();
	*out = t;
	return 0;
}

int tracer__next_mode(const struct tracer *t, enum drain_mode *mode)
{
	enum drain_mode m = *mode == MODE_AUTO ? MODE_FULL : *mode + 1;
	int err;

	/* a mode asked for is tried once, whatever the kernel seems to have */
	if (t->opts.mode != MODE_AUTO) {
		if (*mode != MODE_AUTO)
			return -ENOENT;
		*mode = t->opts.mode;
		return 0;
	}
	for (; m <= MODE_TRACEPOINT; m++) {
		err = mode_possible(&t->opts, m);
		if (probe__short_of_resources(err))
			return err;
		if (!err) {
			*mode = m;
			return 0;
		}
	}
	return -ENOENT;
}

void tracer__set_symbols(struct tracer *t, const struct tracer_symbols *syms)
{
	t->syms = *syms;
}

int tracer__open(struct tracer *t, enum drain_mode mode)
{
	int err;

	memset(&t->features, 0, sizeof(t->features));
	t->features.mode = mode;
	t->features.own_err = t->own_load_err;
	t->features.check_err = t->check_load_err;
	t->features.cgname_err = t->cgname_load_err;
	err = open_objects(t);
	if (!err) {
		tracer_plan_mode(&t->plan, t->skel, &t->opts, &t->syms, mode, &t->features);
		err = tracer_configure(t->skel, &t->opts, &t->plan, mode, t->nr_cpus);
	}
	if (!err)
		err = skip_check(t);
	if (!err && t->cgname_load_err)
		err = bpf_program__set_autoload(t->skel->progs.drainstat_name_cgroup, false);
	if (!err && t->cgname_load_err)
		err = bpf_program__set_autoload(t->skel->progs.drainstat_cgroup_rmdir, false);
	if (err)
		unload(t);
	return err;
}

/* The filter key, lru_add_drain_per_cpu's address, into the workqueue programs (filterkey.h). */
static int set_filter_key(struct tracer *t)
{
	struct bpf_program *progs[] = {t->skel->progs.drainstat_queue_work,
				       t->skel->progs.drainstat_execute_start,
				       t->skel->progs.drainstat_execute_end};
	size_t i;
	int err = 0;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]) && !err; i++)
		err = filterkey__set(progs[i], t->syms.drain_work_fn);
	return err;
}

int tracer__load(struct tracer *t, unsigned int *fds_needed)
{
	enum drain_mode mode = t->features.mode;
	int err = check_fds(t, fds_needed);

	if (!err)
		err = set_targets(&t->plan);
	if (!err)
		err = set_filter_key(t);
	if (!err)
		err = drainstat_bpf__load(t->skel);
	err = load_error(err);
	if (err && (retry_without_own(t, mode, err) || retry_without_check(t, err) ||
		    retry_without_cgname(t, err))) {
		unload(t);
		err = tracer__open(t, mode);
		return err ? err : tracer__load(t, fds_needed);
	}
	if (err)
		unload(t);
	return err;
}

int tracer__attach(struct tracer *t)
{
	__u64 missed;
	int err;

	/* no program runs before it is attached: none sees the addresses unset */
	t->skel->data_symbols->kretprobe_trampoline = t->syms.kretprobe_trampoline;
	t->skel->data_symbols->rethook_trampoline = t->syms.rethook_trampoline;

	/*
	 * Full mode: each attach replaces the trampoline of its function, and a
	 * call inside the old one returns past its fexit programs; a phantom of
	 * a drain begun before the last attach returned is counted as that
	 * (phantom_counter()), not as an end missed for no known reason
	 */
	if (t->features.mode == MODE_FULL)
		t->skel->bss->attach_end_ns = ~0ULL;
	err = attach(t, &t->plan);
	if (t->features.mode == MODE_FULL)
		t->skel->bss->attach_end_ns = now_ns();
	/* without it the drains in flight are shown unverified: said by -v and the features */
	if (!err && !t->check_load_err)
		t->features.check_err = tracer_attach_check(t);
	/* without it a cgroup removed before a report names it is shown by its id alone */
	if (!err && !t->cgname_load_err)
		t->features.cgname_rmdir_err = tracer_attach_cgname(t);
	if (!err && t->features.mode == MODE_KPROBE)
		t->features.kret_missed_known = !tracer_kretprobe_missed(t, &missed);
	if (!err)
		err = map_arrays(t);
	if (err)
		unload(t);
	return err;
}

/* What on_slow_event() returns to stop a batch: the event it had is read (libbpf 1.1). */
#define SLOW_BATCH_DONE (-EAGAIN)

/*
 * Each event's cost is its user's to choose (its frames: umaps.h): a batch
 * stops once past its deadline, so that signals, -d and reports come first.
 */
static int on_slow_event(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	struct slow_drain d = {};

	if (t->slow_dropping)
		t->slow_unread++;
	if (size < sizeof(d.ev) || t->slow_dropping)
		return t->slow_deadline_ns && now_ns() >= t->slow_deadline_ns ? SLOW_BATCH_DONE : 0;
	memcpy(&d.ev, data, sizeof(d.ev));
	tracer_read_ips(t->skel->maps.stacks, d.ev.kstack_id, d.kips, &d.nr_kips);
	site__put_back_caller(d.kips, &d.nr_kips, DRAINSTAT_MAX_STACK_DEPTH, d.ev.kstack_ret_ip);
	tracer_read_ips(t->skel->maps.ustacks, d.ev.ustack_id, d.uips, &d.nr_uips);
	t->slow_fn(&d, t->slow_arg);
	return t->slow_deadline_ns && now_ns() >= t->slow_deadline_ns ? SLOW_BATCH_DONE : 0;
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

/*
 * ring_buffer__consume() goes on while events come (libbpf 1.1.2 has no
 * ring_buffer__consume_n()): on_slow_event() stops it past deadline_ns.
 */
int tracer__consume_slow(struct tracer *t, __u64 deadline_ns)
{
	int n;

	if (!t->slow)
		return 0;
	t->slow_deadline_ns = deadline_ns;
	n = ring_buffer__consume(t->slow);
	if (n == SLOW_BATCH_DONE)
		return 1;
	return n < 0 ? n : 0;
}

int tracer__drop_slow(struct tracer *t, __u64 deadline_ns, struct snapshot *snap)
{
	int more;

	t->slow_dropping = true;
	more = tracer__consume_slow(t, deadline_ns);
	t->slow_dropping = false;
	snap->counters[CNT_SLOW_UNREAD] = t->slow_unread;
	return more;
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
