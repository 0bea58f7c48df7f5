#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# drainstat started in the middle of a drain storm (issue 39), run in /mnt by
# tests/vm/run, $VM_KERNEL naming the kernel: three loops of short-lived
# drainforce processes, each forcing one remote drain and exiting, as a field
# report's three shells did. drainstat starts into the storm in full and kprobe
# modes, STARTS times each (tracepoint mode too, once); the storm stops 3 s
# after drainstat is tracing, and drainstat's report 2 s later must hold no
# drain in flight: nothing stuck, nothing waiting, whatever the hooks missed
# while they attached. Each drain the check of the callers ended (a phantom)
# is counted, never silent, and counted as lost: in full mode as
# phantoms_attaching where it began before drainstat's last attach returned
# (the attach replaced the trampoline under it and dropped its fexit), else
# as phantoms_ended, which no start may have: the end of a call seen to begin
# is attached before its begin.
#
#   storm.sh [STARTS]   STARTS a mode, default 3 (make check-long: 10)
#
# Payload: drainstat, drainforce (static), common.sh, this file.
set -u
cd /mnt || exit 1
. ./common.sh

DRAINSTAT=/mnt/drainstat # read by start_drainstat
STARTS=${1:-3}
STOP=/tmp/storm.stop

# storm_loop I: one-drain processes, pages batched on CPU I and dropped from
# CPU I+1, until $STOP exists
storm_loop() {
	local i=$1
	while [ ! -e $STOP ]; do
		./drainforce -n 1 -a "$i" -b $((i + 1)) -c storm "/mnt/storm$i" >/dev/null 2>&1
	done
}

storm_start() {
	local i
	rm -f $STOP
	STORM_PIDS=()
	for i in 0 1 2; do
		storm_loop $i &
		STORM_PIDS+=($!)
	done
}

storm_stop() {
	touch $STOP
	wait "${STORM_PIDS[@]}"
}

# json_num FILE KEY: the first number under "KEY" in FILE
json_num() {
	grep -o "\"$2\":[0-9]*" "$1" | head -1 | cut -d: -f2
}

# storm_start_once MODE N: drainstat started 1 s into a storm, stopped 2 s
# after the storm ends; its one report holds nothing in flight.
storm_start_once() {
	local mode=$1 n=$2 out=/tmp/storm-$1-$2 inflight stuck phantoms attaching drains
	storm_start
	sleep 1
	"$DRAINSTAT" --json -v --mode="$mode" -c storm >"$out" 2>"$out.err" &
	DS_PID=$!
	if ! wait_attached "$out.err"; then
		storm_stop
		kill -KILL "$DS_PID"
		fail "$mode start $n: drainstat starts into the storm" "$(tail -c 300 "$out.err")"
		return
	fi
	sleep 3
	storm_stop
	sleep 2
	kill -INT "$DS_PID"
	wait_drainstat
	inflight=$(json_num "$out" drains_in_flight)
	stuck=$(json_num "$out" stuck_drains)
	phantoms=$(json_num "$out" phantoms_ended)
	attaching=$(json_num "$out" phantoms_attaching)
	drains=$(json_num "$out" drains)
	echo "# $mode start $n: ${drains:-?} drains, ${phantoms:-?} phantoms ended," \
		"${attaching:-?} phantoms attaching, ${inflight:-?} in flight"
	expect_eq "$mode start $n: exit 0" "$DS_RC" 0
	[ "$mode" = auto ] || expect_eq "$mode start $n: the mode" \
		"$(sed -n 's/^drainstat: mode \([a-z]*\):.*/\1/p' "$out.err")" "$mode"
	check "$mode start $n: the storm's drains traced" test "${drains:-0}" -gt 0
	expect_eq "$mode start $n: no drain in flight 2 s after the storm" "$inflight" 0
	expect_eq "$mode start $n: none stuck" "$stuck" 0
	# each end is attached before its begin: a call seen to begin is seen to
	# end, unless drainstat's own attach dropped it (full mode's trampolines)
	expect_eq "$mode start $n: no end missed while attaching (phantoms_ended)" "$phantoms" 0
	[ "$mode" = full ] || expect_eq "$mode start $n: no phantoms_attaching" "$attaching" 0
	if [ "$inflight" != 0 ]; then
		grep -o '"in_flight":.*' "$out" | head -c 1500
		echo
	fi
}

for mode in full kprobe; do
	for n in $(seq "$STARTS"); do
		storm_start_once $mode "$n"
	done
done
storm_start_once tracepoint 1
