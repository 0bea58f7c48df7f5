#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Faults and bad input, each with one clear line on stderr and its documented exit
# code: malformed option values, kernels without what drainstat needs (simulated in
# a mount namespace of the test's own, through the very paths drainstat reads),
# ftrace refused, sysctls toggled, partial privileges.
set -u
. tests/host/lib.sh

# expect_fail CODE NAME CMD...: CMD exits CODE with one "drainstat: " line on stderr
# (getopt's own complaint may add argp's "Try ..." hint) holding no raw control byte.
expect_fail() {
	local code=$1 name=$2 err rc
	shift 2
	err=$(timeout -s KILL 30 "$@" 2>&1 >/dev/null)
	rc=$?
	FAIL_ERR=$err
	if [ $rc -ne "$code" ]; then
		fail "$name" "exit $rc, want $code; stderr '$err'"
	elif ! head -1 <<<"$err" | grep -q '^drainstat: .'; then
		fail "$name" "stderr '$err'"
	elif [ "$(grep -vc '^Try ' <<<"$err")" -ne 1 ]; then
		fail "$name" "more than one line: '$err'"
	elif LC_ALL=C grep -q '[[:cntrl:]]' <<<"$err"; then
		fail "$name" "a raw control byte on stderr"
	else
		pass "$name"
	fi
}
bad_args() { expect_fail 64 "bad arguments: $(printf '%q ' "$@")" "$DRAINSTAT" "$@"; }

# every option, malformed: negative, overflowing, garbage suffixes, empty
for v in 0 -1 '' 1x ' 1' 1e999 nan inf 0x10 99999999999999999999 31622401 1.2.3 .; do
	bad_args -d "$v"
	bad_args "$v"
done
for v in 0 -1 '' abc 1x 99999999999 4294967297 ' 12' +1; do
	bad_args -p "$v"
done
for v in 0 -1 '' 1x 99999999999999999999 ' 3'; do
	bad_args 1 "$v"
done
for v in '' -1 1-0 1024 0-1024 0,,1 a 0- , 1-2-3 99999999999999999999 $'0\n1'; do
	bad_args -C "$v"
done
bad_args -c ''
bad_args -c 0123456789abcdef
for v in 5 0us -1ms 1xs '' ms 1.5.5ms 99999999999999999999s 1e3us nanms; do
	bad_args -T "$v"
done
for v in 5 0s -1ms '' 1.5.5s 99999999999999999999s; do
	bad_args --stuck "$v"
done
for v in 0 -1 1001 x '' 99999999999999999999; do
	bad_args --prom-sites "$v"
done
for v in 0 -1 65537 x ''; do
	bad_args --max-sites "$v"
done
for v in 0 262145 x ''; do
	bad_args --max-stacks "$v"
done
bad_args --mode bogus
bad_args --mode ''
bad_args --prom ''
bad_args 1 2 3
bad_args --no-such-option
bad_args -Z
bad_args -d
bad_args --prom
# conflicting options
bad_args --prom x.prom -j
# hostile values are shown escaped (expect_fail checks there is no raw control byte)
bad_args -d $'1\e[31m\nx'
bad_args -c $'0123456789abcde\e'

# a PID that does not exist, a thread, a cgroup that is not one
expect_fail 65 "no such PID: exit 65" "$DRAINSTAT" -p 4194303 -d 1
expect_fail 66 "no such cgroup: exit 66" "$DRAINSTAT" --cgroup /sys/fs/cgroup/no-such -d 1
expect_fail 66 "not a cgroup v2 directory: exit 66" "$DRAINSTAT" --cgroup /tmp -d 1
expect_fail 66 "a hostile cgroup path: escaped" "$DRAINSTAT" --cgroup $'/nope/\e]0;x\a\n' -d 1

# the export path: missing directory, read-only directory, a symlink at the
# temp file's place (the export is in test_export.sh; a full disk here)
expect_fail 74 "--prom in a missing directory: exit 74" \
	"$DRAINSTAT" --prom "$TMPDIR_TEST/none/x.prom" -d 1
mkdir "$TMPDIR_TEST/ro"
mount -t tmpfs -o ro,size=64k none "$TMPDIR_TEST/ro"
expect_fail 74 "--prom in a read-only directory: exit 74" \
	"$DRAINSTAT" --prom "$TMPDIR_TEST/ro/x.prom" -d 1
