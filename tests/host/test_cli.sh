#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The command line on the live kernel: bad input, filters, signals, the
# environment checks; each with its documented exit code.
set -u
. tests/host/lib.sh

# bad arguments: tests/host/test_faults.sh
check "--version" bash -c "'$DRAINSTAT' --version | grep -q '^drainstat [0-9]'"
check "--help exits 0 and shows the synopsis" bash -c "'$DRAINSTAT' --help | grep -q 'INTERVAL'"

# -?, --help, --usage, -V, --version: on stdout, exit 0, as argp_parse() printed them
HELP=$("$DRAINSTAT" --help 2>"$TMPDIR_TEST/help.err")
expect_eq "--help: exit 0" $? 0
expect_eq "--help: nothing on stderr" "$(cat "$TMPDIR_TEST/help.err")" ""
expect_eq "--help: the synopsis first" "$(head -n 1 <<<"$HELP")" \
	"Usage: drainstat [OPTION...] [INTERVAL [COUNT]]"
check "--help: lists -?, --help, --usage, -V, --version" bash -c "grep -q '^  -?, --help ' <<<\"\$1\" &&
	grep -q '^      --usage ' <<<\"\$1\" && grep -q '^  -V, --version ' <<<\"\$1\"" _ "$HELP"
check "--help: ends with the examples, no bug address (drainstat has none)" bash -c "! grep -q 'Report bugs' <<<\"\$1\" &&
	[ \"\$(tail -n 1 <<<\"\$1\")\" = '  drainstat -p 1234 -H   # drains caused by process 1234, with histograms' ]" _ "$HELP"
expect_eq "-?: as --help" "$("$DRAINSTAT" '-?')" "$HELP"
expect_eq "--usage: exit 0" "$("$DRAINSTAT" --usage >/dev/null 2>&1; echo $?)" 0
check "--usage: the short usage" bash -c "'$DRAINSTAT' --usage | head -n 1 | grep -q '^Usage: drainstat \[-Hjsv?V\] '"
check "--version: one line, drainstat VERSION" bash -c "'$DRAINSTAT' --version | grep -Exq 'drainstat [0-9]+\.[0-9]+\.[0-9]+' &&
	[ \$('$DRAINSTAT' --version | wc -l) -eq 1 ]"
expect_eq "-V: as --version" "$("$DRAINSTAT" -V)" "$("$DRAINSTAT" --version)"
# every long option --help lists is one the parser takes (each run ends in a usage error or exit 0)
grep -oE -- '--[a-z][a-z-]*' <<<"$HELP" | sort -u >"$TMPDIR_TEST/help.opts"
while read -r opt; do
	timeout 5 "$DRAINSTAT" "$opt" x 1 2 3 >/dev/null 2>"$TMPDIR_TEST/opt.err"
	check "--help's $opt: the parser takes it" \
		bash -c "! grep -Eq 'unknown option|ambiguous option' '$TMPDIR_TEST/opt.err'"
done <"$TMPDIR_TEST/help.opts"

# usage errors: exit 64 at once (under timeout, so that a hang fails rather than
# waits) with exactly one line on stderr, every argument in it escaped
# expect_usage NAME MESSAGE ARGS...
expect_usage() {
	local name=$1 want=$2 out rc
	shift 2
	out=$(timeout 5 "$DRAINSTAT" "$@" 2>"$TMPDIR_TEST/usage.err")
	rc=$?
	expect_eq "$name: exit 64" $rc 64
	expect_eq "$name: the message" "$(cat "$TMPDIR_TEST/usage.err")" \
		"drainstat: $want (see drainstat --help)"
	expect_eq "$name: nothing on stdout" "$out" ""
}
# glibc argp's hidden options are gone: --HANG slept an hour, and "--H" (for -H)
# abbreviated it; --program-name put its value, raw, in messages
expect_usage "--H" "unknown option '--H'" --H
expect_usage "--HANG" "unknown option '--HANG'" --HANG=1
expect_usage "--program-name" "unknown option '--program-name'" --program-name=x
expect_usage "--program-name with ESC" "unknown option '--program-name'" --program-name $'\e[31mx' -Z
# getopt's own messages echoed raw bytes
expect_usage "ESC in an unknown option" "unknown option '--\\x1b[31mx'" $'--\e[31mx'
expect_usage "ESC as an unknown short option" "unknown option '-\\x1b'" -s$'\e'
expect_usage "ESC after an ambiguous option" "ambiguous option '--pro': --prom, --prom-sites, --prom-cgroup" --pro=$'\e'
expect_usage "ESC after an option without argument" "option --json takes no argument" --json=$'\e'
expect_usage "-d without its argument" "option -d needs SECONDS" -d
expect_usage "--prom without its argument" "option --prom needs FILE" -j --prom
# the ranges as they are: 366 days at most, INTERVAL 10 ms at least
expect_usage "-d past 366 days" \
	"invalid -d '31622401': expected seconds, more than 0 and at most 31622400 (366 days)" -d 31622401
expect_usage "INTERVAL 1e9" \
	"invalid INTERVAL '1e9': expected seconds from 0.01 to 31622400 (366 days)" 1e9
expect_usage "INTERVAL past 366 days" \
	"invalid INTERVAL '31622400.5': expected seconds from 0.01 to 31622400 (366 days)" 31622400.5
expect_usage "INTERVAL below 10 ms" \
	"invalid INTERVAL '0.001': expected seconds from 0.01 to 31622400 (366 days)" 0.001
expect_usage "INTERVAL 1 ns" \
	"invalid INTERVAL '0.000000001': expected seconds from 0.01 to 31622400 (366 days)" 0.000000001 -d 1
expect_usage "-T past 366 days" \
	"invalid -T '31622401s': expected a duration such as 500us or 2ms, from 1ns to 31622400s (366 days)" \
	-T 31622401s
expect_usage "--stuck past 366 days" \
	"invalid --stuck '31622400001ms': expected a duration such as 500ms or 2s, from 1ns to 31622400s (366 days)" \
	--stuck 31622400001ms
# --prom-sites means nothing without --prom
expect_usage "--prom-sites without --prom" "--prom-sites is for the --prom export: add --prom FILE" \
	--prom-sites 5
expect_usage "--prom with -j" "--prom and -j are two different outputs: choose one" --prom x.prom -j
# the smallest INTERVAL runs, and -d below it too
"$DRAINSTAT" 0.01 3 >"$TMPDIR_TEST/min" 2>&1
expect_eq "INTERVAL 0.01: exit 0" $? 0
expect_eq "INTERVAL 0.01: 3 reports" "$(grep -Ec '^[0-9]{2}:[0-9]{2}:[0-9]{2}  ' "$TMPDIR_TEST/min")" 3
"$DRAINSTAT" -d 0.001 >/dev/null 2>&1
expect_eq "-d 0.001: exit 0" $? 0

# a PID that does not exist
"$DRAINSTAT" -p 4194303 -d 1 >/dev/null 2>"$TMPDIR_TEST/err"
expect_eq "no such PID: exit 65" $? 65
check "no such PID: says so" grep -q 'no process with PID 4194303' "$TMPDIR_TEST/err"

# a thread ID: -p takes a process, and says which
"$WORKLOADS/drainforce" -n 1 -c dsthr$$ -s 2000 "$TMPDIR_TEST/data" &
WL=$!
wait_comm $WL dsthr$$
THREAD=$(ls /proc/$WL/task | sort -n | tail -1)
"$DRAINSTAT" -p "$THREAD" -d 1 >/dev/null 2>"$TMPDIR_TEST/err"
expect_eq "thread ID: exit 65" $? 65
check "thread ID: names the process" grep -q "thread of process $WL: use -p $WL" "$TMPDIR_TEST/err"
wait $WL

# SIGTERM during setup is not slept through. drainstat itself, no wrapper's
# shell between (DS), and once its handler is in: SigCgt has SIGTERM (bit 14).
# (A fixed 0.15 s could come before exec under TCG: the shell died of it.)
sigterm_caught() {
	local mask
	mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$mask" ] && (((16#$mask >> 14) & 1))
}
"${DS[@]}" -d 30 >"$TMPDIR_TEST/early" 2>&1 &
EARLY=$!
wait_until 10 sigterm_caught $EARLY
kill -TERM $EARLY
SECONDS=0
wait $EARLY
expect_eq "SIGTERM during setup: exit 0" $? 0
check "SIGTERM during setup: ends at once, not after -d" test $SECONDS -lt 10

# not root: exit 77 with a hint
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$DRAINSTAT" -d 1 >/dev/null 2>"$TMPDIR_TEST/err"
	expect_eq "unprivileged: exit 77" $? 77
	check "unprivileged: says what is needed" grep -q 'CAP_BPF and CAP_PERFMON' "$TMPDIR_TEST/err"
fi

# nothing to report: a process that never drains
sleep 60 &
IDLE=$!
"$DRAINSTAT" -d 1 -p $IDLE >"$TMPDIR_TEST/idle" 2>&1
expect_eq "no drains: exit 0" $? 0
check "no drains: says so" grep -q '^no drains$' "$TMPDIR_TEST/idle"
check "no drains: zero totals" grep -q ': 0 drains, 0 works (0 self), 0 lost$' "$TMPDIR_TEST/idle"

# -p filters out everything else: the workload's drains are not counted
COMM=dsfilt$$
COMM=${COMM:0:15}
"$WORKLOADS/drainforce" -n 50 -c "$COMM" -s 3000 "$TMPDIR_TEST/data" &
WL=$!
wait_comm $WL "$COMM"
start_drainstat "$TMPDIR_TEST/filtered" -p $IDLE
wait $WL
kill -INT $DS_PID
wait_drainstat
check "-p: other processes' drains are not counted" bash -c \
	"! grep -q '$COMM' '$TMPDIR_TEST/filtered' && grep -q '^no drains$' '$TMPDIR_TEST/filtered'"

# SIGTERM: a final report, exit 0, nothing left attached
PROGS_BEFORE=$(prog_ids)
start_drainstat "$TMPDIR_TEST/term"
sleep 0.5
MINE=$(new_prog_ids "$PROGS_BEFORE")
check "programs attached while tracing" test "$(echo "$MINE" | wc -w)" -ge 5
kill -TERM $DS_PID
wait_drainstat
expect_eq "SIGTERM: exit 0" $DS_RC 0
check "SIGTERM: final report" grep -q 'drains, .* works' "$TMPDIR_TEST/term"
check "SIGTERM: no BPF program left" progs_gone "$MINE"

# -d: stops by itself
"$DRAINSTAT" -d 0.5 >"$TMPDIR_TEST/dur" 2>&1
expect_eq "-d 0.5: exit 0" $? 0
check "-d 0.5: one report" test "$(grep -c 'drains, .* works' "$TMPDIR_TEST/dur")" -eq 1

# INTERVAL COUNT: COUNT reports, each with a timestamp
"$DRAINSTAT" 0.3 3 >"$TMPDIR_TEST/int" 2>&1
expect_eq "INTERVAL COUNT: exit 0" $? 0
expect_eq "INTERVAL COUNT: 3 reports" "$(grep -Ec '^[0-9]{2}:[0-9]{2}:[0-9]{2}  ' "$TMPDIR_TEST/int")" 3

# tracefs not mounted (in a mount namespace of the test's own, so the host's stays):
# drainstat mounts it where only it sees it, and it goes away with drainstat,
# also when drainstat is killed
TFS_MOUNTED='grep -c " /sys/kernel/tracing tracefs " /proc/mounts'
unshare -m --propagation private bash -c "
	umount /sys/kernel/tracing 2>/dev/null
	'$DRAINSTAT' -d 0.3 >'$TMPDIR_TEST/tfs' 2>&1; echo \$? >'$TMPDIR_TEST/tfs.rc'
	$TFS_MOUNTED >'$TMPDIR_TEST/tfs.after'
	'$DRAINSTAT' -d 30 >/dev/null 2>&1 & sleep 1; kill -KILL \$!; wait
	$TFS_MOUNTED >'$TMPDIR_TEST/tfs.killed'"
expect_eq "tracefs unmounted: exit 0" "$(cat "$TMPDIR_TEST/tfs.rc")" 0
check "tracefs unmounted: fadvise still traced" bash -c "! grep -q 'fadvise: not traced' '$TMPDIR_TEST/tfs'"
expect_eq "tracefs unmounted: not mounted for anyone else afterwards" "$(cat "$TMPDIR_TEST/tfs.after")" 0
expect_eq "tracefs unmounted: not left mounted by a SIGKILLed drainstat" \
	"$(cat "$TMPDIR_TEST/tfs.killed")" 0

# the BTF facts setup needs, looked up by the kernel itself (a syscall
# program): the same as bpftool reads in the BTF
"$DRAINSTAT" -v -d 0.1 >/dev/null 2>"$TMPDIR_TEST/btf"
bpftool btf dump file /sys/kernel/btf/vmlinux >"$TMPDIR_TEST/btf.dump"
in_btf() { grep -q "$1" "$TMPDIR_TEST/btf.dump" && echo found || echo missing; }
check "-v: the BTF looked up by the kernel" \
	grep -q '^drainstat: BTF looked up by the kernel in [0-9.]* ms' "$TMPDIR_TEST/btf"
expect_eq "-v: lru_add_drain_all as the BTF has it" \
	"$(sed -n 's/.*: lru_add_drain_all \([a-z]*\),.*/\1/p' "$TMPDIR_TEST/btf")" \
	"$(in_btf "FUNC 'lru_add_drain_all' ")"
expect_eq "-v: ipi_send_cpu as the BTF has it" \
	"$(sed -n 's/.*, ipi_send_cpu \([a-z]*\)$/\1/p' "$TMPDIR_TEST/btf")" \
	"$(in_btf "TYPEDEF 'btf_trace_ipi_send_cpu' ")"

# setup's heap for libbpf's load is faulted in beforehand, never asked for
# huge pages: MADV_HUGEPAGE would enlist drainstat with khugepaged, which then
# drains every CPU's LRU batches every 10 s for as long as drainstat runs
check "-v: setup's heap" grep -q "^drainstat: [0-9.]* MB of heap faulted in for libbpf's load$" \
	"$TMPDIR_TEST/btf"
"$DRAINSTAT" -d 10 >/dev/null 2>&1 &
HEAP_PID=$!
sleep 2
expect_eq "setup's heap: no mapping asks for huge pages" \
	"$(grep -c '^VmFlags:.* hg' /proc/$HEAP_PID/smaps)" 0
kill -INT $HEAP_PID
wait $HEAP_PID

kill $IDLE
exit 0
