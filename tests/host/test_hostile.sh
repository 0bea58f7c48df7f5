#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A comm holding '"', '\', a newline and an ESC: the text report escapes it,
# JSON round-trips it, the Prometheus export (no comm label) stays valid.
set -u
. tests/host/lib.sh

N=20
COMM=$'ev"l\\\n\x1b'$$
COMM=${COMM:0:15}
# shellcheck disable=SC2317 # called through check
jq_ok() { jq -e "$@" >/dev/null; }
bytes() { od -An -tx1 | tr -s ' \n' ' '; }


# plain text: one line per site, no raw control bytes, the comm escaped
OUT=$TMPDIR_TEST/text
forced_drains "$COMM"
kill -INT "$DS_PID"
wait_drainstat
expect_eq "text: exit 0" "$DS_RC" 0
check "text: no raw ESC" bash -c "! grep -q $'\x1b' '$OUT'"
# \ as \x5c too: every escape reads \xHH
check "text: the site row holds the escaped comm" \
	grep -qF 'generic_fadvise ev"l\x5c\x0a\x1b' "$OUT"
# the exact count is test_drains.sh's job; here: the row is whole, its numbers read
expect_range "text: drains in that row" \
	"$(awk '$1 == "generic_fadvise" && $2 ~ /^ev"l/ { print $3 }' "$OUT")" $((N - 2)) $N

# JSON: valid, and .comm decodes to the very bytes
OUT=$TMPDIR_TEST/json
forced_drains "$COMM" -j
kill -INT "$DS_PID"
wait_drainstat
expect_eq "-j: exit 0" "$DS_RC" 0
expect_eq "-j: one line" "$(wc -l <"$OUT")" 1
check "-j: valid JSON" jq_ok . "$OUT"
expect_eq "-j: comm round-trips" \
	"$(jq -j '.sites[] | select(.site == "generic_fadvise" and (.comm | startswith("ev"))) | .comm' "$OUT" | bytes)" \
	"$(printf '%s' "$COMM" | bytes)"
expect_range "-j: drains" "$(jq --arg c "$COMM" '.sites[] | select(.site == "generic_fadvise" and .comm == $c) | .drains' "$OUT")" $((N - 2)) $N

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
D=$(prom_value "$PROM" 'drainstat_drains_total{site="generic_fadvise"}')
expect_range "--prom: drains" "$D" $((N - 2)) $N
expect_eq "--prom: drains = DONTNEED escalations" "$D" \
	"$(prom_value "$PROM" drainstat_fadvise_escalations_total)"
scrape_textfile "$DIR" "$TMPDIR_TEST/scrape"
check "node_exporter: node_textfile_scrape_error 0" grep -q '^node_textfile_scrape_error 0$' "$TMPDIR_TEST/scrape"
check "node_exporter: drainstat series" grep -q '^drainstat_drains_total{site="generic_fadvise"} ' "$TMPDIR_TEST/scrape"

# a comm that is not UTF-8: text shows the bytes escaped, JSON stays valid JSON
# and keeps each byte as \u00XX
COMM=$'\xff\xfeu8'$$
COMM=${COMM:0:15}
OUT=$TMPDIR_TEST/utf8
forced_drains "$COMM"
kill -INT "$DS_PID"
wait_drainstat
check "invalid UTF-8 comm, text: escaped" grep -qF "generic_fadvise \xff\xfeu8" "$OUT"
check "invalid UTF-8 comm, text: no raw byte" bash -c "! LC_ALL=C grep -q \$'\xff' '$OUT'"
OUT=$TMPDIR_TEST/utf8.json
forced_drains "$COMM" -j
kill -INT "$DS_PID"
wait_drainstat
check "invalid UTF-8 comm, JSON: valid" jq_ok . "$OUT"
check "invalid UTF-8 comm, JSON: each byte as \\u00XX" grep -qF '"comm":"\u00ff\u00feu8' "$OUT"

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
	OUT=$TMPDIR_TEST/cgevil
	start_drainstat "$OUT" --cgroup "$V2/$EVIL" -T 1ns
	kill -USR1 $WL
	wait $WL
	sleep 0.3
	kill -INT "$DS_PID"
	wait_drainstat
	expect_eq "hostile cgroup and file names: exit 0" "$DS_RC" 0
	check "hostile cgroup and file names: no raw ESC or 0xff" \
		bash -c "! LC_ALL=C grep -q \$'[\x1b\xff]' '$OUT'"
	check "hostile cgroup: the header's filter escaped" \
		grep -qF "cgroup $V2/ds\x1b[31m\"\x5c\xff" "$OUT"
	expect_range "hostile cgroup: its drains" \
		"$(site_field "$OUT" generic_fadvise "$COMM" 3)" $((N - 2)) $N
	# (the user stack stops in libc, which has no frame pointers: the program's
	# own file name in a frame is tests/unit/test_umaps.c's)
	rmdir "$V2/$EVIL"
else
	fail "hostile cgroup: cannot make one under ${V2:-no cgroup v2}"
fi
exit 0
