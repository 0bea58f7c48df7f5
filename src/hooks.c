// SPDX-License-Identifier: GPL-2.0
/* The hooked kernel functions: the one place that names them (see hooks.h). */
#include <string.h>

#include "hooks.h"

#define FEATURE(bit) .optional = true, .feature = offsetof(struct tracer_features, bit)

/*
 * In attach order, the API first. lru_add_drain_all() and lru_cache_disable()
 * are the API; the BPF side counts a nested entry as the same drain.
 */
const struct hook_fn hook_fns[] = {
    {
	.name = "lru_add_drain_all",
	.drain = true,
	.on_stacks = true,
	.callers_sleep = SLEEP_ALWAYS,
	.fentry = {"drainstat_fentry_drain_all", "drainstat_fentry_drain_all_twin"},
	.fexit = {"drainstat_fexit_drain_all", "drainstat_fexit_drain_all_twin"},
	.kprobe = "drainstat_kprobe_drain_all",
	.kretprobe = "drainstat_kretprobe_api",
    },
    /* forced drains: every CPU, no piggyback (5.13 and later) */
    {
	.name = "lru_cache_disable",
	.drain = true,
	FEATURE(forced),
	.if_in_kallsyms = true,
	.on_stacks = true,
	.callers_sleep = SLEEP_ALWAYS,
	.fentry = {"drainstat_fentry_cache_disable", "drainstat_fentry_cache_disable_twin"},
	.fexit = {"drainstat_fexit_cache_disable", "drainstat_fexit_cache_disable_twin"},
	.kprobe = "drainstat_kprobe_cache_disable",
	.kretprobe = "drainstat_kretprobe_api",
    },
    /*
     * Since 6.18 generic_fadvise() calls it directly, so where it has a symbol
     * of this exact name it is hooked too. "static inline" makes it notrace
     * elsewhere (6.12: not in available_filter_functions, fentry EBUSY, kprobe
     * EINVAL); a compiler clone (.constprop.0, ...) has no BTF, and its
     * arguments may be gone.
     */
    {
	.name = "__lru_add_drain_all",
	.drain = true,
	FEATURE(inner),
	.if_in_kallsyms = true,
	.on_stacks = true,
	.callers_sleep = SLEEP_ALWAYS,
	.fentry = {"drainstat_fentry_drain", "drainstat_fentry_drain_twin"},
	.fexit = {"drainstat_fexit_drain", "drainstat_fexit_drain_twin"},
	.kprobe = "drainstat_kprobe_drain",
	.kretprobe = "drainstat_kretprobe_drain",
    },
    /* the local drain: its stack is taken at its entry, its site past it */
    {
	.name = "lru_add_drain",
	FEATURE(local),
	.on_stacks = true,
	.callers_sleep = SLEEP_ON_RT,
	.fentry = {"drainstat_fentry_local"},
	.fexit = {"drainstat_fexit_local"},
	.kprobe = "drainstat_kprobe_local",
	.kretprobe = "drainstat_kretprobe_local",
	.lost = "local drains",
	.then = "",
    },
    /* a drain's own local drain (6.18+); no stack is taken in it */
    {
	.name = "lru_add_drain_cpu",
	FEATURE(own),
	.reads_ksyms = true,
	.callers_sleep = SLEEP_ON_RT,
	.fentry = {"drainstat_fentry_own"},
	.fexit = {"drainstat_fexit_own"},
	.kprobe = "drainstat_kprobe_own",
	.kretprobe = "drainstat_kretprobe_own",
	.lost = "a drain's own local drain, 6.18+",
	.then = ": OWN-ONLY drains counted EMPTY",
    },
};

const size_t nr_hook_fns = sizeof(hook_fns) / sizeof(hook_fns[0]);

_Static_assert(sizeof(hook_fns) / sizeof(hook_fns[0]) <= HOOK_FNS_MAX,
	       "more rows than HOOK_FNS_MAX");

const struct hook_fn *hooks__required(void)
{
	size_t i;

	for (i = 0; i < nr_hook_fns && hook_fns[i].optional; i++)
		;
	return &hook_fns[i];
}

bool *hooks__feature(const struct hook_fn *h, struct tracer_features *f)
{
	return h->optional ? (bool *)((char *)f + h->feature) : NULL;
}

bool hooks__feature_on(const struct hook_fn *h, const struct tracer_features *f)
{
	return !h->optional || *(const bool *)((const char *)f + h->feature);
}

bool hooks__same_function(const char *name, const char *want)
{
	size_t len = strcspn(name, ".");

	return strlen(want) == len && !strncmp(name, want, len);
}

bool hooks__is_drain(const char *name)
{
	size_t i;

	for (i = 0; i < nr_hook_fns; i++)
		if (hook_fns[i].drain && hooks__same_function(name, hook_fns[i].name))
			return true;
	return false;
}
