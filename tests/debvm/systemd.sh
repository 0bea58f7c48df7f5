#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The systemd unit under systemd, in the Debian 12 system VM (tests/debvm/run),
# from the payload's copy of the source tree: drainstat's .deb installed (make
# deb), the unit enabled and started, Debian's node_exporter serving the
# export from its textfile directory and Debian's Prometheus scraping it with
# dist/'s alerting rules loaded, and the Grafana dashboard's every query
# evaluated there. Truth: bpftrace's count of drainforce's N rounds. Then
# two transient units of one comm, told apart by their cgroups, each held to
# bpftrace's count; and a drain held by a spinner in a unit of its own, named
# in flight.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/common.sh
. tests/lib/truth.sh

DEB=$(ls build/deb/drainstat_*_amd64.deb 2>/dev/null | head -n 1)
EXPORT=/var/lib/prometheus/node-exporter/drainstat.prom
PROM=http://127.0.0.1:9090
N=100
COMM=dsunit$$
COMM=${COMM:0:15}
# the workload's drains: the series of its site and its cgroup, this script's
# unit (--prom-cgroup=unit), with no other process's fadvise in it
SITE="drainstat_drains_total{site=\"generic_fadvise\",cgroup=\"$(sed -n 's/^0:://p' /proc/self/cgroup)\"}"

# query EXPR: the value of a PromQL expression now (one series), or "".
query() {
	curl -sf --data-urlencode "query=$1" "$PROM/api/v1/query" |
		jq -r '.data.result[0].value[1] // empty'
}

# alert_state NAME: "firing", "pending" or "" (inactive).
alert_state() {
	curl -sf "$PROM/api/v1/alerts" |
		jq -r --arg n "$1" '[.data.alerts[] | select(.labels.alertname == $n) | .state][0] // empty'
}

# rules GROUP [FILTER]: how many rules of GROUP Prometheus has loaded (those
# FILTER, a jq filter, keeps).
rules() {
	curl -sf "$PROM/api/v1/rules" |
		jq --arg g "$1" "[.data.groups[] | select(.name == \$g) | .rules[] | ${2:-.}] | length"
}

# last_evaluation RULE: when Prometheus last evaluated the rule named RULE (its
# API's RFC 3339 time), empty if it has not.
last_evaluation() {
	curl -sf "$PROM/api/v1/rules" |
		jq -r --arg n "$1" '[.data.groups[].rules[] | select(.name == $n) | .lastEvaluation][0] // empty'
}

# samples EXPR: how many samples, not NaN, the PromQL expression returns now,
# or Prometheus's error.
samples() {
	curl -s --data-urlencode "query=$1" "$PROM/api/v1/query" |
		jq -r 'if .status != "success" then "error: \(.error)"
			elif .data.resultType != "vector" then "a \(.data.resultType), not a vector"
			else [.data.result[] | select(.value[1] != "NaN")] | length end'
}

drainstat_progs() { bpftool prog list 2>/dev/null | grep -c ' name drainstat_'; }

# scrape_health: node_exporter's target as Prometheus last saw it, for a failure's message.
scrape_health() {
	curl -sf "$PROM/api/v1/targets" |
		jq -r '.data.activeTargets[] | "\(.health), last scrape \(.lastScrapeDuration)s, \(.lastError)"'
}

if [ -z "$DEB" ]; then
	fail "systemd: the .deb" "no build/deb/drainstat_*_amd64.deb in the payload (make deb)"
	exit 1
fi

# ---- the package: installed, the unit neither enabled nor started
dpkg -i "$DEB" >/tmp/dpkg.log 2>&1
expect_eq "dpkg -i $(basename "$DEB"): exit 0" $? 0
expect_eq "the package leaves the unit disabled" "$(systemctl is-enabled drainstat.service 2>&1)" disabled
expect_eq "the package does not start the unit" "$(systemctl is-active drainstat.service 2>&1)" inactive
check "man drainstat: the page is installed" test -s /usr/share/man/man8/drainstat.8.gz

# ---- Prometheus: node_exporter scraped every 3 s, the rules evaluated every
# second: dist/'s as shipped, and one that fires on this test's workload. The
# scrape's timeout is its interval: at 1 s, under TCG with two other VMs on
# the host, the export's first drain did not reach Prometheus in 30 s (seen
# once; a slow scrape of Debian's node_exporter, every collector on, would do
# it). A failure prints the target's health.
RULES=/usr/share/doc/drainstat/examples/drainstat.rules.yml
cp "$RULES" /etc/prometheus/drainstat.rules.yml
# (the workload's rule is written once the count before it is known)
echo 'groups: []' >/etc/prometheus/drainstat-test.rules.yml
cat >/etc/prometheus/prometheus.yml <<'EOF'
global:
  scrape_interval: 3s
  scrape_timeout: 3s
  evaluation_interval: 1s
