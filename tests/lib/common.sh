# shellcheck shell=bash disable=SC2034 # DS_RC, DS_PID and DRAINSTAT cross files
# SPDX-License-Identifier: GPL-2.0
# Shared by the host tests and the VM suite (busybox sh/bash): assertions that
# print "PASS name" / "FAIL name: why" / "SKIP name: why", and readers of drainstat's text report.

pass() { echo "PASS $1"; }
fail() {
	echo "FAIL $1${2:+: $2}"
	return 1
}
# skip NAME WHY: a check this run cannot make; counted apart, never as a pass.
skip() { echo "SKIP $1: $2"; }

# check NAME CMD...: PASS if CMD succeeds.
check() {
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name" "$*"; fi
}

# expect_eq NAME GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi
}

# expect_range NAME VALUE LOW HIGH (integers, inclusive)
expect_range() {
	if [ -n "$2" ] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; then
		pass "$1"
	else
		fail "$1" "got '$2', want $3..$4"
	fi
}

# expect_at_least NAME VALUE MIN: a bound below only
expect_at_least() {
	if [[ "$2" =~ ^-?[0-9]+$ ]] && [ "$2" -ge "$3" ]; then
		pass "$1"
	else
		fail "$1" "got '$2', want $3 or more"
	fi
}

# A duration as printed ("812ns", "9.1us", "1.2ms", "3.4s") in nanoseconds.
to_ns() {
	awk -v v="$1" 'BEGIN {
		m = 1
		if (v ~ /ns$/) { m = 1; sub(/ns$/, "", v) }
		else if (v ~ /us$/) { m = 1e3; sub(/us$/, "", v) }
		else if (v ~ /ms$/) { m = 1e6; sub(/ms$/, "", v) }
		else if (v ~ /s$/) { m = 1e9; sub(/s$/, "", v) }
		else { print ""; exit }
		printf "%.0f\n", v * m
	}'
}

# site_field FILE SITE COMM N [CGROUP]: field N of the site row (3 drains, 4
# works, 5 self, 6-8 dispatch p50/p99/max, 9-11 run p50/p99/max, 12-13 wait
# p50/p99), in a site table: not the LOCAL table's row of the same site and
# comm, which is there when the site table has none (no drain counted). N
# counts the columns as if there were no CGROUP column (--by's default shows
# one after COMM); with CGROUP, the row of that cgroup (as the column shows it).
site_field() {
	awk -v s="$2" -v c="$3" -v n="$4" -v g="${5:-}" '
		/^SITE / { t = 1; cg = $3 == "CGROUP"; next } /^$/ { t = 0 }
		t && $1 == s && $2 == c && (g == "" || (cg && $3 == g)) {
			print $(cg && n >= 3 ? n + 1 : n); exit }' "$1"
}

# site_rows FILE SITE COMM: how many rows of SITE and COMM the site table has
# (one per cgroup with --by's default), the LOCAL table's left out.
site_rows() {
	awk -v s="$2" -v c="$3" '/^SITE / { t = 1; next } /^$/ { t = 0 }
		t && $1 == s && $2 == c { n++ } END { print n + 0 }' "$1"
}

# check_cgroup_row TEXT JSON COMM CGROUP ID DRAINS: the generic_fadvise row of
# COMM in CGROUP (as the text shows it, its id ID) has DRAINS drains in the
# text report TEXT and the JSON report JSON, where it is the one row of that
# site, comm and cgroup: two cgroups merged into one row fail, and so do their
# counts swapped where they differ.
check_cgroup_row() {
	local text=$1 json=$2 comm=$3 cg=$4 id=$5 drains=$6 row
	row=".sites[] | select(.site == \"generic_fadvise\" and .comm == \"$comm\" and .cgroup == \"$cg\")"
	expect_eq "text: drains of $comm in $cg = bpftrace's" \
		"$(site_field "$text" generic_fadvise "$comm" 3 "$cg")" "$drains"
	expect_eq "-j: drains of $comm in $cg = bpftrace's, one row" \
		"$(jq -r "[$row | .drains] | map(tostring) | join(\" \")" "$json")" "$drains"
	expect_eq "-j: cgroup_id of $cg, its inode" "$(jq "$row | .cgroup_id" "$json")" "$id"
}

