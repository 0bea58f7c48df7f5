# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Shared by the bench scripts (bench/run, bench/peers, bench/scale; bench/vm.sh in
# QEMU): processes, waiting, statistics, BPF program lookups and tracefs for
# bpftrace. Sourced; sets nothing global but NAP_FD (see nap), SETTLE_S (see
# settle), TRACEFS and TRACEFS_MOUNTED (see ensure_tracefs).

die() {
	echo "bench: $*" >&2
	exit 1
}

# stop PID: SIGINT, then SIGTERM and SIGKILL if it does not go; returns its status.
stop() {
	local pid=$1 i
	kill -INT "$pid" 2>/dev/null
	for i in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		[ "$i" -eq 50 ] && echo "bench: $(cat /proc/"$pid"/comm 2>/dev/null) (pid $pid)" \
			"ignored SIGINT for 5s, sending SIGTERM" >&2 && kill -TERM "$pid" 2>/dev/null
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	wait "$pid"
}

now_ns() { date +%s%N; }

# Each line of stdin, prefixed with the time it arrived (us, realtime): a
# tracer's attach signal.
stamp() {
	local line
	while IFS= read -r line; do
		printf '%s %s\n' "${EPOCHREALTIME/./}" "$line"
	done
}

# nap SECONDS: a sleep that starts no process (a read that times out on a pipe
# nobody writes to), where /dev/fd allows; else sleep(1).
nap() {
	if [ -z "${NAP_FD:-}" ]; then
		# the group's redirection ends with it; exec's own stays with the shell
		{ exec {NAP_FD}<> <(:); } 2>/dev/null || NAP_FD=none
	fi
	if [ "$NAP_FD" = none ]; then
		sleep "$1"
	else
		read -r -t "$1" -u "$NAP_FD" _ || :
	fi
}

# wait_line FILE PATTERN PID [SECONDS]: until FILE has a line matching PATTERN
# (an extended regular expression; 10 s at most); fails at once when PID is
# gone. Builtins only: a grep and a sleep every 10 ms are two processes started
# each time, and on a 2-CPU guest they would slow the tracer being timed.
wait_line() {
	local i line
	for ((i = 0; i < ${4:-10} * 100; i++)); do
		if [ -f "$1" ]; then
			while IFS= read -r line; do
				[[ $line =~ $2 ]] && return 0
			done <"$1"
		fi
		kill -0 "$3" 2>/dev/null || return 1
		nap 0.01
	done
	return 1
}

# settle: the pause between a tracer being ready and a timed run. While a tracer
# sets up (drainstat's 120-175 ms from exec), forced drains run 2-3x slower: its
# setup is busy on the CPUs they need (doc/performance.md, the startup
# transient); nothing lingers once it is ready. The margin keeps the tracers'
# setups, bpftrace's included, out of the run: the overhead measured is the
# steady one.
SETTLE_S=0.5
settle() { nap "$SETTLE_S"; }

# median of the numbers on stdin
median() {
	sort -n | awk '{ v[NR] = $1 } END {
		printf "%.4f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

ms() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 1e6 }'; }

# spread of the numbers on stdin around their median, in percent: (max - min) / median
spread_pct() {
	sort -n | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.1f\n", (v[NR] - v[1]) / m * 100 }'
}

# verdict VALUE LIMIT: PASS if VALUE < LIMIT
verdict() { awk -v v="$1" -v l="$2" 'BEGIN { print (v + 0 < l + 0) ? "PASS" : "MISS" }'; }

# prog_ids PID: the ids of the BPF programs PID holds open
prog_ids() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ { print $2 }' | sort -un
}

# stats_snapshot FILE PID...: "name run_time_ns run_cnt" of every program the PIDs hold
stats_snapshot() {
	local out=$1 pid id
	shift
	: >"$out"
	for pid in "$@"; do
		for id in $(prog_ids "$pid"); do
			bpftool prog show id "$id" -j | awk '{
				match($0, /"name":"[^"]*"/); n = substr($0, RSTART + 8, RLENGTH - 9)
				match($0, /"run_time_ns":[0-9]+/); t = substr($0, RSTART + 14, RLENGTH - 14)
				match($0, /"run_cnt":[0-9]+/); c = substr($0, RSTART + 10, RLENGTH - 10)
				print n, t + 0, c + 0 }' >>"$out"
		done
	done
}

TRACEFS=/sys/kernel/tracing
TRACEFS_MOUNTED=

is_tracefs() { [ "$(stat -f -c %T "$TRACEFS" 2>/dev/null)" = tracefs ]; }

# bpftrace reads tracepoint formats from tracefs and, unlike drainstat, does not
# mount it. Checked before each start: another drainstat on this machine may
# unmount the tracefs it mounted itself.
ensure_tracefs() {
	is_tracefs && return 0
	mount -t tracefs nodev "$TRACEFS" || die "cannot mount tracefs at $TRACEFS"
	TRACEFS_MOUNTED=1
}

# What ensure_tracefs mounted, unmounted as drainstat does: lazily, so that a
# tracer that still holds a file keeps it.
release_tracefs() {
	[ -n "$TRACEFS_MOUNTED" ] && is_tracefs && umount -l "$TRACEFS"
	TRACEFS_MOUNTED=
}
