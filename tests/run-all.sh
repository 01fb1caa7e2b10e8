#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs every test: the header compile checks, the cmocka unit tests, and the
# end-to-end tests that load BPF for real (root). Ends with "N passed, M failed".
# Usage: tests/run-all.sh [--unit | --e2e] [TEST_NAME_SUBSTRING]
set -u
cd "$(dirname "$0")/.."

mode=all
case "${1:-}" in
--unit) mode=unit; shift ;;
--e2e) mode=e2e; shift ;;
esac
filter="${1:-}"

passed=0
failed=0
failures=()

record() { # name rc
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

e2e_tests() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "FAIL e2e: the end-to-end tests load BPF programs and need root (run: sudo make test)"
		failed=$((failed + 1))
		failures+=("e2e: not root")
		return
	fi
	# shellcheck source=tests/e2e/lib.sh
	. tests/e2e/lib.sh
	for f in tests/e2e/test_*.sh; do
		# shellcheck disable=SC1090
		. "$f"
	done
	for t in $(declare -F | awk '{print $3}' | grep '^test_'); do
		case "$t" in *"$filter"*) ;; *) continue ;; esac
		local log
		log=$(mktemp)
		(e2e_run "$t") >"$log" 2>&1
		local rc=$?
		[ $rc -ne 0 ] && sed 's/^/    /' "$log"
		rm -f "$log"
		record "e2e: ${t#test_}" $rc
	done
}

if [ "$mode" != e2e ]; then
	header_checks
	unit_tests
fi
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

if [ "$mode" != unit ]; then
	e2e_tests
	[ "$(id -u)" -eq 0 ] && [ -z "$filter" ] && bench_smoke
fi

echo
if [ "$failed" -ne 0 ]; then
	echo "failed tests:"
	printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
