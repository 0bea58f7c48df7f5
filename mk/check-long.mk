# SPDX-License-Identifier: GPL-2.0
# make check-long: make check with what its time leaves out (tests/run, CI's
# 90-minute limit): in the Debian 12 system VM (tests/debvm/check all), the
# host suite on 6.12 as well as 6.1, and in kprobe and tracepoint modes as well
# as the one drainstat chooses, and drainstat started into a drain storm ten
# times a mode and kernel (tests/vm/storm.sh), not three. About two hours
# more; not in CI.
.PHONY: check-long

check-long: export DRAINSTAT_DEBVM := all
check-long: export DRAINSTAT_STORM_STARTS := 10
check-long: check
