// SPDX-License-Identifier: GPL-2.0
/*
 * The text of drains one by one: those in flight at a report, each with its
 * works and what runs where they wait; for -T a drain in flight over the
 * threshold, and one of the log as it ended.
 */
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "escape.h"
#include "report_text.h"
#include "report_text_int.h"
#include "stall.h"
#include "units.h"

const char *report_text_container(const char *cgroup, const struct model_pod *pod, char *buf,
				  size_t size)
{
	struct container c;

	if (pod->name) {
		snprintf(buf, size, "pod/%s/%s", pod->namespace, pod->name);
		return buf;
	}
	if (!container__parse(cgroup, &c))
		return NULL;
	return container__short(&c, buf, size);
}

/* " (pod/default/web-0, containerd:0123456789ab)": the pod and the container, where known. */
static void print_container(FILE *f, const char *cgroup, const struct model_pod *pod)
{
	char compact[REPORT_TEXT_CONTAINER_LEN], *shown;
	const struct model_pod none = {0};
	bool named = report_text_container(cgroup, pod, compact, sizeof(compact));

	if (!named)
		return;
	shown = escape__dup(compact);
	fprintf(f, " (%s", shown ? shown : "?");
	free(shown);
	if (pod->name && report_text_container(cgroup, &none, compact, sizeof(compact))) {
		shown = escape__dup(compact);
		fprintf(f, ", %s", shown ? shown : "?");
		free(shown);
	}
	fputc(')', f);
}

/*
 * ", cgroup /system.slice/x.service", or ", cgroup:ID" for one gone: a cgroup
 * as named (NULL: none, nothing written), escaped; then its pod and container
 * where known.
 */
static void print_cgroup(FILE *f, const char *cgroup, const struct model_pod *pod)
{
	char *shown;

	if (!cgroup)
		return;
	shown = escape__dup(cgroup);
	fprintf(f, ", %s%s", strncmp(cgroup, "cgroup:", 7) ? "cgroup " : "", shown ? shown : "?");
	free(shown);
	print_container(f, cgroup, pod);
}

/*
 * "runs sd-spin pid 812 tid 820, cgroup /system.slice/spin.service, FIFO 50,
 * for 12s": what holds a pending work's CPU.
 */
static void print_running(FILE *f, const struct model_running *r)
{
	char comm[4 * DRAINSTAT_COMM_LEN + 1], d[UNITS_DURATION_LEN], policy[32];

	if (!r->known) {
		fprintf(f, "; what runs there is unknown");
		return;
	}
	if (r->idle) {
		fprintf(f, "; the CPU is idle");
		return;
	}
	fprintf(f, "; runs %s pid %u tid %u",
		escape__text(r->comm, DRAINSTAT_COMM_LEN, comm, sizeof(comm)), r->pid, r->tid);
	print_cgroup(f, r->cgroup, &r->pod);
	fprintf(f, ", %s", stall__policy(r->policy, r->priority, policy, sizeof(policy)));
	if (r->since_known)
		fprintf(f, ", for %s", units__duration(r->running_ns, d, sizeof(d)));
}

/*
 * "cause: rt_task, a real-time task holds the CPU: ..." and the remedies
 * that apply, under a pending CPU or a mutex waiter, indented by indent.
 */
static void print_stall(FILE *f, const struct stall *s, int indent)
{
	char facts[STALL_TEXT_LEN], remedies[STALL_MAX_REMEDIES][STALL_REMEDY_LEN];
	int i, n = stall__remedies(s, remedies, STALL_MAX_REMEDIES);

	stall__facts_text(s, facts, sizeof(facts));
	fprintf(f, "%*scause: %s, %s%s%s\n", indent, "", stall__key(s->cause),
		stall__summary(s->cause), facts[0] ? ": " : "", facts);
	if (!n)
		return;
	fprintf(f, "%*sremedies: ", indent, "");
	for (i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? "; " : "", remedies[i]);
	fputc('\n', f);
}

