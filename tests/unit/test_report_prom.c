// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus exposition from synthetic models: golden files in tests/golden/
 * (regenerate with DRAINSTAT_GOLDEN_UPDATE=1 after checking the difference by
 * eye), checked by promtool when it is installed; bucket edges, escaping, and the
 * fold of small sites into site="other".
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "golden.h"
#include "hist.h"
#include "metric.h"
#include "model.h"
#include "report_prom.h"
#include "snapshot.h"

#define MS 1000000ULL
#define US 1000ULL

static const char *const advices[FADVISE_ADVICE_SLOTS] = {
    "normal", "random", "sequential", "willneed", "dontneed", "noreuse", "other",
};

static struct model_site *add_row(struct model *m, const char *site, const char *comm, int drains,
				  int self, __u64 dispatch, __u64 run, __u64 wait)
{
	struct model_site *r = &m->sites[m->nr_sites++];

	snprintf(r->site, sizeof(r->site), "%s", site);
	snprintf(r->comm, sizeof(r->comm), "%s", comm);
	r->count[SITE_DRAINS] = (__u64)drains;
	r->count[SITE_WORKS] = (__u64)drains + (__u64)self;
	r->count[SITE_SELF_WORKS] = (__u64)self;
	r->count[SITE_REMOTE_WORKS] = (__u64)drains;
	golden__sparse_fill(&m->arena, &r->hist[SITE_DISPATCH_NS], dispatch, dispatch / 50,
			    drains + self);
	golden__sparse_fill(&m->arena, &r->hist[SITE_RUN_NS], run, run / 100, drains + self);
	golden__sparse_fill(&m->arena, &r->hist[SITE_WAIT_NS], wait, wait / 40, drains);
	return r;
}

static const struct model_info tracepoint_info = {
    .mode = "tracepoint",
    .kernel = "6.18.44-test",
    .wait_is_lower_bound = true,
    .has_fadvise = true,
    .cumulative = true,
};

/* drainforce's fadvise drains, compaction from two comms, khugepaged, two victim CPUs. */
static void make_model(struct model *m, const struct model_info *info)
{
	int i;

	memset(m, 0, sizeof(*m));
	m->info = *info;
	m->sites = calloc(8, sizeof(*m->sites));
	add_row(m, "generic_fadvise", "drainforce", 300, 1, 12 * US, 3 * US, 40 * US);
	add_row(m, "sysctl_compaction_handler", "bash", 3, 3, 30 * US, 900 * US, 2 * MS);
	add_row(m, "sysctl_compaction_handler", "sh", 1, 0, 25 * US, 800 * US, 1800 * US);
	add_row(m, "khugepaged_do_scan", "khugepaged", 3, 0, 8 * US, 2 * US, 60 * US);
	m->cpus = calloc(2, sizeof(*m->cpus));
	m->nr_cpus = 2;
	m->cpus[0].count[CPU_WORKS] = 305;
	golden__sparse_fill(&m->arena, &m->cpus[0].hist[CPU_DISPATCH_NS], 12 * US, 240, 305);
	golden__sparse_fill(&m->arena, &m->cpus[0].hist[CPU_RUN_NS], 3 * US, 30, 305);
	m->cpus[1].cpu = 3;
	m->cpus[1].count[CPU_WORKS] = 6;
	m->cpus[1].count[CPU_SELF_WORKS] = 4;
	golden__sparse_fill(&m->arena, &m->cpus[1].hist[CPU_DISPATCH_NS], 25 * US, 500, 6);
	golden__sparse_fill(&m->arena, &m->cpus[1].hist[CPU_RUN_NS], 800 * US, 8000, 6);
	for (i = 0; i < FADVISE_ADVICE_SLOTS; i++)
		m->fadvise[i].advice = advices[i];
	m->fadvise[FADVISE_DONTNEED].calls = 300;
	m->fadvise[FADVISE_DONTNEED].escalations = 300;
	m->fadvise[1].calls = 1;
	m->counters[CNT_STACK_LOST] = 1;
	m->counters[CNT_WORK_UNSEEN] = 2;
}

/* m exported with the cgroup labels of how. */
static char *render_cgroup(const struct model *m, int max_sites, enum prom_cgroup how,
			   struct prom_memory *pm)
{
	struct prom_opts o = {
	    .max_sites = max_sites, .cgroup = how, .version = "0.0.0", .memory = pm};
	char *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);

	report_prom__print(f, m, &o);
	fclose(f);
	return got;
}

static char *render_with(const struct model *m, int max_sites, struct prom_memory *pm)
{
	return render_cgroup(m, max_sites, PROM_CGROUP_UNIT, pm);
}

static char *render(const struct model *m, int max_sites)
{
	return render_with(m, max_sites, NULL);
}

/* m's export (cgroup labels as how) against tests/golden/name, which promtool must accept. */
static void check_golden_cgroup(const char *name, const struct model *m, enum prom_cgroup how)
{
	char path[256], cmd[512], *got = render_cgroup(m, 10, how, NULL);

	golden__check(name, got, path, sizeof(path));
	CHECK(got[strlen(got) - 1] == '\n');
	if (!system("command -v promtool >/dev/null 2>&1")) {
		snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
		CHECK(system(cmd) == 0);
	}
	free(got);
}

static void check_golden(const char *name, const struct model *m)
{
	check_golden_cgroup(name, m, PROM_CGROUP_UNIT);
}

