#!/bin/bash
# SPDX-License-Identifier: MIT
# Golden tests of every output format: for each black box in tests/golden/dumps/,
# `recorder-tail --file` in each format must print exactly the bytes of
# tests/golden/expected/DUMP/FORMAT. TZ is UTC, so that glog's local times are
# the same everywhere. The dumps themselves pin the dump writer: each is read
# and written back byte for byte by tests/unit/test_dump_golden.c.
#   tests/golden/check.sh            compare; prints "PASS golden: DUMP FORMAT" or FAIL and a diff
#   tests/golden/check.sh --update   rewrite the expected files from today's output
set -u
cd "$(dirname "$0")/../.."
BIN=${RECORDER_BIN:-build}
export TZ=UTC

# FORMAT name and the options that make it.
FORMATS=(
	"tail|"
	"tail-json|--json"
	"tail-n2|-n 2"
	"list|--list"
	"list-json|--list --json"
	"stacks|--stacks"
	"stacks-json|--stacks --json"
	"stats|--stats"
	"stats-json|--stats --json"
	"stats-v|--stats -v"
	"tail-chrome|--format chrome"
)

update=0
[ "${1:-}" = --update ] && update=1
failed=0
for dump in tests/golden/dumps/*.json; do
	name=$(basename "$dump" .json)
	mkdir -p "tests/golden/expected/$name"
	for f in "${FORMATS[@]}"; do
		fmt=${f%%|*}
		opts=${f#*|}
		want=tests/golden/expected/$name/$fmt
		# shellcheck disable=SC2086
		got=$("$BIN/recorder-tail" --file "$dump" $opts 2>&1; echo "exit $?")
		if [ $update = 1 ]; then
			printf '%s\n' "$got" >"$want"
			continue
		fi
		if [ "$got" = "$(cat "$want" 2>/dev/null)" ] && [ -f "$want" ]; then
			echo "PASS golden: $name $fmt"
		else
			echo "FAIL golden: $name $fmt"
			diff -u "$want" <(printf '%s\n' "$got") | head -40 | sed 's/^/    /'
			failed=$((failed + 1))
		fi
	done
done
[ $update = 1 ] && echo "golden: expected files rewritten; review them with git diff"
[ $failed -eq 0 ]
