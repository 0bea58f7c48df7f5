// SPDX-License-Identifier: GPL-2.0
/*
 * report_json__print() of a random model, read back by a strict parser: one
 * line of printable ASCII, one valid JSON value, every string decoding to the
 * very bytes the model held (up to a NUL), every number the model's, "time" its
 * wall time; then the drain_in_flight event of each of its drains in flight,
 * and a slow_drain event of random bytes, checked the same way. An odd first
 * byte instead gives the rest of the input, unterminated, to
 * report_json__string() alone.
 */
#include <string.h>
#include <time.h>

#include "container.h"
#include "hist.h"
#include "json_check.h"
#include "random_model.h"
#include "report_json.h"
#include "stall.h"

#define VERSION_LEN 32

/* What a writer printed into a memory stream; NUL-terminated. */
struct output {
	char *text;
	size_t len;
};

static const struct json_value *member(const struct json_value *obj, const char *key,
				       enum json_type type)
{
	const struct json_value *v = json_check__get(obj, key);

	FUZZ_CHECK(v && v->type == type, "\"%s\" is missing or not of type %d", key, type);
	return v;
}

static __u64 member_u64(const struct json_value *obj, const char *key)
{
	const struct json_value *v = member(obj, key, JSON_NUMBER);

	FUZZ_CHECK(v->is_u64, "\"%s\" is %s, not a 64-bit count", key, v->str);
	return v->u64;
}

static void expect_u64(const struct json_value *obj, const char *key, __u64 want)
{
	__u64 got = member_u64(obj, key);

	FUZZ_CHECK(got == want, "\"%s\" is %llu, want %llu", key, (unsigned long long)got,
		   (unsigned long long)want);
}

/* A signed integer: a negative one must come back negative. */
static void expect_s64(const struct json_value *obj, const char *key, __s64 want)
{
	const struct json_value *v = member(obj, key, JSON_NUMBER);

	FUZZ_CHECK(v->is_s64 && v->s64 == want, "\"%s\" is %s, want %lld", key, v->str,
		   (long long)want);
}

/* obj has exactly n keys: none the checks before missed. */
static void expect_keys(const struct json_value *obj, const char *what, size_t n)
{
	FUZZ_CHECK(obj->nr == n, "%s has %zu keys, want %zu", what, obj->nr, n);
}

static void expect_bool(const struct json_value *obj, const char *key, bool want)
{
	member(obj, key, want ? JSON_TRUE : JSON_FALSE);
}

/* The bytes of s up to a NUL or max, or null for NULL. */
static void expect_bytes(const struct json_value *obj, const char *key, const char *s, size_t max)
{
	const struct json_value *v;
	size_t n;

	if (!s) {
		member(obj, key, JSON_NULL);
		return;
	}
	v = member(obj, key, JSON_STRING);
	n = strnlen(s, max);
	FUZZ_CHECK(v->len == n && !memcmp(v->str, s, n), "\"%s\" does not decode to its bytes",
		   key);
}

/* The keys after a "cgroup": its pod, container__parse() of it, null where unknown. */
static void expect_container(const struct json_value *obj, const char *cgroup,
			     const struct model_pod *pod)
{
	struct container c = {0};

	if (cgroup)
		container__parse(cgroup, &c);
	expect_bytes(obj, "pod", pod->name, 4096);
	expect_bytes(obj, "namespace", pod->namespace, 4096);
	expect_bytes(obj, "pod_uid", c.pod_uid[0] ? c.pod_uid : NULL, sizeof(c.pod_uid));
	expect_bytes(obj, "container", c.id[0] ? c.id : NULL, sizeof(c.id));
	expect_bytes(obj, "runtime", container__runtime_name(&c), 16);
	expect_bytes(obj, "qos", container__qos_name(c.qos), 16);
}

/* "time": null for 0, else wall_ns in RFC 3339, UTC, to the microsecond, read back. */
static void expect_time(const struct json_value *obj, __u64 wall_ns)
{
	const struct json_value *v;
	struct tm tm = {0};
	unsigned int us;
	int n = 0;

	if (!wall_ns) {
		member(obj, "time", JSON_NULL);
		return;
	}
	v = member(obj, "time", JSON_STRING);
	FUZZ_CHECK(v->len == strlen("2026-12-03T17:06:34.123456Z") &&
		       sscanf(v->str, "%4d-%2d-%2dT%2d:%2d:%2d.%6uZ%n", &tm.tm_year, &tm.tm_mon,
			      &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &us, &n) == 7 &&
		       (size_t)n == v->len,
		   "\"time\" is \"%s\"", v->str);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	FUZZ_CHECK((__u64)timegm(&tm) * 1000000 + us == wall_ns / 1000,
		   "\"time\" is \"%s\", want %llu ns since the epoch", v->str,
		   (unsigned long long)wall_ns);
}

