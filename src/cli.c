// SPDX-License-Identifier: GPL-2.0
/*
 * The command line: getopt_long() over drainstat's options only, its messages
 * off. Not argp_parse(): it adds glibc's hidden --HANG (an hour's sleep, which
 * "--H" abbreviates) and --program-name (the name in its messages, raw bytes and
 * all), and ARGP_NO_HELP drops those with --help, --usage and --version; and
 * getopt's messages echo an unknown option raw. argp still writes --help and
 * --usage, from the same table.
 */
#define _GNU_SOURCE /* strchrnul() */
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cpulist.h"
#include "escape.h"

#define NS_PER_SEC 1000000000ULL
#define PID_MAX	   4194304 /* PID_MAX_LIMIT */
/* The bytes of an argument quoted in a message; more are cut. */
#define SHOWN_MAX 256

#define STR_(x)		 #x
#define STR(x)		 STR_(x)
#define SECONDS_MAX_TEXT STR(DRAINSTAT_SECONDS_MAX) " (366 days)"

_Static_assert(DRAINSTAT_SECONDS_MAX == 366 * 24 * 3600, "366 days in seconds");

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

enum {
	OPT_PROM = 1000,
	OPT_PROM_SITES,
	OPT_PROM_CGROUP,
	OPT_CGROUP,
	OPT_BY,
	OPT_MAX_SITES,
	OPT_MAX_STACKS,
	OPT_STUCK,
	OPT_ALL_CPUS,
	OPT_IPIS,
	OPT_NO_IPIS,
	OPT_USAGE
};

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
    {"by", OPT_BY, "KEYS", 0,
     "What tells a site's rows apart besides its stack: comm, cgroup, or both (the default: "
     "comm,cgroup)",
     0},
    {"cpus", 'C', "CPULIST", 0,
     "Count works to these (victim) CPUs and the drains that queue one, e.g. 2-3,6: the isolated "
     "ones",
     0},
    {"all-cpus", OPT_ALL_CPUS, NULL, 0,
     "A row for every CPU with works (by default, above 16 of them, the costliest and the rest "
     "summed)",
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
    {"prom-cgroup", OPT_PROM_CGROUP, "HOW", 0,
     "The cgroup label in --prom: unit (the default: the systemd unit or the pod, stable across "
     "restarts), path (the whole cgroup path) or pod (unit, and a pod's namespace, pod and qos "
     "labels)",
     0},
    {"max-sites", OPT_MAX_SITES, "N", 0,
     "Sites (kernel stack, comm and cgroup) aggregated in the kernel (default 1024), local "
     "drains' in half of them at most; more are counted as site_map_full (drains) or "
     "local_site_map_full (local drains)",
     0},
    {"max-stacks", OPT_MAX_STACKS, "N", 0,
     "Buckets of the kernel stack map (default 16384); collisions are counted as stack_lost", 0},
    {"ipis", OPT_IPIS, NULL, 0,
     "Count the wakeup IPIs of drain works too (the IPIS columns): a program on "
     "ipi:ipi_send_cpu, which runs at every IPI the system sends",
     0},
    {"no-ipis", OPT_NO_IPIS, NULL, 0, "Do not count IPIs (the default)", 0},
    {"mode", 'm', "MODE", 0,
     "How to trace: full (fentry/fexit), kprobe, tracepoint, or auto (the default: the first "
     "of those that works)",
     0},
    /* glibc's own words and group: --help reads as it did under argp_parse() */
    {"help", '?', NULL, 0, "Give this help list", -1},
    {"usage", OPT_USAGE, NULL, 0, "Give a short usage message", 0},
    {"version", 'V', NULL, 0, "Print program version", 0},
    {},
};

#define NR_OPTIONS (sizeof(options) / sizeof(options[0]) - 1)

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

int cli__parse_interval(const char *s, __u64 *ns)
{
	__u64 v;

	if (units__parse_seconds(s, &v) || v < DRAINSTAT_INTERVAL_MIN_NS)
		return -EINVAL;
	*ns = v;
	return 0;
}

/* getopt_long() returns LONG_KEY + i for options[i] given by its long name. */
#define LONG_KEY 0x10000

struct getopt_tables {
	struct option longs[NR_OPTIONS + 1];
	char shorts[1 + 2 * NR_OPTIONS + 1];
};

/* One parse: where the options go, what was given, where an error is written. */
struct parse {
	struct options *opts;
	bool prom_sites_set;
	bool prom_cgroup_set;
	char *err;
	size_t size;
};

