// SPDX-License-Identifier: GPL-2.0
/*
 * What the running kernel must give before any load, made sure of in the
 * order of the exit codes: privileges, its BTF, tracefs (mounted here where
 * it is not), then what its BTF says of the hooks.
 */
#include <errno.h>
#include <string.h>

#include "setup_int.h"

int kernel__check_privileges(void)
{
	if (probe__privileges())
		return say_error(EXIT_NO_PERM, "need root, or CAP_BPF and CAP_PERFMON");
	return EXIT_OK;
}

int kernel__check_btf_exposed(void)
{
	int err = probe__btf(BTF_PATH);

	if (err == -ENODATA)
		return say_error(EXIT_NO_BTF,
				 "the kernel's BTF (%s) is empty or not BTF: drainstat needs the "
				 "kernel's own, built with CONFIG_DEBUG_INFO_BTF=y",
				 BTF_PATH);
	if (err)
		return say_error(EXIT_NO_BTF,
				 "the kernel exposes no BTF (%s): drainstat needs a kernel "
				 "built with CONFIG_DEBUG_INFO_BTF=y",
				 BTF_PATH);
	return EXIT_OK;
}

/* Where tracefs is not mounted, in a mount namespace of drainstat's own (see probe.h). */
int kernel__mount_tracefs(struct session *s)
{
	int err = probe__mount_tracefs(TRACEFS);

	if (err < 0)
		return say_error(EXIT_NO_TRACEFS,
				 "tracefs is not mounted at %s and mounting it failed: "
				 "%s",
				 TRACEFS, strerror(-err));
	s->tracefs_mounted = err;
	note(s->opts->verbose, "tracefs %s %s", TRACEFS,
	     err ? "mounted by drainstat in a mount namespace of its own" : "already mounted");
	return EXIT_OK;
}

/* What the BTF says of the hooks: the kernel looks it up (see probe__btf_facts()). */
int kernel__read_btf_facts(struct session *s)
{
	__u64 start = now_ns();

	probe__btf_facts(&s->btf);
	if (probe__short_of_resources(s->btf.err))
		return budget__resource_error(s, s->btf.err);
	if (s->btf.err)
		return say_error(EXIT_NO_BTF, "cannot parse the kernel's BTF (%s): %s", BTF_PATH,
				 strerror(-s->btf.err));
	note(s->opts->verbose, "BTF %s in %.1f ms: %s %s, qpw_struct %s, ipi_send_cpu %s",
	     s->btf.parsed ? "parsed" : "looked up by the kernel", (double)(now_ns() - start) / 1e6,
	     hooks__required()->name, s->btf.drain_all_id > 0 ? "found" : "missing",
	     s->btf.qpw ? "found" : "missing", s->btf.ipi_send_cpu ? "found" : "missing");
	return EXIT_OK;
}
