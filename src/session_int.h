/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A run's state, shared by session.c (the loop: reports, the export, signals)
 * and setup.c with its steps (setup_int.h: the checks and the start, in the
 * order of drainstat(8)'s exit codes), and the few helpers both use.
 */
#ifndef SESSION_INT_H
#define SESSION_INT_H

#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <sys/utsname.h>

#include "cgroups.h"
#include "cli.h"
#include "monotonic.h"
#include "export.h"
#include "heap.h"
#include "ksyms.h"
#include "model.h"
#include "snapshot.h"
#include "probe.h"
#include "hooks.h"
#include "slowlog.h"
#include "tracer.h"
#include "verify.h"

/*
 * What setup needs from kallsyms, scanned for before the load: the drain work
 * function at SYM_WORK_FN, then the hooked functions hooked only where
 * kallsyms has them (hooks.c's rows if_in_kallsyms, in order), last the
 * alternatives: a kernel's kretprobes return through one trampoline or the
 * other.
 */
#define SYM_WORK_FN	0
#define SYM_TRAMPOLINES 2
#define SYM_MAX		(1 + HOOK_FNS_MAX + SYM_TRAMPOLINES)

/* The scan for them, in a thread of its own while the main thread checks. */
struct symbol_scan {
	pthread_t thread;
	bool running;		    /* started and not joined yet */
	int err;		    /* ksyms__scan()'s */
	__u64 ns;		    /* how long it took */
	const char *names[SYM_MAX]; /* nr of them, set before the scan starts */
	size_t nr;
	/*
	 * the first nr_scanned of them looked for: all, or SYM_WORK_FN's alone
	 * where no mode that hooks the drain functions can be tried
	 */
	size_t nr_scanned;
	bool scanned;	      /* a scan ran */
	__u64 addrs[SYM_MAX]; /* 0 for none */
	bool found;	      /* syms known for the names scanned for */
	struct tracer_symbols syms;
};

struct session {
	const struct options *opts;
	struct ksyms *ksyms;
	struct tracer *tracer;
	struct verify verify; /* the drains in flight checked against their callers */
	int tracefs_mounted;
	struct utsname uts;
	char blind_spots[1024];	 /* QPW, tracepoint mode, no IPIs, no fadvise: 600 bytes */
	char fadvise_cause[160]; /* why the fadvise calls are not traced: 90 bytes */
	__u64 cgroup_id;	 /* --cgroup's */
	__u32 key_parts; /* SITE_KEY_*: --by, without cgroup where cgroup v2 is not mounted */
	struct cgroups *cgroups; /* with the cgroup key: its ids named */
	struct podnames *pods;	 /* with cgroups: their pods' names, from /var/log/pods */
	struct symbol_scan scan;
	int symbols_code; /* the exit code when the symbols are not there */
	struct btf_facts btf;
	char filter_cpus[1024];	 /* -C as a CPU list */
	struct slowlog *slowlog; /* -T */
	struct model_info info;
	struct prom_memory *prom_memory; /* --prom: what the exports before said */
	struct export *export;		 /* --prom */
	char *prom_shown;		 /* --prom's path, escaped for messages */
	int export_err;			 /* the failure the last export said, 0 */
	int pidfd;			 /* -p: readable once the process has exited; -1 */
	unsigned int fds_at_start;	 /* open before setup: stdio, inherited ones */
	struct tracer_opts topts;	 /* the tracer's, set by setup.c once the target is known */
	struct tracer_needs needs;	 /* what the run needs, once found */
	/*
	 * The report loop's snapshots, here rather than on its stack: each holds
	 * two CPU masks of DRAINSTAT_MAX_CPUS bits (2 KB), and drainstat runs
	 * under ulimit -s 24 (tests/host/test_harm.sh).
	 */
	struct snapshot prev, spare, watched;
};

/* One line on stderr: "drainstat: " and the message. */
static inline void say(const char *fmt, va_list ap)
{
	fprintf(stderr, "drainstat: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* The error said in one line on stderr; returns code, the exit code that goes with it. */
static inline int say_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline int say_error(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	return code;
}

/* -v (verbose): what setup found, on stderr so the report stays clean. */
static inline void note(bool verbose, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline void note(bool verbose, const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

/* True once the process of pidfd has exited: a zombie, or reaped. */
static inline bool has_exited(int pidfd)
{
	struct pollfd pfd = {.fd = pidfd, .events = POLLIN};

	return pidfd >= 0 && poll(&pfd, 1, 0) == 1;
}

/* -s and -T show each distinct stack: every drain's is walked (see bpf/, every_stack). */
static inline bool walks_every_stack(const struct options *o)
{
	return o->stacks || o->slow_ns;
}

/*
 * The checks, then the tracer started, the symbols loaded and the -T log
 * opened (setup.c): EXIT_OK, or the exit code of the first that failed.
 */
int setup__run(struct session *s);

#endif /* SESSION_INT_H */
