// SPDX-License-Identifier: GPL-2.0
/*
 * The causes of a stall: the table, the classification, and what each says:
 * its facts in prose and as JSON's typed values, and its remedies.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "stall.h"
#include "units.h"

/* The groups of facts a cause rests on, in the order they are told. */
enum {
	FACTS_CPU = 1U << 0,	   /* the CPU and how long its work is pending */
	FACTS_TASK = 1U << 1,	   /* the task that runs there */
	FACTS_RT = 1U << 2,	   /* RT throttling and the fair server */
	FACTS_PREEMPT = 1U << 3,   /* the kernel's preemption model */
	FACTS_ISOLATION = 1U << 4, /* isolated, nohz_full */
	FACTS_ONLINE = 1U << 5,	   /* online or not */
	FACTS_HOLDER = 1U << 6,	   /* the drain mutex's holder, and its waiters */
};

static const struct stall_desc {
	const char *key;
	const char *summary;
	unsigned int facts;
} causes[STALL_CAUSES] = {
    [STALL_UNKNOWN] = {"unknown", "no known cause fits",
		       FACTS_CPU | FACTS_TASK | FACTS_ONLINE | FACTS_RT | FACTS_PREEMPT |
			   FACTS_ISOLATION},
    [STALL_RT_TASK] = {"rt_task", "a real-time task holds the CPU",
		       FACTS_CPU | FACTS_TASK | FACTS_RT | FACTS_ISOLATION},
    [STALL_NORMAL_TASK] = {"normal_task",
			   "a normal task has run long past a slice: the kworker starves",
			   FACTS_CPU | FACTS_TASK | FACTS_PREEMPT | FACTS_ISOLATION},
    [STALL_BUSY_POOL] = {"busy_pool", "another kworker runs: a CPU-bound work item holds the pool",
			 FACTS_CPU | FACTS_TASK | FACTS_ISOLATION},
    [STALL_POOL_STALLED] = {"pool_stalled",
			    "the CPU is idle, yet no worker picks the work (a workqueue lockup)",
			    FACTS_CPU | FACTS_ONLINE | FACTS_ISOLATION},
    [STALL_CPU_OFFLINE] = {"cpu_offline", "the CPU is offline", FACTS_CPU | FACTS_ONLINE},
    [STALL_SOFTIRQ] = {"softirq", "ksoftirqd runs: a long softirq section holds the CPU",
		       FACTS_CPU | FACTS_TASK | FACTS_ISOLATION},
    [STALL_MUTEX] = {"mutex", "waits for the drain mutex", FACTS_HOLDER},
};

const char *stall__key(enum stall_cause c)
{
	return c < STALL_CAUSES ? causes[c].key : causes[STALL_UNKNOWN].key;
}

const char *stall__summary(enum stall_cause c)
{
	return c < STALL_CAUSES ? causes[c].summary : causes[STALL_UNKNOWN].summary;
}

static bool is_rt(const char *policy)
{
	return policy &&
	       (!strcmp(policy, "FIFO") || !strcmp(policy, "RR") || !strcmp(policy, "DEADLINE"));
}

/* The policies of the fair class (and of sched_ext), whose tasks take turns by slice. */
static bool is_normal(const char *policy)
{
	static const char *const fair[] = {"OTHER", "BATCH", "IDLE", "EXT"};
	size_t i;

	for (i = 0; policy && i < sizeof(fair) / sizeof(fair[0]); i++)
		if (!strcmp(policy, fair[i]))
			return true;
	return false;
}

/* A kernel thread named ksoftirqd/N: a user task can take the name, not the kthread flag. */
static bool is_ksoftirqd(const struct stall_facts *f)
{
	return f->kthread && !strncmp(f->comm, "ksoftirqd/", 10);
}

enum stall_cause stall__classify(const struct stall_facts *f)
{
	if (f->mutex_waiter)
		return STALL_MUTEX;
	if (f->online == STALL_NO)
		return STALL_CPU_OFFLINE;
	if (!f->running_known)
		return STALL_UNKNOWN;
	if (f->idle)
		return STALL_POOL_STALLED;
	if (is_ksoftirqd(f))
		return STALL_SOFTIRQ;
	if (f->worker)
		return STALL_BUSY_POOL;
	if (is_rt(f->policy))
		return STALL_RT_TASK;
	if (is_normal(f->policy) && f->since_known && f->running_ns >= STALL_LONG_RUN_NS)
		return STALL_NORMAL_TASK;
	return STALL_UNKNOWN;
}

