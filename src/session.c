// SPDX-License-Identifier: GPL-2.0
/*
 * A run: signals caught, setup (setup.c), the export started, then a report
 * (or an export) each interval until a stop signal, -d, COUNT or the -p
 * process's end, and the final one; the -T log and the in-flight watch between.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpulist.h"
#include "escape.h"
#include "kretprobe.h"
#include "monotonic.h"
#include "output.h"
#include "podnames.h"
#include "session.h"
#include "session_int.h"

#define ISOLATED_PATH  "/sys/devices/system/cpu/isolated"
#define NOHZ_FULL_PATH "/sys/devices/system/cpu/nohz_full"

/* Set from the signal handler: which signal asked us to stop; SIGHUP asks for a report. */
static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t report_requested;

static void on_signal(int sig)
{
	if (sig == SIGHUP) {
		report_requested = 1;
		return;
	}
	/*
	 * a second Ctrl-C really kills: the kernel drops fd-based links with us,
	 * not the kretprobe events made in tracefs
	 */
	if (stop_signal && sig == SIGINT) {
		kretprobes__abandon();
		signal(SIGINT, SIG_DFL);
		raise(SIGINT);
	}
	stop_signal = sig;
}

/* A reader gone: killed as by default, kprobe mode's kretprobe events in tracefs removed first. */
static void on_sigpipe(int sig)
{
	kretprobes__abandon();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_signals(void)
{
	/* SA_RESTART: a write blocked on stdout goes on (ppoll() returns all the same) */
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART}, pipe;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* SIGPIPE as found: where it kills, it kills after the cleanup that needs no process */
	if (!sigaction(SIGPIPE, NULL, &pipe) && pipe.sa_handler == SIG_DFL) {
		pipe.sa_handler = on_sigpipe;
		pipe.sa_flags = 0;
		sigemptyset(&pipe.sa_mask);
		sigaction(SIGPIPE, &pipe, NULL);
	}
	/* past RLIMIT_FSIZE a write fails with EFBIG, said as a full disk, not a silent kill */
	signal(SIGXFSZ, SIG_IGN);
}

/*
 * Sleeps until deadline or a stop signal, whichever comes first. The signals
 * are blocked between the check of stop_signal and the wait, and ppoll()
 * unblocks them atomically: one that arrives in between is not slept through.
 */
