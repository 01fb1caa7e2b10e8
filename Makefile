# SPDX-License-Identifier: MIT
#
# make demo   install what's missing, build, run the demo end to end
# make test   install what's missing, build, run every test (root needed), with a
#             sanitized build (build/asan) and a short fuzz campaign (build/fuzz)
# make fuzz   a long fuzz campaign: FUZZ_SECONDS (default 600) per target
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
# A user header is included by its path under user/: "target/maps.h".
USER_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -I$(BUILD) -Iinclude -Ibpf -Iuser \
	$(LIBBPF_CFLAGS)
# What the library needs at link time (every program that uses it).
LIB_LIBS = $(LIBBPF_LIBS) -lelf -lz -pthread
TARGET_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -pthread
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I$(BUILD) -Ibpf \
	-I/usr/include/x86_64-linux-gnu -Wall -Werror

# The loader library: every .c of these folders, everything under user/ but user/cli/.
# A new folder of the library is one more word here.
LIB_DIRS := user/base user/wire user/model user/target user/usdt user/kernel user/output \
	user/incidents user/dumps user/serving user/export user/session
LIB_SRCS := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
LIB_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(LIB_SRCS))
LIB := $(BUILD)/librecorder.a
# The command-line tools: their mains, and the helpers they share (linked to the unit tests too).
CLI_MAINS := user/cli/recorder-attach.c user/cli/recorder-tail.c
# recorder-attach's own: its options (user/cli/attach_opts.c), linked to it alone.
ATTACH_SRCS := user/cli/attach_opts.c
CLI_SRCS := $(filter-out $(CLI_MAINS) $(ATTACH_SRCS),$(wildcard user/cli/*.c))
CLI_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(CLI_SRCS))
ATTACH_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(ATTACH_SRCS))
# Every object of user/ is rebuilt when any user header changes.
USER_HDRS := $(foreach d,$(LIB_DIRS) user/cli,$(wildcard $(d)/*.h)) $(wildcard bpf/*_abi*.h) \
	$(BUILD)/recorder.skel.h

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))

# Instrumented programs: the workload and the end-to-end test targets.
TARGET_SRCS := $(wildcard tests/targets/*.c)
TARGET_BINS := $(patsubst tests/targets/%.c,$(BUILD)/tests/targets/%,$(TARGET_SRCS))
# The event-loop example built without recorder (tests/targets/evloop_plain.h): a baseline.
# Its events' fields are not evaluated there, so a parameter used only in one is unused.
TARGET_BINS += $(BUILD)/tests/targets/evloop-plain
# The workload of the header before 64 KiB batch buffers (marker 0x5243).
TARGET_BINS += $(BUILD)/tests/targets/workload-5243
SHLIB_SRCS := $(wildcard tests/targets/lib/*.c)
SHLIB := $(BUILD)/tests/targets/librecshared.so
# Loaded with dlopen after the attach, never linked.
LATELIB := $(BUILD)/tests/targets/librecdlopen.so

BINS := $(BUILD)/recorder-attach $(BUILD)/recorder-tail $(BUILD)/workload $(BUILD)/workload-sites
# Writes the golden dumps of triggers from the real ones (tests/golden/make-dumps.sh).
GOLDEN_BINS := $(BUILD)/tests/golden/mksnapshots

# The sanitized build: the library, the CLIs and the unit tests with ASan and UBSan,
# in their own tree. The BPF skeleton header is shared; no object is. The targets
# and the workload stay uninstrumented: build/asan links to them so that the e2e
# tests can run with RECORDER_BIN=build/asan.
ASAN := $(BUILD)/asan
SAN_CC ?= $(CLANG)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_CFLAGS = -g -O1 $(SAN_FLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -I$(BUILD) -Iinclude -Ibpf \
	-Iuser $(LIBBPF_CFLAGS)
ASAN_OBJS := $(patsubst user/%.c,$(ASAN)/user/%.o,$(LIB_SRCS))
ASAN_CLI_OBJS := $(patsubst user/%.c,$(ASAN)/user/%.o,$(CLI_SRCS))
ASAN_ATTACH_OBJS := $(patsubst user/%.c,$(ASAN)/user/%.o,$(ATTACH_SRCS))
ASAN_LIB := $(ASAN)/librecorder.a
ASAN_UNIT_BINS := $(patsubst tests/unit/%.c,$(ASAN)/tests/unit/%,$(UNIT_SRCS))
ASAN_BINS := $(ASAN)/recorder-attach $(ASAN)/recorder-tail $(ASAN_UNIT_BINS) \
	$(ASAN)/workload $(ASAN)/tests/targets

# libFuzzer harnesses (tests/fuzz): the library again, with coverage for the fuzzer.
FUZZ := $(BUILD)/fuzz
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
	$(WARN) -std=gnu11 -D_GNU_SOURCE -I$(BUILD) -Iinclude -Ibpf -Iuser $(LIBBPF_CFLAGS)
FUZZ_OBJS := $(patsubst user/%.c,$(FUZZ)/user/%.o,$(LIB_SRCS))
FUZZ_LIB := $(FUZZ)/librecorder.a
FUZZ_TARGETS := event callsite dump control batch
FUZZ_BINS := $(patsubst %,$(FUZZ)/fuzz_%,$(FUZZ_TARGETS))
FUZZ_SECONDS ?= 600

.PHONY: all deps test check unit e2e demo bench clean format format-check asan fuzzers fuzz \
	install uninstall man rust FORCE
.DELETE_ON_ERROR:

all: $(BINS) $(UNIT_BINS) $(TARGET_BINS) $(GOLDEN_BINS)

deps:
	@./tools/install-deps.sh

# The README's test command: installs, builds, runs everything.
test: deps
	@$(MAKE) --no-print-directory check

check: all asan fuzzers man rust
	@./tests/run-all.sh

asan: $(ASAN_BINS)

# The Rust tracing layer (rust/recorder-tracing), built offline against Debian's
# packaged crates (rust/.cargo/config.toml) into build/rust. tests/run-all.sh --unit
# runs its cargo test.
CARGO ?= cargo
RUST_ENV = CARGO_TARGET_DIR=$(CURDIR)/$(BUILD)/rust
rust:
	cd rust && $(RUST_ENV) $(CARGO) build --offline -p recorder-tracing --lib --examples

fuzzers: $(FUZZ_BINS)

# The long campaign. make test runs the same with FUZZ_SECONDS=10.
fuzz: fuzzers
	@FUZZ_SECONDS=$(FUZZ_SECONDS) ./tests/run-all.sh --fuzz

unit: $(UNIT_BINS)
	@./tests/run-all.sh --unit

e2e: all
	@./tests/run-all.sh --e2e

demo: deps
	@$(MAKE) --no-print-directory all
	@./tools/demo.sh

# The Rust programs of the end-to-end tests and the Rust bench (issue 27: rust/e2e,
# rust/bench), built offline by cargo into build/rust, --release (the bench needs it;
# the test programs share its build of the dependencies). cargo decides what is stale.
# make check builds them before tests/run-all.sh runs tests/e2e/test_rust.sh.
.PHONY: rust-e2e
rust-e2e:
	cd rust && $(RUST_ENV) $(CARGO) build --offline --release -p recorder-e2e -p recorder-bench
check e2e: rust-e2e

# Benchmarks (root): several interleaved rounds; writes docs/BENCHMARKS.md and
# build/bench/results.json. tools/bench/run.sh --smoke is the quick check.
bench: all
	@./tools/bench/run.sh

$(BUILD) $(BUILD)/tests/unit $(BUILD)/tests/targets:
	@mkdir -p $@

$(BUILD)/vmlinux.h: | $(BUILD)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/recorder.tmp.bpf.o: bpf/recorder.bpf.c $(wildcard bpf/*.h) $(BUILD)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/recorder.bpf.o: $(BUILD)/recorder.tmp.bpf.o
	$(BPFTOOL) gen object $@ $<

$(BUILD)/recorder.skel.h: $(BUILD)/recorder.bpf.o
	$(BPFTOOL) gen skeleton $< name recorder_bpf > $@

$(BUILD)/user/%.o: user/%.c $(USER_HDRS)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -c $< -o $@

# Rebuilt from scratch: a renamed or removed source must not linger in the archive.
$(LIB): $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/recorder-%: $(BUILD)/user/cli/recorder-%.o $(CLI_OBJS) $(LIB)
	$(CC) $(USER_CFLAGS) $^ $(LIB_LIBS) -o $@

$(BUILD)/recorder-attach: $(BUILD)/user/cli/recorder-attach.o $(ATTACH_OBJS) $(CLI_OBJS) $(LIB)
	$(CC) $(USER_CFLAGS) $^ $(LIB_LIBS) -o $@

$(BUILD)/workload: tools/workload.c include/recorder.h | $(BUILD)
	$(CC) $(TARGET_CFLAGS) $< -o $@

# The same with 1,000 REC_ERROR callsites (--error-sites), for the bench's signatures keys only.
$(BUILD)/workload-sites: tools/workload.c include/recorder.h | $(BUILD)
	$(CC) $(TARGET_CFLAGS) -DWORKLOAD_ERROR_SITES $< -o $@

$(BUILD)/tests/targets/workload-5243: tools/workload.c include/recorder.h | $(BUILD)/tests/targets
	$(CC) $(TARGET_CFLAGS) -DREC__ABI_5243 $< -o $@

$(BUILD)/tests/unit/%: tests/unit/%.c $(CLI_OBJS) $(LIB) | $(BUILD)/tests/unit
	$(CC) $(USER_CFLAGS) $< $(CLI_OBJS) $(LIB) $(LIB_LIBS) -lcmocka -o $@

$(BUILD)/tests/golden/%: tests/golden/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $< $(LIB) $(LIB_LIBS) -o $@

$(SHLIB): $(SHLIB_SRCS) include/recorder.h | $(BUILD)/tests/targets
	$(CC) $(TARGET_CFLAGS) -fPIC -shared $(SHLIB_SRCS) -o $@

$(LATELIB): $(wildcard tests/targets/dlopen/*.c) include/recorder.h | $(BUILD)/tests/targets
	$(CC) $(TARGET_CFLAGS) -fPIC -shared $(wildcard tests/targets/dlopen/*.c) -o $@

# Every target may use the shared library; it is found next to the binary.
$(BUILD)/tests/targets/%: tests/targets/%.c include/recorder.h $(SHLIB) $(LATELIB) | $(BUILD)/tests/targets
	$(CC) $(TARGET_CFLAGS) $< -L$(BUILD)/tests/targets -Wl,--no-as-needed -lrecshared \
		-Wl,--as-needed -Wl,-rpath,'$$ORIGIN' -ldl -o $@

$(BUILD)/tests/targets/evloop-plain: tests/targets/evloop.c tests/targets/evloop_plain.h \
		| $(BUILD)/tests/targets
	$(CC) $(TARGET_CFLAGS) -Wno-unused-parameter -DEVLOOP_PLAIN $< -o $@

$(ASAN)/user $(ASAN)/tests/unit $(FUZZ)/user:
	@mkdir -p $@

$(ASAN)/user/%.o: user/%.c $(USER_HDRS)
	@mkdir -p $(@D)
	$(SAN_CC) $(ASAN_CFLAGS) -c $< -o $@

$(ASAN_LIB): $(ASAN_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(ASAN)/recorder-%: $(ASAN)/user/cli/recorder-%.o $(ASAN_CLI_OBJS) $(ASAN_LIB)
	$(SAN_CC) $(ASAN_CFLAGS) $^ $(LIB_LIBS) -o $@

$(ASAN)/recorder-attach: $(ASAN)/user/cli/recorder-attach.o $(ASAN_ATTACH_OBJS) $(ASAN_CLI_OBJS) \
		$(ASAN_LIB)
	$(SAN_CC) $(ASAN_CFLAGS) $^ $(LIB_LIBS) -o $@

$(ASAN)/tests/unit/%: tests/unit/%.c $(ASAN_CLI_OBJS) $(ASAN_LIB) | $(ASAN)/tests/unit
	$(SAN_CC) $(ASAN_CFLAGS) $< $(ASAN_CLI_OBJS) $(ASAN_LIB) $(LIB_LIBS) -lcmocka -o $@

# Links to the uninstrumented programs the e2e tests run as targets.
$(ASAN)/workload: | $(BUILD)/workload $(ASAN)/user
	ln -sfn ../workload $@

$(ASAN)/tests/targets: | $(TARGET_BINS) $(ASAN)/tests/unit
	ln -sfn ../../tests/targets $@

$(FUZZ)/user/%.o: user/%.c $(USER_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_LIB): $(FUZZ_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(FUZZ)/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard tests/fuzz/*.h) $(FUZZ_LIB)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB) $(LIB_LIBS) -o $@

# Regenerates the seed corpora from real runs (root): see tests/fuzz/mkseeds.sh.
$(FUZZ)/mkseeds: tests/fuzz/mkseeds.c $(LIB) | $(FUZZ)/user
	$(CC) $(USER_CFLAGS) $< $(LIB) $(LIB_LIBS) -o $@

# ---- install (GNU conventions: PREFIX, DESTDIR and the directory variables) ----
VERSION := 0.1
PREFIX ?= /usr/local
prefix ?= $(PREFIX)
exec_prefix ?= $(prefix)
bindir ?= $(exec_prefix)/bin
includedir ?= $(prefix)/include
datarootdir ?= $(prefix)/share
mandir ?= $(datarootdir)/man
pkgconfigdir ?= $(datarootdir)/pkgconfig
bashcompdir ?= $(datarootdir)/bash-completion/completions
systemdunitdir ?= $(prefix)/lib/systemd/system
INSTALL ?= install
MAN_SRCS := $(wildcard docs/man/*.scd)
MANS := $(patsubst docs/man/%.scd,$(BUILD)/man/%,$(MAN_SRCS))

man: $(MANS)
# The man pages: scdoc turns each docs/man/NAME.SECTION.scd into roff.
$(BUILD)/man/%: docs/man/%.scd
	@mkdir -p $(@D)
	scdoc < $< > $@
# Made anew each time: they carry the directories of this install.
$(BUILD)/dist/recorder.pc: tools/dist/recorder.pc.in FORCE
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(prefix)|; s|@INCLUDEDIR@|$(includedir)|; s|@VERSION@|$(VERSION)|' \
		$< > $@
$(BUILD)/dist/recorder@.service: tools/dist/recorder@.service FORCE
	@mkdir -p $(@D)
	sed -e 's|@BINDIR@|$(bindir)|' $< > $@
FORCE:

install: $(BINS) $(MANS) $(BUILD)/dist/recorder.pc $(BUILD)/dist/recorder@.service
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(includedir) $(DESTDIR)$(pkgconfigdir) \
		$(DESTDIR)$(mandir)/man1 $(DESTDIR)$(mandir)/man7 $(DESTDIR)$(mandir)/man8 \
		$(DESTDIR)$(bashcompdir) $(DESTDIR)$(systemdunitdir)
	$(INSTALL) -m 0755 $(BUILD)/recorder-attach $(BUILD)/recorder-tail $(DESTDIR)$(bindir)/
	$(INSTALL) -m 0644 include/recorder.h $(DESTDIR)$(includedir)/
	$(INSTALL) -m 0644 $(BUILD)/dist/recorder.pc $(DESTDIR)$(pkgconfigdir)/
	$(INSTALL) -m 0644 $(BUILD)/man/recorder-tail.1 $(DESTDIR)$(mandir)/man1/
	$(INSTALL) -m 0644 $(BUILD)/man/recorder.7 $(DESTDIR)$(mandir)/man7/
	$(INSTALL) -m 0644 $(BUILD)/man/recorder-attach.8 $(DESTDIR)$(mandir)/man8/
	$(INSTALL) -m 0644 tools/dist/recorder.bash-completion $(DESTDIR)$(bashcompdir)/recorder-attach
	ln -sf recorder-attach $(DESTDIR)$(bashcompdir)/recorder-tail
	$(INSTALL) -m 0644 $(BUILD)/dist/recorder@.service $(DESTDIR)$(systemdunitdir)/

uninstall:
	rm -f $(DESTDIR)$(bindir)/recorder-attach $(DESTDIR)$(bindir)/recorder-tail \
		$(DESTDIR)$(includedir)/recorder.h $(DESTDIR)$(pkgconfigdir)/recorder.pc \
		$(DESTDIR)$(mandir)/man1/recorder-tail.1 $(DESTDIR)$(mandir)/man7/recorder.7 \
		$(DESTDIR)$(mandir)/man8/recorder-attach.8 \
		$(DESTDIR)$(bashcompdir)/recorder-attach $(DESTDIR)$(bashcompdir)/recorder-tail \
		$(DESTDIR)$(systemdunitdir)/recorder@.service

# Every C source and header of ours, formatted by .clang-format (kernel style).
FORMAT_SRCS = $(shell find bpf include user tests tools -name '*.[ch]' \
	-not -path 'tests/fuzz/corpus/*' | sort)

format:
	clang-format -i $(FORMAT_SRCS)

# Part of make test (tests/run-all.sh): fails on any file that `make format` would change.
format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRCS)

clean:
	rm -rf $(BUILD)
