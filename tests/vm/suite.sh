#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The in-VM suite (run in /mnt by tests/vm/run, $VM_KERNEL naming the kernel;
# "suite.sh preempt", "suite.sh stuck" and "suite.sh pileup" run one part of it):
# drainstat's full, kprobe and tracepoint modes on a real Debian kernel, against
# workloads whose truth is known, and the other call sites (compaction,
# move_pages, migrate_pages, drop_caches). Payload: drainstat, drainforce, trigger and
# stuckdrain (static), common.sh, stuck.sh, this file.
set -u
cd /mnt || exit 1
. ./common.sh

DRAINSTAT=/mnt/drainstat # read by start_drainstat
N=100
DATA=/mnt/data

# drainforce waits (-W) until drainstat is tracing, then forces N remote drains
# from CPU 1 on pages batched on CPU 0; drainstat traces only its comm. Two
# more drainstats beside it count only CPU 0 (-C 0: OUT.c0) and only CPU 3
# (OUT.c3), where the drains rarely go (check_filtered).
forced_run() {
	local mode=$1 comm=df-$1 out=/tmp/forced-$1 wl c0 c3 rc
	comm=${comm:0:15}
	./drainforce -W -n $N -c "$comm" "$DATA" &
	wl=$!
	if ! wait_comm $wl "$comm"; then
		fail "$mode: drainforce setup"
		return 1
	fi
	# the comm, not -p: the workload's exit would end the run before SIGINT
	if ! { start_drainstat "$out.c0" --mode="$mode" -c "$comm" -C 0 && c0=$DS_PID &&
		start_drainstat "$out.c3" --mode="$mode" -c "$comm" -C 3 && c3=$DS_PID &&
		start_drainstat "$out" -v --mode="$mode" -c "$comm"; }; then
		fail "$mode: drainstat starts" "$(cat "$out"*.err | head -c 300)"
		kill $wl ${c0:-} ${c3:-}
		return 1
	fi
	kill -USR1 $wl
	wait $wl
	kill -INT "$DS_PID" "$c0" "$c3"
	wait_drainstat
	rc=$DS_RC
	for DS_PID in $c0 $c3; do
		wait_drainstat
		expect_eq "$mode: -C drainstat ($DS_PID) exit 0 after SIGINT" "$DS_RC" 0
	done
	expect_eq "$mode: exit 0 after SIGINT" "$rc" 0
	[ "$mode" = auto ] || expect_eq "$mode: the report names the mode" "$(mode_of "$out")" "$mode"
	FORCED_OUT=$out
	FORCED_COMM=$comm
}

# The truth, the same in every mode. Drains and DONTNEED escalations agree
# exactly; against N a round may rarely fall short: when another task's
# lru_add_drain() on CPU 0 (a process exit) flushes its batch first, that
# round's DONTNEED succeeds without any drain (seen once in ~1000 rounds).
# The same flush between the DONTNEED's failed first pass and the drain's look
# at CPU 0 leaves a drain with no work there, its works on the CPUs that still
# hold something (per-CPU buffer heads, on 4 CPUs: seen once, arm64 6.1, kprobe
# mode, 99 works on CPU 0 for 100 drains): so CPU 0's works may fall short of
# the drains by as much.
check_forced_counts() {
	local mode=$1 out=$FORCED_OUT comm=$FORCED_COMM works self drains
	works=$(site_field "$out" generic_fadvise "$comm" 4)
	self=$(site_field "$out" generic_fadvise "$comm" 5)
	drains=$(site_field "$out" generic_fadvise "$comm" 3)
	expect_range "$mode: drains at generic_fadvise" "$drains" $((N - 2)) $N
	# with 4 CPUs a drain may also find something batched on CPU 2 or 3
	expect_range "$mode: remote works" "$((works - self))" "$drains" $((N + N / 10))
	expect_range "$mode: remote works on CPU 0, one a drain" "$(cpu_field "$out" 0 2)" \
		$((drains - 2)) "$drains"
	expect_eq "$mode: fadvise DONTNEED calls" "$(fadvise_field "$out" dontneed 2)" $N
	expect_eq "$mode: fadvise escalations, one a drain" "$(fadvise_field "$out" dontneed 3)" "$drains"
	expect_eq "$mode: nothing lost" "$(awk '/drains, .* works/ { print $(NF-1); exit }' "$out")" 0
	check_stack_walks "$mode" "$out" "$drains"
}

