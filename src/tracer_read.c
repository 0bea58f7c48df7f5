// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer's readers: the kernel maps into a snapshot, once an interval, and
 * the stacks they name, each read once and kept. tracer.c loads and attaches;
 * this reads what the programs wrote.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "drainstat.h" /* before the skeleton: its .bss holds structs of ours */
#include "drainstat.skel.h"
#include "kretprobe.h"
#include "site.h"
#include "tracer.h"
#include "tracer_int.h"

int tracer_read_ips(const struct bpf_map *map, __s32 id, __u64 *ips, int *nr)
{
	__u32 key = (__u32)id;
	int i;

	*nr = 0;
	if (id < 0 || bpf_map__lookup_elem(map, &key, sizeof(key), ips,
					   DRAINSTAT_MAX_STACK_DEPTH * sizeof(__u64), 0))
		return 0;
	for (i = 0; i < DRAINSTAT_MAX_STACK_DEPTH && ips[i]; i++)
		;
	*nr = i;
	return 0;
}

/*
 * The sites array, read in place: the slots taken so far, mapped anew (twice
 * as many) when more are taken. A mapping holds all its pages from the start,
 * so mapping the whole array would show all of it in drainstat's RSS.
 */
static int map_sites(struct tracer *t, __u32 used)
{
	const struct bpf_map *map = t->skel->maps.sites;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), value_size = bpf_map__value_size(map);
	size_t size = (size_t)used * value_size, all = value_size * bpf_map__max_entries(map);
	void *area;

	if (size <= t->sites_area_size)
		return 0;
	if (size < 2 * t->sites_area_size)
		size = 2 * t->sites_area_size;
	size = ((size < all ? size : all) + page - 1) / page * page;
	area = mmap(NULL, size, PROT_READ, MAP_SHARED, bpf_map__fd(map), 0);
	if (area == MAP_FAILED)
		return -errno;
	if (t->sites_area)
		munmap((void *)t->sites_area, t->sites_area_size);
	t->sites_area = area;
	t->sites_area_size = size;
	return 0;
}

/* Keeps a copy of the stack read under id; no memory only means no copy. */
static void remember_stack(struct tracer *t, __u32 id, const __u64 *ips, int nr_ips)
{
	struct known_stack *k;

	if (!t->known_stacks) {
		t->nr_known_stacks = bpf_map__max_entries(t->skel->maps.stacks);
		t->known_stacks = calloc(t->nr_known_stacks, sizeof(*t->known_stacks));
		if (!t->known_stacks)
			return;
	}
	if (id >= t->nr_known_stacks || t->known_stacks[id])
		return;
	k = malloc(sizeof(*k));
	if (!k)
		return;
	k->nr_ips = nr_ips;
	memcpy(k->ips, ips, sizeof(k->ips));
	t->known_stacks[id] = k;
}

/*
 * A stack id names one stack for good: the map's bucket is written before its
 * id is returned, and never again (no BPF_F_REUSE_STACKID; a different stack
 * that hashes there is stack_lost), and drainstat deletes none. So each id is
 * read once; every interval after takes the copy. ips is
 * DRAINSTAT_MAX_STACK_DEPTH long; *nr_ips is 0 for a stack lost or unread.
 */
static void read_stack(struct tracer *t, __s32 stack_id, __u64 *ips, int *nr_ips)
{
	__u32 id = (__u32)stack_id;

	*nr_ips = 0;
	if (stack_id < 0)
		return;
	if (t->known_stacks && id < t->nr_known_stacks && t->known_stacks[id]) {
		*nr_ips = t->known_stacks[id]->nr_ips;
		memcpy(ips, t->known_stacks[id]->ips, sizeof(t->known_stacks[id]->ips));
		return;
	}
	tracer_read_ips(t->skel->maps.stacks, stack_id, ips, nr_ips);
	if (*nr_ips)
		remember_stack(t, id, ips, *nr_ips);
}

/* A site's kernel stack, with the caller put back where the stack lacks it. */
static void read_site_stack(struct tracer *t, const struct site_key *key, __u64 *ips, int *nr_ips)
{
	read_stack(t, key->stack_id, ips, nr_ips);
	site__put_back_caller(ips, nr_ips, DRAINSTAT_MAX_STACK_DEPTH, key->ret_ip);
}

