// SPDX-License-Identifier: GPL-2.0
/* The command line (cli__parse_args()), its value parsers, and duration units. */
#include <errno.h>

#include "check.h"
#include "cli.h"
#include "cpulist.h"
#include "units.h"

static void test_seconds_valid(void)
{
	__u64 ns = 0;

	CHECK(units__parse_seconds("10", &ns) == 0 && ns == 10000000000ULL);
	CHECK(units__parse_seconds("2.5", &ns) == 0 && ns == 2500000000ULL);
	CHECK(units__parse_seconds("0.1", &ns) == 0 && ns == 100000000ULL);
	CHECK(units__parse_seconds("0.000000001", &ns) == 0 && ns == 1);
	CHECK(units__parse_seconds("31622400", &ns) == 0); /* a leap year */
}

static void test_seconds_invalid(void)
{
	static const char *const bad[] = {
	    "",		  "0",
	    "0.0",	  "-1",
	    "+1",	  "1s",
	    "1.",	  ".5",
	    "abc",	  "1e3",
	    " 1",	  "1 ",
	    "31622401",	  "99999999999999999999999",
	    "1.2.3",	  "0x10",
	    "31622400.5", "31622400.000000001",
	};
	__u64 ns = 77;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (units__parse_seconds(bad[i], &ns) != -EINVAL)
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
		CHECK(units__parse_seconds(bad[i], &ns) == -EINVAL);
	}
	CHECK(units__parse_seconds(NULL, &ns) == -EINVAL);
	CHECK(ns == 77);
}

/* INTERVAL: seconds, at least 10 ms (at 1 ns, 52,401 reports took a CPU in a second). */
static void test_interval(void)
{
	static const char *const bad[] = {"0.009999999",	"0.001", "0.000000001", "0", "",
					  "31622400.000000001", "1e9",	 "-1"};
	__u64 ns = 0;
	size_t i;

	CHECK(cli__parse_interval("0.01", &ns) == 0 && ns == DRAINSTAT_INTERVAL_MIN_NS);
	CHECK(cli__parse_interval("0.010000000", &ns) == 0 && ns == 10000000);
	CHECK(cli__parse_interval("5", &ns) == 0 && ns == 5000000000ULL);
	CHECK(cli__parse_interval("31622400", &ns) == 0 && ns == 31622400000000000ULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (cli__parse_interval(bad[i], &ns) != -EINVAL)
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
		CHECK(cli__parse_interval(bad[i], &ns) == -EINVAL);
	}
	CHECK(cli__parse_interval(NULL, &ns) == -EINVAL);
}

static void test_positive(void)
{
	__u64 v = 0;

	CHECK(cli__parse_positive("1", 10, &v) == 0 && v == 1);
	CHECK(cli__parse_positive("10", 10, &v) == 0 && v == 10);
	CHECK(cli__parse_positive("11", 10, &v) == -EINVAL);
	CHECK(cli__parse_positive("0", 10, &v) == -EINVAL);
	CHECK(cli__parse_positive("-3", 10, &v) == -EINVAL);
	CHECK(cli__parse_positive("3x", 10, &v) == -EINVAL);
	CHECK(cli__parse_positive("", 10, &v) == -EINVAL);
	CHECK(cli__parse_positive("18446744073709551616", ~0ULL, &v) == -EINVAL);
}

static void test_cpulist(void)
{
	static const char *const bad[] = {"",	  ",",	    "1,", ",1", "1-",	"-1",  "3-1",
					  "8192", "0-8192", "a",  "1 ", "1,,2", "0x1", "1-2-3"};
	__u64 mask[DRAINSTAT_MAX_CPUS / 64];
	size_t i;

	CHECK(cpulist__parse("0", mask) == 0 && mask[0] == 1);
	CHECK(cpulist__parse("0-3,8", mask) == 0 && mask[0] == 0x10f && mask[1] == 0);
	CHECK(cpulist__parse("63-64,1023", mask) == 0);
	CHECK(mask[0] == 1ULL << 63 && mask[1] == 1 && mask[15] == 1ULL << 63);
	/* beyond 64 and 256 CPUs, up to Debian's NR_CPUS (8192, amd64) */
	CHECK(cpulist__parse("255-256,4095,8191", mask) == 0);
	CHECK(mask[3] == 1ULL << 63 && mask[4] == 1 && mask[63] == 1ULL << 63);
	CHECK(mask[127] == 1ULL << 63 && mask[0] == 0 && mask[126] == 0);
	CHECK(cpulist__parse("0-8191", mask) == 0 && mask[0] == ~0ULL && mask[127] == ~0ULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (cpulist__parse(bad[i], mask) != -EINVAL)
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
		CHECK(cpulist__parse(bad[i], mask) == -EINVAL);
	}
}

