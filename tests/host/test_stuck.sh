#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A drain seen while it is stuck. stuckdrain batches pages on CPU 1, then
# spins there as SCHED_FIFO 50 with RT throttling off: the DONTNEED of its
# dropper on CPU 0 drains, and the drain's work on CPU 1 cannot start until
# the spinner stops or the fair server (6.12 and later; debugfs may refuse to
# turn it off, as lockdown does here) lets CFS run, after about 950 ms. A
# waiter drains 200 ms later and waits for the drain mutex behind it. Each
# output must show, within one interval of the --stuck threshold: the stuck
# drain, its caller, CPU 1, the spinner's comm, pid, tid and policy, and
# where the drain entry is seen, the waiter on the mutex; then the drain with
# its real wait once the spinner stops. The spin stays short (1.5 s) so that
# the machine stays healthy.
set -u
. tests/host/lib.sh

SPIN_MS=1500
COMM=dsstuck$$
COMM=${COMM:0:15}
SPIN=dsspin$$
SPIN=${SPIN:0:15}
WAITER=dswait$$
WAITER=${WAITER:0:15}

RT_RUNTIME=/proc/sys/kernel/sched_rt_runtime_us
OLD_RT=$(cat $RT_RUNTIME)
DEBUGFS_MOUNTED=1
mountpoint -q /sys/kernel/debug || DEBUGFS_MOUNTED=0
declare -A FAIR_SERVER
restore() {
	local f
	echo "$OLD_RT" >$RT_RUNTIME
	for f in "${!FAIR_SERVER[@]}"; do
		echo "${FAIR_SERVER[$f]}" >"$f" 2>/dev/null
	done
	[ $DEBUGFS_MOUNTED = 1 ] || umount /sys/kernel/debug 2>/dev/null
	cleanup_test
}
trap restore EXIT