static void test_prom_tracepoint(void)
{
	struct model m;

	make_model(&m, &tracepoint_info);
	check_golden("report.prom", &m);
	model__free(&m);
}

/*
 * The drains in flight of golden__add_in_flight(), as model__build() makes
 * them, lent to m: *held keeps them (and frees them) meanwhile.
 */
static void lend_in_flight(struct model *m, struct model *held)
{
	struct snapshot s = {};

	snapshot__reset(&s, 20000 * MS);
	golden__add_in_flight(&s, 20000 * MS, m->info.entry_visible, NULL, 0);
	CHECK(model__build(&s, NULL, 0, NULL, &m->info, held) == 0);
	snapshot__free(&s);
	m->in_flight = held->in_flight;
	m->nr_in_flight = held->nr_in_flight;
	model__sum_in_flight(m);
}

/* Full mode: lock time, empty and forced drains, local drains, IPIs, drains in flight. */
/* make_model() in full mode (qpw: with Queue PerCPU Work), its drains in flight in held. */
static void make_full_model(struct model *m, struct model *held, bool qpw)
{
	struct model_info i = tracepoint_info;
	struct model_site *r;

	i.mode = "full";
	i.wait_is_lower_bound = false;
	i.entry_visible = true;
	i.qpw = qpw;
	i.works_unseen = qpw;
	i.has_ipi = true;
	i.has_local = true;
	make_model(m, &i);
	r = &m->sites[0];
	r->count[SITE_DRAINS] += 25;
	r->count[SITE_EMPTY_DRAINS] = 20;
	r->count[SITE_OWN_ONLY_DRAINS] = 5;
	golden__sparse_fill(&m->arena, &r->hist[SITE_OWN_NS], 1500, 20, 325);
	r->count[SITE_IPIS] = 290;
	golden__sparse_fill(&m->arena, &r->hist[SITE_LOCK_NS], 2 * US, 100, 300);
	golden__sparse_fill(&m->arena, &r->hist[SITE_LOCAL_NS], 700, 10, 8000);
	m->sites[1].count[SITE_FORCED_DRAINS] = 2;
	m->info.stuck_ns = 1000 * MS;
	lend_in_flight(m, held);
}

/* m and held of make_full_model(): m's drains in flight are held's, freed once. */
static void free_full_model(struct model *m, struct model *held)
{
	m->in_flight = NULL;
	model__free(m);
	model__free(held);
}

static void test_prom_full(void)
{
	struct model m, held;

	make_full_model(&m, &held, false);
	check_golden("report-full.prom", &m);
	free_full_model(&m, &held);
}

/*
 * Full mode on a kernel that drains other CPUs in place (the Per-CPU Work
 * helpers), seen by what it does: their families, beside the works'.
 */
static void test_prom_in_place(void)
{
	struct model m, held;
	struct model_site *r;

	make_full_model(&m, &held, false);
	m.info.has_in_place = m.info.in_place_seen = true;
	r = &m.sites[0];
	r->count[SITE_IN_PLACE] = 3;
	golden__sparse_fill(&m.arena, &r->hist[SITE_IN_PLACE_NS], 40 * US, 1000, 3);
	check_golden("report-in-place.prom", &m);
	free_full_model(&m, &held);
}

/*
 * With Queue PerCPU Work nothing that depends on a drain's works is exported:
 * no works, empty drains, dispatch, run, lock, IPIs, victim CPUs or mutex
 * waiters; drains, their wait, forced and local drains stay, and the info says so.
 */
static void test_prom_qpw(void)
{
	static const char *const gone[] = {
	    "drainstat_works_total",
	    "drainstat_empty_drains_total",
	    "drainstat_dispatch_seconds",
	    "drainstat_run_seconds",
	    "drainstat_lock_seconds",
	    "drainstat_ipis_total",
	    "drainstat_victim_works_total",
	    "drainstat_victim_dispatch_seconds_total",
	    "drainstat_victim_run_seconds_total",
	    "drainstat_mutex_waiters",
	};
	static const char *const kept[] = {
	    "\ndrainstat_drains_total{site=\"generic_fadvise\"} 325\n",
	    "\ndrainstat_forced_drains_total{site=\"sysctl_compaction_handler\"} 2\n",
	    "\ndrainstat_wait_seconds_count{site=\"generic_fadvise\"} 300\n",
	    "\ndrainstat_local_drains_total{site=\"generic_fadvise\"} 8000\n",
	    "\ndrainstat_drains_in_flight 3\n",
	    ",kernel=\"6.18.44-test\",qpw=\"true\"} 1\n",
	};
	struct model m, held;
	char *got;
	size_t k;

	make_full_model(&m, &held, true);
	got = render(&m, 10);
	for (k = 0; k < sizeof(gone) / sizeof(gone[0]); k++)
		CHECK(!strstr(got, gone[k]));
	for (k = 0; k < sizeof(kept) / sizeof(kept[0]); k++)
		CHECK(strstr(got, kept[k]));
	free(got);
	free_full_model(&m, &held);
}

