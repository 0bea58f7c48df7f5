#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Real containers in the Debian 12 system VM (tests/debvm/run), made by
# Debian 12's own packages with no image registry: a rootful podman container
# (podman 4.3, crun, conmon; `podman run --rootfs DIR --network=none`) and a
# systemd-nspawn machine (`systemd-nspawn -D DIR --machine=drain-box`,
# registered with systemd-machined). Each runs drainforce (the static build:
# the rootfs is a directory holding it, and the os-release file nspawn wants)
# under one comm, and forces its drains at once.
#
# What it proves: drainstat, on the system and kernel a user has and in the
# mode it picks itself, names each container from the cgroup its runtime
# really made (read from /proc, not written by the test): podman's container
# by its id as `podman ps --no-trunc` gives it (JSON "container", runtime
# "podman"; the text's CGROUP column podman:<the 12 hex digits podman ps
# shows>) and the nspawn machine by its name as machinectl lists it, though
# systemd escapes its '-' in the scope's name (JSON "container", runtime
# "nspawn"; the text's nspawn:drain-box). Each container's drains, one row
# each in the text and the JSON, equal bpftrace's count of the kernel's own
# events in that container's cgroup (its builtin cgroup id, the directory's
# inode). The two run different numbers of rounds: counts swapped or merged
# fail. And a drain held by a spinner in the podman container: the in-flight
# view names the container of the task that holds the pending CPU.
# Run last in the system: podman's scope is delegated (Delegate=yes), so
# systemd enables cpuset in the root cgroup from then on, and on 6.1 a task
# moved into a new cgroup loses its CPU pinning (tests/debvm/run).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/common.sh
. tests/lib/truth.sh

DRAINSTAT=$PWD/drainstat
DRAINFORCE=$PWD/build/static/drainforce
COMM=dfcontainer
# the rootfs directories, on the VM's root disk: drainforce's FILE (/data in
# each) must be on a block filesystem, whose page cache it can drop
ROOTS=/var/lib/drainstat-containers
NAME=dspodman
MACHINE=drain-box
ROUNDS_PODMAN=60
ROUNDS_NSPAWN=25
TMP=$(mktemp -d)
START=$SECONDS
DS_PIDS=()

# rootfs DIR: a root for one container: drainforce and an os-release file.
rootfs() {
	mkdir -p "$1/etc" "$1/usr/lib" &&
		cp "$DRAINFORCE" "$1/drainforce" &&
		printf 'ID=drainstat-test\nNAME="drainstat test"\n' >"$1/usr/lib/os-release"
}

# cgroup_path PID: PID's cgroup v2 path, as the host sees it.
cgroup_path() {
	sed -n 's/^0:://p' "/proc/$1/cgroup"
}

# json_row CGROUP FIELD: FIELD of the generic_fadvise rows of COMM in CGROUP,
# space-separated (one value: one row). The JSON writes a backslash of the
# path (systemd's "\x2d" for '-' in a machine's scope) as "\x5c" (man page: -j).
json_row() {
	jq -r --arg comm $COMM --arg cg "${1//\\/\\x5c}" "[.sites[] | select(.site == \"generic_fadvise\" and
		.comm == \$comm and .cgroup == \$cg) | .$2] | map(tostring) | join(\" \")" "$TMP/json"
}

# machine_leader: the nspawn machine's leader pid (drainforce), as machinectl shows it.
machine_leader() {
	machinectl show "$MACHINE" -p Leader --value 2>/dev/null
}

# check_container WHAT ID PATH COLUMN RUNTIME TRUTH: drainstat names the
# container WHAT (its id or name ID, its cgroup PATH) as COLUMN in the text
# and as ID and RUNTIME in the JSON, with TRUTH drains in each.
check_container() {
	local what=$1 id=$2 path=$3 column=$4 runtime=$5 truth=$6
	expect_eq "text: drains of $COMM in $what ($column) = bpftrace's" \
		"$(site_field "$TMP/text" generic_fadvise "$COMM" 3 "$column")" "$truth"
	expect_eq "-j: drains of $COMM in $what = bpftrace's, one row" "$(json_row "$path" drains)" "$truth"
	expect_eq "-j: $what: container" "$(json_row "$path" container)" "$id"
	expect_eq "-j: $what: runtime" "$(json_row "$path" runtime)" "$runtime"
	expect_eq "-j: $what: cgroup_id, its inode" "$(json_row "$path" cgroup_id)" \
		"$(stat -c %i "/sys/fs/cgroup$path")"
}

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	podman rm -f -t 0 "$NAME" >/dev/null 2>&1
	machinectl terminate "$MACHINE" 2>/dev/null
	wait
	rm -rf "$TMP" "$ROOTS"
}
trap cleanup EXIT

