/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel symbols from a kallsyms file: address to symbol for stack frames. The
 * few addresses setup needs by name come from the loaded table (ksyms__find()),
 * or from ksyms__scan() where they are needed before it is loaded.
 */
#ifndef KSYMS_H
#define KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct ksyms;

struct ksym {
	const char *name;
	const char *module; /* NULL for vmlinux */
	__u64 addr;
	char type; /* the kallsyms type letter: 't', 'T', 'd', ... */
};

/*
 * Reads a kallsyms-format file (usually "/proc/kallsyms"). Returns 0 or -errno:
 * -ENOENT if it does not exist, -EPERM if every address in it is 0 (kptr_restrict
 * hides them), -EINVAL if it holds no parseable symbol. Malformed lines, lines with
 * address 0 and the __pfx_ symbols over function padding (6.2+) are skipped.
 */
int ksyms__load(const char *path, struct ksyms **out);
void ksyms__free(struct ksyms *ks);

/*
 * The text symbol (t, T, w, W) containing addr: the one with the greatest start
 * <= addr; the first listed in the file among several at that address. NULL if
 * addr is below the first text symbol. Symbols have no size, so addresses past the
 * end of the last one still map to it.
 */
const struct ksym *ksyms__map_addr(const struct ksyms *ks, __u64 addr);
/*
 * The function a stack frame's address is in: as ksyms__map_addr(), but NULL
 * past 1 MiB from the symbol (no function is that long: the address is in
 * nothing kallsyms listed when it was read, such as a BPF program loaded since).
 */
const struct ksym *ksyms__map_frame(const struct ksyms *ks, __u64 addr);

/*
 * True for a symbol in BPF code: kallsyms lists JITed programs, trampolines and
 * dispatchers as symbols of the module "bpf".
 */
bool ksyms__is_bpf(const struct ksym *sym);

/*
 * A kernel stack's frames in kernel code: ips[0, nr) mapped by ksyms__map_frame()
 * into syms, less the frames in BPF code, which only instrumentation puts on a
 * stack (a tracer's programs and trampolines, its own or another tool's). An
 * address past a BPF symbol is in BPF code too, and not in that symbol: a
 * trampoline made or a program loaded since the table was read (BPF code is
 * allocated in packs shared by programs and trampolines). kept gets the
 * addresses of the frames kept. Returns how many, at most nr.
 */
int ksyms__map_stack(const struct ksyms *ks, const __u64 *ips, int nr, __u64 *kept,
		     const struct ksym **syms);

/*
 * The symbol named name: text symbols first, then the first listed. NULL if
 * none. It searches every symbol: for tests and one-off lookups.
 */
const struct ksym *ksyms__get_symbol(const struct ksyms *ks, const char *name);

/*
 * The addresses of a few vmlinux text symbols, read off path without loading
 * the rest: the scan stops once each of the n names is found, which for
 * symbols early in the file is a fraction of a full load. The last either of
 * them (0: none) are alternatives, of which a kernel has one: the first found
 * is enough, and those after it in the file stay unread. addrs[i] is 0 for a
 * name not found. 0, or -errno as ksyms__load().
 */
int ksyms__scan(const char *path, const char *const *names, __u64 *addrs, size_t n, size_t either);

/*
 * The same addresses from a loaded table, where one is: addrs[i] is the first
 * vmlinux text symbol named names[i] in the file, 0 for a name not found.
 * Returns how many were found. One pass over the table.
 */
size_t ksyms__find(const struct ksyms *ks, const char *const *names, __u64 *addrs, size_t n);

/* How many symbols were loaded, of every type (no __pfx_ ones). */
size_t ksyms__count(const struct ksyms *ks);

#endif /* KSYMS_H */
