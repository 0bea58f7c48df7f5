// SPDX-License-Identifier: GPL-2.0
/*
 * The check of the drains in flight (bpf/inflight.bpf.h) run by the kernel on
 * seeded drain states, as drainstat runs it when a report is made:
 *  - drainstat_check_callers, a task iterator, gives one record a task whose
 *    drain is in flight, and none for a tid no task has, nor for a drain
 *    that ended;
 *  - a caller asleep outside every drain (a thread blocked on a pipe) is
 *    CALLER_STILL, with a kernel stack that holds no drain function; the
 *    caller that runs the iterator is CALLER_ON_CPU;
 *  - drainstat_end_phantom ends the drain it is given (entry seen: out of
 *    the call; tracepoint mode: closed), counts it once, and leaves a state
 *    that is another drain by then as it is; in full mode, a drain begun
 *    before drainstat's last trampoline attach returned is counted as
 *    phantoms_attaching;
 *  - drainstat_task_exit drops an exiting thread's state, counting a drain
 *    it still had in flight as a phantom; a thread without task storage (no
 *    mark in drained_tasks) it looks up only while a state made unmarked is
 *    there; one whose state is in drains, its slot another task's, only
 *    while drains_moved says one is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "check.h"
#include "states.h"
#include "counters.h"
#include "drainstat.h"
#include "drainstat.skel.h"
#include "hooks.h"
#include "ksyms.h"

#define NO_TASK 0x3ffffff0U /* above any pid_max (2^22) */

static struct drainstat_bpf *skel;
static struct bpf_link *iter;
static struct ksyms *ks;
static int nr_cpus;
static int pipe_fds[2];
static pid_t sleeper_tid, sleeper2_tid;

