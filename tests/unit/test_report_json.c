// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON report without a kernel: synthetic snapshots and the fixture kallsyms
 * go through model__build() and report_json__print(), and the output must equal
 * tests/golden/report*.json (regenerate with DRAINSTAT_GOLDEN_UPDATE=1 after
 * checking the difference by eye). Every golden is also checked by jq when the
 * machine has it.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "golden.h"
#include "hist.h"
#include "ksyms.h"
#include "model.h"
#include "report_json.h"
#include "report_text.h"
#include "tracer.h"
#include "umaps.h"

#define MS GOLDEN_MS
#define US GOLDEN_US
/* 2026-12-03T17:06:34.123456789Z: the reports' wall time, an input like the rest */
#define WALL_NS (1796317594ULL * 1000000000ULL + 123456789ULL)

static struct golden_maps *make_maps(void)
{
	return golden__make_maps(1, "evil\x1b\"\\\n\xff\xc3\xa9");
}

static void make_snapshot(struct snapshot *s)
{
	golden__read_maps(make_maps(), s, 10000 * MS);
	s->wall_ns = WALL_NS;
}

static const struct model_info *const info = &golden_info;

static char *render(const struct model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	report_json__print(f, m, "0.0.0");
	fclose(f);
	return buf;
}

/* jq -e fails on anything but one valid JSON value that is neither false nor null. */
static void check_jq(const char *path)
{
	char cmd[512];

	if (system("command -v jq >/dev/null 2>&1")) {
		printf("note: jq not found, %s not validated\n", path);
		return;
	}
	snprintf(cmd, sizeof(cmd), "jq -e . %s >/dev/null", path);
	CHECK(system(cmd) == 0);
}

/* Compares got with tests/golden/name, and checks it is one line of JSON. */
static void check_line(const char *name, const char *got)
{
	char path[256];

	CHECK(got && strchr(got, '\n') == got + strlen(got) - 1);
	golden__check(name, got ? got : "", path, sizeof(path));
	check_jq(path);
}

static void check_golden(const char *name, const struct model *m)
{
	char *got = render(m);

	check_line(name, got);
	free(got);
}

/* -T: the drain_in_flight event of m's oldest drain, seen at m's wall time. */
static void check_event_golden(const struct model *m)
{
	char *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);

	report_json__drain_in_flight(f, &m->in_flight[0], 2000 * MS, m->wall_ns);
	fclose(f);
	check_line("event-drain-in-flight.json", got);
	free(got);
}

static void test_json_tracepoint(void)
{
	struct golden_fix f;

	golden__open(&f, true);
	make_snapshot(&f.s);
	golden__build(&f, info);
	CHECK(f.m.nr_sites == 4 && f.m.total[SITE_DRAINS] == 307 && f.m.total[SITE_WORKS] == 310);
	check_golden("report.json", &f.m);
	golden__close(&f);
}

/* m's text report, without its header; freed by the caller. */
static char *render_text(const struct model *m)
{
	struct text_opts o = {.histograms = true};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	report_text__print(f, m, &o);
	fclose(f);
	return buf;
}

/*
 * Full mode, a kernel that drains other CPUs in place (the Per-CPU Work
 * helpers), seen by what it does: the site's CPUs drained in place and their
 * histogram beside its works, which stay; the drain that khugepaged has in
 * flight drains CPU 3 now, 2 done, and is no mutex waiter.
 */
