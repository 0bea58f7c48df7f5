// SPDX-License-Identifier: GPL-2.0
/*
 * empty_loader [--full | --kprobe] [--floor]: attaches the empty programs of
 * bpf/bench_empty.bpf.c, says "attached" on stdout, and holds them until SIGINT
 * or SIGTERM. bench/run and bench/vm.sh read their run_time_ns beside
 * drainstat's to price drainstat's programs.
 *
 * Always the tracepoint set; --full adds the fentry/fexit drain hooks, --kprobe
 * the kprobe/kretprobe ones. The others are not even loaded: fentry programs
 * fail to load where the kernel refuses fentry. --floor puts floor_fadvise_*
 * (a clock read each) on the fadvise syscall in place of the empty ones.
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

static int parse_args(int argc, char **argv, enum hook_set *set, bool *floor)
{
	int i;

	*set = SET_TRACEPOINTS;
	*floor = false;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--full") && *set == SET_TRACEPOINTS)
			*set = SET_FULL;
		else if (!strcmp(argv[i], "--kprobe") && *set == SET_TRACEPOINTS)
			*set = SET_KPROBE;
		else if (!strcmp(argv[i], "--floor") && !*floor)
			*floor = true;
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

/* Loads the tracepoint set (fadvise: the floor or the empty pair) and the drain hooks of SET. */
static int load(struct bench_empty_bpf *skel, const struct drain_hook *hooks, enum hook_set set,
		bool floor)
{
	struct btf_facts btf;
	int i;

	for (i = 0; i < NR_DRAIN_HOOKS; i++)
		bpf_program__set_autoload(hooks[i].prog, hooks[i].set == set);
	bpf_program__set_autoload(skel->progs.empty_fadvise_enter, !floor);
	bpf_program__set_autoload(skel->progs.empty_fadvise_exit, !floor);
	bpf_program__set_autoload(skel->progs.floor_fadvise_enter, floor);
	bpf_program__set_autoload(skel->progs.floor_fadvise_exit, floor);
	/* a tp_btf program on a missing tracepoint (6.1 has no ipi_send_cpu) fails the load */
	probe__btf_facts(&btf);
	if (!btf.ipi_send_cpu)
		bpf_program__set_autoload(skel->progs.empty_ipi_send_cpu, false);
	/* tracepoint/ programs find their event in tracefs, mounted privately if need be */
	if (probe__mount_tracefs("/sys/kernel/tracing") < 0) {
		fprintf(stderr, "empty_loader: no tracefs: no fadvise baseline\n");
		bpf_program__set_autoload(skel->progs.empty_fadvise_enter, false);
		bpf_program__set_autoload(skel->progs.empty_fadvise_exit, false);
		bpf_program__set_autoload(skel->progs.floor_fadvise_enter, false);
		bpf_program__set_autoload(skel->progs.floor_fadvise_exit, false);
	}
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
	sigset_t block, old;
	enum hook_set set;
	int err, i, stats_fd = -1;
	bool floor;

	if (parse_args(argc, argv, &set, &floor)) {
		fprintf(stderr, "usage: empty_loader [--full | --kprobe] [--floor]\n");
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
	err = load(skel, hooks, set, floor);
	if (err) {
		fprintf(stderr, "empty_loader: loading bench_empty failed: %s\n", strerror(-err));
		goto cleanup;
	}
	err = bench_empty_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "empty_loader: attaching bench_empty failed: %s\n", strerror(-err));
		goto cleanup;
	}
	err = attach_kprobes(hooks, set, links);
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
