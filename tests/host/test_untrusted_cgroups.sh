#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Issue 40's cgroup attacks, made by an unprivileged user of the test's own
# with a delegated subtree (user@UID.service in a slice of the test's, as
# systemd delegates one), against root's drainstat run with the unit's three
# capabilities only (CAP_BPF, CAP_PERFMON, CAP_SYSLOG):
# 4. 4,500 mkdirs of ~3,800-byte paths (the old walk's 16 MB bound);
# 5. the user's cgroups hidden by chmod 700;
# 6. the user's drains in a cgroup 17 levels of 250 bytes deep (past PATH_MAX).
# Then 8 new root-owned *.service cgroups drain: each is named, the user's
# drains are named by their whole path (so --prom-cgroup=unit puts them under
# user@UID.service), no report and no -T event walks the tree (-v), and the
# CPU time a report costs stays small whatever the user made. A cgroup of the
# user's removed before a report names it is named by its parent. A path of
# 42 levels is named by its first and last 16 levels around "//...".
# 7. --prom-sites 3: four cgroups drain once and are removed; a unit that
# drains more takes a place once they have been idle for 3 exports.
set -u
. tests/host/lib.sh

MNT=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' \
	/proc/self/mountinfo)
if [ -z "$MNT" ]; then
	skip "untrusted cgroups" "no cgroup v2 hierarchy mounted"
	exit 0
fi
if ! untrusted_user; then
	skip "untrusted cgroups" "useradd failed"
	exit 0
fi
COMM=dsucg$$
COMM=${COMM:0:15}
SLICE=dstest$$.slice
UNIT=$SLICE/user@$UNTRUSTED_UID.service
NAME250=$(printf 'n%.0s' $(seq 250))
chmod 0711 "$TMPDIR_TEST"
mkdir -m 0755 "$TMPDIR_TEST/u"
chown "$UNTRUSTED_UID:$UNTRUSTED_GID" "$TMPDIR_TEST/u"

# shellcheck disable=SC2317 # run by the trap
cleanup_cgroups() {
	local p
	for p in $(jobs -p); do
		kill -KILL "$p" 2>/dev/null
	done
	[ -z "${UNTRUSTED:-}" ] || pkill -KILL -u "$UNTRUSTED" 2>/dev/null
	wait 2>/dev/null
	# paths past PATH_MAX: find works down from directory fds
	[ -d "$MNT/$SLICE" ] && chmod -R u+rwx "$MNT/$SLICE" 2>/dev/null
	for _ in $(seq 50); do
		[ -d "$MNT/$SLICE" ] || break
		find "$MNT/$SLICE" -depth -type d -delete 2>/dev/null
		sleep 0.1
	done
	cleanup_test
}
trap cleanup_cgroups EXIT

# the unit's capabilities, as root
CAPS=$UNIT_CAPS
CAPPED=$TMPDIR_TEST/capped
unit_caps_drainstat "$CAPPED"

mkdir -p "$MNT/$UNIT"
chown "$UNTRUSTED_UID:$UNTRUSTED_GID" "$MNT/$UNIT" "$MNT/$UNIT/cgroup.procs" \
	"$MNT/$UNIT/cgroup.threads" "$MNT/$UNIT/cgroup.subtree_control"

# 4. the flood: one chain of 14 levels of 250 bytes, 4,500 leaves at its end
T0=$(date +%s%N)
as_untrusted perl -e '
	my ($base, $n) = @ARGV;
	chdir $base or die "$base: $!";
	mkdir "flood" and chdir "flood" or die "flood: $!";
	for (1 .. 14) { mkdir $n and chdir $n or die "level: $!" }
	for my $i (1 .. 4500) { mkdir sprintf("%04d%s", $i, substr($n, 4)) or die "leaf: $!" }
' "$MNT/$UNIT" "$NAME250"
expect_eq "4. the user made 4,500 cgroups of ~3,800-byte paths" $? 0
echo "# 4. the flood took $((($(date +%s%N) - T0) / 1000000)) ms"

# 5 and 6: the user's drainforce in a cgroup 17 levels of 250 bytes deep, hidden by chmod 700
"${AS_UNTRUSTED[@]}" "$WORKLOADS/drainforce" -W -n 4 -c "$COMM" "$TMPDIR_TEST/u/data" \
	>"$TMPDIR_TEST/user.out" 2>&1 &
USER_WL=$!
wait_comm $USER_WL "$COMM" || fail "the user's drainforce starts" "no comm $COMM"
echo $USER_WL >"$MNT/$UNIT/cgroup.procs"
as_untrusted perl -e '
	my ($base, $n, $pid) = @ARGV;
	chdir $base or die "$base: $!";
	mkdir "hide" and chdir "hide" or die "hide: $!";
	for (1 .. 17) { mkdir $n and chdir $n or die "level: $!" }
	open(my $f, ">", "cgroup.procs") or die "procs: $!";
	print $f "$pid\n";
	close $f or die "move: $!";
	chmod 0700, "$base/hide" or die "chmod: $!";
