// SPDX-License-Identifier: GPL-2.0
/*
 * A run's setup, in the order of drainstat(8)'s exit codes: the -p process,
 * -C and --cgroup, privileges, BTF and tracefs; then kallsyms scanned in a
 * thread where full or kprobe mode may need a few addresses before their load,
 * the memory and fds the run needs checked, the tracer started (mode by mode
 * for auto; the symbols loaded between load and attach), what the mode cannot
 * see described and the -T log opened.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "cpulist.h"
#include "escape.h"
#include "export.h"
#include "setup_int.h"
#include "umaps.h"

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

static int start_tracer(struct session *s)
{
	struct tracer_opts topts;
	enum tracer_step step;
	size_t heap = budget__btf_parse_size();
	int code, err, paranoid;

	start__tracer_options(s, &topts);
	code = budget__fit_needs(s, &topts, heap);
	if (code != EXIT_OK)
		return code;
	err = budget__prefault_heap(heap);
	if (err)
		return budget__resource_error(s, err);
	note(s, "%.1f MB of heap faulted in for libbpf's load", MB(heap));
	err = tracer__start(&topts, &s->tracer, &step);
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

/*
 * Why the fadvise calls are not traced, in words every output uses (the blind
 * spots, the text report's fadvise line): err is their tracepoint's attach error.
 */
static void describe_fadvise_cause(int err, char *buf, size_t size)
{
	int paranoid = probe__perf_restricted(err);

	if (paranoid)
		snprintf(buf, size,
			 "kernel.perf_event_paranoid=%d leaves their "
			 "syscalls:sys_enter_" DRAINSTAT_FADVISE_SYSCALL
			 " perf event to CAP_SYS_ADMIN",
			 paranoid);
	else if (err && err != -ENOENT)
		snprintf(buf, size, "syscalls:sys_enter_" DRAINSTAT_FADVISE_SYSCALL ": %s",
			 strerror(-err));
	else
		snprintf(buf, size,
			 "no syscalls:sys_enter_" DRAINSTAT_FADVISE_SYSCALL " tracepoint");
}

/*
 * What Queue PerCPU Work hides (see probe.h's btf_facts.qpw): a drain that runs
 * its works on the caller's CPU queues none, so the workqueue tracepoints see
 * nothing of its CPUs, and tracepoint mode, which sees a drain by its first
 * queued work, nothing of the drain. A kernel with the series may still queue
 * them (CONFIG_QPW off, or qpw=0): which, its BTF id does not tell.
 */
static size_t describe_qpw(enum drain_mode mode, char *buf, size_t size)
{
	return (size_t)snprintf(
	    buf, size,
	    "the works of drains, which Queue PerCPU Work may run on the "
	    "caller's CPU without queueing them: no WORKS, SELF, dispatch, run, "
	    "lock time, EMPTY, IPIs, victim CPUs or mutex waiters%s",
	    mode == MODE_TRACEPOINT ? "; nor such drains: DRAINS, WAIT~ and ESCALATED count only "
				      "those that queued works"
				    : "");
}

/*
 * The first hooked function in the table whose feature is off and whose loss
 * the blind spots name: one at most, as they have said it since the own local
 * drain was hooked (issue 29).
 */
static const struct hook_fn *unhooked(const struct tracer_features *f)
{
	size_t i;

	for (i = 0; i < nr_hook_fns; i++)
		if (hook_fns[i].lost && !hooks__feature_on(&hook_fns[i], f))
			return &hook_fns[i];
	return NULL;
}

void setup__blind_spots(const struct tracer_features *f, bool ipis, bool qpw,
			const char *fadvise_cause, char *buf, size_t size)
{
	const struct hook_fn *h;
	size_t n = 0;

	buf[0] = '\0';
	if (qpw)
		n += describe_qpw(f->mode, buf, size);
	if (f->mode == MODE_TRACEPOINT && n < size)
		n += (size_t)snprintf(
		    buf + n, size - n,
		    "%sdrain entry or exit: WAIT~ is first queue to last work end (a "
		    "lower bound); no lock time, piggybacked or empty drains, local "
		    "drains",
		    n ? "; " : "");
	else if ((h = unhooked(f)) && n < size)
		n += (size_t)snprintf(buf + n, size - n, "%s%s (%s not hooked)%s", n ? "; " : "",
				      h->lost, h->name, h->then);
	if (!f->ipi && n < size)
		n += (size_t)snprintf(buf + n, size - n, "%sIPIs (%s)", n ? "; " : "",
				      ipis ? "no ipi:ipi_send_cpu tracepoint"
					   : "counted with --ipis");
	if (!f->fadvise && n < size)
		snprintf(buf + n, size - n, "%sfadvise calls (%s)", n ? "; " : "", fadvise_cause);
}