umount "$TMPDIR_TEST/ro"
# (the temp names end in 64 random bits: a plant at drainstat's own pid's
# names, old style and new, collides with none; test_untrusted_export.sh
# plants as a user). The shell plants at its own pid, then becomes drainstat.
mkdir "$TMPDIR_TEST/sym"
SYM=$TMPDIR_TEST/sym/.x.prom.tmp
bash -c 'ln -s /etc/passwd "$1.$$" && ln -s /etc/passwd "$1.$$.0000000000000000" &&
	exec "${@:2}"' plant "$SYM" "$DRAINSTAT" --prom "$TMPDIR_TEST/sym/x.prom" -d 0.2 >/dev/null 2>&1
expect_eq "--prom beside temp symlinks planted at its pid: exit 0" $? 0
check "--prom beside temp symlinks planted at its pid: written" \
	grep -q '^drainstat_info{' "$TMPDIR_TEST/sym/x.prom"
expect_eq "--prom beside temp symlinks planted at its pid: both untouched" \
	"$(find "$TMPDIR_TEST/sym" -name '.x.prom.tmp.*' -type l -lname /etc/passwd | wc -l)" 2
# (a symlink at the path itself, and what else is not a regular file: test_harm.sh)
# a full filesystem: at start, exit 74; in flight, one message until it works
# again, the previous export stays whole and the run goes on; a final export
# that fails ends the run with 74
# (room for two exports, the file and its next temp file, once the filler
# goes: an export is some 10 KB, more where the mode sees more)
mkdir "$TMPDIR_TEST/full"
mount -t tmpfs -o size=256k none "$TMPDIR_TEST/full"
fill() { head -c 1048576 /dev/zero >"$TMPDIR_TEST/full/filler" 2>/dev/null; }
fill
expect_fail 74 "--prom on a full filesystem: exit 74" \
	"$DRAINSTAT" --prom "$TMPDIR_TEST/full/x.prom" -d 1
rm "$TMPDIR_TEST/full/filler"
"$DRAINSTAT" --prom "$TMPDIR_TEST/full/x.prom" 0.1 >/dev/null 2>"$TMPDIR_TEST/full.err" &
FULL=$!
# each step waits for what drainstat says, not for a time: a slow start (full
# mode in a VM) would otherwise meet a full filesystem already
wait_until 30 test -s "$TMPDIR_TEST/full/x.prom"
fill
wait_until 10 grep -q 'No space left on device' "$TMPDIR_TEST/full.err"
sleep 0.3 # three more intervals, each failing
check "filesystem full in flight: the export left is whole" \
	bash -c "promtool check metrics <'$TMPDIR_TEST/full/x.prom' >/dev/null 2>&1"
expect_eq "filesystem full in flight: no temp file left" \
	"$(ls -A "$TMPDIR_TEST/full" | tr '\n' ' ')" ".x.prom.lock filler x.prom "
rm "$TMPDIR_TEST/full/filler"
wait_until 10 grep -q 'x.prom written again$' "$TMPDIR_TEST/full.err"
kill -INT $FULL
wait $FULL
expect_eq "filesystem full in flight, then freed: exit 0" $? 0
expect_eq "filesystem full in flight: said once" \
	"$(grep -c 'No space left on device (the previous export stays' "$TMPDIR_TEST/full.err")" 1
check "filesystem full in flight: said when it works again" \
	grep -q 'x.prom written again$' "$TMPDIR_TEST/full.err"
rm "$TMPDIR_TEST/full/x.prom"
"$DRAINSTAT" --prom "$TMPDIR_TEST/full/x.prom" 0.1 >/dev/null 2>"$TMPDIR_TEST/full.err" &
FULL=$!
wait_until 30 test -s "$TMPDIR_TEST/full/x.prom"
fill
wait_until 10 grep -q 'No space left on device' "$TMPDIR_TEST/full.err"
kill -INT $FULL
wait $FULL
expect_eq "filesystem full to the end: the final export failed, exit 74" $? 74
check "filesystem full to the end: said so" \
	grep -q 'No space left on device (the final export)$' "$TMPDIR_TEST/full.err"
umount "$TMPDIR_TEST/full"