rule_files:
  - /etc/prometheus/drainstat.rules.yml
  - /etc/prometheus/drainstat-test.rules.yml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['localhost:9100']
EOF
systemctl restart prometheus prometheus-node-exporter
wait_until 60 curl -sf "$PROM/-/ready" -o /dev/null
check "prometheus: ready" curl -sf "$PROM/-/ready" -o /dev/null
RULES_SHIPPED=$(grep -c '^ *- alert:' "$RULES")
# a rule's health is "unknown" until its first evaluation: wait for every one
# to be evaluated (seen once on 6.12: all 7 still unknown), then want each ok
wait_until 30 output_is "$RULES_SHIPPED" rules drainstat 'select(.health != "unknown")'
expect_eq "prometheus: dist/'s rules loaded, each healthy" \
	"$(rules drainstat 'select(.health == "ok")')" "$RULES_SHIPPED"

# ---- the unit, enabled and started
systemctl enable --now drainstat.service >/tmp/enable.log 2>&1
expect_eq "systemctl enable --now drainstat: exit 0" $? 0
wait_until 60 test -s "$EXPORT"
check "the unit writes $EXPORT" test -s "$EXPORT"
expect_eq "the unit runs" "$(systemctl is-active drainstat.service)" active
check "the export passes promtool" bash -c "promtool check metrics <$EXPORT"
MODE=$(sed -n 's/^drainstat_info{.*mode="\([a-z]*\)".*/\1/p' "$EXPORT")
echo "systemd: the unit runs drainstat in $MODE mode"
check "the unit's drainstat runs in a mode" test -n "$MODE"
wait_until 30 output_isnt "" query drainstat_info
expect_eq "prometheus: drainstat_info scraped" "$(query drainstat_info)" 1
# the alert was pending (absent(drainstat_info)) until the first scrape: it
# is inactive from the first evaluation that starts once the series can be
# queried, whenever the loaded VM gets to it (not after a set time). Two
# evaluations after the series was queried: the first may have begun before.
for _ in 1 2; do
	EVALUATED=$(last_evaluation DrainstatDown)
	wait_until 60 output_isnt "$EVALUATED" last_evaluation DrainstatDown
done
wait_until 5 output_is "" alert_state DrainstatDown
expect_eq "alert DrainstatDown: inactive while the unit runs" "$(alert_state DrainstatDown)" ""

# the live sandbox, as systemd judges the running unit
systemd-analyze security drainstat.service >/tmp/security 2>&1
check_exposure "systemd-analyze security, live" /tmp/security 3.0
check "security, live: no CAP_SYS_ADMIN" grep -q '^✓ CapabilityBoundingSet=~CAP_SYS_ADMIN' /tmp/security
check "security, live: no network" grep -q '^✓ PrivateNetwork=' /tmp/security
check "security, live: system read-only" grep -q '^✓ ProtectSystem=' /tmp/security
PID=$(systemctl show -p MainPID --value drainstat.service)
expect_eq "the process has only CAP_BPF, CAP_PERFMON and CAP_SYSLOG" \
	"$(grep '^CapEff:' /proc/"$PID"/status | awk '{ print $2 }')" \
	"$(printf '%016x' $(((1 << 39) | (1 << 38) | (1 << 34))))"

# ---- the workload: N forced drains. Its setup drains too (the cache
# dropped, a warm-up round): the count starts once it is done (-W), exported
# at once (reload) and scraped; the rounds start right after an export (15 s
# apart), so that the reload's export is told from the next one.
build/tests/drainforce -W -n $N -c "$COMM" /var/tmp/drainstat-unit.data >/tmp/drainforce.log 2>&1 &
WL=$!
wait_comm $WL "$COMM"
M0=$(stat -c %.9Y "$EXPORT")
systemctl reload drainstat.service
wait_until 5 output_isnt "$M0" stat -c %.9Y "$EXPORT"
BEFORE=$(prom_value "$EXPORT" "$SITE")
BEFORE=${BEFORE:-0}
wait_until 30 output_is "$BEFORE" query "sum($SITE) or vector(0)"
expect_eq "prometheus: the export's drains before the rounds, scraped" \
	"$(query "sum($SITE) or vector(0)")" "$BEFORE" || echo "    node_exporter: $(scrape_health)"
