#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Limits on what drainstat may take: file descriptors (ulimit -n), address space
# (ulimit -v), a memory cgroup's limit, and kernel addresses hidden even from
# root (kernel.kptr_restrict=2). Each ends the run with one line naming that
# limit and the exit code for it, never another cause nor the OOM killer; and
# the need a message names is enough for a run to go through.
set -u
. tests/host/lib.sh

KPTR=$(sysctl -n kernel.kptr_restrict)
MEMCG=

cleanup_limits() {
	sysctl -qw kernel.kptr_restrict="$KPTR"
	[ -n "$MEMCG" ] && rmdir "$MEMCG" 2>/dev/null
	cleanup_test
}
trap cleanup_limits EXIT
trap 'exit 130' INT TERM

# expect_limit CODE NAME PATTERN CMD...: CMD exits CODE with one "drainstat: "
# line on stderr that matches the extended regular expression PATTERN. The
# line is left in ERR.
expect_limit() {
	local code=$1 name=$2 pattern=$3 rc
	shift 3
	# not in a subshell: in_memcg() sets OOM_KILLS
	"$@" >/dev/null 2>"$TMPDIR_TEST/err"
	rc=$?
	ERR=$(cat "$TMPDIR_TEST/err")
	if [ $rc -ne "$code" ]; then
		fail "$name" "exit $rc, want $code; stderr '$ERR'"
	elif [ "$(wc -l <<<"$ERR")" -ne 1 ] || ! grep -Eq "^drainstat: $pattern\$" <<<"$ERR"; then
		fail "$name" "stderr '$ERR', want 'drainstat: $pattern'"
	else
		pass "$name"
	fi
}

# expect_run NAME CMD...: CMD, a run of drainstat, exits 0 (not in a subshell
# either). Its output is left in $TMPDIR_TEST/out.
expect_run() {
	local name=$1 rc
	shift
	"$@" >"$TMPDIR_TEST/out" 2>"$TMPDIR_TEST/err"
	rc=$?
	if [ $rc -eq 0 ]; then pass "$name"; else fail "$name" "exit $rc; stderr '$(cat "$TMPDIR_TEST/err")'"; fi
}

# with_nofile N CMD...: CMD under ulimit -n N (soft and hard).
with_nofile() {
	local n=$1
	shift
	# shellcheck disable=SC2016 # for the inner bash
	timeout -s KILL 30 bash -c 'ulimit -n "$1" && exec "${@:2}"' limits "$n" "$@"
}

# with_as KB CMD...: CMD under ulimit -v KB.
with_as() {
	local kb=$1
	shift
	# shellcheck disable=SC2016 # for the inner bash
	timeout -s KILL 30 bash -c 'ulimit -v "$1" && exec "${@:2}"' limits "$kb" "$@"
}

# fds_needed: the need ERR names.
fds_needed() {
	sed -n 's/.*drainstat needs at least \([0-9]*\)$/\1/p' <<<"$ERR"
}

# Too few fds: libbpf took an EMFILE in its feature probes for a missing
# feature, and its load failed later with EINVAL; or the BTF "did not parse"
# (ESRCH). Any mode needs more than 16 (37 in tracepoint mode, with stdio).
NOFILE_MSG='too few file descriptors \(ulimit -n %s\): drainstat needs at least [0-9]+'
# shellcheck disable=SC2059 # the format is ours
nofile_msg() { printf "$NOFILE_MSG" "$1"; }
expect_limit 1 "ulimit -n 16: exit 1, the fds named" "$(nofile_msg 16)" \
	with_nofile 16 "${DS[@]}" -d 0.5
NEED=$(fds_needed)
expect_range "ulimit -n 16: the need named is above the limit" "$NEED" 17 1024
for n in 8 32 64; do
	if [ "$n" -lt "${NEED:-1024}" ]; then
		expect_limit 1 "ulimit -n $n: exit 1, the fds named" "$(nofile_msg "$n")" \
			with_nofile "$n" "${DS[@]}" -d 0.5
	else
		expect_run "ulimit -n $n: enough here" with_nofile "$n" "${DS[@]}" -d 0.5
	fi
done
expect_run "ulimit -n at the need named ($NEED): a run goes through" \
	with_nofile "${NEED:-0}" "${DS[@]}" -d 0.5
# -T keeps its ring buffer open, --prom its export and a temp file while it writes
PROM=$TMPDIR_TEST/limits.prom
expect_limit 1 "ulimit -n 16, -T --prom: the need named" "$(nofile_msg 16)" \
	with_nofile 16 "${DS[@]}" -T 1ns --prom "$PROM" 0.2 -d 0.5
NEED_MORE=$(fds_needed)
expect_range "-T --prom need more fds" "$NEED_MORE" $((${NEED:-1024} + 1)) 1024
# the man page's figures (EXIT STATUS, 1) are these, within a tenth, in tracepoint mode
if "${DS[@]}" -d 0.1 2>/dev/null | grep -q '^drainstat .*: mode tracepoint,'; then
	read -r MAN_FDS MAN_FDS_MORE <<<"$(sed -n 's/.*about \([0-9]*\) in tracepoint mode and \([0-9]*\) with$/\1 \2/p' man/drainstat.8)"
	expect_range "the man page's fds ($MAN_FDS) are the need, within a tenth" "${MAN_FDS:-0}" \
		$((${NEED:-0} * 9 / 10)) $((${NEED:-0} * 11 / 10))
	expect_range "the man page's fds for -T --prom ($MAN_FDS_MORE) are the need, within a tenth" \
		"${MAN_FDS_MORE:-0}" $((${NEED_MORE:-0} * 9 / 10)) $((${NEED_MORE:-0} * 11 / 10))
