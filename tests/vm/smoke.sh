#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The VM smoke test (run in /mnt by tests/vm/run), by hand, when a new kernel
# comes: what drainstat needs from the kernel is there, and drainforce really
# forces its drains on this kernel, counted by a kprobe on lru_add_drain_all
# and by the workqueue tracepoint. Needs drainforce and common.sh next to it:
#   tests/vm/run -k KERNEL -f build/static/drainforce -f tests/lib/common.sh \
#       -f tests/vm/smoke.sh -- bash smoke.sh
N=200
T=/sys/kernel/tracing
PATH=/mnt:$PATH

. ./common.sh
info() { echo "# $*"; }

info "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
check "kernel BTF at /sys/kernel/btf/vmlinux" test -r /sys/kernel/btf/vmlinux
info "kallsyms: $(grep -c . /proc/kallsyms) symbols"
check "kallsyms has lru_add_drain_per_cpu" grep -q ' lru_add_drain_per_cpu$' /proc/kallsyms
check "tracefs mounted" test -r $T/available_filter_functions

# fentry/fexit and kprobes attach where ftrace can: the traceable drain functions
drain_fns=$(grep -E '^(__)?lru_(add_drain|cache_disable)' $T/available_filter_functions |
	cut -d' ' -f1 | sort | tr '\n' ' ')
info "traceable: $drain_fns"
for f in lru_add_drain_all lru_cache_disable lru_add_drain; do
	check "$f in available_filter_functions" grep -qx "$f" $T/available_filter_functions
done
check "kprobe_events exists" test -w $T/kprobe_events
check "workqueue_queue_work tracepoint" test -d $T/events/workqueue/workqueue_queue_work

# drainforce under a kprobe and the tracepoint: each round is one drain
echo 'p:drainstat_smoke lru_add_drain_all' >>$T/kprobe_events &&
	echo 1 >$T/events/kprobes/drainstat_smoke/enable
check "kprobe on lru_add_drain_all enabled" grep -q '^1' $T/events/kprobes/drainstat_smoke/enable
echo 1 >$T/events/workqueue/workqueue_queue_work/enable
echo >$T/trace
start=$(cut -d' ' -f1 /proc/uptime)
check "drainforce -n $N /mnt/data exits 0" drainforce -n $N /mnt/data
info "drainforce: $(awk -v s="$start" '{ printf "%.1f", $1 - s }' /proc/uptime)s for $N rounds"
echo 0 >$T/events/workqueue/workqueue_queue_work/enable
echo 0 >$T/events/kprobes/drainstat_smoke/enable
hits=$(awk '$1 == "drainstat_smoke" { print $2 }' $T/kprobe_profile)
works=$(grep -c 'function=lru_add_drain_per_cpu' $T/trace)
echo '-:drainstat_smoke' >>$T/kprobe_events
expect_at_least "kprobe lru_add_drain_all hits" "$hits" $N
expect_at_least "queued lru_add_drain_per_cpu works" "$works" $N
info "lru_add_drain_all calls $hits, lru_add_drain_per_cpu works queued $works"
