// SPDX-License-Identifier: GPL-2.0
/*
 * The causes of a stall: each from a facts struct as the model fills it (no
 * kernel), with its facts in prose and as JSON's values and its remedies;
 * unknown where none fits; and the reader of the kernel's facts on a made-up
 * system under a temporary root.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "model.h"
#include "stall.h"

#define MS 1000000ULL

/* A FIFO spinner on CPU 3 for 12 s, RT throttling off, its fair server off, CPU 3 isolated. */
static struct stall_facts spinner(void)
{
	struct stall_facts f = {.cpu = 3,
				.pending_ns = 11800 * MS,
				.running_known = true,
				.since_known = true,
				.pid = 812,
				.tid = 820,
				.policy = "FIFO",
				.priority = 50,
				.running_ns = 12000 * MS,
				.online = STALL_YES,
				.isolated = true,
				.nohz_full = true,
				.fair_server = FAIR_OFF,
				.rt_throttling = STALL_NO,
				.rt_runtime_us = -1};

	memcpy(f.comm, "sd-spin", 8);
	snprintf(f.preempt, sizeof(f.preempt), "voluntary");
	return f;
}

static struct stall explain(const struct stall_facts *f)
{
	struct stall s;

	stall__explain(f, &s);
	return s;
}

/* Whether one of s's remedies holds needle. */
static bool has_remedy(const struct stall *s, const char *needle)
{
	char r[STALL_MAX_REMEDIES][STALL_REMEDY_LEN];
	int i, n = stall__remedies(s, r, STALL_MAX_REMEDIES);

	for (i = 0; i < n; i++)
		if (strstr(r[i], needle))
			return true;
	return false;
}

static const struct stall_fact *fact(const struct stall *s, const char *key, struct stall_fact *all)
{
	int i, n = stall__facts(s, all, STALL_MAX_FACTS);

	for (i = 0; i < n; i++)
		if (!strcmp(all[i].key, key))
			return &all[i];
	return NULL;
}

static void test_rt_task(void)
{
	struct stall_facts f = spinner();
	struct stall s = explain(&f);
	struct stall_fact all[STALL_MAX_FACTS];
	char text[STALL_TEXT_LEN];

	CHECK(s.cause == STALL_RT_TASK);
	CHECK_STR(stall__key(s.cause), "rt_task");
	stall__facts_text(&s, text, sizeof(text));
	CHECK_STR(text, "sd-spin pid 812 tid 820, FIFO 50, has run 12s without a break; RT "
			"throttling off (kernel.sched_rt_runtime_us = -1); its fair server off "
			"(runtime 0); CPU 3 isolated, nohz_full");
	CHECK(has_remedy(&s, "sched_rt_runtime_us=950000"));
	CHECK(has_remedy(&s, "fair_server/cpu3/runtime"));
	CHECK(has_remedy(&s, "taskset -pc CPUS 812"));
	CHECK(fact(&s, "rt_runtime_us", all) && fact(&s, "rt_runtime_us", all)->num == -1);
	CHECK(fact(&s, "fair_server", all) && !strcmp(fact(&s, "fair_server", all)->str, "off"));
	CHECK(fact(&s, "preempt", all) == NULL);
	/* throttling on, the fair server not known: neither remedy, "not known" said */
	f.rt_throttling = STALL_YES;
	f.rt_runtime_us = 950000;
	f.fair_server = FAIR_NOT_KNOWN;
	s = explain(&f);
	CHECK(!has_remedy(&s, "950000") && !has_remedy(&s, "fair_server"));
	stall__facts_text(&s, text, sizeof(text));
	CHECK(strstr(text, "fair server not known (debugfs") != NULL);
	CHECK(fact(&s, "fair_server", all)->type == FACT_NULL);
	f.policy = "DEADLINE";
	CHECK(stall__classify(&f) == STALL_RT_TASK);
	f.policy = "RR";
	CHECK(stall__classify(&f) == STALL_RT_TASK);
}

