#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The slow-drain log (-T) on the live kernel: with a threshold every forced
# drain passes, there is exactly one event per drain, each with its target
# CPU, the kernel stack down from the drain and the user stack from libc; with
# a threshold none passes, there is none. Each names its caller's cgroup.
set -u
. tests/host/lib.sh

N=40
COMM=dsslow$$
COMM=${COMM:0:15}

slow_run() {
	local out=$1 threshold=$2 wl
	"$WORKLOADS/drainforce" -W -n $N -c "$COMM" "$TMPDIR_TEST/data" &
	wl=$!
	wait_comm $wl "$COMM" || return 1
	WL_CG=$(cgroup_of $wl)
	truth_begin $wl
	start_drainstat "$out" -v -T "$threshold" -p $wl || return 1
	kill -USR1 $wl
	wait $wl
	OUT=$out truth_end
	# -p: the workload's exit ends the run (SIGINT if it has not yet)
	sleep 0.3
	kill -INT "$DS_PID" 2>/dev/null
	wait_drainstat
}

OUT=$TMPDIR_TEST/slow
slow_run "$OUT" 1ns
expect_eq "-T 1ns: exit 0" "$DS_RC" 0
# with its caller's cgroup where a cgroup v2 hierarchy is mounted
events=$(grep -c "SLOW DRAIN pid [0-9]* tid [0-9]* ($COMM$(cgroup_text_re "$WL_CG")) on CPU 1: wait " "$OUT")
drains=$(site_field "$OUT" generic_fadvise "$COMM" 3)
expect_eq "-T 1ns: one event per drain" "$events" "$drains"
expect_eq "-T 1ns: the forced drains, bpftrace's count" "$events" "$TRUTH_DRAINS"
expect_eq "-T 1ns: each names its target CPU 0" "$(grep -c '^    CPU 0: dispatch .*, run ' "$OUT")" "$events"
expect_eq "-T 1ns: each has the kernel stack from the drain" \
	"$(grep -c '^      generic_fadvise+0x' "$OUT")" "$events"
expect_eq "-T 1ns: each user stack starts in libc's posix_fadvise, named" \
	"$(grep -A1 '^    user stack:' "$OUT" | grep -c 'posix_fadvise[0-9]*+0x[0-9a-f]* (libc\.so\.6)')" "$events"
check "-T 1ns: nothing lost" grep -q ", 0 lost$" "$OUT"
# -T takes each drain's own stack, where a run without it walks one per caller;
# where entry is visible, each local drain's too (generic_fadvise's, one a call)
if [ "$(mode_of "$OUT")" = tracepoint ]; then
	expect_eq "-T 1ns: a kernel stack walked per drain" "$(stack_walks "$OUT.err")" "$drains"
else
	expect_range "-T 1ns: a kernel stack walked per drain and local drain" \
		"$(stack_walks "$OUT.err")" "$((2 * drains))" "$((2 * N + 10))"
fi

slow_run "$OUT" 10s
check "-T 10s: no event" bash -c "! grep -q 'SLOW DRAIN' '$OUT'"
exit 0