static const struct json_value *expect_array(const struct json_value *obj, const char *key,
					     size_t n)
{
	const struct json_value *v = member(obj, key, JSON_ARRAY);

	FUZZ_CHECK(v->nr == n, "\"%s\" has %zu items, want %zu", key, v->nr, n);
	return v;
}

/*
 * A percentile and whether it is a lower bound, as hist__percentile() says:
 * true only at the last bucket's low edge, 2^HIST_MAX_EXP ns.
 */
static __u64 expect_percentile(const struct json_value *d, const char *key, const char *bound_key,
			       const struct sparse_hist *h, double p)
{
	bool lower_bound;
	__u64 v = member_u64(d, key);

	FUZZ_CHECK(v == hist__percentile(h, p, &lower_bound), "\"%s\" is %llu", key,
		   (unsigned long long)v);
	expect_bool(d, bound_key, lower_bound);
	FUZZ_CHECK(!lower_bound || v == 1ULL << HIST_MAX_EXP, "\"%s\" %llu is a lower bound", key,
		   (unsigned long long)v);
	return v;
}

/* DIST: zeros for an empty histogram; percentiles in order and, with a max, below it. */
static void expect_dist(const struct json_value *obj, const char *key, const struct sparse_hist *h)
{
	const struct json_value *d = member(obj, key, JSON_OBJECT);
	__u64 p50, p90, p99;

	expect_u64(d, "count", h->count);
	expect_u64(d, "sum", h->count ? h->sum : 0);
	expect_u64(d, "max", h->count ? h->max : 0);
	p50 = expect_percentile(d, "p50", "p50_is_lower_bound", h, 0.50);
	p90 = expect_percentile(d, "p90", "p90_is_lower_bound", h, 0.90);
	p99 = expect_percentile(d, "p99", "p99_is_lower_bound", h, 0.99);
	FUZZ_CHECK(p50 <= p90 && p90 <= p99, "\"%s\": p50 %llu, p90 %llu, p99 %llu", key,
		   (unsigned long long)p50, (unsigned long long)p90, (unsigned long long)p99);
	FUZZ_CHECK(!h->count || !h->max || p99 <= h->max, "\"%s\": p99 %llu above max %llu", key,
		   (unsigned long long)p99, (unsigned long long)h->max);
}

/* "frames": the bytes of each frame of st, in order. */
static void expect_frames(const struct json_value *obj, const struct model_stack *st,
			  const char *what)
{
	const struct json_value *frames = expect_array(obj, "frames", (size_t)st->nr_frames);
	int k;

	for (k = 0; k < st->nr_frames; k++) {
		const char *want = st->frames[k];
		size_t n = strnlen(want, MODEL_NAME_LEN);

		FUZZ_CHECK(frames->items[k]->type == JSON_STRING && frames->items[k]->len == n &&
			       !memcmp(frames->items[k]->str, want, n),
			   "frame %d of %s does not decode to its bytes", k, what);
	}
}

/*
 * A metric the run does not see is 0 (and an empty distribution): the entry's
 * in tracepoint mode, the IPIs without --ipis, the works' with Queue PerCPU Work.
 */
