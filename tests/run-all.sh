#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs every test: the header compile checks, the cmocka unit tests, the Rust
# layer's cargo test (rust/recorder-tracing), the
# golden outputs of every format (tests/golden), the end-to-end tests that load
# BPF for real (root), the unit tests and a subset of
# the end-to-end tests again with ASan and UBSan (build/asan), and a short fuzz
# campaign (build/fuzz, FUZZ_SECONDS per target, 10 by default). Ends with
# "N passed, M failed". E2E_SHOW=1 shows the output of the e2e tests that pass too.
# Usage: tests/run-all.sh [--unit | --e2e | --asan | --fuzz | --browser] [TEST_NAME_SUBSTRING]
set -u
cd "$(dirname "$0")/.."

mode=all
case "${1:-}" in
--unit) mode=unit; shift ;;
--e2e) mode=e2e; shift ;;
--asan) mode=asan; shift ;;
--fuzz) mode=fuzz; shift ;;
--browser) mode=browser; shift ;;
esac
filter="${1:-}"

# The end-to-end tests run again with the sanitized CLIs: those that go through
# the decoder, the model, the dump writer and reader, and the queries.
ASAN_E2E=(
	events_are_recorded
	last_n_entries
	events_outside_span_are_not_recorded
	child_span_inherits_recorder
	recording_spans_are_isolated_across_nested_recordings
	active_spans
	all_field_types_render
	follow_streams_new_events
	kill_9_during_a_burst_keeps_the_last_event
	literal_is_read_after_the_process_is_gone
	dump_on_request_matches_live_tail
	bad_dump_files_get_clear_errors
	overflow_accounting_is_exact
	spans_are_recorded_with_times_and_parents
	open_spans_at_kill_9_are_in_the_black_box
	chrome_live_and_black_box_with_every_filter
	where_live_dump_and_every_format
	where_follow_and_otlp_follow
)
FUZZ_TARGETS=(event callsite dump control batch)

passed=0
failed=0
failures=()
# What each check took (the time since the one before it), for the summary: CI
# has a budget, and the next change should know where the time goes.
last_record=$SECONDS
timings=()

record() { # name rc
	timings+=("$((SECONDS - last_record)) $1")
	last_record=$SECONDS
	if [ "$2" -eq 0 ]; then
		passed=$((passed + 1))
		echo "PASS $1"
	else
		failed=$((failed + 1))
		failures+=("$1")
		echo "FAIL $1"
	fi
}

header_checks() {
	local src=tests/header/compile.c out
	out=$(mktemp -d)
	for cc in "gcc -std=c11" "clang -std=c11" "g++ -std=c++17 -x c++" "clang++ -std=c++17 -x c++"; do
		for opt in -O0 -O2; do
			local name="header: ${cc%% *} ${cc#* } $opt"
			# shellcheck disable=SC2086
			$cc $opt -Wall -Wextra -Werror -pedantic -Iinclude "$src" -o "$out/a.out" \
				>"$out/log" 2>&1 && "$out/a.out" >>"$out/log" 2>&1
			local rc=$?
			[ $rc -ne 0 ] && cat "$out/log"
			record "$name" $rc
		done
	done
	# A program that has redefined or poisoned malloc, calloc, free and snprintf.
	for cc in "gcc -std=c11" "clang -std=c11" "g++ -std=c++17 -x c++" "clang++ -std=c++17 -x c++"; do
		local hmode
		for hmode in "" -DPOISON; do
			# shellcheck disable=SC2086
			$cc -O2 $hmode -Wall -Wextra -Werror -Iinclude tests/header/hostile.c \
				-o "$out/hostile" >"$out/log" 2>&1 && "$out/hostile" >>"$out/log" 2>&1
			local rc=$?
			[ $rc -ne 0 ] && cat "$out/log"
			record "header: ${cc%% *} ${hmode:-with malloc, calloc, free, snprintf redefined}${hmode:+ (poisoned)}" $rc
		done
	done
	# The probe ABI's two spellings agree (tests/header/abi.c compiles only if they do).
	for cc in gcc clang; do
		$cc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude -Ibpf tests/header/abi.c \
			-o "$out/abi" >"$out/log" 2>&1
		local rc=$?
		[ $rc -ne 0 ] && cat "$out/log"
		record "header: $cc abi agrees with bpf/recorder_abi_probe.h" $rc
	done
	rm -rf "$out"
}

unit_tests() {
	for t in build/tests/unit/test_*; do
		[ -x "$t" ] || continue
		local log
		log=$(mktemp)
		"$t" >"$log" 2>&1
		local rc=$?
		grep -E '^\[  (PASSED|FAILED|  OK  )' "$log" | tail -1 | sed "s|^|  $(basename "$t"): |"
		[ $rc -ne 0 ] && cat "$log"
		rm -f "$log"
		record "unit: $(basename "$t")" $rc
	done
}