' "$MNT/$UNIT" "$NAME250" $USER_WL
expect_eq "5, 6. the user's drainforce 17 levels deep, hidden" $? 0
DEEP=/$UNIT/hide$(printf "/$NAME250%.0s" $(seq 17))
expect_eq "6. its path is past PATH_MAX" "$((${#DEEP} > 4096))" 1
check "5. root's capped drainstat cannot read the hidden tree" \
	setpriv --bounding-set=$CAPS --inh-caps=$CAPS bash -c "! ls '$MNT/$UNIT/hide' >/dev/null 2>&1"

# 8 new root-owned units, made after the flood, one drainforce each
SVC_WL=()
for i in $(seq 8); do
	mkdir "$MNT/$SLICE/ds$i.service"
	"$WORKLOADS/drainforce" -W -n 8 -c "$COMM" "$TMPDIR_TEST/data$i" >/dev/null 2>&1 &
	SVC_WL+=($!)
	wait_comm $! "$COMM" || fail "drainforce $i starts" "no comm $COMM"
	echo $! >"$MNT/$SLICE/ds$i.service/cgroup.procs"
done

# drainstat, reports every 0.2 s, every drain a -T event
OUT=$TMPDIR_TEST/ds.json
"$CAPPED" -v -j -T 1us -c "$COMM" 0.2 >"$OUT" 2>"$OUT.err" &
DS_PID=$!
wait_attached "$OUT.err" || fail "capped drainstat starts" "$(cat "$OUT.err")"
wait_until 10 grep -qs '"sites"' "$OUT"
# its own process: the wrapper execs through unshare and setpriv
DS_REAL=$(pgrep -n -x drainstat -P "$DS_PID" 2>/dev/null || echo "$DS_PID")
cpu_ms() { awk '{ print int(($14 + $15) * 1000 / '"$(getconf CLK_TCK)"') }' "/proc/$DS_REAL/stat"; }
CPU0=$(cpu_ms)
REPORTS0=$(grep -c '"sites"' "$OUT")
# one after the other: drains at once would piggyback
for WL in $USER_WL "${SVC_WL[@]}"; do
	kill -USR1 $WL
	wait $WL
done
sleep 1
CPU1=$(cpu_ms)
REPORTS1=$(grep -c '"sites"' "$OUT")
kill -INT $DS_PID
wait_drainstat
expect_eq "capped drainstat: exit 0" "$DS_RC" 0
REPORTS=$((REPORTS1 - REPORTS0))
PER_REPORT=$(((CPU1 - CPU0) * 1000 / (REPORTS > 0 ? REPORTS : 1)))
echo "# $REPORTS reports and $(grep -c '"slow_drain"' "$OUT") -T events in $((CPU1 - CPU0)) ms of CPU: $PER_REPORT us a report"
expect_range "CPU a report and its events (us), 4,600 cgroups" "$PER_REPORT" 0 20000
NAMES=$(jq -r 'select(.sites) | .sites[] | select(.comm == "'"$COMM"'") | .cgroup' "$OUT" | sort -u)
for i in $(seq 8); do
	check "4. root-owned unit ds$i.service named" grep -qxF "/$SLICE/ds$i.service" <<<"$NAMES"
done
echo "$DEEP" >"$TMPDIR_TEST/deep"
check "5, 6. the user's hidden cgroup named by its whole path" grep -qxFf "$TMPDIR_TEST/deep" <<<"$NAMES"
check "no cgroup shown by id" bash -c "! grep -q '^cgroup:' <<<'$NAMES'"
jq -r 'select(.event == "slow_drain") | .cgroup' "$OUT" >"$TMPDIR_TEST/slow.cgroups"
check "-T: the user's drains named too" grep -qxFf "$TMPDIR_TEST/deep" "$TMPDIR_TEST/slow.cgroups"
check "-v: the reports' cgroups named by the kernel, no walk" \
	grep -q "^drainstat: the reports' cgroups: [1-9][0-9]* named by the kernel, 0 walks of the tree" "$OUT.err"
check "-v: -T's cgroups named by the kernel, no walk" \
	grep -q "^drainstat: -T's cgroups: [1-9][0-9]* named by the kernel, 0 walks of the tree" "$OUT.err"

# --prom-cgroup=unit: the user's drains under its unit
PROM=$TMPDIR_TEST/unit.prom
"$WORKLOADS/drainforce" -W -n 3 -c "$COMM" "$TMPDIR_TEST/u/data2" >/dev/null 2>&1 &
WL=$!
wait_comm $WL "$COMM"
echo $WL >"$MNT/$UNIT/cgroup.procs"
as_untrusted perl -e 'my ($d, $n, $p) = @ARGV; chmod 0755, "$d/hide" or die;
	chdir "$d/hide" or die; chdir $n or die for 1 .. 17; open(my $f, ">", "cgroup.procs") or die;
	print $f "$p\n"; close $f or die; chmod 0700, "$d/hide" or die' "$MNT/$UNIT" "$NAME250" $WL
