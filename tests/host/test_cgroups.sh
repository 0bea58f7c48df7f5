#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The caller's cgroup (--by): drainforce run in two cgroup v2 directories at
# once under one comm gives two rows told apart by the cgroup, in the text,
# the JSON and the export, each held to bpftrace's count for its cgroup (its
# cgroup builtin); --by=comm merges them into one row of their sum. Then a
# hundred short-lived cgroups, one drain each, cost no more export series than
# --prom-sites allows, and every drain stays counted. A drain held stuck (as
# test_stuck holds it) while its spinner is in a cgroup of its own: the drain
# in flight names its caller's cgroup, and its pending CPU the spinner's.
set -u
. tests/host/lib.sh
. tests/lib/stuck.sh

N=60
COMM=dscg$$
COMM=${COMM:0:15}
MNT=$(cgroup2_mount)
if [ -z "$MNT" ]; then
	skip "cgroups" "no cgroup v2 hierarchy mounted"
	exit 0
fi
CGROUPS=()

# new_cgroup NAME: a cgroup v2 directory under the mount, removed at the end.
new_cgroup() {
	mkdir "$MNT/$1" && CGROUPS+=("$1")
}

# drop_cgroup NAME: its tasks killed, then the directory removed.
drop_cgroup() {
	cgroup_remove "$MNT/$1"
}