/* -v: each optional hook the kernel refused, and the hooks detached with its feature. */
static void note_failed_hooks(struct session *s, const struct tracer_features *f)
{
	int i;

	for (i = 0; i < f->nr_failed; i++)
		note(s, "hook %s not attached (%s): its feature is off", f->failed[i].prog,
		     strerror(-f->failed[i].err));
	if (f->own_err)
		note(s, "the own local drain's programs refused at load (%s): loaded without them",
		     strerror(-f->own_err));
	if (f->nr_detached)
		note(s, "%d hook%s of those features detached again: none runs half a feature",
		     f->nr_detached, f->nr_detached == 1 ? "" : "s");
}

static void describe(struct session *s)
{
	const struct tracer_features *f = tracer__features(s->tracer);

	uname(&s->uts);
	if (!f->fadvise)
		describe_fadvise_cause(f->fadvise_err, s->fadvise_cause, sizeof(s->fadvise_cause));
	setup__blind_spots(f, s->opts->ipis, s->btf.qpw, s->fadvise_cause, s->blind_spots,
			   sizeof(s->blind_spots));
	s->info = (struct model_info){
	    .mode = tracer__mode_name(f->mode),
	    .kernel = s->uts.release,
	    .blind_spots = s->blind_spots[0] ? s->blind_spots : NULL,
	    .wait_is_lower_bound = f->mode == MODE_TRACEPOINT,
	    .entry_visible = f->mode != MODE_TRACEPOINT,
	    .qpw = s->btf.qpw,
	    .has_fadvise = f->fadvise,
	    .fadvise_unseen = f->fadvise ? NULL : s->fadvise_cause,
	    .has_ipi = f->ipi,
	    .has_local = f->local,
	    .cumulative = !s->opts->interval_ns,
	    .stuck_ns = s->opts->stuck_ns,
	    .filter_pid = (__u32)s->opts->pid,
	    .filter_comm = s->opts->comm,
	    .filter_cgroup = s->opts->cgroup,
	    .filter_cpus = s->opts->victims_set ? s->filter_cpus : NULL,
	    .filter_cpu_mask = s->opts->victims_set ? s->opts->victims : NULL,
	};
	note_failed_hooks(s, f);
	note(s, "mode %s: drain entry/exit %s, local drains %s, IPIs %s, fadvise %s, works %s",
	     s->info.mode, s->info.entry_visible ? "hooked" : "not hooked",
	     f->local ? "hooked" : "not hooked", f->ipi ? "counted" : "not counted",
	     f->fadvise ? "traced" : "not traced",
	     s->info.qpw ? "not shown (Queue PerCPU Work)" : "shown");
}

/* -T: slow drains come from the ring buffer, read from here on (none is lost meanwhile). */
static int start_slowlog(struct session *s)
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

int setup__run(struct session *s)
{
	int code;

	/*
	 * Setup's megabytes (libbpf's BTF parse, in heap faulted in beforehand)
	 * stay in the heap until given back once attached.
	 */
	heap_keep(true);
	kscan__name_symbols(&s->scan);
	cpulist__format(s->opts->victims, s->filter_cpus, sizeof(s->filter_cpus));
	s->fds_at_start = probe__fds_in_use();
	code = target__open_process(s);
	if (code == EXIT_OK)
		code = target__check_victims(s->opts);
	if (code == EXIT_OK)
		code = target__resolve_cgroup(s);
	if (code == EXIT_OK)
		code = kernel__check_privileges();
	if (code == EXIT_OK)
		code = kernel__check_btf_exposed();
	if (code == EXIT_OK)
		code = kernel__mount_tracefs(s);
	/* after kernel__mount_tracefs(): its unshare() needs a process of one thread */
	if (code == EXIT_OK)
		kscan__start(s);
	if (code == EXIT_OK)
		code = kernel__read_btf_facts(s);
	if (code == EXIT_OK)
		code = start_tracer(s);
	kscan__join(s);
	heap_keep(false);
	malloc_trim(0);
	if (code == EXIT_OK)
		describe(s);
	if (code == EXIT_OK)
		code = start_slowlog(s);
	return code;
}
