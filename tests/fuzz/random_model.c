// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "random_model.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_SITES     48
#define MAX_STACKS    3
#define MAX_CPUS      40 /* above 16: the text sums up the rest */
#define MAX_IN_FLIGHT 4	 /* drains */
#define MAX_WORKS     3	 /* works in flight of a drain */

/* Names that rows share often, so that writers merge them; "other" is what prom folds into. */
static const char *const common_names[] = {
    "generic_fadvise", "other", "[unknown]", "0xffffffff815bb4e5", "compact_zone+0x1f0", "",
};

/* As src/model.c names them, in slot order. */
static const char *const advice_names[FADVISE_ADVICE_SLOTS] = {
    "normal", "random", "sequential", "willneed", "dontneed", "noreuse", "other",
};

/*
 * cgroup paths rows share often: the root, units, a pod's containers (one
 * stable prefix, its UID one container__parse() takes, so that
 * --prom-cgroup=pod labels it), one gone; others are raw bytes, "/" and
 * "…"-long ones among them.
 */
static const char *const common_cgroups[] = {
    "/",
    "/system.slice/drainwork.service",
    "/system.slice/drainwork.service/sub",
    "/kubepods.slice/kubepods-pod1c2d3e4f_5a6b_4c7d_8e9f_0a1b2c3d4e5f.slice/cri-containerd-"
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
    "/kubepods.slice/kubepods-pod1c2d3e4f_5a6b_4c7d_8e9f_0a1b2c3d4e5f.slice/cri-containerd-"
    "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210.scope",
    "cgroup:12345",
    "other",
};

static const char *const modes[] = {"full", "kprobe", "tracepoint"};
static const char *const blind_spots[] = {"drain entry or exit", "IPIs"};

/* Below 2^40, spread over every magnitude: 3 bytes. */
static __u64 random_count(struct bytes *b)
{
	__u8 shift = bytes__u8(b) % 25;

	return bytes__range(b, 0, 0xffff) << shift;
}

/* A common name half the time, else raw bytes (NUL-terminated, as snprintf() leaves them). */
static void random_name(struct bytes *b, char *buf, size_t size)
{
	__u8 pick = bytes__u8(b);

	if (pick & 0x80)
		bytes__string(b, buf, size);
	else
		snprintf(buf, size, "%s", common_names[pick % ARRAY_SIZE(common_names)]);
}

/* Sets bucket bk of a kernel-layout histogram to n, and its bit as the BPF side does. */
static void dense_set(struct hist *h, __u32 bk, __u64 n)
{
	h->bucket[bk] = n;
	h->nonzero[bk / 64] |= 1ULL << (bk % 64);
}

/*
 * Random fields, as hist__delta() may leave them: count, sum and buckets
 * disagree. The buckets are set in a kernel-layout histogram and read as user
 * space reads one (a bucket may be 0 with its bit set: taken back to zero).
 */
static int random_raw_hist(struct bytes *b, struct arena *a, struct sparse_hist *h)
{
	int i, n = (int)bytes__range(b, 0, 3);
	struct hist dense = {};
	__u64 count;

	for (i = 0; i < n; i++) {
		count = random_count(b);
		dense_set(&dense, (__u32)bytes__range(b, 0, HIST_BUCKETS - 1), count);
	}
	if (hist__read(&dense, a, h))
		return -ENOMEM;
	h->count = random_count(b);
	h->sum = random_count(b) << 16;
	h->max = random_count(b);
	return 0;
}

/* A few values, each recorded some times, as the BPF side records them; into a. */
static int random_hist(struct bytes *b, struct arena *a, struct sparse_hist *h)
{
	int i, n = (int)bytes__range(b, 0, 7);
	struct hist dense = {};
	__u64 v, times;
	__u32 bk;

	if (n == 7)
		return random_raw_hist(b, a, h);
	for (i = 0; i < n; i++) {
		v = bytes__u64(b) >> bytes__range(b, 24, 63);
		times = bytes__range(b, 1, 0xfff);
		bk = hist_bucket(v);
		dense_set(&dense, bk, dense.bucket[bk] + times);
		dense.count += times;
		dense.sum += v * times;
		dense.max = v > dense.max ? v : dense.max;
	}
	return hist__read(&dense, a, h) ? -ENOMEM : 0;
}