/* le="2^k ns" counts exactly the samples below 2^k ns: the edges are bucket edges. */
static void test_prom_bucket_edges(void)
{
	struct model m;
	char *got;

	memset(&m, 0, sizeof(m));
	m.info = tracepoint_info;
	m.info.has_fadvise = false;
	m.sites = calloc(1, sizeof(*m.sites));
	add_row(&m, "s", "c", 1, 0, 1, 1, 1);
	m.sites[0].hist[SITE_WAIT_NS] = (struct sparse_hist){};
	golden__sparse_fill(&m.arena, &m.sites[0].hist[SITE_WAIT_NS], 1023, 1, 2); /* 1023, 1024 */
	golden__sparse_fill(&m.arena, &m.sites[0].hist[SITE_WAIT_NS], 4095, 1, 2); /* 4095, 4096 */
	/* the last edge, 2^42 ns (73.3 min), and past it: the histograms' open bucket */
	golden__sparse_fill(&m.arena, &m.sites[0].hist[SITE_WAIT_NS], (1ULL << 42) - 1, 1, 2);
	got = render(&m, 0);
	CHECK(strstr(got, "drainstat_wait_seconds_bucket{site=\"s\",le=\"0.000001024\"} 1\n"));
	CHECK(strstr(got, "drainstat_wait_seconds_bucket{site=\"s\",le=\"0.000004096\"} 3\n"));
	CHECK(strstr(got, "drainstat_wait_seconds_bucket{site=\"s\",le=\"0.000016384\"} 4\n"));
	CHECK(strstr(got, "drainstat_wait_seconds_bucket{site=\"s\",le=\"1099.511627776\"} 4\n"));
	CHECK(strstr(got, "drainstat_wait_seconds_bucket{site=\"s\",le=\"4398.046511104\"} 5\n"));
	CHECK(strstr(got, "drainstat_wait_seconds_bucket{site=\"s\",le=\"+Inf\"} 6\n"));
	CHECK(strstr(got, "drainstat_wait_seconds_count{site=\"s\"} 6\n"));
	CHECK(strstr(got, "drainstat_wait_seconds_sum{site=\"s\"} 8796.093032445\n"));
	CHECK(!strstr(got, "drainstat_fadvise"));
	free(got);
	model__free(&m);
}

/* 255 CPUs: the export keeps every one, a series each per CPU metric. */
static void test_prom_many_cpus(void)
{
	struct cpu_stats *cpus = golden__wide_cpus(255);
	struct golden_fix f;
	char *got;

	golden__open(&f, false);
	snapshot__reset(&f.s, 10000 * MS);
	CHECK(snapshot__set_cpus(&f.s, cpus, 255) == 0);
	free(cpus);
	golden__build(&f, &tracepoint_info);
	got = render(&f.m, 10);
	CHECK(golden__count(got, "\ndrainstat_victim_works_total{cpu=\"") == 255);
	CHECK(golden__count(got, "\ndrainstat_victim_dispatch_seconds_total{cpu=\"") == 255);
	CHECK(strstr(got, "\ndrainstat_victim_works_total{cpu=\"254\"} 50\n") != NULL);
	free(got);
	golden__close(&f);
}

static void test_prom_escape(void)
{
	struct model m;
	char *got;

	make_model(&m, &tracepoint_info);
	snprintf(m.sites[3].site, sizeof(m.sites[3].site), "a\"b\\c\nd\xc3");
	m.info.kernel = "6.1\"x";
	got = render(&m, 10);
	CHECK(strstr(got, "drainstat_drains_total{site=\"a\\\"b\\\\c\\nd?\"} 3\n"));
	CHECK(strstr(got, "kernel=\"6.1\\\"x\",qpw=\"false\"} 1\n"));
	free(got);
	model__free(&m);
}

/*
 * make_model() keyed by cgroup: drainforce in two services, a second
 * drainforce site, compaction in two containers of one pod, khugepaged in
 * the root cgroup.
 */
static void make_cgroup_model(struct model *m)
{
	make_model(m, &tracepoint_info);
	m->info.by_cgroup = true;
	m->sites[0].cgroup = "/system.slice/drainwork.service";
	m->sites[1].cgroup = GOLDEN_POD "/cri-containerd-" GOLDEN_HEX ".scope";
	m->sites[2].cgroup = GOLDEN_POD "/cri-containerd-fedcba9876543210" GOLDEN_HEX ".scope";
	m->sites[3].cgroup = "/";
	add_row(m, "generic_fadvise", "drainforce", 200, 0, 11 * US, 3 * US, 35 * US)->cgroup =
	    "/system.slice/drainwork2.service/sub\n\"x";
}

/*
 * The cgroup label: by default the unit, so the two containers of the pod
 * are one series, the pod's; with --prom-cgroup=path, each container's own.
 */
static void test_prom_cgroups(void)
{
	struct prom_opts o = {.max_sites = 10, .version = "0.0.0", .cgroup = PROM_CGROUP_PATH};
	struct model m;
	char *got = NULL;
	size_t len = 0;
	FILE *f;

	make_cgroup_model(&m);
	check_golden("report-cgroup.prom", &m);
	f = open_memstream(&got, &len);
	report_prom__print(f, &m, &o);
	fclose(f);
	CHECK(strstr(
	    got, "\ndrainstat_drains_total{site=\"sysctl_compaction_handler\",cgroup=\"" GOLDEN_POD
		 "/cri-containerd-" GOLDEN_HEX ".scope\"} 3\n"));
	CHECK(strstr(got, "\ndrainstat_drains_total{site=\"generic_fadvise\",cgroup=\""
			  "/system.slice/drainwork2.service/sub\\n\\\"x\"} 200\n"));
	free(got);
	model__free(&m);
}

