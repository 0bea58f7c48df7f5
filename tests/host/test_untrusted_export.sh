#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Issue 30's hostile round on --prom, each attack made by an unprivileged user
# of the test's own next to root's drainstat: a reader's lock on the export, a
# lock file planted, the directory swapped for a symlink, symlinks at every temp
# name one can guess. And what needs no user: a file-size limit, and the
# filesystem remounted read-only mid-run.
set -u
. tests/host/lib.sh

if ! untrusted_user; then
	skip "untrusted export attacks" "useradd failed"
	exit 0
fi
chmod 0711 "$TMPDIR_TEST"
# a file of root's that a followed symlink would harm
VICTIM=$TMPDIR_TEST/victim
echo "root's own" >"$VICTIM"
cp "$VICTIM" "$TMPDIR_TEST/victim.orig"
victim_untouched() { cmp -s "$VICTIM" "$TMPDIR_TEST/victim.orig"; }
# a directory only root can use, where a followed directory symlink would write
ROOTONLY=$TMPDIR_TEST/rootonly
mkdir -m 0700 "$ROOTONLY"
# user_dir NAME: a directory the user owns
user_dir() {
	mkdir -m 0755 "$TMPDIR_TEST/$1"
	chown "$UNTRUSTED_UID:$UNTRUSTED_GID" "$TMPDIR_TEST/$1"
}
inode() { stat -c %i "$1" 2>/dev/null; }
# new_export FILE: waits (10 s at most) for an export that replaces the one at FILE now
new_export() {
	local before
	before=$(inode "$1")
	wait_until 10 output_isnt "$before" inode "$1"
}
# ds_start FILE ARGS...: root's drainstat --prom FILE ARGS in the background
# (DS_PID), its stderr in $TMPDIR_TEST/ds.err; waits for its first export
ds_start() {
	local prom=$1
	shift
	rm -f "$prom"
	"$DRAINSTAT" --prom "$prom" "$@" 2>"$TMPDIR_TEST/ds.err" &
	DS_PID=$!
	wait_until 30 test -s "$prom"
}

# ---- 1. a reader's lock on the export stops no writer
PUB=$TMPDIR_TEST/pub
mkdir -m 0755 "$PUB"
"$DRAINSTAT" --prom "$PUB/x.prom" -d 0.2
# the user locks every export that appears, fcntl read lock and flock, and holds them
cat >"$TMPDIR_TEST/locker.py" <<'EOF'
import fcntl, os, sys, time
held = {}
while not os.path.exists(sys.argv[2]):
    try:
        f = open(sys.argv[1])
        fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        ino = os.fstat(f.fileno()).st_ino
        if ino not in held:
            held[ino] = f
            print(len(held), flush=True)
    except OSError:
        pass
    time.sleep(0.02)
EOF
# (it prints how many it holds)
as_untrusted /usr/bin/python3 "$TMPDIR_TEST/locker.py" "$PUB/x.prom" "$PUB/stop" >"$TMPDIR_TEST/locks" &
LOCKER=$!
wait_until 10 test -s "$TMPDIR_TEST/locks"
check "1. the user holds a read lock on the export" test -s "$TMPDIR_TEST/locks"
"$DRAINSTAT" --prom "$PUB/x.prom" 0.2 -d 3 2>"$TMPDIR_TEST/locked.err" &
LOCKED=$!
check "1. a reader's lock at the start: drainstat writes" new_export "$PUB/x.prom"
check "1. a reader's lock on every export: drainstat keeps writing" new_export "$PUB/x.prom"
check "1. a reader's lock on every export: and writing" new_export "$PUB/x.prom"
check "1. the user locked several exports" test "$(tail -n 1 "$TMPDIR_TEST/locks")" -ge 3
one_line 74 "1. a second root writer meanwhile: exit 74, naming the first" \
	"is being written by process $LOCKED (another drainstat?)" \
	"$DRAINSTAT" --prom "$PUB/x.prom" 0.2 -d 1
wait $LOCKED
expect_eq "1. a reader's lock: exit 0" $? 0
expect_eq "1. a reader's lock: nothing said" "$(cat "$TMPDIR_TEST/locked.err")" ""
touch "$PUB/stop"
wait $LOCKER