void stall__explain(const struct stall_facts *f, struct stall *s)
{
	s->facts = *f;
	s->facts.comm[DRAINSTAT_COMM_LEN - 1] = '\0';
	s->facts.holder.comm[DRAINSTAT_COMM_LEN - 1] = '\0';
	s->facts.preempt[STALL_PREEMPT_LEN - 1] = '\0';
	s->facts.move_to[STALL_CPULIST_LEN - 1] = '\0';
	s->cause = stall__classify(f);
}

const char *stall__policy(const char *policy, __s32 priority, char *buf, size_t size)
{
	if (!strcmp(policy, "FIFO") || !strcmp(policy, "RR"))
		snprintf(buf, size, "%s %d", policy, priority);
	else if (strcmp(policy, "DEADLINE"))
		snprintf(buf, size, "%s nice %d", policy, priority);
	else
		snprintf(buf, size, "%s", policy);
	return buf;
}

/* Text appended to a bounded buffer, cut where it is full. */
struct text {
	char *buf;
	size_t size;
	size_t len;
};

static void __attribute__((format(printf, 2, 3))) add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len + 1 >= t->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len = t->len + (size_t)n < t->size ? t->len + (size_t)n : t->size - 1;
}

/* "; " between the groups of facts */
static void sep(struct text *t)
{
	if (t->len)
		add(t, "; ");
}

static void text_task(struct text *t, const struct stall_facts *f)
{
	char comm[ESCAPE_SIZE(DRAINSTAT_COMM_LEN)], d[UNITS_DURATION_LEN], policy[32];

	sep(t);
	if (!f->running_known) {
		add(t, "what runs there was not read");
		return;
	}
	if (f->idle) {
		add(t, "its idle task runs");
		return;
	}
	add(t, "%s pid %u tid %u", escape__text(f->comm, DRAINSTAT_COMM_LEN, comm, sizeof(comm)),
	    f->pid, f->tid);
	if (f->policy)
		add(t, ", %s", stall__policy(f->policy, f->priority, policy, sizeof(policy)));
	if (f->since_known)
		add(t, ", has run %s without a break",
		    units__duration(f->running_ns, d, sizeof(d)));
	else
		add(t, ", for how long not known");
}

static void text_rt(struct text *t, const struct stall_facts *f)
{
	static const char *const fair[] = {
	    [FAIR_NOT_KNOWN] = "its fair server not known (debugfs not mounted or not readable)",
	    [FAIR_NONE] = "no fair server (a kernel before 6.12)",
	    [FAIR_ON] = "its fair server on",
	    [FAIR_OFF] = "its fair server off (runtime 0)",
	};

	sep(t);
	if (f->rt_throttling == STALL_NOT_KNOWN)
		add(t, "RT throttling not known");
	else
		add(t, "RT throttling %s (kernel.sched_rt_runtime_us = %lld)",
		    f->rt_throttling == STALL_NO ? "off" : "on", (long long)f->rt_runtime_us);
	add(t, "; %s", fair[f->fair_server <= FAIR_OFF ? f->fair_server : FAIR_NOT_KNOWN]);
}

static void text_preempt(struct text *t, const struct stall_facts *f)
{
	char shown[ESCAPE_SIZE(STALL_PREEMPT_LEN)];

	sep(t);
	if (!f->preempt[0])
		add(t, "preemption model not known");
	else
		add(t, "preemption model %s",
		    escape__text(f->preempt, STALL_PREEMPT_LEN, shown, sizeof(shown)));
}

static void text_holder(struct text *t, const struct stall_facts *f)
{
	const struct stall_holder *h = &f->holder;
	char comm[ESCAPE_SIZE(DRAINSTAT_COMM_LEN)], d[UNITS_DURATION_LEN];

	sep(t);
	if (h->known)
		add(t, "held by %s pid %u tid %u, in flight %s (%s)",
		    escape__text(h->comm, DRAINSTAT_COMM_LEN, comm, sizeof(comm)), h->pid, h->tid,
		    units__duration(h->age_ns, d, sizeof(d)), h->state_name ? h->state_name : "?");
	else
		add(t, "its holder is not among the drains in flight");
	add(t, "; %d wait%s", f->mutex_waiters, f->mutex_waiters == 1 ? "s" : "");
}

/*
 * "CPU 3 offline", "CPU 3 isolated, nohz_full": what is known of the CPU
 * beyond the line above the cause's (its pending time); nothing if nothing.
 */