rust_unit_tests() {
	# The Rust layer's own tests (rust/recorder-tracing), offline, in build/rust.
	local log
	log=$(mktemp)
	(cd rust && CARGO_TARGET_DIR="$PWD/../build/rust" cargo test --offline -p recorder-tracing) \
		>"$log" 2>&1
	local rc=$?
	grep -E '^test result' "$log" | head -1 | sed 's/^/  recorder-tracing: /'
	[ $rc -ne 0 ] && cat "$log"
	rm -f "$log"
	record "unit: cargo test of rust/recorder-tracing" $rc
}

need_root() { # what
	[ "$(id -u)" -eq 0 ] && return 0
	echo "FAIL $1: the end-to-end tests load BPF programs and need root (run: sudo make test)"
	failed=$((failed + 1))
	failures+=("$1: not root")
	return 1
}

# The sanitizers write their reports into files (processes in the background
# too), halt at the first one, and check for leaks at exit.
san_env() { # dir
	export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:log_path=$1/report"
	export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$1/report"
}

# Prints every sanitizer report in dir; fails if there is one.
san_reports() { # dir
	local f found=0
	for f in "$1"/report.*; do
		[ -e "$f" ] || continue
		found=1
		echo "    sanitizer report ($f):"
		sed 's/^/    | /' "$f"
	done
	[ $found -eq 0 ]
}

# e2e_run_all LABEL SAN NAME...: runs the e2e tests NAME (all if none), checking
# for sanitizer reports if SAN is 1.
e2e_run_all() {
	local label=$1 san=$2 t
	shift 2
	# shellcheck source=tests/e2e/lib.sh
	. tests/e2e/lib.sh
	for f in tests/e2e/test_*.sh; do
		# shellcheck disable=SC1090
		. "$f"
	done
	local names=("$@")
	if [ ${#names[@]} -eq 0 ]; then
		mapfile -t names < <(declare -F | awk '{print $3}' | grep '^test_' | sed 's/^test_//')
	fi
	local once=" ${BATCH_PATH_ONLY[*]} " skipped=()
	for t in "${names[@]}"; do
		case "$t" in *"$filter"*) ;; *) continue ;; esac
		if [ -n "$RECORDER_ATTACH_FLAGS" ] && [[ "$once" == *" $t "* ]]; then
			skipped+=("$t")
			continue
		fi
		if ! declare -F "test_$t" >/dev/null; then
			record "$label: $t: no such test in tests/e2e" 1
			continue
		fi
		local log sandir rc
		log=$(mktemp)
		sandir=$(mktemp -d)
		if [ "$san" = 1 ]; then
			(san_env "$sandir"; e2e_run "test_$t") >"$log" 2>&1
		else
			(e2e_run "test_$t") >"$log" 2>&1
		fi
		rc=$?
		{ [ $rc -ne 0 ] || [ -n "${E2E_SHOW:-}" ]; } && sed 's/^/    /' "$log"
		if [ "$san" = 1 ] && ! san_reports "$sandir"; then
			rc=1
		fi
		rm -rf "$log" "$sandir"
		record "$label: $t" $rc
	done
	# Not silent: which ran on the batch path only (tests/e2e/lib.sh, batch_path_only).
	[ ${#skipped[@]} -eq 0 ] ||
		echo "$label: ${#skipped[@]} tests ran on the batch path only, their subject not the event path: ${skipped[*]}"
}

# The e2e suite runs once per event path: the batch path (recorder-attach's
# default) and --per-event. tests/e2e/lib.sh passes RECORDER_ATTACH_FLAGS on.
e2e_tests() {
	need_root e2e || return
	RECORDER_ATTACH_FLAGS= e2e_run_all "e2e batch" 0
	RECORDER_ATTACH_FLAGS=--per-event e2e_run_all "e2e per-event" 0
}

# The unit tests and ASAN_E2E, built with -fsanitize=address,undefined.
asan_tests() {
	local t found=0
	for t in build/asan/tests/unit/test_*; do
		[ -x "$t" ] || continue
		found=1
		case "$(basename "$t")" in *"$filter"*) ;; *) continue ;; esac
		local log sandir rc
		log=$(mktemp)
		sandir=$(mktemp -d)
		(san_env "$sandir"; exec "$t") >"$log" 2>&1
		rc=$?
		[ $rc -ne 0 ] && cat "$log"
		san_reports "$sandir" || rc=1
		rm -rf "$log" "$sandir"
		record "asan unit: $(basename "$t")" $rc
	done
	[ $found -eq 1 ] || record "asan: build/asan is not built (make asan)" 1
	if [ ! -x build/asan/recorder-attach ] || [ ! -x build/asan/recorder-tail ]; then
		record "asan: build/asan/recorder-attach and recorder-tail are not built (make asan)" 1
		return
	fi
	need_root "asan e2e" || return
	RECORDER_BIN=build/asan e2e_run_all "asan e2e" 1 "${ASAN_E2E[@]}"
}

fuzz_tests() {
	local t secs=${FUZZ_SECONDS:-10}
	for t in "${FUZZ_TARGETS[@]}"; do
		case "$t" in *"$filter"*) ;; *) continue ;; esac
		./tests/fuzz/run.sh "$t" "$secs"
		record "fuzz: $t (${secs}s)" $?
	done
}