"$CAPPED" --prom "$PROM" -c "$COMM" 0.2 2>"$PROM.err" &
DS_PID=$!
wait_until 20 test -s "$PROM"
kill -USR1 $WL
wait $WL
sleep 0.5
kill -INT $DS_PID
wait_drainstat
expect_range "--prom-cgroup=unit: the hidden drains under user@$UNTRUSTED_UID.service" \
	"$(prom_value "$PROM" "drainstat_drains_total{site=\"generic_fadvise\",cgroup=\"/$UNIT\"}")" 1 3

# a cgroup of the user's that drains and is removed before a report names it:
# named by its parent (user@UID.service), so --prom-cgroup=unit puts it there
PROM=$TMPDIR_TEST/gone.prom
"$CAPPED" --prom "$PROM" -c "$COMM" 1 2>"$PROM.err" &
DS_PID=$!
wait_until 20 test -s "$PROM"
"$WORKLOADS/drainforce" -W -n 3 -c "$COMM" "$TMPDIR_TEST/u/data3" >/dev/null 2>&1 &
WL=$!
wait_comm $WL "$COMM"
as_untrusted mkdir "$MNT/$UNIT/gone1"
echo $WL >"$MNT/$UNIT/gone1/cgroup.procs"
kill -USR1 $WL
wait $WL
as_untrusted rmdir "$MNT/$UNIT/gone1"
check "the user's cgroup removed" test ! -e "$MNT/$UNIT/gone1"
sleep 1.5
kill -INT $DS_PID
wait_drainstat
expect_range "a cgroup removed before a report: its drains under user@$UNTRUSTED_UID.service" \
	"$(prom_value "$PROM" "drainstat_drains_total{site=\"generic_fadvise\",cgroup=\"/$UNIT\"}")" 1 3
check "a cgroup removed before a report: no label by id" bash -c "! grep -q 'cgroup=\"cgroup:' '$PROM'"

# a path of 42 levels, named by the kernel: its first 16 and last 16 levels around "//..."
LONG=$MNT/$SLICE/deep
mkdir "$LONG"
for i in $(seq 40); do
	LONG=$LONG/l$i
	mkdir "$LONG"
done
"$WORKLOADS/drainforce" -W -n 3 -c "$COMM" "$TMPDIR_TEST/data10" >/dev/null 2>&1 &
WL=$!
wait_comm $WL "$COMM"
echo $WL >"$LONG/cgroup.procs"
"$CAPPED" -v -j -c "$COMM" 2>"$TMPDIR_TEST/long.err" >"$TMPDIR_TEST/long.json" &
DS_PID=$!
wait_attached "$TMPDIR_TEST/long.err" || fail "capped drainstat starts" "$(cat "$TMPDIR_TEST/long.err")"
kill -USR1 $WL
wait $WL
kill -INT $DS_PID
wait_drainstat
WANT=/$SLICE/deep$(printf '/l%d' $(seq 14))//...$(printf '/l%d' $(seq 25 40))
expect_eq "a path of 42 levels: its first and last 16, the levels between marked" \
	"$(jq -r '.sites[] | .cgroup' "$TMPDIR_TEST/long.json" | sort -u)" "$WANT"

# 7. four short-lived cgroups drain a few times and go; a unit drains more after them
PROM=$TMPDIR_TEST/places.prom
"$CAPPED" --prom "$PROM" --prom-sites 3 -c "$COMM" 0.2 2>"$PROM.err" &
DS_PID=$!
wait_until 20 test -s "$PROM"
# drain_in CGROUP ROUNDS DATA: drainforce's ROUNDS in a new root-owned CGROUP, to their end
drain_in() {
	mkdir "$MNT/$SLICE/$1"
	"$WORKLOADS/drainforce" -W -n "$2" -c "$COMM" "$3" >/dev/null 2>&1 &
	WL=$!
	wait_comm $WL "$COMM"
	echo $WL >"$MNT/$SLICE/$1/cgroup.procs"
	kill -USR1 $WL
	wait $WL
}
for i in $(seq 4); do
	drain_in "short$i.scope" 3 "$TMPDIR_TEST/data$i"
	rmdir "$MNT/$SLICE/short$i.scope"
done
drain_in busy.service 60 "$TMPDIR_TEST/data9"
BUSY="drainstat_drains_total{site=\"generic_fadvise\",cgroup=\"/$SLICE/busy.service\"}"
grep '^drainstat_drains_total{' "$PROM" | sed 's/^/# before: /'
wait_until 5 output_isnt "" prom_value "$PROM" "$BUSY"
grep '^drainstat_drains_total{' "$PROM" | sed 's/^/# after: /'
expect_range "7. --prom-sites 3: the unit that drained most has a place" \
	"$(prom_value "$PROM" "$BUSY")" 4 60
expect_range "7. --prom-sites 3: at most 3 places and other" \
	"$(grep -c '^drainstat_drains_total{' "$PROM")" 1 4
kill -INT $DS_PID
wait_drainstat
expect_eq "7. drainstat: exit 0" "$DS_RC" 0
exit 0
