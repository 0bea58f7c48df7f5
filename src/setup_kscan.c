// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel symbols the tracer needs, from kallsyms: the few addresses full
 * and kprobe modes need before their load, scanned for in a thread of its own
 * while the main thread checks; the whole symbol table, loaded between the
 * load and attach; and why kallsyms could not be read, said as an exit code.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <linux/capability.h>

#include "setup_int.h"

#define KALLSYMS      "/proc/kallsyms"
#define DRAIN_WORK_FN "lru_add_drain_per_cpu"

/*
 * What shows kernel addresses: kernel.kptr_restrict 2 to no one, 1 to
 * CAP_SYSLOG, 0 to all while kernel.perf_event_paranoid is 1 or less.
 */
static const char *kallsyms_fix(int kptr_restrict)
{
	int paranoid = 2;

	probe__sysctl("kernel.perf_event_paranoid", &paranoid);
	if (kptr_restrict == 0)
		return "kernel.perf_event_paranoid=1";
	return paranoid > 1 ? "kernel.kptr_restrict=0 and kernel.perf_event_paranoid=1"
			    : "kernel.kptr_restrict=0";
}

static int kallsyms_error(struct session *s, int err)
{
	int kptr_restrict = 1;

	if (probe__short_of_resources(err))
		return budget__resource_error(s, err);
	probe__sysctl("kernel.kptr_restrict", &kptr_restrict);
	if (err == -EPERM && kptr_restrict == 2)
		return say_error(EXIT_NO_KALLSYMS,
				 "kernel addresses in %s are hidden even from root "
				 "(kernel.kptr_restrict=2): set kernel.kptr_restrict to 0 or 1",
				 KALLSYMS);
	/* with CAP_SYSLOG the kernel shows them at 0 and 1: something else hides them */
	if (err == -EPERM && probe__has_cap(CAP_SYSLOG) > 0)
		return say_error(EXIT_NO_KALLSYMS,
				 "kernel addresses in %s are hidden although drainstat has "
				 "CAP_SYSLOG and kernel.kptr_restrict is %d: is a file mounted "
				 "over it?",
				 KALLSYMS, kptr_restrict);
	if (err == -EPERM)
		return say_error(
		    EXIT_NO_KALLSYMS,
		    "kernel addresses in %s are hidden: run as root, or with CAP_SYSLOG, "
		    "or set %s",
		    KALLSYMS, kallsyms_fix(kptr_restrict));
	/* ksyms__load()'s for a file with no symbol line */
	if (err == -EINVAL)
		return say_error(
		    EXIT_NO_KALLSYMS,
		    "%s lists no kernel symbol: is it empty, or a file mounted over it?", KALLSYMS);
	return say_error(EXIT_NO_KALLSYMS, "cannot read %s: %s", KALLSYMS, strerror(-err));
}

static const char *const trampolines[SYM_TRAMPOLINES] = {
    "__kretprobe_trampoline",
    "arch_rethook_trampoline",
};

/* The names of session_int.h's symbol_scan, in its order. */
void kscan__name_symbols(struct symbol_scan *scan)
{
	size_t i, n = 0;

	scan->names[n++] = DRAIN_WORK_FN;
	for (i = 0; i < nr_hook_fns; i++)
		if (hook_fns[i].if_in_kallsyms)
			scan->names[n++] = hook_fns[i].name;
	for (i = 0; i < SYM_TRAMPOLINES; i++)
		scan->names[n++] = trampolines[i];
	scan->nr = n;
}

/* tracer_symbols.hooks_in_kallsyms from what the scan found. */
static __u32 hooks_in_kallsyms(const struct symbol_scan *scan)
{
	size_t i, k = SYM_WORK_FN + 1;
	__u32 found = 0;

	for (i = 0; i < nr_hook_fns; i++)
		if (hook_fns[i].if_in_kallsyms && scan->addrs[k++])
			found |= 1U << i;
	return found;
}

static void *scan_symbols(void *arg)
{
	struct symbol_scan *scan = arg;
	size_t n = scan->nr_scanned;
	__u64 start = now_ns();

	/* the work function alone: the scan stops at it, a quarter of kallsyms on 6.18 */
	scan->err =
	    ksyms__scan(KALLSYMS, scan->names, scan->addrs, n, n == scan->nr ? SYM_TRAMPOLINES : 0);
	scan->ns = now_ns() - start;
	scan->scanned = true;
	return NULL;
}

/* The scan thread's stack (see kscan__start()). */
#define SCAN_STACK_SIZE (256 << 10)

/*
 * Whether a mode whose hooks depend on the symbols (full, kprobe) may be
 * tried: auto tries them only where kprobes exist, fentry's kernels. Where it
 * tries one all the same, the rest is scanned for when asked (see
 * kscan__symbols_ready()).
 */
static bool hook_modes_possible(const struct session *s)
{
	if (s->opts->mode == MODE_AUTO)
		return !probe__kprobes(TRACEFS);
	return s->opts->mode != MODE_TRACEPOINT;
}

