// SPDX-License-Identifier: GPL-2.0
/*
 * empty_loader: attaches the empty programs of bpf/bench_empty.bpf.c, says
 * "attached" on stdout, and holds them until SIGINT or SIGTERM. bench/run reads
 * their run_time_ns beside drainstat's to price drainstat's filter path.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bench_empty.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct bench_empty_bpf *skel;
	sigset_t block, old;
	int err;

	/* Blocked until sigsuspend(), so a signal cannot slip in before we wait. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	skel = bench_empty_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "empty_loader: loading bench_empty failed: %s\n", strerror(errno));
		return 1;
	}
	err = bench_empty_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "empty_loader: attaching bench_empty failed: %s\n", strerror(-err));
		goto cleanup;
	}
	printf("attached\n");
	fflush(stdout);

	while (!stop)
		sigsuspend(&old);

cleanup:
	bench_empty_bpf__destroy(skel);
	return err ? 1 : 0;
}