/* "slow": null, or which part of a slow site's wait dominates it, as model__slow_site() says. */
static void check_slow_site(const struct json_value *o, const struct model *m,
			    const struct model_site *s)
{
	static const char *const cpu_keys[] = {"slow_cpus_more", "other_cpus",
					       "other_cpus_dispatch_p99_ns"};
	const struct json_value *v, *parts, *cpus, *c;
	struct slow_site slow;
	int p, i, shown;

	model__slow_site(m, s, &slow);
	if (!slow.slow) {
		member(o, "slow", JSON_NULL);
		return;
	}
	v = member(o, "slow", JSON_OBJECT);
	expect_keys(v, "\"slow\"", 8);
	expect_u64(v, "wait_p99_ns", slow.wait_p99_ns);
	expect_bool(v, "wait_p99_is_lower_bound", slow.wait_p99_is_lower_bound);
	if (slow.dominant == WAIT_PARTS)
		member(v, "dominant", JSON_NULL);
	else
		expect_bytes(v, "dominant", stall__part_key(slow.dominant), 16);
	parts = member(v, "parts_ns", JSON_OBJECT);
	expect_keys(parts, "\"parts_ns\"", WAIT_PARTS);
	for (p = 0; p < WAIT_PARTS; p++) {
		if (slow.measured[p])
			expect_u64(parts, stall__part_key(p), slow.part_ns[p]);
		else
			member(parts, stall__part_key(p), JSON_NULL);
	}
	if (!slow.nr_slow_cpus) {
		member(v, "slow_cpus", JSON_NULL);
		for (i = 0; i < 3; i++)
			member(v, cpu_keys[i], JSON_NULL);
		return;
	}
	cpus = member(v, "slow_cpus", JSON_ARRAY);
	shown = stall__slow_cpus_kept(&slow);
	FUZZ_CHECK(cpus->nr == (size_t)shown, "slow_cpus: not the CPUs kept");
	for (i = 0; i < shown; i++) {
		c = cpus->items[i];
		expect_keys(c, "a slow CPU", 2);
		expect_u64(c, "cpu", (__u64)slow.slow_cpus[i].cpu);
		expect_u64(c, "dispatch_p99_ns", slow.slow_cpus[i].p99_ns);
	}
	expect_u64(v, cpu_keys[0], (__u64)(slow.nr_slow_cpus - shown));
	expect_u64(v, cpu_keys[1], (__u64)slow.nr_other_cpus);
	expect_u64(v, cpu_keys[2], slow.others_p99_ns);
}

static void check_site(const struct json_value *o, const struct model *m,
		       const struct model_site *s)
{
	const struct model_info *info = &m->info;
	static const struct sparse_hist none;
	bool entry = info->entry_visible, works = !info->works_unseen;
	const struct json_value *stacks;
	int i;

	FUZZ_CHECK(o->type == JSON_OBJECT, "a site is not an object");
	expect_bytes(o, "site", s->site, sizeof(s->site));
	/* --by: a part that does not key the rows is null, cgroup_id 0 */
	expect_bytes(o, "comm", info->comm_merged ? NULL : s->comm, sizeof(s->comm));
	expect_bytes(o, "cgroup", info->by_cgroup ? s->cgroup : NULL, 4096);
	expect_u64(o, "cgroup_id", info->by_cgroup ? s->cgroup_id : 0);
	expect_container(o, info->by_cgroup ? s->cgroup : NULL, &s->pod);
	expect_u64(o, "drains", s->count[SITE_DRAINS]);
	expect_u64(o, "forced_drains", entry ? s->count[SITE_FORCED_DRAINS] : 0);
	expect_u64(o, "empty_drains", entry && works ? s->count[SITE_EMPTY_DRAINS] : 0);
	expect_u64(o, "own_only_drains",
		   info->has_local && works ? s->count[SITE_OWN_ONLY_DRAINS] : 0);
	expect_u64(o, "works", works ? s->count[SITE_WORKS] : 0);
	expect_u64(o, "self_works", works ? s->count[SITE_SELF_WORKS] : 0);
	expect_u64(o, "remote_works", works ? s->count[SITE_REMOTE_WORKS] : 0);
	expect_u64(o, "ipis", info->has_ipi && works ? s->count[SITE_IPIS] : 0);
	expect_dist(o, "dispatch_ns", works ? &s->hist[SITE_DISPATCH_NS] : &none);
	expect_dist(o, "run_ns", works ? &s->hist[SITE_RUN_NS] : &none);
	expect_dist(o, "wait_ns", &s->hist[SITE_WAIT_NS]);
	expect_dist(o, "lock_ns", entry && works ? &s->hist[SITE_LOCK_NS] : &none);
	expect_dist(o, "local_ns", info->has_local ? &s->hist[SITE_LOCAL_NS] : &none);
	expect_dist(o, "own_ns", info->has_local ? &s->hist[SITE_OWN_NS] : &none);
	expect_u64(o, "in_place", info->in_place_seen ? s->count[SITE_IN_PLACE] : 0);
	expect_dist(o, "in_place_ns", info->in_place_seen ? &s->hist[SITE_IN_PLACE_NS] : &none);
	check_slow_site(o, m, s);
	stacks = expect_array(o, "stacks", (size_t)s->nr_stacks);
	for (i = 0; i < s->nr_stacks; i++) {
		FUZZ_CHECK(stacks->items[i]->type == JSON_OBJECT, "a stack is not an object");
		expect_u64(stacks->items[i], "drains", s->stacks[i].drains);
		expect_frames(stacks->items[i], &s->stacks[i], "a site's stack");
	}
}

