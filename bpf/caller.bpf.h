/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding a drain's caller without a stack walk: the return address into it,
 * read at a kprobe (past a kretprobe's trampoline) or from an fentry's
 * trampoline frame. Per architecture (x86, arm64) and per kernel, each
 * layout with the kernel it was seen on; a layout not recognized gives 0,
 * and a stack walk, never a wrong caller.
 */
#ifndef CALLER_BPF_H
#define CALLER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "globals.bpf.h"

/*
 * A kretprobe on the same function that ran before the kprobe (drainstat's
 * own, bpftrace's) has put its trampoline in the return address's place and
 * parked the return address in an instance on the task's list: the newest
 * that holds a real one is this call's. The kernel's own types, as far as
 * that walk reads them: a kernel has kretprobe instances or rethook nodes
 * (CONFIG_KRETPROBE_ON_RETHOOK), and one built without kprobes (this
 * project's CI kernel) neither, so they are matched by CO-RE, not taken from
 * vmlinux.h.
 */
struct task_struct___kretprobes {
	struct llist_head kretprobe_instances;
	struct llist_head rethooks;
} __attribute__((preserve_access_index));

struct kretprobe_instance___parked {
	struct llist_node llist;
	void *ret_addr;
} __attribute__((preserve_access_index));

struct rethook_node___parked {
	struct llist_node llist;
	unsigned long ret_addr;
} __attribute__((preserve_access_index));

static __always_inline bool trampoline(__u64 ip)
{
	return ip == kretprobe_trampoline || ip == rethook_trampoline;
}

/*
 * Two walks, one a kind of list, each behind the CO-RE checks of the fields it
 * reads: a kernel on rethook has kretprobe_instances too, but its instances
 * hold no list of their own, and the verifier refuses a read of a field the
 * kernel lacks unless it can tell the read is never reached.
 */
static __always_inline __u64 parked_in_kretprobe_instance(void)
{
	struct task_struct___kretprobes *task = (void *)bpf_get_current_task();
	struct kretprobe_instance___parked *ri;
	struct llist_node *node;
	__u64 ret_ip;
	int i;

	if (!bpf_core_field_exists(task->kretprobe_instances) ||
	    !bpf_core_field_exists(struct kretprobe_instance___parked, llist) ||
	    !bpf_core_field_exists(struct kretprobe_instance___parked, ret_addr))
		return 0;
	node = BPF_CORE_READ(task, kretprobe_instances.first);
	for (i = 0; i < 4 && node; i++) {
		ri =
		    (void *)node - bpf_core_field_offset(struct kretprobe_instance___parked, llist);
		ret_ip = (__u64)BPF_CORE_READ(ri, ret_addr);
		if (!trampoline(ret_ip))
			return ret_ip;
		node = BPF_CORE_READ(node, next);
	}
	return 0;
}

static __always_inline __u64 parked_in_rethook_node(void)
{
	struct task_struct___kretprobes *task = (void *)bpf_get_current_task();
	struct rethook_node___parked *rh;
	struct llist_node *node;
	__u64 ret_ip;
	int i;

	if (!bpf_core_field_exists(task->rethooks) ||
	    !bpf_core_field_exists(struct rethook_node___parked, llist) ||
	    !bpf_core_field_exists(struct rethook_node___parked, ret_addr))
		return 0;
	node = BPF_CORE_READ(task, rethooks.first);
	for (i = 0; i < 4 && node; i++) {
		rh = (void *)node - bpf_core_field_offset(struct rethook_node___parked, llist);
		ret_ip = BPF_CORE_READ(rh, ret_addr);
		if (!trampoline(ret_ip))
			return ret_ip;
		node = BPF_CORE_READ(node, next);
	}
	return 0;
}

/* A kernel text address: both arches' kernel halves have the top 16 bits set. */
static __always_inline bool kernel_address(__u64 ip)
{
	return ip >> 48 == 0xffff;
}

/*
 * kprobe mode, at a function's entry: the return address into its caller (one
 * read: x86's top of stack, arm64's link register), 0 if unknown.
 */
static __always_inline __u64 kprobe_caller(struct pt_regs *ctx)
{
	__u64 ret_ip = 0;

	/*
	 * Not BPF_KPROBE_READ_RET_IP(): libbpf 1.1's reads memory at the link
	 * register on arm64
	 */
#if defined(__TARGET_ARCH_arm64)
	ret_ip = PT_REGS_RET_CORE(ctx);
#else
	bpf_probe_read_kernel(&ret_ip, sizeof(ret_ip), (void *)PT_REGS_SP(ctx));
#endif
	if (ret_ip && ret_ip == rethook_trampoline)
		ret_ip = parked_in_rethook_node();
	else if (ret_ip && ret_ip == kretprobe_trampoline)
		ret_ip = parked_in_kretprobe_instance();
	return kernel_address(ret_ip) ? ret_ip : 0;
}

/*
 * site_key.ret_ip at a kprobe: arm64's caller, which a stack taken at a
 * function's first instruction lacks (its frame record is not pushed yet);
 * x86's stack has it.
 */
static __always_inline __u64 kprobe_ret_ip(__u64 caller)
{
#if defined(__TARGET_ARCH_arm64)
	return caller;
#else
	return 0;
#endif
}

/*
 * Slots of the trampoline frame from the traced function's return address to
 * its caller's: x86 pushes the caller's return address right above (call,
 * call); arm64 pushes a frame record (FP, x9: the caller's LR) above the
 * trampoline's own (FP, LR into the function).
 */
#if defined(__TARGET_ARCH_arm64)
#define TRAMP_CALLER_SLOT 2
#else
#define TRAMP_CALLER_SLOT 1
#endif
#define TRAMP_SLOTS 12

/*
 * x86: true if ip is a return address from a direct call of func: a call rel32
 * (e8) ends at ip and lands on func, or in the padding before it (call depth
 * tracking's thunks).
 */
static __always_inline bool returns_from_call_of(__u64 ip, __u64 func)
{
#if defined(__TARGET_ARCH_x86)
	__u8 insn[5];
	__s32 rel;

	if (!kernel_address(ip) || bpf_probe_read_kernel(insn, sizeof(insn), (void *)(ip - 5)))
		return false;
	__builtin_memcpy(&rel, &insn[1], sizeof(rel));
	return insn[0] == 0xe8 && func - (ip + rel) <= 16;
#else
	return false;
#endif
}

/*
 * full mode, at fentry: the return address into the caller, 0 if not found.
 * The trampoline keeps the function's arguments (ctx) below its return value
 * (with an fexit, as here), saved registers and its frame record, whose return
 * address points just past the patched call at the function's start. That
 * slot is looked for within TRAMP_SLOTS above the arguments, so that a
 * trampoline laid out otherwise (another kernel) gives 0 and a stack walk,
 * never a wrong caller. On 7.3 (Debian's 7.3.4) x86 enters the trampoline by a
 * jmp, not a call: no slot points into the function, and the frame record's
 * return address is the caller's (retval, rbp, then generic_fadvise+0x229 at
 * lru_add_drain_all's fentry). Without that slot, the first slot that is the
 * return address of a call of the function is the caller: any other value
 * fails that test, and a caller that calls it indirectly gets a stack walk.
 */
static __always_inline __u64 fentry_caller(void *ctx, int nr_args)
{
	__u64 slots[TRAMP_SLOTS + TRAMP_CALLER_SLOT];
	__u64 func = bpf_get_func_ip(ctx);
	int i;

	if (bpf_probe_read_kernel(slots, sizeof(slots), (__u64 *)ctx + nr_args))
		return 0;
	for (i = 0; i < TRAMP_SLOTS; i++) {
		if (slots[i] - func < 32 && slots[i] > func) {
			__u64 caller = slots[i + TRAMP_CALLER_SLOT];

			return kernel_address(caller) ? caller : 0;
		}
	}
	for (i = 0; i < TRAMP_SLOTS; i++) {
		if (returns_from_call_of(slots[i], func))
			return slots[i];
	}
	return 0;
}

#endif /* CALLER_BPF_H */
