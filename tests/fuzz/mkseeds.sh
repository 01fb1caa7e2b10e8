#!/bin/bash
# SPDX-License-Identifier: MIT
# Regenerates the seed corpora in tests/fuzz/corpus from real runs: small dumps
# written by the real recorder-attach for real instrumented targets, the event
# records and callsite blobs those dumps hold (build/fuzz/mkseeds), plus dumps
# at the format's limits, hand-made event records as the BPF side writes them,
# control requests, and batch records (tests/fuzz/batch_seeds.py). Files it
# does not write (reproducers of findings) stay.
# Root (it loads BPF). Run after make all build/fuzz/mkseeds; review and commit the
# result.
set -eu
cd "$(dirname "$0")/../.."

B=build
OUT=tests/fuzz/corpus
T=$(mktemp -d /tmp/recorder-seeds.XXXXXX)
PIDS=()
DUMPS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT

# wait_for FILE REGEX: until a line of FILE matches (10 s at most).
wait_for() {
	local i
	for ((i = 0; i < 500; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.02
	done
	echo "mkseeds: timed out waiting for /$2/ in $1" >&2
	return 1
}

# run NAME LIVE CMD...: runs the target CMD under recorder-attach and saves its dump as
# NAME.json: asked for while it runs (LIVE=live, once it printed "ready"), else the
# black box written when it ends.
run() {
	local name=$1 live=$2 pid dump
	shift 2
	"$@" >"$T/$name.out" 2>&1 &
	PIDS+=($!)
	wait_for "$T/$name.out" '^([a-z-]+: )?pid [0-9]+'
	pid=$(sed -nE 's/^([a-z-]+: )?pid ([0-9]+).*/\2/p' "$T/$name.out" | head -1)
	$B/recorder-attach -p "$pid" --dump-dir "$T/dumps" >"$T/$name.attach" 2>&1 &
	PIDS+=($!)
	if [ "$live" = live ]; then
		wait_for "$T/$name.out" '^ready'
		dump=$($B/recorder-tail -p "$pid" --dump)
		kill -TERM "$pid"
	else
		wait_for "$T/$name.attach" "black box of pid $pid written to "
		dump=$(sed -n "s/^recorder-attach: black box of pid $pid written to //p" \
			"$T/$name.attach")
	fi
	cp "$dump" "$OUT/dump/$name.json"
	DUMPS+=("$OUT/dump/$name.json")
}

mkdir -p "$OUT"/{event,callsite,dump,control}
S=$B/tests/targets/scenario
run all_fields live $S all_fields
run recorders live $S recorders
run retired live $S retired
run unbalanced live $S unbalanced
run literal_then_kill dead $S literal_then_kill
run workload_kill dead $B/workload --wait-attach --threads 2 --recordings 2 --events 6 \
	--cap 4 --depth 2 --fields 8 --die kill
run workload_exit dead $B/workload --wait-attach --recordings 1 --events 3 --cap 2 --fields 3
$B/fuzz/mkseeds "$OUT" "${DUMPS[@]}"
python3 tests/fuzz/batch_seeds.py "$OUT/batch"
echo "mkseeds: $(find "$OUT" -type f | wc -l) seeds in $OUT"
