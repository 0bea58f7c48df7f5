#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The filters on the live kernel: -c COMM, --cgroup PATH and -C CPULIST each
# keep the forced drains they should and drop the rest.
set -u
. tests/host/lib.sh

N=50

# run_filtered NAME COMM SETUP ARGS...: N forced drains (CPU 1 drains CPU 0)
# under COMM, drainstat ARGS around them; SETUP runs with the workload's pid.
run_filtered() {
	local out=$TMPDIR_TEST/$1 comm=$2 setup=$3 wl
	shift 3
	"$WORKLOADS/drainforce" -W -n $N -c "$comm" "$TMPDIR_TEST/data" &
	wl=$!
	wait_comm $wl "$comm" || return 1
	$setup $wl
	truth_begin $wl
	start_drainstat "$out" "$@" || return 1
	kill -USR1 $wl
	wait $wl
	OUT=$out truth_end
	kill -INT "$DS_PID"
	wait_drainstat
	OUT=$out
}

none() { :; }

# A filter keeps the workload's drains, all of them: bpftrace's count.
kept() {
	expect_eq "$1 = bpftrace's" "$2" "$TRUTH_DRAINS"
}

COMM=dsfc$$
run_filtered comm-match "$COMM" none -c "$COMM"
kept "-c COMM: its drains" "$(site_field "$OUT" generic_fadvise "$COMM" 3)"
check "-c COMM: header says so" grep -q ", comm $COMM only$" "$OUT"
run_filtered comm-other "$COMM" none -c nosuchcomm
check "-c other: none of them" grep -q '^no drains$' "$OUT"

# -C counts the drains that queued a work to a CPU of the list (each queues
# one at most to a CPU), and only those works; a drain whose works went
# elsewhere is not counted, and never as empty
run_filtered cpus-victim "$COMM" none -C 0 -c "$COMM"
expect_eq "-C 0: the works on CPU 0 = bpftrace's" "$(cpu_field "$OUT" 0 2)" "$(truth_count 'works[0]')"
expect_eq "-C 0: the drains, those with a work on CPU 0 (bpftrace)" \
	"$(site_field "$OUT" generic_fadvise "$COMM" 3)" "$(truth_count 'works[0]')"
expect_eq "-C 0: the site's works, CPU 0's" "$(site_field "$OUT" generic_fadvise "$COMM" 4)" \
	"$(truth_count 'works[0]')"
run_filtered cpus-other "$COMM" none -C 1 -c "$COMM"
check "-C 1: none of the works on CPU 0" bash -c "! grep -q '^0 ' '$OUT'"
expect_eq "-C 1: the drains, those with a work on CPU 1 (bpftrace)" \
	"$(site_field "$OUT" generic_fadvise "$COMM" 3 | awk '{ n += $1 } END { print n + 0 }')" \
	"$(truth_count 'works[1]')"

# --cgroup: a cgroup v2 of our own, the workload moved into it
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$V2" ] && mkdir "$V2/drainstat-test.$$" 2>/dev/null; then
	CG=$V2/drainstat-test.$$
	mkdir "$CG-empty"
	join_cg() { echo "$1" >"$CG/cgroup.procs"; }
	run_filtered cgroup-match "$COMM" join_cg --cgroup "$CG"
	kept "--cgroup: its drains" "$(site_field "$OUT" generic_fadvise "$COMM" 3)"
	run_filtered cgroup-other "$COMM" join_cg --cgroup "$CG-empty"
	check "--cgroup other: none of them" grep -q '^no drains$' "$OUT"
	rmdir "$CG" "$CG-empty"
else
	fail "--cgroup: no cgroup v2 to test with"
fi
# -j states the filters as the text header does
"$DRAINSTAT" -j -d 0.2 -c "dsj$$" -C 0 >"$TMPDIR_TEST/filters.json" 2>&1
expect_eq "-j -c -C: the filters" "$(jq -c .filters "$TMPDIR_TEST/filters.json")" \
	"{\"comm\":\"dsj$$\",\"cgroup\":null,\"cpus\":\"0\"}"
"$DRAINSTAT" --cgroup /tmp -d 1 >/dev/null 2>"$TMPDIR_TEST/err"
expect_eq "--cgroup not a cgroup: exit 66" $? 66
check "--cgroup not a cgroup: says so" grep -q '/tmp is not a cgroup v2 directory' "$TMPDIR_TEST/err"
exit 0
