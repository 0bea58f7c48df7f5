/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracer's insides, shared by its five files only: tracer.c (load,
 * attach, the slow-drain ring buffer, unload), tracer_plan.c (what a mode
 * loads and needs), tracer_read.c (the map readers), tracer_check.c (the
 * check of the drains in flight against their callers) and tracer_cgname.c
 * (cgroups named by the kernel).
 */
#ifndef TRACER_INT_H
#define TRACER_INT_H

#include <bpf/libbpf.h>
#include "drainstat.h"
#include "hooks.h"
#include "tracer.h"

struct drainstat_bpf;
struct kretprobes;

#define MAX_LINKS 24

/* A kernel stack already read: its id names it for good (see read_stack()). */
struct known_stack {
	int nr_ips;
	__u64 ips[DRAINSTAT_MAX_STACK_DEPTH];
};

/* One program to attach. */
struct hook {
	struct bpf_program *prog;
	const char *kfunc; /* a drain hook's function: a kprobe's, an fentry's target; else NULL */
	bool retprobe;
	bool *seen;			  /* optional hook: set when attached; NULL: required */
	int *why;			  /* optional hook: -errno of its attach when it failed */
	enum callers_sleep callers_sleep; /* a kretprobe's function: where callers sleep in it */
};

struct plan {
	struct hook hooks[MAX_LINKS];
	int nr;
};

struct tracer {
	struct tracer_opts opts; /* as tracer__new() got them */
	struct plan plan;	 /* what the mode being started loads and attaches */
	struct drainstat_bpf *skel;
	int nr_cpus;
	const void *sites_area; /* the sites array's slots in use, mmapped read-only */
	size_t sites_area_size;
	struct known_stack **known_stacks; /* by stack id, NULL until read */
	__u32 nr_known_stacks;		   /* slots: the stack map's max_entries */
	struct tracer_features features;
	struct tracer_symbols syms; /* tracer__set_symbols()'s */
	int own_load_err;	    /* a load with the own local drain's programs failed: -errno */
	int check_load_err;	    /* a load with the check of the callers failed: -errno */
	int cgname_load_err;	    /* a load with the naming of cgroups failed: -errno */
	bool check_tried_again;	    /* the check loaded again once the naming was left out */
	struct bpf_link *links[MAX_LINKS];
	int nr_links;
	const struct work_state *works_area; /* the works array, mmapped read-only */
	size_t works_area_size;
	const struct cpu_stats *cpus_area; /* the cpus array, mmapped read-only */
	size_t cpus_area_size;
	const struct drain_slot *drain_slots; /* the drain states' slots, mmapped read-only */
	size_t drain_slots_size;
	struct drain_state *drains_buf; /* a batch of the drains map: values */
	__u32 *tids_buf;		/* and keys */
	struct ring_buffer *slow;
	slow_drain_fn slow_fn;
	void *slow_arg;
	__u64 slow_deadline_ns;	      /* a batch of slow drains stops past it (0: none) */
	bool slow_dropping;	      /* the end: events are counted unread, not read */
	__u64 slow_unread;	      /* CNT_SLOW_UNREAD */
	__u64 skipped;		      /* CNT_SKIPPED as last read: it never goes back */
	struct bpf_link *check_link;  /* drainstat_check_callers, NULL if the kernel refused it */
	struct bpf_link *rmdir_link;  /* drainstat_cgroup_rmdir, NULL if the kernel refused it */
	struct caller_check *checks;  /* its records as last read, by tid */
	size_t nr_checks, checks_cap; /* at most one a drain the drains map holds */
	/* kprobe mode: the kretprobes made through tracefs, NULL on the PMU's */
	struct kretprobes *kret;
	bool kret_tried;	/* tracefs tried for this attach */
	bool preempt_rt;	/* the kernel is PREEMPT_RT: SLEEP_ON_RT's callers sleep */
	__u64 kretprobe_missed; /* CNT_KRETPROBE_MISSED as last read: it never goes back */
};

/* What mode attaches, its optional hooks' outcomes going into f; everything else stays unloaded. */
void tracer_plan_mode(struct plan *p, struct drainstat_bpf *s, const struct tracer_opts *o,
		      const struct tracer_symbols *syms, enum drain_mode mode,
		      struct tracer_features *f);
/* skel's rodata, autoload and map sizes for plan in mode: 0 or -errno. */
int tracer_configure(struct drainstat_bpf *skel, const struct tracer_opts *opts,
		     const struct plan *plan, enum drain_mode mode, int nr_cpus);
/* The fds and kernel memory the configured skeleton and the plan need. */
void tracer_count_needs(const struct drainstat_bpf *skel, const struct plan *plan, int nr_cpus,
			struct tracer_needs *needs);

/* kprobe mode: the kernel's count of our kretprobes' misses: 0, or -EOPNOTSUPP, -errno. */
int tracer_kretprobe_missed(const struct tracer *t, __u64 *missed);
/* The stack id in map (stacks or ustacks) into ips; *nr 0 if it has none. */
int tracer_read_ips(const struct bpf_map *map, __s32 id, __u64 *ips, int *nr);
/* The check of the callers (tracer_check.c): its iterator attached, 0 or -errno. */
int tracer_attach_check(struct tracer *t);
/* The hook on removed cgroups attached (tracer_cgname.c): 0 or -errno. */
int tracer_attach_cgname(struct tracer *t);
/* Each drain of snap's checked against its caller: snap_drain.caller and check. 0 or -errno. */
int tracer_check_callers(struct tracer *t, struct snapshot *snap);
/* Task tid's drain state, from its slot or the drains map, into d: 0 or -errno (ENOENT: none). */
int tracer_drain_state(const struct tracer *t, __u32 tid, struct drain_state *d);
/* The readers' buffers, mappings and stack copies, freed. */
void tracer_read_free(struct tracer *t);

#endif /* TRACER_INT_H */
