# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# The independent truth of a workload's drains: bpftrace counts them from the
# kernel's own events, with none of drainstat's code, and a test holds
# drainstat's numbers to its counts exactly. A workload's rounds cannot be that
# truth: a round needs no drain when something else flushed CPU A's batch
# before its DONTNEED (on a busy Debian system khugepaged and systemd's tasks
# do, a few rounds in forty). Shared by the host tests and the soak.
#
# What bpftrace counts, for one process:
#   @queued    its fadvise calls inside which a drain work (lru_add_drain_per_cpu)
#              was queued: the drains tracepoint mode sees, which begin at their
#              first queue;
#   @works[C]  the drain works it queued to CPU C;
#   @entered   its calls of the drain entry: the drains full and kprobe modes
#              see, entered at the entry, piggybacks and empty ones too. Only
#              where the kernel has kprobes.
# With TRUTH_BY set to a bpftrace builtin (cgroup), @queued and @entered are
# counted per its value: truth_count queued[ID], truth_drains MODE ID.
# tracefs, which tracepoint: probes need and other tests unmount and mount, comes
# from a mount namespace of bpftrace's own where the machine has none mounted.

TRUTH_PID=
TRUTH_OUT=
# truth_start's drain entry probes, looked up once (unset: not yet)
unset TRUTH_ENTRY

# fadvise's syscall: arm64 has fadvise64_64 and no fadvise64.
truth_fadvise() {
	case $(uname -m) in
	aarch64) echo fadvise64_64 ;;
	*) echo fadvise64 ;;
	esac
}

# truth_traced CMD...: execs CMD with tracefs mounted, in a mount namespace of
# its own where the machine has none. In a subshell or in the background: it
# replaces the shell that runs it, so that $! is CMD's pid.
truth_traced() {
	exec unshare -m --propagation private sh -c 'mountpoint -q /sys/kernel/tracing ||
		mount -t tracefs tracefs /sys/kernel/tracing; exec "$@"' sh "$@"
}

# The kprobes for the drain entry: __lru_add_drain_all where a kprobe can take
# it (6.18: lru_add_drain_all tail-calls it, generic_fadvise calls it
# directly; 6.1 has the symbol, but not in the functions ftrace can trace, and
# refuses the kprobe), else lru_add_drain_all and lru_cache_disable. Nothing
# where the kernel has no kprobes.
truth_entry_probes() {
	[ -e /sys/bus/event_source/devices/kprobe ] || return 0
	if (truth_traced grep -qE '^__lru_add_drain_all( |$)' \
		/sys/kernel/tracing/available_filter_functions); then
		echo "kprobe:__lru_add_drain_all"
	else
		echo "kprobe:lru_add_drain_all, kprobe:lru_cache_disable"
	fi
}

# truth_start WHO OUT [SYSCALLS]: bpftrace counts the drains of WHO, a process's
# PID (all its threads) or comm:NAME (every task of that comm), until
# truth_stop, its output in OUT and OUT.err. @queued counts the calls of
# SYSCALLS (comma-separated; default: fadvise's) inside which a drain work was
# queued: write for a sysctl such as compact_memory. Returns once every probe
# is attached (its BEGIN ran): 1 if bpftrace is missing or did not start.
truth_start() {
	local who=$1 calls c enter= leave= entry prog filter by=${TRUTH_BY:+[$TRUTH_BY]}
	TRUTH_OUT=$2
	command -v bpftrace >/dev/null || {
		echo "no bpftrace" >"$TRUTH_OUT.err"
		return 1
	}
	calls=${3:-$(truth_fadvise)}
	for c in ${calls//,/ }; do
		enter+="${enter:+, }tracepoint:syscalls:sys_enter_$c"
		leave+="${leave:+, }tracepoint:syscalls:sys_exit_$c"
	done
	case $who in
	comm:*) filter="comm == \"${who#comm:}\"" ;;
	*) filter="pid == $who" ;;
	esac
	[ -n "${TRUTH_ENTRY+set}" ] || TRUTH_ENTRY=$(truth_entry_probes)
	entry=$TRUTH_ENTRY
	prog="$enter /$filter/ { @in[tid] = 1; }
	tracepoint:workqueue:workqueue_queue_work
	/$filter && (uint64)args->function == kaddr(\"lru_add_drain_per_cpu\")/ {
		@works[args->cpu] = count();
		if (@in[tid] == 1) { @queued$by = count(); @in[tid] = 2; }
	}
	$leave /$filter/ { delete(@in[tid]); }
	BEGIN { printf(\"ready\\n\"); }
	END { clear(@in); }"
	[ -z "$entry" ] || prog+="
	$entry /$filter/ { @entered$by = count(); }"
	truth_traced bpftrace -B none -e "$prog" >"$TRUTH_OUT" 2>"$TRUTH_OUT.err" &
	TRUTH_PID=$!
	# parsing and attaching take seconds under TCG
	wait_output 60 "$TRUTH_PID" '^ready' "$TRUTH_OUT" && return 0
	kill -KILL "$TRUTH_PID" 2>/dev/null
	wait "$TRUTH_PID" 2>/dev/null
	TRUTH_PID=
	return 1
}

# truth_stop: bpftrace prints its counts and exits (1 if it failed).
# bpftrace 0.17 once slept on in epoll_wait() after its SIGINT, its handler
# run (SigCgt), until a second SIGINT ended it, counts printed: the first had
# come between its check of the flag and its sleep. So while it still sleeps
# there a second later, it is asked again; not while it prints and detaches.
truth_stop() {
	local pid=$TRUTH_PID
	[ -n "$pid" ] || return 1
	TRUTH_PID=
	kill -INT "$pid"
	(
		for _ in $(seq 60); do
			sleep 1
			[ "$(cat /proc/"$pid"/wchan 2>/dev/null)" = do_epoll_wait ] || continue
			kill -INT "$pid"
		done
		kill -INT "$pid" # a minute on: whatever it does
	) 2>/dev/null &
	wait "$pid"
	local rc=$?
	kill $! 2>/dev/null
	return $rc
}

# truth_count NAME: the count @NAME (@works[C] for works C), 0 where none.
truth_count() {
	awk -v k="@$1:" '$1 == k { n = $2 } END { print n + 0 }' "$TRUTH_OUT"
}

# truth_works: the drain works to every CPU, summed.
truth_works() {
	awk '$1 ~ /^@works\[[0-9]+\]:$/ { n += $2 } END { print n + 0 }' "$TRUTH_OUT"
}

# truth_drains MODE [KEY]: the drains drainstat sees in MODE (of KEY, with
# TRUTH_BY); a word that no count equals where there is no truth for it (no
# mode, no kprobe for the entry).
truth_drains() {
	local key=${2:+[$2]}
	case $1 in
	full | kprobe)
		if [ -n "${TRUTH_ENTRY:-}" ]; then truth_count "entered$key"; else echo "(no-kprobes)"; fi
		;;
	tracepoint) truth_count "queued$key" ;;
	*) echo "(no-mode)" ;;
	esac
}