/* None with Queue PerCPU Work; a CPU's IPIs 0 where they are not counted. */
static void check_cpus(const struct json_value *top, const struct model *m)
{
	int nr = m->info.works_unseen ? 0 : m->nr_cpus;
	const struct json_value *cpus = expect_array(top, "cpus", (size_t)nr);
	int i;

	for (i = 0; i < nr; i++) {
		const struct json_value *o = cpus->items[i];

		FUZZ_CHECK(o->type == JSON_OBJECT, "a CPU is not an object");
		expect_u64(o, "cpu", (__u64)m->cpus[i].cpu);
		expect_u64(o, "works", m->cpus[i].count[CPU_WORKS]);
		expect_u64(o, "self_works", m->cpus[i].count[CPU_SELF_WORKS]);
		expect_u64(o, "ipis", m->info.has_ipi ? m->cpus[i].count[CPU_IPIS] : 0);
		expect_dist(o, "dispatch_ns", &m->cpus[i].hist[CPU_DISPATCH_NS]);
		expect_dist(o, "run_ns", &m->cpus[i].hist[CPU_RUN_NS]);
	}
}

/* Only the advices called, in slot order. */
static void check_fadvise(const struct json_value *top, const struct model *m)
{
	const struct json_value *arr = member(top, "fadvise", JSON_ARRAY);
	size_t n = 0;
	int i;

	for (i = 0; i < FADVISE_ADVICE_SLOTS; i++) {
		const struct model_fadvise *f = &m->fadvise[i];

		if (!f->calls)
			continue;
		FUZZ_CHECK(n < arr->nr && arr->items[n]->type == JSON_OBJECT,
			   "fadvise: \"%s\" missing", f->advice);
		expect_bytes(arr->items[n], "advice", f->advice, strlen(f->advice));
		expect_u64(arr->items[n], "calls", f->calls);
		expect_u64(arr->items[n], "escalations", f->escalations);
		expect_dist(arr->items[n], "latency_ns", &f->latency_ns);
		n++;
	}
	FUZZ_CHECK(n == arr->nr, "fadvise has %zu entries, want %zu", arr->nr, n);
}

/* The states of a drain in flight as the man page names them, by enum drain_phase. */
static const char *const phase_keys[] = {
    [PHASE_MUTEX] = "waiting_for_mutex", [PHASE_PENDING] = "works_pending",
    [PHASE_RUNNING] = "works_running",	 [PHASE_RETURNING] = "returning",
    [PHASE_NO_WORK] = "no_work_queued",	 [PHASE_IN_PLACE] = "draining_in_place",
};

/* "running": what runs on a pending work's CPU, or null where the CPU was not asked. */
static void check_running(const struct json_value *work, const struct model_running *r)
{
	const struct json_value *o;

	if (!r->known) {
		member(work, "running", JSON_NULL);
		return;
	}
	o = member(work, "running", JSON_OBJECT);
	expect_keys(o, "\"running\"", 15);
	expect_bool(o, "idle", r->idle);
	expect_bytes(o, "comm", r->comm, sizeof(r->comm));
	expect_u64(o, "pid", r->pid);
	expect_u64(o, "tid", r->tid);
	expect_bytes(o, "cgroup", r->cgroup, 4096);
	expect_u64(o, "cgroup_id", r->cgroup_id);
	expect_container(o, r->cgroup, &r->pod);
	expect_bytes(o, "policy", r->policy, strlen(r->policy));
	expect_s64(o, "priority", r->priority);
	if (r->since_known)
		expect_u64(o, "running_ns", r->running_ns);
	else
		member(o, "running_ns", JSON_NULL);
}

/* A fact of a cause: its type and value as stall__facts() gives them. */
static void check_fact(const struct json_value *facts, const struct stall_fact *f)
{
	switch (f->type) {
	case FACT_STR:
		expect_bytes(facts, f->key, f->str, 4096);
		break;
	case FACT_INT:
		expect_s64(facts, f->key, f->num);
		break;
	case FACT_BOOL:
		expect_bool(facts, f->key, f->num);
		break;
	default:
		member(facts, f->key, JSON_NULL);
	}
}

