# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Shared by the host tests: run the real drainstat on the live kernel and read its report.

. tests/lib/common.sh
. tests/lib/truth.sh

DRAINSTAT=${DRAINSTAT:-$PWD/drainstat}
WORKLOADS=${WORKLOADS:-$PWD/build/tests}
TMPDIR_TEST=$(mktemp -d /var/tmp/drainstat-test.XXXXXX)
trap 'cleanup_test' EXIT

# DRAINSTAT_MODE=full|kprobe|tracepoint: every run in that mode (tests/debvm
# runs the suite once per mode), through a wrapper that any user may run (the
# tests drop privileges); unset, drainstat picks the mode itself. A test never
# assumes the mode: it reads it from drainstat's first line (check_mode).
# DS: drainstat itself with the mode's option, for the tests that measure the
# process (its fds, its memory): no shell between.
DS=("$DRAINSTAT" ${DRAINSTAT_MODE:+"--mode=$DRAINSTAT_MODE"})
if [ -n "${DRAINSTAT_MODE:-}" ]; then
	DRAINSTAT_WRAPPER=$(mktemp /tmp/drainstat-mode.XXXXXX)
	printf '#!/bin/sh\nexec %q --mode=%s "$@"\n' "$DRAINSTAT" "$DRAINSTAT_MODE" >"$DRAINSTAT_WRAPPER"
	chmod 0755 "$DRAINSTAT_WRAPPER"
	DRAINSTAT=$DRAINSTAT_WRAPPER
fi

cleanup_test() {
	local p
	for p in $(jobs -p); do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	[ -z "${DRAINSTAT_WRAPPER:-}" ] || rm -f "$DRAINSTAT_WRAPPER"
	[ -z "${UNTRUSTED:-}" ] || remove_untrusted_user
	# DRAINSTAT_KEEP=1: the outputs stay, for a failure to be read
	if [ -n "${DRAINSTAT_KEEP:-}" ]; then
		echo "kept $TMPDIR_TEST" >&2
	else
		rm -rf "$TMPDIR_TEST"
	fi
}

# cgroup2_mount: the cgroup v2 mount as drainstat finds it, the first of type
# cgroup2 in mountinfo; nothing where none is.
cgroup2_mount() {
	awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' \
		/proc/self/mountinfo
}

# cgroup_remove DIR: the tasks of the cgroup DIR killed, then DIR removed (a
# directory that is no cgroup at once); 1, said, if it cannot be in 5 s.
cgroup_remove() {
	local pid
	[ -d "$1" ] || return 0
	for _ in $(seq 50); do
		if [ -e "$1/cgroup.procs" ]; then
			while read -r pid; do
				kill -KILL "$pid" 2>/dev/null
			done <"$1/cgroup.procs"
		fi
		rmdir "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "cannot remove $1" >&2
	return 1
}

# start_in_cgroup DIR COMM FILE: drainforce -W -H -n N under COMM, moved into
# the cgroup DIR before its rounds; its pid in WL, its end of rounds read from
# fd DONE_FD (a FIFO, $TMPDIR_TEST/<DIR's name>.done).
start_in_cgroup() {
	local fifo
	fifo=$TMPDIR_TEST/$(basename "$1").done
	rm -f "$fifo"
	mkfifo "$fifo"
	exec {DONE_FD}<>"$fifo"
	"$WORKLOADS/drainforce" -W -H -n "$N" -c "$2" "$3" >"$fifo" &
	WL=$!
	wait_comm $WL "$2" || return 1
	echo $WL >"$1/cgroup.procs"
}

# untrusted_user: a local user of the test's own, UNTRUSTED (its uid
# UNTRUSTED_UID, UNTRUSTED_GID), for the attacks an unprivileged user can make on root's
# drainstat; removed, with every process it left, when the test ends.
untrusted_user() {
	UNTRUSTED=dsu$$
	useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
		--user-group "$UNTRUSTED" || {
		UNTRUSTED=
		return 1
	}
	UNTRUSTED_UID=$(id -u "$UNTRUSTED")
	UNTRUSTED_GID=$(id -g "$UNTRUSTED")
	AS_UNTRUSTED=(setpriv --reuid="$UNTRUSTED_UID" --regid="$UNTRUSTED_GID" --clear-groups
		--inh-caps=-all --bounding-set=-all --)
}

