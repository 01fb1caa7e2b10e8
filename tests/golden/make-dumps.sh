#!/bin/bash
# SPDX-License-Identifier: MIT
# Regenerates the black boxes of tests/golden/dumps/ from real runs (root, after
# `make`): real instrumented processes, the real recorder-attach, each dump
# asked for with `recorder-tail --dump` or written when the process dies. Run it
# only when the dump format changes on purpose; then `tests/golden/check.sh
# --update` rewrites the expected outputs, and the diff of both is the review.
#   tests/golden/make-dumps.sh [NAME...]   only the dumps NAME (all if none): a new
#                                          dump is added without rewriting the others
set -eu
cd "$(dirname "$0")/../.."
B=build
OUT=tests/golden/dumps
T=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$T"' EXIT

wait_line() { # FILE REGEX
	for _ in $(seq 500); do grep -qE "$2" "$1" 2>/dev/null && return 0; sleep 0.02; done
	echo "make-dumps: timed out waiting for /$2/ in $1" >&2
	cat "$1" >&2
	return 1
}

ONLY=("$@")

# selected NAME: whether NAME is among the dumps asked for (all if none was).
selected() {
	local n
	[ ${#ONLY[@]} -eq 0 ] && return 0
	for n in "${ONLY[@]}"; do
		[ "$n" = "$1" ] && return 0
	done
	return 1
}

# [ATTACH_ARGS=...] live NAME CMD...: run CMD until "ready", attach (with
# ATTACH_ARGS), then write its black box now.
live() {
	local name=$1 pid apid
	shift
	selected "$name" || return 0
	"$@" >"$T/$name.out" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	wait_line "$T/$name.out" '^pid '
	# shellcheck disable=SC2086
	$B/recorder-attach -p "$pid" ${ATTACH_ARGS:-} --dump-dir "$T/$name" >"$T/$name.attach" 2>&1 &
	apid=$!
	PIDS+=("$apid")
	wait_line "$T/$name.out" '^ready'
	cp "$($B/recorder-tail -p "$pid" --dump)" "$OUT/$name.json"
	kill -TERM "$pid" "$apid" 2>/dev/null || true
	wait "$pid" "$apid" 2>/dev/null || true
}

# dead NAME CMD...: attach before it runs, and keep the black box it dies with.
dead() {
	local name=$1 pid apid
	shift
	selected "$name" || return 0
	"$@" >"$T/$name.out" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	wait_line "$T/$name.out" 'pid [0-9]+'
	$B/recorder-attach -p "$pid" --dump-dir "$T/$name" >"$T/$name.attach" 2>&1 &
	apid=$!
	PIDS+=("$apid")
	wait_line "$T/$name.attach" "black box of pid $pid written to "
	cp "$(sed -n "s/^recorder-attach: black box of pid $pid written to //p" "$T/$name.attach")" \
		"$OUT/$name.json"
	kill -TERM "$apid" 2>/dev/null || true
	wait "$apid" 2>/dev/null || true
}

mkdir -p "$OUT"
live all_fields $B/tests/targets/scenario all_fields
live hostile_text $B/tests/targets/scenario hostile_text
live copied_strings $B/tests/targets/scenario copied_strings
live unbalanced $B/tests/targets/scenario unbalanced
live retired $B/tests/targets/scenario retired
live recorders $B/tests/targets/scenario recorders
live invalid $B/tests/targets/limits invalid
live forgotten $B/tests/targets/limits retire 70
live spans $B/tests/targets/scenario spans
# Issue 24: spans open since before the attach; a cap the operator raised over the program's.
live mid_span $B/tests/targets/scenario attach_mid_span
ATTACH_ARGS="--min-cap 8" live min_cap $B/tests/targets/scenario last_n_entries
dead killed $B/workload --wait-attach --threads 2 --recordings 2 --events 30 --cap 10 \
	--depth 2 --fields 8 --die kill
dead segv $B/workload --wait-attach --threads 1 --recordings 1 --events 5 --cap 3 --depth 1 \
	--fields 3 --die segv
# Kernel time per span (--sched): a span that waited 100 ms on a mutex, its dump once done.
if selected sched; then
	$B/tests/targets/sched mutex >"$T/sched.out" 2>&1 &
	PIDS+=("$!")
	wait_line "$T/sched.out" '^pid '
	$B/recorder-attach -p "$!" --sched --dump-dir "$T/sched" >"$T/sched.attach" 2>&1 &
	PIDS+=("$!")
	wait_line "$T/sched.out" '^done'
	cp "$($B/recorder-tail -p "${PIDS[-2]}" --dump)" "$OUT/sched.json"
	kill -TERM "${PIDS[-2]}" "${PIDS[-1]}" 2>/dev/null || true
fi
# Issue 35, item 5: the snapshot of a hung get, taken when its command and lookup spans
# had been open for a second, with the set before it (--trigger-scope process).
if selected hung_get; then
	$B/tests/targets/incident hung-get >"$T/hung_get.out" 2>&1 &
	PIDS+=("$!")
	wait_line "$T/hung_get.out" '^pid '
	$B/recorder-attach -p "$!" --trigger 'span:lookup>1s' --trigger-scope process \
		--trigger-after 0 --dump-dir "$T/hung_get" >"$T/hung_get.attach" 2>&1 &
	PIDS+=("$!")
	wait_line "$T/hung_get.attach" 'snapshot written to '
	cp "$(sed -n 's/^recorder-attach: trigger .* snapshot written to //p' "$T/hung_get.attach" |
		head -1)" "$OUT/hung_get.json"
	kill -TERM "${PIDS[-2]}" "${PIDS[-1]}" 2>/dev/null || true
fi
# The dumps of triggers, from two of those: a snapshot of one recording, a black box naming one.
if selected snapshot || selected killed_triggered; then
	$B/tests/golden/mksnapshots "$OUT"
fi
echo "make-dumps: wrote $(ls "$OUT" | wc -l) dumps into $OUT"