static void test_normal_task(void)
{
	struct stall_facts f = spinner();
	struct stall s;
	char text[STALL_TEXT_LEN];

	f.policy = "OTHER";
	f.priority = 0;
	f.isolated = f.nohz_full = false;
	s = explain(&f);
	CHECK(s.cause == STALL_NORMAL_TASK);
	stall__facts_text(&s, text, sizeof(text));
	CHECK_STR(text, "sd-spin pid 812 tid 820, OTHER nice 0, has run 12s without a break; "
			"preemption model voluntary");
	CHECK(has_remedy(&s, "preempt=full"));
	CHECK(has_remedy(&s, "/proc/812/stack"));
	snprintf(f.preempt, sizeof(f.preempt), "full");
	s = explain(&f);
	CHECK(!has_remedy(&s, "preempt=full"));
	/* switched in within a slice's reach: not known to hold the CPU */
	f.running_ns = STALL_LONG_RUN_NS - 1;
	CHECK(stall__classify(&f) == STALL_UNKNOWN);
	f.running_ns = STALL_LONG_RUN_NS;
	f.policy = "BATCH";
	CHECK(stall__classify(&f) == STALL_NORMAL_TASK);
	f.since_known = false;
	CHECK(stall__classify(&f) == STALL_UNKNOWN);
}

static void test_kernel_threads(void)
{
	struct stall_facts f = spinner();
	struct stall s;
	char text[STALL_TEXT_LEN];

	memcpy(f.comm, "kworker/3:1", 12);
	f.kthread = f.worker = true;
	f.policy = "OTHER";
	s = explain(&f);
	CHECK(s.cause == STALL_BUSY_POOL);
	stall__facts_text(&s, text, sizeof(text));
	CHECK(!strncmp(text, "kworker/3:1 pid 812", 19));
	CHECK(has_remedy(&s, "workqueue_execute_start"));
	f.worker = false;
	memcpy(f.comm, "ksoftirqd/3", 12);
	CHECK(stall__classify(&f) == STALL_SOFTIRQ);
	/* a user task may take the name, not the kernel thread's flag */
	f.kthread = false;
	CHECK(stall__classify(&f) == STALL_NORMAL_TASK);
	f.policy = "FIFO";
	CHECK(stall__classify(&f) == STALL_RT_TASK);
}

static void test_cpu_states(void)
{
	struct stall_facts f = spinner();
	struct stall s;
	char text[STALL_TEXT_LEN];

	f.idle = true;
	s = explain(&f);
	CHECK(s.cause == STALL_POOL_STALLED);
	CHECK(has_remedy(&s, "workqueue lockup"));
	f.online = STALL_NO;
	s = explain(&f);
	CHECK(s.cause == STALL_CPU_OFFLINE);
	stall__facts_text(&s, text, sizeof(text));
	CHECK_STR(text, "CPU 3 offline");
	CHECK(has_remedy(&s, "cpu3/online"));
	/* offline comes first: what ran there last was read before */
	f.idle = false;
	CHECK(stall__classify(&f) == STALL_CPU_OFFLINE);
}

static void test_mutex(void)
{
	struct stall_facts f = {.cpu = -1, .pending_ns = 7900 * MS, .mutex_waiter = true};
	struct stall_fact all[STALL_MAX_FACTS];
	struct stall s;
	char text[STALL_TEXT_LEN];

	f.mutex_waiters = 2;
	f.holder = (struct stall_holder){.known = true,
					 .pid = 812,
					 .tid = 815,
					 .age_ns = 11800 * MS,
					 .state_key = "works_pending",
					 .state_name = "works pending"};
	memcpy(f.holder.comm, "sd-dropper", 11);
	s = explain(&f);
	CHECK(s.cause == STALL_MUTEX);
	stall__facts_text(&s, text, sizeof(text));
	CHECK_STR(text,
		  "held by sd-dropper pid 812 tid 815, in flight 12s (works pending); 2 wait");
	CHECK(fact(&s, "holder_state", &all[0]) &&
	      !strcmp(fact(&s, "holder_state", all)->str, "works_pending"));
	CHECK(!has_remedy(&s, "did not see"));
	f.holder.known = false;
	s = explain(&f);
	stall__facts_text(&s, text, sizeof(text));
	CHECK(strstr(text, "not among the drains in flight") != NULL);
	CHECK(has_remedy(&s, "did not see"));
	CHECK(fact(&s, "holder_pid", all)->type == FACT_NULL);
}

