// SPDX-License-Identifier: GPL-2.0
/* Unit tests for src/site.c. */
#include "check.h"
#include "site.h"

#define NR(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *site_of(const char *const *frames, int n)
{
	int i = site__pick(frames, n);

	return i < 0 ? NULL : frames[i];
}

/* 6.18, tracepoint mode: workqueue_queue_work from a fadvise(DONTNEED). */
static void test_fadvise_618(void)
{
	static const char *const frames[] = {
	    "bpf_trace_run3",	   "__bpf_trace_workqueue_queue_work",
	    "__queue_work",	   "queue_work_on",
	    "__lru_add_drain_all", "generic_fadvise",
	    "ksys_fadvise64_64",   "__x64_sys_fadvise64",
	    "do_syscall_64",	   "entry_SYSCALL_64_after_hwframe",
	};

	CHECK(site__pick(frames, NR(frames)) == 5);
	CHECK_STR(site_of(frames, NR(frames)), "generic_fadvise");
}

/* 6.1: lru_add_drain_all is not a tail call there. */
static void test_fadvise_61(void)
{
	static const char *const frames[] = {
	    "bpf_trace_run3",	 "__bpf_trace_workqueue_queue_work",
	    "__queue_work",	 "queue_work_on",
	    "lru_add_drain_all", "generic_fadvise",
	    "ksys_fadvise64_64", "__x64_sys_fadvise64",
	};

	CHECK_STR(site_of(frames, NR(frames)), "generic_fadvise");
}

static void test_move_pages(void)
{
	static const char *const frames[] = {
	    "__traceiter_workqueue_queue_work",
	    "__queue_work",
	    "queue_work_on",
	    "__lru_add_drain_all",
	    "lru_cache_disable",
	    "do_pages_move",
	    "kernel_move_pages",
	    "__x64_sys_move_pages",
	};

	CHECK_STR(site_of(frames, NR(frames)), "do_pages_move");
}

static void test_compiler_clones(void)
{
	static const char *const frames[] = {
	    "bpf_prog_6deef7357e7b4530_on_queue_work",
	    "__queue_work.cold",
	    "queue_work_on.part.0",
	    "__lru_add_drain_all.constprop.0",
	    "lru_add_drain_all.isra.0",
	    "khugepaged_do_scan.constprop.0",
	    "khugepaged",
	};

	CHECK_STR(site_of(frames, NR(frames)), "khugepaged_do_scan.constprop.0");
	CHECK(site__is_machinery("__lru_add_drain_all.constprop.0.isra.0"));
	CHECK(!site__is_machinery("lru_add_drain_all_x"));
	/* the local drain is a hook of its own in full and kprobe modes */
	CHECK(site__is_machinery("lru_add_drain"));
	CHECK(!site__is_machinery("lru_add_drain_x"));
	CHECK(!site__is_machinery("queue_work_on_x.part.0"));
	CHECK(!site__is_machinery("generic_fadvise"));
}

static void test_glue(void)
{
	CHECK(site__is_machinery("bpf_trace_run1"));
	CHECK(site__is_machinery("__bpf_trace_workqueue_execute_start"));
	CHECK(site__is_machinery("__traceiter_workqueue_queue_work"));
	CHECK(site__is_machinery("bpf_prog_6deef7357e7b4530_handle_queue_work"));
	CHECK(site__is_machinery("trace_workqueue_queue_work"));
	CHECK(site__is_machinery("__probestub_workqueue_queue_work"));
	CHECK(!site__is_machinery("bpf_trace"));
	CHECK(!site__is_machinery(""));
}

/* An unknown address is the site: the caller prints it raw. */
static void test_null_frame(void)
{
	static const char *const frames[] = {
	    "bpf_trace_run3", "__queue_work", "queue_work_on", NULL, "generic_fadvise",
	};

	CHECK(!site__is_machinery(NULL));
	CHECK(site__pick(frames, NR(frames)) == 3);
}

static void test_all_machinery(void)
{
	static const char *const frames[] = {
	    "bpf_trace_run3",	   "__bpf_trace_workqueue_queue_work",
	    "__queue_work",	   "queue_work_on",
	    "__lru_add_drain_all", "lru_add_drain_all",
	};

	CHECK(site__pick(frames, NR(frames)) == -1);
	CHECK(site__pick(frames, 3) == -1);
}

static void test_empty(void)
{
	static const char *const frames[] = {"generic_fadvise"};

	CHECK(site__pick(frames, 0) == -1);
	CHECK(site__pick(NULL, 0) == -1);
	CHECK(site__pick(frames, 1) == 0);
}

/* The BPF program on top, unknown because it was loaded after the symbols were read. */
static void test_unknown_bpf_program_on_top(void)
{
	const char *frames[] = {
	    NULL,
	    "bpf_trace_run3",
	    "__traceiter_workqueue_queue_work",
	    "__queue_work",
	    "queue_work_on",
	    "__lru_add_drain_all",
	    "generic_fadvise",
	    "do_syscall_64",
	};

	CHECK(site__pick(frames, 8) == 6);
	CHECK(site__first_frame(frames, 8) == 3);
	CHECK(site__first_frame(frames + 6, 2) == 0);
}

/*
 * A stack taken at a drain's fentry has no drain function: the traced function
 * has no frame of its own. It starts at the caller, past what is on top unnamed
 * (BPF code) or glue.
 */
static void test_fentry_no_drain_function(void)
{
	const char *frames[] = {
	    NULL, NULL, "bpf_trace_run1", "generic_fadvise", "ksys_fadvise64_64", "do_syscall_64",
	};

	CHECK(site__pick(frames, NR(frames)) == 3);
	CHECK(site__first_frame(frames, NR(frames)) == 3);
	CHECK(site__first_frame(frames, 2) == 0);
}

/* arm64's kprobe stacks lack the caller: put back after the probed function, once. */
static void test_put_back_caller(void)
{
	__u64 ips[4] = {0x10, 0x30, 0x40}, full[4] = {0x10, 0x30, 0x40, 0x50};
	int nr = 3, nr_full = 4;

	site__put_back_caller(ips, &nr, 4, 0x20);
	CHECK(nr == 4 && ips[0] == 0x10 && ips[1] == 0x20 && ips[2] == 0x30 && ips[3] == 0x40);
	site__put_back_caller(ips, &nr, 4, 0x20); /* there already */
	CHECK(nr == 4 && ips[1] == 0x20 && ips[2] == 0x30);
	site__put_back_caller(full, &nr_full, 4, 0x20); /* full: the outermost goes */
	CHECK(nr_full == 4 && full[1] == 0x20 && full[2] == 0x30 && full[3] == 0x40);
	nr = 0;
	site__put_back_caller(ips, &nr, 4, 0x20); /* a lost stack stays lost */
	CHECK(nr == 0);
	nr = 1;
	site__put_back_caller(ips, &nr, 4, 0); /* no caller to put back */
	CHECK(nr == 1);
}

int main(void)
{
	int failed = 0;

	RUN(test_fadvise_618);
	RUN(test_put_back_caller);
	RUN(test_fadvise_61);
	RUN(test_move_pages);
	RUN(test_compiler_clones);
	RUN(test_glue);
	RUN(test_null_frame);
	RUN(test_all_machinery);
	RUN(test_empty);
	RUN(test_unknown_bpf_program_on_top);
	RUN(test_fentry_no_drain_function);
	return failed ? 1 : 0;
}