/* A CPU list parsed, formatted back into size bytes: the text, the same set when it fits. */
static void check_cpulist_format(const char *list, size_t size, const char *want)
{
	__u64 mask[DRAINSTAT_MAX_CPUS / 64], again[DRAINSTAT_MAX_CPUS / 64];
	char buf[64 * 1024];

	CHECK(size <= sizeof(buf));
	CHECK(cpulist__parse(list, mask) == 0);
	memset(buf, 'x', sizeof(buf));
	cpulist__format(mask, buf, size);
	if (strcmp(buf, want))
		fprintf(stderr, "  \"%s\" in %zu bytes: got \"%s\"\n", list, size, buf);
	CHECK_STR(buf, want);
	CHECK(strlen(buf) < size);
	if (!strstr(want, "...")) {
		CHECK(cpulist__parse(buf, again) == 0);
		CHECK(!memcmp(mask, again, sizeof(mask)));
	}
}

static void test_cpulist_format(void)
{
	char every_other[24 * 1024] = "0";
	size_t n = 1;
	int c;

	check_cpulist_format("0", 8, "0");
	check_cpulist_format("0-3,8,10-11", 64, "0-3,8,10-11");
	check_cpulist_format("63-64,255-256,1023,8191", 64, "63-64,255-256,1023,8191");
	check_cpulist_format("0-8191", 64, "0-8191");
	/* too long: cut after a whole item, never inside a number */
	check_cpulist_format("0,2,1000", 8, "0,2,...");
	check_cpulist_format("0,2,100", 7, "0,...");
	check_cpulist_format("0,2,100", 8, "0,2,100");
	check_cpulist_format("1000-1001,2000", 4, "...");
	/* 4096 items: every other CPU of 8192 */
	for (c = 2; c < DRAINSTAT_MAX_CPUS; c += 2)
		n += (size_t)snprintf(every_other + n, sizeof(every_other) - n, ",%d", c);
	check_cpulist_format(every_other, sizeof(every_other), every_other);
	check_cpulist_format(every_other, 256,
			     "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,"
			     "40,42,44,46,48,50,52,54,56,58,60,62,64,66,68,70,72,74,76,"
			     "78,80,82,84,86,88,90,92,94,96,98,100,102,104,106,108,110,"
			     "112,114,116,118,120,122,124,126,128,130,132,134,136,138,"
			     "140,142,144,146,148,150,...");
}

static void test_duration(void)
{
	static const char *const bad[] = {
	    "",	     "1",	  "ms",		 "1 ms",	  "-1ms",
	    "0us",   "0.5ns",	  "1min",	 "1.ms",	  "5sec",
	    "1e3us", "31622401s", "31622400.5s", "31622400001ms", "31622400000000001ns"};
	__u64 ns = 0;
	size_t i;

	CHECK(units__parse_duration("500us", &ns) == 0 && ns == 500000);
	CHECK(units__parse_duration("2ms", &ns) == 0 && ns == 2000000);
	CHECK(units__parse_duration("1.5s", &ns) == 0 && ns == 1500000000);
	CHECK(units__parse_duration("800ns", &ns) == 0 && ns == 800);
	CHECK(units__parse_duration("0.25ms", &ns) == 0 && ns == 250000);
	CHECK(units__parse_duration("31622400s", &ns) == 0 && ns == 31622400000000000ULL);
	CHECK(units__parse_duration("31622400000ms", &ns) == 0 && ns == 31622400000000000ULL);
	/* minutes and hours, as durations of a minute and more print */
	CHECK(units__parse_duration("73m", &ns) == 0 && ns == 4380000000000ULL);
	CHECK(units__parse_duration("1.5h", &ns) == 0 && ns == 5400000000000ULL);
	CHECK(units__parse_duration("8784h", &ns) == 0 && ns == 31622400000000000ULL);
	CHECK(units__parse_duration("8784.1h", &ns) == -EINVAL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (units__parse_duration(bad[i], &ns) != -EINVAL)
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
		CHECK(units__parse_duration(bad[i], &ns) == -EINVAL);
	}
}

