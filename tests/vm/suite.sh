#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The in-VM suite (run in /mnt by tests/vm/run, $VM_KERNEL naming the kernel):
# drainstat's full, kprobe and tracepoint modes on a real Debian kernel, against
# workloads whose truth is known. Payload: drainstat, drainforce, trigger and
# stuckdrain (static), common.sh, stuck.sh, this file.
set -u
cd /mnt || exit 1
. ./common.sh

DRAINSTAT=/mnt/drainstat # read by start_drainstat
N=100
DATA=/mnt/data

# drainforce waits (-W) until drainstat is tracing, then forces N remote drains
# from CPU 1 on pages batched on CPU 0; drainstat traces only its comm.
forced_run() {
	local mode=$1 comm=df-$1 out=/tmp/forced-$1 wl
	comm=${comm:0:15}
	./drainforce -W -n $N -c "$comm" "$DATA" &
	wl=$!
	if ! wait_comm $wl "$comm"; then
		fail "$mode: drainforce setup"
		return 1
	fi
	# the comm, not -p: the workload's exit would end the run before SIGINT
	if ! start_drainstat "$out" --mode="$mode" -c "$comm"; then
		fail "$mode: drainstat starts" "$(head -c 300 "$out.err")"
		kill $wl
		return 1
	fi
	kill -USR1 $wl
	wait $wl
	kill -INT "$DS_PID"
	wait_drainstat
	expect_eq "$mode: exit 0 after SIGINT" "$DS_RC" 0
	[ "$mode" = auto ] || expect_eq "$mode: the report names the mode" "$(mode_of "$out")" "$mode"
	FORCED_OUT=$out
	FORCED_COMM=$comm
}

# The truth, the same in every mode. Three independent measurements agree
# exactly (drains, DONTNEED escalations, remote works on CPU 0); against N a
# round may rarely fall short: when other folios flush CPU 0's batch first,
# that round's DONTNEED succeeds without any drain (seen once in ~1000 rounds).
check_forced_counts() {
	local mode=$1 out=$FORCED_OUT comm=$FORCED_COMM works self drains
	works=$(site_field "$out" generic_fadvise "$comm" 4)
	self=$(site_field "$out" generic_fadvise "$comm" 5)
	drains=$(site_field "$out" generic_fadvise "$comm" 3)
	expect_range "$mode: drains at generic_fadvise" "$drains" $((N - 2)) $N
	# with 4 CPUs a drain may also find something batched on CPU 2 or 3
	expect_range "$mode: remote works" "$((works - self))" "$drains" $((N + N / 10))
	expect_eq "$mode: remote works on CPU 0, one a drain" "$(cpu_field "$out" 0 2)" "$drains"
	expect_eq "$mode: fadvise DONTNEED calls" "$(fadvise_field "$out" dontneed 2)" $N
	expect_eq "$mode: fadvise escalations, one a drain" "$(fadvise_field "$out" dontneed 3)" "$drains"
	expect_eq "$mode: nothing lost" "$(awk '/drains, .* works/ { print $(NF-1); exit }' "$out")" 0
}

# Entry visible: the wait is exact and covers the works; lock time is there.
check_entry_visible() {
	local mode=$1 out=$FORCED_OUT comm=$FORCED_COMM d r w l
	d=$(to_ns "$(site_field "$out" generic_fadvise "$comm" 6)")
	r=$(to_ns "$(site_field "$out" generic_fadvise "$comm" 9)")
	w=$(to_ns "$(site_field "$out" generic_fadvise "$comm" 12)")
	l=$(to_ns "$(site_field "$out" generic_fadvise "$comm" 14)")
	expect_range "$mode: wait p50 >= dispatch p50 + run p50" "$w" $(((d + r) * 85 / 100)) 9999999999
	expect_range "$mode: lock p50 in (0, 1s)" "$l" 1 999999999
	expect_eq "$mode: no empty drains" "$(site_field "$out" generic_fadvise "$comm" 16)" 0
	expect_eq "$mode: no forced drains" "$(site_field "$out" generic_fadvise "$comm" 17)" 0
	check "$mode: WAIT is exact (no tilde)" grep -q -- '-- WAIT ---' "$out"
}

# trigger ACTION COMM: drainstat (auto mode, everyone) around one trigger run.
site_run() {
	local action=$1 comm=$2 out=/tmp/site-$1
	start_drainstat "$out" -s || { fail "$action: drainstat starts"; return 1; }
	./trigger -c "$comm" "$action"
	check "$action: trigger ran" test $? -eq 0
	kill -INT "$DS_PID"
	wait_drainstat
	SITE_OUT=$out
}

# site_rows FILE COMM: "site drains forced" of each site table row of COMM.
site_rows() {
	awk -v c="$2" '/^SITE / { t = 1; next } t && /^$/ { exit } t && $2 == c { print $1, $3, $17 }' "$1"
}

echo "# kernel $(uname -r) ($VM_KERNEL), $(grep -c ^processor /proc/cpuinfo) CPUs"

# auto picks the best mode this kernel allows: full on Debian's kernels
forced_run auto && check_forced_counts auto
expect_eq "auto: picks full mode" "$(mode_of "$FORCED_OUT")" full
AUTO_MODE=$(mode_of "$FORCED_OUT")
for mode in full kprobe; do
	forced_run $mode && check_forced_counts $mode && check_entry_visible $mode
done
forced_run tracepoint && check_forced_counts tracepoint
check "tracepoint: WAIT~ marks the lower bound" grep -q -- '-- WAIT~ --' "$FORCED_OUT"

# the other call sites, really triggered and attributed
site_run compact dscompact
rows=$(site_rows "$SITE_OUT" dscompact)
echo "# compact: $rows"
check "compact_memory: a drain at the compaction site" \
	grep -qE '^(sysctl_compaction_handler|compact_nodes|compaction_proactiveness_sysctl_handler) [1-9]' <<<"$rows"

site_run move_pages dsmove
rows=$(site_rows "$SITE_OUT" dsmove)
echo "# move_pages: $rows"
check "move_pages: a forced drain from do_pages_move or kernel_move_pages" \
	grep -qE '^(do_pages_move|kernel_move_pages) 1 1$' <<<"$rows"

if [ "${VM_KERNEL%-rt}" = 6.12 ]; then
	site_run drop_caches dsdrop
	rows=$(site_rows "$SITE_OUT" dsdrop)
	echo "# drop_caches: $rows"
	check "drop_caches: a drain at drop_caches_sysctl_handler" \
		grep -qE '^drop_caches_sysctl_handler [1-9]' <<<"$rows"
fi
# A drain held by a SCHED_FIFO spinner, seen while it is stuck, in every mode
# (tests/lib/stuck.sh).
. ./stuck.sh
stuck_vm_params
if stuck_setup; then
	echo "# fair server turned off: $FAIR_SERVER_OFF"
	for mode in full kprobe tracepoint; do
		mkdir -p /tmp/stuck-$mode
		stuck_suite $mode /tmp/stuck-$mode
	done
	# the example of the README and the man page
	grep -B1 -A4 '^STUCK' /tmp/stuck-full/text | head -n 12 | sed 's/^/# /'
else
	fail "stuck: RT throttling off"
fi
stuck_restore

echo "# auto mode on $VM_KERNEL: $AUTO_MODE"
