// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer started with the run's options (mode by mode for auto), the
 * memory checked and the heap faulted in before, and its failure said as the
 * exit code of the step that failed; then -T's slow-drain log.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "setup_int.h"

#define ENOTSUPP_KERNEL 524 /* include/linux/errno.h: not in the uapi, no strerror() */

static const char *step_name(enum tracer_step step)
{
	switch (step) {
	case TRACER_OPEN:
		return "open";
	case TRACER_LOAD:
		return "load";
	default:
		return "attach";
	}
}

/* The exit code of start_modes()' err at step, its message said; EXIT_OK for none. */
static int tracer_error(struct session *s, int err, enum tracer_step step)
{
	int paranoid;

	if (err && step == TRACER_SYMBOLS)
		return s->symbols_code;
	if (probe__short_of_resources(err))
		return budget__resource_error(s, err);
	/* kprobe mode's hooks are perf events; full and tracepoint modes' required ones are not */
	paranoid = step == TRACER_ATTACH ? probe__perf_restricted(err) : 0;
	if (paranoid && s->opts->mode == MODE_KPROBE)
		return say_error(
		    EXIT_NO_PERM,
		    "cannot attach the BPF programs in %s mode: kernel.perf_event_paranoid=%d "
		    "leaves perf events (kprobes, tracepoints) to CAP_SYS_ADMIN; run as root, "
		    "set kernel.perf_event_paranoid=2 or use full mode",
		    tracer__mode_name(s->opts->mode), paranoid);
	if (err && s->opts->mode == MODE_AUTO)
		return say_error(
		    EXIT_BPF,
		    "cannot %s the BPF programs in any mode (tracepoint, the last tried: "
		    "%s; -vv shows libbpf's log)",
		    step_name(step), strerror(-err));
	/* the kernel's ENOTSUPP, which strerror() does not know */
	if (err == -ENOTSUPP_KERNEL && step == TRACER_ATTACH && s->opts->mode == MODE_FULL)
		return say_error(
		    EXIT_BPF,
		    "cannot attach the BPF programs in full mode: this kernel cannot attach "
		    "fentry/fexit programs here (ENOTSUPP: arm64 kernels without ftrace "
		    "direct calls, Debian's 6.1 among them, have no BPF trampoline); use "
		    "kprobe mode");
	if (err)
		return say_error(
		    EXIT_BPF, "cannot %s the BPF programs in %s mode: %s (-vv shows libbpf's log)",
		    step_name(step), tracer__mode_name(s->opts->mode), strerror(-err));
	return EXIT_OK;
}

/* The symbols mode needs, into the tracer (tracer__set_symbols()). */
static int set_symbols(struct session *s, struct tracer *t, enum drain_mode mode)
{
	struct tracer_symbols syms;
	int err = kscan__symbols_ready(s, mode != MODE_TRACEPOINT, &syms);

	if (!err)
		tracer__set_symbols(t, &syms);
	return err;
}

/*
 * The tracer in mode, step by step (tracer.h), *step the one that failed.
 * The symbols before the load: full and kprobe modes' hooks depend on them
 * from the open, every mode's filter key is in its instructions. Tracepoint
 * mode opens first, while the scan still runs. kallsyms' whole table is read
 * between load and attach, in the heap the load has freed.
 */
static int start_mode(struct session *s, struct tracer *t, enum drain_mode mode,
		      enum tracer_step *step)
{
	bool hooks = mode != MODE_TRACEPOINT;
	int err = 0;

	*step = TRACER_SYMBOLS;
	if (hooks)
		err = set_symbols(s, t, mode);
	if (err)
		return err;
	*step = TRACER_OPEN;
	err = tracer__open(t, mode);
	if (!err && !hooks) {
		*step = TRACER_SYMBOLS;
		err = set_symbols(s, t, mode);
	}
	if (!err) {
		*step = TRACER_LOAD;
		err = tracer__load(t, &s->needs.fds);
	}
	if (!err) {
		*step = TRACER_SYMBOLS;
		err = kscan__load_symbols(s);
	}
	if (!err) {
		*step = TRACER_ATTACH;
		err = tracer__attach(t);
	}
	return err;
}

/*
 * Each mode tracer__next_mode() gives until one starts; none after a mode
 * short of fds or memory, or without the symbols (the kernel's, whatever the
 * mode). The last mode's error otherwise.
 */
static int start_modes(struct session *s, struct tracer *t, enum tracer_step *step)
{
	enum drain_mode mode = MODE_AUTO;
	int err = -EINVAL, next;

	while (!(next = tracer__next_mode(t, &mode))) {
		err = start_mode(s, t, mode, step);
		if (!err || *step == TRACER_SYMBOLS || probe__short_of_resources(err))
			return err;
	}
	return next == -ENOENT ? err : next;
}

static int name_by_kernel(void *tracer, __u64 id, struct cgroup_level *levels, int max)
{
	return tracer__name_cgroup(tracer, id, levels, max);
}

static int parent_by_kernel(void *tracer, __u64 id, __u64 *parent)
{
	return tracer__cgroup_parent(tracer, id, parent);
}

/* cg's ids named by the kernel where it can; those not named asked again each interval. */
static void name_cgroups(struct session *s, struct cgroups *cg)
{
	if (!cg || !s->tracer)
		return;
	if (s->opts->interval_ns)
		cgroups__set_retry(cg, s->opts->interval_ns);
	if (tracer__names_cgroups(s->tracer))
		cgroups__name_by(
		    cg, &(struct cgroups_namer){name_by_kernel, parent_by_kernel, s->tracer});
}

int start__tracer(struct session *s)
{
	enum tracer_step step;
	size_t heap = budget__btf_parse_size();
	int code, err;

	code = budget__fit_needs(s, heap);
	if (code != EXIT_OK)
		return code;
	err = budget__prefault_heap(heap);
	if (err)
		return budget__resource_error(s, err);
	note(s->opts->verbose, "%.1f MB of heap faulted in for libbpf's load", MB(heap));
	err = tracer__new(&s->topts, &s->tracer);
	step = TRACER_OPEN;
	if (!err)
		err = start_modes(s, s->tracer, &step);
	if (err) {
		tracer__free(s->tracer);
		s->tracer = NULL;
	}
	if (!err)
		name_cgroups(s, s->cgroups);
	return tracer_error(s, err, step);
}

/* -T: slow drains come from the ring buffer, read from here on (none is lost meanwhile). */
int start__slowlog(struct session *s)
{
	int err;

	if (!s->opts->slow_ns)
		return EXIT_OK;
	s->slowlog = slowlog__new(stdout, s->opts->slow_ns, s->opts->json, s->ksyms,
				  cgroups__root(s->cgroups));
	if (s->slowlog)
		name_cgroups(s, slowlog__cgroups(s->slowlog));
	err = s->slowlog ? tracer__watch_slow(s->tracer, slowlog__slow_drain, s->slowlog) : -ENOMEM;
	if (probe__short_of_resources(err))
		return budget__resource_error(s, err);
	if (err)
		return say_error(EXIT_RUNTIME, "cannot start the slow-drain log: %s",
				 strerror(-err));
	return EXIT_OK;
}