static void sleep_until(__u64 deadline, int slow_fd, int pidfd)
{
	struct pollfd pfd[2] = {{.fd = slow_fd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
	sigset_t block, orig;
	struct timespec ts;
	__u64 now;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &orig);
	now = now_ns();
	if (!stop_signal && !report_requested && now < deadline) {
		ts.tv_sec = (time_t)((deadline - now) / 1000000000ULL);
		ts.tv_nsec = (long)((deadline - now) % 1000000000ULL);
		/* the slow-drain ring buffer (-T) and the traced process's end (-p) wake us too */
		ppoll(pfd, 2, &ts, &orig);
	}
	sigprocmask(SIG_SETMASK, &orig, NULL);
}

/*
 * -T reads its events a batch at a time, for at most this long (and not past
 * the next report): an event costs up to UMAPS_EVENT_NS to name (umaps.h), a
 * stop signal, -d and reports wait no longer than the batch and its last event.
 */
#define SLOW_BATCH_NS (200ULL * 1000000)
/* At the end, the events left are counted unread (slow_unread) for at most this long. */
#define SLOW_DROP_NS (100ULL * 1000000)

/* --prom exports every 15 s by default: node_exporter's usual scrape interval. */
#define PROM_INTERVAL_NS (15ULL * 1000000000ULL)

static __u64 interval_of(const struct options *o)
{
	if (o->interval_ns)
		return o->interval_ns;
	return o->prom_path ? PROM_INTERVAL_NS : 0;
}

/* A message naming what failed writing the export, with its path escaped. */
static void describe_export_error(const struct session *s, int err, char *msg, size_t size)
{
	export__describe(s->prom_shown, err, export__why(s->export), msg, size);
}

/*
 * An export that fails in flight is said once, and once more when it works
 * again; the run goes on. Not when another writer holds the lock (-EBUSY) or
 * the directory is no longer at its path (-ESTALE: removed, or moved and never
 * followed): nothing will come of a next try; nor for the last export (the
 * file would not hold the run's numbers): those end the run, exit 74.
 */
/* Which report: the export's first fails the start, as its last fails the end. */
enum report_moment { REPORT_FIRST, REPORT_EVERY, REPORT_LAST };

static int export_now(struct session *s, const struct model *m, enum report_moment when)
{
	char msg[512];
	int err = output__export(s->export, s->opts, m, s->prom_memory);

	if (!err && s->export_err)
		fprintf(stderr, "drainstat: %s written again\n", s->prom_shown);
	if (!err) {
		s->export_err = 0;
		return EXIT_OK;
	}
	describe_export_error(s, err, msg, sizeof(msg));
	if (err == -EBUSY || err == -ESTALE || when != REPORT_EVERY)
		return say_error(EXIT_EXPORT, "%s%s", msg,
				 when == REPORT_LAST ? " (the final export)" : "");
	if (err != s->export_err)
		fprintf(stderr,
			"drainstat: %s (the previous export stays; trying again every %g s)\n", msg,
			(double)interval_of(s->opts) / 1e9);
	s->export_err = err;
	return EXIT_OK;
}

/* A report that cannot reach stdout ends the run; a reader that closed the pipe, quietly. */
static int stdout_failed(int err)
{
	if (err == -EPIPE)
		return EXIT_RUNTIME;
	return say_error(EXIT_RUNTIME, "cannot write the report to stdout: %s", strerror(-err));
}

/* One report: EXIT_OK to go on, or the exit code that ends the run (said). */
static int report(struct session *s, const struct snapshot *cur, const struct snapshot *prev,
		  __u64 start_ns, enum report_moment when)
{
	struct model m;
	int err, code;

	/* the export is cumulative (counters), the other outputs per interval */
	err = model__build(cur, s->opts->prom_path ? NULL : prev, start_ns, s->ksyms, &s->info, &m);
	if (!err) {
		/* not a Kubernetes node, or a directory not to be trusted: no pod names */
		if (s->pods)
			podnames__refresh(s->pods, now_ns());
		err = model__name_cgroups(&m, s->cgroups, s->pods);
		if (err)
			model__free(&m);
	}
	if (err)
		return say_error(EXIT_RUNTIME, "cannot build the report: %s", strerror(-err));
	if (s->export) {
		code = export_now(s, &m, when);
	} else {
		err = output__report(s->opts, &m);
		code = err ? stdout_failed(err) : EXIT_OK;
	}
	model__free(&m);
	return code;
}

/*
 * Which CPUs of works in flight are isolated: it can change at run time
 * (cpuset partitions); and what a stall's cause rests on, for the CPUs of the
 * pending works (their fair servers).
 */
static void read_isolation(struct snap_in_flight *f)
{
	__u64 pending[DRAINSTAT_MAX_CPUS / 64] = {0};
	int i;

	if (!f->nr_works)
		return;
	cpulist__read(ISOLATED_PATH, f->isolated);
	cpulist__read(NOHZ_FULL_PATH, f->nohz_full);
	for (i = 0; i < f->nr_works; i++) {
		__u32 cpu = f->works[i].target_cpu;

		if (!f->works[i].ws.start_ns && cpu < DRAINSTAT_MAX_CPUS)
			pending[cpu / 64] |= 1ULL << (cpu % 64);
	}
	stall__read_system("", pending, &f->system);
}

/*
 * One report from a fresh snapshot read into *spare (its buffers reused); the
 * reading becomes *prev and the old *prev the next spare. EXIT_OK, or the exit
 * code that ends the run.
 */
static int report_now(struct session *s, struct snapshot *prev, struct snapshot *spare,
		      bool since_prev, __u64 start_ns, bool last)
{
	struct snapshot old;
	int err, code;

	err = tracer__snapshot(s->tracer, spare);
	/* the events of the drains read, at least, are read or counted */
	if (!err && last)
		tracer__drop_slow(s->tracer, now_ns() + SLOW_DROP_NS, spare);
	if (!err && s->slowlog)
		spare->counters[CNT_UFRAMES_OVER_BUDGET] = slowlog__uframes_over_budget(s->slowlog);
	if (!err)
		err = verify__drains(&s->verify, spare, s->ksyms, s->tracer, now_ns());
	if (err)
		return say_error(EXIT_RUNTIME, "cannot read the BPF maps: %s", strerror(-err));
	read_isolation(&spare->in_flight);
	code =
	    report(s, spare, since_prev ? prev : NULL, start_ns, last ? REPORT_LAST : REPORT_EVERY);
	old = *prev;
	*prev = *spare;
	*spare = old;
	return code;
}

/* -T: the drains in flight past the threshold, logged as they pass it. */
static int watch_in_flight(struct session *s, struct snapshot *snap)
{
	struct model m;
	int err;

	err = tracer__in_flight(s->tracer, snap, s->opts->slow_ns);
	if (!err)
		err = verify__drains(&s->verify, snap, s->ksyms, s->tracer, now_ns());
	if (err)
		return say_error(EXIT_RUNTIME, "cannot read the BPF maps: %s", strerror(-err));
	if (!snap->in_flight.nr_drains)
		return EXIT_OK;
	read_isolation(&snap->in_flight);
	err = model__build(snap, NULL, snap->taken_ns, s->ksyms, &s->info, &m);
	if (err)
		return say_error(EXIT_RUNTIME, "cannot build the report: %s", strerror(-err));
	slowlog__in_flight(s->slowlog, &m);
	model__free(&m);
	return EXIT_OK;
}

/* -T: a batch of the slow drains the ring buffer holds, and the drains in flight when due. */
static int run_slowlog(struct session *s, struct snapshot *watched, __u64 *next_watch, __u64 due)
{
	__u64 batch_end = now_ns() + SLOW_BATCH_NS;
	int code = EXIT_OK, err;

	if (!s->slowlog)
		return EXIT_OK;
	tracer__consume_slow(s->tracer, due < batch_end ? due : batch_end);
	if (now_ns() >= *next_watch) {
		code = watch_in_flight(s, watched);
		*next_watch = now_ns() + slowlog__watch_ns(s->slowlog);
	}
	err = output__flush(stdout);
	return code == EXIT_OK && err ? stdout_failed(err) : code;
}

/* -p: the traced process has exited; the run ends as -d would. */
static bool traced_exited(const struct session *s)
{
	if (!has_exited(s->pidfd))
		return false;
	fprintf(stderr, "drainstat: process %d exited\n", s->opts->pid);
	return true;
}

/*
 * The next report's time after one due at next: the schedule goes on, unless
 * it fell behind (a SIGSTOP, an overrun): then the report just made covered the
 * gap, and the schedule starts again from now.
 */
static __u64 next_report(__u64 next, __u64 interval)
{
	__u64 now = now_ns();

	return next + interval > now ? next + interval : now + interval;
}

/*
 * Reports until COUNT, -d, a signal or the traced process's exit; always ends
 * with what was not reported yet. SIGHUP reports at once (the interval so far,
 * or the export) and keeps the schedule; it does not count towards COUNT.
 */
static int trace_loop(struct session *s)
{
	const struct options *o = s->opts;
	struct snapshot *prev = &s->prev, *spare = &s->spare, *watched = &s->watched;
	__u64 interval = interval_of(o), start = now_ns();
	__u64 end = o->duration_ns ? start + o->duration_ns : ~0ULL;
	__u64 next = interval ? start + interval : end, reports = 0, due;
	__u64 watch = s->slowlog ? slowlog__watch_ns(s->slowlog) : 0, next_watch = start + watch;
	bool scheduled, exited = false, last;
	int code;

	for (;;) {
		due = next < end ? next : end;
		sleep_until(watch && next_watch < due ? next_watch : due,
			    tracer__slow_fd(s->tracer), s->pidfd);
		/* stopping: a last event at most, the rest counted (report_now()) */
		code = run_slowlog(s, watched, &next_watch, stop_signal ? now_ns() : due);
		if (code != EXIT_OK)
			break;
		exited = exited || traced_exited(s);
		scheduled = stop_signal || exited || now_ns() >= due;
		if (!scheduled && !report_requested)
			continue;
		report_requested = 0;
		last = stop_signal || exited || now_ns() >= end ||
		       (scheduled && o->count && reports + 1 >= o->count);
		code = report_now(s, prev, spare, interval && prev->taken_ns, start, last);
		if (code != EXIT_OK)
			break;
		if (!scheduled)
			continue;
		reports++;
		if (last)
			break;
		next = next_report(next, interval);
	}
	snapshot__free(prev);
	snapshot__free(spare);
	snapshot__free(watched);
	return code;
}

/*
 * A first, empty export at start: a bad path fails now, and node_exporter has
 * a file. The empty snapshot is the report loop's spare, not used yet.
 */
static int start_export(struct session *s)
{
	struct snapshot *empty = &s->spare;
	struct export_why why;
	char msg[512];
	int err, n, code;

	if (!s->opts->prom_path)
		return EXIT_OK;
	s->prom_shown = escape__dup(s->opts->prom_path);
	s->prom_memory = prom_memory__new();
	if (!s->prom_memory || !s->prom_shown)
		return say_error(EXIT_RUNTIME, "cannot start the export: %s", strerror(ENOMEM));
	err = export__open(s->opts->prom_path, &s->export, &why);
	if (err) {
		export__describe(s->prom_shown, err, &why, msg, sizeof(msg));
		return say_error(EXIT_EXPORT, "%s", msg);
	}
	/* an empty export at once: node_exporter shows drainstat runs */
	empty->taken_ns = now_ns();
	code = report(s, empty, NULL, empty->taken_ns, REPORT_FIRST);
	if (code != EXIT_OK)
		return code;
	/* ours now: the temp files beside it are a killed writer's */
	n = export__remove_stale(s->export);
	if (n)
		note(s->opts->verbose, "removed %d temp file%s a killed drainstat left beside %s",
		     n, n == 1 ? "" : "s", s->prom_shown);
	note(s->opts->verbose, "exporting to %s every %g s", s->prom_shown,
	     (double)interval_of(s->opts) / 1e9);
	return EXIT_OK;
}

/* -v at exit: how full the sites array came, local drains' share apart (--max-sites). */
static void note_site_slots(const struct session *s)
{
	struct tracer_site_slots slots;

	tracer__site_slots(s->tracer, &slots);
	note(s->opts->verbose, "%u of %u site slots taken, %u of them by local drains (at most %u)",
	     slots.used, slots.max, slots.local, slots.local_max);
}

/* -v at exit: how the cgroups were named (the tree walks are what a user could steer). */
static void note_cgroups(const struct session *s, const struct cgroups *cg, const char *whose)
{
	if (cg)
		note(s->opts->verbose, "%s cgroups: %u named by the kernel, %u walks of the tree",
		     whose, cgroups__asked(cg), cgroups__walks(cg));
}

static void teardown(struct session *s)
{
	__u64 walks;

	if (s->tracer)
		note_site_slots(s);
	if (s->tracer && !tracer__stack_walks(s->tracer, &walks))
		note(s->opts->verbose, "%llu kernel stacks walked (%s)", (unsigned long long)walks,
		     walks_every_stack(s->opts)
			 ? "every drain's: -s or -T"
			 : "one per caller and comm where the caller is known without one");
	note_cgroups(s, s->cgroups, "the reports'");
	if (s->slowlog)
		note_cgroups(s, slowlog__cgroups(s->slowlog), "-T's");
	tracer__free(s->tracer);
	verify__free(&s->verify);
	ksyms__free(s->ksyms);
	cgroups__free(s->cgroups);
	podnames__free(s->pods);
	slowlog__free(s->slowlog);
	prom_memory__free(s->prom_memory);
	export__free(s->export);
	free(s->prom_shown);
	if (s->pidfd >= 0)
		close(s->pidfd);
}

/*
 * 0, 1 and 2 taken by /dev/null where closed, whatever happens: a file opened
 * later would take a closed one's place (a BPF map's fd, the export). Where
 * the reports go must be there: stdout closed is an error if they go there.
 */
static int fill_stdio(const struct options *o)
{
	bool out_closed = fcntl(STDOUT_FILENO, F_GETFD) < 0;
	int fd;

	do {
		fd = open("/dev/null", O_RDWR);
	} while (fd >= 0 && fd <= STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
	if (out_closed && (!o->prom_path || o->slow_ns))
		return say_error(EXIT_RUNTIME, "stdout is closed: nowhere to print %s",
				 o->prom_path ? "the -T log" : "the report");
	return EXIT_OK;
}

/* The session in the heap, not on the stack: libbpf's load runs deep under it. */
int session__run(const struct options *opts)
{
	struct session *s = calloc(1, sizeof(*s));
	int code, err;

	if (!s)
		return say_error(EXIT_RUNTIME, "cannot start: %s", strerror(ENOMEM));
	*s = (struct session){.opts = opts, .pidfd = -1};
	install_signals();
	code = fill_stdio(opts);
	if (code == EXIT_OK)
		code = setup__run(s);
	if (code == EXIT_OK)
		code = start_export(s);
	if (code == EXIT_OK) {
		err = output__start(opts, &s->info);
		if (err)
			code = stdout_failed(err);
	}
	if (code == EXIT_OK) {
		/* every interval frees and allocates megabytes again: the report's rows */
		heap_keep(true);
		code = trace_loop(s);
	}
	teardown(s);
	free(s);
	return code;
}