/*
 * options[] as getopt_long() takes it. ':' first: a missing argument comes back
 * as ':', every other error as '?'. '?' is not among the short options, so that
 * a '?' is always an error: -? comes as the unknown option '?'.
 */
static void getopt_tables(struct getopt_tables *t)
{
	char *s = t->shorts;
	size_t i;

	*s++ = ':';
	for (i = 0; i < NR_OPTIONS; i++) {
		const struct argp_option *o = &options[i];

		t->longs[i] = (struct option){o->name, o->arg ? required_argument : no_argument,
					      NULL, LONG_KEY + (int)i};
		if (o->key > 0 && o->key < 128 && isalpha(o->key)) {
			*s++ = (char)o->key;
			if (o->arg)
				*s++ = ':';
		}
	}
	*s = '\0';
	t->longs[NR_OPTIONS] = (struct option){NULL, 0, NULL, 0};
}

/* The parse's error message, formatted into p->err; returns -EINVAL. */
static int parse_error(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int parse_error(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, p->size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The user's bytes for a message: a value holding ESC or a newline stays one inert line. */
static const char *shown(const char *arg, size_t len, char *buf, size_t size)
{
	return escape__text(arg, len < SHOWN_MAX ? len : SHOWN_MAX, buf, size);
}

/* "invalid -d '1x': expected ...", the value escaped. */
static int bad_value(struct parse *p, const char *name, const char *arg, const char *expected)
{
	char buf[ESCAPE_SIZE(SHOWN_MAX)];

	return parse_error(p, "invalid %s '%s': expected %s", name,
			   shown(arg, strlen(arg), buf, sizeof(buf)), expected);
}

/* -T, --stuck: a duration with its unit. */
static int parse_threshold(struct parse *p, const char *name, const char *arg, const char *examples,
			   __u64 *ns)
{
	char expected[128];

	if (!units__parse_duration(arg, ns))
		return 0;
	snprintf(expected, sizeof(expected), "a duration such as %s, from 1ns to %ss (366 days)",
		 examples, STR(DRAINSTAT_SECONDS_MAX));
	return bad_value(p, name, arg, expected);
}

/* --prom-sites, --max-sites, --max-stacks: 1 to max. */
static int parse_count(struct parse *p, const char *name, const char *arg, __u64 max, __u32 *out)
{
	char expected[64];
	__u64 v;

	if (!cli__parse_positive(arg, max, &v)) {
		*out = (__u32)v;
		return 0;
	}
	snprintf(expected, sizeof(expected), "1 to %llu", (unsigned long long)max);
	return bad_value(p, name, arg, expected);
}

static int parse_pid(struct parse *p, const char *arg)
{
	__u64 v;

	if (cli__parse_positive(arg, PID_MAX, &v))
		return bad_value(p, "-p", arg, "a process ID from 1 to " STR(PID_MAX));
	p->opts->pid = (pid_t)v;
	return 0;
}

static int parse_comm(struct parse *p, const char *arg)
{
	if (!*arg || strlen(arg) >= DRAINSTAT_COMM_LEN)
		return bad_value(p, "-c", arg, "1 to 15 characters");
	p->opts->comm = arg;
	return 0;
}

/* --by: a comma list of comm and cgroup, each at most once. */
static int parse_by(struct parse *p, const char *arg)
{
	const char *c = arg, *end;
	__u32 parts = 0, part;
	size_t len;

	for (; c; c = *end ? end + 1 : NULL) {
		end = strchrnul(c, ',');
		len = (size_t)(end - c);
		part = len == 4 && !strncmp(c, "comm", 4)     ? SITE_KEY_COMM
		       : len == 6 && !strncmp(c, "cgroup", 6) ? SITE_KEY_CGROUP
							      : 0;
		if (!part || (parts & part))
			return bad_value(p, "--by", arg, "comm, cgroup or comm,cgroup");
		parts |= part;
	}
	p->opts->by = parts;
	p->opts->by_set = true;
	return 0;
}

static int parse_prom_cgroup(struct parse *p, const char *arg)
{
	static const char *const names[] = {
	    [PROM_CGROUP_UNIT] = "unit", [PROM_CGROUP_PATH] = "path", [PROM_CGROUP_POD] = "pod"};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]) && strcmp(arg, names[i]); i++)
		;
	if (i == sizeof(names) / sizeof(names[0]))
		return bad_value(p, "--prom-cgroup", arg, "unit, path or pod");
	p->opts->prom_cgroup = (enum prom_cgroup)i;
	p->prom_cgroup_set = true;
	return 0;
}

