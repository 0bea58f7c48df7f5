// SPDX-License-Identifier: GPL-2.0
/*
 * The check of the drains in flight against their callers, when a report is
 * made: drainstat_check_callers, a task iterator, gives each task whose drain
 * is in flight with its kernel stack; drainstat_end_phantom ends a drain that
 * verify.c, which knows the kernel's symbols, found ended.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "drainstat.h" /* before the skeleton: its .bss holds structs of ours */
#include "drainstat.skel.h"
#include "snapshot.h"
#include "tracer.h"
#include "tracer_int.h"

int tracer_attach_check(struct tracer *t)
{
	t->check_link = bpf_program__attach_iter(t->skel->progs.drainstat_check_callers, NULL);
	return t->check_link ? 0 : -errno;
}

/* Room for n more records, up to one a drain state the slots and the map can hold. */
static int checks_room(struct tracer *t, size_t n)
{
	size_t most = bpf_map__max_entries(t->skel->maps.drains) + DRAIN_SLOTS, cap;
	struct caller_check *p;

	if (t->nr_checks + n <= t->checks_cap)
		return 0;
	cap = t->checks_cap ? 2 * t->checks_cap : 64;
	if (cap > most)
		cap = most;
	if (cap < t->nr_checks + n)
		return -E2BIG;
	p = realloc(t->checks, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	t->checks = p;
	t->checks_cap = cap;
	return 0;
}

/*
 * Reads the kernel's seq_file may fail with EAGAIN or EINTR before they are
 * tried again: a few, not for ever; then this look at what is in flight
 * fails as any failed read does.
 */
#define CHECK_READ_RETRIES 3

/* The iterator's records, whole ones: a read gives as many as fit. */
static int read_checks(struct tracer *t, int fd)
{
	int err, retries = 0;
	ssize_t n;

	t->nr_checks = 0;
	for (;;) {
		err = checks_room(t, 8);
		if (err)
			return err;
		n = read(fd, t->checks + t->nr_checks,
			 (t->checks_cap - t->nr_checks) * sizeof(*t->checks));
		if (n < 0 && (errno == EAGAIN || errno == EINTR) && retries++ < CHECK_READ_RETRIES)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		t->nr_checks += (size_t)n / sizeof(*t->checks);
	}
}

static int cmp_tid(const void *a, const void *b)
{
	const struct caller_check *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/*
 * A drain whose caller the iterator did not see: gone if its state is still
 * that drain in flight after the check, else it ended meanwhile.
 */
static enum caller_found not_seen(const struct tracer *t, const struct snap_drain *sd)
{
	struct drain_state d;

	if (tracer_drain_state(t, sd->tid, &d) || d.start_ns != sd->d.start_ns ||
	    !drain_in_flight(&d))
		return CALLER_ENDED;
	return CALLER_GONE;
}

int tracer_check_callers(struct tracer *t, struct snapshot *snap)
{
	struct snap_in_flight *f = &snap->in_flight;
	const struct caller_check *c;
	int fd, err, i;

	if (!t->check_link)
		return 0;
	fd = bpf_iter_create(bpf_link__fd(t->check_link));
	if (fd < 0)
		return -errno;
	err = read_checks(t, fd);
	close(fd);
	if (err)
		return err;
	qsort(t->checks, t->nr_checks, sizeof(*t->checks), cmp_tid);
	for (i = 0; i < f->nr_drains; i++) {
		struct snap_drain *sd = &f->drains[i];
		struct caller_check key = {.tid = sd->tid};

		c = bsearch(&key, t->checks, t->nr_checks, sizeof(*t->checks), cmp_tid);
		if (!c) {
			sd->caller = not_seen(t, sd);
			continue;
		}
		sd->caller = c->start_ns == sd->d.start_ns ? CALLER_FOUND : CALLER_ENDED;
		sd->check = *c;
	}
	return 0;
}

int tracer__end_phantom(struct tracer *t, __u32 tid, __u64 start_ns)
{
	struct bpf_test_run_opts opts = {.sz = sizeof(opts)};
	struct phantom *p = &t->skel->bss->phantom;

	p->tid = tid;
	p->start_ns = start_ns;
	p->done = 0;
	if (bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.drainstat_end_phantom), &opts))
		return -errno;
	return p->done ? (int)p->counter : -ENOENT;
}