/* The slots taken and ready, read in place: no copy of the slots, no system call. */
static int read_sites(struct tracer *t, struct snapshot *snap)
{
	const struct bpf_map *map = t->skel->maps.sites;
	size_t value_size = bpf_map__value_size(map);
	__u32 used = __atomic_load_n(&t->skel->bss->site_slots_used, __ATOMIC_ACQUIRE);
	__u64 ips[DRAINSTAT_MAX_STACK_DEPTH];
	__u32 i;
	int nr_ips, err;

	if (used > bpf_map__max_entries(map))
		used = bpf_map__max_entries(map);
	err = map_sites(t, used);
	if (err)
		return err;
	for (i = 0; i < used; i++) {
		const struct site_stats *s =
		    (const void *)((const char *)t->sites_area + i * value_size);

		/* ready before key: the BPF side wrote the key before it set ready */
		if (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
			continue;
		read_site_stack(t, &s->key, ips, &nr_ips);
		err = snapshot__add_site(snap, s, ips, nr_ips);
		if (err)
			return err;
	}
	return snapshot__sort_sites(snap);
}

/* The cpus array in place, as the sites: at 255 CPUs, 255 system calls and 1.2 MB copied less. */
static int read_cpus(const struct tracer *t, struct snapshot *snap)
{
	return snapshot__set_cpus(snap, t->cpus_area, t->nr_cpus);
}

static int read_fadvise(const struct tracer *t, struct snapshot *snap)
{
	struct fadvise_stats f;
	__u32 slot;
	int err;

	for (slot = 0; slot < FADVISE_ADVICE_SLOTS; slot++) {
		err = bpf_map__lookup_elem(t->skel->maps.fadvise, &slot, sizeof(slot), &f,
					   sizeof(f), 0);
		if (!err)
			err = snapshot__set_fadvise(snap, (int)slot, &f);
		if (err)
			return err;
	}
	return 0;
}

/* A per-CPU map's slot key, summed over the CPUs into *sum; percpu: room for nr_cpus values. */
static int read_percpu_sum(const struct tracer *t, const struct bpf_map *map, __u32 key,
			   __u64 *percpu, __u64 *sum)
{
	int cpu, err;

	err = bpf_map__lookup_elem(map, &key, sizeof(key), percpu,
				   sizeof(__u64) * (size_t)t->nr_cpus, 0);
	for (cpu = 0; cpu < t->nr_cpus && !err; cpu++)
		*sum += percpu[cpu];
	return err;
}

int tracer__stack_walks(const struct tracer *t, __u64 *walks)
{
	__u64 *percpu = calloc((size_t)t->nr_cpus, sizeof(__u64));
	int err;

	*walks = 0;
	if (!percpu)
		return -ENOMEM;
	err = read_percpu_sum(t, t->skel->maps.stack_walks, 0, percpu, walks);
	free(percpu);
	return err;
}

/* The counts may pass their bounds by the CPUs that raced for the last slot. */
void tracer__site_slots(const struct tracer *t, struct tracer_site_slots *slots)
{
	const struct drainstat_bpf__bss *bss = t->skel->bss;

	slots->max = bpf_map__max_entries(t->skel->maps.sites);
	slots->local_max = local_sites_max(slots->max);
	slots->used = __atomic_load_n(&bss->site_slots_used, __ATOMIC_RELAXED);
	slots->local = __atomic_load_n(&bss->local_slots_used, __ATOMIC_RELAXED);
	if (slots->used > slots->max)
		slots->used = slots->max;
	if (slots->local > slots->local_max)
		slots->local = slots->local_max;
}

/* counters is per-CPU: sum the CPUs' slots, with one buffer for them all. */
static int read_counters(const struct tracer *t, struct snapshot *snap)
{
	__u64 *percpu = calloc((size_t)t->nr_cpus, sizeof(__u64));
	__u32 c;
	int err = 0;

	if (!percpu)
		return -ENOMEM;
	for (c = 0; c < CNT_NR && !err; c++)
		err = read_percpu_sum(t, t->skel->maps.counters, c, percpu, &snap->counters[c]);
	free(percpu);
	return err;
}

/*
 * What runs on cpu now: drainstat_running run there, in an IPI that
 * interrupts it. flags stays 0 where the run fails (the CPU went offline).
 */
static void read_running(struct tracer *t, __u32 cpu, struct running_task *r)
{
	struct bpf_test_run_opts opts = {
	    .sz = sizeof(opts), .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu};

	memset(r, 0, sizeof(*r));
	r->cpu = cpu;
	t->skel->bss->running_now.flags = 0;
	if (!bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.drainstat_running), &opts) &&
	    t->skel->bss->running_now.cpu == cpu)
		*r = t->skel->bss->running_now;
}