# a lock file the user planted in a directory they can write: refused, one
# line, exit 74, never followed nor written; nothing hangs (a FIFO)
user_dir lk
planted_lock() {
	local what=$1 pattern=$2
	shift 2
	rm -f "$TMPDIR_TEST/lk/.x.prom.lock"
	as_untrusted "$@"
	one_line 74 "1. a lock file planted, $what: exit 74" "the lock file beside .*x.prom is $pattern" \
		"$DRAINSTAT" --prom "$TMPDIR_TEST/lk/x.prom" -d 0.2
	check "1. a lock file planted, $what: no export written" test ! -e "$TMPDIR_TEST/lk/x.prom"
}
planted_lock "a symlink to a root file" "a symbolic link" ln -s "$VICTIM" "$TMPDIR_TEST/lk/.x.prom.lock"
check "1. a lock file planted, a symlink: its target untouched" victim_untouched
check "1. a lock file planted, a symlink: still the user's link" \
	test "$(stat -c %U "$TMPDIR_TEST/lk/.x.prom.lock")" = "$UNTRUSTED"
planted_lock "the user's own file" "a file of uid $UNTRUSTED_UID" touch "$TMPDIR_TEST/lk/.x.prom.lock"
planted_lock "a FIFO" "a FIFO" mkfifo "$TMPDIR_TEST/lk/.x.prom.lock"
rm -f "$TMPDIR_TEST/lk/.x.prom.lock"
"$DRAINSTAT" --prom "$TMPDIR_TEST/lk/x.prom" -d 0.2
expect_eq "1. the planted lock file removed: exit 0" $? 0

# ---- 2. the directory, in one the user owns, swapped for a symlink mid-run
user_dir sw
swapped() {
	local how=$1 said=$2 swap=$3
	mkdir -m 0755 "$TMPDIR_TEST/sw/d"
	chown "$UNTRUSTED_UID:$UNTRUSTED_GID" "$TMPDIR_TEST/sw/d"
	ds_start "$TMPDIR_TEST/sw/d/x.prom" 0.2 -d 30
	as_untrusted bash -c "$swap"
	check "2. directory swapped ($how): the run ends within 5 intervals" \
		wait_until 1 eval "! kill -0 $DS_PID 2>/dev/null"
	wait_drainstat
	expect_eq "2. directory swapped ($how): exit 74" "$DS_RC" 74
	expect_eq "2. directory swapped ($how): one line, that it was $said" \
		"$(grep -c "^drainstat: the directory of .*/sw/d/x.prom was $said" "$TMPDIR_TEST/ds.err") $(wc -l <"$TMPDIR_TEST/ds.err")" \
		"1 1"
	expect_eq "2. directory swapped ($how): nothing in the root-only directory" \
		"$(ls -A "$ROOTONLY")" ""
	rm -rf "$TMPDIR_TEST/sw/d" "$TMPDIR_TEST/sw/d.real"
}
swapped "mv, ln -s" "moved or replaced" "mv $TMPDIR_TEST/sw/d $TMPDIR_TEST/sw/d.real && ln -s $ROOTONLY $TMPDIR_TEST/sw/d"
swapped "rm -rf, ln -s" "removed" "rm -rf $TMPDIR_TEST/sw/d && ln -s $ROOTONLY $TMPDIR_TEST/sw/d"
# a symlink as the directory's last component at the start: refused
as_untrusted ln -s "$ROOTONLY" "$TMPDIR_TEST/sw/link"
one_line 74 "2. the directory a symlink at the start: exit 74" \
	"the directory of .*/sw/link/x.prom is a symbolic link" \
	"$DRAINSTAT" --prom "$TMPDIR_TEST/sw/link/x.prom" -d 0.2
expect_eq "2. the directory a symlink at the start: nothing in the root-only directory" \
	"$(ls -A "$ROOTONLY")" ""

# ---- 3. symlinks at every temp name the user can guess
user_dir tn
TN=$TMPDIR_TEST/tn
# before the start: a regular file of the user's at a dead pid's name, not
# removed as a killed writer's leftover (not ours)
as_untrusted touch "$TN/.x.prom.tmp.4194303.0123456789abcdef"
ds_start "$TN/x.prom" 0.2
as_untrusted bash -c 'cd "$2" &&
	for r in $(od -An -N2400 -tx8 /dev/urandom) $(printf "%016x " $(seq 0 15)) ""; do
		ln -s "$1" ".x.prom.tmp.$3${r:+.$r}"
	done' plant "$VICTIM" "$TN" "$DS_PID"
