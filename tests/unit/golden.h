/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the emitters' unit tests share: synthetic histograms, and golden files
 * (tests/golden/NAME) that DRAINSTAT_GOLDEN_UPDATE=1 rewrites from the output.
 */
#ifndef GOLDEN_H
#define GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "hist.h"
#include "snapshot.h"

/* n samples first, first + step, ... into h, a kernel-layout histogram. */
static inline void golden__hist_fill(struct hist *h, __u64 first, __u64 step, int n)
{
	int i;

	for (i = 0; i < n; i++)
		hist__add(h, first + step * (__u64)i);
}

/* The same samples added to h, a model's histogram, its buckets in a. */
static inline void golden__sparse_fill(struct arena *a, struct sparse_hist *h, __u64 first,
				       __u64 step, int n)
{
	struct hist *dense = calloc(1, sizeof(*dense));
	struct sparse_hist add;

	CHECK(dense != NULL);
	golden__hist_fill(dense, first, step, n);
	CHECK(hist__read(dense, a, &add) == 0);
	CHECK(hist__merge(h, &add, a) == 0);
	free(dense);
}

/* A snapshot as the kernel's maps hold it, before it is read: dense histograms. */
struct golden_maps {
	struct site_stats sites[8];
	const __u64 *ips[8];
	int nr_ips[8];
	int nr_sites;
	struct cpu_stats cpus[2];
	struct fadvise_stats fadvise[FADVISE_ADVICE_SLOTS];
	__u64 counters[CNT_NR];
};

static inline struct site_stats *golden__add_site(struct golden_maps *k, int stack_id,
						  const char *comm, const __u64 *ips, int nr_ips)
{
	struct site_stats *site = &k->sites[k->nr_sites];

	site->key.stack_id = stack_id;
	memcpy(site->key.comm, comm, strnlen(comm, sizeof(site->key.comm)));
	k->ips[k->nr_sites] = ips;
	k->nr_ips[k->nr_sites++] = nr_ips;
	return site;
}

/*
 * What only full mode sees, added to the first two sites (forced drains at
 * the second): 20 empty drains, 290 IPIs, lock times and 8000 local drains.
 */
static inline void golden__add_full_mode(struct golden_maps *k)
{
	k->sites[0].count[SITE_DRAINS] += 20; /* 20 piggybacked: no work queued */
	k->sites[0].count[SITE_EMPTY_DRAINS] = 20;
	k->sites[0].count[SITE_IPIS] = 290;
	golden__hist_fill(&k->sites[0].hist[SITE_LOCK_NS], 2000, 100, 300);
	golden__hist_fill(&k->sites[0].hist[SITE_LOCAL_NS], 700, 10, 8000);
	k->sites[1].count[SITE_FORCED_DRAINS] = 2;
	k->cpus[0].count[CPU_IPIS] = 290;
}

/* Reads k into s, as tracer__snapshot() reads the maps, and frees k. */
static inline void golden__read_maps(struct golden_maps *k, struct snapshot *s, __u64 taken_ns)
{
	int i;

	memset(s, 0, sizeof(*s));
	snapshot__reset(s, taken_ns);
	for (i = 0; i < k->nr_sites; i++)
		CHECK(snapshot__add_site(s, &k->sites[i], k->ips[i], k->nr_ips[i]) == 0);
	CHECK(snapshot__set_cpus(s, k->cpus, 2) == 0);
	for (i = 0; i < FADVISE_ADVICE_SLOTS; i++)
		CHECK(snapshot__set_fadvise(s, i, &k->fadvise[i]) == 0);
	memcpy(s->counters, k->counters, sizeof(s->counters));
	free(k);
}

/*
 * Drains in flight at now_ns, on a 4-CPU machine, read as tracer__snapshot()
 * reads them: a DONTNEED held for 11.8 s by CPU 3, where a SCHED_FIFO spinner
 * runs (an isolated, nohz_full CPU); with full, khugepaged waiting 7.9 s for
 * the drain mutex behind it and a young drain whose only work runs.
 */
static inline void golden__add_in_flight(struct snapshot *s, __u64 now_ns, bool full,
					 const __u64 *ips, int nr_ips)
{
	const __u64 held = now_ns - 11800000000ULL;
	struct drain_state d = {.id_ns = held, .tgid = 812, .caller_cpu = 0, .works = 3};
	struct in_flight_work w = {.target_cpu = 3};

	d.pending = 1;
	d.by_entry = d.in_call = full;
	memcpy(d.site.comm, "sd-dropper", 11);
	CHECK(snapshot__add_drain(s, 815, &d, ips, nr_ips) == 0);
	w.ws = (struct work_state){.work = 1,
				   .queue_ns = held + 4000,
				   .drain_id_ns = held,
				   .caller_tid = 815,
				   .caller_cpu = 0};
	w.running = (struct running_task){.running_ns = 12000000000ULL,
					  .cpu = 3,
					  .flags = RUNNING_KNOWN | RUNNING_SINCE,
					  .tid = 820,
					  .tgid = 812,
					  .policy = 1,
					  .prio = 50};
	memcpy(w.running.comm, "sd-spin", 8);
	CHECK(snapshot__add_work(s, &w) == 0);
	s->in_flight.isolated[0] = s->in_flight.nohz_full[0] = 1ULL << 3;
	s->in_flight.read_ns = now_ns;
	s->in_flight.read = true;
	if (!full)
		return;
	d = (struct drain_state){.id_ns = now_ns - 7900000000ULL,
				 .tgid = 77,
				 .caller_cpu = 1,
				 .in_call = 1,
				 .by_entry = 1};
	memcpy(d.site.comm, "khugepaged", 11);
	CHECK(snapshot__add_drain(s, 77, &d, ips, nr_ips) == 0);
	d = (struct drain_state){.id_ns = now_ns - 300000,
				 .tgid = 90,
				 .caller_cpu = 2,
				 .in_call = 1,
				 .by_entry = 1,
				 .works = 1,
				 .pending = 1};
	memcpy(d.site.comm, "mover", 6);
	CHECK(snapshot__add_drain(s, 91, &d, ips, nr_ips) == 0);
	w = (struct in_flight_work){.target_cpu = 1};
	w.ws = (struct work_state){.work = 2,
				   .queue_ns = now_ns - 250000,
				   .start_ns = now_ns - 200000,
				   .drain_id_ns = now_ns - 300000,
				   .caller_tid = 91,
				   .caller_cpu = 2};
	CHECK(snapshot__add_work(s, &w) == 0);
}

/* The whole file at path, NUL-terminated (free it), or NULL. */
static inline char *golden__read(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Checks got against tests/golden/name (rewritten first when updating); path gets its path. */
static inline void golden__check(const char *name, const char *got, char *path, size_t size)
{
	char *want;
	FILE *f;

	snprintf(path, size, "tests/golden/%s", name);
	if (getenv("DRAINSTAT_GOLDEN_UPDATE")) {
		f = fopen(path, "w");
		fputs(got, f);
		fclose(f);
	}
	want = golden__read(path);
	CHECK(want != NULL);
	if (want && strcmp(got, want))
		fprintf(stderr, "  %s differs; got:\n%s", path, got);
	CHECK(want && !strcmp(got, want));
	free(want);
}

#endif /* GOLDEN_H */
