// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "container.h"
#include "escape.h"
#include "hist.h"
#include "metric.h"
#include "report_json.h"
#include "stall.h"

/* report > sites > site > stacks > stack > frames is the deepest nesting. */
#define JSON_MAX_DEPTH 8

/* A streaming writer: it only has to know whether the next value needs a comma. */
struct json {
	FILE *f;
	int depth;
	bool comma[JSON_MAX_DEPTH];
};

/* report_json__string() escapes this many bytes at a time: a user frame whole. */
#define JSON_PIECE MODEL_UFRAME_LEN

void report_json__string(FILE *f, const char *s, size_t len)
{
	char shown[ESCAPE_SIZE(JSON_PIECE)];
	size_t i, k, n = strnlen(s, len);

	fputc('"', f);
	/* escape__text() goes byte by byte: piece by piece gives the same text */
	for (i = 0; i < n; i += JSON_PIECE) {
		escape__text(s + i, n - i < JSON_PIECE ? n - i : JSON_PIECE, shown, sizeof(shown));
		/* printable ASCII: only quotes and backslashes need JSON's escapes */
		for (k = 0; shown[k]; k++) {
			if (shown[k] == '"' || shown[k] == '\\')
				fputc('\\', f);
			fputc(shown[k], f);
		}
	}
	fputc('"', f);
}

/* The separator and key before any value; key is NULL inside an array. */
static void json_value(struct json *j, const char *key)
{
	if (j->comma[j->depth])
		fputc(',', j->f);
	j->comma[j->depth] = true;
	if (key) {
		report_json__string(j->f, key, strlen(key));
		fputc(':', j->f);
	}
}

static void json_open(struct json *j, const char *key, char bracket)
{
	json_value(j, key);
	fputc(bracket, j->f);
	j->comma[++j->depth] = false;
}

static void json_close(struct json *j, char bracket)
{
	j->depth--;
	fputc(bracket, j->f);
}

