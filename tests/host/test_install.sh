#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make install into a DESTDIR: the binary, the man page and the systemd unit,
# the unit's sandbox as systemd judges it, and the example alerting rules.
set -u
. tests/host/lib.sh

MAX_EXPOSURE=3.0 # systemd-analyze security says 1.8 for the unit as shipped
ROOT=$TMPDIR_TEST/root
UNIT=$ROOT/usr/local/lib/systemd/system/drainstat.service

mode_of_file() { stat -c %a "$1" 2>/dev/null; }

# -o drainstat: the binary the suite tested, installed as it is (make check
# built it; the Debian system VM has make but no compiler)
make -s -o drainstat install DESTDIR="$ROOT" PREFIX=/usr/local >"$TMPDIR_TEST/make.log" 2>&1
expect_eq "make install: exit 0" $? 0
expect_eq "binary: 0755" "$(mode_of_file "$ROOT/usr/local/sbin/drainstat")" 755
expect_eq "man page: 0644" "$(mode_of_file "$ROOT/usr/local/share/man/man8/drainstat.8")" 644
expect_eq "unit: 0644" "$(mode_of_file "$UNIT")" 644
expect_eq "nothing else installed" "$(find "$ROOT" -type f | wc -l)" 3
expect_eq "unit: ExecStart= names the installed binary" \
	"$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$UNIT")" /usr/local/sbin/drainstat

# PREFIX reaches ExecStart= and the unit directory
make -s -o drainstat install DESTDIR="$TMPDIR_TEST/usr" PREFIX=/usr >/dev/null 2>&1
check "PREFIX=/usr: ExecStart=/usr/sbin/drainstat" \
	grep -q '^ExecStart=/usr/sbin/drainstat --prom ' "$TMPDIR_TEST/usr/usr/lib/systemd/system/drainstat.service"

# systemd-analyze verify checks that ExecStart= exists on the host: point it
# at the DESTDIR binary, and man at the DESTDIR man page.
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$TMPDIR_TEST/verify"
	sed "s|^ExecStart=/|ExecStart=$ROOT/|" "$UNIT" >"$TMPDIR_TEST/verify/drainstat.service"
	MANPATH=$ROOT/usr/local/share/man systemd-analyze verify \
		"$TMPDIR_TEST/verify/drainstat.service" >"$TMPDIR_TEST/verify.out" 2>&1
	expect_eq "systemd-analyze verify: exit 0" $? 0
	expect_eq "systemd-analyze verify: no warnings" "$(cat "$TMPDIR_TEST/verify.out")" ""

	systemd-analyze security --offline=true "$UNIT" >"$TMPDIR_TEST/security" 2>&1
	check_exposure "systemd-analyze security" "$TMPDIR_TEST/security" $MAX_EXPOSURE
	# what the sandbox must leave drainstat (see the comments in the unit)
	for c in '✗ ProtectKernelTunables=' '✗ ProtectKernelLogs=' '✗ CapabilityBoundingSet=~CAP_BPF'; do
		check "security: $c (drainstat needs it)" grep -q "^$c" "$TMPDIR_TEST/security"
	done
	check "security: no CAP_SYS_ADMIN" grep -q '^✓ CapabilityBoundingSet=~CAP_SYS_ADMIN' \
		"$TMPDIR_TEST/security"
else
	echo "SKIP systemd-analyze: not installed (apt-get install systemd)"
fi

# the bounding set is enough: drainstat runs with only those capabilities
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr '[:upper:]' '[:lower:]' | sed 's/cap_/+/g; s/ /,/g')
# tracefs mounted, as the unit requires (RequiresMountsFor=): in a mount namespace
# of the test's own, so that the host's stays as it is
unshare -m --propagation private bash -c "
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	exec setpriv --bounding-set '-all,$caps' --inh-caps -all '$ROOT/usr/local/sbin/drainstat' \
		--prom '$TMPDIR_TEST/caps.prom' -d 1" >/dev/null 2>"$TMPDIR_TEST/caps.err"
expect_eq "drainstat with only $caps: exit 0" $? 0
check "drainstat with only $caps: wrote the export" test -s "$TMPDIR_TEST/caps.prom"

check "promtool check rules dist/drainstat.rules.yml" \
	bash -c 'promtool check rules dist/drainstat.rules.yml >/dev/null'
check "promtool test rules tests/prom/rules_test.yml" \
	bash -c 'promtool test rules tests/prom/rules_test.yml >/dev/null'
exit 0
