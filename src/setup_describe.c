// SPDX-License-Identifier: GPL-2.0
/*
 * What the run sees and what it cannot, in words: the model's info for every
 * output (mode, kernel, filters), the blind spots of the mode and hooks it
 * ended up with, and -v's notes on the hooks the kernel refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "setup_int.h"

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

void describe__blind_spots(const struct tracer_features *f, bool ipis, bool qpw,
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
		note(s->opts->verbose, "hook %s not attached (%s): its feature is off",
		     f->failed[i].prog, strerror(-f->failed[i].err));
	if (f->own_err)
		note(s->opts->verbose,
		     "the own local drain's programs refused at load (%s): loaded without them",
		     strerror(-f->own_err));
	if (f->nr_detached)
		note(s->opts->verbose,
		     "%d hook%s of those features detached again: none runs half a feature",
		     f->nr_detached, f->nr_detached == 1 ? "" : "s");
	if (f->cgname_err)
		note(s->opts->verbose,
		     "the naming of cgroups by the kernel (a cgroup iterator) refused (%s): "
		     "cgroups are named by a walk of the tree",
		     strerror(-f->cgname_err));
	if (f->cgname_rmdir_err)
		note(s->opts->verbose,
		     "the hook on removed cgroups (tp_btf/cgroup_rmdir) not attached (%s): "
		     "a cgroup removed before a report names it is shown by its id",
		     strerror(-f->cgname_rmdir_err));
	if (f->check_err)
		note(s->opts->verbose,
		     "the check of the drains in flight (a task iterator) refused (%s): "
		     "they are shown as the events left them",
		     strerror(-f->check_err));
}

/* -v, kprobe mode: how the kretprobes were made, and whether their misses are counted. */
static void note_kretprobes(struct session *s, const struct tracer_features *f)
{
	const char *counted = f->kret_missed_known ? "counted (kretprobe_missed)"
						   : "not counted: the kernel does not tell them "
						     "(before 6.7)";

	if (f->mode != MODE_KPROBE)
		return;
	if (f->kret_tracefs)
		note(s->opts->verbose,
		     "kretprobes made in %s/kprobe_events: %u instances on the functions "
		     "callers sleep in%s; misses %s",
		     f->kret_dir, f->kret_maxactive,
		     f->kret_rt ? " (the local drains too: PREEMPT_RT)" : "", counted);
	else
		note(s->opts->verbose,
		     "kretprobes through the kprobe PMU, the kernel's max(10, 2 x CPUs) "
		     "instances each: tracefs kprobe_events %s (%s); misses %s",
		     f->kret_dir[0] ? "refused one" : "not found", strerror(-f->kret_err), counted);
}

void describe__run(struct session *s)
{
	const struct tracer_features *f = tracer__features(s->tracer);
	/* a drain's other CPUs drained in place are seen: its works are not hidden */
	bool in_place = f->mode != MODE_TRACEPOINT && f->own;

	uname(&s->uts);
	if (!f->fadvise)
		describe_fadvise_cause(f->fadvise_err, s->fadvise_cause, sizeof(s->fadvise_cause));
	describe__blind_spots(f, s->opts->ipis, s->btf.qpw && !in_place, s->fadvise_cause,
			      s->blind_spots, sizeof(s->blind_spots));
	s->info = (struct model_info){
	    .mode = tracer__mode_name(f->mode),
	    .kernel = s->uts.release,
	    .blind_spots = s->blind_spots[0] ? s->blind_spots : NULL,
	    .wait_is_lower_bound = f->mode == MODE_TRACEPOINT,
	    .entry_visible = f->mode != MODE_TRACEPOINT,
	    .qpw = s->btf.qpw,
	    .works_unseen = s->btf.qpw && !in_place,
	    .has_in_place = in_place,
	    .has_fadvise = f->fadvise,
	    .fadvise_unseen = f->fadvise ? NULL : s->fadvise_cause,
	    .has_ipi = f->ipi,
	    .has_local = f->local,
	    .cumulative = !s->opts->interval_ns,
	    .by_cgroup = (s->key_parts & SITE_KEY_CGROUP) != 0,
	    .comm_merged = !(s->key_parts & SITE_KEY_COMM),
	    .stuck_ns = s->opts->stuck_ns,
	    .filter_pid = (__u32)s->opts->pid,
	    .filter_comm = s->opts->comm,
	    .filter_cgroup = s->opts->cgroup,
	    .filter_cpus = s->opts->victims_set ? s->filter_cpus : NULL,
	    .filter_cpu_mask = s->opts->victims_set ? s->opts->victims : NULL,
	};
	note_failed_hooks(s, f);
	note_kretprobes(s, f);
	note(s->opts->verbose,
	     "mode %s: drain entry/exit %s, local drains %s, IPIs %s, fadvise %s, works %s",
	     s->info.mode, s->info.entry_visible ? "hooked" : "not hooked",
	     f->local ? "hooked" : "not hooked", f->ipi ? "counted" : "not counted",
	     f->fadvise ? "traced" : "not traced",
	     s->info.works_unseen ? "not shown (Queue PerCPU Work)" : "shown");
}
