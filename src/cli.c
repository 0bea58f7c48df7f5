// SPDX-License-Identifier: GPL-2.0
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "escape.h"

#define SECONDS_MAX (366ULL * 24 * 3600)

const char *argp_program_version = "drainstat " DRAINSTAT_VERSION;
const char *argp_program_bug_address = "<https://github.com/drainstat/drainstat/issues>";

static const char doc[] =
    "Show who triggers lru_add_drain_all(), from which kernel call site, how many CPUs each "
    "drain hits, how long each target CPU takes to start (dispatch) and run its drain work, "
    "how long the caller waits, and which CPUs pay.\v"
    "Without INTERVAL, traces until Ctrl-C, SIGTERM or -d, then prints one report. With "
    "INTERVAL, prints a report of the last INTERVAL seconds every INTERVAL seconds, COUNT "
    "times.\n\nExamples:\n"
    "  drainstat              # trace until Ctrl-C, then report\n"
    "  drainstat -d 10 -s     # 10 seconds, with each site's kernel stacks\n"
    "  drainstat 5 3          # three 5-second reports\n"
    "  drainstat -p 1234 -H   # drains caused by process 1234, with histograms";

#define STR_(x) #x
#define STR(x)	STR_(x)

enum { OPT_PROM = 1000, OPT_PROM_SITES, OPT_CGROUP, OPT_MAX_SITES, OPT_MAX_STACKS, OPT_STUCK };

/* --stuck's default: a drain takes microseconds; a second in flight is an incident. */
#define STUCK_DEFAULT_NS 1000000000ULL

static const char args_doc[] = "[INTERVAL [COUNT]]";

static const struct argp_option options[] = {
    {"duration", 'd', "SECONDS", 0, "Trace for SECONDS, then report and exit", 0},
    {"pid", 'p', "PID", 0, "Only drains and fadvise calls of process PID", 0},
    {"stacks", 's', NULL, 0, "Print each site's kernel stacks", 0},
    {"histograms", 'H', NULL, 0, "Print dispatch, run and wait histograms per site", 0},
    {"verbose", 'v', NULL, 0, "Say more about setup (repeat for libbpf's messages)", 0},
    {"comm", 'c', "COMM", 0, "Only drains and fadvise calls of tasks named COMM", 0},
    {"cgroup", OPT_CGROUP, "PATH", 0,
     "Only drains and fadvise calls of tasks in the cgroup v2 at PATH", 0},
    {"cpus", 'C', "CPULIST", 0, "Only works to these (victim) CPUs, e.g. 2-3,6: the isolated ones",
     0},
    {"threshold", 'T', "DURATION", 0,
     "Log each drain slower than DURATION (e.g. 500us, 2ms) as it happens, with its targets "
     "and stacks",
     0},
    {"stuck", OPT_STUCK, "DURATION", 0,
     "A drain in flight this long is stuck (default 1s): reports open with the stuck drains, "
     "the CPUs holding them and what runs there",
     0},
    {"json", 'j', NULL, 0, "Print each report as one JSON object on one line", 0},
    {"prom", OPT_PROM, "FILE", 0,
     "Write Prometheus metrics to FILE (atomically) every INTERVAL seconds (default 15), "
     "cumulative since start, until a signal or -d",
     0},
    {"prom-sites", OPT_PROM_SITES, "N", 0,
     "Sites kept by name in --prom (the top N by total wait; default 20), the rest as \"other\"",
     0},
    {"max-sites", OPT_MAX_SITES, "N", 0,
     "Sites (kernel stack and comm) aggregated in the kernel (default 1024); more are counted "
     "as site_map_full",
     0},
    {"max-stacks", OPT_MAX_STACKS, "N", 0,
     "Buckets of the kernel stack map (default 16384); collisions are counted as stack_lost", 0},
    {"mode", 'm', "MODE", 0,
     "How to trace: full (fentry/fexit), kprobe, tracepoint, or auto (the default: the first "
     "of those that works)",
     0},
    {},
};

int cli__parse_positive(const char *s, __u64 max, __u64 *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v == 0 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_cpu(const char **p, unsigned long *cpu)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*cpu = strtoul(*p, &end, 10);
	if (errno || *cpu >= DRAINSTAT_MAX_CPUS)
		return -EINVAL;
	*p = end;
	return 0;
}

int cli__parse_cpulist(const char *s, __u64 *mask)
{
	__u64 bits[DRAINSTAT_MAX_CPUS / 64] = {};
	unsigned long first, last, c;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	for (;;) {
		if (parse_cpu(&p, &first))
			return -EINVAL;
		last = first;
		if (*p == '-' && (p++, parse_cpu(&p, &last) || last < first))
			return -EINVAL;
		for (c = first; c <= last; c++)
			bits[c / 64] |= 1ULL << (c % 64);
		if (!*p)
			break;
		if (*p++ != ',')
			return -EINVAL;
	}
	memcpy(mask, bits, sizeof(bits));
	return 0;
}

/*
 * "2.5" of unit_ns nanoseconds: digits, an optional fraction (finer than a
 * nanosecond is dropped), at most SECONDS_MAX seconds in all, more than 0 ns.
 */
static int parse_scaled(const char *s, __u64 unit_ns, __u64 *ns)
{
	__u64 whole = 0, frac = 0, scale = unit_ns, max = SECONDS_MAX * (1000000000ULL / unit_ns);
	const char *p = s;

	if (!s || !isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		whole = whole * 10 + (__u64)(*p - '0');
		if (whole > max)
			return -EINVAL;
	}
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			scale /= 10;
			frac += (__u64)(*p - '0') * scale;
		}
	}
	if (*p || whole * unit_ns + frac == 0)
		return -EINVAL;
	*ns = whole * unit_ns + frac;
	return 0;
}