/* With the cgroup key, "other" is cgroup="other" too, and holds the sum of the rest. */
static void test_prom_cgroups_other(void)
{
	struct model m;
	char *got;

	make_cgroup_model(&m);
	got = render(&m, 1);
	CHECK(strstr(got, "\ndrainstat_drains_total{site=\"generic_fadvise\",cgroup=\""
			  "/system.slice/drainwork.service\"} 300\n"));
	CHECK(strstr(got, "\ndrainstat_drains_total{site=\"other\",cgroup=\"other\"} 207\n"));
	CHECK(golden__count(got, "\ndrainstat_drains_total{") == 2);
	free(got);
	model__free(&m);
}

/* A tracepoint-mode model with room for rows (add_row()), keyed by cgroup or not. */
static void rows_model(struct model *m, int rows, bool by_cgroup)
{
	memset(m, 0, sizeof(*m));
	m->info = tracepoint_info;
	m->info.by_cgroup = by_cgroup;
	m->sites = calloc((size_t)rows, sizeof(*m->sites));
	CHECK(m->sites != NULL);
}

/*
 * A hundred short-lived units, one drain each, every one a cgroup of its own
 * gone by the report: no more series than --prom-sites allows, export after
 * export, and no count lost.
 */
static void test_prom_cgroups_bounded(void)
{
	static char names[100][32];
	struct prom_memory *pm = prom_memory__new();
	struct model m;
	char *got;
	int i, round;

	rows_model(&m, 101, true);
	add_row(&m, "generic_fadvise", "drainforce", 300, 1, 12 * US, 3 * US, 40 * US)->cgroup =
	    "/system.slice/drainwork.service";
	for (i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "cgroup:%d", 5000 + i);
		add_row(&m, "generic_fadvise", "drainforce", 1, 0, 10 * US, 3 * US, 30 * US)
		    ->cgroup = names[i];
	}
	for (round = 0; round < 2; round++) {
		got = render_with(&m, 20, pm);
		CHECK(golden__count(got, "\ndrainstat_drains_total{") == 21);
		CHECK(
		    strstr(got, "\ndrainstat_drains_total{site=\"other\",cgroup=\"other\"} 81\n"));
		free(got);
	}
	prom_memory__free(pm);
	model__free(&m);
}

/* A besteffort pod's container (systemd driver) and a guaranteed pod's (cgroupfs driver). */
#define POD_LOGGING                                                                                \
	"/kubepods.slice/kubepods-besteffort.slice/"                                               \
	"kubepods-besteffort-pod9a8b7c6d_5e4f_4a3b_8c2d_1e0f9a8b7c6d.slice/cri-containerd-"        \
	"fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210.scope"
#define POD_GUARANTEED                                                                             \
	"/kubepods/pod00112233-4455-4667-8899-aabbccddeeff/"                                       \
	"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

/*
 * make_cgroup_model() on a Kubernetes node: the two containers of its pod
 * named default/web-0 by /var/log/pods, a log shipper's pod logging/fluent-bit-x7k2p
 * (besteffort), and a guaranteed pod of the cgroupfs driver whose name is not known.
 */
static void make_pod_model(struct model *m)
{
	make_cgroup_model(m);
	m->sites[1].pod = m->sites[2].pod = (struct model_pod){"web-0", "default"};
	add_row(m, "generic_fadvise", "fluent-bit", 40, 0, 9 * US, 3 * US, 30 * US)->cgroup =
	    POD_LOGGING;
	m->sites[m->nr_sites - 1].pod = (struct model_pod){"fluent-bit-x7k2p", "logging"};
	add_row(m, "generic_fadvise", "app", 20, 0, 9 * US, 3 * US, 25 * US)->cgroup =
	    POD_GUARANTEED;
}

/*
 * --prom-cgroup=pod: beside the unit's cgroup label, a pod's namespace, pod
 * and qos; the two containers of web-0 one series; qos alone where the name
 * is not known; nothing more outside a pod.
 */
static void test_prom_pods(void)
{
	struct model m;
	char *got;

	make_pod_model(&m);
	check_golden_cgroup("report-pods.prom", &m, PROM_CGROUP_POD);
	got = render_cgroup(&m, 10, PROM_CGROUP_POD, NULL);
	CHECK(strstr(
	    got, "\ndrainstat_drains_total{site=\"sysctl_compaction_handler\",cgroup=\"" GOLDEN_POD
		 "\",namespace=\"default\",pod=\"web-0\",qos=\"burstable\"} 4\n"));
	CHECK(strstr(got,
		     ",namespace=\"logging\",pod=\"fluent-bit-x7k2p\",qos=\"besteffort\"} 40\n"));
	CHECK(strstr(got, "cgroup=\"/kubepods/pod00112233-4455-4667-8899-aabbccddeeff\","
			  "qos=\"guaranteed\"} 20\n"));
	CHECK(strstr(got, "\ndrainstat_drains_total{site=\"generic_fadvise\",cgroup=\""
			  "/system.slice/drainwork.service\"} 300\n"));
	CHECK(!strstr(got, "container="));
	free(got);
	/* unit and path: no pod labels, the names known or not */
	got = render_cgroup(&m, 10, PROM_CGROUP_UNIT, NULL);
	CHECK(!strstr(got, "namespace=") && !strstr(got, "qos="));
	free(got);
	got = render_cgroup(&m, 10, PROM_CGROUP_PATH, NULL);
	CHECK(!strstr(got, "pod=") && !strstr(got, "qos="));
	free(got);
	model__free(&m);
}