/* explain: the causes of its stall said (a stuck drain's, or one -T logs) */
static void print_work_in_flight(FILE *f, const struct model_work *w, bool explain)
{
	char d[UNITS_DURATION_LEN];

	fprintf(f, "    CPU %d%s%s: %s %s", w->target_cpu, w->self ? " (self)" : "",
		w->outside_filter ? " (outside -C)" : "", w->started ? "running" : "pending",
		units__duration(w->age_ns, d, sizeof(d)));
	if (!w->started)
		print_running(f, &w->running);
	if (w->isolated || w->nohz_full)
		fprintf(f, " (%s%s%s)", w->isolated ? "isolated" : "",
			w->isolated && w->nohz_full ? ", " : "", w->nohz_full ? "nohz_full" : "");
	fputc('\n', f);
	if (explain && !w->started)
		print_stall(f, &w->stall, 6);
}

/* A drain draining other CPUs in place: how many so far, and which now. */
static void print_in_place(FILE *f, const struct model_drain *md)
{
	fprintf(f, " (%u done", md->in_place);
	if (md->in_place_cpu >= 0)
		fprintf(f, ", CPU %d now", md->in_place_cpu);
	fputc(')', f);
}

static void print_drain_in_flight(FILE *f, const struct model_drain *md, bool stacks, bool explain)
{
	char comm[4 * DRAINSTAT_COMM_LEN + 1], site[ESCAPE_SIZE(MODEL_NAME_LEN)];
	char d[UNITS_DURATION_LEN];
	int i;

	fprintf(f, "  %s pid %u tid %u on CPU %d, site %s",
		escape__text(md->comm, DRAINSTAT_COMM_LEN, comm, sizeof(comm)), md->pid, md->tid,
		md->caller_cpu, escape__text(md->site, MODEL_NAME_LEN, site, sizeof(site)));
	print_cgroup(f, md->cgroup, &md->pod);
	fprintf(f, ": in flight %s, %s", units__duration(md->age_ns, d, sizeof(d)),
		model__phase_name(md->phase));
	if (md->phase == PHASE_PENDING && md->nr_in_flight)
		fprintf(f, " (%u of %u)", md->pending_works, md->works);
	if (md->phase == PHASE_IN_PLACE)
		print_in_place(f, md);
	fputc('\n', f);
	if (stacks) {
		for (i = 0; i < md->stack.nr_frames; i++)
			fprintf(
			    f, "      %s\n",
			    escape__text(md->stack.frames[i], MODEL_NAME_LEN, site, sizeof(site)));
	}
	if (explain && md->phase == PHASE_MUTEX)
		print_stall(f, &md->stall, 4);
	for (i = 0; i < md->nr_in_flight; i++)
		print_work_in_flight(f, &md->in_flight[i], explain);
}

/*
 * The drains in flight: at the top, every one of them, when one is stuck (the
 * mutex waiters behind it belong to the incident); else at the end.
 */
void report_text_in_flight(FILE *f, const struct model *m, bool stacks)
{
	char d[UNITS_DURATION_LEN], oldest[UNITS_DURATION_LEN];
	int i;

	if (!m->nr_in_flight)
		return;
	units__duration(m->info.stuck_ns, d, sizeof(d));
	units__duration(m->oldest_in_flight_ns, oldest, sizeof(oldest));
	if (m->nr_stuck)
		fprintf(f, "STUCK: %d drain%s in flight over %s (the oldest %s)", m->nr_stuck,
			m->nr_stuck == 1 ? "" : "s", d, oldest);
	else
		fprintf(f, "\nIN FLIGHT: %d drain%s, none over %s", m->nr_in_flight,
			m->nr_in_flight == 1 ? "" : "s", d);
	/* with Queue PerCPU Work a drain with no work queued may be running them itself */
	if (m->info.entry_visible && !m->info.works_unseen)
		fprintf(f, "; %d waiting for the drain mutex", m->mutex_waiters);
	fputc('\n', f);
	for (i = 0; i < m->nr_in_flight; i++)
		print_drain_in_flight(f, &m->in_flight[i], stacks, m->in_flight[i].stuck);
	if (m->nr_stuck)
		fputc('\n', f);
}