/* 0..DRAINSTAT_MAX_STACK_DEPTH frames into a, as symbolize() leaves them. */
static int random_frames(struct bytes *b, struct arena *a, struct model_stack *st)
{
	char(*frames)[MODEL_NAME_LEN];
	int k;

	st->nr_frames = (int)bytes__range(b, 0, DRAINSTAT_MAX_STACK_DEPTH);
	frames = arena__alloc(a, (size_t)st->nr_frames * sizeof(*frames) + 1);
	if (!frames)
		return -ENOMEM;
	for (k = 0; k < st->nr_frames; k++)
		random_name(b, frames[k], sizeof(frames[k]));
	st->frames = (const char(*)[MODEL_NAME_LEN])frames;
	return 0;
}

static int random_stacks(struct bytes *b, struct arena *a, struct model_site *s)
{
	int i;

	s->nr_stacks = (int)bytes__range(b, 0, MAX_STACKS);
	s->stacks = calloc((size_t)s->nr_stacks + 1, sizeof(*s->stacks));
	if (!s->stacks)
		return -ENOMEM;
	for (i = 0; i < s->nr_stacks; i++) {
		struct model_stack *st = &s->stacks[i];

		st->drains = random_count(b);
		if (random_frames(b, a, st))
			return -ENOMEM;
	}
	return 0;
}

static int random_site(struct bytes *b, struct model *m, struct model_site *s)
{
	struct arena *a = &m->arena;
	int k;

	random_name(b, s->site, sizeof(s->site));
	bytes__string(b, s->comm, sizeof(s->comm));
	s->count[SITE_DRAINS] = random_count(b);
	s->count[SITE_FORCED_DRAINS] =
	    s->count[SITE_DRAINS] ? random_count(b) % (s->count[SITE_DRAINS] + 1) : 0;
	s->count[SITE_EMPTY_DRAINS] =
	    s->count[SITE_DRAINS] ? random_count(b) % (s->count[SITE_DRAINS] + 1) : 0;
	s->count[SITE_WORKS] = random_count(b);
	s->count[SITE_SELF_WORKS] = random_count(b) % (s->count[SITE_WORKS] + 1);
	s->count[SITE_REMOTE_WORKS] = s->count[SITE_WORKS] - s->count[SITE_SELF_WORKS];
	s->count[SITE_IPIS] = random_count(b);
	s->count[SITE_IN_PLACE] = m->info.has_in_place ? random_count(b) : 0;
	if (random_hist(b, a, &s->hist[SITE_DISPATCH_NS]) ||
	    random_hist(b, a, &s->hist[SITE_RUN_NS]) || random_hist(b, a, &s->hist[SITE_WAIT_NS]) ||
	    random_hist(b, a, &s->hist[SITE_LOCK_NS]) ||
	    random_hist(b, a, &s->hist[SITE_LOCAL_NS]) ||
	    (s->count[SITE_IN_PLACE] && random_hist(b, a, &s->hist[SITE_IN_PLACE_NS])))
		return -ENOMEM;
	for (k = 0; k < SITE_COUNTS; k++)
		m->total[k] += s->count[k];
	m->local_drains += s->hist[SITE_LOCAL_NS].count;
	return random_stacks(b, a, s);
}

/* Ascending CPU numbers below DRAINSTAT_MAX_CPUS, each with works. */
static int random_cpus(struct bytes *b, struct model *m)
{
	int i, n = (int)bytes__range(b, 0, MAX_CPUS), cpu = -1;

	m->cpus = calloc((size_t)n + 1, sizeof(*m->cpus));
	if (!m->cpus)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct model_cpu *c = &m->cpus[i];

		cpu += 1 + (int)bytes__range(b, 0, 127);
		if (cpu >= DRAINSTAT_MAX_CPUS)
			break;
		c->cpu = cpu;
		c->count[CPU_WORKS] = 1 + random_count(b);
		c->count[CPU_SELF_WORKS] = random_count(b) % (c->count[CPU_WORKS] + 1);
		c->count[CPU_IPIS] = random_count(b);
		if (random_hist(b, &m->arena, &c->hist[CPU_DISPATCH_NS]) ||
		    random_hist(b, &m->arena, &c->hist[CPU_RUN_NS]))
			return -ENOMEM;
		m->nr_cpus++;
	}
	return 0;
}

static int random_fadvise(struct bytes *b, struct model *m)
{
	int i;

	for (i = 0; i < FADVISE_ADVICE_SLOTS; i++) {
		struct model_fadvise *f = &m->fadvise[i];

		f->advice = advice_names[i];
		if (!bytes__bool(b))
			continue;
		f->calls = random_count(b);
		f->escalations = random_count(b) % (f->calls + 1);
		if (random_hist(b, &m->arena, &f->latency_ns))
			return -ENOMEM;
	}
	return 0;
}

