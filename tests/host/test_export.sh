#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# JSON lines and the Prometheus textfile export on the live kernel: the same
# truth as test_drains.sh, read by jq, promtool and a real node_exporter.
set -u
. tests/host/lib.sh

N=100
jq_ok() { jq -e "$@" >/dev/null; }
DIR=$TMPDIR_TEST/textfile
mkdir -p "$DIR"


# -j: one JSON object, the drain model's names
OUT=$TMPDIR_TEST/json
COMM=dsjson$$
BEFORE=$(prog_ids)
forced_drains "$COMM" -j
NAMES=$(prog_names "$BEFORE")
kill -INT $DS_PID
wait_drainstat
expect_eq "-j: exit 0" "$DS_RC" 0
expect_eq "-j: one line" "$(wc -l <"$OUT")" 1
check "-j: valid JSON" jq_ok . "$OUT"
site=".sites[] | select(.site == \"generic_fadvise\" and .comm == \"$COMM\")"
D=$(jq "$site | .drains" "$OUT")
expect_eq "-j: drains = bpftrace's" "$D" "$TRUTH_DRAINS"
# remote: CPU 0's one per drain, and a few to other CPUs on a machine with more than two
expect_eq "-j: remote works = the works of CPUs but 1" "$(jq "$site | .works - .self_works" "$OUT")" \
	"$(jq '[.cpus[] | select(.cpu != 1) | .works] | add' "$OUT")"
expect_eq "-j: dispatch samples" "$(jq "$site | .dispatch_ns.count" "$OUT")" "$(jq "$site | .works" "$OUT")"
check "-j: dispatch p50 <= p99 <= max" jq_ok "$site | .dispatch_ns | .p50 <= .p99 and .p99 <= .max and .p50 > 0" "$OUT"
expect_eq "-j: escalations = drains" "$(jq '.fadvise[] | select(.advice == "dontneed") | .escalations' "$OUT")" "$D"
expect_eq "-j: victim CPU 0 = drains" "$(jq '.cpus[] | select(.cpu == 0) | .works' "$OUT")" "$D"
MODE=$(jq -r .mode "$OUT")
expect_eq "-j: mode" "$MODE" "${DRAINSTAT_MODE:-$MODE}"
check "-j: a mode" test "$MODE" = full -o "$MODE" = kprobe -o "$MODE" = tracepoint
expect_eq "-j: lost" "$(jq .lost "$OUT")" 0
# IPIs only with --ipis: by default no program runs at every IPI of the system
check "-j: its programs were loaded: $NAMES" grep -q drainstat_queue_work <<<"$NAMES"
check "-j: none on ipi_send_cpu" test "${NAMES/ipi_send_cpu/}" = "$NAMES"
expect_eq "-j: IPIs not seen" "$(jq .sees.ipis "$OUT")" false
check "-j: named where the run cannot see" jq_ok '.cannot_see | test("IPIs [(]counted with --ipis[)]")' \
	"$OUT"

# --ipis: counted where the kernel has ipi:ipi_send_cpu (about 6.4 on), one wakeup a work at most
OUT=$TMPDIR_TEST/ipis
COMM=dsipis$$
BEFORE=$(prog_ids)
forced_drains "$COMM" -j --ipis
NAMES=$(prog_names "$BEFORE")
kill -INT $DS_PID
wait_drainstat
expect_eq "--ipis: exit 0" "$DS_RC" 0
HAS_IPI=false
grep -q 'ipi_send_cpu found$' "$OUT.err" && HAS_IPI=true
expect_eq "--ipis: IPIs counted where the kernel has ipi_send_cpu" "$(jq .sees.ipis "$OUT")" "$HAS_IPI"
site=".sites[] | select(.site == \"generic_fadvise\" and .comm == \"$COMM\")"
if [ "$HAS_IPI" = true ]; then
	check "--ipis: a program on ipi_send_cpu: $NAMES" test "${NAMES/ipi_send_cpu/}" != "$NAMES"
	check "--ipis: IPIs at most one a work" jq_ok "$site | .ipis <= .works" "$OUT"