# cgroup_of TID: the cgroup v2 path of a task, as drainstat names it, where a
# cgroup v2 hierarchy is mounted; nothing where none is (drainstat then shows
# no cgroup in flight).
cgroup_of() {
	grep -q ' - cgroup2 ' /proc/self/mountinfo || return 0
	sed -n 's/^0:://p' "/proc/$1/cgroup"
}

# re_quote TEXT: TEXT as a grep basic regex that matches it alone.
re_quote() {
	printf '%s' "$1" | sed 's/[][\\.*^$]/\\&/g'
}

# cgroup_text_re PATH: ", cgroup PATH" as the text shows a drain's in flight
# or slow, as a regex; nothing for no PATH.
cgroup_text_re() {
	[ -n "$1" ] && printf ', cgroup %s' "$(re_quote "$1")"
}

# cgroup_json_re PATH: the "cgroup" and "cgroup_id" fields of JSON, and the
# container keys after them (man page: Containers and pods), as a regex.
cgroup_json_re() {
	if [ -n "$1" ]; then
		printf '"cgroup":"%s","cgroup_id":[1-9][0-9]*' "$(re_quote "$1")"
	else
		printf '"cgroup":null,"cgroup_id":[0-9]*'
	fi
	printf ',"pod":[^,]*,"namespace":[^,]*,"pod_uid":[^,]*,"container":[^,]*,"runtime":[^,]*,"qos":[^,]*'
}

# without_cgroup FILE: the report with its site and LOCAL tables' CGROUP
# column taken out, for the parsers that count columns from COMM.
without_cgroup() {
	awk '/^(SITE|LOCAL) / { t = 1; cg = $3 == "CGROUP" } /^$/ { t = 0 }
		t && cg { $3 = ""; $0 = $0; $1 = $1 } { print }' "$1"
}

# fadvise_field FILE ADVICE N: 2 calls, 3 escalated, 4-6 latency p50/p99/max.
fadvise_field() {
	awk -v a="$2" -v n="$3" 'f && $1 == a { print $n; exit } /^FADVISE/ { f = 1 }' "$1"
}

# cpu_field FILE CPU N: 2 works, 3 self, 4-6 dispatch, 7-9 run, 10 run total.
cpu_field() {
	awk -v c="$2" -v n="$3" 'f && $1 == c { print $n; exit } /^CPU/ { f = 1 }' "$1"
}

# cpu_works_but FILE CPU: the works of every CPU row but CPU's, summed.
cpu_works_but() {
	awk -v c="$2" 'f && /^[0-9]/ && $1 != c { n += $2 } /^CPU/ { f = 1 } END { print n + 0 }' "$1"
}

# mode_of FILE: the mode named by the report's first line.
mode_of() {
	sed -n '1s/^drainstat [^:]*: mode \([a-z]*\),.*/\1/p' "$1"
}

# mode_noted FILE: the mode named by drainstat -v's note in FILE, its stderr.
mode_noted() {
	sed -n 's/^drainstat: mode \([a-z]*\):.*/\1/p' "$1"
}

# Starts drainstat in the background with its output in $1; waits until it is
# tracing (its first line is out). Sets DS_PID.
start_drainstat() {
	local out=$1
	shift
	# a run before into OUT left its header there, and the background job's
	# redirection truncates it only once it runs
	rm -f "$out" "$out.err"
	"$DRAINSTAT" "$@" >"$out" 2>"$out.err" &
	DS_PID=$!
	wait_output 20 "$DS_PID" '^drainstat ' "$out" && return 0
	echo "drainstat did not start: $(cat "$out.err")" >&2
	return 1
}

# start_attached OUT ARGS...: drainstat -v ARGS in the background on CPU 1 (as
# forced_drains: its page faults would flush a workload's batch on CPU 0), its
# output in OUT and OUT.err, its pid added to DS_PIDS; returns once it is
# attached (1, said, if it is not in 30 s).
start_attached() {
	local out=$1
	shift
	taskset -c 1 "$DRAINSTAT" -v "$@" >"$out" 2>"$out.err" &
	DS_PIDS+=($!)
	wait_attached "$out.err" || fail "drainstat $* starts" "$(cat "$out.err")"
}