/* The works queued and not ended, from the array in place. */
static int read_works_in_flight(struct tracer *t, struct snapshot *snap)
{
	struct in_flight_work w;
	int err = 0;
	__u32 cpu;

	for (cpu = 0; cpu < (__u32)t->nr_cpus && !err; cpu++) {
		const struct work_state *ws = &t->works_area[cpu];

		if (!__atomic_load_n(&ws->work, __ATOMIC_ACQUIRE))
			continue;
		memset(&w, 0, sizeof(w));
		w.ws = *ws;
		w.target_cpu = cpu;
		/* it may have ended since: an empty slot is no work */
		if (w.ws.work)
			err = snapshot__add_work(snap, &w);
	}
	return err;
}

static bool drain_read(const struct snap_in_flight *f, const struct work_state *ws)
{
	int i;

	for (i = 0; i < f->nr_drains; i++)
		if (f->drains[i].tid == ws->caller_tid &&
		    f->drains[i].d.start_ns == ws->drain_start_ns)
			return true;
	return false;
}

/*
 * The works of the drains in flight, the others dropped: a slot the end of
 * its drain's work left set (that drain ended as a phantom, its work's end
 * unseen) until the next queue to its CPU. Their pending ones of drains in
 * flight running_min_ns or longer with what runs on their CPU, which is asked
 * of no CPU for a work whose drain has ended.
 */
static void keep_works_of_drains(struct tracer *t, struct snapshot *snap, __u64 running_min_ns)
{
	struct snap_in_flight *f = &snap->in_flight;
	int i, n = 0;
	__u64 age;

	for (i = 0; i < f->nr_works; i++) {
		struct in_flight_work *w = &f->works[i];

		if (!drain_read(f, &w->ws))
			continue;
		/*
		 * the drain's age (from its entry where seen), not the work's, at
		 * read_ns as the model has it: a -T event past running_min_ns
		 * always says what runs there
		 */
		age = f->read_ns > w->ws.drain_start_ns ? f->read_ns - w->ws.drain_start_ns : 0;
		if (!w->ws.start_ns && age >= running_min_ns)
			read_running(t, (__u32)w->target_cpu, &w->running);
		f->works[n++] = *w;
	}
	f->nr_works = n;
}

/* The drains map is read this many entries at a time: a few KB of buffer. */
#define DRAINS_BATCH 128

/* The drains in flight among the n entries read: their stacks, into snap. */
static int add_drains_in_flight(struct tracer *t, struct snapshot *snap, const __u32 *tids,
				const struct drain_state *drains, __u32 n)
{
	__u64 ips[DRAINSTAT_MAX_STACK_DEPTH];
	int nr_ips, err = 0;
	__u32 i;

	for (i = 0; i < n && !err; i++) {
		if (!drain_in_flight(&drains[i]))
			continue;
		read_site_stack(t, &drains[i].site, ips, &nr_ips);
		err = snapshot__add_drain(snap, tids[i], &drains[i], ips, nr_ips);
	}
	return err;
}

/* The drains in flight in the slots, read in place, each copied before it is looked at. */
static int read_slots_in_flight(struct tracer *t, struct snapshot *snap)
{
	struct drain_state d;
	int err = 0;
	__u32 i, tid;

	for (i = 0; i < DRAIN_SLOTS && !err; i++) {
		tid = __atomic_load_n(&t->drain_slots[i].tid, __ATOMIC_ACQUIRE);
		if (!tid)
			continue;
		memcpy(&d, &t->drain_slots[i].d, sizeof(d));
		err = add_drains_in_flight(t, snap, &tid, &d, 1);
	}
	return err;
}

