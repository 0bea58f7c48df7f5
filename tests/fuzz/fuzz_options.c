// SPDX-License-Identifier: GPL-2.0
/*
 * The command line of src/cli.h. The first byte picks the parser (seconds,
 * duration, CPU list, positive integer, INTERVAL, or the whole command line;
 * the positive integer takes its maximum from the 8 bytes after it); the rest
 * is the argument, or the arguments split at NUL bytes. What parses must be in
 * range and read back the same from the value printed again; a command line
 * parses into options in range, or into one printable line of error.
 */
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "cpulist.h"
#include "harness.h"
#include "units.h"

#define NS_PER_SEC 1000000000ULL
#define MAX_NS	   (DRAINSTAT_SECONDS_MAX * NS_PER_SEC) /* 366 days */
#define MAX_ARGS   16
#define MASK_WORDS (DRAINSTAT_MAX_CPUS / 64)
#define CANARY	   0x5a5a5a5a5a5a5a5aULL

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "12.345": seconds, exactly what units__parse_seconds() gave for them. */
static void check_seconds(const char *arg)
{
	char again[64];
	__u64 ns, back;

	if (units__parse_seconds(arg, &ns))
		return;
	FUZZ_CHECK(ns > 0, "'%s' is 0 s", arg);
	FUZZ_CHECK(ns <= MAX_NS, "'%s' is over 366 days: %llu ns", arg, (unsigned long long)ns);
	FUZZ_CHECK(ns / NS_PER_SEC == strtoull(arg, NULL, 10), "'%s' gave %llu ns", arg,
		   (unsigned long long)ns);
	snprintf(again, sizeof(again), "%llu.%09llu", (unsigned long long)(ns / NS_PER_SEC),
		 (unsigned long long)(ns % NS_PER_SEC));
	FUZZ_CHECK(!units__parse_seconds(again, &back) && back == ns,
		   "'%s' is %llu ns, but '%s' does not read back", arg, (unsigned long long)ns,
		   again);
}

/* "500us": exact in seconds again, and within units__duration()'s rounding as printed. */
static void check_duration(const char *arg)
{
	char again[64], shown[UNITS_DURATION_LEN];
	__u64 ns, back;
	double err;

	if (units__parse_duration(arg, &ns))
		return;
	FUZZ_CHECK(ns > 0, "'%s' is 0 ns", arg);
	FUZZ_CHECK(ns <= MAX_NS, "'%s' is over 366 days: %llu ns", arg, (unsigned long long)ns);
	snprintf(again, sizeof(again), "%llu.%09llus", (unsigned long long)(ns / NS_PER_SEC),
		 (unsigned long long)(ns % NS_PER_SEC));
	FUZZ_CHECK(!units__parse_duration(again, &back) && back == ns,
		   "'%s' is %llu ns, but '%s' does not read back", arg, (unsigned long long)ns,
		   again);
	units__duration(ns, shown, sizeof(shown));
	FUZZ_CHECK(!units__parse_duration(shown, &back),
		   "'%s' is %llu ns, printed '%s' does not parse", arg, (unsigned long long)ns,
		   shown);
	/* one decimal from 1 to 9.9 units, none from 10 on: at most 5% off */
	err = ((double)back - (double)ns) / (double)ns;
	FUZZ_CHECK(err < 0.051 && err > -0.051, "'%s' is %llu ns, printed '%s' reads %llu ns", arg,
		   (unsigned long long)ns, shown, (unsigned long long)back);
}

static bool cpu_isset(const __u64 *mask, unsigned long cpu)
{
	return mask[cpu / 64] >> (cpu % 64) & 1;
}

