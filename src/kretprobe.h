/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kprobe mode's kretprobes made through tracefs's kprobe_events, where a
 * kretprobe takes a maxactive (the kprobe PMU, libbpf's way, takes none), and
 * the misses the kernel counts of each, theirs or the PMU's (see kretprobe.c).
 */
#ifndef KRETPROBE_H
#define KRETPROBE_H

#include <stdbool.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

struct kretprobes;

/*
 * The maxactive of a kretprobe on a function its callers sleep in (the drain
 * mutex, flush_work()), for nr_cpus possible CPUs: see kretprobe.c.
 */
unsigned int kretprobes__maxactive(int nr_cpus);

/*
 * The first of the tracefs mounts in dirs (NULL-ended; a directory that is not
 * tracefs is skipped) with a kprobe_events this process may write, opened: 0
 * or -errno (-ENOENT: none has it). Events of drainstats that died without
 * removing theirs (SIGKILL) are removed first.
 */
int kretprobes__open(const char *const *dirs, struct kretprobes **out);
/* The tracefs mount in use. */
const char *kretprobes__dir(const struct kretprobes *k);
/*
 * A kretprobe event on func with maxactive instances (0: the kernel's
 * default), prog attached to it: its link, or NULL with errno set.
 */
struct bpf_link *kretprobes__attach(struct kretprobes *k, const struct bpf_program *prog,
				    const char *func, unsigned int maxactive);
/* The events made so far. */
int kretprobes__count(const struct kretprobes *k);
/* The kernel's count of the calls whose exit the events missed (kprobe_profile): 0 or -errno. */
int kretprobes__missed(const struct kretprobes *k, __u64 *missed);
/*
 * The events removed, once the links attached to them are destroyed (the
 * kernel refuses to remove an event in use), and k freed.
 */
void kretprobes__free(struct kretprobes *k);
/*
 * From a signal handler, just before the process dies: the links' and events'
 * fds closed, and the events removed. Only async-signal-safe calls.
 */
void kretprobes__abandon(void);

/*
 * A PMU kretprobe link's misses, where the kernel tells them (bpf_link_info,
 * Linux 6.7 and later): 0, -EOPNOTSUPP where it does not, -ENOENT if link is
 * no kretprobe, or -errno.
 */
int kretprobes__link_missed(const struct bpf_link *link, __u64 *missed);

#endif /* KRETPROBE_H */