/*
 * The addresses every mode needs before its load, from a scan of kallsyms:
 * the drain work function's (the filter key, filterkey.h), and where full or
 * kprobe mode may be tried the hooked functions' and trampolines'. The symbol
 * table itself is read between the load and attach (see
 * kscan__load_symbols()), where libbpf's heap is free again, so the scan keeps
 * no more than a line. It runs in a thread of its own, beside the BTF lookup
 * and the memory check, and takes no signals. Without a thread it runs when
 * asked. Its stack has a size of its own, not RLIMIT_STACK's (glibc's default
 * for threads): a small ulimit -s is no limit on it.
 */
void kscan__start(struct session *s)
{
	pthread_attr_t attr;
	sigset_t all, old;

	s->scan.nr_scanned = hook_modes_possible(s) ? s->scan.nr : SYM_WORK_FN + 1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, SCAN_STACK_SIZE);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	s->scan.running = !pthread_create(&s->scan.thread, &attr, scan_symbols, &s->scan);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

void kscan__join(struct session *s)
{
	if (s->scan.running)
		pthread_join(s->scan.thread, NULL);
	s->scan.running = false;
}

/* -v: where the symbols were found, and their addresses. */
static void note_symbols(const struct session *s)
{
	const __u64 *addrs = s->scan.addrs;
	size_t i;

	if (s->ksyms)
		note(s->opts->verbose, "%s at 0x%llx, found in the symbol table", DRAIN_WORK_FN,
		     (unsigned long long)addrs[SYM_WORK_FN]);
	else
		note(s->opts->verbose, "%s at 0x%llx, found in %.1f ms by a scan of %s",
		     DRAIN_WORK_FN, (unsigned long long)addrs[SYM_WORK_FN],
		     (double)s->scan.ns / 1e6, KALLSYMS);
	for (i = s->scan.nr - SYM_TRAMPOLINES; i < s->scan.nr; i++)
		if (addrs[i])
			note(s->opts->verbose, "kretprobes return through %s at 0x%llx",
			     s->scan.names[i], (unsigned long long)addrs[i]);
}

/*
 * The symbols the tracer needs, hooks: a mode that hooks the drain
 * functions. Found once for each kind of mode, whatever the modes tried: from
 * the table if it is loaded, else from the scan, waited for, or run here if no
 * thread ran it or it looked for the work function alone. Without
 * lru_add_drain_per_cpu drain works cannot be told from the others.
 */
int kscan__symbols_ready(struct session *s, bool hooks, struct tracer_symbols *syms)
{
	struct symbol_scan *scan = &s->scan;
	const __u64 *addrs = scan->addrs;
	bool all = scan->nr_scanned == scan->nr;

	if (scan->found && (all || !hooks)) {
		*syms = scan->syms;
		return 0;
	}
	kscan__join(s);
	if (s->ksyms) {
		ksyms__find(s->ksyms, scan->names, scan->addrs, scan->nr);
		scan->nr_scanned = scan->nr;
	} else if (!scan->scanned || (hooks && !all)) {
		if (hooks)
			scan->nr_scanned = scan->nr;
		scan_symbols(scan);
	}
	if (!s->ksyms && scan->err) {
		s->symbols_code = kallsyms_error(s, scan->err);
		return scan->err;
	}
	if (!addrs[SYM_WORK_FN]) {
		s->symbols_code = say_error(EXIT_NO_SYMBOL,
					    "this kernel has no %s in %s: cannot tell LRU drain "
					    "works from other work items",
					    DRAIN_WORK_FN, KALLSYMS);
		return -ENOENT;
	}
	note_symbols(s);
	scan->syms = (struct tracer_symbols){
	    .drain_work_fn = addrs[SYM_WORK_FN],
	    .hooks_in_kallsyms = hooks_in_kallsyms(scan),
	    .kretprobe_trampoline = addrs[scan->nr - SYM_TRAMPOLINES],
	    .rethook_trampoline = addrs[scan->nr - SYM_TRAMPOLINES + 1],
	};
	scan->found = true;
	*syms = scan->syms;
	return 0;
}

/*
 * Every symbol, to name the frames of kernel stacks, read once, between the
 * tracer's load and its attach (setup_start.c). kallsyms is read before any drain runs
 * traced (its 40-50 ms slow the drains that run meanwhile as any busy CPU
 * does), and the table takes the heap libbpf's copy of the kernel's BTF has
 * given back, which setup keeps (see setup__run()): the memory check counted
 * that heap, and the table never needs more than it.
 */
int kscan__load_symbols(struct session *s)
{
	__u64 start = now_ns();
	int err;

	if (s->ksyms)
		return 0;
	/* one kallsyms open at a time (budget__fds_beside()) */
	kscan__join(s);
	err = ksyms__load(KALLSYMS, &s->ksyms);
	if (err) {
		s->symbols_code = kallsyms_error(s, err);
		return err;
	}
	note(s->opts->verbose, "%zu symbols from %s in %.1f ms", ksyms__count(s->ksyms), KALLSYMS,
	     (double)(now_ns() - start) / 1e6);
	return 0;
}
