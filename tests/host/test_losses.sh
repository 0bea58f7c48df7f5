#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Losses are counted and shown in every output, and the run goes on: a site map
# too small for the sites (--max-sites), a stack map too small for the stacks
# (--max-stacks), a slow-drain ring buffer nobody reads (drainstat stopped).
set -u
. tests/host/lib.sh

# lost_text FILE NAME: the "lost NAME: n" line's n; lost_json FILE NAME; lost_prom FILE NAME
lost_text() { awk -v n="$2:" '$1 == "lost" && $2 == n { print $3 }' "$1" | tail -1; }
lost_json() { jq -s --arg n "$2" '.[-1].counters[$n]' "$1"; }
lost_prom() { prom_value "$1" "drainstat_lost_events_total{reason=\"$2\"}"; }
summary_lost() { grep -o ', [0-9]* lost$' "$1" | tail -1 | tr -dc 0-9; }

# 10 comms (10 sites) into a site map of 3, in all three outputs
N=60
K=10
# progress: the reports begun on stdout (text and -j), or the export's mtime
progress() {
	if [ -n "${PROM:-}" ]; then
		stat -c %.9Y "$PROM"
	else
		grep -c -e ' drains, ' -e '^{"time"' "$OUT"
	fi
}
sites_run() {
	local before _
	FORCE_ARGS="-k $K" forced_drains dsfull --max-sites 3 "$@" || return 1
	# two more intervals: the run goes on after the losses (-j and text: a
	# report more on stdout each; --prom: the export written again)
	for _ in 1 2; do
		before=$(progress)
		wait_until 10 output_isnt "$before" progress
	done
	kill -INT "$DS_PID"
	wait_drainstat
}
OUT=$TMPDIR_TEST/sites.txt
sites_run 0.5
expect_eq "--max-sites 3, text: exit 0" "$DS_RC" 0
# the rows of the SITE and LOCAL tables, whatever their comm: where local
# drains are seen (full, kprobe), a site's lru_add_drain() calls take a slot
# of the same map (seen on 6.1: one SITE row and two LOCAL rows); not the
# lines under a row (a slow site's)
SHOWN=$(awk '/^(SITE|LOCAL) / { t = $1; cg = $3 == "CGROUP"; next } /^$/ { t = "" }
	t && /^[^ ]/ { print t, $1, $2, cg ? $3 : "" }' "$OUT" |
	sort -u | wc -l)
expect_eq "--max-sites 3, text: 3 sites kept" "$SHOWN" 3
TOTAL=$(awk '/^[0-9:]+  .*drains/ { n++ } $2 == "site_map_full:" { s += $3 } END { print s + 0 }' "$OUT")
check "--max-sites 3, text: site_map_full counted ($TOTAL)" test "$TOTAL" -gt 0
check "--max-sites 3, text: in the summary's lost" test "$(grep -c ', [1-9][0-9]* lost$' "$OUT")" -ge 1
check "--max-sites 3, text: reports after the losses" test "$(grep -c ' drains, ' "$OUT")" -ge 3
OUT=$TMPDIR_TEST/sites.json
sites_run -j 0.5
expect_eq "--max-sites 3, JSON: exit 0" "$DS_RC" 0
check "--max-sites 3, JSON: site_map_full counted" \
	test "$(jq -s '[.[].counters.site_map_full] | add' "$OUT")" -gt 0
check "--max-sites 3, JSON: in lost" test "$(jq -s '[.[].lost] | add' "$OUT")" -gt 0
OUT=$TMPDIR_TEST/sites.stdout
PROM=$TMPDIR_TEST/sites.prom
sites_run --prom "$PROM" 0.5
expect_eq "--max-sites 3, export: exit 0" "$DS_RC" 0
check "--max-sites 3, export: site_map_full counted" test "$(lost_prom "$PROM" site_map_full)" -gt 0
check "--max-sites 3, export: promtool check metrics" bash -c "promtool check metrics <'$PROM'"