int cli__parse_duration(const char *s, __u64 *ns)
{
	static const struct {
		const char *unit;
		__u64 ns;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
	char num[32];
	size_t i, len;
	__u64 v;

	if (!s)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		len = strlen(s);
		if (len <= strlen(units[i].unit) ||
		    strcmp(s + len - strlen(units[i].unit), units[i].unit))
			continue;
		len -= strlen(units[i].unit);
		if (len >= sizeof(num) || !isdigit((unsigned char)s[len - 1]))
			return -EINVAL;
		memcpy(num, s, len);
		num[len] = '\0';
		/* "1.5" of ms is 1500000 ns */
		if (parse_scaled(num, units[i].ns, &v))
			return -EINVAL;
		*ns = v;
		return 0;
	}
	return -EINVAL;
}

int cli__parse_seconds(const char *s, __u64 *ns)
{
	return parse_scaled(s, 1000000000ULL, ns);
}

/* One line, then exit: argp_error() would add a second "Try --help" line. */
/* arg is the user's, escaped: a value holding ESC or a newline stays one inert line. */
static void usage_error(const char *fmt, const char *arg)
{
	char shown[ESCAPE_SIZE(256)];

	fprintf(stderr, "drainstat: ");
	fprintf(stderr, fmt, escape__text(arg, 256, shown, sizeof(shown)));
	fprintf(stderr, " (see drainstat --help)\n");
	exit(EXIT_USAGE);
}

static int parse_pid(const char *arg, pid_t *pid)
{
	__u64 v;

	if (cli__parse_positive(arg, 4194304, &v))
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

static int parse_positional(struct argp_state *state, const char *arg, struct options *o)
{
	if (state->arg_num == 0) {
		if (cli__parse_seconds(arg, &o->interval_ns))
			usage_error("invalid INTERVAL '%s': expected seconds > 0", arg);
	} else if (state->arg_num == 1) {
		if (cli__parse_positive(arg, ~0ULL >> 1, &o->count))
			usage_error("invalid COUNT '%s': expected a positive integer", arg);
	} else {
		usage_error("unexpected argument '%s'", arg);
	}
	return 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct options *o = state->input;
	__u64 v;

	switch (key) {
	case 'd':
		if (cli__parse_seconds(arg, &o->duration_ns))
			usage_error("invalid -d '%s': expected seconds > 0", arg);
		break;
	case 'p':
		if (parse_pid(arg, &o->pid))
			usage_error("invalid -p '%s': expected a process ID", arg);
		break;
	case 'm':
		if (tracer__parse_mode(arg, &o->mode))
			usage_error(
			    "invalid --mode '%s': expected auto, full, kprobe or tracepoint", arg);
		break;
	case 'j':
		o->json = true;
		break;
	case 'T':
		if (cli__parse_duration(arg, &o->slow_ns))
			usage_error("invalid -T '%s': expected a duration such as 500us or 2ms",
				    arg);
		break;
	case OPT_STUCK:
		if (cli__parse_duration(arg, &o->stuck_ns))
			usage_error("invalid --stuck '%s': expected a duration such as 500ms or 2s",
				    arg);
		break;
	case 'c':
		if (!*arg || strlen(arg) >= DRAINSTAT_COMM_LEN)
			usage_error("invalid -c '%s': expected 1 to 15 characters", arg);
		o->comm = arg;
		break;
	case OPT_CGROUP:
		o->cgroup = arg;
		break;
	case 'C':
		if (cli__parse_cpulist(arg, o->victims))
			usage_error("invalid -C '%s': expected CPUs such as 0-3,8 (below 1024)",
				    arg);
		o->victims_set = true;
		break;
	case OPT_PROM:
		if (!*arg)
			usage_error("invalid --prom '%s': expected a file name", arg);
		o->prom_path = arg;
		break;
	case OPT_PROM_SITES:
		if (cli__parse_positive(arg, 1000, &v))
			usage_error("invalid --prom-sites '%s': expected 1 to 1000", arg);
		o->prom_sites = (__u32)v;
		break;
	case OPT_MAX_SITES:
		if (cli__parse_positive(arg, DRAINSTAT_MAX_SITES, &v))
			usage_error(
			    "invalid --max-sites '%s': expected 1 to " STR(DRAINSTAT_MAX_SITES),
			    arg);
		o->max_sites = (__u32)v;
		break;
	case OPT_MAX_STACKS:
		if (cli__parse_positive(arg, DRAINSTAT_MAX_STACKS, &v))
			usage_error(
			    "invalid --max-stacks '%s': expected 1 to " STR(DRAINSTAT_MAX_STACKS),
			    arg);
		o->max_stacks = (__u32)v;
		break;
	case 's':
		o->stacks = true;
		break;
	case 'H':
		o->histograms = true;
		break;
	case 'v':
		o->verbose++;
		break;
	case ARGP_KEY_ARG:
		return parse_positional(state, arg, o);
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

void cli__parse(int argc, char **argv, struct options *opts)
{
	static const struct argp argp = {options, parse_opt, args_doc, doc, NULL, NULL, NULL};

	memset(opts, 0, sizeof(*opts));
	/* getopt's own messages (unknown options) start with argv[0]: make it ours */
	if (argc > 0)
		argv[0] = (char *)"drainstat";
	argp_err_exit_status = EXIT_USAGE;
	opts->prom_sites = 20;
	opts->stuck_ns = STUCK_DEFAULT_NS;
	argp_parse(&argp, argc, argv, 0, NULL, opts);
	if (opts->prom_path && opts->json)
		usage_error("%s", "--prom and -j are two different outputs: choose one");
}