static void text_cpu(struct text *t, const struct stall_facts *f, unsigned int facts)
{
	bool online = (facts & FACTS_ONLINE) && f->online != STALL_YES;
	bool isolation = (facts & FACTS_ISOLATION) && (f->isolated || f->nohz_full);

	if (!online && !isolation)
		return;
	sep(t);
	add(t, "CPU %d", f->cpu);
	if (online)
		add(t, " %s", f->online == STALL_NO ? "offline" : "online or not: not known");
	if (isolation)
		add(t, "%s%s%s%s", online ? "," : "", f->isolated ? " isolated" : "",
		    f->isolated && f->nohz_full ? "," : "", f->nohz_full ? " nohz_full" : "");
}

void stall__facts_text(const struct stall *s, char *buf, size_t size)
{
	const struct stall_facts *f = &s->facts;
	unsigned int facts = causes[s->cause < STALL_CAUSES ? s->cause : STALL_UNKNOWN].facts;
	struct text t = {.buf = buf, .size = size};

	if (size)
		buf[0] = '\0';
	if (facts & FACTS_TASK)
		text_task(&t, f);
	if (facts & FACTS_RT)
		text_rt(&t, f);
	if (facts & FACTS_PREEMPT)
		text_preempt(&t, f);
	if (facts & FACTS_HOLDER)
		text_holder(&t, f);
	if (facts & FACTS_CPU)
		text_cpu(&t, f, facts);
}

static void fact_int(struct stall_fact *f, const char *key, __s64 v)
{
	*f = (struct stall_fact){.key = key, .type = FACT_INT, .num = v};
}

static void fact_str(struct stall_fact *f, const char *key, const char *s)
{
	*f = (struct stall_fact){.key = key, .type = s ? FACT_STR : FACT_NULL, .str = s};
}

static void fact_bool(struct stall_fact *f, const char *key, enum stall_bool b)
{
	*f = (struct stall_fact){
	    .key = key, .type = b ? FACT_BOOL : FACT_NULL, .num = b == STALL_YES};
}

static void fact_null(struct stall_fact *f, const char *key)
{
	*f = (struct stall_fact){.key = key, .type = FACT_NULL};
}

static enum stall_bool known(bool v)
{
	return v ? STALL_YES : STALL_NO;
}

/* The task's facts into out (9 of them), null where what runs was not read. */
static int facts_task(const struct stall_facts *f, struct stall_fact *out)
{
	enum stall_bool k = f->running_known ? STALL_NO : STALL_NOT_KNOWN;

	fact_bool(&out[0], "idle", f->running_known ? known(f->idle) : STALL_NOT_KNOWN);
	fact_str(&out[1], "comm", f->running_known ? f->comm : NULL);
	fact_int(&out[2], "pid", f->pid);
	fact_int(&out[3], "tid", f->tid);
	fact_str(&out[4], "policy", f->running_known ? f->policy : NULL);
	fact_int(&out[5], "priority", f->priority);
	fact_int(&out[6], "running_ns", (__s64)f->running_ns);
	fact_bool(&out[7], "kthread", f->kthread ? STALL_YES : k);
	fact_bool(&out[8], "kworker", f->worker ? STALL_YES : k);
	if (!f->running_known) {
		fact_null(&out[2], "pid");
		fact_null(&out[3], "tid");
		fact_null(&out[5], "priority");
	}
	if (!f->running_known || !f->since_known)
		fact_null(&out[6], "running_ns");
	return 9;
}

static int facts_rt(const struct stall_facts *f, struct stall_fact *out)
{
	static const char *const fair[] = {
	    [FAIR_NONE] = "none", [FAIR_ON] = "on", [FAIR_OFF] = "off"};
	enum stall_fair fs = f->fair_server <= FAIR_OFF ? f->fair_server : FAIR_NOT_KNOWN;

	fact_str(&out[0], "rt_throttling",
		 f->rt_throttling == STALL_NOT_KNOWN ? NULL
		 : f->rt_throttling == STALL_NO	     ? "off"
						     : "on");
	fact_int(&out[1], "rt_runtime_us", f->rt_runtime_us);
	if (f->rt_throttling == STALL_NOT_KNOWN)
		fact_null(&out[1], "rt_runtime_us");
	fact_str(&out[2], "fair_server", fair[fs]);
	return 3;
}

