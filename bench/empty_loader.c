// SPDX-License-Identifier: GPL-2.0
/*
 * empty_loader [--full | --kprobe] [--floor] [--route R]: attaches the empty programs of
 * bpf/bench_empty.bpf.c, says "attached" on stdout, and holds them until SIGINT
 * or SIGTERM. bench/run and bench/vm.sh read their run_time_ns beside
 * drainstat's to price drainstat's programs.
 *
 * Always the tracepoint set; --full adds the fentry/fexit drain hooks, --kprobe
 * the kprobe/kretprobe ones. The others are not even loaded: fentry programs
 * fail to load where the kernel refuses fentry. --floor puts floors on the
 * fadvise syscall in place of the empty programs: floor_fadvise_* (a clock
 * read each) and stamp_fadvise_* (a timestamp kept per task). --route R adds
 * route_R_fadvise_*, one of the ways drainstat could keep a call in flight,
 * in place of the empty ones (hash, slot, index, index-hist: index with
 * drainstat's histogram, index-pcpu: with one per CPU, task); bench/routes
 * runs a loader for each, each first in turn.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench_empty.skel.h"
#include "probe.h"

enum hook_set { SET_TRACEPOINTS, SET_FULL, SET_KPROBE };

/* A drain hook: the set it belongs to, and for a kprobe the function it probes. */
struct drain_hook {
	struct bpf_program *prog;
	enum hook_set set;
	const char *kfunc;
	bool retprobe;
};

#define NR_DRAIN_HOOKS 8

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * The routes of --route: the pair of programs each loads (route_<pair>_fadvise_*)
 * and the histogram the index pair's exit adds to (route_index_hist: bench_empty's
 * ROUTE_HIST_NONE, _SHARED, _PER_CPU).
 */
enum route_pair { PAIR_HASH, PAIR_SLOT, PAIR_TASK, PAIR_INDEX };

static const struct route {
	const char *name;
	enum route_pair pair;
	__u32 hist;
} routes[] = {
    {"hash", PAIR_HASH, 0},   {"slot", PAIR_SLOT, 0},	     {"task", PAIR_TASK, 0},
    {"index", PAIR_INDEX, 0}, {"index-hist", PAIR_INDEX, 1}, {"index-pcpu", PAIR_INDEX, 2},
};

/* What to load besides the tracepoint set. */
struct load_opts {
	enum hook_set set;
	bool floor;
	const struct route *route; /* NULL: none */
};

/* The route named name, NULL if none is. */
static const struct route *route_named(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (!strcmp(routes[i].name, name))
			return &routes[i];
	return NULL;
}

static int parse_args(int argc, char **argv, struct load_opts *o)
{
	int i;

	*o = (struct load_opts){.set = SET_TRACEPOINTS};
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--full") && o->set == SET_TRACEPOINTS)
			o->set = SET_FULL;
		else if (!strcmp(argv[i], "--kprobe") && o->set == SET_TRACEPOINTS)
			o->set = SET_KPROBE;
		else if (!strcmp(argv[i], "--floor") && !o->floor)
			o->floor = true;
		else if (!strcmp(argv[i], "--route") && !o->route && i + 1 < argc &&
			 (o->route = route_named(argv[i + 1])))
			i++;
		else
			return -EINVAL;
	}
	return 0;
}

static void drain_hooks(struct bench_empty_bpf *s, struct drain_hook *h)
{
	const struct drain_hook hooks[NR_DRAIN_HOOKS] = {
	    {s->progs.empty_fentry_drain_all, SET_FULL, NULL, false},
	    {s->progs.empty_fexit_drain_all, SET_FULL, NULL, false},
	    {s->progs.empty_fentry_local, SET_FULL, NULL, false},
	    {s->progs.empty_fexit_local, SET_FULL, NULL, false},
	    {s->progs.empty_kprobe_drain_all, SET_KPROBE, "lru_add_drain_all", false},
	    {s->progs.empty_kretprobe_drain, SET_KPROBE, "lru_add_drain_all", true},
	    {s->progs.empty_kprobe_local, SET_KPROBE, "lru_add_drain", false},
	    {s->progs.empty_kretprobe_local, SET_KPROBE, "lru_add_drain", true},
	};

	memcpy(h, hooks, sizeof(hooks));
}

#define NR_FADVISE_PROGS 14

/* The fadvise programs, each with whether O loads it. */
static void fadvise_progs(struct bench_empty_bpf *s, const struct load_opts *o,
			  struct bpf_program **progs, bool *wanted)
{
	struct bpf_program *p[NR_FADVISE_PROGS] = {
	    s->progs.empty_fadvise_enter,	s->progs.empty_fadvise_exit,
	    s->progs.floor_fadvise_enter,	s->progs.floor_fadvise_exit,
	    s->progs.stamp_fadvise_enter,	s->progs.stamp_fadvise_exit,
	    s->progs.route_hash_fadvise_enter,	s->progs.route_hash_fadvise_exit,
	    s->progs.route_slot_fadvise_enter,	s->progs.route_slot_fadvise_exit,
	    s->progs.route_task_fadvise_enter,	s->progs.route_task_fadvise_exit,
	    s->progs.route_index_fadvise_enter, s->progs.route_index_fadvise_exit,
	};
	const int pair = o->route ? (int)o->route->pair : -1;
	const bool hash = pair == PAIR_HASH, slot = pair == PAIR_SLOT, task = pair == PAIR_TASK,
		   index = pair == PAIR_INDEX;
	const bool empty = !o->floor && !o->route;
	const bool w[NR_FADVISE_PROGS] = {empty,    empty, o->floor, o->floor, o->floor,
					  o->floor, hash,  hash,     slot,     slot,
					  task,	    task,  index,    index};