# -C in every mode: a drain counts when it queued a work to a CPU of the
# list (one a CPU at most), with only those works; a drain whose works went
# elsewhere is not counted, and never counted empty. The unfiltered run's
# works on that CPU are the truth.
check_filtered() {
	local mode=$1 out=$FORCED_OUT comm=$FORCED_COMM cpu want got
	for cpu in 0 3; do
		want=$(cpu_field "$out" $cpu 2)
		got=$(site_field "$out.c$cpu" generic_fadvise "$comm" 3)
		expect_eq "$mode -C $cpu: drains, those with a work on CPU $cpu" "${got:-0}" "${want:-0}"
		got=$(site_field "$out.c$cpu" generic_fadvise "$comm" 4)
		expect_eq "$mode -C $cpu: the site's works, CPU $cpu's" "${got:-0}" "${want:-0}"
		expect_eq "$mode -C $cpu: no works counted on other CPUs" \
			"$(cpu_works_but "$out.c$cpu" $cpu)" 0
		[ "$(mode_of "$out")" = tracepoint ] && continue
		got=$(site_field "$out.c$cpu" generic_fadvise "$comm" 16)
		expect_eq "$mode -C $cpu: no drain counted empty" "${got:-0}" 0
	done
}

# check_stack_walks MODE OUT DRAINS: the drains of one comm from one caller walk
# the kernel stack once. Where entry is visible, the caller is its return
# address, and the local drains (generic_fadvise's, the exit's) add one walk per
# caller; in tracepoint mode, it is the DONTNEED call the drain came in.
check_stack_walks() {
	local walks
	walks=$(stack_walks "$2.err")
	echo "# $1 ($(mode_of "$2")): $walks kernel stacks walked for $3 drains"
	if [ "$(mode_of "$2")" = tracepoint ]; then
		expect_eq "$1: kernel stacks walked" "$walks" 1
	else
		expect_range "$1: kernel stacks walked, drains and local drains" "$walks" 2 8
	fi
}

