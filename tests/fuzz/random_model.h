/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A report model with random contents for the writers: arbitrary bytes in every
 * name a kernel module or a task can choose (sites, frames, comms), random counts
 * and histograms (their buckets in the model's arena, as model__build() leaves
 * them), and the totals model__build() derives from them. Counts stay below
 * 2^40 and sums below 2^56, so adding up rows never wraps. Then, drawn last so
 * that older inputs still give the same model before them, 0..4 drains in
 * flight (their works and frames in the arena too) with any ages, threshold,
 * CPUs below DRAINSTAT_MAX_CPUS and priorities, and their derived totals;
 * then any wall time (0 in the inputs from before it); last of all --by's key,
 * with any cgroup path and id per row (the comm key alone in the inputs from
 * before it).
 */
#ifndef FUZZ_RANDOM_MODEL_H
#define FUZZ_RANDOM_MODEL_H

#include "harness.h"
#include "model.h"

struct random_model {
	struct model m;
	char mode[32], kernel[64], blind_spots[64], filter_comm[64], filter_cgroup[64];
};

/*
 * Fills rm from b. plain_info: the mode, kernel and blind spots as drainstat
 * makes them (the filters are random bytes either way); else random bytes too.
 * 0 or -ENOMEM.
 */
int random_model__fill(struct random_model *rm, struct bytes *b, bool plain_info);
void random_model__free(struct random_model *rm);

#endif /* FUZZ_RANDOM_MODEL_H */