/* "cause": its key, summary, facts and remedies as stall.c has them, or null where not said. */
static void check_cause(const struct json_value *obj, const struct stall *s, bool explain)
{
	struct stall_fact facts[STALL_MAX_FACTS];
	char remedies[STALL_MAX_REMEDIES][STALL_REMEDY_LEN];
	const struct json_value *o, *v;
	int i, n;

	if (!explain) {
		member(obj, "cause", JSON_NULL);
		return;
	}
	o = member(obj, "cause", JSON_OBJECT);
	expect_keys(o, "\"cause\"", 4);
	expect_bytes(o, "key", stall__key(s->cause), 64);
	expect_bytes(o, "text", stall__summary(s->cause), 256);
	n = stall__facts(s, facts, STALL_MAX_FACTS);
	v = member(o, "facts", JSON_OBJECT);
	expect_keys(v, "a cause's facts", (size_t)n);
	for (i = 0; i < n; i++)
		check_fact(v, &facts[i]);
	n = stall__remedies(s, remedies, STALL_MAX_REMEDIES);
	v = expect_array(o, "remedies", (size_t)n);
	for (i = 0; i < n; i++) {
		FUZZ_CHECK(v->items[i]->type == JSON_STRING, "a remedy is not a string");
		FUZZ_CHECK(!strcmp(v->items[i]->str, remedies[i]), "remedy %d is \"%s\"", i,
			   v->items[i]->str);
	}
}

/* A work in flight; only a pending one has "running" and "cause" (null unless explained). */
static void check_work(const struct json_value *o, const struct model_work *w, bool explain)
{
	FUZZ_CHECK(o->type == JSON_OBJECT, "a work in flight is not an object");
	expect_keys(o, "a work in flight", w->started ? 7 : 9);
	expect_u64(o, "target_cpu", (__u64)w->target_cpu);
	expect_bytes(o, "state", w->started ? "running" : "pending", strlen("pending"));
	expect_u64(o, "age_ns", w->age_ns);
	expect_bool(o, "self", w->self);
	expect_bool(o, "isolated", w->isolated);
	expect_bool(o, "nohz_full", w->nohz_full);
	expect_bool(o, "outside_filter", w->outside_filter);
	if (!w->started) {
		check_running(o, &w->running);
		check_cause(o, &w->stall, explain);
	}
}

/*
 * An element of in_flight[] (explain: if stuck), or the "drain" of a
 * drain_in_flight event (explain: always).
 */
static void check_drain(const struct json_value *o, const struct model_drain *md, bool explain)
{
	const struct json_value *works;
	int i;

	FUZZ_CHECK(o->type == JSON_OBJECT, "a drain in flight is not an object");
	expect_keys(o, "a drain in flight", 23);
	expect_u64(o, "pid", md->pid);
	expect_u64(o, "tid", md->tid);
	expect_bytes(o, "comm", md->comm, sizeof(md->comm));
	expect_bytes(o, "cgroup", md->cgroup, 4096);
	expect_u64(o, "cgroup_id", md->cgroup_id);
	expect_container(o, md->cgroup, &md->pod);
	expect_bytes(o, "site", md->site, sizeof(md->site));
	expect_u64(o, "caller_cpu", (__u64)md->caller_cpu);
	expect_u64(o, "age_ns", md->age_ns);
	expect_bool(o, "stuck", md->stuck);
	expect_bytes(o, "state", phase_keys[md->phase], strlen(phase_keys[md->phase]));
	expect_u64(o, "works", md->works);
	expect_u64(o, "pending_works", md->pending_works);
	expect_u64(o, "in_place", md->in_place);
	if (md->in_place_cpu >= 0)
		expect_u64(o, "in_place_cpu", (__u64)md->in_place_cpu);
	else
		member(o, "in_place_cpu", JSON_NULL);
	check_cause(o, &md->stall, explain && md->phase == PHASE_MUTEX);
	expect_frames(o, &md->stack, "a drain in flight");
	works = expect_array(o, "works_in_flight", (size_t)md->nr_in_flight);
	for (i = 0; i < md->nr_in_flight; i++)
		check_work(works->items[i], &md->in_flight[i], explain);
}

/*
 * The drains in flight; mutex_waiters is null where the drain entry is not
 * seen, and with Queue PerCPU Work.
 */