# kernels without what drainstat needs, simulated in a mount namespace over the
# paths drainstat reads. "${NS[@]}" CMD: CMD in a private mount namespace.
NS=(unshare -m --propagation private bash -c)
grep -v ' lru_add_drain_per_cpu$' /proc/kallsyms >"$TMPDIR_TEST/kallsyms.nosym"
sed 's/^[0-9a-f]*/0000000000000000/' /proc/kallsyms >"$TMPDIR_TEST/kallsyms.hidden"
expect_fail 69 "no BTF: exit 69" "${NS[@]}" "mount -t tmpfs none /sys/kernel/btf && '$DRAINSTAT' -d 1"
: >"$TMPDIR_TEST/empty"
expect_fail 69 "an empty BTF file: exit 69" \
	"${NS[@]}" "mount --bind '$TMPDIR_TEST/empty' /sys/kernel/btf/vmlinux && '$DRAINSTAT' -d 1"
check "an empty BTF file: said so" grep -q 'is empty or not BTF' <<<"$FAIL_ERR"
expect_fail 72 "an empty /proc/kallsyms: exit 72" \
	"${NS[@]}" "mount --bind '$TMPDIR_TEST/empty' /proc/kallsyms && '$DRAINSTAT' -d 1"
check "an empty /proc/kallsyms: said so, not EINVAL" grep -q 'lists no kernel symbol' <<<"$FAIL_ERR"
expect_fail 70 "no lru_add_drain_per_cpu: exit 70" \
	"${NS[@]}" "mount --bind '$TMPDIR_TEST/kallsyms.nosym' /proc/kallsyms && '$DRAINSTAT' -d 1"
expect_fail 72 "kallsyms addresses hidden: exit 72" \
	"${NS[@]}" "mount --bind '$TMPDIR_TEST/kallsyms.hidden' /proc/kallsyms && '$DRAINSTAT' -d 1"
# root has CAP_SYSLOG: "run as root" would be no advice
check "kallsyms addresses hidden from root: not told to run as root" \
	grep -q 'although drainstat has CAP_SYSLOG' <<<"$FAIL_ERR"
expect_fail 72 "kallsyms unreadable: exit 72" \
	"${NS[@]}" "mount --bind /dev/null /proc/kallsyms && '$DRAINSTAT' -d 1"

# One hook of a feature refused, the other attached (the fadvise exit's
# tracepoint id unreadable, where libbpf reads it: tracefs, or debugfs's
# tracing where that is mounted): the feature goes off whole and the entry's
# hook is detached again (an entry whose exit never runs leaves its calls
# open); -v names the hook. The programs still attached are read from the
# kernel's links.
FADV=fadvise64
[ "$(uname -m)" = aarch64 ] && FADV=fadvise64_64
# linked_names IDS: the names of the programs among IDS (prog_ids) with a link
linked_names() {
	local id
	for id in $(bpftool -j link list | jq -r '.[].prog_id' | sort -u | comm -12 - <(echo "$1")); do
		bpftool prog show id "$id" | sed -n '1s/.* name \([^ ]*\) .*/\1/p'
	done | sort | tr '\n' ' '
}
BEFORE=$(prog_ids)
HIDE="mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		[ -e \$t/events/syscalls/sys_exit_$FADV/id ] || continue
		mount --bind /dev/null \$t/events/syscalls/sys_exit_$FADV/id || exit 1
	done"
"${NS[@]}" "$HIDE
	exec '$DRAINSTAT' -v -d 8" >"$TMPDIR_TEST/half.out" 2>"$TMPDIR_TEST/half.err" &
HALF=$!
if wait_attached "$TMPDIR_TEST/half.err" '^drainstat: mode '; then
	LINKED=$(linked_names "$(new_prog_ids "$BEFORE")")
	echo "# linked with one fadvise hook refused: $LINKED"
	check "one fadvise hook refused: the drain hooks attached" grep -q drainstat_queue_work <<<"$LINKED"
	check "one fadvise hook refused: the other detached" \
		bash -c "! grep -q drainstat_fadvise <<<'$LINKED'"
else
	fail "one fadvise hook refused: drainstat starts" "$(head -c 300 "$TMPDIR_TEST/half.err")"
fi
kill -INT $HALF
wait $HALF
expect_eq "one fadvise hook refused: exit 0" $? 0
check "one fadvise hook refused: -v names it" \
	grep -q "^drainstat: hook drainstat_fadvise_exit not attached (" "$TMPDIR_TEST/half.err"