# two kernel stacks (fadvise and compaction) into a stack map of 1 bucket. A
# drain queues works only to CPUs with folios batched, and tracepoint mode sees
# a drain by its works: the compaction runs on CPU 1 after trigger batched
# pages on CPU 0 (-a 0 -f), so that its drain queues a work there, every time.
OUT=$TMPDIR_TEST/stacks
# (-j prints no header: start_drainstat would wait for one in vain)
# On a busy system (Debian's khugepaged, systemd) another task can flush CPU
# 0's batch first: that compaction queues no work, and tracepoint mode cannot
# see it. And trigger's batching thread drops the file first (DONTNEED), which
# drains too where another CPU still holds some of its folios. bpftrace counts
# the trigger's drains as the mode sees them: the compact_memory writes and
# the DONTNEED calls inside which a work was queued, or the drain entries.
"$DRAINSTAT" -v -j --max-stacks 1 >"$OUT" 2>"$OUT.err" &
DS_PID=$!
wait_attached "$OUT.err"
truth_start comm:dsstk2 "$TMPDIR_TEST/truth.stk" "write,$(truth_fadvise)" ||
	fail "bpftrace counts the compactions' drains" "$(tail -n 3 "$TMPDIR_TEST/truth.stk.err")"
for _ in 1 2 3 4 5; do
	"$WORKLOADS/drainforce" -n 4 -c dsstk "$TMPDIR_TEST/data"
	taskset -c 1 "$WORKLOADS/trigger" -c dsstk2 -n 2 -a 0 -f "$TMPDIR_TEST/data2" compact
done
sleep 0.3
truth_stop || fail "bpftrace counted the compactions' drains" "$(tail -n 3 "$TRUTH_OUT.err")"
kill -INT $DS_PID
wait_drainstat
expect_eq "--max-stacks 1: exit 0" "$DS_RC" 0
check "--max-stacks 1: stack_lost counted ($(lost_json "$OUT" stack_lost))" test "$(lost_json "$OUT" stack_lost)" -gt 0
check "--max-stacks 1: the drains still counted" \
	test "$(jq '[.sites[] | select(.comm == "dsstk") | .drains] | add' "$OUT")" -ge 16
expect_range "--max-stacks 1: the trigger's 10 compactions and 10 DONTNEEDs drained, most compactions with a work (bpftrace)" \
	"$(truth_count queued)" 5 20
expect_eq "--max-stacks 1: the trigger's drains counted, their stacks lost (= bpftrace's)" \
	"$(jq '[.sites[] | select(.comm == "dsstk2") | .drains] | add' "$OUT")" \
	"$(truth_drains "$(mode_noted "$OUT.err")")"

# the slow-drain ring buffer overruns while drainstat is stopped: every drain is
# an event printed or one counted as slow_lost (256 KiB hold about 570 events)
N=1500
OUT=$TMPDIR_TEST/ring
"$WORKLOADS/drainforce" -W -n $N -c dsring "$TMPDIR_TEST/data" &
WL=$!
wait_comm $WL dsring
start_drainstat "$OUT" -T 1ns -p $WL
kill -STOP "$DS_PID"
kill -USR1 $WL
wait $WL
kill -CONT "$DS_PID"
# -p: the workload has exited: the run ends once the ring buffer is read, or
# what is left in it counted as slow_unread past the end's 100 ms (230 of the
# 570 in Debian's 6.1 under QEMU)
wait_drainstat
expect_eq "ring buffer overrun: exit 0" "$DS_RC" 0
EVENTS=$(grep -c '^[0-9:.]* SLOW DRAIN ' "$OUT")
SLOW_LOST=$(lost_text "$OUT" slow_lost)
SLOW_UNREAD=$(lost_text "$OUT" slow_unread)
DRAINS=$(site_field "$OUT" generic_fadvise dsring 3)
check "ring buffer overrun: slow_lost counted (${SLOW_LOST:-0}; $EVENTS events printed, ${SLOW_UNREAD:-0} not read)" \
	test "${SLOW_LOST:-0}" -gt 0
expect_eq "ring buffer overrun: events printed + slow_lost + slow_unread = drains" \
	$((EVENTS + ${SLOW_LOST:-0} + ${SLOW_UNREAD:-0})) "$DRAINS"
expect_eq "ring buffer overrun: in the summary's lost" "$(summary_lost "$OUT")" \
	$((${SLOW_LOST:-0} + ${SLOW_UNREAD:-0}))
exit 0
