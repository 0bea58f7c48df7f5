#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What is shown in flight is in flight (issue 39), in one boot (tests/vm/run):
# drainstat started into a drain storm (storm.sh STARTS), then a CPU with a
# pending drain work taken offline (hotplug.sh); on 6.12, a drain held over a
# minute (longstall.sh: every output says so).
#
#   inflight.sh [STARTS]
#
# Payload: drainstat, drainforce, stuckdrain (static), common.sh, stuck.sh,
# storm.sh, hotplug.sh, longstall.sh, this file.
cd /mnt || exit 1
bash storm.sh "${1:-3}"
bash hotplug.sh
[ "${VM_KERNEL:-}" = 6.12 ] && bash longstall.sh
exit 0