static int facts_holder(const struct stall_facts *f, struct stall_fact *out)
{
	const struct stall_holder *h = &f->holder;

	fact_str(&out[0], "holder_comm", h->known ? h->comm : NULL);
	fact_int(&out[1], "holder_pid", h->pid);
	fact_int(&out[2], "holder_tid", h->tid);
	fact_int(&out[3], "holder_age_ns", (__s64)h->age_ns);
	fact_str(&out[4], "holder_state", h->known ? h->state_key : NULL);
	if (!h->known) {
		fact_null(&out[1], "holder_pid");
		fact_null(&out[2], "holder_tid");
		fact_null(&out[3], "holder_age_ns");
	}
	fact_int(&out[5], "mutex_waiters", f->mutex_waiters);
	return 6;
}

int stall__facts(const struct stall *s, struct stall_fact *out, int max)
{
	const struct stall_facts *f = &s->facts;
	unsigned int facts = causes[s->cause < STALL_CAUSES ? s->cause : STALL_UNKNOWN].facts;
	struct stall_fact all[STALL_MAX_FACTS];
	int n = 0;

	if (facts & FACTS_CPU) {
		fact_int(&all[n++], "cpu", f->cpu);
		fact_int(&all[n++], "pending_ns", (__s64)f->pending_ns);
	}
	if (facts & FACTS_ONLINE)
		fact_bool(&all[n++], "online", f->online);
	if (facts & FACTS_ISOLATION) {
		fact_bool(&all[n++], "isolated", known(f->isolated));
		fact_bool(&all[n++], "nohz_full", known(f->nohz_full));
	}
	if (facts & FACTS_TASK)
		n += facts_task(f, &all[n]);
	if (facts & FACTS_RT)
		n += facts_rt(f, &all[n]);
	if (facts & FACTS_PREEMPT)
		fact_str(&all[n++], "preempt", f->preempt[0] ? f->preempt : NULL);
	if (facts & FACTS_HOLDER)
		n += facts_holder(f, &all[n]);
	if (n > max)
		n = max;
	memcpy(out, all, (size_t)n * sizeof(*out));
	return n;
}

/*
 * The remedies, each for a cause, where its condition holds (NULL: always);
 * "{cpu}" and "{pid}" stand for the CPU and the task that runs there.
 */
static bool rt_throttling_off(const struct stall_facts *f)
{
	return f->rt_throttling == STALL_NO;
}

static bool fair_server_off(const struct stall_facts *f)
{
	return f->fair_server == FAIR_OFF;
}

/* none or voluntary: a long kernel section runs on until it yields */
static bool not_preemptible(const struct stall_facts *f)
{
	return !strcmp(f->preempt, "none") || !strcmp(f->preempt, "voluntary");
}

static bool no_holder(const struct stall_facts *f)
{
	return !f->holder.known;
}

static const struct stall_remedy {
	enum stall_cause cause;
	bool (*applies)(const struct stall_facts *f);
	const char *text;
} remedies[] = {
    {STALL_RT_TASK, rt_throttling_off,
     "re-enable RT throttling: sysctl kernel.sched_rt_runtime_us=950000"},
    {STALL_RT_TASK, fair_server_off,
     "re-enable the fair server: write its runtime (50000000 by default) to "
     "/sys/kernel/debug/sched/fair_server/cpu{cpu}/runtime"},
    {STALL_RT_TASK, NULL,
     "move the task off CPU {cpu}: taskset -pc {move_to} {pid}, or its cpuset"},
    {STALL_RT_TASK, NULL,
     "keep drain sources off CPU {cpu}'s users: a CPU with no pages batched gets no work"},
    {STALL_NORMAL_TASK, not_preemptible,
     "a preemptible kernel ends long kernel sections sooner: preempt=full (or lazy)"},
    {STALL_NORMAL_TASK, NULL,
     "find the long section: cat /proc/{pid}/stack, or perf record -C {cpu}"},
    {STALL_NORMAL_TASK, NULL,
     "lower the task's weight (renice, its cgroup's cpu.weight) or move it off CPU {cpu} "
     "(taskset -pc {move_to} {pid}, or its cpuset)"},
    {STALL_NORMAL_TASK, NULL,
     "keep drain sources off CPU {cpu}'s users: a CPU with no pages batched gets no work"},
    {STALL_BUSY_POOL, NULL,
     "find the work item that holds the pool: cat /proc/{pid}/stack, or the "
     "workqueue:workqueue_execute_start tracepoint on CPU {cpu}"},
    {STALL_BUSY_POOL, NULL,
     "a work item that runs for long should yield (cond_resched()) or be queued on an "
     "unbound or WQ_CPU_INTENSIVE workqueue: report it to its subsystem"},
    {STALL_POOL_STALLED, NULL,
     "look for the workqueue watchdog's 'BUG: workqueue lockup' and its pool dump in the "
     "kernel log (dmesg)"},
    {STALL_POOL_STALLED, NULL,
     "dump the pools: echo t > /proc/sysrq-trigger, or the kernel's "
     "tools/workqueue/wq_dump.py; a pool that stalls idle is a kernel bug to report"},
    {STALL_CPU_OFFLINE, NULL,
     "bring the CPU back (echo 1 > /sys/devices/system/cpu/cpu{cpu}/online) or let its "
     "hotplug finish: the work runs then"},
    {STALL_SOFTIRQ, NULL, "see which softirq: /proc/softirqs, or perf record -C {cpu}"},
    {STALL_SOFTIRQ, NULL,
     "spread the interrupts off CPU {cpu}: IRQ affinity (/proc/irq/*/smp_affinity), RPS"},
    {STALL_MUTEX, NULL,
     "the holder's stall is this one's cause: remedy the holder's (see its pending CPUs)"},
    {STALL_MUTEX, no_holder,
     "the holder is a drain drainstat did not see begin: cat /proc/PID/stack of the tasks "
     "in lru_add_drain_all"},
    {STALL_MUTEX, NULL, "fewer concurrent callers: each waits for all the others"},
    {STALL_UNKNOWN, NULL,
     "look at CPU {cpu}: its runqueue in /sys/kernel/debug/sched/debug and its worker pool "
     "(the kernel's tools/workqueue/wq_dump.py)"},
};

