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

void start__tracer_options(struct session *s, struct tracer_opts *topts)
{
	*topts = (struct tracer_opts){
	    .filter_tgid = (__u32)s->opts->pid,
	    .filter_comm = s->opts->comm,
	    .filter_cgroup_id = s->cgroup_id,
	    .filter_victims = s->opts->victims_set ? s->opts->victims : NULL,
	    .max_sites = s->opts->max_sites,
	    .max_stacks = s->opts->max_stacks,
	    .mode = s->opts->mode,
	    .symbols = kscan__symbols_ready,
	    .loaded = kscan__load_symbols,
	    .callback_arg = s,
	    .drain_all_btf_id = s->btf.drain_all_id,
	    .count_ipis = s->btf.ipi_send_cpu && s->opts->ipis,
	    .tracefs = TRACEFS,
	    .slow_threshold_ns = s->opts->slow_ns,
	    .every_stack = walks_every_stack(s->opts),
	    .fds_beside = budget__fds_beside(s),
	    .fds_needed = &s->needs.fds,
	};
}

/* The exit code of tracer__start()'s err at step, its message said; EXIT_OK for none. */
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

int start__tracer(struct session *s)
{
	struct tracer_opts topts;
	enum tracer_step step;
	size_t heap = budget__btf_parse_size();
	int code, err;

	start__tracer_options(s, &topts);
	code = budget__fit_needs(s, &topts, heap);
	if (code != EXIT_OK)
		return code;
	err = budget__prefault_heap(heap);
	if (err)
		return budget__resource_error(s, err);
	note(s, "%.1f MB of heap faulted in for libbpf's load", MB(heap));
	err = tracer__start(&topts, &s->tracer, &step);
	return tracer_error(s, err, step);
}

/* -T: slow drains come from the ring buffer, read from here on (none is lost meanwhile). */
int start__slowlog(struct session *s)
{
	int err;

	if (!s->opts->slow_ns)
		return EXIT_OK;
	s->slowlog = slowlog__new(stdout, s->opts->slow_ns, s->opts->json, s->ksyms);
	err = s->slowlog ? tracer__watch_slow(s->tracer, slowlog__slow_drain, s->slowlog) : -ENOMEM;
	if (probe__short_of_resources(err))
		return budget__resource_error(s, err);
	if (err)
		return say_error(EXIT_RUNTIME, "cannot start the slow-drain log: %s",
				 strerror(-err));
	return EXIT_OK;
}