static void random_counters(struct bytes *b, struct model *m)
{
	int i;

	for (i = 0; i < CNT_NR; i++) {
		m->counters[i] = bytes__bool(b) ? random_count(b) : 0;
		if (model__counter_is_loss(i))
			m->lost += m->counters[i];
	}
}

/* A random string, or NULL when it may be one. */
static const char *random_string(struct bytes *b, char *buf, size_t size, bool may_be_null)
{
	if (may_be_null && bytes__bool(b))
		return NULL;
	bytes__string(b, buf, size);
	return buf;
}

static void random_info(struct bytes *b, struct random_model *rm, bool plain_info)
{
	struct model_info *info = &rm->m.info;
	__u8 flags = bytes__u8(b);

	info->wait_is_lower_bound = flags & 1;
	info->entry_visible = flags & 2;
	info->has_fadvise = flags & 4;
	info->has_ipi = flags & 8;
	info->has_local = flags & 16;
	info->cumulative = flags & 32;
	info->qpw = flags & 128;
	/* drains in place are seen where the entry and the local drains' hooks are */
	info->has_in_place = info->entry_visible && info->has_local;
	info->works_unseen = info->qpw && !info->has_in_place;
	info->filter_pid = flags & 64 ? (__u32)bytes__range(b, 1, 4194304) : 0;
	/* -c and --cgroup are the user's: any bytes */
	info->filter_comm = random_string(b, rm->filter_comm, sizeof(rm->filter_comm), true);
	info->filter_cgroup = random_string(b, rm->filter_cgroup, sizeof(rm->filter_cgroup), true);
	info->filter_cpus = bytes__bool(b) ? "0,2-3" : NULL;
	if (plain_info) {
		info->mode = modes[bytes__u8(b) % ARRAY_SIZE(modes)];
		info->kernel = "6.1.0-13-amd64";
		info->blind_spots = flags & 128 ? blind_spots[bytes__bool(b)] : NULL;
		return;
	}
	info->mode = random_string(b, rm->mode, sizeof(rm->mode), false);
	info->kernel = random_string(b, rm->kernel, sizeof(rm->kernel), false);
	info->blind_spots = random_string(b, rm->blind_spots, sizeof(rm->blind_spots), true);
}

/* As src/model_inflight.c names them: the policies below 8, and what it shows for others. */
static const char *const policies[] = {
    "OTHER", "FIFO", "RR", "BATCH", "ISO", "IDLE", "DEADLINE", "EXT", "?",
};

/* Any __u64, spread over every magnitude: 9 bytes. */
static __u64 random_ns(struct bytes *b)
{
	__u64 v = bytes__u64(b);

	return v >> bytes__range(b, 0, 63);
}

/* What runs on a pending work's CPU; all zero when unknown, as model_work() leaves it. */
static void random_running(struct bytes *b, struct model_running *r)
{
	__u8 flags = bytes__u8(b);

	r->known = flags & 1;
	if (!r->known)
		return;
	r->idle = flags & 2;
	r->since_known = flags & 4;
	r->kthread = flags & 8;
	r->worker = flags & 16;
	r->tid = (__u32)bytes__range(b, 0, 0xffffffff);
	r->pid = (__u32)bytes__range(b, 0, 0xffffffff);
	bytes__string(b, r->comm, sizeof(r->comm));
	r->policy = policies[bytes__u8(b) % ARRAY_SIZE(policies)];
	r->priority = (__s32)(__u32)bytes__range(b, 0, 0xffffffff);
	r->running_ns = random_ns(b);
}

/*
 * 0..MAX_WORKS works, in m's arena as drain_works() leaves them:
 * pending first, self when on the caller's CPU, running only for pending ones.
 */
