#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Pods and containers named (issue 41, part 2). No Kubernetes node can run
# here: this test is an EMULATION of a node's layout, made by hand, of the
# two things drainstat reads.
#   - The kubelet's cgroups under the cgroup v2 mount. Pod A as the systemd
#     driver names them: kubepods.slice/kubepods-burstable.slice/
#     kubepods-burstable-pod<uid, '-' as '_'>.slice/cri-containerd-<64 hex>.scope;
#     pod B as the cgroupfs driver does: kubepods/besteffort/pod<uid>/<64 hex>
#     (a bare id: containerd's or cri-dockerd's, the runtime not said). Plain
#     mkdir in cgroup v2: no systemd, no kubelet, no runtime manages them.
#   - The kubelet's pod log directories, /var/log/pods/<namespace>_<pod>_<uid>/,
#     root's, the one place drainstat takes pod names from (src/podnames.c;
#     the root is not configurable in the binary, so the real one is used:
#     made if missing, and only what the test made is removed).
# drainforce forces its drains in each pod's container cgroup (its pid in
# cgroup.procs). drainstat must name pod, namespace, container and QoS class:
# in the text (the CGROUP column pod/<ns>/<pod>; the -T log's
# "(pod/<ns>/<pod>, containerd:<short id>)" after the whole path, which
# carries the QoS slice), in the JSON (pod, namespace, pod_uid, container,
# runtime, qos) and in the --prom-cgroup=pod export (namespace, pod, qos
# labels; no container label), each row's drains held to bpftrace's count for
# that cgroup (its cgroup builtin). Then, where the test made /var/log/pods,
# that directory made group-writable: no pod named anywhere, the rest kept.
# Every cgroup and directory made is removed at the end, on a failure or a
# signal too (trap).
set -u
. tests/host/lib.sh

N=40
COMM=dspod$$
COMM=${COMM:0:15}
MNT=$(cgroup2_mount)
if [ -z "$MNT" ]; then
	skip "pods" "no cgroup v2 hierarchy mounted"
	exit 0
fi
# a real node's cgroups are not the test's to touch
for top in kubepods.slice kubepods; do
	if [ -e "$MNT/$top" ]; then
		skip "pods" "$MNT/$top exists: a real kubelet's, not emulated over"
		exit 0
	fi
done
LOGS=/var/log/pods
if [ -e "$LOGS" ] && { [ "$(stat -c %u "$LOGS")" != 0 ] || [ -n "$(find "$LOGS" -maxdepth 0 -perm /022)" ]; }; then
	skip "pods" "$LOGS exists and is not root's alone: drainstat would not read it"
	exit 0
fi

MADE_DIRS=()  # cgroups and directories made, in order: removed in reverse
MADE_LOGS=    # 1 when the test made $LOGS itself

# made DIR: mkdir DIR (its parent exists), remembered for the cleanup.
made() {
	mkdir "$1" && MADE_DIRS+=("$1")
}