# stacks_run MODE: the -s and -j stacks of forced drains in MODE (two
# drainstats on one drainforce). No frame is in BPF code (a program or a
# trampoline: drainstat's own were the first frames of 7.3's full-mode stacks,
# the trampoline named after a program it is not in), and each stack of the
# comm starts at the traced function (the drain's or the local drain's, in
# kprobe mode; the workqueue tracepoint's caller in tracepoint mode) or its
# caller (full mode: a stack taken at fentry has no frame of the function).
all_match() { ! grep -qvE "$1" <<<"$2"; } # all_match REGEX TEXT: every line
no_match() { ! grep -qE "$1" "$2"; }       # no_match REGEX FILE: no line
STACK_TOP='(generic_fadvise|__lru_add_drain_all|lru_add_drain_all|lru_add_drain|queue_work_on|__queue_work)(\.[a-z]+\.[0-9]+)*\+0x'
stacks_run() {
	local mode=$1 comm=dstk-$1 out=/tmp/stacks-$1 wl jpid tops
	comm=${comm:0:15}
	./drainforce -W -n 10 -c "$comm" "$DATA" &
	wl=$!
	if ! wait_comm $wl "$comm"; then
		fail "stacks $mode: drainforce setup"
		return 1
	fi
	"$DRAINSTAT" -v -j --mode="$mode" -c "$comm" >"$out.json" 2>"$out.json.err" &
	jpid=$!
	if ! wait_attached "$out.json.err" || ! start_drainstat "$out" -s --mode="$mode" -c "$comm"; then
		fail "stacks $mode: drainstat starts" "$(head -c 300 "$out.json.err" "$out.err")"
		kill $wl $jpid
		return 1
	fi
	kill -USR1 $wl
	wait $wl
	kill -INT "$DS_PID" $jpid
	wait_drainstat
	wait $jpid
	# text: the first frame of each stack under the comm's rows; JSON: every first frame
	tops=$(awk -v c="$comm" '/^[^ ]/ { mine = $2 == c } mine && /^    stack / { getline; print $1 }' "$out")
	echo "# stacks $mode: -s first frames: $(sort <<<"$tops" | uniq -c | xargs)"
	check "stacks $mode: -s has the comm's stacks" test -n "$tops"
	check "stacks $mode: -s stacks start at the traced function or its caller" \
		all_match "^$STACK_TOP" "$tops"
	check "stacks $mode: -s names no BPF program or trampoline" \
		no_match '^      (bpf_prog_|bpf_trampoline)' "$out"
	tops=$(grep -o '"frames":\["[^"]*"' "$out.json" | sed 's/.*\["//; s/"$//')
	echo "# stacks $mode: -j first frames: $(sort <<<"$tops" | uniq -c | xargs)"
	check "stacks $mode: -j has stacks" test -n "$tops"
	check "stacks $mode: -j stacks start at the traced function or its caller" \
		all_match "^$STACK_TOP" "$tops"
	check "stacks $mode: -j names no BPF program or trampoline" \
		no_match '"(bpf_prog_|bpf_trampoline)' "$out.json"
	# no kernel of Debian's has the Per-CPU Work helpers: never a CPU drained
	# in place, where the run sees them (full and kprobe modes) or not
	check "stacks $mode: -j no CPU drained in place" grep -q ',"in_place":0,"local_drains":' "$out.json"
	# they are seen where lru_add_drain_cpu() is hooked: with every hook
	# attached
	if [ "$mode" = tracepoint ]; then
		:
	elif grep -q 'not hooked)' "$out.json"; then
		echo "# stacks $mode: a hook not attached: $(grep -o '"cannot_see":"[^"]*"' "$out.json" | head -1)"
	else
		check "stacks $mode: -j sees CPUs drained in place" \
			grep -q '"local_drains":true,"in_place":true}' "$out.json"
	fi
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
	check_own "$mode"
}

# Since 6.18 a drain drains its caller's CPU before the mutex (OWN); each
# forced drain queued a work all the same (not OWN-ONLY). Before, no own drain.
check_own() {
	local mode=$1 out=$FORCED_OUT comm=$FORCED_COMM own_only own
	own_only=$(site_field "$out" generic_fadvise "$comm" 18)
	own=$(site_field "$out" generic_fadvise "$comm" 19)
	echo "# $mode: OWN-ONLY $own_only, OWN p50 $own, SELF $(site_field "$out" generic_fadvise "$comm" 5)"
	expect_eq "$mode: no drain counted OWN-ONLY (each queued a work)" "$own_only" 0
	if [ "$LOCAL_FIRST" = 1 ]; then
		expect_range "$mode: 6.18+: the own local drain timed (OWN p50, ns)" "$(to_ns "$own")" \
			1 999999999
	else
		expect_eq "$mode: before 6.18: no own local drain" "$own" -
	fi
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

# site_rows FILE COMM: "site drains forced" of each site table row of COMM, in
# every report of FILE (with INTERVAL, each covers its own).
site_rows() {
	without_cgroup "$1" |
		awk -v c="$2" '/^SITE / { t = 1; next } t && /^$/ { t = 0 } t && $2 == c { print $1, $3, $17 }'
}

# preempt_run ACTION MODE [INTERVAL]: drainstat on CPU 0 around four trigger
# processes there, PREEMPT_N drains each. Under full preemption (6.12-rt,
# preempt=full) the kernel skips a program while another run of it is on that
# CPU, preempted: in full mode, a run of the same fentry program (before the
# twins, 1190 of 1200 such drains were seen, 0 lost were said, and a drain
# whose exit went unseen stayed in flight); in kprobe mode, any process inside
# a BPF map syscall (bpf_prog_active), such as drainstat reading its maps for a
# report every INTERVAL. Each drain is counted or its loss shown: with nothing
# skipped, drains = calls and nothing in flight at the end.
PREEMPT_N=150
preempt_run() {
	local action=$1 mode=$2 comm=dspre out=/tmp/preempt calls=$((4 * PREEMPT_N)) pids=() i
	local drains skipped twins partial ds=/tmp/drainstat-cpu0
	printf '#!/bin/sh\nexec taskset -c 0 %s "$@"\n' "$DRAINSTAT" >$ds
	chmod +x $ds
	if ! DRAINSTAT=$ds start_drainstat "$out" -v --mode="$mode" -c $comm ${3:-}; then
		fail "preempt $mode: drainstat starts" "$(head -c 300 "$out.err")"
		return 1
	fi
	for i in 1 2 3 4; do
		taskset -c 0 ./trigger -c $comm -n $PREEMPT_N "$action" &
		pids+=($!)
	done
	wait "${pids[@]}"
	kill -INT "$DS_PID"
	wait_drainstat
	expect_eq "preempt $mode: exit 0" "$DS_RC" 0
	# every report's rows and counters: with INTERVAL, each covers its own
	drains=$(site_rows "$out" $comm | awk '{ n += $2 } END { print n + 0 }')
	skipped=$(awk '/^lost skipped: / { n += $3 } END { if (n) print n }' "$out")
	twins=$(awk '/^note twin_skips: / { n += $3 } END { print n + 0 }' "$out")
	partial=$(awk '/^note partial_waits: / { n += $3 } END { print n + 0 }' "$out")
	echo "# preempt $mode${3:+ every ${3}s} ($(mode_of "$out")): $action, $calls calls on CPU 0:" \
		"$drains drains ($partial their entry unseen), skips $twins covered by a twin, ${skipped:-0} not," \
		"$(stack_walks "$out.err") kernel stacks walked"
	# not in the fadvise path: the caller's return address names these drains;
	# four processes of one comm may each walk its first drain (and local
	# drain) before one of them has named the site; a drain whose entry went
	# unseen has no return address: its stack at its first queue names it (9
	# such of 600 in kprobe mode, 12 walks, on a loaded host)
	expect_range "preempt $mode: kernel stacks walked, $drains drains" "$(stack_walks "$out.err")" \
		1 $((12 + partial))
	if [ -z "$skipped" ]; then
		expect_eq "preempt $mode: every drain counted" "$drains" $calls
		expect_eq "preempt $mode: nothing in flight at the end" \
			"$(tac "$out" | awk '/drains, .* works/ { exit } 1' | grep -c '^IN FLIGHT')" 0
	else
		expect_range "preempt $mode: every drain counted or skipped" "$drains" \
			$((calls - skipped)) $calls
	fi
}

# suite.sh preempt: only the drains under preemption, on a kernel booted with
# preempt=full (tests/run), where fentry programs run preemptible as on -rt
if [ "${1:-}" = preempt ]; then
	echo "# kernel $(uname -r) ($VM_KERNEL): $(grep -o 'preempt=[a-z]*' /proc/cmdline)," \
		"sched/preempt: $(cat /sys/kernel/debug/sched/preempt 2>/dev/null)"
	preempt_run drop_caches full
	preempt_run drop_caches kprobe 0.01
	exit 0
fi

echo "# kernel $(uname -r) ($VM_KERNEL), $(grep -c ^processor /proc/cpuinfo) CPUs"
# the kernel's version as a number, from its release: 601, 612, 703 (7.3)
KVER=$(uname -r | awk -F'[.-]' '{ print $1 * 100 + $2 }')
# 6.18 and later: __lru_add_drain_all() drains the caller's CPU first
LOCAL_FIRST=0
[ "$KVER" -ge 618 ] && LOCAL_FIRST=1

# Full mode needs BPF trampolines: arm64's come with ftrace direct calls,
# which Debian's arm64 6.1 is built without (CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
# unset; 6.12 sets it): fentry attaches there with ENOTSUPP.
FULL_MODES="full kprobe"
BEST=full
if [ "$VM_KERNEL" = arm64-6.1 ]; then
	FULL_MODES=kprobe
	BEST=kprobe
	"$DRAINSTAT" --mode=full -d 0.1 >/tmp/full-refused 2>&1
	expect_eq "full mode refused: exit 73" $? 73
	check "full mode refused: the reason named" grep -q 'ENOTSUPP: arm64 kernels without ftrace direct calls' /tmp/full-refused
fi

# A drain held by a SCHED_FIFO spinner, seen while it is stuck, in every mode
# (tests/lib/stuck.sh).
stuck_all() {
	. ./stuck.sh
	stuck_vm_params
	if stuck_setup; then
		echo "# fair server turned off: $FAIR_SERVER_OFF"
		for mode in $FULL_MODES tracepoint; do
			mkdir -p /tmp/stuck-$mode
			stuck_suite $mode /tmp/stuck-$mode
		done
		# a normal task's stall, where entries are seen and where not; not
		# on PREEMPT_RT, whose threaded interrupts switch the spinner out
		# every few ms: its run since then is under 100 ms, and drainstat
		# says "unknown" (6.12-rt: 1 report of 6 said normal_task in a
		# clean-clone run, none of the JSON run's)
		if uname -v | grep -q PREEMPT_RT; then
			echo "# normal: not on PREEMPT_RT (a spinner's run there is cut every few ms)"
		else
			for mode in $BEST tracepoint; do
				stuck_normal $mode /tmp/stuck-$mode
			done
		fi
		# the example of the README and the man page
		grep -B1 -A4 '^STUCK' /tmp/stuck-$BEST/text | head -n 12 | sed 's/^/# /'
	else
		fail "stuck: RT throttling off"
	fi
	stuck_restore
}

# suite.sh stuck: the stuck drain alone (run many times over: issue 29, item 10)
if [ "${1:-}" = stuck ]; then
	stuck_all
	exit 0
fi

# A pile-up of callers on the drain mutex in kprobe mode (tests/lib/stuck.sh,
# issue 39): the kretprobes made in tracefs miss no exit; the PMU's, with the
# kernel's default instances, miss some, counted where the kernel tells them
# (6.7 and later). About 25 s a run under TCG.
pileup_all() {
	. ./stuck.sh
	stuck_vm_params
	if stuck_setup; then
		mkdir -p /tmp/pileup
		stuck_pileup kprobe /tmp/pileup/tracefs
		if [ "$KVER" -ge 607 ]; then
			PILEUP_PMU=1 stuck_pileup kprobe /tmp/pileup/pmu
		fi
		stuck_events_on_kills
	else
		fail "pile-up: RT throttling off"
	fi
	stuck_restore
}

# suite.sh pileup: the pile-up alone
if [ "${1:-}" = pileup ]; then
	pileup_all
	exit 0
fi

# auto picks the best mode this kernel allows: full on Debian's kernels but arm64's 6.1
forced_run auto && check_forced_counts auto && check_filtered auto
expect_eq "auto: picks $BEST mode" "$(mode_of "$FORCED_OUT")" $BEST
AUTO_MODE=$(mode_of "$FORCED_OUT")
for mode in $FULL_MODES; do
	forced_run $mode && check_forced_counts $mode && check_entry_visible $mode &&
		check_filtered $mode
done
forced_run tracepoint && check_forced_counts tracepoint && check_filtered tracepoint
check "tracepoint: WAIT~ marks the lower bound" grep -q -- '-- WAIT~ --' "$FORCED_OUT"
for mode in $FULL_MODES tracepoint; do
	stacks_run $mode
done

# kretprobes return through their own trampoline or rethook's, never both:
# kallsyms names the one this kernel has; kprobe mode's scan of it stops at
# the first it finds, which must be that one
trampolines() {
	sed -n 's/^drainstat: kretprobes return through \([^ ]*\) at .*/\1/p' "$1"
}
KALLSYMS_TRAMPOLINES=$(awk '$3 == "__kretprobe_trampoline" || $3 == "arch_rethook_trampoline" {
	print $3 }' /proc/kallsyms | sort -u)
expect_eq "one kretprobe trampoline in kallsyms" "$(wc -w <<<"$KALLSYMS_TRAMPOLINES")" 1
expect_eq "kprobe: the scan found that trampoline" "$(trampolines /tmp/forced-kprobe.err)" \
	"$KALLSYMS_TRAMPOLINES"

# the other call sites, really triggered and attributed
site_run compact dscompact
rows=$(site_rows "$SITE_OUT" dscompact)
echo "# compact: $rows"
check "compact_memory: a drain at the compaction site" \
	grep -qE '^(sysctl_compaction_handler|compact_nodes|compaction_proactiveness_sysctl_handler) [1-9]' <<<"$rows"

site_run move_pages dsmove
rows=$(site_rows "$SITE_OUT" dsmove)
echo "# move_pages: $rows"
# (arm64's 6.12 inlines both into the syscall: no symbol for either)
check "move_pages: a forced drain from do_pages_move, kernel_move_pages or the syscall" \
	grep -qE '^(do_pages_move|kernel_move_pages|__arm64_sys_move_pages) 1 1$' <<<"$rows"

site_run migrate_pages dsmigrate
rows=$(site_rows "$SITE_OUT" dsmigrate)
echo "# migrate_pages: $rows"
check "migrate_pages: a forced drain from do_migrate_pages" \
	grep -qE '^do_migrate_pages 1 1$' <<<"$rows"

if [ "$KVER" -ge 612 ]; then
	site_run drop_caches dsdrop
	rows=$(site_rows "$SITE_OUT" dsdrop)
	echo "# drop_caches: $rows"
	check "drop_caches: a drain at drop_caches_sysctl_handler" \
		grep -qE '^drop_caches_sysctl_handler [1-9]' <<<"$rows"
	# lru_add_drain_all() (6.1's drop_caches does not drain)
	preempt_run drop_caches full
	preempt_run drop_caches kprobe 0.01
else
	# lru_cache_disable()
	[ "$BEST" = full ] && preempt_run move_pages full
	preempt_run move_pages kprobe 0.01
fi
stuck_all
pileup_all

# Cgroups named by the kernel (a cgroup iterator, 6.1 and later; issue 40):
# drains from a cgroup four levels deep, with names of 200 bytes, are named
# whole, and no report walks the tree. Last: with cgroup2 mounted, drainstat
# keys the sites by cgroup too, which the checks before do not expect.
cgname_run() {
	local cg=/sys/fs/cgroup comm=dscgname out=/tmp/cgname name path= i
	if ! grep -q ' - cgroup2 ' /proc/self/mountinfo && ! mount -t cgroup2 cgroup2 $cg; then
		fail "cgname: cgroup2 mounted at $cg"
		return 1
	fi
	name=$(printf '%0200d' 0)
	for i in 1 2 3 4; do
		path=$path/ds$i$name
	done
	mkdir -p $cg$path
	"$DRAINSTAT" -v -j -c $comm >$out.json 2>$out.err &
	DS_PID=$!
	if wait_attached $out.err; then
		(echo "$BASHPID" >$cg$path/cgroup.procs && exec ./drainforce -n 5 -c $comm "$DATA")
		kill -INT $DS_PID
	else
		fail "cgname: drainstat starts" "$(head -c 300 $out.err)"
		kill $DS_PID
	fi
	wait_drainstat
	expect_eq "cgname: exit 0 after SIGINT" "$DS_RC" 0
	check "cgname: the drains' cgroup named whole (4 levels of 202 bytes)" \
		grep -q "\"comm\":\"$comm\",\"cgroup\":\"$path\"," $out.json
	check "cgname: named by the kernel, no walk of the tree" \
		grep -qE 'cgroups: [1-9][0-9]* named by the kernel, 0 walks' $out.err
	grep 'named by the kernel' $out.err | sed 's/^/# /'
	for i in 4 3 2 1; do
		rmdir $cg$path
		path=${path%/*}
	done
	umount $cg
}
cgname_run

echo "# auto mode on $VM_KERNEL: $AUTO_MODE"