#define MAX_ARGS 24

/* drainstat ARGS... through cli__parse_args(), err emptied first: what it returns. */
static int parse(struct options *o, char *err, const char *const *args)
{
	char *argv[MAX_ARGS + 2] = {"drainstat"};
	int argc = 1;

	while (*args && argc <= MAX_ARGS)
		argv[argc++] = (char *)*args++; /* getopt moves the pointers, not the bytes */
	err[0] = '\0';
	return cli__parse_args(argc, argv, o, err, CLI_ERROR_LEN);
}

/* PARSE(&o, err, "-d", "1"); PARSE(&o, err, NULL) for no arguments */
#define PARSE(o, err, ...) parse(o, err, (const char *const[]){__VA_ARGS__, NULL})

/* drainstat ARGS... is a usage error, its message exactly want. */
#define CHECK_USAGE(want, ...)                                                                     \
	do {                                                                                       \
		char err_[CLI_ERROR_LEN];                                                          \
		struct options o_;                                                                 \
		CHECK(PARSE(&o_, err_, __VA_ARGS__) == -EINVAL);                                   \
		CHECK_STR(err_, want);                                                             \
	} while (0)

static void test_args_defaults(void)
{
	char err[CLI_ERROR_LEN];
	struct options o;

	CHECK(PARSE(&o, err, NULL) == CLI_RUN);
	CHECK(o.duration_ns == 0 && o.interval_ns == 0 && o.count == 0 && o.pid == 0);
	CHECK(o.mode == MODE_AUTO && !o.stacks && !o.histograms && !o.json && o.verbose == 0);
	CHECK(!o.comm && !o.cgroup && !o.prom_path && !o.victims_set);
	CHECK(o.prom_sites == 20 && o.stuck_ns == 1000000000ULL && o.slow_ns == 0);
	CHECK(o.max_sites == 0 && o.max_stacks == 0 && !o.ipis && !o.all_cpus);
	CHECK(o.by == (SITE_KEY_COMM | SITE_KEY_CGROUP) && !o.by_set &&
	      o.prom_cgroup == PROM_CGROUP_UNIT);
}

/* --by and --prom-cgroup */
static void test_args_by(void)
{
	char err[CLI_ERROR_LEN];
	struct options o;

	CHECK(PARSE(&o, err, "--by=comm") == CLI_RUN && o.by == SITE_KEY_COMM && o.by_set);
	CHECK(PARSE(&o, err, "--by", "cgroup") == CLI_RUN && o.by == SITE_KEY_CGROUP);
	CHECK(PARSE(&o, err, "--by=cgroup,comm") == CLI_RUN &&
	      o.by == (SITE_KEY_COMM | SITE_KEY_CGROUP));
	CHECK(PARSE(&o, err, "--prom", "x", "--prom-cgroup=path") == CLI_RUN &&
	      o.prom_cgroup == PROM_CGROUP_PATH);
	CHECK(PARSE(&o, err, "--prom", "x", "--prom-cgroup=unit") == CLI_RUN &&
	      o.prom_cgroup == PROM_CGROUP_UNIT);
	CHECK(PARSE(&o, err, "--prom", "x", "--prom-cgroup", "pod") == CLI_RUN &&
	      o.prom_cgroup == PROM_CGROUP_POD);
	CHECK_USAGE("invalid --by '': expected comm, cgroup or comm,cgroup", "--by=");
	CHECK_USAGE("invalid --by 'comm,': expected comm, cgroup or comm,cgroup", "--by=comm,");
	CHECK_USAGE("invalid --by 'comm,comm': expected comm, cgroup or comm,cgroup",
		    "--by=comm,comm");
	CHECK_USAGE("invalid --by 'pid': expected comm, cgroup or comm,cgroup", "--by=pid");
	CHECK_USAGE("invalid --by 'cgroup\\x1b': expected comm, cgroup or comm,cgroup",
		    "--by=cgroup\x1b");
	CHECK_USAGE("invalid --prom-cgroup 'pods': expected unit, path or pod", "--prom", "x",
		    "--prom-cgroup=pods");
	CHECK_USAGE("invalid --prom-cgroup '': expected unit, path or pod", "--prom", "x",
		    "--prom-cgroup=");
	CHECK_USAGE("--prom-cgroup is for the --prom export: add --prom FILE",
		    "--prom-cgroup=path");
	CHECK_USAGE("--prom-cgroup names the cgroup label: add cgroup to --by", "--by=comm",
		    "--prom", "x", "--prom-cgroup=path");
}

