/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel functions hooked at a drain's entry and exit, one row each (see
 * hooks.c): the feature each gives, its programs in full and kprobe modes, and
 * what a run without it cannot see. The symbol scan, each mode's plan and the
 * attach targets, the BTF probe, the site picker's skip list and the blind
 * spots are read from the table: a new drain entry point is a new row.
 */
#ifndef HOOKS_H
#define HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include "tracer.h"

/* The rows' most: what the symbol scan and tracer_symbols.hooks_in_kallsyms make room for. */
#define HOOK_FNS_MAX 8

/*
 * Whether a function's callers can sleep inside it, each holding an instance
 * of its kretprobe: a stuck drain piles them up, so the kretprobe gets room
 * for them (kretprobes__maxactive()) where they do, else the kernel's default.
 */
enum callers_sleep {
	SLEEP_NEVER,
	SLEEP_ALWAYS, /* on the drain mutex and in flush_work() */
	SLEEP_ON_RT,  /* on PREEMPT_RT, whose per-CPU local locks sleep */
};

struct hook_fn {
	const char *name; /* the kernel function, the programs' target */
	/* not required: refused, it only leaves its feature off (else the mode fails) */
	bool optional;
	size_t feature; /* optional: offsetof(struct tracer_features, the bit it turns on) */
	/* hooked only where kallsyms has this exact name: asked for before the load */
	bool if_in_kallsyms;
	/* its programs read typed ksyms: a load they fail is tried again without them */
	bool reads_ksyms;
	/* a drain's stacks pass through it: the site is a frame past it */
	bool on_stacks;
	/* a drain's entry: its caller is in it while the drain is in flight (verify.c) */
	bool drain;
	/* where its callers sleep inside it: its kretprobe then has room for them */
	enum callers_sleep callers_sleep;
	const char *fentry[2], *fexit[2]; /* full mode's programs, the twins second (or NULL) */
	const char *kprobe, *kretprobe;	  /* kprobe mode's */
	/* optional: the blind spot without it, "<lost> (<name> not hooked)<then>"; NULL if none */
	const char *lost, *then;
};

extern const struct hook_fn hook_fns[];
extern const size_t nr_hook_fns;

/* The required row every drain passes: auto's cheap fentry probe tries its BTF id. */
const struct hook_fn *hooks__required(void);
/* Where h's feature bit is in f; NULL for a required row. */
bool *hooks__feature(const struct hook_fn *h, struct tracer_features *f);
/* h's feature is on in f (a required row's always is: the mode would have failed). */
bool hooks__feature_on(const struct hook_fn *h, const struct tracer_features *f);

/*
 * name is want, but for a compiler clone's suffix (.constprop.0, .isra.0,
 * .part.0, .cold): the same function to a stack.
 */
bool hooks__same_function(const char *name, const char *want);
/* name is a drain's entry row's function (a clone of it too). */
bool hooks__is_drain(const char *name);

#endif /* HOOKS_H */