static int parse_mode(struct parse *p, const char *arg)
{
	char modes[64];

	if (!tracer__parse_mode(arg, &p->opts->mode))
		return 0;
	tracer__mode_list(modes, sizeof(modes));
	return bad_value(p, "--mode", arg, modes);
}

static int parse_cpus(struct parse *p, const char *arg)
{
	if (cpulist__parse(arg, p->opts->victims))
		return bad_value(p, "-C", arg, "CPUs such as 0-3,8 (below 8192)");
	p->opts->victims_set = true;
	return 0;
}

/* The options without an argument: 0 or the cli_action they ask for. */
static int parse_flag(struct options *o, int key)
{
	switch (key) {
	case 's':
		o->stacks = true;
		break;
	case 'H':
		o->histograms = true;
		break;
	case OPT_ALL_CPUS:
		o->all_cpus = true;
		break;
	case OPT_IPIS:
		o->ipis = true;
		break;
	case OPT_NO_IPIS:
		o->ipis = false;
		break;
	case 'j':
		o->json = true;
		break;
	case 'v':
		o->verbose++;
		break;
	case '?':
		return CLI_HELP;
	case OPT_USAGE:
		return CLI_USAGE;
	case 'V':
		return CLI_VERSION;
	}
	return 0;
}

/* One option (a key of options[]) into p->opts: 0, a cli_action or -EINVAL. */
static int parse_option(struct parse *p, int key, const char *arg)
{
	struct options *o = p->opts;

	switch (key) {
	case 'd':
		if (units__parse_seconds(arg, &o->duration_ns))
			return bad_value(p, "-d", arg,
					 "seconds, more than 0 and at most " SECONDS_MAX_TEXT);
		return 0;
	case 'T':
		return parse_threshold(p, "-T", arg, "500us or 2ms", &o->slow_ns);
	case OPT_STUCK:
		return parse_threshold(p, "--stuck", arg, "500ms or 2s", &o->stuck_ns);
	case 'p':
		return parse_pid(p, arg);
	case 'c':
		return parse_comm(p, arg);
	case OPT_CGROUP:
		o->cgroup = arg;
		return 0;
	case OPT_BY:
		return parse_by(p, arg);
	case OPT_PROM_CGROUP:
		return parse_prom_cgroup(p, arg);
	case 'C':
		return parse_cpus(p, arg);
	case 'm':
		return parse_mode(p, arg);
	case OPT_PROM:
		if (!*arg)
			return bad_value(p, "--prom", arg, "a file name");
		o->prom_path = arg;
		return 0;
	case OPT_PROM_SITES:
		p->prom_sites_set = true;
		return parse_count(p, "--prom-sites", arg, 1000, &o->prom_sites);
	case OPT_MAX_SITES:
		return parse_count(p, "--max-sites", arg, DRAINSTAT_MAX_SITES, &o->max_sites);
	case OPT_MAX_STACKS:
		return parse_count(p, "--max-stacks", arg, DRAINSTAT_MAX_STACKS, &o->max_stacks);
	}
	return parse_flag(o, key);
}

/* INTERVAL, COUNT. */
static int parse_positional(struct parse *p, int index, const char *arg)
{
	char expected[96], buf[ESCAPE_SIZE(SHOWN_MAX)];

	if (index == 0) {
		if (!cli__parse_interval(arg, &p->opts->interval_ns))
			return 0;
		snprintf(expected, sizeof(expected), "seconds from %g to " SECONDS_MAX_TEXT,
			 (double)DRAINSTAT_INTERVAL_MIN_NS / (double)NS_PER_SEC);
		return bad_value(p, "INTERVAL", arg, expected);
	}
	if (index == 1) {
		if (!cli__parse_positive(arg, ~0ULL >> 1, &p->opts->count))
			return 0;
		return bad_value(p, "COUNT", arg, "a positive integer");
	}
	return parse_error(p, "unexpected argument '%s'",
			   shown(arg, strlen(arg), buf, sizeof(buf)));
}

