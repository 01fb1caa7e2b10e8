#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs one libFuzzer harness (make fuzzers builds them) for SECONDS, from its seed
# corpus (tests/fuzz/corpus/TARGET, read only) and what earlier runs found
# (build/fuzz/corpus/TARGET). Any crash, leak, sanitizer report, broken
# property, timeout or out-of-memory fails it: the report is printed with the
# path of the input that caused it and the command that replays it.
# Usage: tests/fuzz/run.sh TARGET SECONDS
set -u
cd "$(dirname "$0")/../.." || exit 1

t=$1
secs=$2
bin=build/fuzz/fuzz_$t
seeds=tests/fuzz/corpus/$t
work=build/fuzz/corpus/$t
crashes=build/fuzz/crashes/$t

if [ ! -x "$bin" ]; then
	echo "$bin is not built (make fuzzers)"
	exit 1
fi
if [ -z "$(ls -A "$seeds" 2>/dev/null)" ]; then
	echo "no seed corpus in $seeds"
	exit 1
fi
case "$t" in
event) max_len=1024 ;;		# REC_EVENT_MAX is 888
callsite) max_len=4096 ;;	# REC_CALLSITE_MAX is 2048
control) max_len=4096 ;;		# a request is 3592 bytes (sizeof(struct rec_request))
dump) max_len=65536 ;;
batch) max_len=8192 ;;		# a REC_RT_BATCH record is at most 32 + 8128
*) max_len=4096 ;;
esac
opts=(-max_total_time="$secs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048
	-artifact_prefix="$crashes/" -print_final_stats=1)
[ -f "tests/fuzz/$t.dict" ] && opts+=(-dict="tests/fuzz/$t.dict")

mkdir -p "$work" "$crashes"
log=$(mktemp)
# The harnesses want sanitizer reports on stderr, and a leak is a failure.
env -u ASAN_OPTIONS -u UBSAN_OPTIONS "$bin" "${opts[@]}" "$work" "$seeds" >"$log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	grep -vE '^#[0-9]+|^(INFO|MS|Done|stat::)' "$log" | tail -80 | sed 's/^/    /'
	repro=$(sed -nE 's/.*Test unit written to (.*)$/\1/p' "$log" | tail -1)
	if [ -n "$repro" ]; then
		echo "    reproducer: $repro"
		echo "    replay it: $bin $repro"
	else
		echo "    $bin exited with status $rc without saving an input; log above"
	fi
else
	awk '$2 == "DONE" { cov = $4; corp = $8 } $1 == "Done" { runs = $2; secs = $5 }
		END { printf "    %s runs in %s s, coverage %s, corpus %s\n", runs, secs, cov, corp }' "$log"
fi
rm -f "$log"
exit $rc
