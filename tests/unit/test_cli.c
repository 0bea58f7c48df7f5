// SPDX-License-Identifier: GPL-2.0
/* Option value parsers and duration units. */
#include <errno.h>

#include "check.h"
#include "cli.h"
#include "units.h"

static void test_seconds_valid(void)
{
	__u64 ns = 0;

	CHECK(cli__parse_seconds("10", &ns) == 0 && ns == 10000000000ULL);
	CHECK(cli__parse_seconds("2.5", &ns) == 0 && ns == 2500000000ULL);
	CHECK(cli__parse_seconds("0.1", &ns) == 0 && ns == 100000000ULL);
	CHECK(cli__parse_seconds("0.000000001", &ns) == 0 && ns == 1);
	CHECK(cli__parse_seconds("31622400", &ns) == 0); /* a leap year */
}

static void test_seconds_invalid(void)
{
	static const char *const bad[] = {
	    "",	     "0",    "0.0", "-1", "+1", "1s",	    "1.",
	    ".5",    "abc",  "1e3", " 1", "1 ", "31622401", "99999999999999999999999",
	    "1.2.3", "0x10",
	};
	__u64 ns = 77;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (cli__parse_seconds(bad[i], &ns) != -EINVAL)
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
		CHECK(cli__parse_seconds(bad[i], &ns) == -EINVAL);
	}
	CHECK(cli__parse_seconds(NULL, &ns) == -EINVAL);
	CHECK(ns == 77);
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
					  "1024", "0-1024", "a",  "1 ", "1,,2", "0x1", "1-2-3"};
	__u64 mask[DRAINSTAT_MAX_CPUS / 64];
	size_t i;

	CHECK(cli__parse_cpulist("0", mask) == 0 && mask[0] == 1);
	CHECK(cli__parse_cpulist("0-3,8", mask) == 0 && mask[0] == 0x10f && mask[1] == 0);
	CHECK(cli__parse_cpulist("63-64,1023", mask) == 0);
	CHECK(mask[0] == 1ULL << 63 && mask[1] == 1 && mask[15] == 1ULL << 63);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (cli__parse_cpulist(bad[i], mask) != -EINVAL)
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
		CHECK(cli__parse_cpulist(bad[i], mask) == -EINVAL);
	}
}

static void test_duration(void)
{
	static const char *const bad[] = {"",	   "1",	 "ms",	 "1 ms", "-1ms", "0us",
					  "0.5ns", "1m", "1.ms", "5sec", "1e3us"};
	__u64 ns = 0;
	size_t i;

	CHECK(cli__parse_duration("500us", &ns) == 0 && ns == 500000);
	CHECK(cli__parse_duration("2ms", &ns) == 0 && ns == 2000000);
	CHECK(cli__parse_duration("1.5s", &ns) == 0 && ns == 1500000000);
	CHECK(cli__parse_duration("800ns", &ns) == 0 && ns == 800);
	CHECK(cli__parse_duration("0.25ms", &ns) == 0 && ns == 250000);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (cli__parse_duration(bad[i], &ns) != -EINVAL)
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
		CHECK(cli__parse_duration(bad[i], &ns) == -EINVAL);
	}
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
}

int main(void)
{
	int failed = 0;

	RUN(test_seconds_valid);
	RUN(test_seconds_invalid);
	RUN(test_positive);
	RUN(test_cpulist);
	RUN(test_duration);
	RUN(test_units);
	return failed ? 1 : 0;
}