int tracer_drain_state(const struct tracer *t, __u32 tid, struct drain_state *d)
{
	const struct drain_slot *s = &t->drain_slots[tid % DRAIN_SLOTS];

	if (tid && __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE) == tid) {
		memcpy(d, &s->d, sizeof(*d));
		return 0;
	}
	return bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.drains), &tid, d) ? -errno : 0;
}

/*
 * The drains in flight, from the slots and, where any state was put there,
 * the drains map by batches: read only when the BPF side counts drains open
 * (open_drains) or works are in flight.
 */
static int read_drains_in_flight(struct tracer *t, struct snapshot *snap)
{
	int fd = bpf_map__fd(t->skel->maps.drains), err;
	struct bpf_map_batch_opts opts = {.sz = sizeof(opts)};
	__u32 *in = NULL, out, n;
	bool last;

	err = read_slots_in_flight(t, snap);
	if (err || !__atomic_load_n(&t->skel->bss->drains_moved, __ATOMIC_ACQUIRE))
		return err;
	if (!t->drains_buf) {
		t->drains_buf = calloc(DRAINS_BATCH, sizeof(*t->drains_buf));
		t->tids_buf = calloc(DRAINS_BATCH, sizeof(*t->tids_buf));
		if (!t->drains_buf || !t->tids_buf)
			return -ENOMEM;
	}
	for (last = false; !last; in = &out) {
		n = DRAINS_BATCH;
		err = bpf_map_lookup_batch(fd, in, &out, t->tids_buf, t->drains_buf, &n, &opts);
		/* ENOENT: the last batch, n entries long */
		last = err == -ENOENT;
		if (err && !last)
			return err;
		err = add_drains_in_flight(t, snap, t->tids_buf, t->drains_buf, n);
		if (err)
			return err;
	}
	return 0;
}

/* Drains and works in flight: nothing on the hot paths keeps a list of them. */
static int read_in_flight(struct tracer *t, struct snapshot *snap, __u64 running_min_ns)
{
	struct timespec ts;
	int err;

	/* before the reads: a drain or work that begins during them is of age 0 */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snap->in_flight.read_ns = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
	err = read_works_in_flight(t, snap);
	if (!err && (snap->in_flight.nr_works ||
		     __atomic_load_n(&t->skel->bss->open_drains, __ATOMIC_RELAXED)))
		err = read_drains_in_flight(t, snap);
	if (!err)
		keep_works_of_drains(t, snap, running_min_ns);
	if (!err && snap->in_flight.nr_drains)
		err = tracer_check_callers(t, snap);
	snap->in_flight.read = !err;
	return err;
}

/*
 * Whether prog is one of the twins of a drain entry or exit (see drain_enter()):
 * TWINS() names them NAME and NAME_twin.
 */
static bool is_twin(const struct bpf_object *obj, const struct bpf_program *prog)
{
	static const char suffix[] = "_twin";
	const char *name = bpf_program__name(prog);
	size_t n = strlen(name);
	char twin[128];

	if (n >= sizeof(suffix) - 1 && !strcmp(name + n - (sizeof(suffix) - 1), suffix))
		return true;
	snprintf(twin, sizeof(twin), "%s%s", name, suffix);
	return bpf_object__find_program_by_name(obj, twin) != NULL;
}

/*
 * Whether the kernel's skips of prog can be of a drain event. A tracepoint
 * program (tp_btf, raw_tp) runs with preemption off, so it is skipped only
 * when a run nests in an interrupt on top of another: the workqueue and IPI
 * tracepoints of a drain come from process context (the caller's queue, a
 * kworker's start and end) and are the outer run, never the skipped one. Seen
 * in a 1-minute drain storm on 6.18 (tests/soak): 16 such skips, while the
 * works, drains and escalations all matched bpftrace's and the workload's.
 */
static bool skips_matter(const struct bpf_program *prog)
{
	enum bpf_prog_type type = bpf_program__type(prog);

	return type != BPF_PROG_TYPE_RAW_TRACEPOINT &&
	       !(type == BPF_PROG_TYPE_TRACING &&
		 bpf_program__expected_attach_type(prog) == BPF_TRACE_RAW_TP);
}

