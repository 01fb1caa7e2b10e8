#!/bin/bash
# SPDX-License-Identifier: MIT
# Golden tests of every output format: for each black box in tests/golden/dumps/,
# `recorder-tail --file` in each format must print exactly the bytes of
# tests/golden/expected/DUMP/FORMAT. TZ is UTC, so that glog's local times are
# the same everywhere. The dumps themselves pin the dump writer: each is read
# and written back byte for byte by tests/unit/test_dump_golden.c.
#   tests/golden/check.sh            compare; prints "PASS golden: DUMP FORMAT" or FAIL and a diff
#   tests/golden/check.sh --update   rewrite the expected files from today's output
# recorder-tail --triggers (a live process's rules and signatures) is pinned by
# tests/unit/test_trigger_output.c against tests/golden/expected/triggers/.
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
	"tail-spans|--spans"
	"tail-spans-json|--spans --json"
	"list-spans|--list --spans"
	"list-spans-json|--list --spans --json"
	"tail-chrome|--format chrome"
)

update=0
[ "${1:-}" = --update ] && update=1
failed=0
# A version 1 dump (tests/golden/dumps-v1/) must read as its version 2 twin does.
for dump in tests/golden/dumps/*.json tests/golden/dumps-v1/*.json; do
	name=$(basename "$dump" .json)
	label=$name
	if [ "${dump#tests/golden/dumps-v1/}" != "$dump" ]; then
		[ $update = 1 ] && continue
		label="$name (version 1)"
	fi
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
			echo "PASS golden: $label $fmt"
		else
			echo "FAIL golden: $label $fmt"
			diff -u "$want" <(printf '%s\n' "$got") | head -40 | sed 's/^/    /'
			failed=$((failed + 1))
		fi
	done
done
# The Chrome traces pass tests/chrome/check_trace.py: they nest, name every thread,
# and hold the events and spans of the JSON tail with --spans; the synthetic spans of tests/unit/test_chrome.c too.
# A dump's spans still open end at its "dumped_at" (a snapshot's time, a black box's death).
if [ $update = 0 ]; then
	for dump in tests/golden/dumps/*.json; do
		name=$(basename "$dump" .json)
		until=()
		if grep -q '"open":true' "tests/golden/expected/$name/tail-chrome"; then
			until=(--open-until "$(python3 -c 'import datetime, json, sys
t = json.load(open(sys.argv[1]))["dumped_at"]
d = datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
print("%d.000" % (int(d.timestamp()) * 1000000 + d.microsecond))' "$dump")")
		fi
		if out=$(tests/chrome/check_trace.py <(sed '$d' "tests/golden/expected/$name/tail-chrome") \
			--jsonl <(sed '$d' "tests/golden/expected/$name/tail-spans-json") "${until[@]}" 2>&1); then
			echo "PASS golden: $name tail-chrome check_trace"
		else
			echo "FAIL golden: $name tail-chrome check_trace"
			printf '%s\n' "$out" | sed 's/^/    /'
			failed=$((failed + 1))
		fi
	done
	if out=$(tests/chrome/check_trace.py tests/golden/chrome/spans.json --events 7 --spans 11 \
		--open-until 1764820000013000.123 2>&1); then
		echo "PASS golden: chrome/spans.json check_trace"
	else
		echo "FAIL golden: chrome/spans.json check_trace"
		printf '%s\n' "$out" | sed 's/^/    /'
		failed=$((failed + 1))
	fi
fi
[ $update = 1 ] && echo "golden: expected files rewritten; review them with git diff"
[ $failed -eq 0 ]
