// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgroups.h"
#include "monotonic.h"
#include "podnames.h"
#include "report_json.h"
#include "report_text.h"
#include "slowlog.h"
#include "tracer.h"
#include "umaps.h"

/* The drains in flight looked at between reports: between 10 ms and 250 ms apart. */
#define WATCH_MIN_NS 10000000ULL
#define WATCH_MAX_NS 250000000ULL

/* A drain in flight already logged: a task has one drain at a time, named by its start. */
struct logged {
	__u32 tid;
	__u64 id_ns;
};

struct slowlog {
	FILE *f;
	__u64 threshold_ns;
	bool json;
	const struct ksyms *ks;
	struct cgroups *cgroups; /* NULL: no cgroup v2 hierarchy */
	struct podnames *pods;	 /* with cgroups: their pods' names */
	/* the last slow process's mappings: its later events may come after it exited */
	struct umaps *umaps;
	__u32 umaps_pid;
	__u64 uframes_over_budget;
	struct logged *logged; /* the drains in flight logged, as last seen */
	int nr_logged;
	int logged_cap;
};

struct slowlog *slowlog__new(FILE *f, __u64 threshold_ns, bool json, const struct ksyms *ks,
			     const char *cgroup_root)
{
	struct slowlog *l = calloc(1, sizeof(*l));

	if (l && cgroup_root &&
	    (!(l->cgroups = cgroups__new(cgroup_root)) ||
	     !(l->pods = podnames__new(PODNAMES_ROOT, 0, PODNAMES_REFRESH_NS)))) {
		cgroups__free(l->cgroups);
		free(l);
		l = NULL;
	}
	if (!l)
		return NULL;
	l->f = f;
	l->threshold_ns = threshold_ns;
	l->json = json;
	l->ks = ks;
	return l;
}

struct cgroups *slowlog__cgroups(struct slowlog *l)
{
	return l->cgroups;
}

void slowlog__free(struct slowlog *l)
{
	if (!l)
		return;
	umaps__free(l->umaps);
	cgroups__free(l->cgroups);
	podnames__free(l->pods);
	free(l->logged);
	free(l);
}

__u64 slowlog__watch_ns(const struct slowlog *l)
{
	__u64 ns = l->threshold_ns / 2;

	return ns < WATCH_MIN_NS ? WATCH_MIN_NS : ns > WATCH_MAX_NS ? WATCH_MAX_NS : ns;
}

/* The time of day for text: "14:02:03.123" (JSON has the model's wall time). */
static void stamp(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, size, "%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%03ld", ts.tv_nsec / 1000000);
}

/* The last caller's mappings are freed first: their open files count in the fd budget. */
static struct umaps *maps_of(struct slowlog *l, __u32 pid)
{
	if (l->umaps && l->umaps_pid == pid)
		return l->umaps;
	umaps__free(l->umaps);
	l->umaps = NULL;
	if (umaps__load((int)pid, NULL, &l->umaps))
		return NULL;
	l->umaps_pid = pid;
	return l->umaps;
}

void slowlog__slow_drain(const struct slow_drain *d, void *arg)
{
	struct slowlog *l = arg;
	struct model_slow_drain sd;
	struct snap_clock now;
	char time[48];

	/* read as the drain is: its end's wall time from its BPF timestamp */
	snapshot__clock(&now);
	/* not a Kubernetes node, or a directory not to be trusted: no pod names */
	if (l->pods)
		podnames__refresh(l->pods, now_ns());
	if (model__slow_drain(d, l->ks, maps_of(l, d->ev.pid), l->cgroups, l->pods, &now, &sd))
		return;
	if (l->json) {
		report_json__slow_drain(l->f, &sd);
	} else {
		stamp(time, sizeof(time));
		report_text__slow_drain(l->f, &sd, time);
	}
	fflush(l->f);
	l->uframes_over_budget += sd.uframes_over_budget;
	model__slow_drain_free(&sd);
}

__u64 slowlog__uframes_over_budget(const struct slowlog *l)
{
	return l->uframes_over_budget;
}

static bool was_logged(const struct slowlog *l, const struct model_drain *md, __u64 id_ns)
{
	int i;

	for (i = 0; i < l->nr_logged; i++)
		if (l->logged[i].tid == md->tid && l->logged[i].id_ns == id_ns)
			return true;
	return false;
}

/* The drains of m over the threshold, logged now or before: what to remember next time. */
static int remember(struct slowlog *l, const struct model *m)
{
	struct logged *p;
	int i, n = 0;

	if (m->nr_in_flight > l->logged_cap) {
		p = realloc(l->logged, (size_t)m->nr_in_flight * sizeof(*p));
		if (!p)
			return -1;
		l->logged = p;
		l->logged_cap = m->nr_in_flight;
	}
	for (i = 0; i < m->nr_in_flight; i++)
		if (m->in_flight[i].age_ns >= l->threshold_ns)
			l->logged[n++] =
			    (struct logged){m->in_flight[i].tid, m->in_flight[i].id_ns};
	l->nr_logged = n;
	return 0;
}

void slowlog__in_flight(struct slowlog *l, struct model *m)
{
	char time[48];
	int i;

	/* out of memory, the cgroups named so far: a drain is never left out for its cgroup */
	if (l->pods)
		podnames__refresh(l->pods, now_ns());
	model__name_cgroups(m, l->cgroups, l->pods);
	stamp(time, sizeof(time));
	for (i = 0; i < m->nr_in_flight; i++) {
		const struct model_drain *md = &m->in_flight[i];

		if (md->age_ns < l->threshold_ns || was_logged(l, md, md->id_ns))
			continue;
		if (l->json)
			report_json__drain_in_flight(l->f, md, l->threshold_ns, m->wall_ns);
		else
			report_text__drain_in_flight(l->f, md, l->threshold_ns, time);
	}
	fflush(l->f);
	/* without memory, a drain may be logged again: never lost */
	remember(l, m);
}
