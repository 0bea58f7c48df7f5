#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The truth test: drainforce forces exactly N remote drains (one work each on
# CPU A, queued by a thread on CPU B) under a distinctive comm; drainstat must
# count exactly that, at site generic_fadvise, with CPU A as the victim.
set -u
. tests/host/lib.sh
PROGS_BEFORE=$(prog_ids)

N=200
CPU_A=0
CPU_B=1
COMM=dsforce$$
COMM=${COMM:0:15}
FILE=$TMPDIR_TEST/data
OUT=$TMPDIR_TEST/report

"$WORKLOADS/drainforce" -W -n $N -a $CPU_A -b $CPU_B -c "$COMM" "$FILE" &
WL=$!
if ! wait_comm $WL "$COMM"; then
	fail "drainforce setup" "comm $COMM never appeared"
	exit 1
fi
truth_begin $WL
# on CPU B, its setup done before the rounds (forced_drains in lib.sh says why)
taskset -c $CPU_B "$DRAINSTAT" -v -p $WL >"$OUT" 2>"$OUT.err" &
DS_PID=$!
if ! wait_attached "$OUT.err"; then
	fail "drainstat starts" "$(cat "$OUT.err")"
	exit 1
fi
MINE=$(new_prog_ids "$PROGS_BEFORE")
kill -USR1 $WL
wait $WL
check "drainforce ran $N rounds" test $? -eq 0
truth_end
# -p: the process's exit ends the run as -d would, with the final report
wait_drainstat
expect_eq "exit status after the traced process exited" $DS_RC 0
check "the traced process's exit is said" grep -q "^drainstat: process $WL exited$" "$OUT.err"

drains=$(site_field "$OUT" generic_fadvise "$COMM" 3)
works=$(site_field "$OUT" generic_fadvise "$COMM" 4)
self=$(site_field "$OUT" generic_fadvise "$COMM" 5)
# drains, escalations and CPU 0's works are three independent measurements and
# agree exactly, and with bpftrace's count: not always N, since a round needs
# no drain when other folios flush CPU 0's batch first (tests/lib/truth.sh)
expect_eq "drains at generic_fadvise for $COMM = bpftrace's" "$drains" "$TRUTH_DRAINS"
# every work to a CPU but B is remote: CPU A's one per drain, and on a machine
# with more than two CPUs a few to CPUs whose batches held something else
expect_eq "remote works (works - self) = the works of CPUs but $CPU_B" "$((works - self))" \
	"$(cpu_works_but "$OUT" $CPU_B)"
# self works happen when CPU B batched something new meanwhile (doc/design.md)
victim_b=$(cpu_field "$OUT" $CPU_B 3)
expect_eq "self works all on CPU $CPU_B" "${victim_b:-0}" "$self"

# dispatch and run: above 0, below a second
for f in 6 7 8 9 10 11; do
	ns=$(to_ns "$(site_field "$OUT" generic_fadvise "$COMM" $f)")
	expect_range "site latency column $f in (0, 1s)" "$ns" 1 999999999
done
dispatch_p50=$(to_ns "$(site_field "$OUT" generic_fadvise "$COMM" 6)")
run_p50=$(to_ns "$(site_field "$OUT" generic_fadvise "$COMM" 9)")
wait_p50=$(to_ns "$(site_field "$OUT" generic_fadvise "$COMM" 12)")
# wait covers a work's dispatch and run; 15% for the histogram's rounding
expect_range "wait p50 >= dispatch p50 + run p50" "$wait_p50" \
	$(((dispatch_p50 + run_p50) * 85 / 100)) 999999999

expect_eq "fadvise DONTNEED calls" "$(fadvise_field "$OUT" dontneed 2)" $N
expect_eq "fadvise escalations = drains" "$(fadvise_field "$OUT" dontneed 3)" "$drains"

expect_eq "victim CPU $CPU_A works = drains" "$(cpu_field "$OUT" $CPU_A 2)" "$drains"
expect_eq "victim CPU $CPU_A self works" "$(cpu_field "$OUT" $CPU_A 3)" 0
expect_eq "nothing lost" "$(awk '/drains, .* works/ { print $(NF-1); exit }' "$OUT")" 0
# every drain came in a DONTNEED call of one comm: its first walks the stack,
# the others take that site (-s and -T walk each: tests/host/test_slow.sh).
# Where entry is visible, so do the local drains, one walk per caller:
# generic_fadvise's and the few of the process's exit.
if [ "$(mode_of "$OUT")" = tracepoint ]; then
	expect_eq "kernel stacks walked for $drains drains" "$(stack_walks "$OUT.err")" 1
else
	expect_range "kernel stacks walked for $drains drains and their local drains" \
		"$(stack_walks "$OUT.err")" 2 8
fi
check_mode "$OUT"
check "no BPF program left attached" progs_gone "$MINE"
[ -n "${VERBOSE:-}" ] && cat "$OUT"
exit 0