/* "--pro" (given is what follows "--"): unknown, or the start of more than one option. */
static int bad_long_option(struct parse *p, const char *given)
{
	char buf[ESCAPE_SIZE(SHOWN_MAX)], matches[512] = "";
	size_t len = strcspn(given, "="), n = 0, i;

	shown(given, len ? len : strlen(given), buf, sizeof(buf)); /* "--=x" */
	for (i = 0; i < NR_OPTIONS && n < sizeof(matches); i++) {
		if (len && !strncmp(options[i].name, given, len))
			n += (size_t)snprintf(matches + n, sizeof(matches) - n, "%s--%s",
					      n ? ", " : "", options[i].name);
	}
	if (n)
		return parse_error(p, "ambiguous option '--%s': %s", buf, matches);
	return parse_error(p, "unknown option '--%s'", buf);
}

static const struct argp_option *short_option(int key)
{
	size_t i;

	for (i = 0; i < NR_OPTIONS && options[i].key != key; i++)
		;
	return &options[i];
}

/* What getopt_long() stopped at: ret ':' or '?', with optopt and optind. */
static int getopt_error(struct parse *p, int ret, char *const *argv)
{
	const struct argp_option *o;
	char name[32], buf[ESCAPE_SIZE(1)];

	if (ret == ':' || optopt >= LONG_KEY) {
		o = optopt >= LONG_KEY ? &options[optopt - LONG_KEY] : short_option(optopt);
		if (optopt >= LONG_KEY)
			snprintf(name, sizeof(name), "--%s", o->name);
		else
			snprintf(name, sizeof(name), "-%c", o->key);
		if (ret == ':')
			return parse_error(p, "option %s needs %s", name, o->arg);
		return parse_error(p, "option %s takes no argument", name);
	}
	if (optopt)
		return parse_error(p, "unknown option '-%s'",
				   shown(&(char){(char)optopt}, 1, buf, sizeof(buf)));
	return bad_long_option(p, argv[optind - 1] + 2);
}

/* Options that mean nothing, or two things, together. */
static int check_together(struct parse *p)
{
	if (p->opts->prom_path && p->opts->json)
		return parse_error(p, "--prom and -j are two different outputs: choose one");
	if (p->prom_sites_set && !p->opts->prom_path)
		return parse_error(p, "--prom-sites is for the --prom export: add --prom FILE");
	if (p->prom_cgroup_set && !p->opts->prom_path)
		return parse_error(p, "--prom-cgroup is for the --prom export: add --prom FILE");
	if (p->prom_cgroup_set && !(p->opts->by & SITE_KEY_CGROUP))
		return parse_error(p, "--prom-cgroup names the cgroup label: add cgroup to --by");
	return 0;
}

static void set_defaults(struct options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->prom_sites = 20;
	opts->by = SITE_KEY_COMM | SITE_KEY_CGROUP;
	opts->stuck_ns = STUCK_DEFAULT_NS;
}

int cli__parse_args(int argc, char **argv, struct options *opts, char *err, size_t size)
{
	struct parse p = {.opts = opts, .err = err, .size = size};
	struct getopt_tables t = {};
	int ret, i;

	set_defaults(opts);
	getopt_tables(&t);
	opterr = 0;
	optind = 0; /* glibc: start over, even after a parse that stopped mid "-sZ" */
	while ((ret = getopt_long(argc, argv, t.shorts, t.longs, NULL)) != -1) {
		/* every error sets optopt: -? is the one that is not */
		if (ret == ':' || (ret == '?' && optopt != '?'))
			return getopt_error(&p, ret, argv);
		ret = parse_option(&p, ret >= LONG_KEY ? options[ret - LONG_KEY].key : ret, optarg);
		if (ret)
			return ret;
	}
	for (i = optind; i < argc; i++) {
		ret = parse_positional(&p, i - optind, argv[i]);
		if (ret)
			return ret;
	}
	return check_together(&p);
}

static void print_text(enum cli_action action)
{
	static const struct argp argp = {options, NULL, args_doc, doc, NULL, NULL, NULL};
	static char name[] = "drainstat";

	if (action == CLI_VERSION)
		printf("drainstat %s\n", DRAINSTAT_VERSION);
	else
		argp_help(&argp, stdout, action == CLI_HELP ? ARGP_HELP_STD_HELP : ARGP_HELP_USAGE,
			  name);
}

void cli__parse(int argc, char **argv, struct options *opts)
{
	char err[CLI_ERROR_LEN];
	int ret = cli__parse_args(argc, argv, opts, err, sizeof(err));

	if (ret < 0) {
		fprintf(stderr, "drainstat: %s (see drainstat --help)\n", err);
		exit(EXIT_USAGE);
	}
	if (ret != CLI_RUN) {
		print_text(ret);
		exit(EXIT_OK);
	}
}