static void test_in_place(void)
{
	struct golden_maps *k = make_maps();
	struct model_info i = *info;
	struct drain_state *d;
	char *got;
	struct golden_fix f;

	golden__open(&f, true);
	golden__full_info(&i);
	i.has_in_place = true;
	i.stuck_ns = 1000 * MS;
	golden__add_full_mode(k);
	k->sites[0].count[SITE_IN_PLACE] = 3;
	golden__hist_fill(&k->sites[0].hist[SITE_IN_PLACE_NS], 40 * US, 1000, 3);
	golden__read_maps(k, &f.s, 10000 * MS);
	golden__add_in_flight(&f.s, 20000 * MS, true, golden_fadvise_stack, GOLDEN_FADVISE_FRAMES);
	f.s.wall_ns = WALL_NS;
	d = &f.s.in_flight.drains[1].d;
	d->in_place = 2;
	d->in_place_cpu = 3;
	d->in_place_start_ns = d->start_ns + 1000;
	golden__build(&f, &i);
	CHECK(f.m.info.in_place_seen && f.m.total[SITE_IN_PLACE] == 3 &&
	      f.m.total[SITE_WORKS] == 310);
	CHECK(f.m.in_flight[1].phase == PHASE_IN_PLACE && f.m.mutex_waiters == 0);
	got = render(&f.m);
	CHECK(got && strstr(got, "\"local_drains\":true,\"in_place\":true},"));
	CHECK(got && strstr(got, ",\"works\":310,\"self_works\":4,\"in_place\":3,"));
	CHECK(got && strstr(got, "\"ipis\":290,\"in_place\":3,\"dispatch_ns\":{\"count\":300,"));
	CHECK(got && strstr(got, "\"in_place_ns\":{\"count\":3,"));
	CHECK(got && strstr(got, "\"state\":\"draining_in_place\",\"works\":0,\"pending_works\":0,"
				 "\"in_place\":2,\"in_place_cpu\":3,"));
	free(got);
	got = render_text(&f.m);
	CHECK(got && strstr(got, "310 works (4 self), 3 CPUs drained in place, "));
	CHECK(got && strstr(got, " INPLACE   p50   p99\n"));
	CHECK(got && strstr(got, "    in place: 3 samples\n"));
	CHECK(got &&
	      strstr(got, ": in flight 7.9s, draining other CPUs in place (2 done, CPU 3 now)\n"));
	free(got);
	golden__close(&f);
}

/*
 * Full mode with Queue PerCPU Work: the same maps, but every number that
 * depends on a drain's works is 0, as "sees" says, and no CPU nor mutex waiter;
 * drains, their wait and the forced drains are kept.
 */
static void test_json_qpw(void)
{
	struct model_info i = *info;
	char *got;
	struct golden_fix f;

	golden__open(&f, true);
	golden__read_qpw(make_maps(), &f.s, &i);
	f.s.wall_ns = WALL_NS;
	i.stuck_ns = 1000 * MS;
	golden__build(&f, &i);
	CHECK(f.m.total[SITE_WORKS] == 310 && f.m.nr_cpus == 2);
	CHECK(f.m.in_flight[1].phase == PHASE_NO_WORK && f.m.mutex_waiters == 0);
	got = render(&f.m);
	CHECK(got && strstr(got, "\"qpw\":true,"));
	CHECK(got && strstr(got, "\"sees\":{\"drain_entry\":true,\"works\":false,"));
	CHECK(got && strstr(got, ",\"drains\":332,\"works\":0,\"self_works\":0,"));
	CHECK(got &&
	      strstr(got, "{\"site\":\"generic_fadvise\",\"comm\":\"drainforce\","
			  "\"cgroup\":null,\"cgroup_id\":0,\"pod\":null,\"namespace\":null,"
			  "\"pod_uid\":null,\"container\":null,\"runtime\":null,\"qos\":null,"
			  "\"drains\":325,\"forced_drains\":"
			  "0,\"empty_drains\":0,"
			  "\"own_only_drains\":0,\"works\":0,\"self_works\":0,"
			  "\"remote_works\":0,\"ipis\":0,\"in_place\":0,\"dispatch_ns\":{"
			  "\"count\":0,"));
	CHECK(got && strstr(got, "\"wait_ns\":{\"count\":300,"));
	CHECK(got && strstr(got, "\"lock_ns\":{\"count\":0,"));
	CHECK(got && strstr(got, "\"cpus\":[],"));
	CHECK(got && strstr(got, "\"mutex_waiters\":null,"));
	CHECK(got && strstr(got, "\"state\":\"no_work_queued\","));
	free(got);
	golden__close(&f);
}

/* Exact wait, lock, empty and forced drains, local drains, IPIs, a pid filter. */
static void test_json_full_mode(void)
{
	struct model_info i = *info;
	struct golden_maps *k;
	struct golden_fix f;

	golden__full_info(&i);
	i.filter_pid = 4242;
	i.filter_comm = "drainforce";
	i.filter_cgroup = "/sys/fs/cgroup/ds\x1b\"";
	i.filter_cpus = "0,2-3";
	i.filter_cpu_mask = golden_cpus_0_2_3;
	golden__open(&f, true);
	k = make_maps();
	i.stuck_ns = 1000 * MS;
	golden__add_full_mode(k);
	golden__read_maps(k, &f.s, 10000 * MS);
	f.s.wall_ns = WALL_NS;
	golden__add_in_flight(&f.s, 20000 * MS, true, golden_fadvise_stack, GOLDEN_FADVISE_FRAMES);
	golden__build(&f, &i);
	golden__name_in_flight(&f.m);
	CHECK(f.m.local_drains == 8000);
	CHECK(f.m.nr_in_flight == 3);
	check_golden("report-full.json", &f.m);
	check_event_golden(&f.m);
	golden__close(&f);
}

