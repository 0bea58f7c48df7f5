#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Local drains cannot take a drain's site (issue 39), run in /mnt by
# tests/vm/run in full mode (Debian's 6.12 in make check): a long-running
# machine's local drains, every process exit's, in many cgroups, as restarted
# units and pods make them, at the default --max-sites (1024). CGROUPS cgroup
# v2 directories, made one after another (and removed), each running COMMS
# short processes of as many comms and the shell that starts them: at least
# CGROUPS * (COMMS + 1) local-drain sites (exit_mmap() a process, as site,
# comm and cgroup key them), more than --max-sites holds. Then a new caller,
# in a new cgroup, forces N remote drains: its row must be there in text,
# JSON and --prom with its drains, the local drains past their half of the
# sites counted (local_site_map_full), no drain's (site_map_full 0).
#
#   sites.sh [CGROUPS]   default 300: 2,100 processes, as many keys at least
#
# Payload: drainstat, drainforce (static), common.sh, this file.
set -u
cd /mnt || exit 1
. ./common.sh

DRAINSTAT=/mnt/drainstat # read by start_drainstat
CGROUPS=${1:-300}
COMMS=6
N=5
CG=/sys/fs/cgroup
OUT=/tmp/sites

# busybox's /init mounts no cgroup v2 hierarchy
cgroup_mount() {
	grep -q ' - cgroup2 ' /proc/self/mountinfo && return 0
	mount -t cgroup2 cgroup2 $CG
}

# The short processes' programs, one a comm: drainforce -h execs, prints its
# usage and exits.
mkdir -p /tmp/bin
for k in $(seq $COMMS); do
	ln -sf /mnt/drainforce /tmp/bin/short$k
done

# Each cgroup: a subshell moved into it runs the COMMS programs and exits;
# the cgroup is removed after, as a stopped unit's.
local_load() {
	local i k
	for i in $(seq "$CGROUPS"); do
		mkdir $CG/ds-local$i || return 1
		(
			echo "$BASHPID" >$CG/ds-local$i/cgroup.procs || exit 1
			for k in $(seq $COMMS); do
				/tmp/bin/short$k -h >/dev/null
			done
		) || return 1
		rmdir $CG/ds-local$i
	done
}

# slots_note ERR: "used local" from drainstat -v's line at exit in ERR.
slots_note() {
	sed -n 's/^drainstat: \([0-9]*\) of [0-9]* site slots taken, \([0-9]*\) of them.*/\1 \2/p' "$1"
}

echo "# kernel $(uname -r) ($VM_KERNEL): $CGROUPS cgroups, $COMMS comms each"
if ! cgroup_mount; then
	fail "sites: cgroup2 mounted at $CG"
	exit 0
fi
# JSON and --prom print no header: -v's mode line on stderr says they trace
start_quiet() {
	local out=$1
	shift
	"$DRAINSTAT" -v --mode=full "$@" >"$out" 2>"$out.err" &
	DS_PID=$!
	wait_attached "$out.err"
}
if ! { start_quiet $OUT.json.out -j && JSON_PID=$DS_PID &&
	start_quiet $OUT.prom.out --prom $OUT.prom 1 && PROM_PID=$DS_PID &&
	start_drainstat $OUT.txt -v --mode=full && TEXT_PID=$DS_PID; }; then
	fail "sites: drainstat starts" "$(cat $OUT*.err | head -c 300)"
	kill ${JSON_PID:-} ${PROM_PID:-} 2>/dev/null
	exit 0
fi
t0=$(cut -d' ' -f1 /proc/uptime)
check "sites: $CGROUPS cgroups of $COMMS short processes each" local_load
t1=$(cut -d' ' -f1 /proc/uptime)
echo "# the local load: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"

# the new caller, in a cgroup of its own
mkdir $CG/ds-drain
echo $$ >$CG/ds-drain/cgroup.procs
./drainforce -n $N -c newcaller /mnt/data >/dev/null
echo $$ >$CG/cgroup.procs
kill -INT "$TEXT_PID" "$JSON_PID" "$PROM_PID"
for DS_PID in $TEXT_PID $JSON_PID $PROM_PID; do
	wait_drainstat
	expect_eq "sites: drainstat $DS_PID exit 0" "$DS_RC" 0
done

read -r used local <<<"$(slots_note $OUT.txt.err)"
echo "# site slots: $used of 1024 taken, $local of them by local drains"
expect_eq "sites: local drains took their half of the slots" "$local" 512
expect_range "sites: the drains' slots left free" "$used" 513 1023
drains=$(site_field $OUT.txt generic_fadvise newcaller 3 /ds-drain)
expect_range "sites: text: the new caller's row, its drains" "$drains" $((N - 2)) $N
lost=$(awk '$1 == "lost" && $2 == "local_site_map_full:" { print $3 }' $OUT.txt)
echo "# local drains of further sites: ${lost:-0}"
check "sites: text: local_site_map_full counted" test "${lost:-0}" -gt 0
expect_eq "sites: text: no site_map_full" \
	"$(awk '$1 == "lost" && $2 == "site_map_full:" { print $3 }' $OUT.txt)" ""

# each output on its own: a row missing from all of them agrees with itself
json=$(tail -1 $OUT.json.out | grep -o \
	"\"site\":\"generic_fadvise\",\"comm\":\"newcaller\",$(cgroup_json_re /ds-drain),\"drains\":[0-9]*" |
	sed 's/.*"drains"://')
expect_range "sites: JSON: the new caller's row, its drains" "$json" $((N - 2)) $N
expect_eq "sites: JSON: its drains, as the text's" "$json" "$drains"
check "sites: JSON: local_site_map_full counted" \
	grep -q '"local_site_map_full":[1-9]' $OUT.json.out
check "sites: JSON: site_map_full 0" grep -q '"site_map_full":0,' $OUT.json.out

# the export has no comm: drainforce's warm-up drain (df-setup) is in the cgroup's row too
setup=$(site_field $OUT.txt generic_fadvise df-setup 3 /ds-drain)
prom=$(prom_sum $OUT.prom drainstat_drains_total 'site="generic_fadvise"' 'cgroup="/ds-drain"')
expect_range "sites: --prom: the new caller's drains, its warm-up's with them" "$prom" \
	$((N - 2)) $((N + 1))
expect_eq "sites: --prom: its drains, as the text's" "$prom" $((${drains:-0} + ${setup:-0}))
lost=$(prom_value $OUT.prom 'drainstat_lost_events_total{reason="local_site_map_full"}')
check "sites: --prom: local_site_map_full counted" test "${lost:-0}" -gt 0
expect_eq "sites: --prom: site_map_full 0" \
	"$(prom_value $OUT.prom 'drainstat_lost_events_total{reason="site_map_full"}')" 0