static void test_args_values(void)
{
	char err[CLI_ERROR_LEN];
	struct options o;

	CHECK(PARSE(&o, err, "-d", "2.5", "-p", "42", "-sHv", "-v", "-c", "kworker",
		    "--cgroup=/sys/fs/cgroup/x", "-C", "2-3", "0.5", "-T", "2ms", "--stuck=3s",
		    "-m", "kprobe", "--max-sites", "100", "--max-stacks=200", "3") == CLI_RUN);
	CHECK_STR(err, "");
	CHECK(o.duration_ns == 2500000000ULL && o.pid == 42);
	CHECK(o.stacks && o.histograms && o.verbose == 2 && !o.json);
	CHECK_STR(o.comm, "kworker");
	CHECK_STR(o.cgroup, "/sys/fs/cgroup/x");
	CHECK(o.victims_set && o.victims[0] == 0xc);
	CHECK(o.slow_ns == 2000000 && o.stuck_ns == 3000000000ULL && o.mode == MODE_KPROBE);
	CHECK(o.max_sites == 100 && o.max_stacks == 200);
	CHECK(o.interval_ns == 500000000ULL && o.count == 3);
	CHECK(PARSE(&o, err, "--prom", "x.prom", "--prom-sites=5", "15") == CLI_RUN);
	CHECK_STR(o.prom_path, "x.prom");
	CHECK(o.prom_sites == 5 && o.interval_ns == 15000000000ULL);
	/* getopt's unique abbreviations of drainstat's own options */
	CHECK(PARSE(&o, err, "--dur", "1", "--hi", "--prom-s", "7", "--prom", "y") == CLI_RUN);
	CHECK(o.duration_ns == 1000000000ULL && o.histograms && o.prom_sites == 7);
	CHECK(PARSE(&o, err, "--ipis", "--all-cpus") == CLI_RUN);
	CHECK(o.ipis && o.all_cpus);
	CHECK(PARSE(&o, err, "--ip") == CLI_RUN && o.ipis);
	/* the last of the two counts */
	CHECK(PARSE(&o, err, "--ipis", "--no-ipis") == CLI_RUN && !o.ipis);
	CHECK(PARSE(&o, err, "--no-ipis", "--ipis") == CLI_RUN && o.ipis);
	CHECK(PARSE(&o, err, "--no-i") == CLI_RUN && !o.ipis);
	/* after "--", an argument is INTERVAL even if it looks like an option */
	CHECK_USAGE("invalid INTERVAL '-1': expected seconds from 0.01 to 31622400 (366 days)",
		    "--", "-1");
}

/* --mode: each mode of the tracer's table by its name, and the error lists them all. */
static void test_args_mode(void)
{
	struct options o;
	char err[CLI_ERROR_LEN], arg[32];
	int m;

	for (m = MODE_AUTO; m <= MODE_TRACEPOINT; m++) {
		snprintf(arg, sizeof(arg), "--mode=%s", tracer__mode_name((enum drain_mode)m));
		CHECK(PARSE(&o, err, arg) == CLI_RUN && o.mode == (enum drain_mode)m);
	}
	CHECK_USAGE("invalid --mode 'fentry': expected auto, full, kprobe or tracepoint",
		    "--mode=fentry");
}

/* -?, --help, --usage, -V, --version: what argp_parse() gave them, and no more. */
static void test_args_help(void)
{
	char err[CLI_ERROR_LEN];
	struct options o;

	CHECK(PARSE(&o, err, "--help") == CLI_HELP);
	CHECK(PARSE(&o, err, "-?") == CLI_HELP);
	CHECK(PARSE(&o, err, "-s?") == CLI_HELP);
	CHECK(PARSE(&o, err, "--he") == CLI_HELP);
	CHECK(PARSE(&o, err, "--help", "--no-such-option") == CLI_HELP);
	CHECK(PARSE(&o, err, "--usage") == CLI_USAGE);
	CHECK(PARSE(&o, err, "--version") == CLI_VERSION);
	CHECK(PARSE(&o, err, "-V") == CLI_VERSION);
	CHECK_STR(err, "");
	CHECK_USAGE("unknown option '--no-such-option'", "--no-such-option", "--help");
	CHECK_USAGE("option --help takes no argument", "--help=x");
}