static int random_works_in_flight(struct bytes *b, struct model *m, struct model_drain *md)
{
	struct model_work drawn[MAX_WORKS] = {};
	int i, pass, n = (int)bytes__range(b, 0, MAX_WORKS);

	for (i = 0; i < n; i++) {
		struct model_work *w = &drawn[i];
		__u8 flags = bytes__u8(b);

		w->started = flags & 1;
		/* the caller's CPU a quarter of the time, else any, which may be it too */
		w->target_cpu = flags & 2 && flags & 4
				    ? md->caller_cpu
				    : (int)bytes__range(b, 0, DRAINSTAT_MAX_CPUS - 1);
		w->self = w->target_cpu == md->caller_cpu;
		w->isolated = flags & 8;
		w->nohz_full = flags & 16;
		w->age_ns = random_ns(b);
		if (!w->started)
			random_running(b, &w->running);
	}
	md->in_flight = arena__alloc(&m->arena, (size_t)n * sizeof(*md->in_flight) + 1);
	if (!md->in_flight)
		return -ENOMEM;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			if (drawn[i].started != (pass == 1))
				continue;
			md->in_flight[md->nr_in_flight++] = drawn[i];
			md->pending_works += pass == 0;
		}
	}
	return 0;
}

static int random_drain(struct bytes *b, struct model *m, struct model_drain *md)
{
	__u8 age_pick;

	md->id_ns = bytes__u64(b);
	md->tid = (__u32)bytes__range(b, 0, 0xffffffff);
	md->pid = (__u32)bytes__range(b, 0, 0xffffffff);
	md->caller_cpu = (int)bytes__range(b, 0, DRAINSTAT_MAX_CPUS - 1);
	bytes__string(b, md->comm, sizeof(md->comm));
	random_name(b, md->site, sizeof(md->site));
	if (random_frames(b, &m->arena, &md->stack))
		return -ENOMEM;
	/* at the threshold, just below it, or anything */
	age_pick = bytes__u8(b) % 4;
	md->age_ns = age_pick == 0   ? m->info.stuck_ns
		     : age_pick == 1 ? m->info.stuck_ns - 1
				     : random_ns(b);
	md->stuck = md->age_ns >= m->info.stuck_ns;
	md->phase = (enum drain_phase)bytes__range(b, PHASE_MUTEX, PHASE_IN_PLACE);
	md->in_place = md->phase == PHASE_IN_PLACE ? (__u32)bytes__range(b, 0, 0xffffffff) : 0;
	md->in_place_cpu = md->phase == PHASE_IN_PLACE && bytes__bool(b)
			       ? (int)bytes__range(b, 0, DRAINSTAT_MAX_CPUS - 1)
			       : -1;
	if (random_works_in_flight(b, m, md))
		return -ENOMEM;
	/* queued so far: at least those still in flight */
	md->works = (__u32)bytes__range(b, (__u64)md->nr_in_flight, 0xffffffff);
	return 0;
}

/*
 * What the kernel said of the system (stall_read.c): each fact known or not,
 * any preemption model's bytes, CPUs online and fair servers off in the first
 * 64 and the last 64 of the CPUs.
 */
static void random_system(struct bytes *b, struct stall_system *sys)
{
	__u8 flags = bytes__u8(b);
	int last = DRAINSTAT_MAX_CPUS / 64 - 1;

	sys->rt_runtime_known = flags & 1;
	sys->rt_runtime_us = (__s64)bytes__u64(b);
	if (flags & 2)
		bytes__string(b, sys->preempt, sizeof(sys->preempt));
	sys->online_known = flags & 4;
	sys->online[0] = bytes__u64(b);
	sys->online[last] = bytes__u64(b);
	sys->fair_dir = (enum stall_fair)bytes__range(b, FAIR_NOT_KNOWN, FAIR_OFF);
	sys->fair_read[0] = bytes__u64(b);
	sys->fair_read[last] = bytes__u64(b);
	sys->fair_off[0] = bytes__u64(b);
	sys->fair_off[last] = bytes__u64(b);
}

/* The causes of the pending works of m's drains, as model_build_in_flight() finds them. */
static void random_causes(struct bytes *b, struct model *m)
{
	struct stall_system *sys = calloc(1, sizeof(*sys));
	int i, k;

	if (!sys)
		return;
	random_system(b, sys);
	for (i = 0; i < m->nr_in_flight; i++)
		for (k = 0; k < m->in_flight[i].nr_in_flight; k++)
			if (!m->in_flight[i].in_flight[k].started)
				model__explain_work(&m->in_flight[i].in_flight[k], sys, NULL);
	free(sys);
}

/* The drains in flight, and what model_build_in_flight() derives from them. */
static int random_in_flight(struct bytes *b, struct model *m)
{
	int i, n;

	m->info.stuck_ns = random_ns(b);
	m->info.stuck_ns += !m->info.stuck_ns;
	n = (int)bytes__range(b, 0, MAX_IN_FLIGHT);
	m->in_flight = calloc((size_t)n + 1, sizeof(*m->in_flight));
	if (!m->in_flight)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (random_drain(b, m, &m->in_flight[m->nr_in_flight++]))
			return -ENOMEM;
	random_causes(b, m);
	model__sum_in_flight(m);
	return 0;
}