static void check_in_flight(const struct json_value *top, const struct model *m)
{
	const struct json_value *drains;
	int i;

	expect_u64(top, "stuck_threshold_ns", m->info.stuck_ns);
	expect_u64(top, "drains_in_flight", (__u64)m->nr_in_flight);
	expect_u64(top, "stuck_drains", (__u64)m->nr_stuck);
	if (m->info.entry_visible && !m->info.works_unseen)
		expect_u64(top, "mutex_waiters", (__u64)m->mutex_waiters);
	else
		member(top, "mutex_waiters", JSON_NULL);
	expect_u64(top, "oldest_drain_in_flight_ns", m->oldest_in_flight_ns);
	drains = expect_array(top, "in_flight", (size_t)m->nr_in_flight);
	for (i = 0; i < m->nr_in_flight; i++)
		check_drain(drains->items[i], &m->in_flight[i], m->in_flight[i].stuck);
}

static void check_report(const struct json_value *top, const struct model *m, const char *version)
{
	const struct json_value *sites, *sees, *filters, *counters;
	int i;

	FUZZ_CHECK(top->type == JSON_OBJECT, "the report is not an object");
	expect_time(top, m->wall_ns);
	expect_bytes(top, "version", version, VERSION_LEN);
	expect_bytes(top, "mode", m->info.mode, 64);
	expect_bytes(top, "kernel", m->info.kernel, 64);
	expect_bool(top, "qpw", m->info.qpw);
	expect_bytes(top, "cannot_see", m->info.blind_spots, 64);
	expect_bool(top, "wait_is_lower_bound", m->info.wait_is_lower_bound);
	sees = member(top, "sees", JSON_OBJECT);
	expect_bool(sees, "drain_entry", m->info.entry_visible);
	expect_bool(sees, "works", !m->info.works_unseen);
	expect_bool(sees, "fadvise", m->info.has_fadvise);
	expect_bool(sees, "ipis", m->info.has_ipi);
	expect_bool(sees, "local_drains", m->info.has_local);
	expect_bool(sees, "in_place", m->info.has_in_place);
	expect_bool(top, "cumulative", m->info.cumulative);
	expect_u64(top, "span_ns", m->span_ns);
	if (m->info.filter_pid)
		expect_u64(top, "pid", m->info.filter_pid);
	else
		member(top, "pid", JSON_NULL);
	filters = member(top, "filters", JSON_OBJECT);
	expect_bytes(filters, "comm", m->info.filter_comm, 64);
	expect_bytes(filters, "cgroup", m->info.filter_cgroup, 64);
	expect_bytes(filters, "cpus", m->info.filter_cpus, 64);
	expect_u64(top, "drains", m->total[SITE_DRAINS]);
	expect_u64(top, "works", m->info.works_unseen ? 0 : m->total[SITE_WORKS]);
	expect_u64(top, "self_works", m->info.works_unseen ? 0 : m->total[SITE_SELF_WORKS]);
	expect_u64(top, "in_place", m->info.in_place_seen ? m->total[SITE_IN_PLACE] : 0);
	expect_u64(top, "local_drains", m->local_drains);
	expect_u64(top, "lost", m->lost);
	sites = expect_array(top, "sites", (size_t)m->nr_sites);
	for (i = 0; i < m->nr_sites; i++)
		check_site(sites->items[i], m, &m->sites[i]);
	check_cpus(top, m);
	check_fadvise(top, m);
	counters = member(top, "counters", JSON_OBJECT);
	FUZZ_CHECK(counters->nr == CNT_NR, "%zu counters, want %d", counters->nr, CNT_NR);
	for (i = 0; i < CNT_NR; i++)
		expect_u64(counters, model__counter_name(i), m->counters[i]);
	check_in_flight(top, m);
}

/* The output is one line: a JSON value in printable ASCII, then '\n'. Returns the value. */
static struct json_value *parse_line(const struct output *out)
{
	struct json_value *v;
	char err[256];
	size_t i;

	FUZZ_CHECK(out->len && out->text[out->len - 1] == '\n', "no '\\n' at the end");
	for (i = 0; i < out->len - 1; i++)
		FUZZ_CHECK(out->text[i] >= 0x20 && out->text[i] < 0x7f, "byte 0x%02x at %zu",
			   (unsigned char)out->text[i], i);
	v = json_check__parse(out->text, out->len - 1, err, sizeof(err));
	FUZZ_CHECK(v, "not JSON: %s: %.*s", err, (int)out->len, out->text);
	return v;
}