static void *sleeper(void *arg)
{
	char c;

	*(pid_t *)arg = gettid();
	/* blocks until main writes: asleep in pipe_read, no drain on its stack */
	if (read(pipe_fds[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

static __u64 counter(enum drainstat_counter c)
{
	return counters_sum(skel->maps.counters, nr_cpus, c);
}

static void seed(__u32 tid, __u64 start_ns, bool by_entry, __u32 pending, __u32 closed)
{
	struct drain_state d = {.start_ns = start_ns,
				.by_entry = by_entry,
				.pending = pending,
				.closed = closed,
				.works = pending,
				.site_slot = NO_SLOT};

	d.in_call = by_entry ? CALL_API : 0;
	CHECK(!states_put(skel->maps.drain_slots, tid, &d));
}

static struct drain_state state_of(__u32 tid)
{
	struct drain_state d = {};

	CHECK(!states_get(skel->maps.drain_slots, skel->maps.drains, tid, &d));
	return d;
}

/* The iterator's records, read whole: how many, into out (n at most). */
static int check_callers(struct caller_check *out, int n)
{
	int fd = bpf_iter_create(bpf_link__fd(iter)), got = 0;
	ssize_t r;

	CHECK(fd >= 0);
	if (fd < 0)
		return 0;
	while ((r = read(fd, out + got, (size_t)(n - got) * sizeof(*out))) > 0)
		got += (int)(r / (ssize_t)sizeof(*out));
	CHECK(r == 0);
	close(fd);
	return got;
}

static const struct caller_check *record_of(const struct caller_check *c, int n, __u32 tid)
{
	int i;

	for (i = 0; i < n; i++)
		if (c[i].tid == tid)
			return &c[i];
	return NULL;
}

static bool stack_in_drain(const struct caller_check *c)
{
	const struct ksym *sym;
	__u32 i;

	for (i = 0; i < c->nr_ips; i++) {
		sym = ksyms__map_frame(ks, c->ips[i]);
		if (sym && hooks__is_drain(sym->name))
			return true;
	}
	return false;
}

static void test_records(void)
{
	struct caller_check c[64];
	const struct caller_check *r;
	__u32 self = (__u32)gettid();
	int n;

	seed(self, 100, true, 0, 0);
	seed((__u32)sleeper_tid, 200, true, 1, 0);
	seed((__u32)sleeper2_tid, 300, false, 0, 1); /* ended: closed */
	seed(NO_TASK, 400, true, 0, 0);
	n = check_callers(c, 64);
	CHECK(n == 2);
	r = record_of(c, n, self);
	CHECK(r && r->start_ns == 100 && (r->flags & CALLER_ON_CPU) && !(r->flags & CALLER_STILL));
	r = record_of(c, n, (__u32)sleeper_tid);
	CHECK(r && r->start_ns == 200 && (r->flags & CALLER_STILL) && !(r->flags & CALLER_ON_CPU));
	CHECK(r && r->nr_ips > 2 && !stack_in_drain(r));
	CHECK(!record_of(c, n, (__u32)sleeper2_tid));
	CHECK(!record_of(c, n, NO_TASK));
}

/* drainstat_end_phantom on tid's drain begun at start_ns: its done. */
static __u32 end_phantom(__u32 tid, __u64 start_ns)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	skel->bss->phantom = (struct phantom){.tid = tid, .start_ns = start_ns};
	CHECK(!bpf_prog_test_run_opts(bpf_program__fd(skel->progs.drainstat_end_phantom), &opts));
	return skel->bss->phantom.done;
}

static void test_end_phantom(void)
{
	__u64 before = counter(CNT_PHANTOMS_ENDED);
	struct drain_state d;

	seed(NO_TASK, 400, true, 1, 0);
	CHECK(end_phantom(NO_TASK, 399) == 0); /* another drain's state by then */
	CHECK(state_of(NO_TASK).in_call == CALL_API);
	CHECK(end_phantom(NO_TASK, 400) == 1);
	d = state_of(NO_TASK);
	CHECK(!d.in_call && !d.pending && !drain_in_flight(&d));
	CHECK(end_phantom(NO_TASK, 400) == 0); /* once */
	seed(NO_TASK + 1, 500, false, 2, 0);
	CHECK(end_phantom(NO_TASK + 1, 500) == 1);
	d = state_of(NO_TASK + 1);
	CHECK(d.closed && !d.pending && !drain_in_flight(&d));
	CHECK(counter(CNT_PHANTOMS_ENDED) == before + 2);
}

/*
 * Full mode: a phantom of a drain begun before drainstat's last trampoline
 * attach returned (attach_end_ns) lost its end to that attach, and is counted
 * so; one begun after it, or any while it is 0 (the other modes), is not.
 */
static void test_phantom_attaching(void)
{
	__u64 ended = counter(CNT_PHANTOMS_ENDED), attaching = counter(CNT_PHANTOMS_ATTACHING);

	skel->bss->attach_end_ns = 1000;
	seed(NO_TASK, 999, true, 1, 0);
	CHECK(end_phantom(NO_TASK, 999) == 1);
	CHECK(skel->bss->phantom.counter == CNT_PHANTOMS_ATTACHING);
	seed(NO_TASK, 1000, true, 1, 0);
	CHECK(end_phantom(NO_TASK, 1000) == 1);
	CHECK(skel->bss->phantom.counter == CNT_PHANTOMS_ENDED);
	skel->bss->attach_end_ns = ~0ULL; /* attaching now: every phantom */
	seed(NO_TASK, 5000, false, 1, 0);
	CHECK(end_phantom(NO_TASK, 5000) == 1);
	CHECK(skel->bss->phantom.counter == CNT_PHANTOMS_ATTACHING);
	skel->bss->attach_end_ns = 0;
	seed(NO_TASK, 1, true, 1, 0);
	CHECK(end_phantom(NO_TASK, 1) == 1);
	CHECK(skel->bss->phantom.counter == CNT_PHANTOMS_ENDED);
	CHECK(counter(CNT_PHANTOMS_ENDED) == ended + 2);
	CHECK(counter(CNT_PHANTOMS_ATTACHING) == attaching + 2);
}

/* drainstat_task_exit run as the exit of this thread, whose state is seeded. */
static void task_exit(void)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	CHECK(!bpf_prog_test_run_opts(bpf_program__fd(skel->progs.drainstat_task_exit), &opts));
}

/*
 * This process (its main thread: the tests run there) marked in drained_tasks,
 * as drain_state_get() marks a task.
 */
static void mark_self(void)
{
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	__u8 one = 1;

	CHECK(pidfd >= 0);
	CHECK(!bpf_map__update_elem(skel->maps.drained_tasks, &pidfd, sizeof(pidfd), &one,
				    sizeof(one), BPF_ANY));
	close(pidfd);
}

static bool has_state(__u32 tid)
{
	struct drain_state d;

	return !states_get(skel->maps.drain_slots, skel->maps.drains, tid, &d);
}

/*
 * A thread that exits loses its drain state; one whose drain was in flight
 * (its end missed) counts a phantom, one whose drain had ended does not.
 */
static void test_task_exit(void)
{
	__u64 before = counter(CNT_PHANTOMS_ENDED);
	__u32 self = (__u32)gettid();
	struct drain_state d;

	CHECK(self == (__u32)getpid());
	/* no task storage and no state made unmarked: the exit does not look */
	seed(self, 500, true, 0, 0);
	task_exit();
	CHECK(has_state(self));
	CHECK(counter(CNT_PHANTOMS_ENDED) == before);
	/* a state made unmarked (the kernel refused the mark): its exit finds it */
	d = state_of(self);
	d.unmarked = 1;
	CHECK(!states_put(skel->maps.drain_slots, self, &d));
	skel->bss->unmarked_states = 1;
	task_exit();
	CHECK(!has_state(self));
	CHECK(skel->bss->unmarked_states == 0);
	CHECK(counter(CNT_PHANTOMS_ENDED) == before + 1);
	before++;
	mark_self();
	seed(self, 600, true, 0, 0);
	task_exit();
	CHECK(!has_state(self));
	CHECK(skel->bss->unmarked_states == 0);
	CHECK(counter(CNT_PHANTOMS_ENDED) == before + 1);
	seed(self, 700, false, 0, 1);
	task_exit();
	CHECK(!has_state(self));
	CHECK(counter(CNT_PHANTOMS_ENDED) == before + 1);
	task_exit(); /* no state: nothing */
	CHECK(counter(CNT_PHANTOMS_ENDED) == before + 1);
}

/*
 * A thread whose state is in drains (its slot another live task's): its exit
 * finds it there while drains_moved says any is, drops it and counts it out;
 * the other task's slot stays.
 */
static void test_task_exit_moved(void)
{
	struct drain_state d = {
	    .start_ns = 800, .in_call = CALL_API, .by_entry = 1, .site_slot = NO_SLOT};
	__u32 self = (__u32)gettid(), other = self + DRAIN_SLOTS;
	__u64 before = counter(CNT_PHANTOMS_ENDED);

	mark_self();
	seed(other, 900, false, 0, 1);
	CHECK(!bpf_map__update_elem(skel->maps.drains, &self, sizeof(self), &d, sizeof(d), 0));
	task_exit(); /* drains_moved 0: not looked for */
	CHECK(has_state(self));
	skel->bss->drains_moved = 1;
	task_exit();
	CHECK(!has_state(self) && skel->bss->drains_moved == 0);
	CHECK(counter(CNT_PHANTOMS_ENDED) == before + 1);
	CHECK(has_state(other) && state_of(other).start_ns == 900);
}

static int open_programs(void)
{
	struct bpf_program *prog;
	int err;

	skel = drainstat_bpf__open();
	if (!skel)
		return -errno;
	bpf_object__for_each_program(prog, skel->obj)
	    bpf_program__set_autoload(prog, prog == skel->progs.drainstat_check_callers ||
						prog == skel->progs.drainstat_end_phantom ||
						prog == skel->progs.drainstat_task_exit);
	err = drainstat_bpf__load(skel);
	if (err)
		return err;
	iter = bpf_program__attach_iter(skel->progs.drainstat_check_callers, NULL);
	return iter ? 0 : -errno;
}

int main(void)
{
	pthread_t t1, t2;
	int failed = 0, err;

	nr_cpus = libbpf_num_possible_cpus();
	err = nr_cpus < 0 ? nr_cpus : open_programs();
	if (!err)
		err = ksyms__load("/proc/kallsyms", &ks);
	if (!err && pipe(pipe_fds))
		err = -errno;
	if (err) {
		printf("FAIL bpf: load the check of the callers: %s\n", strerror(-err));
		return 1;
	}
	pthread_create(&t1, NULL, sleeper, &sleeper_tid);
	pthread_create(&t2, NULL, sleeper, &sleeper2_tid);
	/* both asleep on the pipe */
	while (!sleeper_tid || !sleeper2_tid)
		usleep(1000);
	usleep(100000);
	RUN(test_records);
	RUN(test_end_phantom);
	RUN(test_phantom_attaching);
	RUN(test_task_exit);
	RUN(test_task_exit_moved);
	if (write(pipe_fds[1], "xx", 2) != 2)
		failed++;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	bpf_link__destroy(iter);
	drainstat_bpf__destroy(skel);
	ksyms__free(ks);
	return failed ? 1 : 0;
}