format_check() {
	# The tree as .clang-format lays it out (kernel style): `make format` fixes it.
	local log
	log=$(mktemp)
	make --no-print-directory format-check >"$log" 2>&1
	local rc=$?
	[ $rc -ne 0 ] && head -40 "$log" | sed 's/^/    /'
	rm -f "$log"
	record "format: clang-format --dry-run (make format fixes it)" $rc
}

readme_excerpts() {
	# The code excerpts and output samples of the README and the guide (docs/guide/: the
	# Rust and event-loop pages) match their files.
	local log
	log=$(mktemp)
	python3 tests/readme_excerpts.py README.md docs/guide/*.md >"$log" 2>&1
	local rc=$?
	[ $rc -ne 0 ] && sed 's/^/    /' "$log"
	rm -f "$log"
	record "docs: README and guide excerpts and output samples match their files (tests/readme_excerpts.py)" $rc
}

layers_check() {
	# The layout's rules (docs/ARCHITECTURE.md): folders include only downwards, no file
	# over 900 lines, no folder over 12 files.
	local log
	log=$(mktemp)
	python3 tools/check-layers.py >"$log" 2>&1
	local rc=$?
	[ $rc -ne 0 ] && sed 's/^/    /' "$log"
	rm -f "$log"
	record "layout: folders include only downwards, files and folders within size (tools/check-layers.py)" $rc
}

golden_tests() {
	# Every output format, byte for byte, from the black boxes in tests/golden/.
	local line
	while IFS= read -r line; do
		case "$line" in
		"PASS golden: "*) record "${line#PASS }" 0 ;;
		"FAIL golden: "*) record "${line#FAIL }" 1 ;;
		*) echo "$line" ;;
		esac
	done < <(./tests/golden/check.sh)
}

browser_tests() {
	# The chrome backend's trace of tests/unit/test_chrome.c's events and spans in
	# speedscope in headless Chromium: its slices drawn, and none seen for an empty or
	# a broken trace (tests/chrome/browser.sh).
	# And a real black box with spans (tests/golden/dumps/spans.json) as the
	# recorder-tail --format chrome of today draws it, and one with kernel time
	# (tests/golden/dumps/sched.json: its off-CPU slices inside its spans).
	# And the snapshot of a hung request (tests/golden/dumps/hung_get.json, issue
	# 35): its lookup, open for a second, drawn up to the snapshot's time.
	local line trace=build/chrome-spans.json box=build/chrome-blackbox.json sched=build/chrome-sched.json
	local hung=build/chrome-hung.json
	rm -f "$trace" "$box" "$sched" "$hung"
	RECORDER_CHROME_OUT=$trace build/tests/unit/test_chrome >/dev/null 2>&1
	[ -s "$trace" ] || { record "browser: build/tests/unit/test_chrome wrote no $trace" 1; return; }
	build/recorder-tail --file tests/golden/dumps/spans.json --format chrome >"$box" 2>&1 ||
		{ record "browser: recorder-tail --format chrome of the spans black box failed" 1; return; }
	build/recorder-tail --file tests/golden/dumps/sched.json --format chrome >"$sched" 2>&1 ||
		{ record "browser: recorder-tail --format chrome of the sched black box failed" 1; return; }
	build/recorder-tail --file tests/golden/dumps/hung_get.json --format chrome >"$hung" 2>&1 ||
		{ record "browser: recorder-tail --format chrome of the hung_get snapshot failed" 1; return; }
	while IFS= read -r line; do
		case "$line" in
		"PASS browser: "*) record "${line#PASS }" 0 ;;
		"FAIL browser: "*) record "${line#FAIL }" 1 ;;
		*) echo "$line" ;;
		esac
	done < <(./tests/chrome/browser.sh --drawn "$trace" --drawn "$box" --drawn "$sched" --wide "$hung" \
		--none tests/chrome/traces/empty.json --none tests/chrome/traces/broken.json)
}

bench_smoke() {
	# A few seconds of make bench, so that the harness cannot rot unnoticed. It
	# fails only if the harness breaks, never because of the numbers.
	local log
	log=$(mktemp)
	./tools/bench/run.sh --smoke >"$log" 2>&1
	local rc=$?
	[ $rc -ne 0 ] && sed 's/^/    /' "$log"
	rm -f "$log"
	record "bench: smoke" $rc
}

if [ "$mode" = all ] || [ "$mode" = unit ]; then
	header_checks
	format_check
	layers_check
	readme_excerpts
	unit_tests
	rust_unit_tests
	golden_tests
fi
if [ "$mode" = all ] || [ "$mode" = e2e ]; then
	e2e_tests
	[ "$(id -u)" -eq 0 ] && [ -z "$filter" ] && bench_smoke
fi
[ "$mode" = all ] || [ "$mode" = browser ] && browser_tests
[ "$mode" = all ] || [ "$mode" = asan ] && asan_tests
[ "$mode" = all ] || [ "$mode" = fuzz ] && fuzz_tests

echo
echo "the slowest checks (seconds; $SECONDS in all):"
printf '%s\n' "${timings[@]}" | sort -rn | head -12 | sed 's/^/  /'
if [ "$failed" -ne 0 ]; then
	echo "failed tests:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
