#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A drain seen while it is stuck, on this machine (tests/lib/stuck.sh says
# how it is held): each output must show, within one interval of --stuck, the
# stuck drain, its caller, CPU 1, the spinner's comm, pid, tid and policy, the
# waiter on the drain mutex where the entry is seen, and once the spinner
# stops, the drain with its real wait. The mode is the one drainstat picks.
# The spin stays short (1.5 s) so that the machine stays healthy; where the
# fair server stays on, the drain is held about 950 ms of it.
set -u
. tests/host/lib.sh
. tests/lib/stuck.sh

stuck_machine_params "$WORKLOADS/stuckdrain" "$TMPDIR_TEST/data"

trap 'stuck_restore; cleanup_test' EXIT
check "RT throttling off" stuck_setup
stuck_suite auto "$TMPDIR_TEST"
exit 0