# the alert: more than N/2 drains at generic_fadvise over the count before
# (increase() would see nothing where the series starts with the workload)
cat >/etc/prometheus/drainstat-test.rules.yml <<EOF
groups:
  - name: drainstat-test
    rules:
      - alert: DrainsDuringWorkload
        expr: sum(${SITE}) > $((BEFORE + N / 2))
EOF
systemctl reload prometheus
wait_until 30 output_is 1 rules drainstat-test
expect_eq "alert DrainsDuringWorkload: inactive before the workload" "$(alert_state DrainsDuringWorkload)" ""
# the truth: bpftrace's count of the rounds' drains, not N. A round needs no
# drain when something else flushed CPU A's batch before its DONTNEED (a
# task's munmap or exit there): one round of 100 once, on 6.1.
truth_start "comm:$COMM" /tmp/truth-rounds ||
	fail "bpftrace counts the rounds' drains" "$(tail -n 3 /tmp/truth-rounds.err)"
M0=$(stat -c %.9Y "$EXPORT")
wait_until 20 output_isnt "$M0" stat -c %.9Y "$EXPORT"
TICK=$(date +%s)
kill -USR1 $WL
wait $WL
expect_eq "drainforce: $N rounds" $? 0
truth_stop || fail "bpftrace counted the rounds' drains" "$(tail -n 3 /tmp/truth-rounds.err)"
DRAINS=$(truth_drains "$MODE")
check "bpftrace: the rounds' drains counted, over $((N / 2)) ($DRAINS)" test "$DRAINS" -gt $((N / 2))
FILE_BEFORE=$(prom_value "$EXPORT" "$SITE")
systemctl reload drainstat.service
expect_eq "systemctl reload drainstat: exit 0" $? 0
wait_until 5 output_isnt "$FILE_BEFORE" prom_value "$EXPORT" "$SITE"
ELAPSED=$(($(date +%s) - TICK))
echo "systemd: drainforce and the reload took $ELAPSED s after an export"
check "systemctl reload: the export rewritten at once ($ELAPSED s < 14 s after the last)" \
	test "$ELAPSED" -lt 14 -a "$(prom_value "$EXPORT" "$SITE")" != "${FILE_BEFORE}"
wait_until 30 output_is $((BEFORE + DRAINS)) query "sum($SITE)"
expect_eq "prometheus: $SITE went up by bpftrace's $DRAINS" "$(query "sum($SITE)")" $((BEFORE + DRAINS))
wait_until 30 output_is firing alert_state DrainsDuringWorkload
expect_eq "alert DrainsDuringWorkload (over $((N / 2)) drains more): firing" \
	"$(alert_state DrainsDuringWorkload)" firing

# ---- the Grafana dashboard, shipped beside the rules: every target of every
# panel, its variables filled as with "All" selected and a 5-minute rate
# window (tests/prom/dashboard-exprs), returns data from this Prometheus now
# that the workload's drains are scraped: one sample at least, not NaN (a
# quantile over buckets that did not move). Tracepoint mode exports neither
# drainstat_lock_seconds nor drainstat_mutex_waiters: none there.
DASHBOARD=/usr/share/doc/drainstat/examples/drainstat.grafana.json
check "the package installs the Grafana dashboard" test -s "$DASHBOARD"
while IFS=$'\t' read -r panel ref expr; do
	want=data
	case $MODE:$expr in
	tracepoint:*drainstat_lock_seconds* | tracepoint:*drainstat_mutex_waiters*) want=none ;;
	esac
	got=$(samples "$expr")
	if [ "$want" = none ] && [ "$got" = 0 ]; then
		pass "prometheus: dashboard panel \"$panel\" $ref returns none ($MODE mode)"
	elif [ "$want" = data ] && [[ $got =~ ^[1-9][0-9]*$ ]]; then
		pass "prometheus: dashboard panel \"$panel\" $ref returns data"
	else
		fail "prometheus: dashboard panel \"$panel\" $ref returns $want" "got '$got' (samples, not NaN): $expr"
	fi
done < <(tests/prom/dashboard-exprs "$DASHBOARD")

# ---- two units of one comm: drainforce at once as the transient units
# drainwork.service and drainwork2.service, both under the comm drainwork.
# drainstat -c drainwork's text, JSON and --prom reports, and the unit's
# export as Prometheus scrapes it (its cgroup label: the unit,
# --prom-cgroup=unit), each show two generic_fadvise rows, one per unit, each
# held to bpftrace's count for the unit's cgroup (its cgroup builtin: the
# cgroup's id, its directory's inode). The units run 80 and 30 rounds: their
# counts differ, so that swapped they fail too.
UNITS=(drainwork drainwork2)
ROUNDS=(80 30)
WCOMM=drainwork
DRAINSTAT=/usr/sbin/drainstat
TMP=$(mktemp -d)
UNITS_START=$SECONDS

