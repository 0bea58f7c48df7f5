// SPDX-License-Identifier: GPL-2.0
/*
 * report_prom__print() of a random model with random prom_opts, read back by a
 * checker of the text format (prom_check.h), then its sums against the model's:
 * folding sites into "other" and merging comms must lose no count.
 */
#include <string.h>

#include "prom_check.h"
#include "random_model.h"
#include "report_prom.h"

#define VERSION_LEN 32

/* What the model adds up to, as the exposition should show it. */
struct totals {
	__u64 forced, empty, local, ipis, wait_count, fadvise_calls, victim_works;
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
		t->forced += m->sites[i].forced_drains;
		t->empty += m->sites[i].empty_drains;
		t->local += m->sites[i].local_ns.count;
		t->ipis += m->sites[i].ipis;
		t->wait_count += bucket_total(&m->sites[i].wait_ns);
	}
	for (i = 0; i < FADVISE_ADVICE_SLOTS; i++)
		t->fadvise_calls += m->fadvise[i].calls;
	for (i = 0; i < m->nr_cpus; i++)
		t->victim_works += m->cpus[i].works;
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

static void check_sums(const struct prom_exposition *e, const struct model *m, int max_sites)
{
	const struct model_info *info = &m->info;
	struct totals t;
	size_t sites, n;

	add_up(m, &t);
	prom_check__sum(e, "drainstat_drains_total", NULL, NULL, &sites);
	FUZZ_CHECK(sites <= (size_t)m->nr_sites, "%zu site series from %d rows", sites,
		   m->nr_sites);
	FUZZ_CHECK(max_sites <= 0 || sites <= (size_t)max_sites + 1,
		   "%zu site series, --prom-sites %d", sites, max_sites);
	FUZZ_CHECK(m->nr_sites == 0 || sites > 0, "no site series from %d rows", m->nr_sites);
	expect_sum(e, "drainstat_drains_total", true, m->drains, sites);
	FUZZ_CHECK(prom_check__sum(e, "drainstat_works_total", "kind", "self", &n) == m->self_works,
		   "self works");
	FUZZ_CHECK(prom_check__sum(e, "drainstat_works_total", "kind", "remote", &n) ==
		       m->works - m->self_works,
		   "remote works");
	expect_sum(e, "drainstat_empty_drains_total", info->entry_visible, t.empty, sites);
	expect_sum(e, "drainstat_forced_drains_total", info->entry_visible, t.forced, sites);
	expect_sum(e, "drainstat_local_drains_total", info->has_local, t.local, sites);
	expect_sum(e, "drainstat_ipis_total", info->has_ipi, t.ipis, sites);
	expect_sum(e, "drainstat_wait_seconds_count", true, t.wait_count, sites);
	expect_sum(e, "drainstat_fadvise_calls_total", info->has_fadvise, t.fadvise_calls,
		   info->has_fadvise ? FADVISE_ADVICE_SLOTS : 0);
	expect_sum(e, "drainstat_victim_works_total", true, t.victim_works, (size_t)m->nr_cpus);
	FUZZ_CHECK(prom_check__sum(e, "drainstat_lost_events_total", NULL, NULL, &n) == m->lost,
		   "lost events");
	FUZZ_CHECK(prom_check__sum(e, "drainstat_info", NULL, NULL, &n) == 1 && n == 1,
		   "drainstat_info is not one sample of 1");
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
	f = open_memstream(&text, &len);
	FUZZ_CHECK(f, "open_memstream");
	report_prom__print(f, &rm.m, &opts);
	fclose(f);
	e = prom_check__parse(text, len, err, sizeof(err));
	FUZZ_CHECK(e, "%s\n%s", err, text);
	check_sums(e, &rm.m, opts.max_sites);
	prom_check__free(e);
	free(text);
	random_model__free(&rm);
	return 0;
}