fi
# at that need, with drains to log: -T keeps the files it names user frames
# from open (the workload's and libc), and an export is written meanwhile
"$WORKLOADS/drainforce" -r -c limitsforce "$TMPDIR_TEST/data" >/dev/null 2>&1 &
FORCE=$!
expect_run "ulimit -n at the need named for -T --prom ($NEED_MORE): a run goes through" \
	with_nofile "${NEED_MORE:-0}" "${DS[@]}" -T 1ns --prom "$PROM" 0.2 -d 1
kill $FORCE
wait $FORCE
expect_range "ulimit -n at the need named for -T --prom: drains logged, user frames named" \
	"$(grep -c 'posix_fadvise[0-9]*+0x[0-9a-f]* (libc\.so\.6)' "$TMPDIR_TEST/out")" 1 1000000
expect_run "ulimit -n 1024: a run goes through" with_nofile 1024 "${DS[@]}" -d 0.5

# Too little address space: libbpf's parse of the kernel's BTF ran short, and
# libbpf says ESRCH ("No such process") for every failure to parse it. The parse
# takes twice the BTF's size of heap: no run fits in that much address space.
BTF_TWICE_KB=$(($(stat -c %s /sys/kernel/btf/vmlinux) * 2 / 1024))
for kb in 8000 "$BTF_TWICE_KB"; do
	expect_limit 1 "ulimit -v $kb: exit 1, the limit named" \
		"not enough memory \(ulimit -v $kb\): raise the limit" \
		with_as "$kb" "${DS[@]}" -d 0.5
done
expect_run "ulimit -v 1000000: a run goes through" with_as 1000000 "${DS[@]}" -d 0.5

# kernel.kptr_restrict=2 hides kernel addresses from root too: not a matter of privileges
sysctl -qw kernel.kptr_restrict=2
expect_limit 72 "kernel.kptr_restrict=2: exit 72, the sysctl named" \
	"kernel addresses in /proc/kallsyms are hidden even from root \(kernel.kptr_restrict=2\): set kernel.kptr_restrict to 0 or 1" \
	timeout -s KILL 30 "${DS[@]}" -d 0.5
sysctl -qw kernel.kptr_restrict="$KPTR"
expect_eq "kernel.kptr_restrict restored" "$(sysctl -n kernel.kptr_restrict)" "$KPTR"

# A memory cgroup's limit: met with the OOM killer (in the page faults of the
# heap for libbpf, in the verifier), never with an error. v2 where the memory
# controller is there, else v1's memory hierarchy, in a child of our cgroup.
if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	MEMCG_PARENT=/sys/fs/cgroup
	grep -qw memory "$MEMCG_PARENT/cgroup.subtree_control" ||
		echo +memory >"$MEMCG_PARENT/cgroup.subtree_control"
	MEMCG_LIMIT=memory.max
else
	MEMCG_PARENT=/sys/fs/cgroup/memory$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
	MEMCG_LIMIT=memory.limit_in_bytes
fi

# in_memcg LIMIT CMD...: CMD alone in a fresh memory cgroup limited to LIMIT;
# OOM_KILLS says how many times the OOM killer struck there.
in_memcg() {
	local limit=$1 rc
	shift
	MEMCG=$MEMCG_PARENT/drainstat-test.$$
	mkdir "$MEMCG" && echo "$limit" >"$MEMCG/$MEMCG_LIMIT" || return 99
	# shellcheck disable=SC2016 # for the inner bash
	timeout -s KILL 30 bash -c 'echo $$ >"$1/cgroup.procs" && exec "${@:2}"' limits "$MEMCG" "$@"
	rc=$?
	OOM_KILLS=$(cat "$MEMCG/memory.events" "$MEMCG/memory.oom_control" 2>/dev/null |
		awk '$1 == "oom_kill" { print $2 }')
	rmdir "$MEMCG" && MEMCG=
	return $rc
}

MEMCG_MSG='not enough memory \(memory cgroup limit [0-9.]+ MB, [0-9.]+ MB of it free\): drainstat needs about [0-9.]+ MB free'
for limit in 8M 16M 32M; do
	expect_limit 1 "memory cgroup limit $limit: exit 1 (not 137), the limit named" "$MEMCG_MSG" \
		in_memcg "$limit" "${DS[@]}" -d 0.5
	expect_eq "memory cgroup limit $limit: no OOM kill" "$OOM_KILLS" 0
done
# the need the last message named, and what the cgroup holds at the check (1.5 MB)
LIMIT_MB=$(sed -n 's/.*needs about \([0-9]*\)\.[0-9] MB free$/\1/p' <<<"$ERR")
LIMIT_MB=$((${LIMIT_MB:-1024} + 3))
expect_run "memory cgroup limit at the need named (${LIMIT_MB}M): a run goes through" \
	in_memcg "${LIMIT_MB}M" "${DS[@]}" -d 0.5
expect_eq "memory cgroup limit ${LIMIT_MB}M: no OOM kill" "$OOM_KILLS" 0
expect_run "memory cgroup limit 256M: a run goes through" in_memcg 256M "${DS[@]}" -d 0.5
expect_eq "memory cgroup limit 256M: no OOM kill" "$OOM_KILLS" 0
exit 0
