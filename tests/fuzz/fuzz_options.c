// SPDX-License-Identifier: GPL-2.0
/*
 * The option values of src/cli.h. The first byte picks the parser (seconds,
 * duration, CPU list, positive integer; the last takes its maximum from the 8
 * bytes after it); the rest is the argument. What parses must be in range and
 * read back the same from the value printed again.
 */
#include <string.h>

#include "cli.h"
#include "harness.h"
#include "units.h"

#define NS_PER_SEC  1000000000ULL
#define SECONDS_MAX (366ULL * 24 * 3600) /* the man page's limit on the integer part */
#define MASK_WORDS  (DRAINSTAT_MAX_CPUS / 64)
#define CANARY	    0x5a5a5a5a5a5a5a5aULL

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "12.345": seconds, exactly what cli__parse_seconds() gave for them. */
static void check_seconds(const char *arg)
{
	char again[64];
	__u64 ns, back;

	if (cli__parse_seconds(arg, &ns))
		return;
	FUZZ_CHECK(ns > 0, "'%s' is 0 s", arg);
	FUZZ_CHECK(ns / NS_PER_SEC <= SECONDS_MAX, "'%s' is over a year: %llu ns", arg,
		   (unsigned long long)ns);
	FUZZ_CHECK(ns / NS_PER_SEC == strtoull(arg, NULL, 10), "'%s' gave %llu ns", arg,
		   (unsigned long long)ns);
	snprintf(again, sizeof(again), "%llu.%09llu", (unsigned long long)(ns / NS_PER_SEC),
		 (unsigned long long)(ns % NS_PER_SEC));
	FUZZ_CHECK(!cli__parse_seconds(again, &back) && back == ns,
		   "'%s' is %llu ns, but '%s' does not read back", arg, (unsigned long long)ns,
		   again);
}

/* "500us": exact in seconds again, and within units__duration()'s rounding as printed. */
static void check_duration(const char *arg)
{
	char again[64], shown[UNITS_DURATION_LEN];
	__u64 ns, back;
	double err;

	if (cli__parse_duration(arg, &ns))
		return;
	FUZZ_CHECK(ns > 0, "'%s' is 0 ns", arg);
	snprintf(again, sizeof(again), "%llu.%09llus", (unsigned long long)(ns / NS_PER_SEC),
		 (unsigned long long)(ns % NS_PER_SEC));
	FUZZ_CHECK(!cli__parse_duration(again, &back) && back == ns,
		   "'%s' is %llu ns, but '%s' does not read back", arg, (unsigned long long)ns,
		   again);
	if (ns >= SECONDS_MAX * NS_PER_SEC)
		return; /* printed, it may round up past the largest integer part */
	units__duration(ns, shown, sizeof(shown));
	FUZZ_CHECK(!cli__parse_duration(shown, &back),
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
	if (cli__parse_cpulist(arg, mask))
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
	FUZZ_CHECK(!cli__parse_cpulist(again, back) && !memcmp(back, mask, sizeof(back)),
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

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	struct bytes b = {data, size};
	__u8 which = bytes__u8(&b) % 4;
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
	else
		check_positive(arg, max);
	free(arg);
	return 0;
}
