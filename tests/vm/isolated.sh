#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In a VM booted with isolcpus=1 nohz_full=1 (tests/run: tests/vm/run --append):
# the stuck drain of tests/lib/stuck.sh, in full mode, held on an isolated,
# nohz_full CPU, as the field reports have it; the text and JSON must say so.
# Payload: drainstat and stuckdrain (static), common.sh, stuck.sh, this file.
set -u
cd /mnt || exit 1
. ./common.sh
. ./stuck.sh

stuck_vm_params
STUCK_ISOLATED=true
# Under TCG the spinning vCPU, with no tick, starves the others: a poll of the
# export every 50 ms came out seconds apart, and the report at SIGINT (2.2 s
# into a 3 s spin) came 0.8 s late, after the drain's work had run. So a
# longer spin, and not the export, whose gauges say nothing of isolation (the
# VM suite checks them).
SPIN_MS=4000
STUCK_NO_EXPORT=1

echo "# kernel $(uname -r) ($VM_KERNEL): isolated $(cat /sys/devices/system/cpu/isolated)," \
	"nohz_full $(cat /sys/devices/system/cpu/nohz_full)"
expect_eq "CPU 1 is isolated" "$(cat /sys/devices/system/cpu/isolated)" 1
expect_eq "CPU 1 is nohz_full" "$(cat /sys/devices/system/cpu/nohz_full)" 1
if stuck_setup; then
	mkdir -p /tmp/stuck-isolated
	stuck_suite full /tmp/stuck-isolated
else
	fail "isolated: RT throttling off"
fi
stuck_restore