/* ", 3 works" and, where the caller drained CPUs itself, ", 2 in place" */
static void print_slow_counts(FILE *f, const struct slow_drain_event *e)
{
	__u32 works = model__slow_works(e), in_place = model__slow_in_place(e);

	fprintf(f, ", %u work%s", works, works == 1 ? "" : "s");
	if (in_place)
		fprintf(f, ", %u in place", in_place);
	fputc('\n', f);
}

static void print_slow_target(FILE *f, const struct slow_target *t)
{
	char a[UNITS_DURATION_LEN], b[UNITS_DURATION_LEN];

	if (t->how == SLOW_IN_PLACE) {
		fprintf(f, "    CPU %u: in place, run %s\n", t->cpu,
			units__duration(t->run_ns, b, sizeof(b)));
		return;
	}
	fprintf(f, "    CPU %u: dispatch %s, run %s%s\n", t->cpu,
		units__duration(t->dispatch_ns, a, sizeof(a)),
		units__duration(t->run_ns, b, sizeof(b)), t->how == SLOW_SELF ? " (self)" : "");
}

void report_text__slow_drain(FILE *f, const struct model_slow_drain *sd, const char *stamp)
{
	const struct slow_drain_event *e = sd->ev;
	char comm[4 * DRAINSTAT_COMM_LEN + 1], a[UNITS_DURATION_LEN];
	char shown[ESCAPE_SIZE(MODEL_UFRAME_LEN)];
	__u32 i;
	int k;

	fprintf(f, "%s SLOW DRAIN pid %u tid %u (%s", stamp, e->pid, e->tid,
		escape__text(e->comm, DRAINSTAT_COMM_LEN, comm, sizeof(comm)));
	print_cgroup(f, sd->cgroup, &sd->pod);
	fprintf(f, ") on CPU %u: wait %s", e->caller_cpu,
		units__duration(e->wait_ns, a, sizeof(a)));
	if (e->lock_ns)
		fprintf(f, ", lock %s", units__duration(e->lock_ns, a, sizeof(a)));
	print_slow_counts(f, e);
	for (i = 0; i < e->nr_targets && i < SLOW_MAX_TARGETS; i++)
		print_slow_target(f, &e->targets[i]);
	if (e->nr_targets > SLOW_MAX_TARGETS)
		fprintf(f, "    (%u more)\n", e->nr_targets - SLOW_MAX_TARGETS);
	fprintf(f, "    kernel stack:\n");
	for (k = 0; k < sd->kstack.nr_frames; k++)
		fprintf(f, "      %s\n",
			escape__text(sd->kstack.frames[k], MODEL_NAME_LEN, shown, sizeof(shown)));
	if (!sd->kstack.nr_frames)
		fprintf(f, "      [lost]\n");
	fprintf(f, "    user stack:\n");
	/* user frames name what any user can: its binary's symbols and file names */
	for (k = 0; k < sd->nr_uframes; k++)
		fprintf(f, "      %s\n",
			escape__text(sd->uframes[k], MODEL_UFRAME_LEN, shown, sizeof(shown)));
	if (!sd->nr_uframes)
		fprintf(f, "      [lost]\n");
}

void report_text__drain_in_flight(FILE *f, const struct model_drain *md, __u64 threshold_ns,
				  const char *stamp)
{
	char d[UNITS_DURATION_LEN];

	fprintf(f, "%s DRAIN IN FLIGHT over %s:\n", stamp,
		units__duration(threshold_ns, d, sizeof(d)));
	print_drain_in_flight(f, md, false, true);
}