/* text with {cpu}, {pid} and {move_to} (or CPUS where not known) replaced, into buf */
static void expand(const char *text, const struct stall_facts *f, char *buf, size_t size)
{
	struct text t = {.buf = buf, .size = size};
	const char *p;

	buf[0] = '\0';
	for (p = text; *p; p++) {
		if (!strncmp(p, "{cpu}", 5)) {
			add(&t, "%d", f->cpu);
			p += 4;
		} else if (!strncmp(p, "{pid}", 5)) {
			add(&t, "%u", f->pid);
			p += 4;
		} else if (!strncmp(p, "{move_to}", 9)) {
			add(&t, "%s", f->move_to[0] ? f->move_to : "CPUS");
			p += 8;
		} else {
			add(&t, "%c", *p);
		}
	}
}

int stall__remedies(const struct stall *s, char (*out)[STALL_REMEDY_LEN], int max)
{
	size_t i;
	int n = 0;

	for (i = 0; i < sizeof(remedies) / sizeof(remedies[0]) && n < max; i++) {
		const struct stall_remedy *r = &remedies[i];

		if (r->cause != s->cause || (r->applies && !r->applies(&s->facts)))
			continue;
		expand(r->text, &s->facts, out[n++], STALL_REMEDY_LEN);
	}
	return n;
}

static const struct {
	const char *key;
	const char *text;
} parts[WAIT_PARTS] = {
    [PART_OWN] = {"own", "its own local drain of the caller's CPU dominates"},
    [PART_LOCK] = {"lock", "the wait for the drain mutex dominates: other callers' drains hold it"},
    [PART_DISPATCH] = {"dispatch", "dispatch dominates: the target CPUs are slow to start the "
				   "works (see the victim CPUs' DISPATCH)"},
    [PART_RUN] = {"run", "run dominates: the works are slow to run on the target CPUs"},
};

const char *stall__part_key(enum wait_part p)
{
	return p < WAIT_PARTS ? parts[p].key : NULL;
}

const char *stall__part_text(enum wait_part p)
{
	return p < WAIT_PARTS ? parts[p].text
			      : "no part this mode measures has a share of its wait";
}

static __u64 at_most(__u64 v, __u64 max)
{
	return v < max ? v : max;
}