# unit_start UNIT ROUNDS: drainforce -W -H, ROUNDS forced drains, as the
# transient unit UNIT.service under WCOMM; once its setup is done (WCOMM
# taken), its pid in UNIT_PID, the end of its rounds read from fd UNIT_DONE.
unit_start() {
	local fifo=$TMP/$1.done
	mkfifo "$fifo"
	exec {UNIT_DONE}<>"$fifo"
	systemd-run --quiet --unit="$1" -p StandardOutput=file:"$fifo" \
		"$PWD/build/tests/drainforce" -W -H -n "$2" -c "$WCOMM" "/var/tmp/$1.data" || return 1
	UNIT_PID=$(systemctl show -p MainPID --value "$1.service")
	wait_comm "$UNIT_PID" "$WCOMM"
}

# unit_series UNIT: the export's series of UNIT's drains at generic_fadvise.
unit_series() {
	echo "drainstat_drains_total{site=\"generic_fadvise\",cgroup=\"/system.slice/$1.service\"}"
}

# export_labels: the site and cgroup label pairs of the unit's export, each
# with its number of series: which took the --prom-sites places.
export_labels() {
	grep -o '{site="[^"]*",cgroup="[^"]*"' "$EXPORT" | sort | uniq -c
}

# export_now: the unit's export rewritten now (systemctl reload); 1 if not in 10 s.
export_now() {
	local m0
	m0=$(stat -c %.9Y "$EXPORT")
	systemctl reload drainstat.service && wait_until 10 output_isnt "$m0" stat -c %.9Y "$EXPORT"
}

PIDS=() DONE=() IDS=() UNIT_BEFORE=() UNIT_AFTER=() TRUTH=() LABELS=
for i in 0 1; do
	u=${UNITS[i]}
	unit_start "$u" "${ROUNDS[i]}" || fail "systemd-run --unit=$u: drainforce as $WCOMM" "$(systemctl status "$u" 2>&1 | tail -n 3)"
	PIDS+=("$UNIT_PID") DONE+=("$UNIT_DONE")
	IDS+=("$(stat -c %i "/sys/fs/cgroup/system.slice/$u.service")")
	expect_eq "$u.service: drainforce in its cgroup" \
		"$(sed -n 's/^0:://p' "/proc/$UNIT_PID/cgroup")" "/system.slice/$u.service"
done
TRUTH_BY=cgroup truth_start "comm:$WCOMM" "$TMP/truth" ||
	fail "bpftrace counts the units' drains per cgroup" "$(tail -n 3 "$TMP/truth.err")"
DS_PIDS=()
start_attached "$TMP/text" -c "$WCOMM"
start_attached "$TMP/json" -c "$WCOMM" -j
start_attached "$TMP/prom" -c "$WCOMM" --prom "$TMP/units.prom" 0.5
wait_until 30 test -e "$TMP/units.prom"
export_now || fail "the export before the units' rounds" "not rewritten on reload"
for u in "${UNITS[@]}"; do
	UNIT_BEFORE+=("$(prom_value "$EXPORT" "$(unit_series "$u")")")
done
kill -USR1 "${PIDS[@]}"
for i in 0 1; do
	read -r -t 120 _ <&"${DONE[i]}" || fail "${UNITS[i]}: drainforce ends its rounds" "not in 120 s"
done
truth_stop || fail "bpftrace counted the units' drains" "$(tail -n 3 "$TMP/truth.err")"
export_now || fail "the export after the units' rounds" "not rewritten on reload"
stop_attached
systemctl stop "${UNITS[@]/%/.service}"

OUT=$TMP/text
MODE=$(mode_of "$OUT")
for i in 0 1; do
	TRUTH+=("$(truth_drains "$MODE" "${IDS[i]}")")
done
check "bpftrace: the units' drains counted, and unequal (${TRUTH[*]})" \
	test "${TRUTH[0]}" -gt 0 -a "${TRUTH[1]}" -gt 0 -a "${TRUTH[0]}" != "${TRUTH[1]}"
