#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Prototypes of the fast path (issue 12), measured side by side: the per-event
# cost in the target of each design, in interleaved rounds. Root; run after
# `make` (it needs build/vmlinux.h). Prints one line per configuration with the
# median ns per event over ROUNDS rounds (and min - max), and the ratio to the
# in-process stamp floor. tools/bench/ANALYSIS.md says what they showed.
#
#   tools/bench/proto/run.sh [ROUNDS [ITERS]]
set -eu
cd "$(dirname "$0")/../../.."
ROUNDS=${1:-5}
ITERS=${2:-2000000}
OUT=build/bench/proto
mkdir -p "$OUT"
[ -f build/vmlinux.h ] || { echo "proto: build/vmlinux.h is missing: run make first" >&2; exit 1; }
BPF_CFLAGS="-g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Ibuild -I/usr/include/x86_64-linux-gnu"
clang $BPF_CFLAGS -c tools/bench/proto/proto.bpf.c -o "$OUT/proto.bpf.o"
bpftool gen skeleton "$OUT/proto.bpf.o" name proto >"$OUT/proto.skel.h"
cc -g -O2 -Wall -Wextra -Werror tools/bench/proto/proto.c -o "$OUT/proto"
cc -g -O2 -Wall -Wextra -Werror -I"$OUT" tools/bench/proto/loader.c -lbpf -lelf -lz -o "$OUT/loader"

# one CONFIG ARGS...: runs the target (and its loader) once; prints ns per event.
one() {
	local cfg=$1 tp lp t l
	shift
	t=$OUT/$cfg.t
	l=$OUT/$cfg.l
	"$OUT/proto" "$@" "$ITERS" >"$t" 2>&1 &
	tp=$!
	for _ in $(seq 200); do grep -q '^pid' "$t" && break; sleep 0.01; done
	case $cfg in
	batch*)
		"$OUT/loader" bpf "$tp" "$PWD/$OUT/proto" "${cfg#*-}" walk >"$l" 2>&1 &
		lp=$!
		;;
	copy*)
		"$OUT/loader" bpf "$tp" "$PWD/$OUT/proto" reserve copy >"$l" 2>&1 &
		lp=$!
		;;
	noop*)
		"$OUT/loader" bpf "$tp" "$PWD/$OUT/proto" reserve noop >"$l" 2>&1 &
		lp=$!
		;;
	memfd*)
		for _ in $(seq 200); do grep -q '^memfd' "$t" && break; sleep 0.01; done
		"$OUT/loader" memfd "$tp" $(awk '/^memfd/{print $2, $3}' "$t") >"$l" 2>&1 &
		lp=$!
		;;
	*) lp= ;;
	esac
	if [ -n "$lp" ]; then
		for _ in $(seq 500); do grep -qs '^ready' "$l" && break; sleep 0.01; done
	fi
	kill -USR1 "$tp"
	wait "$tp"
	[ -n "$lp" ] && wait "$lp"
	awk '/^ns_per_event/{print $2}' "$t"
	[ -n "$lp" ] && grep -v '^ready' "$l" >>"$OUT/loaders.log"
	return 0
}

CONFIGS=(
	"stamp-rdtsc stamp rdtsc"
	"stamp-clock stamp clock"
	"batch1k-reserve batch 1024"
	"batch4k-reserve batch 4096"
	"batch8k-reserve batch 8192"
	"batch4k-output batch 4096"
	"copy4k batch 4096"
	"copy8k batch 8192"
	"noop4k batch 4096"
	"noop8k batch 8192"
	"memfd1m memfd 1048576"
)
: >"$OUT/loaders.log"
: >"$OUT/raw"
for ((r = 1; r <= ROUNDS; r++)); do
	for c in "${CONFIGS[@]}"; do
		# shellcheck disable=SC2086
		echo "${c%% *} $(one $c)" >>"$OUT/raw"
	done
done
python3 - "$OUT/raw" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    runs.setdefault(k, []).append(float(v))
floor = statistics.median(runs["stamp-rdtsc"])
print("%-18s %10s %18s %8s" % ("config", "ns/event", "min - max", "/floor"))
for k, v in runs.items():
    m = statistics.median(v)
    print("%-18s %10.1f %8.1f - %-8.1f %7.2fx" % (k, m, min(v), max(v), m / floor))
PY
echo "(loaders: $OUT/loaders.log)"
