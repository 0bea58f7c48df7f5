#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What is shown in flight is in flight (issue 39), in one boot (tests/vm/run):
# drainstat started into a drain storm (storm.sh STARTS), then a CPU with a
# pending drain work taken offline (hotplug.sh).
#
#   inflight.sh [STARTS]
#
# Payload: drainstat, drainforce, stuckdrain (static), common.sh, stuck.sh,
# storm.sh, hotplug.sh, this file.
cd /mnt || exit 1
bash storm.sh "${1:-3}"
bash hotplug.sh
