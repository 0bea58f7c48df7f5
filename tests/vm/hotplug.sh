#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A CPU with a pending drain work taken offline (issue 39), run in /mnt by
# tests/vm/run (4 vCPUs): stuckdrain holds a drain's work on CPU 3 behind a
# SCHED_FIFO spinner (RT throttling and the fair server off, tests/lib/stuck.sh),
# then CPU 3 goes offline, as an operator may do to a CPU held by a spinner.
# Seen on 6.12: the offline waits for the spin too (its steps wait for CPU
# 3's kworkers, starved alike, even with cpuhp/3 at FIFO 99), and CPU 3's
# kworker runs the work there: the drain and the offline end together. (A
# work queued once the pool is unbound runs on any CPU: drainstat finds its
# slot by its address, tests/bpf/test_progs.c's test_ended_elsewhere.)
# drainstat's reports after the hold, in every mode: nothing in flight, the
# drain counted with its wait, no work unseen, no phantom (no end missed).
#
# Payload: drainstat, stuckdrain (static), common.sh, stuck.sh, this file.
set -u
cd /mnt || exit 1
. ./common.sh
. ./stuck.sh
stuck_vm_params

CPU=/sys/devices/system/cpu/cpu3/online

# json_num FILE KEY: the number under "KEY" in FILE's last report (one a line)
json_num() {
	tail -1 "$1" | grep -o "\"$2\":[0-9]*" | head -1 | cut -d: -f2
}

# json_sum FILE KEY: KEY's numbers summed over FILE's reports (each counts its interval)
json_sum() {
	grep -o "\"$2\":[0-9]*" "$1" | cut -d: -f2 | awk '{ n += $1 } END { print n + 0 }'
}

hotplug_run() {
	local mode=$1 out=/tmp/hotplug-$1 wl n
	"$DRAINSTAT" --json -v --mode="$mode" -c hp-drop 0.5 >"$out" 2>"$out.err" &
	DS_PID=$!
	if ! wait_attached "$out.err"; then
		fail "$mode: drainstat starts" "$(tail -c 300 "$out.err")"
		kill -KILL $DS_PID
		return
	fi
	# the spinner holds CPU 3 for 6 s; the dropper on CPU 0 drains it
	$STUCKDRAIN -a 3 -b 0 -c hp-drop -t 6000 "$STUCK_DATA" >"$out.wl" 2>&1 &
	wl=$!
	if ! wait_until 20 grep -q '"state":"works_pending"' "$out"; then
		fail "$mode: the drain held on CPU 3" "$(tail -c 600 "$out")"
	fi
	echo 0 >$CPU
	expect_eq "$mode: CPU 3 offline" "$(cat $CPU)" 0
	wait $wl
	# one interval for the report, and the spin's rest on its new CPU
	sleep 1.5
	kill -INT $DS_PID
	wait_drainstat
	echo 1 >$CPU
	n=$(grep -c '"in_flight"' "$out")
	echo "# $mode: $n reports; work_unseen $(json_sum "$out" work_unseen)," \
		"phantoms_ended $(json_sum "$out" phantoms_ended); the work ran on CPU" \
		"$(grep -o '"cpus":\[{"cpu":[0-9]*' "$out" | tail -1 | grep -o '[0-9]*$')"
	expect_eq "$mode: exit 0" "$DS_RC" 0
	expect_eq "$mode: nothing in flight after the hold" "$(json_num "$out" drains_in_flight)" 0
	expect_eq "$mode: no work unseen" \
		"$(json_sum "$out" work_unseen)" 0
	expect_eq "$mode: no phantom (no end missed)" \
		"$(json_sum "$out" phantoms_ended)+$(json_sum "$out" phantoms_attaching)" 0+0
	check "$mode: the drain counted, with its wait" \
		grep -q '"comm":"hp-drop".*"wait_ns":{"count":1,' "$out"
}

trap 'stuck_restore; echo 1 >$CPU 2>/dev/null' EXIT
check "RT throttling off" stuck_setup
for mode in full kprobe tracepoint; do
	hotplug_run $mode
done
exit 0
