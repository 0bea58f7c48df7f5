// SPDX-License-Identifier: GPL-2.0
/*
 * report_prom__print() of a random model with random prom_opts, read back by a
 * checker of the text format (prom_check.h), then its sums against the model's:
 * folding sites into "other" and merging comms must lose no count; and the
 * gauges of the drains in flight, each value the model's exactly.
 */
#include <string.h>

#include "container.h"
#include "prom_check.h"
#include "random_model.h"
#include "report_prom.h"

#define VERSION_LEN 32
#define NS_PER_SEC  1000000000ULL

/* What the model adds up to, as the exposition should show it. */
struct totals {
	__u64 forced, empty, local, ipis, in_place, wait_count, fadvise_calls, victim_works;
};

/* What the buckets hold, whatever count says (a raw hist's may disagree). */
static __u64 bucket_total(const struct sparse_hist *h)
{
	__u64 n = 0;
	__u32 i;

	for (i = 0; i < h->nr; i++)
		n += h->buckets[i].n;
	return n;
}

static void add_up(const struct model *m, struct totals *t)
{
	int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < m->nr_sites; i++) {
		t->forced += m->sites[i].count[SITE_FORCED_DRAINS];
		t->empty += m->sites[i].count[SITE_EMPTY_DRAINS];
		t->local += m->sites[i].hist[SITE_LOCAL_NS].count;
		t->ipis += m->sites[i].count[SITE_IPIS];
		t->in_place += m->sites[i].count[SITE_IN_PLACE];
		t->wait_count += bucket_total(&m->sites[i].hist[SITE_WAIT_NS]);
	}
	for (i = 0; i < FADVISE_ADVICE_SLOTS; i++)
		t->fadvise_calls += m->fadvise[i].calls;
	for (i = 0; i < m->nr_cpus; i++)
		t->victim_works += m->cpus[i].count[CPU_WORKS];
}

/* The family's samples add up to want; present only when shown, and then one per site. */
static void expect_sum(const struct prom_exposition *e, const char *name, bool shown, __u64 want,
		       size_t sites)
{
	size_t n;
	__u64 got = prom_check__sum(e, name, NULL, NULL, &n);

	FUZZ_CHECK(shown || !n, "%s: %zu samples where the mode cannot measure it", name, n);
	FUZZ_CHECK(!shown || n == sites, "%s: %zu samples for %zu sites", name, n, sites);
	FUZZ_CHECK(!shown || got == want, "%s: adds up to %llu, want %llu", name,
		   (unsigned long long)got, (unsigned long long)want);
}

/*
 * A site family: its samples add up to want, and it carries the sites that
 * have its events: none of them 0, at most one per site the export shows.
 */
static void expect_site_sum(const struct prom_exposition *e, const char *name, bool shown,
			    __u64 want, size_t sites)
{
	size_t n, zeros = prom_check__zeros(e, name);
	__u64 got = prom_check__sum(e, name, NULL, NULL, &n);

	FUZZ_CHECK(shown || !n, "%s: %zu samples where the mode cannot measure it", name, n);
	FUZZ_CHECK(n <= sites, "%s: %zu samples for at most %zu sites", name, n, sites);
	FUZZ_CHECK(!zeros, "%s: %zu samples of 0", name, zeros);
	FUZZ_CHECK(!shown || got == want, "%s: adds up to %llu, want %llu", name,
		   (unsigned long long)got, (unsigned long long)want);
}

