#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A comm holding '"', '\', a newline and an ESC: the text report escapes it,
# JSON writes it as the text report does (\xHH: decoded, it gives back the
# bytes), the Prometheus export (no comm label) stays valid.
set -u
. tests/host/lib.sh

N=20
COMM=$'ev"l\\\n\x1b'$$
COMM=${COMM:0:15}
# shellcheck disable=SC2317 # called through check
jq_ok() { jq -e "$@" >/dev/null; }
bytes() { od -An -tx1 | tr -s ' \n' ' '; }
# The text drainstat writes for the bytes of $1 (src/escape.c): printable ASCII
# but the backslash as itself, every other byte as \xHH.
shown() {
	local b
	for b in $(printf '%s' "$1" | od -An -v -tx1); do
		if [ $((16#$b)) -ge 32 ] && [ $((16#$b)) -lt 127 ] && [ "$b" != 5c ]; then
			printf '%b' "\\x$b"
		else
			printf '\\x%s' "$b"
		fi
	done
}
# The bytes a JSON string of drainstat's stands for: jq's text on stdin, in
# which every backslash must start \xHH (lowercase), each \xHH as its byte.
unescape() {
	local s
	s=$(cat)
	if [[ $s == *$'\n'* ]] ||
		printf '%s' "$s" | LC_ALL=C grep -qvxE '([ -[]|[]-~]|\\x[0-9a-f]{2})*'; then
		echo "not drainstat's escaping: $s"
		return
	fi
	printf '%b' "$s"
}
# Whether the "time" of every line of $1 is RFC 3339 in UTC with microseconds,
# within the Unix times $2 and $3 (whole seconds).
# shellcheck disable=SC2317 # called through check
times_between() {
	jq -se --argjson lo "$2" --argjson hi "$3" 'length > 0 and all(.[];
		(.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$"))
		and ((.time | sub("\\.[0-9]{6}Z$"; "Z") | fromdateiso8601) as $t
			| $t >= $lo and $t <= $hi))' "$1" >/dev/null
}

# plain text: one line per site, no raw control bytes, the comm escaped
OUT=$TMPDIR_TEST/text
forced_drains "$COMM"
kill -INT "$DS_PID"
wait_drainstat
expect_eq "text: exit 0" "$DS_RC" 0
check "text: no raw ESC" bash -c "! grep -q $'\x1b' '$OUT'"
# \ as \x5c too: every escape reads \xHH
# (the SITE table's first row of the site: a LOCAL table, in modes that see
# local drains, has rows of the same site and comm, and may widen the column)
# (the comm through the environment: awk -v would read its \x escapes)
# (the CGROUP column taken out: the drains are the third field)
site_row() {
	without_cgroup "$1" |
		C=$2 awk '$1 == "generic_fadvise" && index($2, ENVIRON["C"]) == 1 { print; exit }'
}
check "text: the site row holds the escaped comm" \
	test -n "$(site_row "$OUT" 'ev"l\x5c\x0a\x1b')"
# the row is whole, its numbers read
expect_eq "text: drains in that row = bpftrace's" \
	"$(site_row "$OUT" 'ev"l\x5c\x0a\x1b' | awk '{ print $3 }')" "$TRUTH_DRAINS"

# JSON: valid, .comm is the text report's escaping of the comm, and decoding
# its \xHH gives back the very bytes; "time" is when the report was read
OUT=$TMPDIR_TEST/json
T0=$(date +%s)
forced_drains "$COMM" -j
kill -INT "$DS_PID"
wait_drainstat
T1=$(date +%s)
expect_eq "-j: exit 0" "$DS_RC" 0
expect_eq "-j: one line" "$(wc -l <"$OUT")" 1
check "-j: valid JSON" jq_ok . "$OUT"
JCOMM=$(jq -j '.sites[] | select(.site == "generic_fadvise" and (.comm | startswith("ev"))) | .comm' "$OUT")
expect_eq "-j: comm as the text report writes it" "$JCOMM" 'ev"l\x5c\x0a\x1b'"${COMM#$'ev"l\\\n\x1b'}"
expect_eq "-j: comm round-trips (\\xHH decoded)" "$(printf '%s' "$JCOMM" | unescape | bytes)" \
	"$(printf '%s' "$COMM" | bytes)"
expect_eq "-j: drains = bpftrace's" "$(jq --arg c "$(shown "$COMM")" '.sites[] | select(.site == "generic_fadvise" and .comm == $c) | .drains' "$OUT")" "$TRUTH_DRAINS"
check "-j: time, RFC 3339 UTC, while it ran" times_between "$OUT" "$T0" "$T1"

# --prom: comm is no label; the file stays valid for promtool and node_exporter
OUT=$TMPDIR_TEST/prom-stdout
DIR=$TMPDIR_TEST/textfile
mkdir -p "$DIR"
PROM=$DIR/drainstat.prom
forced_drains "$COMM" --prom "$PROM" 0.5
sleep 1.2
kill -TERM "$DS_PID"
wait_drainstat
expect_eq "--prom: exit 0" "$DS_RC" 0
check "--prom: promtool check metrics" bash -c "promtool check metrics < '$PROM'"
check "--prom: no control bytes" bash -c "! LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' < '$PROM')"
check "--prom: no comm" bash -c "! grep -q 'ev\"l' '$PROM'"
D=$(prom_sum "$PROM" drainstat_drains_total 'site="generic_fadvise"')
expect_eq "--prom: drains = bpftrace's" "$D" "$TRUTH_DRAINS"
expect_eq "--prom: drains = DONTNEED escalations" "$D" \
	"$(prom_value "$PROM" drainstat_fadvise_escalations_total)"
scrape_textfile "$DIR" "$TMPDIR_TEST/scrape"
check "node_exporter: node_textfile_scrape_error 0" grep -q '^node_textfile_scrape_error 0$' "$TMPDIR_TEST/scrape"
check "node_exporter: drainstat series" grep -qE '^drainstat_drains_total\{(cgroup="[^"]*",)?site="generic_fadvise"\} ' \
	"$TMPDIR_TEST/scrape"

# a comm that is not UTF-8: text shows the bytes escaped, JSON too: the byte
# 0xff as \xff, the character U+00FF (UTF-8 c3 bf) as the text report writes it,
# \xc3\xbf; decoding \xHH gives back the bytes
COMM=$'\xff\xfeu8'$$
COMM=${COMM:0:15}
OUT=$TMPDIR_TEST/utf8
forced_drains "$COMM"
kill -INT "$DS_PID"
wait_drainstat
check "invalid UTF-8 comm, text: escaped" test -n "$(site_row "$OUT" '\xff\xfeu8')"
check "invalid UTF-8 comm, text: no raw byte" bash -c "! LC_ALL=C grep -q \$'\xff' '$OUT'"
COMM=$'\xff\xc3\xbfu8'$$
OUT=$TMPDIR_TEST/utf8.json
forced_drains "$COMM" -j
kill -INT "$DS_PID"
wait_drainstat
check "invalid UTF-8 comm, JSON: valid" jq_ok . "$OUT"
check "invalid UTF-8 comm, JSON: ASCII only" bash -c "! LC_ALL=C grep -q '[^ -~]' '$OUT'"
JCOMM=$(jq -j '.sites[] | select(.site == "generic_fadvise" and (.comm | endswith("u8'$$'"))) | .comm' "$OUT")
expect_eq "invalid UTF-8 comm, JSON: 0xff as \\xff, U+00FF as \\xc3\\xbf" "$JCOMM" '\xff\xc3\xbfu8'$$
expect_eq "invalid UTF-8 comm, JSON: round-trips (\\xHH decoded)" \
	"$(printf '%s' "$JCOMM" | unescape | bytes)" "$(printf '%s' "$COMM" | bytes)"

# a cgroup and a program file named with ESC, quotes, a backslash, invalid UTF-8
# (and a newline for the file; cgroup names refuse it): the header's filter and the
# -T log's user frames stay inert
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
EVIL=$'ds\e[31m"\\\xff'$$
if [ -n "$V2" ] && mkdir "$V2/$EVIL"; then
	COMM=dscgevil$$
	COMM=${COMM:0:15}
	N=10
	mkdir -p "$TMPDIR_TEST/bin"
	cp "$WORKLOADS/drainforce" "$TMPDIR_TEST/bin/$EVIL"$'\n'
	"$TMPDIR_TEST/bin/$EVIL"$'\n' -W -n $N -c "$COMM" "$TMPDIR_TEST/data" &
	WL=$!
	echo $WL >"$V2/$EVIL/cgroup.procs"
	wait_comm $WL "$COMM"
	truth_begin $WL
	OUT=$TMPDIR_TEST/cgevil
	start_drainstat "$OUT" --cgroup "$V2/$EVIL" -T 1ns
	# on CPU B, as forced_drains runs it: its page faults (the -T log) on
	# CPU A would flush the workload's batch, and that round would not drain
	taskset -a -p -c 1 "$DS_PID" >/dev/null
	kill -USR1 $WL
	wait $WL
	truth_end
	sleep 0.3
	kill -INT "$DS_PID"
	wait_drainstat
	expect_eq "hostile cgroup and file names: exit 0" "$DS_RC" 0
	check "hostile cgroup and file names: no raw ESC or 0xff" \
		bash -c "! LC_ALL=C grep -q \$'[\x1b\xff]' '$OUT'"
	check "hostile cgroup: the header's filter escaped" \
		grep -qF "cgroup $V2/ds\x1b[31m\"\x5c\xff" "$OUT"
	expect_eq "hostile cgroup: its drains = bpftrace's" \
		"$(site_field "$OUT" generic_fadvise "$COMM" 3)" "$TRUTH_DRAINS"
	# (the user stack stops in libc, which has no frame pointers: the program's
	# own file name in a frame is tests/unit/test_umaps.c's)
	rmdir "$V2/$EVIL"
else
	fail "hostile cgroup: cannot make one under ${V2:-no cgroup v2}"
fi
exit 0
