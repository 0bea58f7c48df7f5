#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the Debian 12 system VM (tests/debvm/run), in the payload's copy of the
# source tree: the host suite (tests/host) once per MODE, as on any machine of
# a user's; then, with --systemd, the systemd unit under systemd
# (tests/debvm/systemd.sh) and real containers, podman and systemd-nspawn
# (tests/debvm/containers.sh). Every PASS/FAIL line is prefixed with the
# kernel and the mode.
#
#   bash tests/debvm/suite.sh [--systemd] [MODE...]   (MODE: auto, full, kprobe, tracepoint)
#
# With no MODE, the unit and the containers alone (make check's 6.12:
# tests/debvm/check).
# auto: drainstat picks the mode itself (full on Debian's kernels); any other
# MODE sets DRAINSTAT_MODE, which tests/host/lib.sh turns into --mode=MODE on
# every run. test_valgrind is left to the host: it checks drainstat's user
# space, the same on every kernel, and takes over 12 minutes under TCG; so are
# the test_untrusted_* attacks, but with more than one MODE (make check-long).
set -u
cd "$(dirname "$0")/../.." || exit 1
systemd= all=
[ "${1:-}" = --systemd ] && systemd=1 && shift
# more than one mode: make check-long (tests/debvm/check all)
[ $# -gt 1 ] && all=1
kernel=$(uname -r | cut -d. -f1-2)
uname -r | grep -q -- -rt- && kernel=$kernel-rt
echo "debvm: $(uname -r), $(nproc) CPUs, $(systemctl is-system-running 2>&1)"
for mode in "$@"; do
	for t in tests/host/test_*.sh; do
		[ "$t" = tests/host/test_valgrind.sh ] && continue
		# an unprivileged user's attacks on the export and -T: user space
		# against procfs and the filesystem, the same on every kernel; the
		# host runs them (plain and ASan), make check-long here too
		case $t in tests/host/test_untrusted_*) [ -n "$all" ] || continue ;; esac
		name="debvm $kernel $mode: $(basename "$t" .sh)"
		start=$SECONDS
		if [ "$mode" = auto ]; then
			bash "$t" 2>&1
		else
			DRAINSTAT_MODE=$mode bash "$t" 2>&1
		fi | tee /tmp/suite.out | sed -u "s/^\(PASS\|FAIL\|SKIP\) /\1 $name: /"
		rc=${PIPESTATUS[0]}
		[ $rc -eq 0 ] || grep -q '^FAIL' /tmp/suite.out || echo "FAIL $name: exited $rc"
		echo "debvm: $name: $((SECONDS - start)) s"
	done
done
if [ -n "$systemd" ]; then
	start=$SECONDS
	bash tests/debvm/systemd.sh 2>&1 | sed -u "s/^\(PASS\|FAIL\|SKIP\) /\1 debvm $kernel systemd: /"
	echo "debvm: debvm $kernel systemd: $((SECONDS - start)) s"
	start=$SECONDS
	bash tests/debvm/containers.sh 2>&1 | sed -u "s/^\(PASS\|FAIL\|SKIP\) /\1 debvm $kernel containers: /"
	echo "debvm: debvm $kernel containers: $((SECONDS - start)) s"
fi
exit 0
