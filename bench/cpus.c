// SPDX-License-Identifier: GPL-2.0
/*
 * cpus: what a report costs drainstat's user space on a machine with many
 * CPUs, without one. A BPF array of NR struct cpu_stats stands in for the
 * kernel's cpus map after wide drains (every CPU one work of each drain, so
 * every CPU's histograms fill). Each interval, 50 more drains are added to it
 * (not timed), then timed: the map read as tracer_read.c reads it (in place,
 * mmapped) into a snapshot, a model against the previous snapshot (cumulative
 * for the export), and the report written to /dev/null.
 *
 *   cpus -n NR -o text|json|prom [-i INTERVALS] [-l]
 *
 * -l reads the map as drainstat did before it mapped it: a lookup (a system
 * call and a copy) a CPU, into a buffer.
 *
 * Prints one line: NR, the output, the median and the mean on-CPU time of an
 * interval's report (CLOCK_PROCESS_CPUTIME_ID) in ns, and the anonymous
 * memory at the end (RssAnon, kB: drainstat's snapshots and model, and this
 * small program's own; the map is the kernel's, as drainstat's). Needs CAP_BPF (or root) for the
 * map. Exit codes: 0 ok, 64 usage, 1 failure (one line on stderr).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>

#include "heap.h"
#include "hist.h"
#include "model.h"
#include "report_json.h"
#include "report_prom.h"
#include "report_text.h"
#include "snapshot.h"

#define DRAINS_PER_INTERVAL 50
#define INTERVAL_NS	    1000000000ULL

enum output { OUT_TEXT, OUT_JSON, OUT_PROM };

struct bench {
	int nr;
	enum output out;
	int intervals;
	int map_fd;
	struct cpu_stats *area; /* the map, mmapped */
	size_t area_size;
	struct cpu_stats *lookups; /* -l: the buffer of the lookups; else NULL */
	struct prom_memory *memory;
};

static const struct model_info info = {
    .mode = "full",
    .kernel = "bench",
    .entry_visible = true,
    .has_fadvise = true,
};

static int die(const char *what, int err)
{
	fprintf(stderr, "cpus: %s: %s\n", what, strerror(err));
	exit(1);
}

static __u64 cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* One interval's wide drains, into the map: a work on every CPU, CPU 17 slow to run them. */
static void add_drains(struct bench *b, int interval)
{
	__u32 cpu;
	int d;

	for (cpu = 0; cpu < (__u32)b->nr; cpu++) {
		struct cpu_stats *c = &b->area[cpu];

		for (d = 0; d < DRAINS_PER_INTERVAL; d++) {
			__u64 seed =
			    (__u64)(interval * DRAINS_PER_INTERVAL + d) * 2654435761ULL + cpu;

			c->count[CPU_WORKS]++;
			c->count[CPU_SELF_WORKS] += cpu == 0;
			hist__add(&c->hist[CPU_DISPATCH_NS], 5000 + seed % 20000);
			hist__add(&c->hist[CPU_RUN_NS], (cpu == 17 ? 400000 : 2000) + seed % 3000);
		}
	}
}

/* The timed part: the map read into snap, a model against prev, the report written. */
static void report(struct bench *b, struct snapshot *snap, const struct snapshot *prev,
		   FILE *devnull, __u64 taken_ns)
{
	struct prom_opts po = {.max_sites = 20, .version = "bench", .memory = b->memory};
	struct text_opts to = {};
	struct model m;
	__u32 cpu;
	int err;

	snapshot__reset(snap, taken_ns);
	for (cpu = 0; b->lookups && cpu < (__u32)b->nr; cpu++)
		if (bpf_map_lookup_elem(b->map_fd, &cpu, &b->lookups[cpu]))
			die("bpf_map_lookup_elem", errno);
	if ((err = snapshot__set_cpus(snap, b->lookups ? b->lookups : b->area, b->nr)))
		die("snapshot__set_cpus", -err);
	/* the export is cumulative, the other outputs per interval (as session.c) */
	if ((err = model__build(snap, b->out == OUT_PROM ? NULL : prev, 0, NULL, &info, &m)))
		die("model__build", -err);
	if (b->out == OUT_TEXT)
		report_text__print(devnull, &m, &to);
	else if (b->out == OUT_JSON)
		report_json__print(devnull, &m, "bench");
	else
		report_prom__print(devnull, &m, &po);
	fflush(devnull);
	model__free(&m);
}

