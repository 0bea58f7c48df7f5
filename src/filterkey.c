// SPDX-License-Identifier: GPL-2.0
/*
 * The filter key into the workqueue programs' instructions (filterkey.h). An
 * immediate, not a map value: the filter path then loads nothing but the
 * work's function (doc/performance-history.md, "The filter's compare").
 * libbpf has not relocated the instructions before the load, so an ld_imm64
 * with no relocation of its own is the compiler's, and its count stays.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "drainstat.h"
#include "filterkey.h"

/* An ld_imm64 of value: its first half's opcode, no source register (a plain constant). */
static bool is_imm64(const struct bpf_insn *insn, __u64 value)
{
	return insn[0].code == (BPF_LD | BPF_DW | BPF_IMM) && insn[0].src_reg == 0 &&
	       (__u32)insn[0].imm == (__u32)value && (__u32)insn[1].imm == (__u32)(value >> 32);
}

int filterkey__set(struct bpf_program *prog, __u64 addr)
{
	size_t n = bpf_program__insn_cnt(prog), i, found = 0;
	struct bpf_insn *insns;
	int err;

	insns = malloc(n * sizeof(*insns));
	if (!insns)
		return -ENOMEM;
	memcpy(insns, bpf_program__insns(prog), n * sizeof(*insns));
	for (i = 0; i + 1 < n; i++) {
		if (!is_imm64(&insns[i], FILTER_KEY_MARK))
			continue;
		insns[i].imm = (__s32)(__u32)addr;
		insns[i + 1].imm = (__s32)(__u32)(addr >> 32);
		found++;
		i++;
	}
	err = found ? bpf_program__set_insns(prog, insns, n) : -ENOENT;
	free(insns);
	return err;
}