/* The mask as "a-b,c": what the parser must read back into the same mask. */
static void format_cpulist(const __u64 *mask, char *buf, size_t size)
{
	unsigned long c, first;
	size_t n = 0;

	buf[0] = '\0';
	for (c = 0; c < DRAINSTAT_MAX_CPUS; c++) {
		if (!cpu_isset(mask, c))
			continue;
		for (first = c; c + 1 < DRAINSTAT_MAX_CPUS && cpu_isset(mask, c + 1); c++)
			;
		n += (size_t)snprintf(buf + n, size - n, first == c ? "%s%lu" : "%s%lu-%lu",
				      n ? "," : "", first, c);
	}
}

/* "0-3,8": only CPUs below DRAINSTAT_MAX_CPUS, at least one, each number named set. */
static void check_cpulist(const char *arg)
{
	__u64 mask[MASK_WORDS + 1], back[MASK_WORDS];
	char again[8 * DRAINSTAT_MAX_CPUS];
	const char *p;
	int i, set = 0;

	mask[MASK_WORDS] = CANARY;
	if (cpulist__parse(arg, mask))
		return;
	FUZZ_CHECK(mask[MASK_WORDS] == CANARY, "'%s' wrote past CPU %d", arg, DRAINSTAT_MAX_CPUS);
	for (i = 0; i < MASK_WORDS; i++)
		set += __builtin_popcountll(mask[i]);
	FUZZ_CHECK(set > 0, "'%s' names no CPU", arg);
	for (p = arg; *p; p++) {
		if (is_digit(*p) && (p == arg || !is_digit(p[-1])))
			FUZZ_CHECK(cpu_isset(mask, strtoul(p, NULL, 10)), "'%s' left out CPU %lu",
				   arg, strtoul(p, NULL, 10));
	}
	format_cpulist(mask, again, sizeof(again));
	FUZZ_CHECK(!cpulist__parse(again, back) && !memcmp(back, mask, sizeof(back)),
		   "'%s' does not read back as '%s'", arg, again);
}

/* A decimal in 1..max, nothing else. */
static void check_positive(const char *arg, __u64 max)
{
	char again[32];
	__u64 v, back;
	const char *p;

	if (cli__parse_positive(arg, max, &v))
		return;
	FUZZ_CHECK(v >= 1 && v <= max, "'%s' gave %llu, outside 1..%llu", arg,
		   (unsigned long long)v, (unsigned long long)max);
	for (p = arg; *p; p++)
		FUZZ_CHECK(is_digit(*p), "'%s' is not all digits", arg);
	snprintf(again, sizeof(again), "%llu", (unsigned long long)v);
	FUZZ_CHECK(!cli__parse_positive(again, max, &back) && back == v,
		   "'%s' gave %llu, which does not read back", arg, (unsigned long long)v);
}

/* INTERVAL: exactly the seconds units__parse_seconds() reads that are not below the minimum. */
static void check_interval(const char *arg)
{
	bool is_seconds, is_interval;
	__u64 ns, secs = 0;

	is_seconds = !units__parse_seconds(arg, &secs);
	is_interval = !cli__parse_interval(arg, &ns);
	FUZZ_CHECK(is_interval == (is_seconds && secs >= DRAINSTAT_INTERVAL_MIN_NS),
		   "'%s': INTERVAL %s, seconds %s (%llu ns)", arg, is_interval ? "yes" : "no",
		   is_seconds ? "yes" : "no", (unsigned long long)secs);
	FUZZ_CHECK(!is_interval || ns == secs, "'%s' is %llu ns as INTERVAL, %llu as seconds", arg,
		   (unsigned long long)ns, (unsigned long long)secs);
}

/* A usage error: one line of printable ASCII, whole (not cut by the buffer). */
static void check_error(const char *err)
{
	const char *p;

	FUZZ_CHECK(err[0], "an empty error");
	FUZZ_CHECK(strlen(err) < CLI_ERROR_LEN - 1, "an error that may be cut: '%.80s...'", err);
	for (p = err; *p; p++)
		FUZZ_CHECK(*p >= 0x20 && *p < 0x7f, "byte 0x%02x in '%s'", (unsigned char)*p, err);
}