/* --by's default: "cgroup" and "cgroup_id" beside "comm"; with --by=cgroup, "comm" is null. */
static void test_json_cgroups(void)
{
	struct model_info i = *info;
	struct golden_maps *k = make_maps();
	char *got;
	struct golden_fix f;

	i.by_cgroup = true;
	golden__add_cgroups(k);
	golden__open(&f, true);
	golden__read_maps(k, &f.s, 10000 * MS);
	f.s.wall_ns = WALL_NS;
	golden__build(&f, &i);
	golden__name_cgroups(&f.m);
	check_golden("report-cgroup.json", &f.m);
	f.m.info.comm_merged = true;
	got = render(&f.m);
	CHECK(got &&
	      strstr(got, "{\"site\":\"generic_fadvise\",\"comm\":null,"
			  "\"cgroup\":\"/system.slice/drainwork.service\",\"cgroup_id\":101,"));
	free(got);
	golden__close(&f);
}

static void test_json_empty(void)
{
	struct golden_fix f;

	golden__open(&f, false);
	f.s.taken_ns = 5000 * MS;
	f.s.wall_ns = WALL_NS;
	golden__build(&f, info);
	check_golden("report-empty.json", &f.m);
	golden__close(&f);
}

/* "time" is the model's wall time, in UTC, cut to the microsecond; null when unknown. */
static void test_json_time(void)
{
	static const struct {
		__u64 wall_ns;
		const char *want;
	} cases[] = {
	    {WALL_NS, "{\"time\":\"2026-12-03T17:06:34.123456Z\","},
	    {1000000000ULL * 86400 * 365 + 999, "{\"time\":\"1971-01-01T00:00:00.000000Z\","},
	    {1796317594999999999ULL, "{\"time\":\"2026-12-03T17:06:34.999999Z\","},
	    {0, "{\"time\":null,"},
	};
	struct golden_fix f;
	size_t i;
	char *got;

	golden__open(&f, false);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		f.s.taken_ns = 5000 * MS;
		f.s.wall_ns = cases[i].wall_ns;
		golden__build(&f, info);
		got = render(&f.m);
		CHECK(got && !strncmp(got, cases[i].want, strlen(cases[i].want)));
		if (got && strncmp(got, cases[i].want, strlen(cases[i].want)))
			fprintf(stderr, "  got %.60s, want %s\n", got, cases[i].want);
		free(got);
		golden__clear(&f);
	}
	golden__close(&f);
}

/* A user frame's file: a newline in its name, as /proc/PID/maps writes it. */
static struct umaps *hostile_maps(void)
{
	char path[] = "/tmp/test-report-json.XXXXXX";
	struct umaps *um = NULL;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fputs("55d0c5a00000-55d0c5a02000 r-xp 00002000 fd:01 123 /nonexistent/my\\012app\n", f);
	fclose(f);
	CHECK(umaps__load(0, path, &um) == 0);
	unlink(path);
	return um;
}

/*
 * -T: a slow drain as the ring buffer gives it, its comm and a user frame's file
 * name holding bytes no parser should trust, read 5 ms after it ended.
 */