/* Past --prom-sites, pods are folded into site="other", cgroup="other", without pod labels. */
static void test_prom_pods_other(void)
{
	struct model m;
	char *got;

	make_pod_model(&m);
	got = render_cgroup(&m, 2, PROM_CGROUP_POD, NULL);
	CHECK(golden__count(got, "\ndrainstat_drains_total{") == 3);
	/* kept: the largest total waits, drainwork's two services */
	CHECK(strstr(got, "\ndrainstat_drains_total{site=\"other\",cgroup=\"other\"} 67\n"));
	CHECK(!strstr(got, "namespace="));
	free(got);
	got = render_cgroup(&m, 3, PROM_CGROUP_POD, NULL);
	CHECK(golden__count(got, "namespace=\"default\",pod=\"web-0\"") > 0);
	CHECK(!strstr(got, "fluent-bit-x7k2p"));
	free(got);
	model__free(&m);
}

/* A pod's names reach the labels escaped (podnames.c lets none such through; the export holds). */
static void test_prom_pods_escape(void)
{
	struct model m;
	char *got;

	make_pod_model(&m);
	m.sites[1].pod = m.sites[2].pod = (struct model_pod){"a\"b\\c\nd\xc3", "ns\"x"};
	got = render_cgroup(&m, 10, PROM_CGROUP_POD, NULL);
	CHECK(
	    strstr(got, ",namespace=\"ns\\\"x\",pod=\"a\\\"b\\\\c\\nd?\",qos=\"burstable\"} 4\n"));
	free(got);
	model__free(&m);
}

/*
 * A pod named between two exports (its /var/log/pods entry made after its
 * first drain): the named series takes the count, the unnamed one goes, and
 * with memory neither goes down; the place it took is given back once idle.
 */
static void test_prom_pods_named_later(void)
{
	struct prom_memory *pm = prom_memory__new();
	struct model m;
	char *got;

	make_pod_model(&m);
	m.sites[1].pod = m.sites[2].pod = (struct model_pod){0};
	got = render_cgroup(&m, 10, PROM_CGROUP_POD, pm);
	CHECK(strstr(
	    got, "\ndrainstat_drains_total{site=\"sysctl_compaction_handler\",cgroup=\"" GOLDEN_POD
		 "\",qos=\"burstable\"} 4\n"));
	free(got);
	m.sites[1].pod = m.sites[2].pod = (struct model_pod){"web-0", "default"};
	m.sites[1].count[SITE_DRAINS]++;
	got = render_cgroup(&m, 10, PROM_CGROUP_POD, pm);
	CHECK(strstr(
	    got, "\ndrainstat_drains_total{site=\"sysctl_compaction_handler\",cgroup=\"" GOLDEN_POD
		 "\",namespace=\"default\",pod=\"web-0\",qos=\"burstable\"} 5\n"));
	CHECK(!strstr(got, GOLDEN_POD "\",qos="));
	free(got);
	prom_memory__free(pm);
	model__free(&m);
}

/* A row of local drains alone (n of them, 700 ns each): units that exec, in full mode. */
static struct model_site *add_local_row(struct model *m, const char *site, const char *cgroup,
					__u64 n)
{
	struct model_site *r = add_row(m, site, "sh", 0, 0, 0, 0, 0);

	r->cgroup = cgroup;
	golden__sparse_fill(&m->arena, &r->hist[SITE_LOCAL_NS], 700, 10, n);
	return r;
}

/* Full mode, a dozen units' local drains (10 each) and room for 4 rows more. */
static void units_model(struct model *m, char (*units)[40])
{
	int i;

	rows_model(m, 16, true);
	m->info.mode = "full";
	m->info.entry_visible = true;
	m->info.has_local = true;
	for (i = 0; i < 12; i++) {
		snprintf(units[i], 40, "/system.slice/unit%02d.service", i);
		add_local_row(m, "begin_new_exec", units[i], 10);
	}
}

/*
 * Under systemd, full mode: a dozen units' local drains come before the
 * workload drains. They take no place of --prom-sites 2 (they wait in
 * "other"), so the workload's two units, draining in the next export, get
 * their own series. One of the local sites then drains too and leaves
 * "other" with its local drains: "other"'s counter holds its value, never
 * lower, until the truth passes it.
 */