void stall__slow_site(__u64 wait_p99, __u64 wait_sum, const __u64 *part_sum, struct slow_site *out)
{
	__u64 works, d = part_sum[PART_DISPATCH], r = part_sum[PART_RUN];
	int p;

	out->wait_p99_ns = wait_p99;
	out->wait_ns = wait_sum;
	out->dominant = PART_OWN;
	out->part_ns[PART_DISPATCH] = out->part_ns[PART_RUN] = 0;
	out->slow = wait_p99 >= STALL_SLOW_SITE_NS;
	out->part_ns[PART_OWN] = at_most(part_sum[PART_OWN], wait_sum);
	out->part_ns[PART_LOCK] = at_most(part_sum[PART_LOCK], wait_sum - out->part_ns[PART_OWN]);
	works = wait_sum - out->part_ns[PART_OWN] - out->part_ns[PART_LOCK];
	/* the works run in parallel: their sums weigh dispatch against run, not the wait */
	if (d || r) {
		/* rounding may not take it past the works' share: run would wrap */
		out->part_ns[PART_DISPATCH] = at_most(
		    (__u64)((long double)works * d / ((long double)d + (long double)r)), works);
		out->part_ns[PART_RUN] = works - out->part_ns[PART_DISPATCH];
	}
	for (p = 0; p < WAIT_PARTS; p++)
		if (out->part_ns[p] > out->part_ns[out->dominant])
			out->dominant = (enum wait_part)p;
	if (!out->part_ns[out->dominant])
		out->dominant = WAIT_PARTS;
}

int stall__slow_cpus_kept(const struct slow_site *s)
{
	return s->nr_slow_cpus < STALL_SLOW_CPUS ? s->nr_slow_cpus : STALL_SLOW_CPUS;
}

/* Slower first; by CPU number where equal. */
static bool before(const struct cpu_dispatch *a, const struct cpu_dispatch *b)
{
	return a->p99_ns != b->p99_ns ? a->p99_ns > b->p99_ns : a->cpu < b->cpu;
}

void stall__slow_cpus(const struct cpu_dispatch *cpus, int n, struct slow_site *out)
{
	__u64 slowest = 0;
	int i, k;

	out->nr_slow_cpus = out->nr_other_cpus = 0;
	out->others_p99_ns = 0;
	for (i = 0; i < n; i++)
		if (cpus[i].p99_ns > slowest)
			slowest = cpus[i].p99_ns;
	for (i = 0; i < n; i++) {
		if (cpus[i].p99_ns < slowest - slowest / 2) {
			out->nr_other_cpus++;
			if (cpus[i].p99_ns > out->others_p99_ns)
				out->others_p99_ns = cpus[i].p99_ns;
			continue;
		}
		/* an insertion into the kept few, slowest first */
		k = stall__slow_cpus_kept(out);
		for (; k > 0 && before(&cpus[i], &out->slow_cpus[k - 1]); k--)
			if (k < STALL_SLOW_CPUS)
				out->slow_cpus[k] = out->slow_cpus[k - 1];
		if (k < STALL_SLOW_CPUS)
			out->slow_cpus[k] = cpus[i];
		out->nr_slow_cpus++;
	}
}

/*
 * "...: the works are slow to start on CPU 3 (dispatch p99 40ms); at most
 * 90us on the 3 other CPUs", "on CPU 3 (40ms), CPU 1 (35ms) and 2 more", or
 * "on all 4 CPUs alike (dispatch p99 up to 2ms)".
 */
const char *stall__slow_text(const struct slow_site *s, char *buf, size_t size)
{
	struct text t = {.buf = buf, .size = size};
	char d[UNITS_DURATION_LEN];
	int i, shown;

	buf[0] = '\0';
	if (s->dominant != PART_DISPATCH || !s->nr_slow_cpus) {
		add(&t, "%s", stall__part_text(s->dominant));
		return buf;
	}
	add(&t, "dispatch dominates: the works are slow to start ");
	if (!s->nr_other_cpus && s->nr_slow_cpus > 1) {
		add(&t, "on all %d CPUs alike (dispatch p99 up to %s)", s->nr_slow_cpus,
		    units__duration(s->slow_cpus[0].p99_ns, d, sizeof(d)));
		return buf;
	}
	shown = stall__slow_cpus_kept(s);
	for (i = 0; i < shown; i++)
		add(&t, "%sCPU %d (%s%s)", i ? ", " : "on ", s->slow_cpus[i].cpu,
		    i ? "" : "dispatch p99 ",
		    units__duration(s->slow_cpus[i].p99_ns, d, sizeof(d)));
	if (s->nr_slow_cpus > shown)
		add(&t, " and %d more", s->nr_slow_cpus - shown);
	if (s->nr_other_cpus)
		add(&t, "; at most %s on the %d other CPU%s",
		    units__duration(s->others_p99_ns, d, sizeof(d)), s->nr_other_cpus,
		    s->nr_other_cpus > 1 ? "s" : "");
	else
		add(&t, ", the one CPU with works");
	return buf;
}