/* Options that parsed: each in its range, and no combination the parser refuses. */
static void check_parsed(const struct options *o)
{
	FUZZ_CHECK(!o->interval_ns ||
		       (o->interval_ns >= DRAINSTAT_INTERVAL_MIN_NS && o->interval_ns <= MAX_NS),
		   "INTERVAL %llu ns", (unsigned long long)o->interval_ns);
	FUZZ_CHECK(!o->count || o->interval_ns, "COUNT without INTERVAL");
	FUZZ_CHECK(o->duration_ns <= MAX_NS && o->slow_ns <= MAX_NS, "-d or -T over 366 days");
	FUZZ_CHECK(o->stuck_ns > 0 && o->stuck_ns <= MAX_NS, "--stuck %llu ns",
		   (unsigned long long)o->stuck_ns);
	FUZZ_CHECK(!(o->prom_path && o->json), "--prom with -j");
	FUZZ_CHECK(o->prom_sites >= 1 && o->prom_sites <= 1000, "--prom-sites %u", o->prom_sites);
	FUZZ_CHECK(o->prom_sites == 20 || o->prom_path, "--prom-sites without --prom");
	FUZZ_CHECK(!o->comm || (o->comm[0] && strlen(o->comm) < DRAINSTAT_COMM_LEN), "-c '%s'",
		   o->comm);
	FUZZ_CHECK(o->pid >= 0 && o->pid <= 4194304, "-p %d", o->pid);
	FUZZ_CHECK(o->mode <= MODE_TRACEPOINT, "--mode %d", o->mode);
	FUZZ_CHECK(o->max_sites <= DRAINSTAT_MAX_SITES && o->max_stacks <= DRAINSTAT_MAX_STACKS,
		   "--max-sites %u, --max-stacks %u", o->max_sites, o->max_stacks);
}

/*
 * args (len bytes) split at NUL bytes: drainstat's arguments. Parsed again as
 * getopt left them (options first), they give the same.
 */
static void check_args(char *args, size_t len)
{
	char *argv[MAX_ARGS + 2] = {"drainstat"}, err[CLI_ERROR_LEN], err2[CLI_ERROR_LEN];
	struct options o, o2;
	int argc = 1, ret;
	size_t i;

	argv[argc++] = args;
	for (i = 0; i < len && argc <= MAX_ARGS; i++) {
		if (!args[i])
			argv[argc++] = &args[i + 1];
	}
	argv[argc] = NULL;
	ret = cli__parse_args(argc, argv, &o, err, sizeof(err));
	FUZZ_CHECK(ret == -EINVAL || (ret >= CLI_RUN && ret <= CLI_VERSION), "returned %d", ret);
	if (ret == -EINVAL)
		check_error(err);
	if (ret == CLI_RUN)
		check_parsed(&o);
	FUZZ_CHECK(cli__parse_args(argc, argv, &o2, err2, sizeof(err2)) == ret,
		   "parsed again, not %d", ret);
	FUZZ_CHECK(ret != -EINVAL || !strcmp(err, err2), "'%s', then '%s'", err, err2);
	FUZZ_CHECK(ret != CLI_RUN || !memcmp(&o, &o2, sizeof(o)), "other options parsed again");
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	struct bytes b = {data, size};
	__u8 which = bytes__u8(&b) % 6;
	__u64 max = which == 3 ? bytes__u64(&b) : 0;
	char *arg = malloc(b.left + 1); /* exactly the argument: ASan sees any overread */

	FUZZ_CHECK(arg, "out of memory");
	memcpy(arg, b.p, b.left);
	arg[b.left] = '\0';
	if (which == 0)
		check_seconds(arg);
	else if (which == 1)
		check_duration(arg);
	else if (which == 2)
		check_cpulist(arg);
	else if (which == 3)
		check_positive(arg, max);
	else if (which == 4)
		check_interval(arg);
	else
		check_args(arg, b.left);
	free(arg);
	return 0;
}