static void test_prom_places_go_to_drains(void)
{
	static char units[12][40];
	struct prom_memory *pm = prom_memory__new();
	struct model m;
	char *got;
	int i;

	units_model(&m, units);
	got = render_with(&m, 2, pm);
	CHECK(golden__count(got, "\ndrainstat_local_drains_total{") == 1);
	CHECK(strstr(got, "\ndrainstat_local_drains_total{site=\"other\",cgroup=\"other\"} 120\n"));
	free(got);
	add_row(&m, "generic_fadvise", "drainforce", 100, 0, 12 * US, 3 * US, 40 * US)->cgroup =
	    "/system.slice/drainwork.service";
	add_row(&m, "generic_fadvise", "drainforce", 50, 0, 12 * US, 3 * US, 40 * US)->cgroup =
	    "/system.slice/drainwork2.service";
	got = render_with(&m, 2, pm);
	CHECK(strstr(got, "\ndrainstat_drains_total{site=\"generic_fadvise\",cgroup=\""
			  "/system.slice/drainwork.service\"} 100\n"));
	CHECK(strstr(got, "\ndrainstat_drains_total{site=\"generic_fadvise\",cgroup=\""
			  "/system.slice/drainwork2.service\"} 50\n"));
	CHECK(!strstr(got, "\ndrainstat_drains_total{site=\"other\""));
	free(got);
	/* places full: a local site that drains now stays in "other", its counts with it */
	m.sites[0].count[SITE_DRAINS] = 1;
	m.sites[0].count[SITE_WORKS] = m.sites[0].count[SITE_REMOTE_WORKS] = 1;
	got = render_with(&m, 2, pm);
	CHECK(strstr(got, "\ndrainstat_drains_total{site=\"other\",cgroup=\"other\"} 1\n"));
	CHECK(strstr(got, "\ndrainstat_local_drains_total{site=\"other\",cgroup=\"other\"} 120\n"));
	free(got);
	prom_memory__free(pm);
	model__free(&m);
	/* with room: it leaves "other" with its 10 local drains, and "other" holds 120 */
	pm = prom_memory__new();
	units_model(&m, units);
	free(render_with(&m, 20, pm));
	m.sites[0].count[SITE_DRAINS] = 1;
	m.sites[0].count[SITE_WORKS] = m.sites[0].count[SITE_REMOTE_WORKS] = 1;
	got = render_with(&m, 20, pm);
	CHECK(strstr(got, "\ndrainstat_local_drains_total{site=\"begin_new_exec\",cgroup=\""
			  "/system.slice/unit00.service\"} 10\n"));
	CHECK(strstr(got, "\ndrainstat_local_drains_total{site=\"other\",cgroup=\"other\"} 120\n"));
	free(got);
	/* until the truth passes it: 11 units' 10 more each */
	for (i = 1; i < 12; i++)
		golden__sparse_fill(&m.arena, &m.sites[i].hist[SITE_LOCAL_NS], 700, 10, 10);
	got = render_with(&m, 20, pm);
	CHECK(strstr(got, "\ndrainstat_local_drains_total{site=\"other\",cgroup=\"other\"} 220\n"));
	free(got);
	prom_memory__free(pm);
	model__free(&m);
}

/* The unit's row drains n drains in all, 1 us each: its wait grows with them. */
static void unit_drains(struct model *m, struct model_site *r, int n)
{
	__u64 more = (__u64)n - r->count[SITE_DRAINS];

	r->count[SITE_DRAINS] = r->count[SITE_WORKS] = r->count[SITE_REMOTE_WORKS] = (__u64)n;
	golden__sparse_fill(&m->arena, &r->hist[SITE_WAIT_NS], US, 0, more);
}

/*
 * Issue 40's attack 7 at --prom-sites 3: four cgroups drain once and are
 * removed (shown by id), then a unit drains, 10 more each export, 1 us each.
 * Its place comes once a cgroup has not drained for PROM_PLACE_IDLE (3)
 * exports, the least wait's, though that wait (37 us) is longer than the
 * unit's (30 us): the unit drains, the cgroup no longer does. "other" holds
 * its last value meanwhile, and no series goes down.
 */
static void test_prom_places_go_back(void)
{
	static const char *const gone[] = {"cgroup:5001", "cgroup:5002", "cgroup:5003",
					   "cgroup:5004"};
	struct prom_memory *pm = prom_memory__new();
	struct model_site *unit;
	struct model m;
	char *got;
	int i;

	rows_model(&m, 5, true);
	for (i = 0; i < 4; i++)
		add_row(&m, "generic_fadvise", "sh", 1, 0, 10 * US, 3 * US, (__u64)(40 - i) * US)
		    ->cgroup = gone[i];
	got = render_with(&m, 3, pm);
	CHECK(golden__count(got, "\ndrainstat_drains_total{site=\"generic_fadvise\"") == 3);
	CHECK(strstr(got, "\ndrainstat_drains_total{site=\"other\",cgroup=\"other\"} 1\n"));
	free(got);
	unit = add_row(&m, "generic_fadvise", "drainwork", 0, 0, 0, 0, 0);
	unit->cgroup = "/user.slice/user-1001.slice/user@1001.service";
	for (i = 1; i <= 2; i++) {
		unit_drains(&m, unit, 10 * i);
		got = render_with(&m, 3, pm);
		CHECK(!strstr(got, "user@1001.service"));
		free(got);
	}
	unit_drains(&m, unit, 30);
	got = render_with(&m, 3, pm);
	CHECK(strstr(got, "\ndrainstat_drains_total{site=\"generic_fadvise\",cgroup=\""
			  "/user.slice/user-1001.slice/user@1001.service\"} 30\n"));
	CHECK(!strstr(got, "cgroup=\"cgroup:5003\""));
	CHECK(strstr(got, "cgroup=\"cgroup:5001\"} 1\n") &&
	      strstr(got, "cgroup=\"cgroup:5002\"} 1\n"));
	/* "other" had 21 (5004's drain and the unit's 20): it holds that */
	CHECK(strstr(got, "\ndrainstat_drains_total{site=\"other\",cgroup=\"other\"} 21\n"));
	CHECK(golden__count(got, "\ndrainstat_drains_total{") == 4);
	free(got);
	/* it keeps the place while it drains, 5001 and 5002 theirs while none else wants one */
	unit_drains(&m, unit, 40);
	got = render_with(&m, 3, pm);
	CHECK(strstr(got, "user@1001.service\"} 40\n"));
	CHECK(strstr(got, "cgroup=\"cgroup:5001\"} 1\n"));
	free(got);
	prom_memory__free(pm);
	model__free(&m);
}

