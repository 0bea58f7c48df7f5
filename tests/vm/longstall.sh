#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A stall of over a minute (issue 39), run in /mnt by tests/vm/run: a drain
# held 65 s behind a SCHED_FIFO spinner (tests/lib/stuck.sh's setup), field
# reports speak of minutes. Every output must say over 60 s: the text
# report's wait p99, the JSON's wait max and p99, and the quantile Prometheus
# computes from the export's buckets (histogram_quantile's interpolation,
# done here by awk). Before issue 39 the export's last finite bucket was
# 17.2 s. Payload: drainstat, stuckdrain (static), common.sh, stuck.sh, this
# file.
set -u
cd /mnt || exit 1
. ./common.sh
. ./stuck.sh
stuck_vm_params
HOLD_MS=65000
OUT=/tmp/longstall

# prom_quantile FILE Q: histogram_quantile(Q) of drainstat_wait_seconds of
# site generic_fadvise in FILE, as Prometheus computes it (linear within the
# bucket; the highest finite bound where it falls in +Inf)
prom_quantile() {
	awk -v q="$2" '
		/^drainstat_wait_seconds_bucket/ && /site="generic_fadvise"/ {
			match($0, /le="[^"]*"/)
			le = substr($0, RSTART + 4, RLENGTH - 5)
			if (le == "+Inf") { total = $NF; next }
			n++; bound[n] = le + 0; count[n] = $NF }
		END {
			rank = q * total; lo = 0; below = 0
			for (i = 1; i <= n; i++) {
				if (count[i] >= rank) {
					printf "%.1f\n", lo + (bound[i] - lo) * (rank - below) / (count[i] - below)
					exit }
				lo = bound[i]; below = count[i] }
			printf "%.1f\n", lo }' "$1"
}

trap 'stuck_restore' EXIT
check "RT throttling off" stuck_setup
DS_PIDS=()
start_attached $OUT.txt -c ls-drop
start_attached $OUT.json --json -c ls-drop
start_attached $OUT.run --prom=$OUT.prom -c ls-drop
$STUCKDRAIN -a 1 -b 0 -c ls-drop -t $HOLD_MS "$STUCK_DATA" >$OUT.wl 2>&1
check "stuckdrain held its drain $HOLD_MS ms" test $? -eq 0
stop_attached
wait_p99=$(site_field $OUT.txt generic_fadvise ls-drop 13)
echo "# text: wait p99 $wait_p99"
check "text: the wait's p99 over 60 s ($wait_p99)" test "$(to_ns "$wait_p99")" -gt 60000000000
max=$(grep -o '"wait_ns":{[^}]*}' $OUT.json | grep -o '"max":[0-9]*' | cut -d: -f2 | sort -n | tail -1)
p99=$(grep -o '"wait_ns":{[^}]*}' $OUT.json | grep -o '"p99":[0-9]*' | cut -d: -f2 | sort -n | tail -1)
echo "# json: wait max $max, p99 $p99"
check "json: the wait's max over 60 s" test "${max:-0}" -gt 60000000000
check "json: the wait's p99 over 60 s" test "${p99:-0}" -gt 60000000000
q=$(prom_quantile $OUT.prom 0.99)
echo "# export: histogram_quantile(0.99) $q s"
check "export: histogram_quantile(0.99) of the wait over 60 s ($q)" \
	awk -v q="${q:-0}" 'BEGIN { exit !(q > 60) }'
exit 0
