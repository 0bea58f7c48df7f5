#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The per-program cost of drainstat's fentry/fexit and kprobe programs, for hosts
# that refuse them: run in /mnt of a QEMU VM by bench/run, through tests/vm/run.
# Payload (static): drainstat, drainforce, empty_loader, bpfstats, this file and
# bench/lib.sh (stop, wait_line).
#
# For each of full and kprobe mode: empty_loader attaches the empty programs on the
# same drain hooks, then drainstat; drainforce forces ROUNDS drains (each one
# lru_add_drain_all() and local lru_add_drain() calls); bpfstats snapshots before
# and after give each program's run_time_ns / run_cnt, drainstat_X beside empty_X.
# Failures are FAIL lines, which tests/vm/run counts.
set -u
cd /mnt || exit 1
. ./lib.sh

ROUNDS=${BENCH_VM_ROUNDS:-300}
DATA=/mnt/data
TMP=/tmp/bench
DS_PID=
EL_PID=
WL_PID=

fail() {
	echo "FAIL $*"
	exit 1
}

cleanup() {
	if [ -n "$WL_PID" ]; then kill -KILL "$WL_PID" 2>/dev/null; fi
	if [ -n "$DS_PID" ]; then stop "$DS_PID"; fi
	if [ -n "$EL_PID" ]; then stop "$EL_PID"; fi
}
trap cleanup EXIT

# wait_comm PID COMM: drainforce takes COMM once its setup and warm-up are done.
wait_comm() {
	local _
	for _ in $(seq 400); do
		[ "$(cat /proc/"$1"/comm 2>/dev/null)" = "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

# delta A B: "name run_time_ns run_cnt" from snapshot A to B
delta() {
	awk 'NR == FNR { t[$1] = $2; c[$1] = $3; next } { print $1, $2 - t[$1], $3 - c[$1] }' "$1" "$2"
}

# cost_table MODE: each drain hook's drainstat_X beside empty_X, from a delta on stdin
cost_table() {
	awk -v mode="$1" '
	{ t[$1] = $2; c[$1] = $3 }
	$1 ~ /^drainstat_(fentry|fexit|kprobe|kretprobe)_/ && $3 > 0 { order[n++] = $1 }
	function per(p) { return c[p] ? t[p] / c[p] : 0 }
	END {
		for (i = 0; i < n; i++) {
			d = order[i]
			e = d
			sub(/^drainstat_/, "empty_", e)
			printf "  %-7s %-30s %8d %10.0f", mode, d, c[d], per(d)
			if (per(e))
				printf " %8d %10.0f %7.2fx\n", c[e], per(e), per(d) / per(e)
			else
				printf " %8s %10s %8s\n", "-", "-", "-"
		}
	}'
}

# measure MODE: the drain hooks of MODE, ROUNDS forced drains; the table rows
measure() {
	local mode=$1 comm=bench-$1
	./empty_loader --"$mode" >"$TMP/el.out" 2>"$TMP/el.err" &
	EL_PID=$!
	wait_line "$TMP/el.out" '^attached' "$EL_PID" 20 ||
		fail "$mode: empty_loader did not attach: $(head -c 300 "$TMP/el.err")"
	./drainforce -W -n "$ROUNDS" -c "$comm" "$DATA" >"$TMP/df.out" 2>&1 &
	WL_PID=$!
	wait_comm "$WL_PID" "$comm" || fail "$mode: drainforce setup: $(head -c 300 "$TMP/df.out")"
	./drainstat --mode="$mode" >"$TMP/ds.out" 2>"$TMP/ds.err" &
	DS_PID=$!
	wait_line "$TMP/ds.out" '^drainstat ' "$DS_PID" 20 ||
		fail "$mode: drainstat did not start: $(head -c 300 "$TMP/ds.err")"

	./bpfstats >"$TMP/s0" || fail "$mode: bpfstats"
	kill -USR1 "$WL_PID"
	wait "$WL_PID" || fail "$mode: drainforce exited $?: $(head -c 300 "$TMP/df.out")"
	WL_PID=
	./bpfstats >"$TMP/s1" || fail "$mode: bpfstats"

	stop "$DS_PID" || fail "$mode: drainstat exited $?: $(head -c 300 "$TMP/ds.err")"
	DS_PID=
	stop "$EL_PID" || fail "$mode: empty_loader exited $?: $(head -c 300 "$TMP/el.err")"
	EL_PID=
	delta "$TMP/s0" "$TMP/s1" | cost_table "$mode"
}

main() {
	mkdir -p "$TMP"
	echo 1 >/proc/sys/kernel/bpf_stats_enabled || fail "cannot enable kernel.bpf_stats_enabled"
	echo "kernel $(uname -r) in QEMU TCG, $(grep -c ^processor /proc/cpuinfo) CPUs;" \
		"drainforce -n $ROUNDS in each mode"
	echo "ns/event = run_time_ns / run_cnt (kernel.bpf_stats_enabled); empty programs attached"
	echo "first, drainstat second, on the same functions. TCG emulates the CPU: its times are"
	echo "not real times (several times slower, unevenly): read the RATIO, not the ns."
	printf '  %-7s %-30s %8s %10s %8s %10s %8s\n' \
		"MODE" "PROGRAM" "EVENTS" "NS/EVENT" "EMPTY EV" "EMPTY NS" "RATIO"
	measure full
	measure kprobe
}

main "$@"
