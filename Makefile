# SPDX-License-Identifier: MIT
#
# make demo   install what's missing, build, run the demo end to end
# make test   install what's missing, build, run every test (root needed)
# make        build only (needs the packages from tools/install-deps.sh)

BUILD := build
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool

# Evaluated lazily: on a fresh machine pkg-config may only exist after deps.
LIBBPF_CFLAGS = $(shell pkg-config --cflags libbpf 2>/dev/null)
LIBBPF_LIBS = $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf)

WARN := -Wall -Wextra -Werror
CFLAGS ?= -g -O2
USER_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -I$(BUILD) -Iinclude $(LIBBPF_CFLAGS)
TARGET_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -pthread
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I$(BUILD) -Ibpf \
	-I/usr/include/x86_64-linux-gnu -Wall -Werror

# The loader library: every user/*.c except the two CLI mains.
CLI_SRCS := user/recorder-attach.c user/recorder-tail.c
LIB_SRCS := $(filter-out $(CLI_SRCS),$(wildcard user/*.c))
LIB_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(LIB_SRCS))
LIB := $(BUILD)/librecorder.a

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))

# Instrumented programs: the workload and the end-to-end test targets.
TARGET_SRCS := $(wildcard tests/targets/*.c)
TARGET_BINS := $(patsubst tests/targets/%.c,$(BUILD)/tests/targets/%,$(TARGET_SRCS))
SHLIB_SRCS := $(wildcard tests/targets/lib/*.c)
SHLIB := $(BUILD)/tests/targets/librecshared.so
# Loaded with dlopen after the attach, never linked.
LATELIB := $(BUILD)/tests/targets/librecdlopen.so

BINS := $(BUILD)/recorder-attach $(BUILD)/recorder-tail $(BUILD)/workload

.PHONY: all deps test check unit e2e demo bench clean
.DELETE_ON_ERROR:

all: $(BINS) $(UNIT_BINS) $(TARGET_BINS)

deps:
	@./tools/install-deps.sh

# The README's test command: installs, builds, runs everything.
test: deps
	@$(MAKE) --no-print-directory check

check: all
	@./tests/run-all.sh

unit: $(UNIT_BINS)
	@./tests/run-all.sh --unit

e2e: all
	@./tests/run-all.sh --e2e

demo: deps
	@$(MAKE) --no-print-directory all
	@./tools/demo.sh

# Benchmarks (root): several interleaved rounds; writes docs/BENCHMARKS.md and
# build/bench/results.json. tools/bench/run.sh --smoke is the quick check.
bench: all
	@./tools/bench/run.sh

$(BUILD) $(BUILD)/user $(BUILD)/tests/unit $(BUILD)/tests/targets:
	@mkdir -p $@

$(BUILD)/vmlinux.h: | $(BUILD)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/recorder.tmp.bpf.o: bpf/recorder.bpf.c bpf/recorder.h $(BUILD)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/recorder.bpf.o: $(BUILD)/recorder.tmp.bpf.o
	$(BPFTOOL) gen object $@ $<

$(BUILD)/recorder.skel.h: $(BUILD)/recorder.bpf.o
	$(BPFTOOL) gen skeleton $< name recorder_bpf > $@

$(BUILD)/user/%.o: user/%.c $(wildcard user/*.h) bpf/recorder.h $(BUILD)/recorder.skel.h | $(BUILD)/user
	$(CC) $(USER_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(AR) rcs $@ $^

$(BUILD)/recorder-%: $(BUILD)/user/recorder-%.o $(LIB)
	$(CC) $(USER_CFLAGS) $^ $(LIBBPF_LIBS) -lelf -lz -ljson-c -pthread -o $@

$(BUILD)/workload: tools/workload.c include/recorder.h | $(BUILD)
	$(CC) $(TARGET_CFLAGS) $< -o $@

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB) | $(BUILD)/tests/unit
	$(CC) $(USER_CFLAGS) -Iuser $< $(LIB) $(LIBBPF_LIBS) -lelf -lz -ljson-c -lcmocka -pthread -o $@

$(SHLIB): $(SHLIB_SRCS) include/recorder.h | $(BUILD)/tests/targets
	$(CC) $(TARGET_CFLAGS) -fPIC -shared $(SHLIB_SRCS) -o $@

$(LATELIB): $(wildcard tests/targets/dlopen/*.c) include/recorder.h | $(BUILD)/tests/targets
	$(CC) $(TARGET_CFLAGS) -fPIC -shared $(wildcard tests/targets/dlopen/*.c) -o $@

# Every target may use the shared library; it is found next to the binary.
$(BUILD)/tests/targets/%: tests/targets/%.c include/recorder.h $(SHLIB) $(LATELIB) | $(BUILD)/tests/targets
	$(CC) $(TARGET_CFLAGS) $< -L$(BUILD)/tests/targets -Wl,--no-as-needed -lrecshared \
		-Wl,--as-needed -Wl,-rpath,'$$ORIGIN' -ldl -o $@

clean:
	rm -rf $(BUILD)
