#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Signals: SIGINT and SIGTERM end with a final report and exit 0; SIGHUP reports
# at once and tracing goes on; a second SIGINT exits at once; SIGKILL at any
# moment leaves no BPF program, link or map behind and never a partial export.
set -u
. tests/host/lib.sh

N=20
OUT=$TMPDIR_TEST/int
forced_drains dssig
kill -INT "$DS_PID"
wait_drainstat
expect_eq "SIGINT: exit 0" "$DS_RC" 0
expect_eq "SIGINT: the final report has the drains" \
	"$(site_field "$OUT" generic_fadvise dssig 3)" "$TRUTH_DRAINS"

# reports_in FILE: how many summary lines ("...: N drains, ...") FILE holds
reports_in() { grep -c ': [0-9]* drains, ' "$1"; }

# SIGHUP without INTERVAL: everything so far, at once; the run goes on
OUT=$TMPDIR_TEST/hup
forced_drains dshup
kill -HUP "$DS_PID"
for _ in $(seq 50); do
	[ "$(reports_in "$OUT")" -ge 1 ] && break
	sleep 0.1
done
expect_eq "SIGHUP: one report at once" "$(reports_in "$OUT")" 1
check "SIGHUP: still tracing" kill -0 "$DS_PID"
expect_eq "SIGHUP: the report has the drains" \
	"$(site_field "$OUT" generic_fadvise dshup 3)" "$TRUTH_DRAINS"
kill -HUP "$DS_PID"
wait_until 10 output_isnt 1 reports_in "$OUT"
kill -TERM "$DS_PID"
wait_drainstat
expect_eq "SIGHUP twice, then SIGTERM: exit 0" "$DS_RC" 0
expect_eq "SIGHUP twice, then SIGTERM: three reports" "$(reports_in "$OUT")" 3
expect_eq "SIGHUP: reports are cumulative without INTERVAL" \
	"$(awk '$1 == "generic_fadvise" && $2 == "dshup" { print $3 }' "$OUT" | sort -u | wc -l)" 1

# SIGHUP with INTERVAL: the interval so far, at once; it does not count towards COUNT
OUT=$TMPDIR_TEST/hupint
start_drainstat "$OUT" 3600 2
kill -HUP $DS_PID
wait_until 10 grep -q ': [0-9]* drains, ' "$OUT"
kill -HUP $DS_PID
wait_until 10 output_isnt 1 reports_in "$OUT"
sleep 0.5 # no third
expect_eq "SIGHUP with INTERVAL: a report each" "$(reports_in "$OUT")" 2
check "SIGHUP with INTERVAL: COUNT not used up" kill -0 $DS_PID
kill -INT $DS_PID
wait_drainstat
expect_eq "SIGHUP with INTERVAL: exit 0" "$DS_RC" 0

# SIGHUP with --prom: the export is rewritten now, not at the next interval
PROM=$TMPDIR_TEST/hup.prom
OUT=$TMPDIR_TEST/hupprom
forced_drains dshupp --prom "$PROM" 3600
drains_in() { prom_sum "$1" drainstat_drains_total 'site="generic_fadvise"'; }
expect_eq "SIGHUP with --prom: the start export has no drains yet" "$(drains_in "$PROM")" ""
kill -HUP "$DS_PID"
wait_until 10 output_isnt "" drains_in "$PROM"
expect_eq "SIGHUP with --prom: rewritten with the drains" "$(drains_in "$PROM")" "$TRUTH_DRAINS"
kill -TERM "$DS_PID"
wait_drainstat
expect_eq "SIGHUP with --prom: exit 0" "$DS_RC" 0

# A second SIGINT exits at once. drainstat is made to hang on its output: its
# stdout is a pipe already full, which nobody reads.
PROGS_BEFORE=$(prog_ids)
mkfifo "$TMPDIR_TEST/fifo"
exec 3<>"$TMPDIR_TEST/fifo" # holds the pipe open, reads nothing
head -c 65536 /dev/zero >&3 # a pipe holds 64 KiB
sleep 600 &
IDLE=$!
"$DRAINSTAT" -v -p $IDLE >"$TMPDIR_TEST/fifo" 2>"$TMPDIR_TEST/fifo.err" &
DS_PID=$!
wait_attached "$TMPDIR_TEST/fifo.err"
MINE=$(new_prog_ids "$PROGS_BEFORE")
kill -INT $DS_PID
sleep 1
check "second SIGINT: the first one leaves it blocked on its output" kill -0 $DS_PID
kill -INT $DS_PID
SECONDS=0
wait $DS_PID
RC=$?
expect_eq "second SIGINT: killed by SIGINT (status 130)" $RC 130
check "second SIGINT: at once" test $SECONDS -lt 2
for _ in $(seq 20); do progs_gone "$MINE" && break; sleep 0.1; done
check "second SIGINT: no BPF program left" progs_gone "$MINE"
exec 3>&-
kill $IDLE