if ! rootfs "$ROOTS/podman" || ! rootfs "$ROOTS/nspawn"; then
	fail "containers: the rootfs directories in $ROOTS"
	exit 0
fi
echo "containers: $(podman --version), $(crun --version | head -n 1), $(systemd-nspawn --version | head -n 1)"

# ---- the podman container, its drainforce waiting for SIGUSR1. Its output
# logged by conmon to a file (k8s-file: "TIME stdout F LINE"), read there, not
# by podman logs a tenth of a second (a podman command takes a second under TCG)
PODMAN_LOG=$TMP/podman.log
podman run -d --name "$NAME" --network=none --log-driver=k8s-file --log-opt path="$PODMAN_LOG" \
	--rootfs "$ROOTS/podman" \
	/drainforce -W -H -n $ROUNDS_PODMAN -c $COMM /data >"$TMP/podman.run" 2>&1
expect_eq "podman run --rootfs: exit 0" $? 0 || cat "$TMP/podman.run"
PODMAN_ID=$(podman ps --no-trunc --filter "name=^$NAME\$" --format '{{.ID}}')
PODMAN_SHORT=$(podman ps --filter "name=^$NAME\$" --format '{{.ID}}')
PODMAN_PID=$(podman inspect --format '{{.State.Pid}}' "$NAME")
check "podman ps: the container's id, 64 hex digits" grep -qxE '[0-9a-f]{64}' <<<"$PODMAN_ID"
wait_comm "$PODMAN_PID" $COMM || fail "podman: drainforce ready" "$(podman logs "$NAME" 2>&1 | tail -n 3)"
PODMAN_CG=$(cgroup_path "$PODMAN_PID")
echo "containers: podman $PODMAN_ID, drainforce pid $PODMAN_PID in $PODMAN_CG"
# the systemd driver's scope (crun puts the payload in a "container" child)
check "podman: drainforce in the scope libpod-<id>.scope" \
	grep -q "^/machine.slice/libpod-$PODMAN_ID\.scope\(/\|$\)" <<<"$PODMAN_CG"

# ---- the nspawn machine, the same
systemd-nspawn -q -D "$ROOTS/nspawn" --machine=$MACHINE \
	/drainforce -W -H -n $ROUNDS_NSPAWN -c $COMM /data >"$TMP/nspawn.out" 2>&1 </dev/null &
NSPAWN=$!
wait_until 60 output_isnt "" machine_leader
NSPAWN_PID=$(machine_leader)
wait_comm "$NSPAWN_PID" $COMM || fail "nspawn: drainforce ready" "$(tail -n 3 "$TMP/nspawn.out")"
NSPAWN_CG=$(cgroup_path "$NSPAWN_PID")
MACHINE_LISTED=$(machinectl list --no-legend --no-pager | awk '{ print $1 }')
echo "containers: machine $MACHINE_LISTED, drainforce pid $NSPAWN_PID in $NSPAWN_CG"
expect_eq "machinectl list: the machine" "$MACHINE_LISTED" $MACHINE
check "nspawn: drainforce in the scope machine-drain\\x2dbox.scope" \
	grep -q '^/machine.slice/machine-drain\\x2dbox\.scope\(/\|$\)' <<<"$NSPAWN_CG"

# ---- the rounds, counted by bpftrace per cgroup and by drainstat
TRUTH_BY=cgroup truth_start "comm:$COMM" "$TMP/truth" ||
	fail "bpftrace counts the containers' drains per cgroup" "$(tail -n 3 "$TMP/truth.err")"
start_attached "$TMP/text" -c $COMM
start_attached "$TMP/json" -c $COMM -j
kill -USR1 "$PODMAN_PID" "$NSPAWN_PID"
wait_until 120 grep -qE "(^| )$ROUNDS_PODMAN\$" "$PODMAN_LOG" ||
	fail "podman: drainforce ends its rounds" "$(tail -n 3 "$PODMAN_LOG")"
# (nspawn's console is a pty: its lines end in CR LF)
wait_until 120 grep -qE "^$ROUNDS_NSPAWN"$'\r?$' "$TMP/nspawn.out" ||
	fail "nspawn: drainforce ends its rounds" "$(tail -n 3 "$TMP/nspawn.out")"
truth_stop || fail "bpftrace counted the containers' drains" "$(tail -n 3 "$TMP/truth.err")"
stop_attached