else
	check "--ipis: named where the run cannot see" \
		jq_ok '.cannot_see | test("IPIs [(]no ipi:ipi_send_cpu tracepoint[)]")' "$OUT"
fi
expect_eq "--ipis: drains = bpftrace's" "$(jq "$site | .drains" "$OUT")" "$TRUTH_DRAINS"
expect_eq "--ipis: victim CPU 0 = drains" "$(jq '.cpus[] | select(.cpu == 0) | .works' "$OUT")" \
	"$TRUTH_DRAINS"
expect_eq "--ipis: lost" "$(jq .lost "$OUT")" 0

# -j INTERVAL COUNT: NDJSON
"$DRAINSTAT" -j 0.3 3 >"$TMPDIR_TEST/nd" 2>&1
expect_eq "-j 0.3 3: three lines" "$(wc -l <"$TMPDIR_TEST/nd")" 3
check "-j 0.3 3: every line is JSON" jq_ok -s 'length == 3' "$TMPDIR_TEST/nd"

# --prom: cumulative counters in an atomic file
OUT=$TMPDIR_TEST/prom-stdout
PROM=$DIR/drainstat.prom
COMM=dsprom$$
forced_drains "$COMM" --prom "$PROM" 0.5
sleep 1.2
check "--prom: the file exists" test -s "$PROM"
check "--prom: promtool check metrics" bash -c "promtool check metrics < '$PROM'"
metric() { prom_value "$PROM" "$1"; }
# a site's series summed over its cgroup labels (the workload has one)
site_metric() { prom_sum "$PROM" "$@" 'site="generic_fadvise"'; }
D=$(site_metric drainstat_drains_total)
expect_eq "--prom: drains = bpftrace's" "$D" "$TRUTH_DRAINS"
expect_eq "--prom: remote works = the works of CPUs but 1" \
	"$(site_metric drainstat_works_total 'kind="remote"')" \
	"$(awk '/^drainstat_victim_works_total\{/ && !/cpu="1"/ { n += $2 } END { print n + 0 }' "$PROM")"
expect_eq "--prom: victim CPU 0 = drains" "$(metric 'drainstat_victim_works_total{cpu="0"}')" "$D"
expect_eq "--prom: wait histogram +Inf = count" \
	"$(site_metric drainstat_wait_seconds_bucket 'le="+Inf"')" \
	"$(site_metric drainstat_wait_seconds_count)"
expect_eq "--prom: escalations = drains" "$(metric drainstat_fadvise_escalations_total)" "$D"
check "--prom: ends with a newline" test "$(tail -c 1 "$PROM" | od -An -c | tr -d ' ')" = '\n'
check "--prom: info, the mode of -j" grep -q "^drainstat_info{.*mode=\"$MODE\".*} 1\$" "$PROM"

# a real node_exporter reads the directory
scrape_textfile "$DIR" "$TMPDIR_TEST/scrape"
# node_exporter sorts the labels: cgroup, then site
check "node_exporter: drainstat series" grep -qE '^drainstat_drains_total\{(cgroup="[^"]*",)?site="generic_fadvise"\} ' \
	"$TMPDIR_TEST/scrape"
check "node_exporter: node_textfile_scrape_error 0" grep -q '^node_textfile_scrape_error 0$' "$TMPDIR_TEST/scrape"

kill -TERM $DS_PID
wait_drainstat
expect_eq "--prom: SIGTERM exits 0" "$DS_RC" 0
# and its lock file, which stays (removing one races with the next writer)
expect_eq "--prom: nothing but the export and its lock file in the directory" \
	"$(ls -A "$DIR" | tr '\n' ' ')" ".drainstat.prom.lock drainstat.prom "
check "--prom: stdout stays empty" test ! -s "$OUT"

# a path that cannot be written: exit 74 at start, one line
"$DRAINSTAT" --prom /nonexistent/dir/x.prom -d 1 >/dev/null 2>"$TMPDIR_TEST/err"
expect_eq "--prom missing directory: exit 74" $? 74
check "--prom missing directory: says so" grep -q 'cannot write /nonexistent/dir/x.prom' "$TMPDIR_TEST/err"
exit 0
