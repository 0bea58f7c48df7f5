#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# valgrind over the command line's paths: no invalid access, no use of
# uninitialised memory, no leak, and the documented exit code each time.
# tests/valgrind.supp holds the bpf(2) false positives, and nothing else.
set -u
. tests/host/lib.sh

if ! command -v valgrind >/dev/null; then
	fail "valgrind" "not installed (apt-get install valgrind)"
	exit 0
fi
case "$DRAINSTAT" in *asan*)
	skip "valgrind" "drainstat is a sanitizer build"
	exit 0
	;;
esac

VG=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
	--suppressions="$PWD/tests/valgrind.supp")

# reported LOG: valgrind's reports in LOG ("==PID==" lines; its warnings about
# bpf commands it does not model, "--PID--", are not reports)
reported() { grep -q '^==[0-9]*==' "$1"; }

# vg CODE NAME ARGS...: drainstat ARGS under valgrind exits CODE with no report
vg() {
	local code=$1 name=$2 rc
	shift 2
	timeout -s KILL 120 "${VG[@]}" --log-file="$TMPDIR_TEST/vg.log" "$DRAINSTAT" "$@" \
		>"$TMPDIR_TEST/vg.out" 2>&1
	rc=$?
	if [ $rc -eq "$code" ] && ! reported "$TMPDIR_TEST/vg.log"; then
		pass "valgrind: $name"
	else
		fail "valgrind: $name" "exit $rc, want $code; $(grep -m 5 '^==' "$TMPDIR_TEST/vg.log")"
	fi
}

vg 0 "--help" --help
vg 0 "--version" --version
vg 64 "bad arguments" -d 1x
vg 64 "conflicting options" --prom x.prom -j
vg 65 "no such PID" -p 4194303
vg 66 "no such cgroup" --cgroup /sys/fs/cgroup/no-such
vg 74 "--prom in a missing directory" --prom "$TMPDIR_TEST/none/x.prom"
vg 0 "a text run" -d 1 -s -H
vg 0 "JSON reports" -j 0.4 2
vg 0 "an export run" --prom "$TMPDIR_TEST/vg.prom" 0.4 -d 1

# tracing forced drains, with the slow-drain log, ended by SIGHUP then SIGINT
N=20
COMM=dsvg$$
"$WORKLOADS/drainforce" -W -n $N -c "$COMM" "$TMPDIR_TEST/data" &
WL=$!
wait_comm $WL "$COMM"
"${VG[@]}" --log-file="$TMPDIR_TEST/vg.log" "$DRAINSTAT" -v -T 1ns -s -c "$COMM" \
	>"$TMPDIR_TEST/vg.out" 2>"$TMPDIR_TEST/vg.err" &
VGPID=$!
wait_attached "$TMPDIR_TEST/vg.err"
kill -USR1 $WL
wait $WL
sleep 1
kill -HUP $VGPID
sleep 1
kill -INT $VGPID
wait $VGPID
RC=$?
if [ $RC -eq 0 ] && ! reported "$TMPDIR_TEST/vg.log"; then
	pass "valgrind: forced drains, -T, SIGHUP, SIGINT"
else
	fail "valgrind: forced drains, -T, SIGHUP, SIGINT" "exit $RC; $(grep -m 5 '^==' "$TMPDIR_TEST/vg.log")"
fi
check "valgrind: the slow drains were logged" grep -q 'SLOW DRAIN' "$TMPDIR_TEST/vg.out"
exit 0