# stop_attached: each drainstat of DS_PIDS ends on SIGINT, its last report
# out, with exit status 0; DS_PIDS emptied.
stop_attached() {
	for DS_PID in "${DS_PIDS[@]}"; do
		kill -INT "$DS_PID"
		wait_drainstat
		expect_eq "drainstat $DS_PID: exit 0" "$DS_RC" 0
	done
	DS_PIDS=()
}

# stack_walks ERR: the kernel stacks a drainstat -v walked, from its exit line in
# ERR (its standard error); empty if the line is not there.
stack_walks() {
	awk '/^drainstat: [0-9]+ kernel stacks walked / { print $2 }' "$1"
}

# wait_output SECONDS PID PATTERN FILE: waits until FILE, the output of
# process PID, has a line matching PATTERN (0); 1 once PID is gone or SECONDS
# have passed.
wait_output() {
	local tries=$(($1 * 10))
	for _ in $(seq "$tries"); do
		grep -qs -- "$3" "$4" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# Waits for drainstat to exit (after a signal, -d or COUNT); sets DS_RC.
wait_drainstat() {
	local i
	for i in $(seq 300); do
		kill -0 "$DS_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$DS_PID" 2>/dev/null; then
		kill -KILL "$DS_PID"
		echo "drainstat did not exit" >&2
	fi
	wait "$DS_PID"
	DS_RC=$?
}

# Waits until drainforce's main thread has taken COMM: it does so after its
# setup and warm-up round and before its -s sleep, so nothing before counts.
wait_comm() {
	local pid=$1 comm=$2
	for _ in $(seq 400); do
		[ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$comm" ] && return 0
		sleep 0.05
	done
	return 1
}

# wait_attached FILE [PATTERN]: waits (up to 30 s) for drainstat -v's "mode"
# line in FILE, its stderr: the programs are attached (JSON and --prom print no
# header). With PATTERN, for that line instead (a grep pattern).
wait_attached() {
	wait_until 30 grep -qs -- "${2:-^drainstat: mode }" "$1"
}

# wait_until SECONDS CMD...: runs CMD every 0.1 s until it succeeds (0) or
# SECONDS have passed (1). A "$(...)" among its words is expanded once, before
# the wait: to wait for an output, pass output_is or output_isnt.
wait_until() {
	local tries=$(($1 * 10))
	shift
	for _ in $(seq "$tries"); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# output_is WANT CMD...: CMD prints WANT (its last newline aside); output_isnt:
# it does not.
output_is() {
	[ "$("${@:2}")" = "$1" ]
}

output_isnt() {
	! output_is "$@"
}

# prom_value FILE SERIES: the value of SERIES ('name{labels}') in the export FILE.
prom_value() {
	awk -v s="$2" '$1 == s { print $2 }' "$1"
}

# prom_sum FILE NAME LABEL...: the sum of NAME's series in the export FILE
# that have every LABEL ('site="generic_fadvise"'), whatever others they have
# (the cgroup label of --by's default); nothing when there is none.
prom_sum() {
	local f=$1 n=$2
	shift 2
	awk -v n="$n" -v want="$(printf '%s\n' "$@")" '
		BEGIN { k = split(want, w, "\n") }
		index($1, n "{") == 1 {
			l = substr($1, length(n) + 2)
			for (i = 1; i <= k; i++)
				if (index("," l, "," w[i] ",") == 0 && index("," l, "," w[i] "}") == 0)
					next
			s += $2; found = 1
		}
		END { if (found) printf "%.0f\n", s }' "$f"
}

# check_exposure NAME FILE MAX: systemd-analyze security's report in FILE rates
# drainstat.service's exposure at most MAX (printed).
check_exposure() {
	local score
	score=$(sed -n 's/.*Overall exposure level for drainstat.service: \([0-9.]*\) .*/\1/p' "$2")
	echo "$1: exposure ${score:-not found}"
	check "$1: exposure <= $3" awk -v s="$score" -v m="$3" 'BEGIN { exit !(s != "" && s <= m) }'
}