# shellcheck disable=SC2317 # run by the trap
cleanup_pods() {
	local i
	for ((i = ${#MADE_DIRS[@]} - 1; i >= 0; i--)); do
		cgroup_remove "${MADE_DIRS[i]}"
	done
	MADE_DIRS=()
	[ -z "$MADE_LOGS" ] || rmdir "$LOGS"
	MADE_LOGS=
	cleanup_test
}
trap cleanup_pods EXIT
# killed (a timeout, a ^C): still through the EXIT trap
trap 'exit 130' INT
trap 'exit 143' TERM

hex64() {
	od -An -N32 -tx1 /dev/urandom | tr -d ' \n'
}

NS=dstest-$$
UID_A=$(cat /proc/sys/kernel/random/uuid)
UID_B=$(cat /proc/sys/kernel/random/uuid)
ID_A=$(hex64)
ID_B=$(hex64)
# pod A, systemd driver, burstable; pod B, cgroupfs driver, besteffort
POD_A=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_A//-/_}.slice
CG_A=$POD_A/cri-containerd-$ID_A.scope
POD_B=/kubepods/besteffort/pod$UID_B
CG_B=$POD_B/$ID_B

make_layout() {
	local d
	if [ ! -e "$LOGS" ]; then
		mkdir -m 0755 "$LOGS" || return 1
		MADE_LOGS=1
	fi
	made "$LOGS/${NS}_web-0_$UID_A" && made "$LOGS/${NS}_batch-1_$UID_B" || return 1
	for d in /kubepods.slice /kubepods.slice/kubepods-burstable.slice "$POD_A" "$CG_A" \
		/kubepods /kubepods/besteffort "$POD_B" "$CG_B"; do
		made "$MNT$d" || return 1
	done
}
if ! make_layout; then
	fail "the kubelet's layout emulated under $MNT and $LOGS" "mkdir failed"
	exit 1
fi
pass "the kubelet's layout emulated under $MNT and $LOGS (systemd and cgroupfs drivers)"
INODE_A=$(stat -c %i "$MNT$CG_A")
INODE_B=$(stat -c %i "$MNT$CG_B")

start_in_cgroup "$MNT$CG_A" "$COMM" "$TMPDIR_TEST/data-a" || fail "drainforce in pod A starts" "no comm $COMM"
WL_A=$WL FD_A=$DONE_FD
start_in_cgroup "$MNT$CG_B" "$COMM" "$TMPDIR_TEST/data-b" || fail "drainforce in pod B starts" "no comm $COMM"
WL_B=$WL FD_B=$DONE_FD
expect_eq "drainforce A in pod A's container" "$(cgroup_of $WL_A)" "$CG_A"
expect_eq "drainforce B in pod B's container" "$(cgroup_of $WL_B)" "$CG_B"
TRUTH_BY=cgroup truth_start "comm:$COMM" "$TMPDIR_TEST/truth" ||
	fail "bpftrace counts the drains per cgroup" "$(tail -n 3 "$TMPDIR_TEST/truth.err")"
DS_PIDS=()
start_attached "$TMPDIR_TEST/text" -c "$COMM" -T 1us
start_attached "$TMPDIR_TEST/json" -c "$COMM" -j
PROM=$TMPDIR_TEST/pods.prom
start_attached "$TMPDIR_TEST/prom" -c "$COMM" --prom "$PROM" --prom-cgroup=pod 0.5
wait_until 30 test -e "$PROM"
kill -USR1 $WL_A $WL_B
read -r -t 120 _ <&"$FD_A" || fail "drainforce A ends its rounds" "not in 120 s"
read -r -t 120 _ <&"$FD_B" || fail "drainforce B ends its rounds" "not in 120 s"
truth_stop || fail "bpftrace counted the drains" "$(tail -n 3 "$TMPDIR_TEST/truth.err")"
# one export more, the last, at the end
sleep 1
stop_attached

OUT=$TMPDIR_TEST/text
check_mode "$OUT"
MODE=$(mode_of "$OUT")
TRUTH_A=$(truth_drains "$MODE" "$INODE_A")
TRUTH_B=$(truth_drains "$MODE" "$INODE_B")
check "bpftrace counted drains in both pods ($TRUTH_A, $TRUTH_B)" \
	test "$TRUTH_A" -gt 0 -a "$TRUTH_B" -gt 0

# text: the CGROUP column names the pod; the -T log the pod and the container
# after the whole path (its QoS slice in it)
expect_eq "text: drains of pod/$NS/web-0 = bpftrace's" \
	"$(site_field "$OUT" generic_fadvise "$COMM" 3 "pod/$NS/web-0")" "$TRUTH_A"
expect_eq "text: drains of pod/$NS/batch-1 = bpftrace's" \
	"$(site_field "$OUT" generic_fadvise "$COMM" 3 "pod/$NS/batch-1")" "$TRUTH_B"
# slow_log_events CGROUP NAMES: the -T log's events of a caller in CGROUP, named NAMES
slow_log_events() {
	grep -c "SLOW DRAIN pid [0-9]* tid [0-9]* ($COMM, cgroup $(re_quote "$1") ($(re_quote "$2"))) on CPU" "$OUT"
}
expect_range "-T: pod A's drains logged as (pod/$NS/web-0, containerd:${ID_A:0:12}), burstable in the path" \
	"$(slow_log_events "$CG_A" "pod/$NS/web-0, containerd:${ID_A:0:12}")" 1 "$TRUTH_A"
expect_range "-T: pod B's drains logged as (pod/$NS/batch-1, ${ID_B:0:12}), besteffort in the path" \
	"$(slow_log_events "$CG_B" "pod/$NS/batch-1, ${ID_B:0:12}")" 1 "$TRUTH_B"

# JSON: the row of each container's cgroup, every key of the pod and the container
JSON=$TMPDIR_TEST/json
check "-j: valid JSON" jq -e . "$JSON" >/dev/null
# json_row CGROUP: the generic_fadvise rows of COMM in CGROUP, the keys that name them, one line each
json_row() {
	jq -r --arg c "$1" --arg comm "$COMM" '.sites[]
		| select(.site == "generic_fadvise" and .comm == $comm and .cgroup == $c)
		| [.cgroup_id, .pod, .namespace, .pod_uid, .container, .runtime, .qos, .drains]
		| map(tostring) | join(" ")' "$JSON"
}
expect_eq "-j: pod A's row: cgroup_id, pod, namespace, pod_uid, container, runtime, qos, drains (bpftrace's)" \
	"$(json_row "$CG_A")" "$INODE_A web-0 $NS $UID_A $ID_A containerd burstable $TRUTH_A"
expect_eq "-j: pod B's row: the same, its runtime not said by a bare id" \
	"$(json_row "$CG_B")" "$INODE_B batch-1 $NS $UID_B $ID_B null besteffort $TRUTH_B"

# --prom-cgroup=pod: the pod's slice as the cgroup label, and its names and class
check "--prom-cgroup=pod: promtool check metrics" bash -c "promtool check metrics < '$PROM'"
series() {
	echo "drainstat_drains_total{site=\"generic_fadvise\",cgroup=\"$1\",namespace=\"$NS\",pod=\"$2\",qos=\"$3\"}"
}
expect_eq "--prom-cgroup=pod: drains of $NS/web-0 (burstable) = bpftrace's" \
	"$(prom_value "$PROM" "$(series "$POD_A" web-0 burstable)")" "$TRUTH_A"
expect_eq "--prom-cgroup=pod: drains of $NS/batch-1 (besteffort) = bpftrace's" \
	"$(prom_value "$PROM" "$(series "$POD_B" batch-1 besteffort)")" "$TRUTH_B"
expect_eq "--prom-cgroup=pod: every drains series names its pod" \
	"$(grep -c "^drainstat_drains_total{.*,namespace=\"$NS\",pod=" "$PROM")" \
	"$(grep -c '^drainstat_drains_total{' "$PROM")"
check "--prom-cgroup=pod: no container label" bash -c "! grep -q 'container=' '$PROM'"

[ -n "${VERBOSE:-}" ] && cat "$TMPDIR_TEST/text" "$PROM"
{
	kill -KILL $WL_A $WL_B
	wait $WL_A $WL_B
} 2>/dev/null

# /var/log/pods writable by its group is not to be trusted (src/podnames.c):
# no pod named in the text, the JSON or the export, which keep what the path
# says (the container, the pod's UID and class). Only where the test made the
# directory: a real one's mode is not the test's to change.
if [ -n "$MADE_LOGS" ]; then
	chmod g+w "$LOGS"
	N=10
	start_in_cgroup "$MNT$CG_A" "$COMM" "$TMPDIR_TEST/data-a" ||
		fail "drainforce in pod A starts again" "no comm $COMM"
	WL_A=$WL FD_A=$DONE_FD
	DS_PIDS=()
	start_attached "$TMPDIR_TEST/text-untrusted" -c "$COMM"
	start_attached "$TMPDIR_TEST/json-untrusted" -c "$COMM" -j
	PROM=$TMPDIR_TEST/untrusted.prom
	start_attached "$TMPDIR_TEST/prom-untrusted" -c "$COMM" --prom "$PROM" --prom-cgroup=pod 0.5
	wait_until 30 test -e "$PROM"
	kill -USR1 $WL_A
	read -r -t 120 _ <&"$FD_A" || fail "drainforce A ends its rounds again" "not in 120 s"
	sleep 1
	stop_attached
	chmod g-w "$LOGS"
	expect_at_least "/var/log/pods group-writable: text: pod A's row by its container" \
		"$(site_field "$TMPDIR_TEST/text-untrusted" generic_fadvise "$COMM" 3 \
			"containerd:${ID_A:0:12}")" 1
	JSON=$TMPDIR_TEST/json-untrusted
	expect_eq "/var/log/pods group-writable: -j: pod and namespace null, the rest from the path" \
		"$(json_row "$CG_A" | cut -d ' ' -f 1-7)" \
		"$INODE_A null null $UID_A $ID_A containerd burstable"
	expect_at_least "/var/log/pods group-writable: --prom-cgroup=pod: pod A's series by qos alone" \
		"$(prom_value "$PROM" \
			"drainstat_drains_total{site=\"generic_fadvise\",cgroup=\"$POD_A\",qos=\"burstable\"}")" 1
	check "/var/log/pods group-writable: --prom-cgroup=pod: no namespace or pod label" \
		bash -c "! grep -qE '(namespace|pod)=' '$PROM'"
	{
		kill -KILL $WL_A
		wait $WL_A
	} 2>/dev/null
fi
cleanup_pods
trap - EXIT
check "every cgroup the test made is removed" \
	test ! -e "$MNT/kubepods.slice" -a ! -e "$MNT/kubepods"
check "every pod log directory the test made is removed" \
	bash -c "! ls -d $LOGS/${NS}_* 2>/dev/null | grep -q ."
exit 0