/* The drain_in_flight event of md, seen at wall_ns. */
static void fuzz_event(const struct model_drain *md, __u64 threshold_ns, __u64 wall_ns)
{
	struct output out;
	struct json_value *v;
	FILE *f;

	f = open_memstream(&out.text, &out.len);
	FUZZ_CHECK(f, "open_memstream");
	report_json__drain_in_flight(f, md, threshold_ns, wall_ns);
	fclose(f);
	v = parse_line(&out);
	FUZZ_CHECK(v->type == JSON_OBJECT, "the event is not an object");
	expect_keys(v, "a drain_in_flight event", 4);
	expect_bytes(v, "event", "drain_in_flight", strlen("drain_in_flight"));
	expect_time(v, wall_ns);
	expect_u64(v, "threshold_ns", threshold_ns);
	check_drain(member(v, "drain", JSON_OBJECT), md, true);
	json_check__free(v);
	free(out.text);
}

#define MAX_UFRAMES 4

#define CGROUP_MAX 300

/*
 * Random numbers, comm, user frames and cgroup (in cgroup, CGROUP_MAX + 1
 * bytes); kstack as its kernel stack. Into ev and sd.
 */
static void random_slow_drain(struct bytes *b, struct slow_drain_event *ev,
			      char (*uframes)[MODEL_UFRAME_LEN], char *cgroup,
			      const struct model_stack *kstack, struct model_slow_drain *sd)
{
	__u32 i;
	int k;

	memset(ev, 0, sizeof(*ev));
	ev->wait_ns = bytes__u64(b);
	ev->lock_ns = bytes__u64(b);
	ev->pid = (__u32)bytes__range(b, 0, 0xffffffff);
	ev->tid = (__u32)bytes__range(b, 0, 0xffffffff);
	ev->caller_cpu = (__u32)bytes__range(b, 0, DRAINSTAT_MAX_CPUS - 1);
	ev->nr_targets = (__u32)bytes__range(b, 0, SLOW_MAX_TARGETS + 2);
	for (i = 0; i < ev->nr_targets && i < SLOW_MAX_TARGETS; i++) {
		/* the caller's CPU now and then: a self work */
		ev->targets[i].cpu = bytes__bool(b)
					 ? ev->caller_cpu
					 : (__u32)bytes__range(b, 0, DRAINSTAT_MAX_CPUS - 1);
		ev->targets[i].dispatch_ns = bytes__u64(b);
		ev->targets[i].run_ns = bytes__u64(b);
		ev->targets[i].how = (__u32)bytes__range(b, SLOW_REMOTE, SLOW_IN_PLACE);
	}
	/* BPF counts them among the targets; the writer must not trust that */
	ev->nr_in_place = (__u32)bytes__range(b, 0, SLOW_MAX_TARGETS + 3);
	bytes__string(b, ev->comm, sizeof(ev->comm));
	memset(sd, 0, sizeof(*sd));
	sd->ev = ev;
	sd->wall_ns = bytes__u64(b) >> bytes__range(b, 0, 63);
	sd->kstack = *kstack;
	sd->nr_uframes = (int)bytes__range(b, 0, MAX_UFRAMES);
	for (k = 0; k < sd->nr_uframes; k++)
		bytes__string(b, uframes[k], MODEL_UFRAME_LEN);
	sd->uframes = (const char(*)[MODEL_UFRAME_LEN])uframes;
	/* last: the inputs from before the cgroup keep their event */
	ev->cgroup_id = bytes__u64(b);
	if (bytes__bool(b)) {
		bytes__string(b, cgroup, 1 + bytes__range(b, 0, CGROUP_MAX));
		sd->cgroup = cgroup;
	}
}