PLANTED=$(find "$TN" -name '.x.prom.tmp.*' -type l | wc -l)
expect_eq "3. the user planted 317 temp names at drainstat's pid" "$PLANTED" 317
check "3. temp names planted: an export comes" new_export "$TN/x.prom"
check "3. temp names planted: and another" new_export "$TN/x.prom"
kill -INT "$DS_PID"
wait_drainstat
expect_eq "3. temp names planted: exit 0" "$DS_RC" 0
expect_eq "3. temp names planted: nothing said" "$(cat "$TMPDIR_TEST/ds.err")" ""
expect_eq "3. temp names planted: every link untouched" \
	"$(find "$TN" -name '.x.prom.tmp.*' -type l -user "$UNTRUSTED" -lname "$VICTIM" | wc -l)" 317
check "3. temp names planted: their target untouched" victim_untouched
check "3. the user's file at a dead pid's temp name: not removed" \
	test -f "$TN/.x.prom.tmp.4194303.0123456789abcdef"

# ---- 6. a file-size limit: said, never a silent SIGXFSZ (exit 153)
FS=$TMPDIR_TEST/fsize
mkdir "$FS"
one_line 74 "6. --prom under RLIMIT_FSIZE 1 KiB: exit 74" "x.prom: File too large" \
	prlimit --fsize=1024 "$DRAINSTAT" --prom "$FS/x.prom" -d 0.2
one_line 1 "6. stdout under RLIMIT_FSIZE: exit 1, as for /dev/full" \
	"cannot write the report to stdout: File too large" \
	bash -c "prlimit --fsize=16 '$DRAINSTAT' -d 0.2 >'$FS/out'"
one_line 1 "6. stdout under RLIMIT_FSIZE, -j: exit 1" "File too large" \
	bash -c "prlimit --fsize=16 '$DRAINSTAT' -j -d 0.2 >'$FS/out'"
# in flight: said once, the previous export stays, written again once lifted
ds_start "$FS/x.prom" 0.2
prlimit --pid "$DS_PID" --fsize=1024:unlimited
wait_until 10 grep -q 'File too large (the previous export stays' "$TMPDIR_TEST/ds.err"
sleep 0.5
check "6. RLIMIT_FSIZE in flight: the export left is whole" grep -q '^drainstat_info{' "$FS/x.prom"
prlimit --pid "$DS_PID" --fsize=unlimited
wait_until 10 grep -q 'x.prom written again$' "$TMPDIR_TEST/ds.err"
kill -INT "$DS_PID"
wait_drainstat
expect_eq "6. RLIMIT_FSIZE in flight, then lifted: exit 0" "$DS_RC" 0
expect_eq "6. RLIMIT_FSIZE in flight: said once, and written again" \
	"$(grep -c 'File too large (the previous export stays' "$TMPDIR_TEST/ds.err") $(grep -c 'written again$' "$TMPDIR_TEST/ds.err")" \
	"1 1"
ds_start "$FS/x.prom" 0.2
prlimit --pid "$DS_PID" --fsize=1024
kill -INT "$DS_PID"
wait_drainstat
expect_eq "6. RLIMIT_FSIZE at the final export: exit 74" "$DS_RC" 74
check "6. RLIMIT_FSIZE at the final export: said" \
	grep -q 'File too large (the final export)$' "$TMPDIR_TEST/ds.err"

# ---- Also: the export's filesystem can be remounted read-only mid-run (the
# lock file is open read-only, the export not held); the writes then fail as
# any write does, and the final export's failure ends the run with 74
RO=$TMPDIR_TEST/ro
mkdir "$RO"
mount -t tmpfs -o size=1m none "$RO"
ds_start "$RO/x.prom" 0.2
mount -o remount,ro "$RO"
expect_eq "remount read-only mid-run: the remount works" $? 0
check "remount read-only mid-run: said" \
	wait_until 10 grep -q 'x.prom: Read-only file system (the previous export stays' "$TMPDIR_TEST/ds.err"
check "remount read-only mid-run: the run goes on" kill -0 "$DS_PID"
check "remount read-only mid-run: the export left is whole" grep -q '^drainstat_info{' "$RO/x.prom"
kill -INT "$DS_PID"
wait_drainstat
expect_eq "remount read-only mid-run: the final export fails, exit 74" "$DS_RC" 74
check "remount read-only mid-run: the final export's failure said" \
	grep -q 'Read-only file system (the final export)$' "$TMPDIR_TEST/ds.err"
umount "$RO"