MODE=$(mode_of "$TMP/text")
echo "containers: drainstat in $MODE mode"
PODMAN_TRUTH=$(truth_drains "$MODE" "$(stat -c %i "/sys/fs/cgroup$PODMAN_CG")")
NSPAWN_TRUTH=$(truth_drains "$MODE" "$(stat -c %i "/sys/fs/cgroup$NSPAWN_CG")")
check "bpftrace: each container's drains counted, and unequal ($PODMAN_TRUTH, $NSPAWN_TRUTH)" \
	test "$PODMAN_TRUTH" -gt 0 -a "$NSPAWN_TRUTH" -gt 0 -a "$PODMAN_TRUTH" != "$NSPAWN_TRUTH"
expect_eq "text: two rows of $COMM at generic_fadvise" "$(site_rows "$TMP/text" generic_fadvise $COMM)" 2
check "-j: valid JSON" jq -e . "$TMP/json" >/dev/null
expect_eq "podman ps: the short id, the long one's first 12 hex digits" "$PODMAN_SHORT" "${PODMAN_ID:0:12}"
check_container "podman $NAME" "$PODMAN_ID" "$PODMAN_CG" "podman:$PODMAN_SHORT" podman "$PODMAN_TRUTH"
check_container "nspawn $MACHINE" "$MACHINE_LISTED" "$NSPAWN_CG" "nspawn:$MACHINE_LISTED" nspawn \
	"$NSPAWN_TRUTH"
echo "containers: drainstat -c $COMM (bpftrace: podman $PODMAN_TRUTH, nspawn $NSPAWN_TRUTH):"
sed 's/^/    /' "$TMP/text"

# ---- a drain stuck behind a spinner in the podman container: tests/lib/stuck.sh's
# held drain, stuckdrain -X's spinner (a process of its own) moved into the
# container's cgroup (written into its cgroup.procs, as crun put drainforce
# there), and pinned to CPU 1 again (on 6.1 the move into a cgroup where
# cpuset is enabled resets a task's CPUs to the cgroup's). The in-flight
# view names the container of the task that holds the pending CPU, text
# (podman:<the short id>) and JSON (its id as podman ps gives it).
. tests/lib/stuck.sh
stuck_machine_params "$PWD/build/tests/stuckdrain" /var/tmp/drainspin.data
SPIN_START=$SECONDS

# in_podman PID: stuckdrain PID's spinner moved into the podman container.
# shellcheck disable=SC2317 # run by stuck_run
in_podman() {
	local spinner
	spinner=$(stuck_spinner_tid "$1")
	echo "$spinner" >"/sys/fs/cgroup$PODMAN_CG/cgroup.procs" && taskset -p -c 1 "$spinner" >/dev/null
}

if check "in flight: RT throttling off" stuck_setup; then
	STUCK_ARGS=-X STUCK_PLACE=in_podman stuck_run "$TMP/stuck" \
		--stuck ${STUCK_MS}ms -T ${T_MS}ms 0.2 || fail "in flight: stuck run (text)"
	expect_eq "in flight: the spinner in the podman container" "$STUCK_SPIN_CG" "$PODMAN_CG"
	STUCK_SPIN_NAMED=podman:$PODMAN_SHORT stuck_check_text "$(mode_of "$TMP/stuck")" "$TMP/stuck"
	STUCK_ARGS=-X STUCK_PLACE=in_podman stuck_run "$TMP/stuck.json" \
		--stuck ${STUCK_MS}ms -T ${T_MS}ms -j 0.2 || fail "in flight: stuck run (json)"
	stuck_check_json "$(mode_of "$TMP/stuck")" "$TMP/stuck.json"
	check "in flight -j: the spinner's container, podman's id" grep -q \
		"\"comm\":\"sd-spin\",[^}]*\"container\":\"$PODMAN_ID\",\"runtime\":\"podman\"" "$TMP/stuck.json"
	stuck_restore
	echo "containers: the stuck drain's report, in flight:"
	awk '/^STUCK: / { f = 1 } f && /^$/ { exit } f' "$TMP/stuck.stuck" | sed 's/^/    /'
fi
rm -f "$STUCK_DATA"
echo "containers: the stuck drain behind the podman container took $((SECONDS - SPIN_START)) s"

podman rm -f -t 0 "$NAME" >/dev/null
expect_eq "podman rm -f: exit 0" $? 0
machinectl terminate $MACHINE
wait "$NSPAWN"
check "machinectl terminate: the machine gone" test -z "$(machinectl list --no-legend --no-pager)"
echo "containers: took $((SECONDS - START)) s"
exit 0