/* None fits: what was read is said, not known where it was not. */
static void test_unknown(void)
{
	struct stall_facts f = {.cpu = 5, .pending_ns = 2000 * MS};
	struct stall_fact all[STALL_MAX_FACTS];
	struct stall s = explain(&f);
	char text[STALL_TEXT_LEN];

	CHECK(s.cause == STALL_UNKNOWN);
	CHECK_STR(stall__key(s.cause), "unknown");
	stall__facts_text(&s, text, sizeof(text));
	CHECK_STR(text, "what runs there was not read; RT throttling not known; its fair server "
			"not known (debugfs not mounted or not readable); preemption model not "
			"known; CPU 5 online or not: not known");
	CHECK(fact(&s, "comm", all)->type == FACT_NULL);
	CHECK(fact(&s, "online", all)->type == FACT_NULL);
	CHECK(has_remedy(&s, "CPU 5"));
	/* a cause out of range reads as unknown */
	CHECK_STR(stall__key(STALL_CAUSES), "unknown");
}

/* Every cause has a key, a summary and at least one remedy; the keys differ. */
static void test_table(void)
{
	struct stall s = {0};
	char r[STALL_MAX_REMEDIES][STALL_REMEDY_LEN];
	int c, d;

	for (c = 0; c < STALL_CAUSES; c++) {
		s.cause = (enum stall_cause)c;
		CHECK(stall__key(c)[0] && stall__summary(c)[0]);
		CHECK(stall__remedies(&s, r, STALL_MAX_REMEDIES) >= 1);
		for (d = 0; d < c; d++)
			CHECK(strcmp(stall__key(c), stall__key(d)));
	}
}

/* Slow but not stuck: the parts of a site's wait, the works' share split as their sums are. */
static void test_slow_site(void)
{
	__u64 parts[WAIT_PARTS] = {
	    [PART_OWN] = 10, [PART_LOCK] = 60, [PART_DISPATCH] = 20, [PART_RUN] = 20};
	struct slow_site s = {0};

	stall__slow_site(STALL_SLOW_SITE_NS, 100, parts, &s);
	CHECK(s.slow && s.dominant == PART_LOCK);
	CHECK(s.part_ns[PART_OWN] == 10 && s.part_ns[PART_LOCK] == 60);
	CHECK(s.part_ns[PART_DISPATCH] == 15 && s.part_ns[PART_RUN] == 15);
	CHECK_STR(stall__part_key(s.dominant), "lock");
	/* a dispatch 9 times the run takes 90% of the works' share */
	parts[PART_LOCK] = 0;
	parts[PART_DISPATCH] = 900;
	parts[PART_RUN] = 100;
	stall__slow_site(STALL_SLOW_SITE_NS - 1, 100, parts, &s);
	CHECK(!s.slow && s.dominant == PART_DISPATCH && s.part_ns[PART_DISPATCH] == 81);
	/* parts past the wait (other intervals' samples) are cut to it, never past */
	parts[PART_OWN] = 200;
	stall__slow_site(STALL_SLOW_SITE_NS, 100, parts, &s);
	CHECK(s.part_ns[PART_OWN] == 100 && s.part_ns[PART_LOCK] == 0);
	CHECK(s.part_ns[PART_DISPATCH] == 0 && s.part_ns[PART_RUN] == 0 && s.dominant == PART_OWN);
	/* no works measured (Queue PerCPU Work): their share is nobody's; sums near 2^64 */
	memset(parts, 0, sizeof(parts));
	parts[PART_LOCK] = 30;
	stall__slow_site(STALL_SLOW_SITE_NS, 100, parts, &s);
	CHECK(s.dominant == PART_LOCK && !s.part_ns[PART_DISPATCH] && !s.part_ns[PART_RUN]);
	parts[PART_DISPATCH] = parts[PART_RUN] = ~0ULL;
	stall__slow_site(STALL_SLOW_SITE_NS, ~0ULL, parts, &s);
	CHECK(s.part_ns[PART_DISPATCH] + s.part_ns[PART_RUN] == ~0ULL - 30);
	/* no part has a share: none dominates */
	memset(parts, 0, sizeof(parts));
	stall__slow_site(STALL_SLOW_SITE_NS, 100, parts, &s);
	CHECK(s.slow && s.dominant == WAIT_PARTS && !stall__part_key(s.dominant));
	CHECK(strstr(stall__part_text(s.dominant), "no part this mode measures"));
}