/* Issue 15: glibc argp's hidden options are not drainstat's. */
static void test_args_no_hidden_options(void)
{
	CHECK_USAGE("unknown option '--H'", "--H"); /* was --HANG: an hour's sleep */
	CHECK_USAGE("unknown option '--HANG'", "--HANG");
	CHECK_USAGE("unknown option '--HANG'", "--HANG=0");
	CHECK_USAGE("unknown option '--program-name'", "--program-name=x");
	CHECK_USAGE("unknown option '--program-name'", "--program-name", "x");
	CHECK_USAGE("unknown option '--prog'", "--prog=\x1b[31m");
}

/* Every argument quoted in an error is escaped, and the message is one line. */
static void test_args_escaped(void)
{
	char err[CLI_ERROR_LEN], lng[300 + 1];
	struct options o;

	CHECK_USAGE("unknown option '--\\x1b[31mx'", "--\x1b[31mx");
	CHECK_USAGE("unknown option '-\\x1b'", "-\x1b");
	CHECK_USAGE("unknown option '-\\xc3'", "-\xc3\xa9");
	CHECK_USAGE("unknown option '-Z'", "-sZH");
	CHECK_USAGE("unknown option '--=\\x0a'", "--=\n");
	CHECK_USAGE("option --json takes no argument", "--json=\x1b");
	CHECK_USAGE("ambiguous option '--pro': --prom, --prom-sites, --prom-cgroup", "--pro=\x1b");
	CHECK_USAGE("ambiguous option '--h': --histograms, --help", "--h");
	CHECK_USAGE("invalid -d '1\\x1b[31m\\x0ax': expected seconds, more than 0 and at most "
		    "31622400 (366 days)",
		    "-d", "1\x1b[31m\nx");
	CHECK_USAGE("invalid -c '0123456789abcde\\x1b': expected 1 to 15 characters", "-c",
		    "0123456789abcde\x1b");
	CHECK_USAGE("unexpected argument '\\x5c\\x07'", "1", "2", "\\\a");
	/* a long argument is cut at 256 bytes */
	memset(lng, 'A', sizeof(lng) - 1);
	memcpy(lng, "--", 2);
	lng[sizeof(lng) - 1] = '\0';
	CHECK(PARSE(&o, err, lng) == -EINVAL);
	CHECK(strlen(err) == strlen("unknown option '--'") + 256);
}

/* A missing argument names the option and what it takes. */
static void test_args_missing(void)
{
	CHECK_USAGE("option -d needs SECONDS", "-d");
	CHECK_USAGE("option -T needs DURATION", "-sT");
	CHECK_USAGE("option --prom needs FILE", "--prom");
	CHECK_USAGE("option --duration needs SECONDS", "--dur");
	CHECK_USAGE("option --stuck needs DURATION", "-H", "--stuck");
}

/* Messages give the real range: 366 days at most; INTERVAL at least 10 ms. */
static void test_args_ranges(void)
{
	char err[CLI_ERROR_LEN];
	struct options o;

	CHECK_USAGE("invalid -d '31622401': expected seconds, more than 0 and at most 31622400 "
		    "(366 days)",
		    "-d", "31622401");
	CHECK_USAGE("invalid INTERVAL '1e9': expected seconds from 0.01 to 31622400 (366 days)",
		    "1e9");
	CHECK_USAGE("invalid INTERVAL '0.001': expected seconds from 0.01 to 31622400 (366 days)",
		    "0.001");
	CHECK_USAGE("invalid INTERVAL '0.000000001': expected seconds from 0.01 to 31622400 (366 "
		    "days)",
		    "0.000000001", "-d", "1");
	CHECK_USAGE("invalid -T '31622401s': expected a duration such as 500us or 2ms, from 1ns to "
		    "31622400s (366 days)",
		    "-T", "31622401s");
	CHECK_USAGE("invalid --stuck '0s': expected a duration such as 500ms or 2s, from 1ns to "
		    "31622400s (366 days)",
		    "--stuck", "0s");
	CHECK_USAGE("invalid -p '4194305': expected a process ID from 1 to 4194304", "-p",
		    "4194305");
	CHECK_USAGE("invalid --prom-sites '1001': expected 1 to 1000", "--prom", "x",
		    "--prom-sites", "1001");
	CHECK_USAGE("invalid --max-stacks '262145': expected 1 to 262144", "--max-stacks",
		    "262145");
	CHECK_USAGE("invalid COUNT '0': expected a positive integer", "1", "0");
	CHECK_USAGE("unexpected argument '3'", "1", "2", "3");
	/* -d keeps any value above 0; INTERVAL from 10 ms */
	CHECK(PARSE(&o, err, "-d", "0.000000001", "0.01") == CLI_RUN);
	CHECK(o.duration_ns == 1 && o.interval_ns == DRAINSTAT_INTERVAL_MIN_NS);
	CHECK(PARSE(&o, err, "-T", "31622400s", "--stuck", "1ns") == CLI_RUN);
	CHECK(o.slow_ns == 31622400000000000ULL && o.stuck_ns == 1);
}

