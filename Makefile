# SPDX-License-Identifier: GPL-2.0
# drainstat: build, test and benchmark. Debian 12 packages only.

VERSION     := 0.1.0
HOST_ARCH   := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH        := $(HOST_ARCH)
CLANG       ?= clang
CC          ?= cc
BPFTOOL     ?= bpftool
LLVM_STRIP  ?= llvm-strip
OUT         := build
PREFIX      ?= /usr/local
DRAINSTAT   := drainstat

# The architectures with a vmlinux/ARCH/vmlinux.h; make ARCH=arm64 on x86_64
# cross-builds with Debian's gcc-aarch64-linux-gnu and the arm64 multiarch
# libraries (tests/deps --arm64), into build/arm64/ (drainstat there too).
ARCHES      := $(notdir $(patsubst %/vmlinux.h,%,$(wildcard vmlinux/*/vmlinux.h)))
ifeq ($(filter $(ARCH),$(ARCHES)),)
ifeq ($(filter vmlinux clean deps,$(MAKECMDGOALS)),)
$(error ARCH=$(ARCH): no vmlinux/$(ARCH)/vmlinux.h, so no BPF programs for it; drainstat builds for: $(ARCHES))
endif
endif
ifneq ($(ARCH),$(HOST_ARCH))
GNU_ARCH    := $(subst arm64,aarch64,$(subst x86,x86_64,$(ARCH)))
CROSS_COMPILE ?= $(GNU_ARCH)-linux-gnu-
CC          := $(CROSS_COMPILE)gcc
OUT         := build/$(ARCH)
DRAINSTAT   := $(OUT)/drainstat
endif

CFLAGS      ?= -g -O2
CFLAGS      += -std=gnu11 -Wall -Wextra -Werror -MMD -MP -I$(OUT) -Ibpf -Isrc \
	       -DDRAINSTAT_VERSION='"$(VERSION)"'
LDLIBS      := -lbpf -lelf -lz -pthread

BPF_CFLAGS  := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf \
	       -Wall -Werror -MMD -MP

BPF_PROGS   := drainstat bench_empty
SKELS       := $(BPF_PROGS:%=$(OUT)/%.skel.h)
SRCS        := $(wildcard src/*.c)
OBJS        := $(SRCS:src/%.c=$(OUT)/%.o)
LIB_OBJS    := $(filter-out $(OUT)/main.o,$(OBJS))
UNIT_SRCS   := $(wildcard tests/unit/test_*.c)
UNIT_BINS   := $(UNIT_SRCS:tests/unit/%.c=$(OUT)/tests/%)
ASAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_OBJS   := $(LIB_OBJS:$(OUT)/%=$(OUT)/asan/%)
ASAN_BINS   := $(UNIT_BINS:$(OUT)/%=$(OUT)/asan/%)
WORKLOADS   := $(patsubst tests/workload/%.c,$(OUT)/tests/%,$(wildcard tests/workload/*.c))

.PHONY: all clean check deps unit workloads bench vmlinux install
.DELETE_ON_ERROR:
.SECONDARY:

# make STATIC=1: $(OUT)/static/drainstat, for machines without the libraries,
# and the workloads beside it (the VM tests' payload).
ifeq ($(STATIC),1)
all: $(OUT)/static/drainstat $(WORKLOADS:$(OUT)/tests/%=$(OUT)/static/%)
	@echo "static: $(OUT)/static/drainstat"
else
all: $(DRAINSTAT)
endif

$(DRAINSTAT): $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS)

# Static copies for the VM tests: they run in a busybox initramfs with no libraries.
$(OUT)/static/drainstat: $(OBJS) | $(OUT)/static
	$(CC) -static -o $@ $(filter %.o,$^) $(LDLIBS)

$(OUT)/static/%: tests/workload/%.c | $(OUT)/static
	$(CC) $(CFLAGS) -fno-omit-frame-pointer -static -pthread -o $@ $<

# Without its DWARF (llvm-strip -g keeps .BTF and .BTF.ext, all libbpf needs):
# the object is embedded in every binary and parsed at every start.
$(OUT)/%.bpf.o: bpf/%.bpf.c | $(OUT)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(LLVM_STRIP) -g $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# running.bpf.c's and cgname.bpf.c's programs are linked into drainstat's
# object, not loaded as ones of their own: libbpf parses the kernel's 5.5 MB of
# BTF once an object it loads.
$(OUT)/drainstat.linked.bpf.o: $(OUT)/drainstat.bpf.o $(OUT)/running.bpf.o $(OUT)/cgname.bpf.o
	$(BPFTOOL) gen object $@ $^

$(OUT)/drainstat.skel.h: $(OUT)/drainstat.linked.bpf.o
	$(BPFTOOL) gen skeleton $< name drainstat_bpf > $@

# The skeletons are made before any object (order-only); then the .d files make
# only the objects that include one depend on it.
$(OUT)/%.o: src/%.c | $(OUT) $(SKELS)
	$(CC) $(CFLAGS) -c $< -o $@

$(OUT)/tests/%: tests/unit/%.c $(LIB_OBJS) | $(OUT)/tests
	$(CC) $(CFLAGS) -Itests/unit -o $@ $(filter %.c %.o,$^) $(LDFLAGS) $(LDLIBS)

# The BPF programs run by the kernel on seeded maps (root): tests/run.
$(OUT)/tests/bpf_%: tests/bpf/test_%.c $(OUT)/drainstat.skel.h | $(OUT)/tests
	$(CC) $(CFLAGS) -Itests/unit -Itests/bpf -o $@ $< $(LDFLAGS) $(LDLIBS)

# A test's own BPF programs: bpf/'s bodies in wrappers the kernel can test-run.
$(OUT)/tests/%.bpf.o: tests/bpf/%.bpf.c | $(OUT)/tests
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/tests/%.skel.h: $(OUT)/tests/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(OUT)/tests/bpf_fadvise: $(OUT)/tests/fadvise_calls.skel.h
$(OUT)/tests/bpf_sites: $(OUT)/tests/site_shares.skel.h
$(OUT)/tests/bpf_in_place: $(OUT)/tests/in_place.skel.h
$(OUT)/tests/bpf_partial: $(OUT)/tests/partial.skel.h

# The filter key goes into the programs as drainstat puts it there.
$(OUT)/tests/bpf_progs: tests/bpf/test_progs.c $(OUT)/drainstat.skel.h $(OUT)/filterkey.o | $(OUT)/tests
	$(CC) $(CFLAGS) -Itests/unit -Itests/bpf -o $@ $< $(filter %.o,$^) $(LDFLAGS) $(LDLIBS)

# The check of the callers reads their stacks' symbols as drainstat does.
$(OUT)/tests/bpf_check: tests/bpf/test_check.c $(OUT)/drainstat.skel.h $(LIB_OBJS) | $(OUT)/tests
	$(CC) $(CFLAGS) -Itests/unit -Itests/bpf -o $@ $< $(filter %.o,$^) $(LDFLAGS) $(LDLIBS)

# Frame pointers: the -T log walks the workloads' user stacks with them.
$(OUT)/tests/%: tests/workload/%.c | $(OUT)/tests
	$(CC) $(CFLAGS) -fno-omit-frame-pointer -pthread -o $@ $< $(LDFLAGS)

# The unit tests again under AddressSanitizer and UndefinedBehaviorSanitizer.
$(OUT)/asan/%.o: src/%.c | $(OUT)/asan/tests $(SKELS)
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -c $< -o $@

$(OUT)/asan/tests/%: tests/unit/%.c $(ASAN_OBJS) | $(OUT)/asan/tests
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -Itests/unit -o $@ $(filter %.c %.o,$^) $(LDLIBS)

# drainstat itself under both sanitizers: the host tests run it too (tests/run).
$(OUT)/asan/drainstat: $(ASAN_OBJS) $(OUT)/asan/main.o
	$(CC) $(ASAN_FLAGS) -o $@ $^ $(LDLIBS)

$(OUT) $(OUT)/tests $(OUT)/asan/tests $(OUT)/static:
	mkdir -p $@

unit: $(UNIT_BINS) $(ASAN_BINS)
workloads: $(WORKLOADS)

# Debian 12 packages for building and testing (run as root).
deps:
	tests/deps
	tests/vm/deps

STATIC_BINS := $(OUT)/static/drainstat $(WORKLOADS:$(OUT)/tests/%=$(OUT)/static/%)

BPF_TESTS   := $(patsubst tests/bpf/test_%.c,$(OUT)/tests/bpf_%,$(wildcard tests/bpf/test_*.c))

# On x86_64 the VM tests boot Debian's arm64 kernels too: their payload, cross-built.
ifeq ($(HOST_ARCH),x86)
CHECK_CROSS := cross-arm64
endif
.PHONY: cross-arm64
cross-arm64:
	$(MAKE) ARCH=arm64 STATIC=1

check: drainstat unit workloads $(BPF_TESTS) $(STATIC_BINS) $(OUT)/asan/drainstat fuzz-bins \
       $(CHECK_CROSS)
	tests/run

BENCH_VM_BINS := $(OUT)/static/drainstat $(OUT)/static/drainforce $(OUT)/static/empty_loader \
		 $(OUT)/static/bpfstats

bench: drainstat workloads $(OUT)/bench/empty_loader $(OUT)/bench/cpus $(OUT)/bench/wqload \
	$(BENCH_VM_BINS)
	bench/run

# Ordinary workqueue events at a chosen rate (bench/machine).
$(OUT)/bench/wqload: bench/wqload.c
	mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -lutil -lpthread

# The reports' cost at many CPUs, from a synthetic cpus map (bench/cpus.c).
$(OUT)/bench/cpus: bench/cpus.c $(LIB_OBJS)
	mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) $(LDFLAGS) $(LDLIBS)

$(OUT)/bench/empty_loader: bench/empty_loader.c $(OUT)/bench_empty.skel.h $(OUT)/probe.o $(OUT)/hooks.o
	mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(OUT)/probe.o $(OUT)/hooks.o $(LDFLAGS) $(LDLIBS)

# Static copies for bench/vm.sh, which prices the fentry and kprobe programs in QEMU.
$(OUT)/static/empty_loader: bench/empty_loader.c $(OUT)/bench_empty.skel.h $(OUT)/probe.o $(OUT)/hooks.o | $(OUT)/static
	$(CC) $(CFLAGS) -static -o $@ $< $(OUT)/probe.o $(OUT)/hooks.o $(LDLIBS)

$(OUT)/static/bpfstats: bench/bpfstats.c | $(OUT)/static
	$(CC) $(CFLAGS) -static -o $@ $< $(LDLIBS)

# Regenerate the checked-in vmlinux.h from this machine's kernel BTF, or with
# IMAGE=vmlinuz from a kernel image's (another architecture's: mk/vmlinux-h).
vmlinux:
	mk/vmlinux-h $(ARCH) $(IMAGE)

# $(PREFIX)/lib/systemd/system: systemd reads /usr/local/lib/systemd/system for
# units an administrator installs (systemd.unit(5)), /usr/lib/systemd/system
# for packages (PREFIX=/usr); /etc/systemd/system is for local overrides.
UNITDIR ?= $(PREFIX)/lib/systemd/system

install: drainstat
	install -D -m 0755 drainstat $(DESTDIR)$(PREFIX)/sbin/drainstat
	install -D -m 0644 man/drainstat.8 $(DESTDIR)$(PREFIX)/share/man/man8/drainstat.8
	sed 's|^ExecStart=/usr/local/|ExecStart=$(PREFIX)/|' dist/drainstat.service >$(OUT)/drainstat.service
	install -D -m 0644 $(OUT)/drainstat.service $(DESTDIR)$(UNITDIR)/drainstat.service

clean:
	rm -rf $(OUT) drainstat

# Further targets, one file each: make fuzz (mk/fuzz.mk), make soak (mk/soak.mk), ...
include $(wildcard mk/*.mk)

-include $(wildcard $(OUT)/*.d $(OUT)/tests/*.d $(OUT)/static/*.d $(OUT)/asan/*.d $(OUT)/asan/tests/*.d)