/*
 * Dispatch dominates: the CPUs slow to start the works are those at half the
 * slowest's dispatch p99 or more, the slowest first; the others' slowest told.
 */
static void test_slow_cpus(void)
{
	struct cpu_dispatch one[] = {{0, 80000}, {1, 45000000}, {2, 60000}, {3, 70000}};
	struct cpu_dispatch two[] = {{0, 30000000}, {1, 100000}, {2, 45000000}};
	struct cpu_dispatch alike[] = {{0, 2000000}, {1, 1500000}, {2, 3000000}};
	struct cpu_dispatch many[6] = {{0, 10}, {1, 12}, {2, 11}, {3, 12}, {4, 10}, {5, 2}};
	struct slow_site s = {.slow = true, .dominant = PART_DISPATCH};
	char text[STALL_SLOW_TEXT_LEN];

	stall__slow_cpus(one, 4, &s);
	CHECK(s.nr_slow_cpus == 1 && s.slow_cpus[0].cpu == 1 && s.slow_cpus[0].p99_ns == 45000000);
	CHECK(s.nr_other_cpus == 3 && s.others_p99_ns == 80000);
	CHECK_STR(stall__slow_text(&s, text, sizeof(text)),
		  "dispatch dominates: the works are slow to start on CPU 1 (dispatch p99 45ms); "
		  "at most 80us on the 3 other CPUs");
	stall__slow_cpus(two, 3, &s);
	CHECK(s.nr_slow_cpus == 2 && s.slow_cpus[0].cpu == 2 && s.slow_cpus[1].cpu == 0);
	CHECK_STR(stall__slow_text(&s, text, sizeof(text)),
		  "dispatch dominates: the works are slow to start on CPU 2 (dispatch p99 45ms), "
		  "CPU 0 (30ms); at most 100us on the 1 other CPU");
	stall__slow_cpus(alike, 3, &s);
	CHECK(s.nr_slow_cpus == 3 && !s.nr_other_cpus && s.slow_cpus[0].cpu == 2);
	CHECK_STR(stall__slow_text(&s, text, sizeof(text)),
		  "dispatch dominates: the works are slow to start on all 3 CPUs alike "
		  "(dispatch p99 up to 3.0ms)");
	/* five at half the slowest or more: the first four kept, slowest first, ties by CPU */
	stall__slow_cpus(many, 6, &s);
	CHECK(s.nr_slow_cpus == 5 && s.nr_other_cpus == 1 && s.others_p99_ns == 2);
	CHECK(s.slow_cpus[0].cpu == 1 && s.slow_cpus[1].cpu == 3 && s.slow_cpus[2].cpu == 2 &&
	      s.slow_cpus[3].cpu == 0);
	CHECK(strstr(stall__slow_text(&s, text, sizeof(text)),
		     "CPU 0 (10ns) and 1 more; at most 2ns on the 1 other CPU"));
	stall__slow_cpus(one + 1, 1, &s);
	CHECK_STR(stall__slow_text(&s, text, sizeof(text)),
		  "dispatch dominates: the works are slow to start on CPU 1 (dispatch p99 45ms), "
		  "the one CPU with works");
	/* no CPU read, or another part dominates: what the part means */
	stall__slow_cpus(one, 0, &s);
	CHECK(!s.nr_slow_cpus && !s.nr_other_cpus);
	CHECK_STR(stall__slow_text(&s, text, sizeof(text)), stall__part_text(PART_DISPATCH));
	stall__slow_cpus(one, 4, &s);
	s.dominant = PART_LOCK;
	CHECK_STR(stall__slow_text(&s, text, sizeof(text)), stall__part_text(PART_LOCK));
}

/*
 * A remedy that moves the task names where to: the online CPUs other than its
 * own, not isolated; CPUS where that is not known, none, or too long a list.
 */