static void test_args_together(void)
{
	CHECK_USAGE("--prom-sites is for the --prom export: add --prom FILE", "--prom-sites", "5");
	CHECK_USAGE("--prom-sites is for the --prom export: add --prom FILE", "-j",
		    "--prom-sites=5");
	CHECK_USAGE("--prom and -j are two different outputs: choose one", "--prom", "x.prom",
		    "-j");
}

/* Each parse starts afresh: getopt's state, and the options' defaults. */
static void test_args_again(void)
{
	char err[CLI_ERROR_LEN];
	struct options o;

	CHECK(PARSE(&o, err, "-sZH") == -EINVAL); /* getopt stopped inside "-sZH" */
	CHECK(PARSE(&o, err, "-H") == CLI_RUN);
	CHECK(o.histograms && !o.stacks);
	CHECK(PARSE(&o, err, "5", "-j") == CLI_RUN);
	CHECK(o.json && !o.histograms && o.interval_ns == 5000000000ULL);
}

static void test_units(void)
{
	char b[UNITS_DURATION_LEN];

	CHECK_STR(units__duration(0, b, sizeof(b)), "0ns");
	CHECK_STR(units__duration(812, b, sizeof(b)), "812ns");
	CHECK_STR(units__duration(1000, b, sizeof(b)), "1.0us");
	CHECK_STR(units__duration(9140, b, sizeof(b)), "9.1us");
	CHECK_STR(units__duration(9960, b, sizeof(b)), "10us");
	CHECK_STR(units__duration(14200, b, sizeof(b)), "14us");
	CHECK_STR(units__duration(999700, b, sizeof(b)), "1.0ms");
	CHECK_STR(units__duration(1230000, b, sizeof(b)), "1.2ms");
	CHECK_STR(units__duration(27000000, b, sizeof(b)), "27ms");
	CHECK_STR(units__duration(3400000000ULL, b, sizeof(b)), "3.4s");
	CHECK_STR(units__duration(120000000000ULL, b, sizeof(b)), "120s");
	CHECK_STR(units__duration(999000000000ULL, b, sizeof(b)), "999s");
	CHECK_STR(units__duration(999500000000ULL, b, sizeof(b)), "17m");
	CHECK_STR(units__duration(600000000000ULL, b, sizeof(b)), "600s");
	CHECK_STR(units__duration(1ULL << 42, b, sizeof(b)), "73m");
	CHECK_STR(units__duration(7200000000000ULL, b, sizeof(b)), "120m");
	CHECK_STR(units__duration(59970000000000ULL, b, sizeof(b)), "17h");
	CHECK_STR(units__duration(~0ULL, b, sizeof(b)), "5124096h");
}

int main(void)
{
	int failed = 0;

	RUN(test_seconds_valid);
	RUN(test_seconds_invalid);
	RUN(test_interval);
	RUN(test_positive);
	RUN(test_cpulist);
	RUN(test_cpulist_format);
	RUN(test_duration);
	RUN(test_args_defaults);
	RUN(test_args_values);
	RUN(test_args_mode);
	RUN(test_args_help);
	RUN(test_args_no_hidden_options);
	RUN(test_args_escaped);
	RUN(test_args_missing);
	RUN(test_args_ranges);
	RUN(test_args_together);
	RUN(test_args_by);
	RUN(test_args_again);
	RUN(test_units);
	return failed ? 1 : 0;
}