# RT throttling off, and the fair server where debugfs lets us
throttling_off() {
	local f v
	echo -1 >$RT_RUNTIME || return 1
	[ $DEBUGFS_MOUNTED = 1 ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	for f in /sys/kernel/debug/sched/fair_server/cpu*/runtime; do
		v=$(cat "$f" 2>/dev/null) || continue
		FAIR_SERVER[$f]=$v
		echo 0 >"$f" 2>/dev/null
	done
	return 0
}

# stuck_run ARGS...: drainstat ARGS -p <stuckdrain> on CPU 0 (never on the
# spinner's CPU) around one stuck drain, into $OUT, $OUT.err and $OUT.wl (the
# workload's facts). poll_export, if set, runs until the workload ends.
stuck_run() {
	local wl poller=
	# a fair server that served CFS under the last spin runs on in its 1 s
	# period, and would cut the next spin's hold short: let the period end
	sleep 1.5
	"$WORKLOADS/stuckdrain" -W -m -t $SPIN_MS -a 1 -b 0 -c "$COMM" -S "$SPIN" -w "$WAITER" \
		"$TMPDIR_TEST/data" >"$OUT.wl" 2>&1 &
	wl=$!
	wait_comm $wl "$COMM" || return 1
	taskset -c 0 "$DRAINSTAT" -v "$@" -p $wl >"$OUT" 2>"$OUT.err" &
	DS_PID=$!
	wait_attached "$OUT.err" || return 1
	if [ -n "${POLL:-}" ]; then
		$POLL &
		poller=$!
	fi
	kill -USR1 $wl
	wait $wl
	[ -n "$poller" ] && wait $poller
	sleep 0.5
	kill -INT "$DS_PID"
	wait_drainstat
}

jq_ok() { jq -e "$@" >/dev/null; }

fact() {
	awk -v k="$1" '$1 == k { print $2 }' "$OUT.wl"
}

check "RT throttling off" throttling_off

# --- text: reports every 200 ms, stuck at 300 ms, the -T log at 400 ms
OUT=$TMPDIR_TEST/text
stuck_run --stuck 300ms -T 400ms 0.2
expect_eq "text: exit 0" "$DS_RC" 0
MODE=$(mode_of "$OUT")
PID=$(sed -n 's/^pid //p' "$OUT.wl")
DROPPER=$(fact dropper_tid)
SPINNER=$(fact spinner_tid)
WAITER_TID=$(fact waiter_tid)
WAIT_MS=$(fact dropper_wait_ms)
expect_range "the workload's drain was held (ms)" "$WAIT_MS" 500 $((SPIN_MS + 200))
[ "${WAIT_MS:-0}" -lt 500 ] && mkdir -p /tmp/sf.$$ && cp $OUT* /tmp/sf.$$/

drain_line="^  $COMM pid $PID tid $DROPPER on CPU 0, site generic_fadvise: in flight [0-9.]*[mun]*s, works pending"
cpu_line="^    CPU 1: pending [0-9.]*[mun]*s; runs $SPIN pid $PID tid $SPINNER, FIFO 50, for [0-9.]*[mun]*s"
# the reports (not the -T events) from the first that says STUCK
awk '/^STUCK: /,0' "$OUT" | grep -v 'DRAIN IN FLIGHT' >"$OUT.stuck"
check "text: a report opens with the stuck drain" \
	grep -q "^STUCK: [12] drains\? in flight over 300ms (the oldest " "$OUT.stuck"
first_age=$(grep -m1 "$drain_line" "$OUT.stuck" | sed 's/.* in flight \([^,]*\),.*/\1/')
# within one interval (200 ms) of the threshold, and the scheduling of a loaded CI machine
expect_range "text: stuck first shown 300-600 ms in flight (ms)" \
	"$(($(to_ns "$first_age") / 1000000))" 300 600
check "text: the caller, its site and its pending work" grep -q "$drain_line" "$OUT.stuck"
check "text: CPU 1, the spinner's comm, pid, tid, FIFO 50" grep -q "$cpu_line" "$OUT.stuck"
line=$(grep -m1 "$cpu_line" "$OUT.stuck")
running=$(echo "$line" | sed 's/.*, for \([^ ]*\).*/\1/')
# (the fair server, which lockdown may keep on, can run other CFS tasks in
# its 50 ms and the spinner again, not the kworker: "for" may be the shorter)
check "text: the spinner's time there is under its spin ($running)" \
	test "$(to_ns "$running")" -le $((SPIN_MS * 1000000))
waiter_line="^  $WAITER pid $PID tid $WAITER_TID on CPU 0, site generic_fadvise: in flight [0-9.]*[mun]*s, waiting for the drain mutex"
if [ "$MODE" = tracepoint ]; then
	# no drain entry: the waiter on the mutex has queued nothing, and is not seen
	check "text ($MODE): no mutex count" bash -c "! grep -q 'waiting for the drain mutex' '$OUT.stuck'"
else
	check "text ($MODE): the waiter, waiting for the drain mutex" grep -q "$waiter_line" "$OUT.stuck"
	check "text ($MODE): 1 waiting for the drain mutex" \
		grep -q "^STUCK: .*; 1 waiting for the drain mutex$" "$OUT.stuck"
fi
# once the spinner stops: the drain with its real wait, exact or a lower bound
# (the row of the interval it ended in: the others have no wait)
wait_p99=$(awk -v c="$COMM" '$1 == "generic_fadvise" && $2 == c && $13 != "-" { print $13 }' "$OUT")
expect_range "text: the drain's wait once it ended, about the workload's (ms)" \
	"$(($(to_ns "$wait_p99") / 1000000))" $((WAIT_MS * 90 / 100)) $((WAIT_MS * 107 / 100 + 2))
check "text: nothing in flight in the last report" \
	bash -c "! tac '$OUT' | awk '/drains, .* works/ { exit } 1' | grep -q 'IN FLIGHT\|STUCK'"
expect_eq "-T: one in-flight event for the drain" \
	"$(grep -A1 'DRAIN IN FLIGHT over 400ms:' "$OUT" | grep -c "$drain_line")" 1
check "-T: with its pending CPU and the spinner" \
	bash -c "grep -A2 'DRAIN IN FLIGHT over 400ms:' '$OUT' | grep -q '$cpu_line'"
expect_eq "-T: and once more when it ended" \
	"$(grep -c "SLOW DRAIN pid $PID tid $DROPPER ($COMM) on CPU 0: wait " "$OUT")" 1
check "text: nothing lost" bash -c "! grep -q ', [1-9][0-9]* lost$' '$OUT'"

# --- JSON: the in_flight array, and the -T events as NDJSON
OUT=$TMPDIR_TEST/json
stuck_run --stuck 300ms -T 400ms -j 0.2
expect_eq "json: exit 0" "$DS_RC" 0
PID=$(sed -n 's/^pid //p' "$OUT.wl")
DROPPER=$(fact dropper_tid)
SPINNER=$(fact spinner_tid)
check "json: every line is an object" jq_ok -s 'all(type == "object")' "$OUT"
stuck='select(.event == null) | .in_flight[] | select(.stuck and .tid == '"$DROPPER"')'
check "json: a report with the stuck drain, its caller and site" jq_ok -s --arg c "$COMM" \
	"[.[] | $stuck | select(.pid == $PID and .comm == \$c and .site == \"generic_fadvise\" and .state == \"works_pending\" and .caller_cpu == 0)] | length > 0" "$OUT"
check "json: its pending work on CPU 1 with the spinner" jq_ok -s --arg s "$SPIN" \
	"[.[] | $stuck | .works_in_flight[] | select(.state == \"pending\" and .target_cpu == 1 and .running.comm == \$s and .running.pid == $PID and .running.tid == $SPINNER and .running.policy == \"FIFO\" and .running.priority == 50 and .running.running_ns > 0)] | length > 0" "$OUT"
check "json: stuck_drains and the oldest age agree" jq_ok -s \
	'[.[] | select(.event == null and .stuck_drains > 0)] | length > 0 and all(.oldest_drain_in_flight_ns >= .stuck_threshold_ns)' "$OUT"
if [ "$(jq -r -s '.[0].mode' "$OUT")" = tracepoint ]; then
	check "json (tracepoint): mutex_waiters is null" jq_ok -s '[.[] | select(.event == null)] | all(.mutex_waiters == null)' "$OUT"
else
	check "json: the waiter on the mutex" jq_ok -s '[.[] | select(.event == null) | .mutex_waiters] | max == 1' "$OUT"
fi
expect_eq "json -T: one drain_in_flight event for the drain" \
	"$(jq -s "[.[] | select(.event == \"drain_in_flight\" and .drain.tid == $DROPPER and .threshold_ns == 400000000 and .drain.works_in_flight[0].running.comm == \"$SPIN\")] | length" "$OUT")" 1
expect_eq "json -T: one slow_drain event for it" \
	"$(jq -s "[.[] | select(.event == \"slow_drain\" and .tid == $DROPPER and any(.targets[]; .cpu == 1))] | length" "$OUT")" 1

# --- the export: the in-flight gauges while it is stuck, read as node_exporter would
PROM=$TMPDIR_TEST/drains.prom
poll_export() {
	local i
	for i in $(seq 40); do
		[ -f "$PROM" ] && cp "$PROM" "$TMPDIR_TEST/seen.$i.prom"
		sleep 0.05
	done
}
OUT=$TMPDIR_TEST/export
POLL=poll_export stuck_run --stuck 300ms --prom "$PROM" 0.2
expect_eq "export: exit 0" "$DS_RC" 0
max_of() {
	local f
	for f in "$TMPDIR_TEST"/seen.*.prom; do prom_value "$f" "$1"; done | sort -g | tail -1
}
oldest=$(max_of drainstat_oldest_drain_in_flight_seconds)
check "export: drainstat_oldest_drain_in_flight_seconds passed 0.3 ($oldest)" \
	awk -v v="$oldest" 'BEGIN { exit !(v >= 0.3) }'
expect_eq "export: drainstat_drains_in_flight while stuck" "$(max_of drainstat_drains_in_flight)" 1
expect_eq 'export: drainstat_pending_works{cpu="1"}' "$(max_of 'drainstat_pending_works{cpu="1"}')" 1
pending=$(max_of 'drainstat_oldest_pending_work_seconds{cpu="1"}')
check "export: drainstat_oldest_pending_work_seconds{cpu=\"1\"} passed 0.3 ($pending)" \
	awk -v v="$pending" 'BEGIN { exit !(v >= 0.3) }'
expect_eq "export: nothing in flight at the end" "$(prom_value "$PROM" drainstat_drains_in_flight)" 0
if [ "$MODE" != tracepoint ]; then
	expect_eq "export: drainstat_mutex_waiters while stuck" "$(max_of drainstat_mutex_waiters)" 1
fi
exit 0
