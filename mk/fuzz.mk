# SPDX-License-Identifier: GPL-2.0
# libFuzzer targets (tests/fuzz/fuzz_*.c), built with clang under ASan and UBSan.
#
#   make fuzz-bins    build them into build/fuzz (what tests/fuzz/run -t 15 in make check runs)
#   make fuzz         build them and fuzz each for FUZZ_SECONDS (default 300); the scratch
#                     corpora stay in build/fuzz/scratch, and a later make fuzz goes on from them
#   make fuzz-merge   add the scratch inputs that reach new code to tests/fuzz/corpus
#                     (libFuzzer -merge=1: nothing checked in is removed), then review and commit

FUZZ_OUT      := $(OUT)/fuzz
FUZZ_SECONDS  ?= 300
FUZZ_SCRATCH  ?= $(FUZZ_OUT)/scratch
FUZZ_SAN      := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS   := $(CFLAGS) -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_TARGETS  := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS     := $(FUZZ_TARGETS:%=$(FUZZ_OUT)/%)
# The checkers and the random model the targets share: every tests/fuzz/*.c but the targets.
FUZZ_HELPERS  := $(patsubst tests/fuzz/%.c,$(FUZZ_OUT)/helpers/%.o, \
		   $(filter-out tests/fuzz/fuzz_%.c,$(wildcard tests/fuzz/*.c)))
# Archives, so that each target links only the modules it calls.
FUZZ_LIBS     := $(FUZZ_OUT)/libfuzzhelpers.a $(FUZZ_OUT)/libdrainstat.a

.PHONY: fuzz fuzz-bins fuzz-merge

fuzz-bins: $(FUZZ_BINS)

fuzz: fuzz-bins
	tests/fuzz/run -t $(FUZZ_SECONDS) -k $(FUZZ_SCRATCH)

fuzz-merge: fuzz-bins
	tests/fuzz/run -m $(FUZZ_SCRATCH)

$(FUZZ_OUT)/%.o: src/%.c | $(FUZZ_OUT)/helpers $(SKELS)
	$(CLANG) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_OUT)/helpers/%.o: tests/fuzz/%.c | $(FUZZ_OUT)/helpers $(SKELS)
	$(CLANG) $(FUZZ_CFLAGS) -Itests/fuzz -c $< -o $@

$(FUZZ_OUT)/libfuzzhelpers.a: $(FUZZ_HELPERS)
$(FUZZ_OUT)/libdrainstat.a: $(LIB_OBJS:$(OUT)/%=$(FUZZ_OUT)/%)
$(FUZZ_LIBS):
	rm -f $@
	ar rcs $@ $^

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIBS) | $(SKELS)
	$(CLANG) $(FUZZ_CFLAGS) -Itests/fuzz -fsanitize=fuzzer -o $@ $< $(FUZZ_LIBS) $(LDLIBS)

$(FUZZ_OUT)/helpers:
	mkdir -p $@

-include $(wildcard $(FUZZ_OUT)/*.d $(FUZZ_OUT)/helpers/*.d)