check "one fadvise hook refused: -v says its other hook was detached" \
	grep -q '^drainstat: 1 hook of those features detached again' "$TMPDIR_TEST/half.err"
check "one fadvise hook refused: fadvise not traced" grep -q '^fadvise: not traced' "$TMPDIR_TEST/half.out"

# the real sysctl: kptr_restrict=2 hides addresses from root too
KPTR=$(sysctl -n kernel.kptr_restrict)
sysctl -qw kernel.kptr_restrict=2
expect_fail 72 "kernel.kptr_restrict=2: exit 72" "$DRAINSTAT" -d 1
sysctl -qw kernel.kptr_restrict="$KPTR"
# no tracefs and no right to mount it: only CAP_BPF, CAP_PERFMON and CAP_SYSLOG
CAPS=-all,+bpf,+perfmon,+syslog
expect_fail 71 "no tracefs, cannot mount it: exit 71" \
	"${NS[@]}" "umount /sys/kernel/tracing 2>/dev/null; setpriv --bounding-set=$CAPS --inh-caps=$CAPS \
		--ambient-caps=$CAPS '$DRAINSTAT' -d 1"

# ftrace refused on this host: the modes that need it fail with 73, auto goes on
if ! "$DRAINSTAT" -m full -d 0.1 >/dev/null 2>&1; then
	expect_fail 73 "--mode full refused: exit 73" "$DRAINSTAT" -m full -d 0.1
	check "--mode auto falls back" bash -c "'$DRAINSTAT' -d 0.1 2>&1 | grep -q '^drainstat [^:]*: mode \(kprobe\|tracepoint\)'"
fi
if ! "$DRAINSTAT" -m kprobe -d 0.1 >/dev/null 2>&1; then
	expect_fail 73 "--mode kprobe refused: exit 73" "$DRAINSTAT" -m kprobe -d 0.1
fi

# privileges: root without capabilities, and each capability alone
expect_fail 77 "root without capabilities: exit 77" \
	setpriv --bounding-set=-all --inh-caps=-all "$DRAINSTAT" -d 1
for cap in bpf perfmon syslog; do
	expect_fail 77 "only CAP_${cap^^}: exit 77" setpriv --bounding-set=-all,+$cap \
		--inh-caps=-all,+$cap --ambient-caps=-all,+$cap \
		--reuid=65534 --regid=65534 --clear-groups "$DRAINSTAT" -d 1
done
# CAP_BPF and CAP_PERFMON without CAP_SYSLOG while kptr_restrict=1: addresses
# hidden (tracefs mounted for it: without CAP_SYS_ADMIN it could not mount it)
sysctl -qw kernel.kptr_restrict=1
CAPS=-all,+bpf,+perfmon
expect_fail 72 "CAP_BPF+CAP_PERFMON, no CAP_SYSLOG, kptr_restrict=1: exit 72" \
	"${NS[@]}" "mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	exec setpriv --bounding-set=$CAPS --inh-caps=$CAPS --ambient-caps=$CAPS \
		--reuid=65534 --regid=65534 --clear-groups '$DRAINSTAT' -d 1"
sysctl -qw kernel.kptr_restrict="$KPTR"
# the service's three capabilities, as root (tracefs is root's): a whole run,
# drainstat started through a wrapper that drops the rest (exec keeps the pid).
# Debian's kernels leave perf_event_open() to CAP_SYS_ADMIN while
# kernel.perf_event_paranoid is above 2 (Debian's default: 3; upstream takes 3
# as 2): then kprobe mode stops with exit 77 and says why, the other modes run
# without the fadvise tracepoint and say why. The truth: perfevent opens that
# tracepoint as a perf event, with the same capabilities.
CAPS=-all,+bpf,+perfmon,+syslog
cat >"$TMPDIR_TEST/capped" <<WRAPPER
#!/bin/bash
exec unshare -m --propagation private bash -c '
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	exec setpriv --bounding-set=$CAPS --inh-caps=$CAPS --ambient-caps=$CAPS "\$@"' \
	capped "\$@"