/*
 * A cgroup and its id: a common path half the time, else up to 300 raw bytes,
 * in the arena; a common one's pod named by a bit of the same byte (the
 * longest names /var/log/pods may give among them).
 */
static int random_cgroup(struct bytes *b, struct arena *a, const char **cgroup, __u64 *id,
			 struct model_pod *pod)
{
	static const char long_name[] =
	    "a123456789.123456789.123456789.123456789.123456789.123456789.123456789."
	    "123456789.123456789.123456789.123456789.123456789.123456789.123456789."
	    "123456789.123456789.123456789.123456789.123456789.123456789.123456789."
	    "123456789.123456789.123456789.123";
	__u8 pick = bytes__u8(b);
	char *path;

	*id = bytes__u64(b);
	if (!(pick & 0x80)) {
		*cgroup = common_cgroups[pick % ARRAY_SIZE(common_cgroups)];
		if (pick & 0x40) {
			pod->name = pick & 0x20 ? long_name : "web-0";
			pod->namespace = "kube-system";
		}
		return 0;
	}
	path = arena__alloc(a, 301);
	if (!path)
		return -ENOMEM;
	bytes__string(b, path, 1 + bytes__range(b, 0, 300));
	*cgroup = path;
	return 0;
}

/*
 * The cgroups of the drains in flight and of what runs on their pending CPUs,
 * each named or not (no cgroup v2: none is), drawn after everything else.
 */
static int random_in_flight_cgroups(struct bytes *b, struct model *m)
{
	int i, k;

	for (i = 0; i < m->nr_in_flight; i++) {
		struct model_drain *md = &m->in_flight[i];

		if (bytes__bool(b) &&
		    random_cgroup(b, &m->arena, &md->cgroup, &md->cgroup_id, &md->pod))
			return -ENOMEM;
		for (k = 0; k < md->nr_in_flight; k++) {
			struct model_running *r = &md->in_flight[k].running;

			if (r->known && bytes__bool(b) &&
			    random_cgroup(b, &m->arena, &r->cgroup, &r->cgroup_id, &r->pod))
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * --by, drawn last of all (the inputs from before it keep comm alone): the
 * cgroup key with every row's cgroup, and the comm left out or not.
 */
static int random_key(struct bytes *b, struct model *m)
{
	__u8 flags = bytes__u8(b);
	int i;

	m->info.by_cgroup = flags & 1;
	m->info.comm_merged = m->info.by_cgroup && (flags & 2);
	for (i = 0; m->info.by_cgroup && i < m->nr_sites; i++)
		if (random_cgroup(b, &m->arena, &m->sites[i].cgroup, &m->sites[i].cgroup_id,
				  &m->sites[i].pod))
			return -ENOMEM;
	return 0;
}

int random_model__fill(struct random_model *rm, struct bytes *b, bool plain_info)
{
	struct model *m = &rm->m;
	int i, n, err = 0;

	memset(rm, 0, sizeof(*rm));
	random_info(b, rm, plain_info);
	m->span_ns = bytes__u64(b) >> bytes__range(b, 0, 63);
	n = (int)bytes__range(b, 0, MAX_SITES);
	m->sites = calloc((size_t)n + 1, sizeof(*m->sites));
	if (!m->sites)
		return -ENOMEM;
	for (i = 0; i < n && !err; i++, m->nr_sites++)
		err = random_site(b, m, &m->sites[i]);
	/* as model__build() says it */
	m->info.in_place_seen = m->info.has_in_place && m->total[SITE_IN_PLACE];
	if (!err)
		err = random_cpus(b, m);
	if (!err)
		err = random_fadvise(b, m);
	random_counters(b, m);
	/* last: the inputs from before drains in flight still give the same model before them */
	if (!err)
		err = random_in_flight(b, m);
	/* later still: 0 (unknown) in the inputs from before it */
	m->wall_ns = bytes__u64(b) >> bytes__range(b, 0, 63);
	if (!err)
		err = random_key(b, m);
	if (!err)
		err = random_in_flight_cgroups(b, m);
	return err;
}

void random_model__free(struct random_model *rm)
{
	model__free(&rm->m);
}