# untrusted_home: untrusted_user, and U, a directory of its own in the
# test's (which only root may write, and anyone may pass through); or a FAIL
# and the test's end.
untrusted_home() {
	untrusted_user || {
		fail "a user for the test" "useradd failed"
		exit 0
	}
	U=$TMPDIR_TEST/u
	chmod 0711 "$TMPDIR_TEST"
	mkdir "$U"
	chown "$UNTRUSTED_UID:$UNTRUSTED_GID" "$U"
}

remove_untrusted_user() {
	pkill -KILL -u "$UNTRUSTED" 2>/dev/null
	for _ in $(seq 50); do
		pgrep -u "$UNTRUSTED" >/dev/null || break
		sleep 0.1
	done
	userdel "$UNTRUSTED" 2>/dev/null || userdel -f "$UNTRUSTED"
	getent group "$UNTRUSTED" >/dev/null && groupdel "$UNTRUSTED" 2>/dev/null
	UNTRUSTED=
}

# unit_caps_drainstat PATH: PATH, a script that runs drainstat with its args
# under the capabilities of the unit (dist/drainstat.service) alone, as root,
# tracefs mounted as the unit requires (in a mount namespace of its own: the
# host's stays as it is); it execs through unshare and setpriv, so that a
# background run's $! is drainstat's pid.
UNIT_CAPS=-all,+bpf,+perfmon,+syslog
unit_caps_drainstat() {
	cat >"$1" <<WRAPPER
#!/bin/bash
exec unshare -m --propagation private bash -c '
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	exec setpriv --bounding-set=$UNIT_CAPS --inh-caps=$UNIT_CAPS --ambient-caps=$UNIT_CAPS "\$@"' \
	capped "$DRAINSTAT" "\$@"
WRAPPER
	chmod 0755 "$1"
}

# as_untrusted CMD...: CMD as UNTRUSTED, with no capability and no group of
# root's. In the background, "${AS_UNTRUSTED[@]}" CMD... &: then $! is CMD's
# pid (setpriv execs it), not a subshell's.
as_untrusted() {
	"${AS_UNTRUSTED[@]}" "$@"
}

# one_line CODE NAME PATTERN CMD...: CMD exits CODE, its stderr one line matching PATTERN
one_line() {
	local code=$1 name=$2 pattern=$3 err rc
	shift 3
	err=$(timeout -s KILL 30 "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne "$code" ]; then
		fail "$name" "exit $rc, want $code; stderr '$err'"
	elif [ "$(wc -l <<<"$err")" -ne 1 ] || ! grep -q -- "^drainstat: .*$pattern" <<<"$err"; then
		fail "$name" "stderr '$err', want one line matching '$pattern'"
	else
		pass "$name"
	fi
}

# check_mode FILE: the report's first line states a mode, the one asked for
# when DRAINSTAT_MODE is set.
check_mode() {
	local mode
	mode=$(mode_of "$1")
	case $mode in
	full | kprobe | tracepoint)
		expect_eq "report states the mode" "$mode" "${DRAINSTAT_MODE:-$mode}"
		;;
	*) fail "report states the mode" "first line: $(head -n 1 "$1")" ;;
	esac
}

# The ids of the loaded drainstat programs, one per line, sorted.
prog_ids() {
	bpftool prog list 2>/dev/null | awk '/ name drainstat_/ { sub(":", "", $1); print $1 }' | sort
}

# The programs that appeared since BEFORE (a prog_ids output): this run's own,
# even when another drainstat runs beside the tests.
new_prog_ids() {
	comm -13 <(echo "$1") <(prog_ids)
}

# The names of the programs that appeared since BEFORE, sorted, on one line.
prog_names() {
	local id
	for id in $(new_prog_ids "$1"); do
		bpftool prog show id "$id" | sed -n '1s/.* name \([^ ]*\) .*/\1/p'
	done | sort | tr '\n' ' '
}

# True when none of IDS (a prog_ids output) is loaded any more.
progs_gone() {
	[ -z "$1" ] && return 1
	[ -z "$(comm -12 <(echo "$1") <(prog_ids))" ]
}

