#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In a VM of many CPUs (tests/vm/run --smp 20 --append possible_cpus=32): wide
# drains, one drain hitting every CPU, in full, kprobe and tracepoint modes.
# Payload: drainstat and widedrain (static), common.sh, this file.
#
# Two CPUs go offline first, so that the online CPUs' numbers run past their
# count, and the possible CPUs outnumber both: a map sized per CPU by any count
# but the possible CPUs' would miss the highest CPUs' works.
set -u
cd /mnt || exit 1
. ./common.sh

DRAINSTAT=/mnt/drainstat # read by start_drainstat
R=30
DATA=/mnt/wide
CPUS=/sys/devices/system/cpu

# The number of CPUs in a CPU list ("0-4,7-19").
count_cpus() {
	echo "$1" | tr ',' '\n' | awk -F- '{ n += NF == 2 ? $2 - $1 + 1 : 1 } END { print n }'
}

# The CPUs of a CPU list, one a line.
each_cpu() {
	echo "$1" | tr ',' '\n' | awk -F- '{ for (c = $1; c <= (NF == 2 ? $2 : $1); c++) print c }'
}

# mismatches FILE CPULIST WANT: the CPUs of CPULIST whose works in FILE's CPU
# table are not WANT, as "CPU=works"; nothing when all are.
mismatches() {
	local c got
	for c in $(each_cpu "$2"); do
		got=$(cpu_field "$1" "$c" 2)
		[ "$got" = "$3" ] || printf '%s=%s ' "$c" "${got:-none}"
	done
}

# wide_run MODE OUT [DRAINSTAT OPTION...]: drainstat in MODE, only the comm of
# widedrain's rounds, around R wide drains from CPU 0. Sets READERS (a CPU list).
wide_run() {
	local mode=$1 out=$2 comm=wd-$1
	shift 2
	if ! start_drainstat "$out" -v --mode="$mode" -c "$comm" "$@"; then
		fail "$mode: drainstat starts" "$(head -c 300 "$out.err")"
		return 1
	fi
	READERS=$(./widedrain -n $R -b 0 -c "$comm" "$DATA")
	check "$mode: widedrain ran ($READERS)" test $? -eq 0
	kill -INT "$DS_PID"
	wait_drainstat
	expect_eq "$mode: exit 0 after SIGINT" "$DS_RC" 0
	WIDE_COMM=$comm
}

# Exact per CPU: every reader CPU one work a round, the dropper's CPU none.
check_wide_counts() {
	local mode=$1 out=$2 comm=$WIDE_COMM nr
	nr=$(count_cpus "$READERS")
	expect_eq "$mode: the report names the mode" "$(mode_of "$out")" "$mode"
	expect_eq "$mode: maps sized for the possible CPUs" \
		"$(sed -n 's/.* maps per CPU for \([0-9]*\) possible CPUs.*/\1/p' "$out.err")" "$NR_POSSIBLE"
	expect_eq "$mode: drains at generic_fadvise, one a round" \
		"$(site_field "$out" generic_fadvise "$comm" 3)" $R
	expect_eq "$mode: works, one a reader CPU a round" \
		"$(site_field "$out" generic_fadvise "$comm" 4)" $((R * nr))
	expect_eq "$mode: each of the $nr reader CPUs ran $R works" "$(mismatches "$out" "$READERS" $R)" ""
	expect_eq "$mode: the dropper's CPU 0 ran none" "$(cpu_field "$out" 0 2)" ""
	expect_eq "$mode: CPU rows, one a reader CPU" \
		"$(awk 'f && /^[0-9]/ { n++ } /^CPU/ { f = 1 } END { print n + 0 }' "$out")" "$nr"
	expect_eq "$mode: fadvise escalations, one a round" "$(fadvise_field "$out" dontneed 3)" $R
	expect_eq "$mode: nothing lost" "$(awk '/drains, .* works/ { print $(NF-1); exit }' "$out")" 0
}

# The default CPU table above 16 CPUs: the costliest, then "rest" for the others.
check_summary() {
	local out=$1 nr shown rest_works rest_cpus
	nr=$(count_cpus "$READERS")
	check "default view: the table says what it shows" \
		grep -q "^$nr CPUs with works: the 5 largest by TOTAL and by max dispatch" "$out"
	shown=$(awk 'f && /^[0-9]/ { n++ } /^CPU/ { f = 1 } END { print n + 0 }' "$out")
	rest_works=$(awk '/^rest / { print $2 }' "$out")
	rest_cpus=$(awk '/^rest / { print $(NF-1) }' "$out")
	expect_range "default view: 5 to 10 CPU rows" "$shown" 5 10
	expect_eq "default view: rest sums up the other CPUs" "$rest_cpus" $((nr - shown))
	expect_eq "default view: the rows' works and rest's add up" \
		$(($(awk 'f && /^[0-9]/ { n += $2 } /^CPU/ { f = 1 } END { print n + 0 }' "$out") + \
			${rest_works:-0})) $((R * nr))
}

echo "wide: $(uname -r), $(nproc) CPUs online of $(cat $CPUS/possible) possible"
echo 0 >$CPUS/cpu5/online && echo 0 >$CPUS/cpu6/online
ONLINE=$(cat $CPUS/online)
NR_POSSIBLE=$(count_cpus "$(cat $CPUS/possible)")
check "CPUs 5 and 6 offline: online $ONLINE" test "$ONLINE" = "0-4,7-19"
check "more possible CPUs ($NR_POSSIBLE) than online" test "$NR_POSSIBLE" -gt "$(count_cpus "$ONLINE")"

for mode in full kprobe tracepoint; do
	wide_run "$mode" "/tmp/wide-$mode" --all-cpus && check_wide_counts "$mode" "/tmp/wide-$mode"
done

wide_run tracepoint /tmp/wide-default && check_summary /tmp/wide-default
wide_run tracepoint /tmp/wide-filter -C 17-19 &&
	expect_eq "-C 17-19: those CPUs only, $R works each" \
		"$(awk 'f && /^[0-9]/ { printf "%s=%s ", $1, $2 } /^CPU/ { f = 1 }' /tmp/wide-filter)" \
		"17=$R 18=$R 19=$R "
exit 0