# shellcheck disable=SC2317 # run by the trap
cleanup_cgroups() {
	local i
	stuck_restore
	# children before their parents
	for ((i = ${#CGROUPS[@]} - 1; i >= 0; i--)); do
		drop_cgroup "${CGROUPS[i]}"
	done
	cleanup_test
}
trap cleanup_cgroups EXIT

# start_workload NAME FILE: drainforce -W under COMM, moved into cgroup NAME
# before its rounds (start_in_cgroup).
start_workload() {
	start_in_cgroup "$MNT/$1" "$COMM" "$2"
}

# run_drainstat NAME ARGS...: drainstat -v -c COMM ARGS (start_attached), its
# output in $TMPDIR_TEST/NAME.
run_drainstat() {
	start_attached "$TMPDIR_TEST/$1" -c "$COMM" "${@:2}"
}

CG_A=dstest$$-a
CG_B=dstest$$-b
if ! new_cgroup $CG_A || ! new_cgroup $CG_B; then
	fail "cgroups made under $MNT" "mkdir failed"
	exit 1
fi
ID_A=$(stat -c %i "$MNT/$CG_A")
ID_B=$(stat -c %i "$MNT/$CG_B")
start_workload $CG_A "$TMPDIR_TEST/data-a" || fail "drainforce in $CG_A starts" "no comm $COMM"
WL_A=$WL FD_A=$DONE_FD
start_workload $CG_B "$TMPDIR_TEST/data-b" || fail "drainforce in $CG_B starts" "no comm $COMM"
WL_B=$WL FD_B=$DONE_FD
expect_eq "drainforce A in its cgroup" "$(sed -n 's/^0:://p' /proc/$WL_A/cgroup)" "/$CG_A"
TRUTH_BY=cgroup truth_start "comm:$COMM" "$TMPDIR_TEST/truth" ||
	fail "bpftrace counts the drains per cgroup" "$(tail -n 3 "$TMPDIR_TEST/truth.err")"
DS_PIDS=()
run_drainstat text
run_drainstat json -j
PROM=$TMPDIR_TEST/cgroups.prom
run_drainstat prom --prom "$PROM" 0.5
wait_until 30 test -e "$PROM"
run_drainstat bycomm --by=comm
kill -USR1 $WL_A $WL_B
read -r -t 120 _ <&"$FD_A" || fail "drainforce A ends its rounds" "not in 120 s"
read -r -t 120 _ <&"$FD_B" || fail "drainforce B ends its rounds" "not in 120 s"
truth_stop || fail "bpftrace counted the drains" "$(tail -n 3 "$TMPDIR_TEST/truth.err")"
# one export more, the last, at the end
sleep 1
stop_attached
kill -KILL $WL_A $WL_B
wait $WL_A $WL_B 2>/dev/null
drop_cgroup $CG_A
drop_cgroup $CG_B
check "the cgroups are removed" test ! -e "$MNT/$CG_A" -a ! -e "$MNT/$CG_B"

OUT=$TMPDIR_TEST/text
check_mode "$OUT"
MODE=$(mode_of "$OUT")
TRUTH_A=$(truth_drains "$MODE" "$ID_A")
TRUTH_B=$(truth_drains "$MODE" "$ID_B")
check "bpftrace counted drains in both cgroups ($TRUTH_A, $TRUTH_B)" \
	test "$TRUTH_A" -gt 0 -a "$TRUTH_B" -gt 0
check "text: a CGROUP column" grep -q "^SITE .* COMM .* CGROUP " "$OUT"
check "-j: valid JSON" jq -e . "$TMPDIR_TEST/json" >/dev/null
check_cgroup_row "$OUT" "$TMPDIR_TEST/json" "$COMM" "/$CG_A" "$ID_A" "$TRUTH_A"
check_cgroup_row "$OUT" "$TMPDIR_TEST/json" "$COMM" "/$CG_B" "$ID_B" "$TRUTH_B"

check "--prom: promtool check metrics" bash -c "promtool check metrics < '$PROM'"
series() { echo "drainstat_drains_total{site=\"generic_fadvise\",cgroup=\"/$1\"}"; }
expect_eq "--prom: drains in /$CG_A = bpftrace's" "$(prom_value "$PROM" "$(series $CG_A)")" "$TRUTH_A"
expect_eq "--prom: drains in /$CG_B = bpftrace's" "$(prom_value "$PROM" "$(series $CG_B)")" "$TRUTH_B"

OUT=$TMPDIR_TEST/bycomm
check "--by=comm: no CGROUP column" bash -c "! grep -q CGROUP '$OUT'"
expect_eq "--by=comm: one row of $COMM at generic_fadvise" \
	"$(site_rows "$OUT" generic_fadvise "$COMM")" 1
expect_eq "--by=comm: its drains, the sum of the two cgroups'" \
	"$(site_field "$OUT" generic_fadvise "$COMM" 3)" $((TRUTH_A + TRUTH_B))

# A hundred short-lived cgroups, one drainforce round each: the export keeps
# --prom-sites (5) series of drains, the rest in other, and loses no drain.
COMM=dscgs$$
COMM=${COMM:0:15}
N=1
OUT=$TMPDIR_TEST/many
PROM=$TMPDIR_TEST/many.prom
TRUTH_BY='' truth_start "comm:$COMM" "$TMPDIR_TEST/truth-many" ||
	fail "bpftrace counts the short-lived cgroups' drains" "$(tail -n 3 "$TMPDIR_TEST/truth-many.err")"
DS_PIDS=()
run_drainstat many --prom "$PROM" --prom-sites 5 0.5
wait_until 30 test -e "$PROM"
for i in $(seq 100); do
	CG=dstest$$-s$i
	new_cgroup "$CG" || break
	start_workload "$CG" "$TMPDIR_TEST/data-s" || break
	kill -USR1 $WL
	read -r -t 60 _ <&"$DONE_FD"
	exec {DONE_FD}<&-
	rm -f "$TMPDIR_TEST/$CG.done"
	kill -KILL $WL
	wait $WL 2>/dev/null
	drop_cgroup "$CG"
done
expect_eq "100 short-lived cgroups made and removed" "$i" 100
truth_stop || fail "bpftrace counted the short-lived cgroups' drains" "$(tail -n 3 "$TMPDIR_TEST/truth-many.err")"
sleep 1
DS_PID=${DS_PIDS[0]}
kill -INT "$DS_PID"
wait_drainstat
expect_eq "100 cgroups: exit 0" "$DS_RC" 0
check "100 cgroups: promtool check metrics" bash -c "promtool check metrics < '$PROM'"
SERIES=$(grep -c '^drainstat_drains_total{' "$PROM")
expect_range "100 cgroups: drains series within --prom-sites 5 and other" "$SERIES" 1 6
expect_eq "100 cgroups: every drain counted (bpftrace's)" \
	"$(prom_sum "$PROM" drainstat_drains_total)" "$(truth_drains "$MODE")"
# In flight: tests/lib/stuck.sh's held drain, its spinner a process of its own
# (stuckdrain -X) in a cgroup apart from the dropper's and the waiter's. The
# text, JSON and -T name the caller's cgroup on its line and the spinner's on
# the pending CPU's.
stuck_machine_params "$WORKLOADS/stuckdrain" "$TMPDIR_TEST/stuck.data"
CALLER_CG=dstest$$-caller
SPIN_CG=dstest$$-spinner
# shellcheck disable=SC2317 # run by stuck_run
place_apart() {
	echo "$1" >"$MNT/$CALLER_CG/cgroup.procs" &&
		stuck_spinner_tid "$1" >"$MNT/$SPIN_CG/cgroup.procs"
}
if new_cgroup $CALLER_CG && new_cgroup $SPIN_CG && check "in flight: RT throttling off" stuck_setup; then
	STUCK_ARGS=-X STUCK_PLACE=place_apart stuck_run "$TMPDIR_TEST/stuck" \
		--stuck ${STUCK_MS}ms -T ${T_MS}ms 0.2 || fail "in flight: stuck run (text)"
	expect_eq "in flight: the dropper's cgroup" "$STUCK_CG" "/$CALLER_CG"
	expect_eq "in flight: the spinner's cgroup" "$STUCK_SPIN_CG" "/$SPIN_CG"
	check "in flight: the spinner a process of its own" test "$SPIN_PID" != "$PID"
	stuck_check_text "$(mode_of "$TMPDIR_TEST/stuck")" "$TMPDIR_TEST/stuck"
	STUCK_ARGS=-X STUCK_PLACE=place_apart stuck_run "$TMPDIR_TEST/stuck.json" \
		--stuck ${STUCK_MS}ms -T ${T_MS}ms -j 0.2 || fail "in flight: stuck run (json)"
	stuck_check_json "$(mode_of "$TMPDIR_TEST/stuck")" "$TMPDIR_TEST/stuck.json"
	stuck_restore
	drop_cgroup $SPIN_CG && drop_cgroup $CALLER_CG
else
	fail "in flight: two cgroups and RT throttling off"
fi

# No cgroup v2 hierarchy: here its mounts hidden in a mount namespace of
# drainstat's own. The comm keys the sites; said when --by asks for the
# cgroup, under -v only by default.
no_v2() {
	local mounts
	mounts=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
		/proc/self/mountinfo)
	# shellcheck disable=SC2016 # the inner shell expands them
	unshare -m --propagation private sh -c 'for m in $1; do umount -l "$m" || exit 99; done
		shift; exec "$@"' sh "$mounts" "$DRAINSTAT" -d 0.3 "$@" >"$OUT" 2>"$OUT.err"
}
NO_V2='drainstat: no cgroup v2 hierarchy mounted: sites are keyed by comm alone'
OUT=$TMPDIR_TEST/nov2
no_v2 --by=cgroup
expect_eq "no cgroup v2, --by=cgroup: exit 0" $? 0
expect_eq "no cgroup v2, --by=cgroup: one line on stderr" "$(cat "$OUT.err")" "$NO_V2"
no_v2 -j
expect_eq "no cgroup v2, by default: exit 0" $? 0
expect_eq "no cgroup v2, by default: nothing on stderr" "$(cat "$OUT.err")" ""
check "no cgroup v2: the JSON's cgroup_id 0 (no site: none to show)" \
	jq -e '[.sites[] | select(.cgroup_id != 0)] | length == 0' "$OUT" >/dev/null
no_v2 -v
check "no cgroup v2, by default: said under -v" grep -qx -- "$NO_V2" "$OUT.err"
left=$(find "$MNT" -maxdepth 1 -name "dstest$$-*" | wc -l)
expect_eq "no test cgroup left" "$left" 0
[ -n "${VERBOSE:-}" ] && cat "$TMPDIR_TEST/text" "$PROM"
exit 0