static void check_sums(const struct prom_exposition *e, const struct model *m, int max_sites)
{
	const struct model_info *info = &m->info;
	size_t sites = (size_t)m->nr_sites, n;
	struct totals t;

	add_up(m, &t);
	/* the rows kept by name, and "other" */
	if (max_sites > 0 && sites > (size_t)max_sites + 1)
		sites = (size_t)max_sites + 1;
	prom_check__sum(e, "drainstat_drains_total", NULL, NULL, &n);
	FUZZ_CHECK(!m->total[SITE_DRAINS] || n > 0, "no site series for %llu drains",
		   (unsigned long long)m->total[SITE_DRAINS]);
	expect_site_sum(e, "drainstat_drains_total", true, m->total[SITE_DRAINS], sites);
	/* with Queue PerCPU Work nothing that depends on a drain's works */
	if (info->works_unseen)
		expect_sum(e, "drainstat_works_total", false, 0, 0);
	else
		FUZZ_CHECK(prom_check__sum(e, "drainstat_works_total", "kind", "self", &n) ==
				   m->total[SITE_SELF_WORKS] &&
			       prom_check__sum(e, "drainstat_works_total", "kind", "remote", &n) ==
				   m->total[SITE_WORKS] - m->total[SITE_SELF_WORKS],
			   "self and remote works");
	expect_site_sum(e, "drainstat_empty_drains_total",
			info->entry_visible && !info->works_unseen, t.empty, sites);
	expect_site_sum(e, "drainstat_forced_drains_total", info->entry_visible, t.forced, sites);
	expect_site_sum(e, "drainstat_local_drains_total", info->has_local, t.local, sites);
	expect_site_sum(e, "drainstat_ipis_total", info->has_ipi && !info->works_unseen, t.ipis,
			sites);
	expect_site_sum(e, "drainstat_in_place_total", info->in_place_seen, t.in_place, sites);
	expect_site_sum(e, "drainstat_wait_seconds_count", true, t.wait_count, sites);
	expect_sum(e, "drainstat_fadvise_calls_total", info->has_fadvise, t.fadvise_calls,
		   info->has_fadvise ? FADVISE_ADVICE_SLOTS : 0);
	expect_sum(e, "drainstat_victim_works_total", !info->works_unseen, t.victim_works,
		   (size_t)m->nr_cpus);
	FUZZ_CHECK(prom_check__sum(e, "drainstat_lost_events_total", NULL, NULL, &n) == m->lost,
		   "lost events");
	FUZZ_CHECK(prom_check__sum(e, "drainstat_info", NULL, NULL, &n) == 1 && n == 1,
		   "drainstat_info is not one sample of 1");
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Decimal digits as an integer that fits 64 bits, and nothing else. */
static bool integer(const char *s, __u64 *v)
{
	if (!*s)
		return false;
	for (*v = 0; *s; s++) {
		if (!is_digit(*s) || *v > (~0ULL - (__u64)(*s - '0')) / 10)
			return false;
		*v = *v * 10 + (__u64)(*s - '0');
	}
	return true;
}

/* "S" or "S.F" with at most 9 decimals: exactly that many nanoseconds, when they fit 64 bits. */
static bool seconds_ns(const char *s, __u64 *ns)
{
	char whole[32];
	size_t n = strcspn(s, ".");
	__u64 sec, frac = 0;
	int digits = 0;

	if (n >= sizeof(whole))
		return false;
	memcpy(whole, s, n);
	whole[n] = '\0';
	if (!integer(whole, &sec))
		return false;
	if (s[n] == '.') {
		for (s += n + 1; is_digit(*s) && digits < 9; s++, digits++)
			frac = frac * 10 + (__u64)(*s - '0');
		if (!digits || *s)
			return false;
	}
	for (; digits < 9; digits++)
		frac *= 10;
	if (sec > (~0ULL - frac) / NS_PER_SEC)
		return false;
	*ns = sec * NS_PER_SEC + frac;
	return true;
}

/* A gauge family with its HELP where shown; where not, neither it nor a sample of it. */
static void expect_gauge(const struct prom_exposition *e, const char *name, bool shown)
{
	bool has_help;
	const char *type = prom_check__family(e, name, &has_help);
	size_t n;

	if (!shown) {
		prom_check__sum(e, name, NULL, NULL, &n);
		FUZZ_CHECK(!type && !n, "%s: shown where the mode cannot see it", name);
		return;
	}
	FUZZ_CHECK(type && !strcmp(type, "gauge") && has_help, "%s: no gauge with a HELP", name);
}

/* The value of the one sample of name, with cpu="cpu" unless cpu is NULL; its series in series. */
static const char *one_sample(const struct prom_exposition *e, const char *name, const char *cpu,
			      char *series, size_t size)
{
	const char *text = prom_check__value(e, name, cpu ? "cpu" : NULL, cpu);

	if (cpu)
		snprintf(series, size, "%s{cpu=\"%s\"}", name, cpu);
	else
		snprintf(series, size, "%s", name);
	FUZZ_CHECK(text, "%s: not one sample", series);
	return text;
}

/* The one sample of name (with cpu="cpu" unless cpu is NULL) is the integer want. */
static void expect_value(const struct prom_exposition *e, const char *name, const char *cpu,
			 __u64 want)
{
	char series[128];
	const char *text = one_sample(e, name, cpu, series, sizeof(series));
	__u64 got;

	FUZZ_CHECK(integer(text, &got) && got == want, "%s is %s, want %llu", series, text,
		   (unsigned long long)want);
}

/* The one sample of name (with cpu="cpu" unless cpu is NULL) is want_ns in seconds, exactly. */
static void expect_seconds(const struct prom_exposition *e, const char *name, const char *cpu,
			   __u64 want_ns)
{
	char series[128];
	const char *text = one_sample(e, name, cpu, series, sizeof(series));
	__u64 got;

	FUZZ_CHECK(seconds_ns(text, &got) && got == want_ns, "%s is %s, want %llu ns", series, text,
		   (unsigned long long)want_ns);
}

/*
 * The model asked, for one CPU: its works not started, and the age of its
 * oldest; a query of the model's drains, not the export's grouping by CPU.
 */
static __u64 pending_on(const struct model *m, int cpu, __u64 *oldest_ns)
{
	__u64 works = 0;
	int i, k;

	*oldest_ns = 0;
	for (i = 0; i < m->nr_in_flight; i++)
		for (k = 0; k < m->in_flight[i].nr_in_flight; k++) {
			const struct model_work *w = &m->in_flight[i].in_flight[k];

			if (w->started || w->target_cpu != cpu)
				continue;
			works++;
			if (w->age_ns > *oldest_ns)
				*oldest_ns = w->age_ns;
		}
	return works;
}

/* Whether work (drain i, work k) is the first not started on its CPU, in the model's order. */
static bool first_pending_on_cpu(const struct model *m, int i, int k)
{
	int cpu = m->in_flight[i].in_flight[k].target_cpu, a, b;

	for (a = 0; a <= i; a++)
		for (b = 0; b < (a == i ? k : m->in_flight[a].nr_in_flight); b++)
			if (!m->in_flight[a].in_flight[b].started &&
			    m->in_flight[a].in_flight[b].target_cpu == cpu)
				return false;
	return true;
}

/*
 * The gauges of the drains in flight: how many, the oldest, the mutex waiters
 * where the entry is seen, and one series per CPU with a pending work, no other.
 */
static void check_in_flight(const struct prom_exposition *e, const struct model *m)
{
	size_t n, nr_cpus = 0;
	__u64 works, oldest_ns;
	char cpu[16];
	int i, k, c;

	expect_gauge(e, "drainstat_drains_in_flight", true);
	expect_value(e, "drainstat_drains_in_flight", NULL, (__u64)m->nr_in_flight);
	expect_gauge(e, "drainstat_oldest_drain_in_flight_seconds", true);
	expect_seconds(e, "drainstat_oldest_drain_in_flight_seconds", NULL, m->oldest_in_flight_ns);
	expect_gauge(e, "drainstat_mutex_waiters", m->info.entry_visible && !m->info.works_unseen);
	if (m->info.entry_visible && !m->info.works_unseen)
		expect_value(e, "drainstat_mutex_waiters", NULL, (__u64)m->mutex_waiters);
	expect_gauge(e, "drainstat_pending_works", true);
	expect_gauge(e, "drainstat_oldest_pending_work_seconds", true);
	for (i = 0; i < m->nr_in_flight; i++)
		for (k = 0; k < m->in_flight[i].nr_in_flight; k++) {
			if (m->in_flight[i].in_flight[k].started || !first_pending_on_cpu(m, i, k))
				continue;
			c = m->in_flight[i].in_flight[k].target_cpu;
			works = pending_on(m, c, &oldest_ns);
			snprintf(cpu, sizeof(cpu), "%d", c);
			expect_value(e, "drainstat_pending_works", cpu, works);
			expect_seconds(e, "drainstat_oldest_pending_work_seconds", cpu, oldest_ns);
			nr_cpus++;
		}
	prom_check__sum(e, "drainstat_pending_works", NULL, NULL, &n);
	FUZZ_CHECK(n == nr_cpus, "drainstat_pending_works: %zu series for %zu CPUs", n, nr_cpus);
	prom_check__sum(e, "drainstat_oldest_pending_work_seconds", NULL, NULL, &n);
	FUZZ_CHECK(n == nr_cpus, "drainstat_oldest_pending_work_seconds: %zu series for %zu CPUs",
		   n, nr_cpus);
}

/*
 * --prom-cgroup=pod: the drains of the rows in a pod, by QoS class (and those
 * of the pods named), as the series' qos (and namespace) labels sum them
 * where no row is folded into "other"; no such label in the other modes.
 */
static void check_pods(const struct prom_exposition *e, const struct model *m,
		       const struct prom_opts *o)
{
	static const char *const classes[] = {"guaranteed", "burstable", "besteffort"};
	const bool pods = o->cgroup == PROM_CGROUP_POD && m->info.by_cgroup;
	__u64 want[3] = {0}, named = 0;
	struct container c;
	size_t n;
	int i;

	for (i = 0; pods && i < m->nr_sites; i++) {
		const struct model_site *r = &m->sites[i];

		if (!r->cgroup || !container__parse(r->cgroup, &c) || !c.pod_uid[0])
			continue;
		if (c.qos != CONTAINER_QOS_NONE)
			want[c.qos - CONTAINER_QOS_GUARANTEED] += r->count[SITE_DRAINS];
		if (r->pod.name && r->pod.namespace && !strcmp(r->pod.namespace, "kube-system"))
			named += r->count[SITE_DRAINS];
	}
	for (i = 0; i < 3; i++) {
		__u64 got = prom_check__sum(e, "drainstat_drains_total", "qos", classes[i], &n);

		FUZZ_CHECK(pods || !n, "a qos label without --prom-cgroup=pod");
		FUZZ_CHECK(!pods || o->max_sites > 0 || got == want[i],
			   "qos=\"%s\": %llu drains, want %llu", classes[i],
			   (unsigned long long)got, (unsigned long long)want[i]);
	}
	prom_check__sum(e, "drainstat_drains_total", "namespace", "kube-system", &n);
	FUZZ_CHECK(pods || !n, "a namespace label without --prom-cgroup=pod");
	FUZZ_CHECK(!pods || o->max_sites > 0 ||
		       prom_check__sum(e, "drainstat_drains_total", "namespace", "kube-system",
				       &n) == named,
		   "namespace=\"kube-system\": drains of the pods named");
}

int LLVMFuzzerTestOneInput(const __u8 *data, size_t size)
{
	struct bytes b = {data, size};
	char version[VERSION_LEN], err[256];
	struct prom_exposition *e;
	struct prom_opts opts;
	struct random_model rm;
	char *text;
	size_t len;
	FILE *f;

	opts.max_sites = (int)bytes__range(&b, 0, 12) - 2;
	opts.version = version;
	opts.memory = NULL; /* each export alone: check_sums() knows no earlier one */
	bytes__string(&b, version, sizeof(version));
	FUZZ_CHECK(!random_model__fill(&rm, &b, false), "out of memory");
	/* after: the inputs from before keep their model */
	opts.cgroup = (enum prom_cgroup)bytes__range(&b, PROM_CGROUP_UNIT, PROM_CGROUP_POD);
	f = open_memstream(&text, &len);
	FUZZ_CHECK(f, "open_memstream");
	report_prom__print(f, &rm.m, &opts);
	fclose(f);
	e = prom_check__parse(text, len, err, sizeof(err));
	FUZZ_CHECK(e, "%s\n%s", err, text);
	check_sums(e, &rm.m, opts.max_sites);
	check_pods(e, &rm.m, &opts);
	check_in_flight(e, &rm.m);
	prom_check__free(e);
	free(text);
	random_model__free(&rm);
	return 0;
}
