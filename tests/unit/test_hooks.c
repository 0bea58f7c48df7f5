// SPDX-License-Identifier: GPL-2.0
/*
 * src/hooks.c's table against the BPF object it names programs of: each
 * program is there, of the kind its column says, with no function in its
 * section (the table sets full mode's targets); every drain hook of the object
 * is in the table. Then what is read from the table: the site picker's skip
 * list and the blind spots' words, as they were before it.
 */
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "check.h"
#include "drainstat.h"
#include "drainstat.skel.h"
#include "hooks.h"
#include "setup_int.h"
#include "site.h"

static struct drainstat_bpf *skel;

/* prog is the program named name, in a section that is exactly sec. */
static void check_prog(const char *name, const char *sec)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(skel->obj, name);

	CHECK(prog != NULL);
	if (!prog)
		return;
	CHECK_STR(bpf_program__section_name(prog), sec);
}

static void test_programs_exist(void)
{
	const struct hook_fn *h;
	size_t i;

	for (i = 0; i < nr_hook_fns; i++) {
		h = &hook_fns[i];
		CHECK(h->name && h->fentry[0] && h->fexit[0] && h->kprobe && h->kretprobe);
		check_prog(h->fentry[0], "fentry");
		check_prog(h->fexit[0], "fexit");
		if (h->fentry[1])
			check_prog(h->fentry[1], "fentry");
		if (h->fexit[1])
			check_prog(h->fexit[1], "fexit");
		check_prog(h->kprobe, "kprobe");
		check_prog(h->kretprobe, "kretprobe");
	}
}

/* name is one of the table's programs. */
static bool in_table(const char *name)
{
	const struct hook_fn *h;
	size_t i;

	for (i = 0; i < nr_hook_fns; i++) {
		h = &hook_fns[i];
		if (!strcmp(name, h->fentry[0]) || !strcmp(name, h->fexit[0]) ||
		    (h->fentry[1] && !strcmp(name, h->fentry[1])) ||
		    (h->fexit[1] && !strcmp(name, h->fexit[1])) || !strcmp(name, h->kprobe) ||
		    !strcmp(name, h->kretprobe))
			return true;
	}
	return false;
}

/* Every fentry, fexit, kprobe and kretprobe program: none is hooked from outside the table. */
static void test_no_program_outside(void)
{
	static const char *const kinds[] = {"fentry", "fexit", "kprobe", "kretprobe"};
	struct bpf_program *prog;
	const char *sec;
	size_t k;

	bpf_object__for_each_program(prog, skel->obj)
	{
		sec = bpf_program__section_name(prog);
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (!strncmp(sec, kinds[k], strlen(kinds[k])) &&
			    !in_table(bpf_program__name(prog))) {
				fprintf(stderr, "  %s (%s) is not in hooks.c\n",
					bpf_program__name(prog), sec);
				CHECK(false);
			}
	}
}

static void test_rows(void)
{
	struct tracer_features f = {};
	size_t i;

	CHECK(nr_hook_fns <= HOOK_FNS_MAX);
	CHECK(!hooks__required()->optional && hooks__required() < hook_fns + nr_hook_fns);
	for (i = 0; i < nr_hook_fns; i++) {
		if (!hook_fns[i].optional) {
			CHECK(!hooks__feature(&hook_fns[i], &f));
			continue;
		}
		CHECK(hook_fns[i].feature + sizeof(bool) <= sizeof(f));
		*hooks__feature(&hook_fns[i], &f) = true;
		CHECK(hooks__feature_on(&hook_fns[i], &f));
		CHECK(!hook_fns[i].lost == !hook_fns[i].then);
	}
	/* the bits as tracer.h names them */
	CHECK(f.forced && f.inner && f.local && f.own);
}

static void test_site_skips(void)
{
	size_t i;

	for (i = 0; i < nr_hook_fns; i++)
		CHECK(site__is_machinery(hook_fns[i].name) == hook_fns[i].on_stacks);
	CHECK(site__is_machinery("lru_add_drain_all"));
	CHECK(site__is_machinery("lru_cache_disable"));
	CHECK(site__is_machinery("__lru_add_drain_all.constprop.0"));
	CHECK(site__is_machinery("lru_add_drain"));
	CHECK(!site__is_machinery("lru_add_drain_cpu"));
	CHECK(site__is_machinery("queue_work_on") && site__is_machinery("__queue_work"));
}

static const char *blind(bool local, bool own, enum drain_mode mode)
{
	static char buf[1024];
	struct tracer_features f = {
	    .mode = mode, .fadvise = true, .ipi = true, .local = local, .own = own};

	describe__blind_spots(&f, false, false, NULL, buf, sizeof(buf));
	return buf;
}

/* The words as drainstat has always said them: the first unhooked feature only. */
static void test_blind_spots(void)
{
	CHECK_STR(blind(true, true, MODE_FULL), "");
	CHECK_STR(blind(false, true, MODE_FULL), "local drains (lru_add_drain not hooked)");
	CHECK_STR(blind(false, false, MODE_KPROBE), "local drains (lru_add_drain not hooked)");
	CHECK_STR(blind(true, false, MODE_FULL),
		  "a drain's own local drain, 6.18+ (lru_add_drain_cpu not hooked): OWN-ONLY "
		  "drains counted EMPTY");
	CHECK(!strncmp(blind(false, false, MODE_TRACEPOINT), "drain entry or exit", 19));
}

int main(void)
{
	int failed = 0;

	skel = drainstat_bpf__open();
	if (!skel) {
		printf("FAIL open the BPF object\n");
		return 1;
	}
	RUN(test_programs_exist);
	RUN(test_no_program_outside);
	RUN(test_rows);
	RUN(test_site_skips);
	RUN(test_blind_spots);
	drainstat_bpf__destroy(skel);
	return failed ? 1 : 0;
}
