#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# drainstat never harms the system it observes and never reports success after a
# failure (issue 15's hostile run): the export replaces nothing but a regular
# file and has one writer; a report that cannot be written ends the run; a filter
# that cannot match is refused; the traced process's exit ends the run; a stop
# does not replay the intervals it missed.
set -u
. tests/host/lib.sh

# ---- the export replaces nothing but a regular file

DIR=$TMPDIR_TEST/ex
mkdir "$DIR"
# "${PRIVATE_DEV[@]}" CMD...: CMD with a /dev of its own (a tmpfs holding null,
# full and stdout), so that a drainstat that replaced them harms nothing outside
PRIVATE_DEV=(unshare -m --propagation private bash -c '
	mount -t tmpfs -o size=1m none /dev &&
	mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/full c 1 7 &&
	ln -s /proc/self/fd/1 /dev/stdout && exec "$@"' private_dev)
for dev in null full; do
	one_line 74 "--prom /dev/$dev: exit 74" "/dev/$dev is a character device" \
		"${PRIVATE_DEV[@]}" "$DRAINSTAT" --prom /dev/$dev -d 0.2
	check "--prom /dev/$dev: still a character device" \
		"${PRIVATE_DEV[@]}" bash -c "'$DRAINSTAT' --prom /dev/$dev -d 0.2 2>&-; test -c /dev/$dev"
done
mkfifo "$DIR/fifo.prom"
one_line 74 "--prom FIFO: exit 74" "is a FIFO" "$DRAINSTAT" --prom "$DIR/fifo.prom" -d 0.2
check "--prom FIFO: still a FIFO" test -p "$DIR/fifo.prom"
echo keep >"$DIR/target.prom"
ln -s target.prom "$DIR/link.prom"
one_line 74 "--prom symlink: exit 74" "is a symbolic link" \
	"$DRAINSTAT" --prom "$DIR/link.prom" -d 0.2
check "--prom symlink: the link stays" test -L "$DIR/link.prom"
expect_eq "--prom symlink: its target untouched" "$(cat "$DIR/target.prom")" keep
one_line 74 "--prom /dev/stdout: exit 74" "/dev/stdout is a symbolic link" \
	"${PRIVATE_DEV[@]}" "$DRAINSTAT" --prom /dev/stdout -d 0.2
check "--prom /dev/stdout: still a symbolic link" \
	"${PRIVATE_DEV[@]}" bash -c "'$DRAINSTAT' --prom /dev/stdout -d 0.2 2>&-; test -L /dev/stdout"
one_line 74 "--prom .: a directory, exit 74" "\. is a directory" \
	"$DRAINSTAT" --prom . -d 0.2
one_line 74 "--prom /proc/self/status: procfs, exit 74" "on procfs" \
	"$DRAINSTAT" --prom /proc/self/status -d 0.2
one_line 74 "--prom on sysfs: exit 74" "on sysfs" \
	"$DRAINSTAT" --prom /sys/kernel/drainstat.prom -d 0.2
# a regular file that no drainstat wrote (a mistyped path): kept; an empty one is taken
cp /etc/passwd "$DIR/passwd"
one_line 74 "--prom over a file no drainstat wrote: exit 74" "passwd is not a drainstat export" \
	"$DRAINSTAT" --prom "$DIR/passwd" -d 0.2
check "--prom over a file no drainstat wrote: untouched" cmp -s /etc/passwd "$DIR/passwd"
: >"$DIR/empty.prom"
"$DRAINSTAT" --prom "$DIR/empty.prom" -d 0.2
expect_eq "--prom over an empty file: exit 0" $? 0
check "--prom over an empty file: the export" grep -q '^drainstat_info{' "$DIR/empty.prom"
LONG=$(printf 'n%.0s' $(seq 255))
"$DRAINSTAT" --prom "$DIR/$LONG" -d 0.2 2>"$TMPDIR_TEST/long.err"
expect_eq "--prom with a 255-byte name: exit 0" $? 0
check "--prom with a 255-byte name: written" grep -q '^drainstat_info{' "$DIR/$LONG"
rm -f "$DIR/$LONG"

# ---- one writer per export file
PROM=$DIR/one.prom
"$DRAINSTAT" --prom "$PROM" 0.2 -d 3 2>"$TMPDIR_TEST/first.err" &
FIRST=$!
for _ in $(seq 100); do [ -s "$PROM" ] && break; sleep 0.05; done
one_line 74 "a second writer: exit 74" "is being written by process $FIRST " \
	"$DRAINSTAT" --prom "$PROM" 0.2 -d 1
wait $FIRST
expect_eq "a second writer: the first goes on to exit 0" $? 0
expect_eq "a second writer: the first said nothing" "$(cat "$TMPDIR_TEST/first.err")" ""
# the holder is gone: the file is free again
"$DRAINSTAT" --prom "$PROM" -d 0.2
expect_eq "a writer after the first exited: exit 0" $? 0

# ---- the export directory removed while running ends the run
mkdir "$DIR/gone"
"$DRAINSTAT" --prom "$DIR/gone/x.prom" 0.1 -d 20 2>"$TMPDIR_TEST/gone.err" &
GONE=$!
for _ in $(seq 100); do [ -s "$DIR/gone/x.prom" ] && break; sleep 0.05; done
rm -rf "$DIR/gone"
for _ in $(seq 50); do kill -0 $GONE 2>/dev/null || break; sleep 0.1; done
check "export directory removed: the run ends" bash -c "! kill -0 $GONE 2>/dev/null"
wait $GONE
expect_eq "export directory removed: exit 74" $? 74
check "export directory removed: said once" \
	test "$(grep -c 'the directory of .*/gone/x.prom was removed' "$TMPDIR_TEST/gone.err")" = 1

# ---- a report that cannot be written ends the run
one_line 1 "stdout full: exit 1" "cannot write the report to stdout: No space left on device" \
	bash -c "'$DRAINSTAT' -d 0.2 >/dev/full"
one_line 1 "stdout full, -j: exit 1" "No space left on device" \
	bash -c "'$DRAINSTAT' -j -d 0.2 >/dev/full"
one_line 1 "stdout closed: exit 1" "stdout is closed" bash -c "'$DRAINSTAT' -d 0.2 >&-"
# systemd's IgnoreSIGPIPE=yes: the closed pipe ends the run, quietly
(
	trap '' PIPE
	timeout -s KILL 20 "$DRAINSTAT" 0.1 2>"$TMPDIR_TEST/pipe.err" | head -1 >/dev/null
	echo "${PIPESTATUS[0]}" >"$TMPDIR_TEST/pipe.rc"
)
expect_eq "SIGPIPE ignored, reader gone: exit 1 (not killed by the timeout)" \
	"$(cat "$TMPDIR_TEST/pipe.rc")" 1
expect_eq "SIGPIPE ignored, reader gone: nothing on stderr" "$(cat "$TMPDIR_TEST/pipe.err")" ""
# --prom alone writes nothing to stdout: a closed stdout does not matter
"$DRAINSTAT" --prom "$DIR/closed.prom" -d 0.2 >&-
expect_eq "--prom with stdout closed: exit 0" $? 0

# ---- a small stack limit: what ls survives, drainstat does (no large frame of
# its own: no PATH_MAX buffers, stderr buffered; the scan thread's stack is its
# own). Not under ASan: its redzones make every frame larger.
for kb in 24 32; do
	[ -n "${ASAN_OPTIONS:-}" ] && break
	bash -c "ulimit -s $kb && ls / >/dev/null" 2>/dev/null || continue
	(
		ulimit -s $kb
		"$DRAINSTAT" -d 0.2 --cgroup /nonexistent/$kb >/dev/null 2>&1
		echo $? >"$TMPDIR_TEST/stack.cg"
		"$DRAINSTAT" -T 1ns -s -d 0.2 >"$TMPDIR_TEST/stack.out" 2>&1
	)
	expect_eq "ulimit -s $kb (ls runs): a run ends cleanly" $? 0
	expect_eq "ulimit -s $kb (ls runs): a bad --cgroup is said (exit 66)" \
		"$(cat "$TMPDIR_TEST/stack.cg")" 66
done

# ---- filters that cannot match are refused
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
one_line 66 "--cgroup given a cgroup's file: exit 66" "is a file in a cgroup, not a cgroup" \
	"$DRAINSTAT" --cgroup "$V2/cgroup.procs" -d 0.2
POSSIBLE=$(cat /sys/devices/system/cpu/possible)
LAST=${POSSIBLE##*[-,]}
one_line 64 "-C beyond the possible CPUs: exit 64" \
	"-C names CPUs this machine does not have: $((LAST + 1)) (its CPUs: $POSSIBLE)" \
	"$DRAINSTAT" -C "0,$((LAST + 1))" -d 0.2
"$DRAINSTAT" -C "$LAST" -d 0.2 >/dev/null
expect_eq "-C of a possible CPU: exit 0" $? 0

# -p of a zombie: nothing to trace (perl forks a child that exits, and does not reap it)
perl -e '$| = 1; my $p = fork; if ($p) { print "$p\n"; sleep 30 } else { exit 0 }' >"$TMPDIR_TEST/zombie" &
PARENT=$!
for _ in $(seq 50); do
	ZOMBIE=$(cat "$TMPDIR_TEST/zombie")
	[ -n "$ZOMBIE" ] && grep -q '^State:.*Z' /proc/"$ZOMBIE"/status 2>/dev/null && break
	sleep 0.05
done
one_line 65 "-p of a zombie: exit 65" "process $ZOMBIE has exited (a zombie" \
	"$DRAINSTAT" -p "$ZOMBIE" -d 0.2
kill $PARENT
wait $PARENT 2>/dev/null

# -p of a process that exits mid-run: a final report, at once, exit 0
N=20
COMM=dspexit$$
"$WORKLOADS/drainforce" -W -n $N -c "$COMM" "$TMPDIR_TEST/data" &
WL=$!
wait_comm $WL "$COMM"
truth_begin $WL
OUT=$TMPDIR_TEST/pexit
start_drainstat "$OUT" -p $WL -d 60
START=$(date +%s%N)
kill -USR1 $WL
wait $WL
wait_drainstat
ENDED=$((($(date +%s%N) - START) / 1000000))
expect_eq "-p, the process exits: exit 0" "$DS_RC" 0
expect_range "-p, the process exits: the run ends within 5 s, not at -d 60 (ms)" "$ENDED" 0 5000
check "-p, the process exits: said so" grep -q "^drainstat: process $WL exited$" "$OUT.err"
truth_end
expect_eq "-p, the process exits: the final report holds its drains" \
	"$(site_field "$OUT" generic_fadvise "$COMM" 3)" "$TRUTH_DRAINS"

# ---- a stop does not replay the intervals it missed
"$DRAINSTAT" -j 0.5 4 >"$TMPDIR_TEST/stop.json" 2>&1 &
STOPPED=$!
# after the first report: a slow start (a TCG VM) must not eat into the stop
wait_until 30 test -s "$TMPDIR_TEST/stop.json"
kill -STOP $STOPPED
sleep 2
kill -CONT $STOPPED
wait $STOPPED
expect_eq "SIGSTOP for 2 s: exit 0" $? 0
expect_eq "SIGSTOP for 2 s: four reports" "$(wc -l <"$TMPDIR_TEST/stop.json")" 4
# the report after the stop covers it; none is a replayed sliver
expect_eq "SIGSTOP for 2 s: one report covers the stop" \
	"$(jq -s '[.[] | select(.span_ns >= 2000000000)] | length' "$TMPDIR_TEST/stop.json")" 1
expect_eq "SIGSTOP for 2 s: no report under 0.4 s" \
	"$(jq -s '[.[] | select(.span_ns < 400000000)] | length' "$TMPDIR_TEST/stop.json")" 0
exit 0