/*
 * More sites than the memory's first room (32) in one export: every site
 * remembered in that one pass keeps its entry where it was handed out (ASan
 * would see a write into a moved array), and each keeps its own series.
 */
static void test_prom_memory_grows_in_one_export(void)
{
	static char names[40][32];
	struct prom_memory *pm = prom_memory__new();
	struct model m;
	char *got;
	int i, round;

	rows_model(&m, 40, false);
	for (i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "site_%02d", i);
		add_row(&m, names[i], "drainforce", 40 - i, 0, 10 * US, 3 * US,
			(__u64)(40 - i) * US);
	}
	for (round = 0; round < 2; round++) {
		got = render_with(&m, 100, pm);
		CHECK(golden__count(got, "\ndrainstat_drains_total{") == 40);
		CHECK(strstr(got, "\ndrainstat_drains_total{site=\"site_39\"} 1\n") != NULL);
		free(got);
	}
	prom_memory__free(pm);
	model__free(&m);
}

/* Sites merge across comms, then all but the largest total wait fold into "other". */
static void test_prom_other(void)
{
	struct model m;
	char *got;

	make_model(&m, &tracepoint_info);
	got = render(&m, 1);
	CHECK(strstr(got, "drainstat_drains_total{site=\"generic_fadvise\"} 300\n"));
	CHECK(strstr(got, "drainstat_drains_total{site=\"other\"} 7\n"));
	CHECK(strstr(got, "drainstat_works_total{site=\"other\",kind=\"self\"} 3\n"));
	CHECK(strstr(got, "drainstat_wait_seconds_count{site=\"other\"} 7\n"));
	CHECK(!strstr(got, "site=\"khugepaged_do_scan\""));
	CHECK(!strstr(got, "comm="));
	free(got);
	got = render(&m, 2);
	CHECK(strstr(got, "drainstat_drains_total{site=\"sysctl_compaction_handler\"} 4\n"));
	CHECK(strstr(got, "drainstat_drains_total{site=\"other\"} 3\n"));
	free(got);
	got = render(&m, 3);
	CHECK(!strstr(got, "site=\"other\""));
	free(got);
	model__free(&m);
}

/*
 * With a memory, a site keeps its label while it has drained within
 * PROM_PLACE_IDLE exports: compaction, in "other" at first, stays there when
 * its wait grows past everyone's, and "other" never goes down.
 */
static void test_prom_sites_keep_their_label(void)
{
	struct prom_memory *pm = prom_memory__new();
	struct model m;
	char *got;

	CHECK(pm != NULL);
	make_model(&m, &tracepoint_info);
	free(render_with(&m, 1, pm)); /* generic_fadvise by name, 7 drains in "other" */
	/* compaction now leads by total wait, and a new site appears */
	add_row(&m, "sysctl_compaction_handler", "bash", 50, 0, 30 * US, 900 * US, 90 * MS);
	add_row(&m, "do_pages_move", "mover", 2, 0, 30 * US, 900 * US, 80 * MS);
	got = render_with(&m, 1, pm);
	CHECK(strstr(got, "drainstat_drains_total{site=\"generic_fadvise\"} 300\n"));
	CHECK(strstr(got, "drainstat_drains_total{site=\"other\"} 59\n"));
	CHECK(!strstr(got, "site=\"sysctl_compaction_handler\""));
	CHECK(!strstr(got, "site=\"do_pages_move\""));
	free(got);
	/* without one, the same model keeps the largest wait */
	got = render(&m, 1);
	CHECK(strstr(got, "drainstat_drains_total{site=\"sysctl_compaction_handler\"} 54\n"));
	free(got);
	model__free(&m);
	prom_memory__free(pm);
}

/*
 * A wait taken back and recorded again, longer (wait_revised), moves a sample
 * up: the series in between hold their value until the truth passes it.
 */
static void test_prom_series_never_go_down(void)
{
	struct prom_memory *pm = prom_memory__new();
	struct sparse_hist *wait;
	struct model m;
	char *got;

	CHECK(pm != NULL);
	memset(&m, 0, sizeof(m));
	m.info = tracepoint_info;
	m.sites = calloc(1, sizeof(*m.sites));
	add_row(&m, "s", "c", 1, 0, 1, 1, 1);
	wait = &m.sites[0].hist[SITE_WAIT_NS];
	*wait = (struct sparse_hist){};
	golden__sparse_fill(&m.arena, wait, 2 * US, 0, 1);
	got = render_with(&m, 0, pm);
	CHECK(strstr(got, "drainstat_wait_seconds_bucket{site=\"s\",le=\"0.000004096\"} 1\n"));
	free(got);
	*wait = (struct sparse_hist){};
	golden__sparse_fill(&m.arena, wait, 100 * US, 0, 1); /* the same drain, its wait revised */
	got = render_with(&m, 0, pm);
	CHECK(strstr(got, "drainstat_wait_seconds_bucket{site=\"s\",le=\"0.000004096\"} 1\n"));
	CHECK(strstr(got, "drainstat_wait_seconds_bucket{site=\"s\",le=\"0.000065536\"} 1\n"));
	CHECK(strstr(got, "drainstat_wait_seconds_bucket{site=\"s\",le=\"0.000262144\"} 1\n"));
	CHECK(strstr(got, "drainstat_wait_seconds_count{site=\"s\"} 1\n"));
	CHECK(strstr(got, "drainstat_wait_seconds_sum{site=\"s\"} 0.000100000\n"));
	free(got);
	golden__sparse_fill(&m.arena, wait, 3 * US, 0,
			    2); /* two more drains: the truth passes it */
	got = render_with(&m, 0, pm);
	CHECK(strstr(got, "drainstat_wait_seconds_bucket{site=\"s\",le=\"0.000004096\"} 2\n"));
	CHECK(strstr(got, "drainstat_wait_seconds_count{site=\"s\"} 3\n"));
	free(got);
	/* without one, the revision shows as it is */
	*wait = (struct sparse_hist){};
	golden__sparse_fill(&m.arena, wait, 100 * US, 0, 1);
	got = render(&m, 0);
	CHECK(strstr(got, "drainstat_wait_seconds_bucket{site=\"s\",le=\"0.000004096\"} 0\n"));
	free(got);
	model__free(&m);
	prom_memory__free(pm);
}

