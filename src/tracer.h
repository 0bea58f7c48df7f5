/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF side's lifecycle: choose the mode by trying, load, attach, read
 * snapshots, detach. Which hooks each mode uses it reads from hooks.c's table.
 */
#ifndef TRACER_H
#define TRACER_H

#include <stdbool.h>
#include <linux/types.h>
#include "snapshot.h"

struct cgroup_level;

struct tracer;

enum drain_mode {
	MODE_AUTO,	 /* full, else kprobe, else tracepoint */
	MODE_FULL,	 /* fentry/fexit on the drain functions */
	MODE_KPROBE,	 /* kprobe/kretprobe on the same functions */
	MODE_TRACEPOINT, /* the workqueue tracepoints only */
};

/*
 * The kernel symbols the programs need (tracer__set_symbols()), before the
 * open: full and kprobe modes' hooks depend on them, and every mode's filter
 * key is an immediate in its instructions (filterkey.h).
 */
struct tracer_symbols {
	__u64 drain_work_fn; /* lru_add_drain_per_cpu's address: marks drain works */
	/* bit i: hook_fns[i]'s function is in kallsyms (asked only of rows if_in_kallsyms) */
	__u32 hooks_in_kallsyms;
	/*
	 * The addresses a kretprobe puts in a return address's place, 0 if none:
	 * __kretprobe_trampoline, and arch_rethook_trampoline where kretprobes
	 * run on rethook
	 */
	__u64 kretprobe_trampoline;
	__u64 rethook_trampoline;
};

struct tracer_opts {
	__u32 filter_tgid;	     /* 0: every process */
	const char *filter_comm;     /* NULL: every comm */
	__u64 filter_cgroup_id;	     /* 0: every cgroup */
	const __u64 *filter_victims; /* NULL: every target CPU, else a bitmap of them */
	__u32 max_sites;	     /* 0: the BPF object's default */
	__u32 site_key_parts;	     /* --by: SITE_KEY_* bits; 0: the BPF object's default */
	__u32 max_stacks;
	enum drain_mode mode;
	int drain_all_btf_id;	 /* the required drain hook's BTF id (hooks.c), -errno if none */
	bool count_ipis;	 /* --ipis, where the ipi:ipi_send_cpu tracepoint exists */
	const char *tracefs;	 /* where tracefs is mounted */
	__u64 slow_threshold_ns; /* -T; 0: no slow-drain log */
	bool every_stack;	 /* -s, -T: every drain's kernel stack (see bpf/) */
	/* the most fds the caller has open at once beside the tracer's, those open now included */
	unsigned int fds_beside;
};

/* What the tracer ended up seeing. */
/* An optional hook that failed to attach: its program and why. */
struct tracer_failed_hook {
	char prog[32];
	int err; /* -errno */
};

#define TRACER_MAX_FAILED 8

struct tracer_features {
	enum drain_mode mode;
	/*
	 * the optional hooks that failed to attach, whose features are off;
	 * nr_detached: the other hooks of those features, attached, then
	 * detached (an entry without its exit would leave calls open for good)
	 */
	struct tracer_failed_hook failed[TRACER_MAX_FAILED];
	int nr_failed;
	int nr_detached;
	bool fadvise;	 /* syscalls:sys_enter/exit_fadvise64 attached */
	int fadvise_err; /* if not: -errno of their attach */
	bool ipi;	 /* ipi:ipi_send_cpu attached (about 6.4 and later) */
	/* the drain hooks' features, each a row's of hooks.c: on when all its hooks attached */
	bool local;  /* the local drain */
	bool own;    /* a drain's own local drain (6.18+) */
	int own_err; /* -errno of a load with those hooks that failed, 0 if none */
	bool forced; /* forced drains */
	bool inner;  /* the drain's inner function, where it has a symbol (6.18) */
	/* -errno if the check of the drains in flight (a task iterator) was refused, else 0 */
	int check_err;
	/* -errno if the kernel's naming of cgroups (a cgroup iterator) was refused, else 0 */
	int cgname_err;
	/* -errno if its hook on removed cgroups did not attach, else 0 */
	int cgname_rmdir_err;
	/*
	 * kprobe mode's kretprobes: made through tracefs kprobe_events at
	 * kret_dir, with kret_maxactive instances on the functions callers sleep
	 * in; else the kprobe PMU's (the kernel's maxactive), kret_err why
	 */
	bool kret_tracefs;
	bool kret_rt; /* PREEMPT_RT: the local drains' kretprobes get as many (hooks.h) */
	unsigned int kret_maxactive;
	int kret_err;
	char kret_dir[64];
	bool kret_missed_known; /* the kernel tells their misses (CNT_KRETPROBE_MISSED) */
};

enum tracer_step {
	TRACER_SYMBOLS, /* the caller's symbols were not there: no other mode is tried */
	TRACER_OPEN,
	TRACER_LOAD,
	TRACER_ATTACH,
};

/* What a run needs at once. */
struct tracer_needs {
	unsigned int fds; /* the least RLIMIT_NOFILE, with tracer_opts.fds_beside */
	__u64 memory;	  /* bytes of kernel memory: the BPF maps, the load's own */
	int nr_cpus;	  /* the possible CPUs, which the maps kept per CPU are sized for */
};

/* A slow drain as read from the ring buffer, with its stacks (innermost first). */
struct slow_drain {
	struct slow_drain_event ev;
	__u64 kips[DRAINSTAT_MAX_STACK_DEPTH];
	int nr_kips;
	__u64 uips[DRAINSTAT_MAX_STACK_DEPTH];
	int nr_uips;
};