expect_eq "text: two rows of $WCOMM at generic_fadvise" "$(site_rows "$OUT" generic_fadvise "$WCOMM")" 2
check "-j: valid JSON" jq -e . "$TMP/json" >/dev/null
for i in 0 1; do
	u=${UNITS[i]}
	check_cgroup_row "$OUT" "$TMP/json" "$WCOMM" "/system.slice/$u.service" "${IDS[i]}" "${TRUTH[i]}"
	expect_eq "--prom: drains of $u.service = bpftrace's" \
		"$(prom_value "$TMP/units.prom" "$(unit_series "$u")")" "${TRUTH[i]}"
	UNIT_AFTER+=("$(prom_value "$EXPORT" "$(unit_series "$u")")")
	got="(no series)"
	[ -z "${UNIT_AFTER[i]}" ] || got=$((UNIT_AFTER[i] - ${UNIT_BEFORE[i]:-0}))
	expect_eq "the unit's export: drains of $u.service went up by bpftrace's" "$got" "${TRUTH[i]}" ||
		LABELS=1
done
[ -z "$LABELS" ] || { echo "the unit's export, its labels:" && export_labels | sed 's/^/    /'; }
for i in 0 1; do
	series=$(unit_series "${UNITS[i]}")
	wait_until 30 output_is "${UNIT_AFTER[i]}" query "$series"
	expect_eq "prometheus: drains of ${UNITS[i]}.service, as exported" \
		"$(query "$series")" "${UNIT_AFTER[i]:-(none)}"
done
echo "systemd: drainstat -c $WCOMM, the units' rounds (bpftrace: ${TRUTH[*]}):"
sed 's/^/    /' "$OUT"
echo "systemd: the two units took $((SECONDS - UNITS_START)) s"
rm -f /var/tmp/drainwork*.data

# ---- a drain stuck behind a spinner in a unit of its own: tests/lib/stuck.sh's
# held drain, stuckdrain -X's spinner (a process of its own) moved into the
# transient unit drainspin.service, which systemd-run starts (written into its
# cgroup.procs, as systemd's AttachProcessesToUnit would, with no D-Bus call),
# its dropper and waiter left in this script's unit.
# The in-flight view, text and JSON, names the spinner's unit on the pending
# CPU's line and the caller's on the caller's.
. tests/lib/stuck.sh
stuck_machine_params "$PWD/build/tests/stuckdrain" /var/tmp/drainspin.data
SPIN_START=$SECONDS

# in_drainspin PID: stuckdrain PID's spinner moved into drainspin.service.
# shellcheck disable=SC2317 # run by stuck_run
in_drainspin() {
	stuck_spinner_tid "$1" >/sys/fs/cgroup/system.slice/drainspin.service/cgroup.procs
}

systemd-run --quiet --unit=drainspin sleep infinity
expect_eq "systemd-run --unit=drainspin: the unit runs" "$(systemctl is-active drainspin.service)" active
if check "in flight: RT throttling off" stuck_setup; then
	STUCK_ARGS=-X STUCK_PLACE=in_drainspin stuck_run "$TMP/stuck" \
		--stuck ${STUCK_MS}ms -T ${T_MS}ms 0.2 || fail "in flight: stuck run (text)"
	expect_eq "in flight: the spinner in drainspin.service" \
		"$STUCK_SPIN_CG" /system.slice/drainspin.service
	expect_eq "in flight: the dropper in this script's unit" \
		"$STUCK_CG" "$(sed -n 's/^0:://p' /proc/self/cgroup)"
	stuck_check_text "$(mode_of "$TMP/stuck")" "$TMP/stuck"
	STUCK_ARGS=-X STUCK_PLACE=in_drainspin stuck_run "$TMP/stuck.json" \
		--stuck ${STUCK_MS}ms -T ${T_MS}ms -j 0.2 || fail "in flight: stuck run (json)"
	stuck_check_json "$(mode_of "$TMP/stuck")" "$TMP/stuck.json"
	stuck_restore
	echo "systemd: the stuck drain's report, in flight:"
	awk '/^STUCK: / { f = 1 } f && /^$/ { exit } f' "$TMP/stuck.stuck" | sed 's/^/    /'
fi
systemctl stop drainspin.service
echo "systemd: the stuck drain in drainspin.service took $((SECONDS - SPIN_START)) s"
rm -rf "$TMP" "$STUCK_DATA"

# ---- stop: exit 0, no BPF program left
check "the unit's programs are loaded" test "$(drainstat_progs)" -gt 0
systemctl stop drainstat.service
expect_eq "systemctl stop: exit status 0" "$(systemctl show -p ExecMainStatus --value drainstat.service)" 0
expect_eq "systemctl stop: inactive, not failed" "$(systemctl is-active drainstat.service)" inactive
wait_until 10 output_is 0 drainstat_progs
expect_eq "systemctl stop: no BPF program left" "$(drainstat_progs)" 0
check "systemctl stop: the last export stays, whole" bash -c "promtool check metrics <$EXPORT"
journalctl -u drainstat.service -o cat --no-pager | tail -n 5 | sed 's/^/journal: /'
exit 0