/* Every count and histogram of bpf/drainstat.h's enums is named: a new one without fails here. */
static void test_metrics_named(void)
{
	int i;

	for (i = 0; i < SITE_COUNTS; i++)
		CHECK(metric__site_count[i].name != NULL);
	for (i = 0; i < SITE_HISTS; i++)
		CHECK(metric__site_hist[i].name != NULL && metric__site_hist[i].prom != NULL);
	for (i = 0; i < CPU_COUNTS; i++)
		CHECK(metric__cpu_count[i].name != NULL);
	for (i = 0; i < CPU_HISTS; i++)
		CHECK(metric__cpu_hist[i].name != NULL);
}

/* The export's value of a series named exactly as series, or -1 if it is absent. */
static long long series_value(const char *text, const char *series)
{
	size_t n = strlen(series);
	long long v = -1;

	for (; *text; text++)
		if (!strncmp(text, series, n) && sscanf(text + n, "%lld", &v) == 1)
			break;
	return v;
}

/*
 * The kernel's counts read while they change: each reading of a site as its
 * counts stand between two of the kernel's adds (a remote work, a self work,
 * an empty drain). The works by kind are never negative, their sum is the
 * works, and no series goes back down from one export to the next. The
 * kernel's SITE_WORKS slot is never written: whatever it holds is not read.
 */
static void test_prom_torn_reads(void)
{
	static const struct {
		__u64 drains, empty, self, remote;
	} steps[] = {
	    {1, 0, 0, 0}, {1, 0, 0, 1}, {2, 0, 0, 1}, {2, 0, 1, 1}, {3, 0, 1, 1}, {3, 1, 1, 1},
	};
	struct site_stats *stats = calloc(1, sizeof(*stats));
	long long last_remote = 0, last_self = 0, remote, self;
	struct model_info info = tracepoint_info;
	struct golden_fix f;
	char *got = NULL;
	size_t i;

	CHECK(stats != NULL);
	if (!stats)
		return;
	info.entry_visible = true;
	snprintf(stats->key.comm, sizeof(stats->key.comm), "torn");
	stats->key.stack_id = -1;
	golden__open(&f, false);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		stats->count[SITE_WORKS] = 7 - i; /* garbage: never read */
		stats->count[SITE_DRAINS] = steps[i].drains;
		stats->count[SITE_EMPTY_DRAINS] = steps[i].empty;
		stats->count[SITE_SELF_WORKS] = steps[i].self;
		stats->count[SITE_REMOTE_WORKS] = steps[i].remote;
		snapshot__reset(&f.s, 1000 * MS);
		CHECK(snapshot__add_site(&f.s, stats, NULL, 0) == 0);
		golden__build(&f, &info);
		CHECK(f.m.total[SITE_WORKS] == steps[i].self + steps[i].remote &&
		      f.m.total[SITE_SELF_WORKS] == steps[i].self);
		got = render(&f.m, 0);
		self =
		    series_value(got, "drainstat_works_total{site=\"[unknown]\",kind=\"self\"} ");
		remote =
		    series_value(got, "drainstat_works_total{site=\"[unknown]\",kind=\"remote\"} ");
		if (steps[i].self + steps[i].remote) {
			CHECK(remote == (long long)steps[i].remote &&
			      self == (long long)steps[i].self);
			CHECK(remote >= last_remote && self >= last_self);
			last_remote = remote;
			last_self = self;
		} else {
			CHECK(remote == -1 && self == -1);
		}
		free(got);
		golden__clear(&f);
	}
	golden__close(&f);
	free(stats);
}

int main(void)
{
	int failed = 0;

	RUN(test_prom_tracepoint);
	RUN(test_prom_full);
	RUN(test_prom_qpw);
	RUN(test_prom_in_place);
	RUN(test_prom_bucket_edges);
	RUN(test_prom_many_cpus);
	RUN(test_prom_escape);
	RUN(test_prom_other);
	RUN(test_prom_sites_keep_their_label);
	RUN(test_prom_series_never_go_down);
	RUN(test_prom_torn_reads);
	RUN(test_prom_cgroups);
	RUN(test_prom_cgroups_other);
	RUN(test_prom_cgroups_bounded);
	RUN(test_prom_pods);
	RUN(test_prom_pods_other);
	RUN(test_prom_pods_escape);
	RUN(test_prom_pods_named_later);
	RUN(test_prom_memory_grows_in_one_export);
	RUN(test_prom_places_go_to_drains);
	RUN(test_prom_places_go_back);
	RUN(test_metrics_named);
	return failed ? 1 : 0;
}