	memcpy(progs, p, sizeof(p));
	memcpy(wanted, w, sizeof(w));
}

/* Loads the tracepoint set (fadvise: as O says) and the drain hooks of O's set. */
static int load(struct bench_empty_bpf *skel, const struct drain_hook *hooks,
		const struct load_opts *o)
{
	struct bpf_program *progs[NR_FADVISE_PROGS];
	bool wanted[NR_FADVISE_PROGS], tracefs;
	struct btf_facts btf;
	int i, cpus = libbpf_num_possible_cpus();

	for (i = 0; i < NR_DRAIN_HOOKS; i++)
		bpf_program__set_autoload(hooks[i].prog, hooks[i].set == o->set);
	/* a tp_btf program on a missing tracepoint (6.1 has no ipi_send_cpu) fails the load */
	probe__btf_facts(&btf);
	if (!btf.ipi_send_cpu)
		bpf_program__set_autoload(skel->progs.empty_ipi_send_cpu, false);
	/* tracepoint/ programs find their event in tracefs, mounted privately if need be */
	tracefs = probe__mount_tracefs("/sys/kernel/tracing") >= 0;
	if (!tracefs)
		fprintf(stderr, "empty_loader: no tracefs: no fadvise baseline\n");
	fadvise_progs(skel, o, progs, wanted);
	for (i = 0; i < NR_FADVISE_PROGS; i++)
		bpf_program__set_autoload(progs[i], tracefs && wanted[i]);
	skel->rodata->route_nr_cpus = cpus > 0 ? (__u32)cpus : 1;
	skel->rodata->route_index_hist = o->route ? o->route->hist : 0;
	return bench_empty_bpf__load(skel);
}

/* The skeleton attaches by section; kprobes need their function named. */
static int attach_kprobes(const struct drain_hook *hooks, enum hook_set set,
			  struct bpf_link **links)
{
	int i;

	for (i = 0; i < NR_DRAIN_HOOKS; i++) {
		if (set != SET_KPROBE || hooks[i].set != SET_KPROBE)
			continue;
		links[i] =
		    bpf_program__attach_kprobe(hooks[i].prog, hooks[i].retprobe, hooks[i].kfunc);
		if (!links[i]) {
			fprintf(stderr, "empty_loader: attaching %s to %s failed: %s\n",
				bpf_program__name(hooks[i].prog), hooks[i].kfunc, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct bpf_link *links[NR_DRAIN_HOOKS] = {};
	struct drain_hook hooks[NR_DRAIN_HOOKS];
	struct bench_empty_bpf *skel;
	struct load_opts opts;
	sigset_t block, old;
	int err, i, stats_fd = -1;

	if (parse_args(argc, argv, &opts)) {
		fprintf(stderr, "usage: empty_loader [--full | --kprobe] [--floor] [--route R]\n");
		return 2;
	}
	/* Blocked until sigsuspend(), so a signal cannot slip in before we wait. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	skel = bench_empty_bpf__open();
	if (!skel) {
		fprintf(stderr, "empty_loader: opening bench_empty failed: %s\n", strerror(errno));
		return 1;
	}
	drain_hooks(skel, hooks);
	err = load(skel, hooks, &opts);
	if (err) {
		fprintf(stderr, "empty_loader: loading bench_empty failed: %s\n", strerror(-err));
		goto cleanup;
	}
	err = bench_empty_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "empty_loader: attaching bench_empty failed: %s\n", strerror(-err));
		goto cleanup;
	}
	err = attach_kprobes(hooks, opts.set, links);
	if (err)
		goto cleanup;
	/*
	 * Run-time stats on while we hold the fd: kernel.bpf_stats_enabled is one
	 * switch for the machine, and another user of a shared one turning it off
	 * mid-phase (seen) left every program's run_time_ns flat.
	 */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0)
		fprintf(stderr,
			"empty_loader: BPF_ENABLE_STATS failed (%s): kernel.bpf_stats_enabled "
			"alone keeps the stats\n",
			strerror(errno));
	printf("attached\n");
	fflush(stdout);

	while (!stop)
		sigsuspend(&old);

cleanup:
	if (stats_fd >= 0)
		close(stats_fd);
	for (i = 0; i < NR_DRAIN_HOOKS; i++)
		bpf_link__destroy(links[i]);
	bench_empty_bpf__destroy(skel);
	return err ? 1 : 0;
}
