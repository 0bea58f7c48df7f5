/* SPDX-License-Identifier: GPL-2.0 */
/* The command line: options, their parsers, and the exit codes the man page lists. */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "drainstat.h"
#include "report_prom.h"
#include "tracer.h"
#include "units.h"

/* --max-sites, --max-stacks: bounds that keep the kernel's memory modest. */
#define DRAINSTAT_MAX_SITES  65536
#define DRAINSTAT_MAX_STACKS 262144

/* INTERVAL: at least 10 ms (0.01 s); shorter, printing the reports would take a CPU. */
#define DRAINSTAT_INTERVAL_MIN_NS 10000000ULL

enum exit_code {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,      /* a map could not be read, out of memory, ... */
	EXIT_USAGE = 64,       /* bad arguments */
	EXIT_NO_PROCESS = 65,  /* -p names no running process */
	EXIT_NO_CGROUP = 66,   /* --cgroup names no cgroup v2 directory */
	EXIT_NO_BTF = 69,      /* the kernel exposes no BTF */
	EXIT_NO_SYMBOL = 70,   /* no lru_add_drain_per_cpu in /proc/kallsyms */
	EXIT_NO_TRACEFS = 71,  /* tracefs not mounted and cannot be */
	EXIT_NO_KALLSYMS = 72, /* /proc/kallsyms unreadable or its addresses hidden */
	EXIT_BPF = 73,	       /* the BPF programs failed to load or attach */
	EXIT_EXPORT = 74,      /* the --prom file cannot be written */
	EXIT_NO_PERM = 77,     /* neither root nor CAP_BPF + CAP_PERFMON */
};

struct options {
	__u64 duration_ns;    /* -d: stop after this long; 0 = until a signal */
	__u64 interval_ns;    /* INTERVAL: 0 = one report at the end */
	__u64 count;	      /* COUNT: reports to print with INTERVAL; 0 = unbounded */
	pid_t pid;	      /* -p: 0 = every process */
	enum drain_mode mode; /* --mode */
	bool stacks;	      /* -s */
	const char *comm;     /* -c: only tasks of this name */
	const char *cgroup;   /* --cgroup: only tasks in this cgroup (v2 path) */
	__u32 by;	      /* --by: SITE_KEY_* bits, what keys a site beside its stack */
	bool by_set;	      /* --by given: cgroup asked for, not defaulted */
	bool victims_set;     /* -C given */
	__u64 victims[DRAINSTAT_MAX_CPUS / 64]; /* -C: only works to these CPUs */
	bool json;				/* -j: one JSON object per report */
	__u64 slow_ns;				/* -T: the slow-drain log's threshold; 0: none */
	__u64 stuck_ns;				/* --stuck: a drain in flight this long is stuck */
	const char *prom_path;			/* --prom: Prometheus textfile export, cumulative */
	__u32 max_sites;			/* --max-sites: 0 = the BPF object's default */
	__u32 max_stacks;			/* --max-stacks: 0 = the BPF object's default */
	__u32 prom_sites;	      /* --prom-sites: sites kept by name, the rest "other" */
	enum prom_cgroup prom_cgroup; /* --prom-cgroup: the export's cgroup labels */
	bool histograms;	      /* -H */
	bool all_cpus;		      /* --all-cpus */
	bool ipis;		      /* --ipis (--no-ipis: the default) */
	int verbose;		      /* -v, repeatable */
};

/* What the command line asks for: a run, or a text to print on stdout before exiting 0. */
enum cli_action {
	CLI_RUN = 0,
	CLI_HELP,    /* -?, --help */
	CLI_USAGE,   /* --usage */
	CLI_VERSION, /* -V, --version */
};

/* The buffer cli__parse_args() writes its error into: a quoted argument, escaped. */
#define CLI_ERROR_LEN 2048

/*
 * Parses argv (permuting it, as getopt does) into opts, knowing drainstat's options
 * only. Prints nothing: returns a cli_action, or -EINVAL with one line in err (no
 * newline, every quoted argument escaped).
 */
int cli__parse_args(int argc, char **argv, struct options *opts, char *err, size_t size);
/*
 * cli__parse_args(), then for an error "drainstat: ERR (see drainstat --help)" on
 * stderr and exit EXIT_USAGE; for -?, --usage, -V their text on stdout and exit 0.
 */
void cli__parse(int argc, char **argv, struct options *opts);

/* INTERVAL: seconds as units__parse_seconds(), and at least DRAINSTAT_INTERVAL_MIN_NS. 0 or
 * -EINVAL. */
int cli__parse_interval(const char *s, __u64 *ns);
/* A positive decimal integer no larger than max. 0 or -EINVAL. */
int cli__parse_positive(const char *s, __u64 max, __u64 *out);

#endif /* CLI_H */