typedef void (*slow_drain_fn)(const struct slow_drain *d, void *arg);

const char *tracer__mode_name(enum drain_mode mode);
/* Every mode's name, as a list for a message: "auto, full, kprobe or tracepoint". */
void tracer__mode_list(char *buf, size_t size);
/* "auto", "full", "kprobe", "tracepoint": 0 or -EINVAL. */
int tracer__parse_mode(const char *s, enum drain_mode *mode);

/*
 * What a run in opts->mode needs, found before anything is loaded, without the
 * hooks that depend on the symbols: the fds of the mode that needs the fewest
 * (auto may end in tracepoint mode), the memory of the one that needs the most.
 * 0 or -errno.
 */
int tracer__needs(const struct tracer_opts *opts, struct tracer_needs *needs);

/*
 * Starting a tracer reads as a skeleton's lifecycle, mode by mode (auto
 * tries full, kprobe, then tracepoint, as tracer__next_mode() gives them):
 *
 *	tracer__new(opts, &t);
 *	while (!tracer__next_mode(t, &mode)) {
 *		tracer__set_symbols(t, the symbols mode needs)
 *		tracer__open(t, mode), tracer__load(t, &fds_needed)
 *		the heap the load freed is the caller's again (libbpf's copy of
 *		the kernel's BTF): what it reads once, no drain traced meanwhile
 *		tracer__attach(t): running; else the next mode
 *	}
 *
 * A step that fails returns -errno with everything it made undone, ready for
 * the next mode. Short of fds or memory (-EMFILE, -ENFILE, -ENOMEM), no other
 * mode should be tried: RLIMIT_NOFILE is checked before libbpf's load (see
 * tracer__load()), whose feature probes take EMFILE for a missing feature.
 */
int tracer__new(const struct tracer_opts *opts, struct tracer **out);
/*
 * The mode to try after *mode (MODE_AUTO: none tried yet), skipping those the
 * kernel cannot have: 0, -ENOENT after the last, or -errno short of resources.
 */
int tracer__next_mode(const struct tracer *t, enum drain_mode *mode);
void tracer__set_symbols(struct tracer *t, const struct tracer_symbols *syms);
/* The objects opened, mode's programs chosen and the maps sized: 0 or -errno. */
int tracer__open(struct tracer *t, enum drain_mode mode);
/*
 * Loaded, once more without the own local drain's programs if a kernel
 * refuses those. -EMFILE, *fds_needed the fds the mode needs, if the soft
 * RLIMIT_NOFILE is short of them.
 */
int tracer__load(struct tracer *t, unsigned int *fds_needed);
int tracer__attach(struct tracer *t);
int tracer__snapshot(struct tracer *t, struct snapshot *snap);
/*
 * Only what is in flight, into snap (reset first), with what runs on the CPUs
 * of pending works of drains in flight running_min_ns or longer: cheap when
 * nothing is.
 */
int tracer__in_flight(struct tracer *t, struct snapshot *snap, __u64 running_min_ns);
/*
 * Ends the drain of task tid begun at start_ns, found ended by the check of
 * its caller (a phantom), if its state is still that drain in flight, and
 * counts it: the counter it counted it in (CNT_PHANTOMS_ENDED, or
 * CNT_PHANTOMS_ATTACHING), -ENOENT if it was no longer in flight, or -errno.
 */
int tracer__end_phantom(struct tracer *t, __u32 tid, __u64 start_ns);
/* Whether the kernel names cgroups (drainstat_name_cgroup was loaded). */
bool tracer__names_cgroups(const struct tracer *t);
/*
 * The levels of cgroup id's path as the kernel names them (struct
 * cgroup_level, top first, at most max): how many (0: the root), -ENOENT if
 * the cgroup is gone, -EOPNOTSUPP without the iterator, or -errno.
 */
int tracer__name_cgroup(struct tracer *t, __u64 id, struct cgroup_level *levels, int max);
/* The parent of cgroup id, removed since drainstat attached: 0, or -ENOENT when not known. */
int tracer__cgroup_parent(struct tracer *t, __u64 id, __u64 *parent);
/* -T: fn gets each slow drain; the fd polls readable when some are waiting. */
int tracer__watch_slow(struct tracer *t, slow_drain_fn fn, void *arg);
int tracer__slow_fd(const struct tracer *t);
/*
 * Reads the slow drains waiting, each to fn, until none is left or
 * deadline_ns (CLOCK_MONOTONIC; 0: none) is past, the event read then
 * included: 0 when none is left, 1 when some may be, or -errno.
 */
int tracer__consume_slow(struct tracer *t, __u64 deadline_ns);
/*
 * At the end, once snap is read: the slow drains still waiting counted as
 * unread, not read, and snap's CNT_SLOW_UNREAD with them (a drain that ends
 * meanwhile may have its event counted, not the drain); as consume_slow.
 */
int tracer__drop_slow(struct tracer *t, __u64 deadline_ns, struct snapshot *snap);
const struct tracer_features *tracer__features(const struct tracer *t);
/* Kernel stacks the programs walked so far: 0 or -errno. */
int tracer__stack_walks(const struct tracer *t, __u64 *walks);
/* The sites array's slots: its size, those taken, and local drains' share of them. */
struct tracer_site_slots {
	__u32 max;
	__u32 used;
	__u32 local;	 /* taken by local drains */
	__u32 local_max; /* local_sites_max(max) */
};

void tracer__site_slots(const struct tracer *t, struct tracer_site_slots *slots);
void tracer__free(struct tracer *t);

#endif /* TRACER_H */