WRAPPER
printf '#!/bin/sh\nexec %q %q "$@"\n' "$TMPDIR_TEST/capped" "$DRAINSTAT" >"$TMPDIR_TEST/capped-ds"
chmod +x "$TMPDIR_TEST/capped" "$TMPDIR_TEST/capped-ds"
PARANOID=$(sysctl -n kernel.perf_event_paranoid)
# unit_caps PARANOID: a run with the unit's capabilities under that sysctl
unit_caps() {
	local label="unit's capabilities, perf_event_paranoid=$1" refused rc
	local blind="fadvise calls (kernel.perf_event_paranoid=$1 leaves their syscalls:sys_enter_fadvise64 perf event to CAP_SYS_ADMIN)"
	sysctl -qw kernel.perf_event_paranoid="$1"
	"$TMPDIR_TEST/capped" "$WORKLOADS/perfevent" syscalls/sys_enter_fadvise64
	rc=$?
	case $rc in
	0) refused=no ;;
	77) refused=yes ;;
	*)
		fail "$label: perfevent opens the fadvise tracepoint or is refused" "exit $rc"
		return
		;;
	esac
	echo "$label: perf events refused: $refused"
	if [ $refused = yes ] && [ "${DRAINSTAT_MODE:-}" = kprobe ]; then
		expect_fail 77 "$label, kprobe mode: exit 77" "$TMPDIR_TEST/capped-ds" -d 1
		check "$label, kprobe mode: the error names the sysctl and CAP_SYS_ADMIN" \
			grep -q "kernel.perf_event_paranoid=$1 leaves perf events (kprobes, tracepoints) to CAP_SYS_ADMIN" \
			<<<"$FAIL_ERR"
		return
	fi
	N=30
	OUT=$TMPDIR_TEST/caps$1
	DRAINSTAT=$TMPDIR_TEST/capped-ds forced_drains dscaps
	kill -INT "$DS_PID"
	wait_drainstat
	expect_eq "$label: exit 0" "$DS_RC" 0
	expect_eq "$label: drains = bpftrace's" \
		"$(site_field "$OUT" generic_fadvise dscaps 3)" "$TRUTH_DRAINS"
	if [ $refused = yes ]; then
		check "$label: the report says why it cannot see the fadvise calls" grep -qF "$blind" "$OUT"
		check "$label: the fadvise line gives the same cause" \
			grep -qxF "fadvise: not traced (${blind#fadvise calls (}" "$OUT"
		expect_eq "$label: no fadvise table" "$(grep -c '^FADVISE' "$OUT")" 0
	else
		expect_eq "$label: no fadvise blind spot" "$(grep -c 'cannot see.*fadvise' "$OUT")" 0
		expect_eq "$label: every DONTNEED call timed" "$(fadvise_field "$OUT" dontneed 2)" $N
	fi
}
unit_caps 2
unit_caps 3
sysctl -qw kernel.perf_event_paranoid="$PARANOID"

# kernel.bpf_stats_enabled toggled while tracing: nothing changes but the cost
STATS=$(sysctl -n kernel.bpf_stats_enabled)
N=100
OUT=$TMPDIR_TEST/stats
# (builtins only: an exiting process drains its CPU, and would take rounds' drains)
(
	for _ in $(seq 3000); do
		echo 1 >/proc/sys/kernel/bpf_stats_enabled
		echo 0 >/proc/sys/kernel/bpf_stats_enabled
	done
) &
TOGGLER=$!
forced_drains dsstats
wait $TOGGLER
kill -INT "$DS_PID"
wait_drainstat
sysctl -qw kernel.bpf_stats_enabled="$STATS"
expect_eq "bpf_stats toggled: exit 0" "$DS_RC" 0
# Flipping the sysctl (a static key: kernel text patched) itself makes some rounds'
# DONTNEED succeed without a drain: the measures must agree with each other.
DRAINS=$(site_field "$OUT" generic_fadvise dsstats 3)
expect_eq "bpf_stats toggled: every DONTNEED call counted" "$(fadvise_field "$OUT" dontneed 2)" $N
expect_range "bpf_stats toggled: drains" "$DRAINS" 1 $N
expect_eq "bpf_stats toggled: works on CPU 0 = drains" "$(cpu_field "$OUT" 0 2)" "$DRAINS"
expect_eq "bpf_stats toggled: DONTNEED escalations = drains" \
	"$(fadvise_field "$OUT" dontneed 3)" "$DRAINS"
exit 0
