#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The -T log names the user frames of an unprivileged user's process without
# ever opening a path that user controls (issue 30, items 4 and 5). The user
# runs a drain-forcing program on a copy of libc of its own, deletes the
# copy, and puts at "<path> (deleted)", the name /proc/PID/maps gives it, a
# FIFO (root's open of it would block), or a symbolic link to a file of
# root's (as to a device, whose open has effects). The FIFO and the link's target have a writer of the test's
# blocked in open(O_WRONLY) on them: it gets through only if some process opens
# them to read, which no one but drainstat would. drainstat must end on time,
# SIGTERM must end it with its report, and the frames in the deleted libc
# must be named from its own file, which is still mapped.
set -u
. tests/host/lib.sh

N=20
COMM=dsunt$$
COMM=${COMM:0:15}

untrusted_home
mkdir -m 0700 "$TMPDIR_TEST/root"

# writer_blocked FIFO MARK: a writer of FIFO, blocked until a reader opens it;
# MARK appears then. WRITER: its pid.
writer_blocked() {
	(exec 3>"$1" && touch "$2") &
	WRITER=$!
}

LIBC=$(ldd "$WORKLOADS/drainforce" | awk '$1 == "libc.so.6" { print $3 }')

# plant NAME HOW: the user's drainforce on its own libc, NAME/libc.so.6, which
# it deletes and puts HOW at its old name plus " (deleted)" (fifo, or
# link:TARGET); it forces N drains once told to (SIGUSR1) and stays (-H),
# its count of rounds in $OUT.done then. WL: its pid.
plant() {
	local lib=$U/$1/libc.so.6
	as_untrusted mkdir "$U/$1"
	install -o "$UNTRUSTED_UID" -g "$UNTRUSTED_GID" -m 0755 "$LIBC" "$lib"
	LD_LIBRARY_PATH=$U/$1 "${AS_UNTRUSTED[@]}" "$WORKLOADS/drainforce" -W -H -n $N \
		-c "$COMM" "$U/$1/data" >"$OUT.done" &
	WL=$!
	wait_comm $WL "$COMM" || return 1
	as_untrusted rm "$lib"
	case $2 in
	fifo) as_untrusted mkfifo "$lib (deleted)" ;;
	link:*) as_untrusted ln -s "${2#link:}" "$lib (deleted)" ;;
	esac
	grep -qF "$lib (deleted)" "/proc/$WL/maps"
}

# The -T events of OUT; how many of them name a function of the deleted libc
# in their user stack, from the file itself (its .dynsym).
slow_events() { grep -c "^[0-9:.]* SLOW DRAIN pid $WL " "$1"; }
named_in_deleted() {
	awk '/SLOW DRAIN/ { n += hit; hit = 0 }
		/^      posix_fadvise[0-9]*\+0x[0-9a-f]+ \(libc\.so\.6 \(deleted\)\)$/ { hit = 1 }
		END { print n + hit }' "$1"
}

# run_case NAME HOW TARGET END: the attack HOW, with a blocked writer on the
# FIFO TARGET; drainstat -T 1us ended by END (term: SIGTERM once the rounds
# are done; or -d).
run_case() {
	local name=$1 how=$2 target=$3 end=$4 t0 drains
	OUT=$TMPDIR_TEST/$name
	plant "$name" "$how" || {
		fail "$name: the user's deleted program runs, planted" "$(cat "/proc/$WL/maps" 2>&1 | tail -n 2)"
		return
	}
	writer_blocked "$target" "$OUT.opened"
	t0=$SECONDS
	if [ "$end" = term ]; then
		start_drainstat "$OUT" -v -T 1us -p $WL
	else
		start_drainstat "$OUT" -v -T 1us -d 8 -p $WL
	fi || {
		fail "$name: drainstat starts" "$(cat "$OUT.err")"
		return
	}
	wait_attached "$OUT.err"
	kill -USR1 $WL
	wait_until 60 test -s "$OUT.done"
	[ "$end" = term ] && sleep 1 && kill -TERM "$DS_PID"
	wait_until 20 bash -c "! kill -0 $DS_PID 2>/dev/null"
	wait_drainstat
	expect_eq "$name: exit 0" "$DS_RC" 0
	expect_range "$name: ended on time, never blocked" $((SECONDS - t0)) 0 25
	check "$name: the report at the end" grep -q "^generic_fadvise *$COMM " "$OUT"
	drains=$(site_field "$OUT" generic_fadvise "$COMM" 3)
	expect_range "$name: drains forced" "$drains" $((N / 2)) $N
	expect_eq "$name: a -T event per drain" "$(slow_events "$OUT")" "$drains"
	expect_eq "$name: each names posix_fadvise in the deleted libc, from its own file" \
		"$(named_in_deleted "$OUT")" "$drains"
	check "$name: $target never opened" test ! -e "$OUT.opened"
	check "$name: what the user planted is still there" test -L "$U/$name/libc.so.6 (deleted)" \
		-o -p "$U/$name/libc.so.6 (deleted)"
	kill "$WL" "$WRITER" 2>/dev/null
	wait "$WL" "$WRITER" 2>/dev/null
}

# 4: a FIFO at "<path> (deleted)": root's open(O_RDONLY) would wait for a writer
run_case fifo fifo "$U/fifo/libc.so.6 (deleted)" term
# 5: a link from "<path> (deleted)" to root's own FIFO, in a directory of
# root's: an open there stands for a device's (this kernel reports no
# fanotify open of a device or a FIFO, so the truth is a FIFO's writer)
mkfifo -m 0600 "$TMPDIR_TEST/root/dev"
run_case link "link:$TMPDIR_TEST/root/dev" "$TMPDIR_TEST/root/dev" duration
# 5: and to a device, /dev/zero: the frames named from libc's file all the same
mkfifo "$TMPDIR_TEST/unused"
run_case zero link:/dev/zero "$TMPDIR_TEST/unused" duration
exit 0
