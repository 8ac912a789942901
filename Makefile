# netsched — see README.md. `make`, `make test`, `make demo`, `make bench`.
# V=1 shows the commands; SAN=1 builds with AddressSanitizer + UBSan into build/san;
# COV=1 with gcov's counters into build/cov (`make coverage`).

CC ?= cc
PKGS := libmnl libprotobuf-c libmicrohttpd yaml-0.1 libcurl libcrypto gnutls
WARN := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 $(WARN) -D_GNU_SOURCE -MMD -MP -pthread
LDLIBS += -pthread -lnng -lm
# Each binary keeps only the libraries it calls (the agent needs no libcurl).
LDFLAGS += -Wl,--as-needed

# `make test` builds with one job per CPU.
NPROC := $(shell nproc 2>/dev/null || echo 1)

# O= moves every build product (parallel checkouts and helpers use it).
O ?= build
ifeq ($(SAN),1)
BUILD := $(O)/san
BINDIR ?= $(O)/san/bin
CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
else ifeq ($(COV),1)
BUILD := $(O)/cov
BINDIR ?= $(O)/cov/bin
CFLAGS += -O0 --coverage
LDFLAGS += --coverage
else
BUILD := $(O)/rel
BINDIR ?= bin
endif
GEN := $(O)/gen

ifeq ($(V),1)
Q :=
else
Q := @
endif

# pkg-config runs only when a compile or link needs it (not for `make clean`).
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS = $(shell pkg-config --libs $(PKGS))
# Tests and benchmarks include by path from the repository root
# ("scorer/options.h"): agent/ and scorer/ both have an options.h. The
# scorer's files include each other by folder ("nodes/view.h").
CPPFLAGS += -I. -Icommon -Iproto -Iscorer -I$(GEN)