# SIGKILL at random moments (setup, load, attach, tracing, export): afterwards no
# program, link or map of drainstat is left, and the export directory holds the
# export only, always whole. A reader copies the file as fast as it can meanwhile.
DS_MAPS='^(stacks|ustacks|sites|cpus|fadvise|counters|works|drains|fadvise_calls|local_calls|slow_targets|slow_events|drainsta\..*)$'
drainstat_objects() {
	{
		bpftool -j prog list | jq -r '.[] | select(.name | startswith("drainstat_")) | "prog \(.id)"'
		bpftool -j map list | jq -r --arg re "$DS_MAPS" '.[] | select(.name // "" | test($re)) | "map \(.id)"'
		bpftool -j link list | jq -r '.[] | "link \(.id) \(.prog_id)"'
	} 2>/dev/null | sort
}
BEFORE=$(drainstat_objects)
DIR=$TMPDIR_TEST/kill
mkdir -p "$DIR/copies"
(
	i=0
	while [ $i -lt 3000 ]; do
		cp "$DIR/x.prom" "$DIR/copies/$i" 2>/dev/null && i=$((i + 1))
		[ -e "$DIR/stop" ] && break
	done
) &
READER=$!
KILLS=40
# the kills fall in the first START ms + 500 ms of a run, START the time to the
# first export (a first run measures it: seconds in a TCG VM)
"$DRAINSTAT" --prom "$DIR/x.prom" 0.01 >/dev/null 2>&1 &
PID=$!
T0=$(date +%s%N)
wait_until 60 test -e "$DIR/x.prom"
START=$((($(date +%s%N) - T0) / 1000000))
kill -KILL $PID
wait $PID 2>/dev/null
for _ in $(seq $KILLS); do
	"$DRAINSTAT" --prom "$DIR/x.prom" 0.01 >/dev/null 2>&1 &
	PID=$!
	sleep "$(awk -v ms=$((RANDOM % (START + 500))) 'BEGIN { printf "%.3f", ms / 1000 }')"
	kill -KILL $PID
	wait $PID 2>/dev/null
done
touch "$DIR/stop"
wait $READER
# the kernel frees a program after its last reference goes, asynchronously
for _ in $(seq 50); do
	LEFT=$(comm -13 <(echo "$BEFORE") <(drainstat_objects) | grep -v '^link ' | head -5)
	[ -z "$LEFT" ] && break
	sleep 0.1
done
if pgrep -x drainstat >/dev/null; then
	skip "SIGKILL x$KILLS: no program or map left" "another drainstat runs on this machine"
else
	expect_eq "SIGKILL x$KILLS: no program or map left" "$LEFT" ""
	expect_eq "SIGKILL x$KILLS: links as before" \
		"$(comm -13 <(echo "$BEFORE" | grep '^link ') <(drainstat_objects | grep '^link ') | wc -l)" 0
fi
# a kill between naming the temp file and renaming it leaves that (whole) file;
# the next drainstat on the same export removes it
"$DRAINSTAT" --prom "$DIR/x.prom" -d 0.1 >/dev/null 2>&1
expect_eq "SIGKILL x$KILLS: the export directory holds the export (and its lock) only, after one more run" \
	"$(ls -A "$DIR" | grep -v -e '^copies$' -e '^stop$' | tr '\n' ' ')" ".x.prom.lock x.prom "
COPIES=$(ls "$DIR/copies" | wc -l)
check "SIGKILL x$KILLS: the reader saw exports ($COPIES)" test "$COPIES" -gt 100
# whole: every copy ends with the last series of a full export, and its
# newline (one tail over all the copies: a process per copy takes minutes in
# a TCG VM)
LAST=$(tail -n 1 "$DIR/x.prom" | awk '{ print $1 }')
expect_eq "SIGKILL x$KILLS: every export seen ends with a newline" \
	"$(tail -q -c 1 "$DIR"/copies/* | tr -cd '\n' | wc -c)" "$COPIES"
expect_eq "SIGKILL x$KILLS: every export seen is whole (its last series)" \
	"$(tail -q -n 1 "$DIR"/copies/* | awk -v l="$LAST" '$1 != l { n++ } END { print n + 0 }')" 0
# and valid: promtool over 20 distinct contents (its start takes a second under TCG)
BAD=0
for f in $(md5sum "$DIR"/copies/* | sort -u -k1,1 | awk '{ print $2 }' | head -n 20); do
	promtool check metrics <"$f" >/dev/null 2>&1 || BAD=$((BAD + 1))
done
expect_eq "SIGKILL x$KILLS: 20 distinct exports pass promtool" $BAD 0
exit 0