static void test_move_to(void)
{
	struct stall_system sys = {
	    .rt_runtime_known = true, .rt_runtime_us = -1, .online_known = true};
	__u64 isolated[DRAINSTAT_MAX_CPUS / 64] = {0};
	struct model_work w = {.target_cpu = 3};
	int c;

	w.running = (struct model_running){.known = true,
					   .since_known = true,
					   .pid = 812,
					   .tid = 820,
					   .policy = "FIFO",
					   .priority = 50};
	sys.online[0] = 0xff;
	isolated[0] = 1 << 3 | 1 << 5;
	model__explain_work(&w, &sys, isolated);
	CHECK(w.stall.cause == STALL_RT_TASK);
	CHECK(has_remedy(&w.stall,
			 "move the task off CPU 3: taskset -pc 0-2,4,6-7 812, or its cpuset"));
	model__explain_work(&w, &sys, NULL);
	CHECK(has_remedy(&w.stall, "taskset -pc 0-2,4-7 812,"));
	/* the one CPU online, every other isolated, the CPUs not known */
	sys.online[0] = 1 << 3;
	model__explain_work(&w, &sys, isolated);
	CHECK(has_remedy(&w.stall, "taskset -pc CPUS 812,"));
	sys.online[0] = 0xff;
	isolated[0] = 0xf7;
	model__explain_work(&w, &sys, isolated);
	CHECK(has_remedy(&w.stall, "taskset -pc CPUS 812,"));
	sys.online_known = false;
	model__explain_work(&w, &sys, NULL);
	CHECK(has_remedy(&w.stall, "taskset -pc CPUS 812,"));
	/* every other CPU of 512 online: a list past the line's room */
	sys.online_known = true;
	memset(isolated, 0, sizeof(isolated));
	for (c = 0; c < 512 && c < DRAINSTAT_MAX_CPUS; c += 2)
		sys.online[c / 64] |= 1ULL << (c % 64);
	model__explain_work(&w, &sys, isolated);
	CHECK(has_remedy(&w.stall, "taskset -pc CPUS 812,"));
}

static void put(const char *root, const char *path, const char *text)
{
	char full[512], *slash;
	int fd;

	snprintf(full, sizeof(full), "%s%s", root, path);
	for (slash = strchr(full + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(full, 0755);
		*slash = '/';
	}
	fd = open(full, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

/* A 6.12 system under a temporary root: throttling off, CPU 3 offline, CPU 2's fair server off. */
static void test_read_system(void)
{
	char root[] = "/tmp/drainstat-stall.XXXXXX", cmd[64];
	__u64 cpus[DRAINSTAT_MAX_CPUS / 64] = {0x6};
	struct stall_system sys;

	CHECK(mkdtemp(root) != NULL);
	stall__read_system(root, cpus, &sys);
	CHECK(!sys.rt_runtime_known && !sys.online_known && sys.fair_dir == FAIR_NOT_KNOWN);
	put(root, "/proc/sys/kernel/sched_rt_runtime_us", "-1\n");
	put(root, "/sys/devices/system/cpu/online", "0-2\n");
	put(root, "/sys/kernel/debug/sched/preempt", "none (voluntary) full lazy\n");
	stall__read_system(root, cpus, &sys);
	CHECK(sys.fair_dir == FAIR_NONE && !sys.fair_read[0]);
	put(root, "/sys/kernel/debug/sched/fair_server/cpu1/runtime", "50000000\n");
	put(root, "/sys/kernel/debug/sched/fair_server/cpu2/runtime", "0\n");
	stall__read_system(root, cpus, &sys);
	CHECK(sys.rt_runtime_known && sys.rt_runtime_us == -1);
	CHECK(sys.online_known && sys.online[0] == 0x7);
	CHECK_STR(sys.preempt, "voluntary");
	CHECK(sys.fair_dir == FAIR_ON && sys.fair_read[0] == 0x6 && sys.fair_off[0] == 0x4);
	/* a number with junk after it is not a number */
	put(root, "/proc/sys/kernel/sched_rt_runtime_us", "95x\n");
	stall__read_system(root, cpus, &sys);
	CHECK(!sys.rt_runtime_known);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	int failed = 0;

	RUN(test_rt_task);
	RUN(test_normal_task);
	RUN(test_kernel_threads);
	RUN(test_cpu_states);
	RUN(test_mutex);
	RUN(test_unknown);
	RUN(test_table);
	RUN(test_slow_site);
	RUN(test_slow_cpus);
	RUN(test_move_to);
	RUN(test_read_system);
	return failed ? 1 : 0;
}