COMMON_SRC := $(wildcard common/*.c) $(wildcard proto/*.c) $(GEN)/netsched.pb-c.c
AGENT_SRC := $(filter-out agent/main.c,$(wildcard agent/*.c))
SCORER_SRC := $(filter-out scorer/main.c,$(wildcard scorer/*.c scorer/*/*.c))
REBAL_SRC := $(filter-out rebalancer/main.c,$(wildcard rebalancer/*.c))
TEST_SRC := $(wildcard tests/unit/test_*.c)

obj = $(patsubst %.c,$(BUILD)/%.o,$(patsubst $(GEN)/%,gen/%,$(1)))
COMMON_OBJ := $(call obj,$(COMMON_SRC))
AGENT_OBJ := $(call obj,$(AGENT_SRC))
SCORER_OBJ := $(call obj,$(SCORER_SRC))
REBAL_OBJ := $(call obj,$(REBAL_SRC))
TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRC))

.SECONDARY:
.PHONY: all deps deps-test deps-bench unit unit-build bench-tools test demo bench bench-k8s bench-podwatch bench-k8s-hostile clean \
	fuzz fuzz-smoke fuzz-ci load coverage bench-placement demo-cluster
all: deps $(BINDIR)/netsched-agent $(BINDIR)/netsched-scorer $(BINDIR)/netsched-rebalancer

deps:
	$(Q).ci/deps build
deps-test:
	$(Q).ci/deps test
deps-bench:
	$(Q).ci/deps bench

# Generated code lives only in the build tree; one protoc-c run makes both files.
$(GEN)/netsched.pb-c.c $(GEN)/netsched.pb-c.h &: proto/netsched.proto
	@mkdir -p $(GEN)
	@echo "  PROTOC  $<"
	$(Q)protoc-c --proto_path=proto --c_out=$(GEN) $<

$(BUILD)/gen/%.o: $(GEN)/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.c $(GEN)/netsched.pb-c.h
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(BUILD)/libcommon.a: $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^
$(BUILD)/libagent.a: $(AGENT_OBJ)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^
$(BUILD)/libscorer.a: $(SCORER_OBJ)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^
$(BUILD)/librebalancer.a: $(REBAL_OBJ)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BINDIR)/netsched-agent: $(BUILD)/agent/main.o $(BUILD)/libagent.a $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(LDLIBS)

$(BINDIR)/netsched-scorer: $(BUILD)/scorer/main.o $(BUILD)/libscorer.a $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(LDLIBS)

$(BINDIR)/netsched-rebalancer: $(BUILD)/rebalancer/main.o $(BUILD)/librebalancer.a $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(LDLIBS)

# Every unit test links the module archives; the linker takes what it needs.
$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(BUILD)/libagent.a $(BUILD)/libscorer.a $(BUILD)/librebalancer.a $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcmocka $(LDLIBS)

# The feed (bench/feed.c, many fake agents) drives the scale integration test;
# the forge (bench/forge.c, one crafted report) the replay and oversize tests;
# the sink (bench/sink.c, reports as JSON lines) the agent pods test; the floor
# (bench/floor.c, what make bench-k8s measures against) its own test.
unit-build: all $(TESTS) $(BUILD)/bench/feed $(BUILD)/bench/forge $(BUILD)/bench/sink $(BUILD)/bench/floor

# Builds and runs every unit test (SAN=1: under ASan and UBSan); names the
# ones that failed.
unit: unit-build
	$(Q)mkdir -p $(BUILD)/tests/log; failed=; for t in $(TESTS); do \
		log=$(BUILD)/tests/log/$${t##*/}; \
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		$$t >$$log 2>&1 || { cat $$log; failed="$$failed $${t##*/}"; }; done; \
	if [ -n "$$failed" ]; then echo "unit tests failed:$$failed"; exit 1; fi; \
	echo "unit: $(words $(TESTS)) tests passed ($(BUILD))"

# Line coverage of the production code by the unit tests alone (gcov): a
# build with counters in $(O)/cov, counters zeroed, every unit test run,
# then a table per folder and per module (tests/coverage).
coverage: deps
	$(Q)$(MAKE) --no-print-directory COV=1 unit-build
	$(Q)find $(O)/cov -name '*.gcda' -delete
	$(Q)$(MAKE) --no-print-directory COV=1 unit
	$(Q)tests/coverage $(O)/cov

# Benchmark tools (bench/*.c with a main, except the hand-built JSON comparison).
BENCH_SRC := $(filter-out bench/json_candidates.c,$(wildcard bench/*.c))
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BUILD)/libagent.a $(BUILD)/libscorer.a $(BUILD)/librebalancer.a $(BUILD)/libcommon.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(LDLIBS)
bench-tools: all $(BENCH_BINS)

# libFuzzer harnesses, one per parser that sees outside bytes (tests/fuzz/),
# built with clang into $(O)/fuzz; each runs FUZZ_SECONDS on its corpus.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS = $(CFLAGS) -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_OBJ := $(patsubst %.c,$(O)/fuzz/%.o,$(patsubst $(GEN)/%,gen/%,$(COMMON_SRC) $(SCORER_SRC) $(REBAL_SRC)))
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(O)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
$(O)/fuzz/gen/%.o: $(GEN)/%.c
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) $(PKG_CFLAGS) -c $< -o $@
$(O)/fuzz/%.o: %.c $(GEN)/netsched.pb-c.h
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) $(PKG_CFLAGS) -c $< -o $@
$(O)/fuzz/libfuzz.a: $(FUZZ_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^
$(O)/fuzz/fuzz_%: $(O)/fuzz/tests/fuzz/fuzz_%.o $(O)/fuzz/libfuzz.a
	@echo "  LD      $@"
	$(Q)$(FUZZ_CC) $(LDFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) $(LDLIBS)
fuzz-smoke: FUZZ_SECONDS = 5
# What `make test` runs: each harness for its own budget (tests/fuzz/run).
fuzz-ci: FUZZ_SECONDS = ci
fuzz fuzz-smoke fuzz-ci: $(FUZZ_BINS)
	$(Q)tests/fuzz/run $(FUZZ_SECONDS) $(O)/fuzz $(FUZZ_BINS)

# The full suite: unit tests in the release and the sanitizer build, then the
# integration tests against the real binaries (root needed for namespaces).
test: deps-test
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) unit-build
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) SAN=1 unit-build
	$(Q)tests/run-all

demo: deps-test
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/demo.sh

bench: deps-bench
	$(Q)$(MAKE) --no-print-directory bench-tools
	$(Q)bench/run

# The real kube-scheduler's throughput with no extender, with the floor
# extender (bench/floor.c, also with --scores) and with netsched, in the same
# runs (bench/k8s.sh; about 8 minutes; builds the control plane once, cached).
bench-k8s: deps-bench
	$(Q)$(MAKE) --no-print-directory bench-tools
	$(Q)bench/k8s.sh

# The scorer's pod watch with 20,000 pods in the real apiserver: sync time,
# memory, CPU per event and prioritize latency while pods churn
# (bench/podwatch.sh; PODWATCH_PODS, PODWATCH_RATE; a few minutes).
bench-podwatch: deps-bench
	$(Q)$(MAKE) --no-print-directory bench-tools
	$(Q)bench/podwatch.sh

# Scheduling latency through the real kube-scheduler and netsched as deploy/
# ships it, quiet and under every hostile client at once (bench/k8s-hostile.sh;
# root; about 4 minutes once the control plane is cached).
bench-k8s-hostile: deps-bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bench/k8s-hostile.sh

# What pods get on a shaped cluster whose pods run, placed by the stock
# scheduler, by netsched as deploy/ ships it (with its rebalancer where the
# workload changes after placement), and by an oracle (bench/placement.sh;
# about 40 minutes; PLACEMENT_SPEEDS, PLACEMENT_WORKLOADS).
bench-placement: deps-bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bench/placement.sh

# The same at demo size: a burst on 4 shaped nodes with and without netsched,
# and what the pods got (about 2 minutes once the control plane is cached).
demo-cluster: deps-test
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bench/demo-cluster.sh

# Two minutes of a 5,000-node cluster's steady load (LOAD_SECONDS to change).
load: deps-bench
	$(Q)$(MAKE) --no-print-directory bench-tools
	$(Q)bench/load.sh

clean:
	rm -rf build bin

-include $(shell find $(O) -name '*.d' 2>/dev/null)
