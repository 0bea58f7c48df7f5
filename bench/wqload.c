// SPDX-License-Identifier: GPL-2.0
/*
 * wqload: ordinary workqueue events at a chosen rate, none of them a drain: the
 * load every workqueue hook of drainstat sees all day on a busy machine. Each
 * of PAIRS threads writes a byte to the master side of a pseudo-terminal and
 * reads it back from the slave side: the write queues the tty's flush work
 * (flush_to_ldisc, on system_unbound_wq), and the read returns once that work
 * has run, so each round trip is one work queued, started and ended. The
 * threads pace themselves every millisecond to RATE round trips a second in
 * all.
 *
 *   wqload -r RATE [-d SECONDS] [-p PAIRS]
 *
 * Prints one line: the round trips made, the seconds taken and their rate.
 * A rate the machine cannot reach is run as fast as it goes, and the line says
 * so. Exit codes: 0 ok, 64 usage, 1 failure (one line on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define MAX_PAIRS 64
#define TICK_NS	  1000000L /* pacing: a batch of round trips every millisecond */
#define NS	  1000000000L

struct pair {
	pthread_t thread;
	int master, slave;
	double per_tick; /* round trips due each tick */
	long ticks;
	long done;
	int err;
};

static long ns_of(const struct timespec *t)
{
	return t->tv_sec * NS + t->tv_nsec;
}

static int open_pair(struct pair *p)
{
	struct termios t;

	if (openpty(&p->master, &p->slave, NULL, NULL, NULL))
		return -errno;
	/* raw: each byte reaches the reader at once, nothing echoed back */
	if (tcgetattr(p->slave, &t))
		return -errno;
	cfmakeraw(&t);
	return tcsetattr(p->slave, TCSANOW, &t) ? -errno : 0;
}

static int round_trip(const struct pair *p)
{
	char c = 'w';

	if (write(p->master, &c, 1) != 1 || read(p->slave, &c, 1) != 1)
		return -errno;
	return 0;
}

/* Each tick, the round trips due by then (a fraction carried over), then sleep to the next. */
static void *run(void *arg)
{
	struct pair *p = arg;
	struct timespec next;
	double due = 0;
	long tick;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (tick = 0; tick < p->ticks; tick++) {
		for (due += p->per_tick; due >= 1; due--, p->done++)
			if ((p->err = round_trip(p)))
				return NULL;
		next.tv_nsec += TICK_NS;
		if (next.tv_nsec >= NS) {
			next.tv_nsec -= NS;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: wqload -r RATE [-d SECONDS] [-p PAIRS]\n"
		   "  RATE round trips a second in all (each one workqueue work),\n"
		   "  for SECONDS (10), over PAIRS pseudo-terminals (4, at most 64)\n");
}

static int parse(int argc, char **argv, long *rate, long *seconds, int *pairs)
{
	char *end;
	long v;
	int opt;

	while ((opt = getopt(argc, argv, "r:d:p:h")) != -1) {
		if (opt == 'h')
			return usage(stdout), 1;
		if (opt != 'r' && opt != 'd' && opt != 'p')
			return usage(stderr), -EINVAL;
		errno = 0;
		v = strtol(optarg, &end, 10);
		if (errno || *end || v <= 0 || (opt == 'p' && v > MAX_PAIRS))
			return fprintf(stderr, "wqload: bad -%c: %s\n", opt, optarg), -EINVAL;
		if (opt == 'r')
			*rate = v;
		else if (opt == 'd')
			*seconds = v;
		else
			*pairs = (int)v;
	}
	if (!*rate || optind != argc)
		return usage(stderr), -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	struct pair pairs[MAX_PAIRS] = {};
	long rate = 0, seconds = 10, done = 0;
	struct timespec t0, t1;
	int n = 4, i, err;
	double took;

	err = parse(argc, argv, &rate, &seconds, &n);
	if (err)
		return err > 0 ? 0 : 64;
	for (i = 0; i < n; i++) {
		err = open_pair(&pairs[i]);
		if (err) {
			fprintf(stderr, "wqload: a pseudo-terminal: %s\n", strerror(-err));
			return 1;
		}
		pairs[i].per_tick = (double)rate / n * TICK_NS / NS;
		pairs[i].ticks = seconds * (NS / TICK_NS);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		if ((err = pthread_create(&pairs[i].thread, NULL, run, &pairs[i]))) {
			fprintf(stderr, "wqload: a thread: %s\n", strerror(err));
			return 1;
		}
	for (i = 0; i < n; i++) {
		pthread_join(pairs[i].thread, NULL);
		done += pairs[i].done;
		if (pairs[i].err) {
			fprintf(stderr, "wqload: a round trip: %s\n", strerror(-pairs[i].err));
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(ns_of(&t1) - ns_of(&t0)) / NS;
	printf("%ld round trips in %.2f s: %.0f a second%s\n", done, took, done / took,
	       done / took < 0.95 * rate ? " (short of the rate asked)" : "");
	return 0;
}