static long rss_anon_kb(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

static void run(struct bench *b)
{
	struct snapshot snaps[2] = {};
	FILE *devnull = fopen("/dev/null", "we");
	__u64 *spent = calloc((size_t)b->intervals, sizeof(*spent)), sum = 0, t0;
	int i;

	if (!devnull || !spent)
		die("setup", ENOMEM);
	heap_keep(true); /* as drainstat's run does: buffers reused, not faulted in anew */
	add_drains(b, 0);
	report(b, &snaps[0], NULL, devnull, INTERVAL_NS);
	for (i = 0; i < b->intervals; i++) {
		add_drains(b, i + 1);
		t0 = cpu_ns();
		report(b, &snaps[(i + 1) % 2], &snaps[i % 2], devnull,
		       (__u64)(i + 2) * INTERVAL_NS);
		spent[i] = cpu_ns() - t0;
		sum += spent[i];
	}
	qsort(spent, (size_t)b->intervals, sizeof(*spent), cmp_u64);
	printf("%d %s %llu %llu %ld\n", b->nr,
	       b->out == OUT_TEXT   ? "text"
	       : b->out == OUT_JSON ? "json"
				    : "prom",
	       (unsigned long long)spent[b->intervals / 2],
	       (unsigned long long)(sum / (__u64)b->intervals), rss_anon_kb());
	snapshot__free(&snaps[0]);
	snapshot__free(&snaps[1]);
	free(spent);
	fclose(devnull);
}

static int usage(void)
{
	fprintf(stderr, "usage: cpus -n NR -o text|json|prom [-i INTERVALS] [-l]\n");
	return 64;
}

int main(int argc, char **argv)
{
	struct bpf_map_create_opts map_opts = {.sz = sizeof(map_opts), .map_flags = BPF_F_MMAPABLE};
	struct bench b = {.intervals = 100, .out = -1};
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	bool lookups = false;
	int opt;

	while ((opt = getopt(argc, argv, "n:o:i:l")) != -1) {
		if (opt == 'l')
			lookups = true;
		else if (opt == 'n')
			b.nr = atoi(optarg);
		else if (opt == 'i')
			b.intervals = atoi(optarg);
		else if (opt == 'o' && !strcmp(optarg, "text"))
			b.out = OUT_TEXT;
		else if (opt == 'o' && !strcmp(optarg, "json"))
			b.out = OUT_JSON;
		else if (opt == 'o' && !strcmp(optarg, "prom"))
			b.out = OUT_PROM;
		else
			return usage();
	}
	if (optind != argc || b.nr < 1 || b.nr > DRAINSTAT_MAX_CPUS || b.intervals < 1 ||
	    (int)b.out < 0)
		return usage();
	if (lookups)
		b.lookups = calloc((size_t)b.nr, sizeof(*b.lookups));
	b.memory = prom_memory__new();
	if (!b.memory || (lookups && !b.lookups))
		die("setup", ENOMEM);
	b.map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cpus", sizeof(__u32),
				  sizeof(struct cpu_stats), (__u32)b.nr, &map_opts);
	if (b.map_fd < 0)
		die("bpf_map_create", errno);
	b.area_size = ((size_t)b.nr * sizeof(struct cpu_stats) + page - 1) / page * page;
	b.area = mmap(NULL, b.area_size, PROT_READ | PROT_WRITE, MAP_SHARED, b.map_fd, 0);
	if (b.area == MAP_FAILED)
		die("mmap", errno);
	run(&b);
	prom_memory__free(b.memory);
	munmap(b.area, b.area_size);
	free(b.lookups);
	close(b.map_fd);
	return 0;
}