/* A slow_drain event: kstack (any drain's frames) and the rest drawn from b. */
static void fuzz_slow_drain(struct bytes *b, const struct model_stack *kstack)
{
	char uframes[MAX_UFRAMES][MODEL_UFRAME_LEN], cgroup[CGROUP_MAX + 1];
	const struct json_value *arr, *t;
	struct slow_drain_event ev;
	struct model_slow_drain sd;
	struct output out;
	struct json_value *v;
	__u32 i;
	int k;
	FILE *f;

	random_slow_drain(b, &ev, uframes, cgroup, kstack, &sd);
	f = open_memstream(&out.text, &out.len);
	FUZZ_CHECK(f, "open_memstream");
	report_json__slow_drain(f, &sd);
	fclose(f);
	v = parse_line(&out);
	FUZZ_CHECK(v->type == JSON_OBJECT, "the event is not an object");
	expect_keys(v, "a slow_drain event", 21);
	expect_bytes(v, "event", "slow_drain", strlen("slow_drain"));
	expect_time(v, sd.wall_ns);
	expect_u64(v, "pid", ev.pid);
	expect_u64(v, "tid", ev.tid);
	expect_bytes(v, "comm", ev.comm, sizeof(ev.comm));
	expect_bytes(v, "cgroup", sd.cgroup, 4096);
	expect_u64(v, "cgroup_id", ev.cgroup_id);
	expect_container(v, sd.cgroup, &sd.pod);
	expect_u64(v, "caller_cpu", ev.caller_cpu);
	expect_u64(v, "wait_ns", ev.wait_ns);
	expect_u64(v, "lock_ns", ev.lock_ns);
	expect_u64(v, "works", ev.nr_targets > ev.nr_in_place ? ev.nr_targets - ev.nr_in_place : 0);
	expect_u64(v, "in_place", ev.nr_targets > ev.nr_in_place ? ev.nr_in_place : ev.nr_targets);
	arr = expect_array(v, "targets",
			   ev.nr_targets < SLOW_MAX_TARGETS ? ev.nr_targets : SLOW_MAX_TARGETS);
	for (i = 0; i < arr->nr; i++) {
		t = arr->items[i];
		FUZZ_CHECK(t->type == JSON_OBJECT, "a target is not an object");
		expect_keys(t, "a target", 5);
		expect_u64(t, "cpu", ev.targets[i].cpu);
		expect_u64(t, "dispatch_ns", ev.targets[i].dispatch_ns);
		expect_u64(t, "run_ns", ev.targets[i].run_ns);
		expect_bool(t, "self", ev.targets[i].how == SLOW_SELF);
		expect_bool(t, "in_place", ev.targets[i].how == SLOW_IN_PLACE);
	}
	expect_frames(v, kstack, "a slow drain");
	arr = expect_array(v, "user_frames", (size_t)sd.nr_uframes);
	for (k = 0; k < sd.nr_uframes; k++) {
		size_t n = strnlen(uframes[k], MODEL_UFRAME_LEN);

		FUZZ_CHECK(arr->items[k]->type == JSON_STRING && arr->items[k]->len == n &&
			       !memcmp(arr->items[k]->str, uframes[k], n),
			   "user frame %d does not decode to its bytes", k);
	}
	json_check__free(v);
	free(out.text);
}

static void fuzz_report(struct bytes *b)
{
	static const struct model_stack no_stack;
	char version[VERSION_LEN];
	struct random_model rm;
	struct output out;
	struct json_value *v;
	FILE *f;
	int i;

	bytes__string(b, version, sizeof(version));
	FUZZ_CHECK(!random_model__fill(&rm, b, false), "out of memory");
	f = open_memstream(&out.text, &out.len);
	FUZZ_CHECK(f, "open_memstream");
	report_json__print(f, &rm.m, version);
	fclose(f);
	v = parse_line(&out);
	check_report(v, &rm.m, version);
	json_check__free(v);
	free(out.text);
	for (i = 0; i < rm.m.nr_in_flight; i++)
		fuzz_event(&rm.m.in_flight[i], rm.m.info.stuck_ns, rm.m.wall_ns);
	/* drawn after the model: older inputs still give the same one */
	fuzz_slow_drain(b, rm.m.nr_in_flight ? &rm.m.in_flight[0].stack : &no_stack);
	random_model__free(&rm);
}

/* Any bytes, no NUL at the end: a JSON string of the bytes before the first NUL. */
static void fuzz_string(const __u8 *data, size_t size)
{
	char *s = malloc(size ? size : 1); /* exactly the bytes: ASan sees any overread */
	struct output out;
	struct json_value *v;
	char err[256];
	size_t n;
	FILE *f;

	FUZZ_CHECK(s, "out of memory");
	memcpy(s, data, size);
	f = open_memstream(&out.text, &out.len);
	FUZZ_CHECK(f, "open_memstream");
	report_json__string(f, s, size);
	fclose(f);
	v = json_check__parse(out.text, out.len, err, sizeof(err));
	FUZZ_CHECK(v && v->type == JSON_STRING, "not a JSON string: %s", err);
	n = strnlen(s, size);
	FUZZ_CHECK(v->len == n && !memcmp(v->str, s, n), "\"%s\" does not decode to its bytes",
		   out.text);
	json_check__free(v);
	free(out.text);
	free(s);
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	struct bytes b = {data, size};

	if (bytes__u8(&b) & 1)
		fuzz_string(b.p, b.left);
	else
		fuzz_report(&b);
	return 0;
}