static void test_json_slow_drain(void)
{
	const struct snap_clock now = {.mono_ns = 30000 * MS, .wall_ns = WALL_NS};
	struct slow_drain d = {.ev = {.end_ns = now.mono_ns - 5 * MS,
				      .wait_ns = 4 * MS,
				      .lock_ns = 663 * US,
				      .pid = 224,
				      .tid = 230,
				      .nr_targets = 2}};
	struct model_slow_drain sd;
	struct umaps *um = hostile_maps();
	struct golden_fix fix;
	char *got = NULL;
	size_t len = 0;
	FILE *f;

	golden__open(&fix, true);
	/* the byte 0xff beside the character U+00FF */
	memcpy(d.ev.comm, "ev\x1b\"\\\n\xff\xc3\xbf", 10);
	d.ev.targets[0] = (struct slow_target){.cpu = 1, .dispatch_ns = 4 * MS, .run_ns = 122 * US};
	d.ev.targets[1] = (struct slow_target){
	    .cpu = 0, .how = SLOW_SELF, .dispatch_ns = 30 * US, .run_ns = 2 * US};
	memcpy(d.kips, golden_fadvise_stack, sizeof(golden_fadvise_stack));
	d.nr_kips = GOLDEN_FADVISE_FRAMES;
	d.uips[0] = 0x55d0c5a00010;
	d.uips[1] = 0x7f0000000010;
	d.nr_uips = 2;
	CHECK(model__slow_drain(&d, fix.ks, um, NULL, NULL, &now, &sd) == 0);
	CHECK(sd.wall_ns == WALL_NS - 5 * MS);
	f = open_memstream(&got, &len);
	report_json__slow_drain(f, &sd);
	fclose(f);
	check_line("event-slow-drain.json", got);
	free(got);
	model__slow_drain_free(&sd);
	umaps__free(um);
	golden__close(&fix);
}

static char *escape(const char *s, size_t len)
{
	static char out[4096];
	FILE *f = fmemopen(out, sizeof(out), "w");

	report_json__string(f, s, len);
	fclose(f);
	return out;
}

/*
 * Strings are bytes written as the text report writes them (escape__text()),
 * then quoted for JSON: decoded, every backslash starts \xHH, so the byte 0xff
 * and the character U+00FF stay apart.
 */
/* 255 CPUs: JSON keeps every one, as many objects as the model has CPUs. */
static void test_json_many_cpus(void)
{
	struct cpu_stats *cpus = golden__wide_cpus(255);
	char *got;
	struct golden_fix f;

	golden__open(&f, false);
	make_snapshot(&f.s);
	CHECK(snapshot__set_cpus(&f.s, cpus, 255) == 0);
	free(cpus);
	golden__build(&f, info);
	got = render(&f.m);
	CHECK(golden__count(got, "{\"cpu\":") == 255);
	CHECK(strstr(got, "{\"cpu\":254,\"works\":50,") != NULL);
	free(got);
	golden__close(&f);
}

static void test_json_escape(void)
{
	char big[600], want[2 * sizeof(big) * 5];
	size_t i;

	CHECK_STR(escape("a\"b", 16), "\"a\\\"b\"");
	CHECK_STR(escape("a\\b", 16), "\"a\\\\x5cb\"");
	CHECK_STR(escape("a\nb\tc", 16), "\"a\\\\x0ab\\\\x09c\"");
	CHECK_STR(escape("\x1b[31m\x7f", 16), "\"\\\\x1b[31m\\\\x7f\"");
	CHECK_STR(escape("\xff", 16), "\"\\\\xff\"");
	CHECK_STR(escape("\xc3\xbf", 16), "\"\\\\xc3\\\\xbf\"");
	/* UTF-8 or not, every byte past ASCII is escaped, as in the text report */
	CHECK_STR(escape("caf\xc3\xa9 \xf0\x9f\x90\xa7", 16),
		  "\"caf\\\\xc3\\\\xa9 \\\\xf0\\\\x9f\\\\x90\\\\xa7\"");
	CHECK_STR(escape("caf\xc3\xa9", 4), "\"caf\\\\xc3\"");
	CHECK_STR(escape("\x80x", 16), "\"\\\\x80x\"");
	/* a comm fills its 16 bytes with no NUL: len bounds it */
	CHECK_STR(escape("0123456789abcdefXYZ", 16), "\"0123456789abcdef\"");
	CHECK_STR(escape("", 16), "\"\"");
	/* longer than a piece of the escaper's: no byte lost or doubled at the seams */
	for (i = 0; i < sizeof(big); i++)
		big[i] = i % 3 ? 'a' : '\xff';
	strcpy(want, "\"");
	for (i = 0; i < sizeof(big); i++)
		strcat(want, i % 3 ? "a" : "\\\\xff");
	strcat(want, "\"");
	CHECK(!strcmp(escape(big, sizeof(big)), want));
}

int main(void)
{
	int failed = 0;

	RUN(test_json_tracepoint);
	RUN(test_json_full_mode);
	RUN(test_json_qpw);
	RUN(test_in_place);
	RUN(test_json_empty);
	RUN(test_json_time);
	RUN(test_json_slow_drain);
	RUN(test_json_many_cpus);
	RUN(test_json_escape);
	RUN(test_json_cgroups);
	return failed ? 1 : 0;
}