# prom_arg ARGS...: the FILE of --prom FILE or --prom=FILE in ARGS, or nothing.
prom_arg() {
	while [ $# -gt 0 ]; do
		case $1 in
		--prom) echo "$2" && return ;;
		--prom=*) echo "${1#--prom=}" && return ;;
		esac
		shift
	done
}

# forced_drains COMM ARGS...: drainstat -v ARGS -p <drainforce> around N forced
# drains under COMM (FORCE_ARGS: more drainforce options, such as -k K).
# Output in $OUT, drainstat's pid in DS_PID, bpftrace's count of the drains in
# TRUTH_DRAINS (truth_end). drainforce stays (-H) once its rounds are done,
# killed at the end of the test: its exit would end drainstat.
forced_drains() {
	local comm=$1 wl done_fd prom
	shift
	# the rounds' end comes through a FIFO, read by a builtin: a process
	# started or ended on CPU A meanwhile would flush its batch (no drain)
	rm -f "$OUT.done"
	mkfifo "$OUT.done"
	exec {done_fd}<>"$OUT.done"
	# shellcheck disable=SC2086 # FORCE_ARGS is a list of options
	"$WORKLOADS/drainforce" -W -H -n "$N" ${FORCE_ARGS:-} -c "$comm" "$TMPDIR_TEST/data" \
		>"$OUT.done" &
	wl=$!
	wait_comm $wl "$comm" || { exec {done_fd}<&-; return 1; }
	truth_begin $wl
	# on CPU B: drainstat's own page faults fill a CPU's LRU batch, and on CPU A
	# that would flush the workload's folios before the round's drain
	taskset -c 1 "$DRAINSTAT" -v "$@" -p $wl >"$OUT" 2>"$OUT.err" &
	DS_PID=$!
	# setup done: the symbols read before attach (seconds under TCG), then
	# the export, if any, is written a first time
	wait_attached "$OUT.err"
	prom=$(prom_arg "$@")
	[ -z "$prom" ] || wait_until 30 test -e "$prom"
	kill -USR1 $wl
	if read -r -t 120 _ <&"$done_fd"; then
		exec {done_fd}<&-
		truth_end
		return 0
	fi
	exec {done_fd}<&-
	echo "drainforce did not finish its rounds" >&2
	return 1
}

# truth_begin PID: bpftrace counts the drains of PID, the workload, from now
# (tests/lib/truth.sh): the truth truth_end gives. A FAIL if it cannot.
truth_begin() {
	truth_start "$1" "$TMPDIR_TEST/truth.$1" ||
		fail "bpftrace counts the workload's drains" "$(tail -n 3 "$TMPDIR_TEST/truth.$1.err")"
}

# truth_end: once the workload's rounds are done, bpftrace's counts are in:
# TRUTH_DRAINS, the drains drainstat sees in the mode $OUT or $OUT.err (-v)
# states. The workload forced drains in most of its N rounds: some need none
# where other tasks flush CPU A's batch first (tests/lib/truth.sh), and
# drainstat is held to bpftrace's count, not to N.
truth_end() {
	local mode
	TRUTH_DRAINS=
	truth_stop || {
		fail "bpftrace counted the workload's drains" "$(tail -n 3 "$TRUTH_OUT.err")"
		return 1
	}
	mode=$(mode_of "$OUT")
	[ -n "$mode" ] || mode=$(mode_noted "$OUT.err")
	[ -n "$mode" ] || fail "drainstat stated its mode (for the truth)" "$(head -n 1 "$OUT")"
	TRUTH_DRAINS=$(truth_drains "$mode")
	expect_range "the workload forced drains in most of its $N rounds (bpftrace)" \
		"$(truth_count queued)" $((N / 2)) "$N"
}

# scrape_textfile DIR OUT: what a real node_exporter serves from the textfile
# directory DIR, into OUT.
scrape_textfile() {
	local port=$((20000 + RANDOM % 20000)) ne
	prometheus-node-exporter --web.listen-address=127.0.0.1:$port --collector.disable-defaults \
		--collector.textfile --collector.textfile.directory="$1" >"$TMPDIR_TEST/ne.log" 2>&1 &
	ne=$!
	for _ in $(seq 50); do
		curl -sf "http://127.0.0.1:$port/metrics" >"$2" && break
		sleep 0.1
	done
	kill $ne
	wait $ne 2>/dev/null
}