static void json_u64(struct json *j, const char *key, __u64 v)
{
	json_value(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

static void json_bool(struct json *j, const char *key, bool v)
{
	json_value(j, key);
	fputs(v ? "true" : "false", j->f);
}

/* s (at most len bytes), or null when s is NULL. */
static void json_str(struct json *j, const char *key, const char *s, size_t len)
{
	json_value(j, key);
	if (s)
		report_json__string(j->f, s, len);
	else
		fputs("null", j->f);
}

static void json_cstr(struct json *j, const char *key, const char *s)
{
	json_str(j, key, s, s ? strlen(s) : 0);
}

/* "time": wall_ns (CLOCK_REALTIME) in RFC 3339, UTC, microseconds; null if unknown (0). */
static void json_time(struct json *j, __u64 wall_ns)
{
	time_t sec = (time_t)(wall_ns / 1000000000ULL);
	char buf[64];
	struct tm tm;
	size_t n;

	if (!wall_ns || !gmtime_r(&sec, &tm) ||
	    !(n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm))) {
		json_cstr(j, "time", NULL);
		return;
	}
	snprintf(buf + n, sizeof(buf) - n, ".%06lluZ",
		 (unsigned long long)(wall_ns % 1000000000ULL / 1000));
	json_cstr(j, "time", buf);
}

/*
 * "p50" and "p50_is_lower_bound": true where the percentile lies beyond the
 * histogram's last finite bucket (2^HIST_MAX_EXP ns), as wait_is_lower_bound
 * marks the waits of tracepoint mode.
 */
static void put_percentile(struct json *j, const char *key, const char *bound_key,
			   const struct sparse_hist *h, double p)
{
	bool lower_bound;

	json_u64(j, key, hist__percentile(h, p, &lower_bound));
	json_bool(j, bound_key, lower_bound);
}

/* DIST: every field 0 (false) for an empty histogram, so one schema holds in every mode. */
static void put_dist(struct json *j, const char *key, const struct sparse_hist *h)
{
	bool any = h->count != 0;

	json_open(j, key, '{');
	json_u64(j, "count", h->count);
	json_u64(j, "sum", any ? h->sum : 0);
	put_percentile(j, "p50", "p50_is_lower_bound", h, 0.50);
	put_percentile(j, "p90", "p90_is_lower_bound", h, 0.90);
	put_percentile(j, "p99", "p99_is_lower_bound", h, 0.99);
	json_u64(j, "max", any ? h->max : 0);
	json_close(j, '}');
}

static void put_frames(struct json *j, const struct model_stack *st)
{
	int k;

	json_open(j, "frames", '[');
	for (k = 0; k < st->nr_frames; k++)
		json_str(j, NULL, st->frames[k], MODEL_NAME_LEN);
	json_close(j, ']');
}

/* A lost stack has no frames: "frames":[]. */
static void put_stacks(struct json *j, const struct model_site *s)
{
	int i;

	json_open(j, "stacks", '[');
	for (i = 0; i < s->nr_stacks; i++) {
		json_open(j, NULL, '{');
		json_u64(j, "drains", s->stacks[i].drains);
		put_frames(j, &s->stacks[i]);
		json_close(j, '}');
	}
	json_close(j, ']');
}

/*
 * Counts then histograms, each under its name (src/metric.c); one the run does
 * not see is 0, as "sees" says, whatever the maps hold (with Queue PerCPU Work
 * an EMPTY count, say, would be false).
 */
static void put_metrics(struct json *j, const struct model_info *info, const __u64 *count,
			const struct metric_desc *count_desc, int nr_counts,
			const struct sparse_hist *hist, const struct metric_desc *hist_desc,
			int nr_hists)
{
	static const struct sparse_hist none;
	int i;

	for (i = 0; i < nr_counts; i++)
		json_u64(j, count_desc[i].name, metric__seen(&count_desc[i], info) ? count[i] : 0);
	for (i = 0; i < nr_hists; i++)
		put_dist(j, hist_desc[i].name,
			 metric__seen(&hist_desc[i], info) ? &hist[i] : &none);
}

/*
 * After a "cgroup": its pod's name and namespace where known (model_pod),
 * and what its path says of a container and its pod (container.h), each
 * null where unknown.
 */
static void put_container(struct json *j, const char *cgroup, const struct model_pod *pod)
{
	struct container c = {0};

	if (cgroup)
		container__parse(cgroup, &c);
	json_cstr(j, "pod", pod->name);
	json_cstr(j, "namespace", pod->namespace);
	json_cstr(j, "pod_uid", c.pod_uid[0] ? c.pod_uid : NULL);
	json_cstr(j, "container", c.id[0] ? c.id : NULL);
	json_cstr(j, "runtime", container__runtime_name(&c));
	json_cstr(j, "qos", container__qos_name(c.qos));
}

/*
 * Where dispatch dominates and the CPUs' dispatch is known, "slow_cpus":
 * [{"cpu", "dispatch_p99_ns"}] of those slow to start the works (the slowest
 * first, at most STALL_SLOW_CPUS), "slow_cpus_more" (how many more),
 * "other_cpus" and "other_cpus_dispatch_p99_ns" (the slowest of them); else
 * all four null.
 */
static void put_slow_cpus(struct json *j, const struct slow_site *slow)
{
	int i, shown = stall__slow_cpus_kept(slow);
	static const char *const keys[] = {"slow_cpus", "slow_cpus_more", "other_cpus",
					   "other_cpus_dispatch_p99_ns"};

	if (!slow->nr_slow_cpus) {
		for (i = 0; i < (int)(sizeof(keys) / sizeof(keys[0])); i++)
			json_cstr(j, keys[i], NULL);
		return;
	}
	json_open(j, keys[0], '[');
	for (i = 0; i < shown; i++) {
		json_open(j, NULL, '{');
		json_u64(j, "cpu", (__u64)slow->slow_cpus[i].cpu);
		json_u64(j, "dispatch_p99_ns", slow->slow_cpus[i].p99_ns);
		json_close(j, '}');
	}
	json_close(j, ']');
	json_u64(j, keys[1], (__u64)(slow->nr_slow_cpus - shown));
	json_u64(j, keys[2], (__u64)slow->nr_other_cpus);
	json_u64(j, keys[3], slow->others_p99_ns);
}

/*
 * "slow": null, or for a slow site (wait p99 of STALL_SLOW_SITE_NS or more)
 * {"wait_p99_ns", "wait_p99_is_lower_bound", "dominant" (null: no part has a
 * share), "parts_ns": {"own",
 * "lock", "dispatch", "run"}}: each part's share of its total wait, null where
 * not measured; and its slow CPUs (put_slow_cpus()).
 */
static void put_slow_site(struct json *j, const struct model *m, const struct model_site *s)
{
	struct slow_site slow;
	int p;

	model__slow_site(m, s, &slow);
	if (!slow.slow) {
		json_cstr(j, "slow", NULL);
		return;
	}
	json_open(j, "slow", '{');
	json_u64(j, "wait_p99_ns", slow.wait_p99_ns);
	json_bool(j, "wait_p99_is_lower_bound", slow.wait_p99_is_lower_bound);
	json_cstr(j, "dominant", stall__part_key(slow.dominant));
	json_open(j, "parts_ns", '{');
	for (p = 0; p < WAIT_PARTS; p++) {
		if (slow.measured[p])
			json_u64(j, stall__part_key(p), slow.part_ns[p]);
		else
			json_cstr(j, stall__part_key(p), NULL);
	}
	json_close(j, '}');
	put_slow_cpus(j, &slow);
	json_close(j, '}');
}

static void put_site(struct json *j, const struct model *m, const struct model_site *s)
{
	const struct model_info *info = &m->info;

	json_open(j, NULL, '{');
	json_str(j, "site", s->site, MODEL_NAME_LEN);
	/* one schema whatever --by says: a part that does not key the rows is null (cgroup_id 0) */
	json_str(j, "comm", info->comm_merged ? NULL : s->comm, DRAINSTAT_COMM_LEN);
	json_cstr(j, "cgroup", info->by_cgroup ? s->cgroup : NULL);
	json_u64(j, "cgroup_id", info->by_cgroup ? s->cgroup_id : 0);
	put_container(j, info->by_cgroup ? s->cgroup : NULL, &s->pod);
	put_metrics(j, info, s->count, metric__site_count, SITE_COUNTS, s->hist, metric__site_hist,
		    SITE_HISTS);
	put_slow_site(j, m, s);
	put_stacks(j, s);
	json_close(j, '}');
}

/*
 * Every row of m->sites, in the model's order: unlike the text table this keeps
 * the rows with only local drains, so the JSON is complete and needs no filter.
 */
static void put_sites(struct json *j, const struct model *m)
{
	int i;

	json_open(j, "sites", '[');
	for (i = 0; i < m->nr_sites; i++)
		put_site(j, m, &m->sites[i]);
	json_close(j, ']');
}

/* None with Queue PerCPU Work: a CPU's drain may run elsewhere ("sees": "works"). */
static void put_cpus(struct json *j, const struct model *m)
{
	int i;

	json_open(j, "cpus", '[');
	for (i = 0; i < m->nr_cpus && !m->info.works_unseen; i++) {
		const struct model_cpu *c = &m->cpus[i];

		json_open(j, NULL, '{');
		json_u64(j, "cpu", (__u64)c->cpu);
		put_metrics(j, &m->info, c->count, metric__cpu_count, CPU_COUNTS, c->hist,
			    metric__cpu_hist, CPU_HISTS);
		json_close(j, '}');
	}
	json_close(j, ']');
}

/* Only advices that were called. */
static void put_fadvise(struct json *j, const struct model *m)
{
	int i;

	json_open(j, "fadvise", '[');
	for (i = 0; i < FADVISE_ADVICE_SLOTS; i++) {
		const struct model_fadvise *a = &m->fadvise[i];

		if (!a->calls)
			continue;
		json_open(j, NULL, '{');
		json_cstr(j, "advice", a->advice);
		json_u64(j, "calls", a->calls);
		json_u64(j, "escalations", a->escalations);
		put_dist(j, "latency_ns", &a->latency_ns);
		json_close(j, '}');
	}
	json_close(j, ']');
}

/* Every counter, zero or not, under its model__counter_name(). */
static void put_counters(struct json *j, const struct model *m)
{
	int i;

	json_open(j, "counters", '{');
	for (i = 0; i < CNT_NR; i++) {
		const char *name = model__counter_name(i);

		if (name) /* a key must never be null */
			json_u64(j, name, m->counters[i]);
	}
	json_close(j, '}');
}

/* What runs on a pending work's CPU: null where the CPU could not be asked. */
static void put_running(struct json *j, const struct model_running *r)
{
	if (!r->known) {
		json_cstr(j, "running", NULL);
		return;
	}
	json_open(j, "running", '{');
	json_bool(j, "idle", r->idle);
	json_str(j, "comm", r->comm, DRAINSTAT_COMM_LEN);
	json_u64(j, "pid", r->pid);
	json_u64(j, "tid", r->tid);
	json_cstr(j, "cgroup", r->cgroup);
	json_u64(j, "cgroup_id", r->cgroup_id);
	put_container(j, r->cgroup, &r->pod);
	json_cstr(j, "policy", r->policy);
	json_value(j, "priority");
	fprintf(j->f, "%d", r->priority);
	if (r->since_known)
		json_u64(j, "running_ns", r->running_ns);
	else
		json_cstr(j, "running_ns", NULL);
	json_close(j, '}');
}

static void put_fact(struct json *j, const struct stall_fact *f)
{
	switch (f->type) {
	case FACT_STR:
		json_str(j, f->key, f->str, MODEL_NAME_LEN);
		break;
	case FACT_INT:
		json_value(j, f->key);
		fprintf(j->f, "%lld", (long long)f->num);
		break;
	case FACT_BOOL:
		json_bool(j, f->key, f->num);
		break;
	default:
		json_cstr(j, f->key, NULL);
	}
}

/*
 * "cause": {"key", "text", "facts": {...}, "remedies": [...]}, or null where
 * not explained (a drain in flight not stuck).
 */
static void put_stall(struct json *j, const struct stall *s, bool explain)
{
	struct stall_fact facts[STALL_MAX_FACTS];
	char remedies[STALL_MAX_REMEDIES][STALL_REMEDY_LEN];
	int i, n;

	if (!explain) {
		json_cstr(j, "cause", NULL);
		return;
	}
	json_open(j, "cause", '{');
	json_cstr(j, "key", stall__key(s->cause));
	json_cstr(j, "text", stall__summary(s->cause));
	json_open(j, "facts", '{');
	n = stall__facts(s, facts, STALL_MAX_FACTS);
	for (i = 0; i < n; i++)
		put_fact(j, &facts[i]);
	json_close(j, '}');
	json_open(j, "remedies", '[');
	n = stall__remedies(s, remedies, STALL_MAX_REMEDIES);
	for (i = 0; i < n; i++)
		json_cstr(j, NULL, remedies[i]);
	json_close(j, ']');
	json_close(j, '}');
}

/* explain: its cause said, if pending (a stuck drain's work, or one -T logs) */
static void put_work_in_flight(struct json *j, const struct model_work *w, bool explain)
{
	json_open(j, NULL, '{');
	json_u64(j, "target_cpu", (__u64)w->target_cpu);
	json_cstr(j, "state", w->started ? "running" : "pending");
	json_u64(j, "age_ns", w->age_ns);
	json_bool(j, "self", w->self);
	json_bool(j, "isolated", w->isolated);
	json_bool(j, "nohz_full", w->nohz_full);
	json_bool(j, "outside_filter", w->outside_filter);
	if (!w->started) {
		put_running(j, &w->running);
		put_stall(j, &w->stall, explain);
	}
	json_close(j, '}');
}

/* key: NULL inside an array; explain: a mutex waiter's cause and its works' said */
static void put_drain_in_flight(struct json *j, const char *key, const struct model_drain *md,
				bool explain)
{
	int i;

	json_open(j, key, '{');
	json_u64(j, "pid", md->pid);
	json_u64(j, "tid", md->tid);
	json_str(j, "comm", md->comm, DRAINSTAT_COMM_LEN);
	json_cstr(j, "cgroup", md->cgroup);
	json_u64(j, "cgroup_id", md->cgroup_id);
	put_container(j, md->cgroup, &md->pod);
	json_str(j, "site", md->site, MODEL_NAME_LEN);
	json_u64(j, "caller_cpu", (__u64)md->caller_cpu);
	json_u64(j, "age_ns", md->age_ns);
	json_bool(j, "stuck", md->stuck);
	json_cstr(j, "state", model__phase_key(md->phase));
	json_u64(j, "works", md->works);
	json_u64(j, "pending_works", md->pending_works);
	json_u64(j, "in_place", md->in_place);
	if (md->in_place_cpu >= 0)
		json_u64(j, "in_place_cpu", (__u64)md->in_place_cpu);
	else
		json_cstr(j, "in_place_cpu", NULL);
	put_stall(j, &md->stall, explain && md->phase == PHASE_MUTEX);
	put_frames(j, &md->stack);
	json_open(j, "works_in_flight", '[');
	for (i = 0; i < md->nr_in_flight; i++)
		put_work_in_flight(j, &md->in_flight[i], explain);
	json_close(j, ']');
	json_close(j, '}');
}

/*
 * mutex_waiters is null where the drain entry is not seen (tracepoint mode),
 * and with Queue PerCPU Work, where a drain with no work queued may be
 * running them itself.
 */
static void put_in_flight(struct json *j, const struct model *m)
{
	int i;

	json_u64(j, "stuck_threshold_ns", m->info.stuck_ns);
	json_u64(j, "drains_in_flight", (__u64)m->nr_in_flight);
	json_u64(j, "stuck_drains", (__u64)m->nr_stuck);
	if (m->info.entry_visible && !m->info.works_unseen)
		json_u64(j, "mutex_waiters", (__u64)m->mutex_waiters);
	else
		json_cstr(j, "mutex_waiters", NULL);
	json_u64(j, "oldest_drain_in_flight_ns", m->oldest_in_flight_ns);
	json_open(j, "in_flight", '[');
	for (i = 0; i < m->nr_in_flight; i++)
		put_drain_in_flight(j, NULL, &m->in_flight[i], m->in_flight[i].stuck);
	json_close(j, ']');
}

static void put_info(struct json *j, const struct model_info *info, const char *version)
{
	json_cstr(j, "version", version);
	json_cstr(j, "mode", info->mode);
	json_cstr(j, "kernel", info->kernel);
	json_bool(j, "qpw", info->qpw);
	json_cstr(j, "cannot_see", info->blind_spots);
	json_bool(j, "wait_is_lower_bound", info->wait_is_lower_bound);
	/* what this run sees: an empty list or a zero means "none", not "not traced" */
	json_open(j, "sees", '{');
	json_bool(j, "drain_entry", info->entry_visible);
	json_bool(j, "works", !info->works_unseen);
	json_bool(j, "fadvise", info->has_fadvise);
	json_bool(j, "ipis", info->has_ipi);
	json_bool(j, "local_drains", info->has_local);
	json_bool(j, "in_place", info->has_in_place);
	json_close(j, '}');
	json_bool(j, "cumulative", info->cumulative);
}

/* -c, --cgroup and -C, each null where not set (-p is "pid"). */
static void put_filters(struct json *j, const struct model_info *info)
{
	json_open(j, "filters", '{');
	json_cstr(j, "comm", info->filter_comm);
	json_cstr(j, "cgroup", info->filter_cgroup);
	json_cstr(j, "cpus", info->filter_cpus);
	json_close(j, '}');
}

void report_json__print(FILE *f, const struct model *m, const char *version)
{
	struct json j = {.f = f};

	json_open(&j, NULL, '{');
	json_time(&j, m->wall_ns);
	put_info(&j, &m->info, version);
	json_u64(&j, "span_ns", m->span_ns);
	if (m->info.filter_pid)
		json_u64(&j, "pid", m->info.filter_pid);
	else
		json_cstr(&j, "pid", NULL);
	put_filters(&j, &m->info);
	json_u64(&j, "drains", m->total[SITE_DRAINS]);
	json_u64(&j, "works", m->info.works_unseen ? 0 : m->total[SITE_WORKS]);
	json_u64(&j, "self_works", m->info.works_unseen ? 0 : m->total[SITE_SELF_WORKS]);
	json_u64(&j, "in_place", m->info.in_place_seen ? m->total[SITE_IN_PLACE] : 0);
	json_u64(&j, "local_drains", m->local_drains);
	put_sites(&j, m);
	put_cpus(&j, m);
	put_fadvise(&j, m);
	json_u64(&j, "lost", m->lost);
	put_counters(&j, m);
	put_in_flight(&j, m);
	json_close(&j, '}');
	fputc('\n', f);
}

static void put_slow_target(struct json *j, const struct slow_target *t)
{
	json_open(j, NULL, '{');
	json_u64(j, "cpu", t->cpu);
	json_u64(j, "dispatch_ns", t->dispatch_ns);
	json_u64(j, "run_ns", t->run_ns);
	json_bool(j, "self", t->how == SLOW_SELF);
	json_bool(j, "in_place", t->how == SLOW_IN_PLACE);
	json_close(j, '}');
}

void report_json__slow_drain(FILE *f, const struct model_slow_drain *sd)
{
	const struct slow_drain_event *e = sd->ev;
	struct json j = {.f = f};
	__u32 i;
	int k;

	json_open(&j, NULL, '{');
	json_cstr(&j, "event", "slow_drain");
	json_time(&j, sd->wall_ns);
	json_u64(&j, "pid", e->pid);
	json_u64(&j, "tid", e->tid);
	json_str(&j, "comm", e->comm, DRAINSTAT_COMM_LEN);
	json_cstr(&j, "cgroup", sd->cgroup);
	json_u64(&j, "cgroup_id", e->cgroup_id);
	put_container(&j, sd->cgroup, &sd->pod);
	json_u64(&j, "caller_cpu", e->caller_cpu);
	json_u64(&j, "wait_ns", e->wait_ns);
	json_u64(&j, "lock_ns", e->lock_ns);
	json_u64(&j, "works", model__slow_works(e));
	json_u64(&j, "in_place", model__slow_in_place(e));
	json_open(&j, "targets", '[');
	for (i = 0; i < e->nr_targets && i < SLOW_MAX_TARGETS; i++)
		put_slow_target(&j, &e->targets[i]);
	json_close(&j, ']');
	put_frames(&j, &sd->kstack);
	json_open(&j, "user_frames", '[');
	for (k = 0; k < sd->nr_uframes; k++)
		json_str(&j, NULL, sd->uframes[k], MODEL_UFRAME_LEN);
	json_close(&j, ']');
	json_close(&j, '}');
	fputc('\n', f);
}

void report_json__drain_in_flight(FILE *f, const struct model_drain *md, __u64 threshold_ns,
				  __u64 wall_ns)
{
	struct json j = {.f = f};

	json_open(&j, NULL, '{');
	json_cstr(&j, "event", "drain_in_flight");
	json_time(&j, wall_ns);
	json_u64(&j, "threshold_ns", threshold_ns);
	put_drain_in_flight(&j, "drain", md, true);
	json_close(&j, '}');
	fputc('\n', f);
}