/*
 * The runs of our programs the kernel skipped where a drain event may be lost:
 * it runs a program on a CPU only when no other run of it is there (fentry,
 * fexit), or no other kprobe or perf program and no BPF map syscall (kprobes,
 * syscall tracepoints: bpf_prog_active); under full preemption such a run can
 * be preempted. A twin's skip is covered by the other twin unless both missed
 * the call: the BPF side's count after read_counters() is the calls only one
 * twin saw, each one skip, so the calls neither saw are half of the rest. Read
 * after the counters, a skip whose cover is not counted yet is at most half a
 * call more; the total never goes back.
 */
static int read_skipped(struct tracer *t, struct snapshot *snap)
{
	__u64 alone = 0, twins = 0, seen_once = snap->counters[CNT_TWIN_SKIPS], skipped;
	struct bpf_program *prog;

	for (prog = bpf_object__next_program(t->skel->obj, NULL); prog;
	     prog = bpf_object__next_program(t->skel->obj, prog)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || !skips_matter(prog))
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		if (is_twin(t->skel->obj, prog))
			twins += info.recursion_misses;
		else
			alone += info.recursion_misses;
	}
	skipped = alone + (twins > seen_once ? (twins - seen_once) / 2 : 0);
	if (skipped < t->skipped)
		skipped = t->skipped;
	t->skipped = skipped;
	snap->counters[CNT_SKIPPED] = skipped;
	snap->counters[CNT_TWIN_SKIPS] = twins;
	return 0;
}

/*
 * kprobe mode: the calls whose exit a kretprobe of ours missed, every instance
 * taken (see kretprobe.c), as the kernel counts them: tracefs's kprobe_profile
 * for the kretprobes made there, else each PMU kretprobe link's info (6.7
 * and later): 0, or -EOPNOTSUPP where the kernel does not tell.
 */
int tracer_kretprobe_missed(const struct tracer *t, __u64 *missed)
{
	__u64 one;
	int i, err;

	*missed = 0;
	if (t->kret)
		return kretprobes__missed(t->kret, missed);
	for (i = 0; i < t->nr_links; i++) {
		err = kretprobes__link_missed(t->links[i], &one);
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		*missed += one;
	}
	return 0;
}

/* The count never goes back: a read that fails keeps the last. */
static void read_kretprobe_missed(struct tracer *t, struct snapshot *snap)
{
	__u64 missed;

	if (t->features.kret_missed_known && !tracer_kretprobe_missed(t, &missed) &&
	    missed > t->kretprobe_missed)
		t->kretprobe_missed = missed;
	snap->counters[CNT_KRETPROBE_MISSED] = t->kretprobe_missed;
}

int tracer__snapshot(struct tracer *t, struct snapshot *snap)
{
	int err;

	/* a snapshot read before keeps its memory: no fresh pages to fault in */
	snapshot__reset_now(snap);
	err = read_sites(t, snap);
	if (!err)
		err = read_cpus(t, snap);
	if (!err)
		err = read_fadvise(t, snap);
	if (!err)
		err = read_counters(t, snap);
	if (!err)
		err = read_skipped(t, snap);
	if (!err) {
		read_kretprobe_missed(t, snap);
		snap->counters[CNT_SLOW_UNREAD] = t->slow_unread;
		err = read_in_flight(t, snap, 0);
	}
	if (err)
		snapshot__free(snap);
	return err;
}

int tracer__in_flight(struct tracer *t, struct snapshot *snap, __u64 running_min_ns)
{
	snapshot__reset_now(snap);
	return read_in_flight(t, snap, running_min_ns);
}

void tracer_read_free(struct tracer *t)
{
	__u32 i;

	if (t->sites_area)
		munmap((void *)t->sites_area, t->sites_area_size);
	t->sites_area = NULL;
	t->sites_area_size = 0;
	for (i = 0; t->known_stacks && i < t->nr_known_stacks; i++)
		free(t->known_stacks[i]);
	free(t->known_stacks);
	t->known_stacks = NULL;
	free(t->drains_buf);
	free(t->tids_buf);
	free(t->checks);
	t->drains_buf = NULL;
	t->tids_buf = NULL;
	t->checks = NULL;
	t->nr_checks = t->checks_cap = 0;
}
