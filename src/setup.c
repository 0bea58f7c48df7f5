// SPDX-License-Identifier: GPL-2.0
/*
 * A run's setup, in the order of drainstat(8)'s exit codes (EXIT STATUS), its
 * steps in the files setup_*.c: what the options aim at (setup_target.c),
 * what the kernel must give (setup_kernel.c); then kallsyms scanned in a
 * thread where full or kprobe mode may need a few addresses before their load
 * (setup_kscan.c), the memory and fds the run needs checked (setup_budget.c),
 * the tracer started, mode by mode for auto, the symbols loaded between load
 * and attach (setup_start.c), what the mode cannot see described
 * (setup_describe.c) and the -T log opened. Each step says its own error and
 * returns its exit code; the first that fails ends setup.
 */
#include <malloc.h>

#include "cpulist.h"
#include "setup_int.h"

/* What the steps fill in as they go, set before the first. */
static void prepare(struct session *s)
{
	kscan__name_symbols(&s->scan);
	cpulist__format(s->opts->victims, s->filter_cpus, sizeof(s->filter_cpus));
	s->fds_at_start = probe__fds_in_use();
}

/*
 * The -p process (EXIT_NO_PROCESS), -C's CPUs (EXIT_USAGE), the --cgroup
 * directory (EXIT_NO_CGROUP), --by's key (EXIT_RUNTIME).
 */
static int check_target(struct session *s)
{
	int code = target__open_process(s);

	if (code == EXIT_OK)
		code = target__check_victims(s->opts);
	if (code == EXIT_OK)
		code = target__resolve_cgroup(s);
	if (code == EXIT_OK)
		code = target__key_sites(s);
	return code;
}

/* Privileges (EXIT_NO_PERM), the kernel's BTF (EXIT_NO_BTF), tracefs (EXIT_NO_TRACEFS). */
static int ready_kernel(struct session *s)
{
	int code = kernel__check_privileges();

	if (code == EXIT_OK)
		code = kernel__check_btf_exposed();
	if (code == EXIT_OK)
		code = kernel__mount_tracefs(s);
	return code;
}

/* The tracer's options for this run, from the options, the target and the BTF's facts. */
static void tracer_options(struct session *s)
{
	s->topts = (struct tracer_opts){
	    .filter_tgid = (__u32)s->opts->pid,
	    .filter_comm = s->opts->comm,
	    .filter_cgroup_id = s->cgroup_id,
	    .filter_victims = s->opts->victims_set ? s->opts->victims : NULL,
	    .max_sites = s->opts->max_sites,
	    .site_key_parts = s->key_parts,
	    .max_stacks = s->opts->max_stacks,
	    .mode = s->opts->mode,
	    .drain_all_btf_id = s->btf.drain_all_id,
	    .count_ipis = s->btf.ipi_send_cpu && s->opts->ipis,
	    .tracefs = TRACEFS,
	    .slow_threshold_ns = s->opts->slow_ns,
	    .every_stack = walks_every_stack(s->opts),
	    .fds_beside = budget__fds_beside(s),
	};
}

/*
 * The BTF's facts (EXIT_NO_BTF), then the tracer: the memory and fds
 * (EXIT_RUNTIME), kallsyms (EXIT_NO_KALLSYMS) and the drain work symbol
 * (EXIT_NO_SYMBOL), scanned for before its open, its open and load
 * (EXIT_BPF), its attach (EXIT_BPF). The scan thread starts after
 * kernel__mount_tracefs(): its unshare() needs a process of one thread.
 */
static int start_tracing(struct session *s)
{
	int code;

	kscan__start(s);
	/* what is known before the BTF is read: a message may say what the run needs */
	tracer_options(s);
	code = kernel__read_btf_facts(s);
	if (code == EXIT_OK) {
		tracer_options(s);
		code = start__tracer(s);
	}
	kscan__join(s);
	return code;
}

int setup__run(struct session *s)
{
	int code;

	/*
	 * Setup's megabytes (libbpf's BTF parse, in heap faulted in beforehand)
	 * stay in the heap until given back once attached.
	 */
	heap_keep(true);
	prepare(s);
	code = check_target(s);
	if (code == EXIT_OK)
		code = ready_kernel(s);
	if (code == EXIT_OK)
		code = start_tracing(s);
	heap_keep(false);
	malloc_trim(0);
	if (code == EXIT_OK)
		describe__run(s);
	/* -T's log (EXIT_RUNTIME) */
	if (code == EXIT_OK)
		code = start__slowlog(s);
	return code;
}
