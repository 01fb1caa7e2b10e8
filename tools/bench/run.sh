#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The recorder benchmark suite (root). See docs/BENCHMARKS.md for what it measures.
#
#   tools/bench/run.sh            R rounds (default 5, env ROUNDS); every round runs
#                                 every configuration once, in a fixed order, each as
#                                 its own process (the detached cost's two loops share
#                                 one: bench detached_ab; the two runs of an incident
#                                 trigger pair swap places every other round). Writes
#                                 build/bench/results.json, build/bench/raw.jsonl and
#                                 docs/BENCHMARKS.md.
#   tools/bench/run.sh --report   docs/BENCHMARKS.md again from the last full run's
#                                 raw rows (build/bench), as report.py was called then:
#                                 for an edit of tools/bench/ANALYSIS.md or report.py.
#   tools/bench/run.sh --smoke    1 round, tiny counts, quick peers only, results in a
#                                 temp dir. Fails only if the harness itself breaks: a
#                                 configuration that ran without a value (never because
#                                 of a number or a target).
#   CONFIGS='fast_event ring_touch*' tools/bench/run.sh
#                                 only those configurations (their names in raw.jsonl; a
#                                 glob matches several), ROUNDS rounds, into
#                                 build/bench-only (its BENCHMARKS.md there): for work on
#                                 a few. docs/BENCHMARKS.md and the full run's rows in
#                                 build/bench stay as they are. A key of configurations
#                                 left out is "no result".
#
# The kernel's BPF run-time statistics are on only while the configurations that read
# them run (the batch path's keys): held on by a process of ours (verify.py stats-on,
# BPF_ENABLE_STATS), which the kernel counts apart from kernel.bpf_stats_enabled (left
# alone: another program may use it meanwhile) and whose end, however it ends, turns
# them off. Where the machine offers kvm-clock and KVMCLOCK is not 0, the clocksource
# is kvm-clock while a round's *_kvmclock configurations run, and is always put back
# (right after them, and at exit, on INT and TERM too).
#
# Missing peers (bpftrace, sys/sdt.h, LTTng) are installed with apt-get in a full run;
# if that fails, or in --smoke, they are reported as skipped with the reason.
#
# A number counts only if the work it was timed on was done. Every configuration a
# round runs ends in exactly one row of raw.jsonl: its value, or "failed" with why.
# A recorder-attached run checks (tools/bench/verify.py) that the recorder counted
# exactly the events the bench loop ran, with nothing dropped and every error counter
# 0; a throughput run, that produced = emitted and produced = kept + dropped for every
# recording (with incident rules: that they fired as they must, and that the dump
# directory holds only the snapshots they saved, within the limiter's allowance); a
# trigger latency run, that exactly one snapshot was announced, for its one error; a
# bpftrace count, that it counted every hit. A failed query is a failed round, never a
# zero. report.py divides only numbers of the same round, and reports a
# target with a missing round as "no result (why)".
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=$ROOT/build

SMOKE=0
[ "${1:-}" = "--smoke" ] && SMOKE=1
CONFIGS=${CONFIGS:-}
# report.py's arguments of the last full run, one a line, for --report.
REPORT_ARGS=$BUILD/bench/report-args
if [ "${1:-}" = "--report" ]; then
	[ -s "$REPORT_ARGS" ] || { echo "bench: no full run to report ($REPORT_ARGS is missing)" >&2; exit 1; }
	mapfile -t ARGS <"$REPORT_ARGS"
	python3 tools/bench/report.py "${ARGS[@]}" --md docs/BENCHMARKS.md || { echo "bench: report.py failed" >&2; exit 1; }
	echo "bench: wrote docs/BENCHMARKS.md from $BUILD/bench/raw.jsonl"
	exit 0
fi

if [ "$SMOKE" = 1 ]; then
	OUT=$(mktemp -d /tmp/recorder-bench-smoke.XXXXXX)
	BIN=$OUT/bin
	ROUNDS=1
	IT_WORK=20000 IT_EVENT=20000 IT_SDT=20000
	# 0.2 s per paced run: long enough for the stalled --follow reader to stall in it.
	TP_EVENTS=100000 SITES=300 RSS_RECS=10 RSS_EVENTS=100
	FAST_TP_EVENTS=100000 STORM_EVENTS=100000 STORM_FLAT_EVENTS=100000 SIG_EVENTS=100000
	SERVER_PAIRS=1 SERVER_REQUESTS=500 RULE_PAIRS=1
	IT_PP=20000
	IT_RUST=20000 RUST_CHUNKS=20
	RING_TOUCH_EVENTS=20000
else
	OUT=$BUILD/bench
	BIN=$BUILD/bench
	if [ -n "$CONFIGS" ]; then
		OUT=$BUILD/bench-only
		BIN=$OUT/bin
	fi
	ROUNDS=${ROUNDS:-5}
	IT_WORK=${IT_WORK:-4000000} IT_EVENT=${IT_EVENT:-1000000} IT_SDT=${IT_SDT:-1000000}
	# ~5 s flat out for 2 threads at ~1.3 M events/s on this machine (per-event path),
	# and at ~14 M events/s emitted on the batch path (FAST_TP_EVENTS): both runs last
	# the issue's 5 s, so that what the ring holds at the end weighs the same in both.
	TP_EVENTS=${TP_EVENTS:-3500000} SITES=5000 RSS_RECS=100 RSS_EVENTS=1000
	FAST_TP_EVENTS=${FAST_TP_EVENTS:-35000000}
	# The error storm at 1 M events/s (PACED_RATE a thread): 8 s a run, long enough
	# for several snapshots at STORM_COOLDOWN. The same flat out: about 2 – 4 s a run.
	STORM_EVENTS=${STORM_EVENTS:-4000000}
	STORM_FLAT_EVENTS=${STORM_FLAT_EVENTS:-10000000}
	# The storm over 1,000 signatures (sig_throughput*), flat out: the same length.
	SIG_EVENTS=${SIG_EVENTS:-10000000}
	# The server keys: pairs of load segments a round, requests per connection a segment
	# (4 connections: about 0.5 s a segment here). One pair's ratio varies by 3 - 5 %
	# here; the median of 5 a round resolves the 2 % the targets need.
	SERVER_PAIRS=${SERVER_PAIRS:-5} SERVER_REQUESTS=${SERVER_REQUESTS:-10000}
	# Pairs a round of the flat-out run without and with the 4 rules that never fire.
	RULE_PAIRS=${RULE_PAIRS:-3}
	IT_PP=${IT_PP:-500000}
	# rust-bench (rust/bench): iterations of each side of each of its pairs of
	# subscribers, in RUST_CHUNKS pairs of chunks.
	IT_RUST=${IT_RUST:-1000000} RUST_CHUNKS=${RUST_CHUNKS:-200}
fi
WORK_BYTES=${WORK_BYTES:-112}
# The throughput runs: TP_THREADS producers; the paced ones at PACED_RATE events/s per
# thread (2 x 500,000: the 1 M events/s of the drop target). The clients run adds a
# --follow reader stopped after its first line and IDLE_CLIENTS connections that
# never send a byte.
TP_THREADS=2 PACED_RATE=500000 IDLE_CLIENTS=10
# The recorder-attach flags of each event path. The batch ("fast") path is
# recorder-attach's default: the per-event configurations add --per-event, and the
# fast_* ones FAST_FLAGS (nothing). FAST_PATH=0 leaves the fast_* configurations out.
PER_EVENT_FLAGS=(--per-event)
FAST_FLAGS=()
FAST_PATH=${FAST_PATH:-1}
# What the timed (ns per event) configurations add on either path: nothing (issue 37).
# They run as a user runs recorder-attach, on the default ring (8 MiB). Until issue 37
# they added a 256 MiB ring, room for the whole loop, and paid for the first touch of
# every page of it that the loop wrote (ring_first_touch_ms measures that cost now).
# Accounting stays exact: a dropped event still fails the round, since its batch did
# not take the whole path (no copy into the ring, no consumer), so the loop's ns would
# be of less work. The batch path's loop (1,100,000 events in about 0.1 s) emits about
# as fast as a consumer with a CPU of its own drains; where it has none (another
# program busy on the 2 CPUs) the ring overflows and the round fails, saying what a
# user would be told (see tools/bench/ANALYSIS.md, issue 37).
TIMED_FLAGS=()
# ring_touch (ring_first_touch_ms): the event loop over a fresh default ring, then
# over the same ring warm. Its loop writes RING_TOUCH_EVENTS events of about 80 bytes
# in the ring (a 16 KiB flush a ~200 events): 1.25 rings' worth of 8 MiB, every page.
RING_BYTES=$((8 << 20))
RING_TOUCH_EVENTS=${RING_TOUCH_EVENTS:-$((RING_BYTES / 64))}
# The kvm-clock configurations (issue 37): KVMCLOCK=0 leaves them out.
KVMCLOCK=${KVMCLOCK:-1}
CS_DIR=/sys/devices/system/clocksource/clocksource0
# Incident triggers (issue 23). The rules of fast_throughput_rules, which never fire on
# the workload's INFO events: one of each kind (level, span, event with a condition,
# code). The storm runs (every event an error) fire on every event: the one the issue
# names at 1 M events/s (storm, storm_trigger), with a cooldown of STORM_COOLDOWN
# rather than the default 10 s so that a run writes a snapshot every second while the
# events come, and the same flat out (storm_flat*, default limiter: a figure, no
# target). verify.py throughput holds the snapshots written to what the limiter
# allows (the --trigger-cooldown it is given, --trigger-cap 60). The
# latency runs: `incident requests LAT_REQUESTS LAT_BAD LAT_RATE`, quiet INFO requests
# at LAT_RATE a second, request LAT_BAD logs one error.
NEVER_RULES=(--trigger 'level>=error' --trigger 'span:never*>1h' --trigger "event:'never' status>=500"
	--trigger 'code:never')
LAT_REQUESTS=50 LAT_BAD=25 LAT_RATE=100
# The throughput runs that hold incident rules, and what their rules must do (verify.py
# throughput --fire): never fire, or fire on every event. Each gets a dump directory
# of its own, which must hold only the snapshots the rules saved.
declare -A TP_FIRE=([fast_throughput_rules]=never [fast_throughput_rules_p2]=never [fast_throughput_rules_p3]=never [storm]=never [storm_trigger]=every [storm_flat]=never
	[storm_flat_trigger]=every [sig_throughput_rules]=every)
# Issue 35: an error storm over SIG_SITES callsites, every event REC_ERROR at the next
# one (build/workload-sites --error-sites), flat out on the batch path, without and with
# --trigger 'level>=error' (trigger_signatures_throughput_ratio): SIG_SITES signatures
# that fire on every event, each its own cooldown and cap, the process's cap shared.
SIG_SITES=1000
SIG_RULES=(--trigger 'level>=error' --keep-snapshots 0)
STORM_COOLDOWN=1s
# The scheduler-hook ping-pong (run_pingpong): round trips a run, the CPU both ends are
# pinned to, and the recorder-attach flags that turn the hooks on.
SCHED_FLAGS=(--sched)
PP_CPU=${PP_CPU:-1}
# detached_ab: pairs of chunks per round; each chunk runs IT_WORK / AB_CHUNKS iterations.
AB_CHUNKS=${AB_CHUNKS:-200}
RAW=$OUT/raw.jsonl
LOG=$OUT/log
mkdir -p "$OUT" "$BIN" "$LOG"
: >"$RAW"
SKIPS=$OUT/skipped.jsonl
: >"$SKIPS"
RAN=$OUT/ran.jsonl
: >"$RAN"
: >"$OUT/notes.txt"

die() {
	echo "bench: $*" >&2
	exit 1
}
note() { echo "bench: $*" >&2; echo "$*" | tr '\n' ' ' >>"$OUT/notes.txt"; echo >>"$OUT/notes.txt"; }

want() { # config: whether this run runs it (CONFIGS, globs)
	local c
	[ -z "$CONFIGS" ] && return 0
	for c in $CONFIGS; do
		# shellcheck disable=SC2053 # $c is a glob
		[[ $1 == $c ]] && return 0
	done
	return 1
}

[ "$(id -u)" -eq 0 ] || die "needs root (it loads BPF programs)"
# The report on a made-up run with known answers first: a report that could show a pass
# that did not happen is not worth a run.
python3 tools/bench/report.py --selftest || die "report.py --selftest failed"
for b in recorder-attach recorder-tail workload tests/targets/incident; do
	[ -x "$BUILD/$b" ] || die "$BUILD/$b is missing: run 'make all' first"
done

# ---- process bookkeeping: every process we start is killed by pid on exit ----
# Every background process is started by spawn (below), is a direct child of this
# shell, and is in PIDS until stop has waited for it. The LTTng session daemon, if
# this run started one, is SESSIOND_PID (also our child: started without
# --daemonize, so it is never orphaned and is reaped here, not by init).
PIDS=()
SESSIOND_PID=""
LTTNG_SESSION=""

alive() { # pid: running (not gone, not a zombie waiting to be reaped)
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	case ${s%% *} in Z | X | x | "") return 1 ;; esac
	return 0
}

descendants() { # pid: the pids of its children, grandchildren, ... (by parent pid)
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}

kill_hard() { # pid: SIGKILL it and whatever it started (timeout's bpftrace, ...), reap it
	local d
	d=$(descendants "$1")
	kill -KILL "$1" $d 2>/dev/null
	wait "$1" 2>/dev/null
}

stop_sessiond() { # the session daemon this run started, if any; never one it found running
	[ -n "$SESSIOND_PID" ] || return 0
	kill -TERM "$SESSIOND_PID" 2>/dev/null
	# It stops its consumer daemons and run-as workers itself; give it time to.
	for _ in $(seq 200); do alive "$SESSIOND_PID" || break; sleep 0.05; done
	if alive "$SESSIOND_PID"; then
		note "lttng-sessiond (pid $SESSIOND_PID) ignored SIGTERM for 10 s; killed"
		kill_hard "$SESSIOND_PID"
	fi
	wait "$SESSIOND_PID" 2>/dev/null
	SESSIOND_PID=""
}

cleanup() {
	local p
	trap '' INT TERM HUP # a second ^C must not cut the cleanup short
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
		kill -CONT "$p" 2>/dev/null # a stopped one (the stalled reader) gets the TERM
	done
	for p in "${PIDS[@]}"; do
		# give each a moment, then SIGKILL (with what it started)
		for _ in 1 2 3 4 5 6 7 8 9 10; do alive "$p" || break; sleep 0.05; done
		alive "$p" && kill_hard "$p"
		wait "$p" 2>/dev/null
	done
	PIDS=()
	if [ -n "$LTTNG_SESSION" ]; then
		timeout 20 lttng --no-sessiond destroy "$LTTNG_SESSION" >/dev/null 2>&1
		LTTNG_SESSION=""
	fi
	STATS_PID=""
	stop_sessiond
	clocksource_restore
	trap 'exit 130' INT TERM HUP
}

# ---- BPF statistics on for a while; the clocksource changed for a while, put back ----
# STATS_PID: the process that holds the statistics on (in PIDS: cleanup ends it), ""
# when they are not ours to read. CS_OLD: the clocksource to restore while another is
# selected, "" otherwise; cleanup (at exit, on INT and TERM) restores it.
STATS_PID=""
CS_OLD=""
CS_START=$(cat "$CS_DIR/current_clocksource" 2>/dev/null)

bpf_stats_on() { # the statistics on until bpf_stats_off; sets WHY on failure
	local f=$LOG/stats-on.r$ROUND
	spawn "$f" python3 tools/bench/verify.py stats-on
	STATS_PID=$LP
	if ! wait_for "$f" '^stats-on: ready$' 10 "$STATS_PID"; then
		WHY="BPF statistics not turned on: $(head -c 300 "$f")"
		bpf_stats_off
		return 1
	fi
}

bpf_stats_still_on() { # whether they stayed on since bpf_stats_on (sets WHY if not)
	[ -n "$STATS_PID" ] && alive "$STATS_PID" && return 0
	WHY="the process that held the BPF statistics on ended early: $(head -c 300 "$LOG/stats-on.r$ROUND")"
	return 1
}

bpf_stats_off() {
	[ -n "$STATS_PID" ] || return 0
	stop "$STATS_PID"
	STATS_PID=""
}

clocksource_set() { # NAME: select it until clocksource_restore; sets WHY on failure
	local cur
	cur=$(cat "$CS_DIR/current_clocksource" 2>/dev/null) || { WHY="no $CS_DIR"; return 1; }
	[ -n "$CS_OLD" ] || CS_OLD=$cur
	if ! echo "$1" >"$CS_DIR/current_clocksource" 2>/dev/null ||
		[ "$(cat "$CS_DIR/current_clocksource")" != "$1" ]; then
		WHY="cannot select the clocksource $1 (current: $(cat "$CS_DIR/current_clocksource" 2>/dev/null))"
		clocksource_restore
		return 1
	fi
}

clocksource_restore() {
	[ -n "$CS_OLD" ] || return 0
	echo "$CS_OLD" >"$CS_DIR/current_clocksource" 2>/dev/null
	if [ "$(cat "$CS_DIR/current_clocksource" 2>/dev/null)" != "$CS_OLD" ]; then
		echo "bench: could not restore the clocksource $CS_OLD: it is $(cat "$CS_DIR/current_clocksource" 2>/dev/null)" >&2
		return 1
	fi
	CS_OLD=""
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

forget() { # pid: drop from PIDS after we waited for it
	local p keep=()
	for p in "${PIDS[@]}"; do [ "$p" != "$1" ] && keep+=("$p"); done
	PIDS=("${keep[@]}")
}

stop() { # pid [signal]: signal, wait (bounded), forget
	local p=$1 sig=${2:-TERM}
	kill -"$sig" "$p" 2>/dev/null
	kill -CONT "$p" 2>/dev/null # a stopped process gets the signal only once continued
	for _ in $(seq 100); do alive "$p" || break; sleep 0.05; done
	alive "$p" && kill_hard "$p"
	wait "$p" 2>/dev/null
	forget "$p"
}

# spawn OUTFILE CMD...: start CMD in the background, stdout and stderr to OUTFILE;
# LP = its pid (CMD is exec'd, so $! is CMD itself). OUTFILE is emptied here, before
# the fork: a redirection is done by the child, so a file left by an earlier run
# (build/bench/log/*.rN) could otherwise still be read, stale pid and all, before the
# child gets to truncate it.
spawn() {
	: >"$1" || die "cannot write $1"
	"${@:2}" >>"$1" 2>&1 &
	LP=$!
	PIDS+=("$LP")
}

# own_pid FILE NAME PID TIMEOUT_S: wait for the "NAME: pid N" line of the process we
# just started and check N is PID, the pid spawn gave us. Sets WHY and fails otherwise.
own_pid() {
	local n
	if ! wait_for "$1" "^$2: pid [0-9]+\$" "$4" "$3"; then
		WHY="$2 (pid $3) printed no pid line in $4 s: $(head -c 300 "$1")"
		return 1
	fi
	n=$(awk -v w="$2:" '$1 == w && $2 == "pid" { print $3; exit }' "$1")
	if [ "$n" != "$3" ]; then
		WHY="$2: the pid line says $n, but the process started is $3"
		return 1
	fi
}

wait_for() { # file regex timeout_s [pid: give up as soon as it has ended]
	local i n=$(($3 * 100))
	for ((i = 0; i < n; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		if [ -n "${4:-}" ] && ! alive "$4"; then
			grep -qE "$2" "$1" 2>/dev/null
			return
		fi
		sleep 0.01
	done
	return 1
}

now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", a - b }'; }

jstr() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }
jget() { python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get(sys.argv[2], ""))' "$1" "$2" 2>/dev/null; }

# Every configuration a round runs calls begin, then ends in exactly one row: emit (its
# value) or fail (why it has none). A configuration that began and wrote no row is
# reported by report.py as a harness failure, never left out.
begin() { printf '{"round": %d, "config": "%s"}\n' "$ROUND" "$1" >>"$RAN"; }

emit() { # config key value [more json]
	printf '{"round": %d, "config": "%s", "%s": %s%s}\n' "$ROUND" "$1" "$2" "$3" "${4:-}" >>"$RAW"
}

fail() { # config reason [more json]
	printf '{"round": %d, "config": "%s", "failed": %s%s}\n' "$ROUND" "$1" "$(jstr "$2")" "${3:-}" >>"$RAW"
	echo "bench: $1 round $ROUND: FAILED: $2" >&2
}

# verified CONFIG JSON STATUS [JSON]: the row of a run that verify.py checked. STATUS
# 0: JSON (an object) holds the row's values, and the optional second object more;
# 1: it says why in "failed"; anything else: verify.py itself broke.
verified() {
	case $3 in
	0) python3 -c 'import json, sys
o = {"round": int(sys.argv[1]), "config": sys.argv[2]}
o.update(json.loads(sys.argv[3]))
o.update(json.loads(sys.argv[4]))
print(json.dumps(o))' "$ROUND" "$1" "$2" "${4:-"{}"}" >>"$RAW" ||
		fail "$1" "harness: cannot merge the row: $2 ${4:-}" ;;
	1) fail "$1" "$(jget "$2" failed)" ", \"check\": $2" ;;
	*) fail "$1" "harness: verify.py failed (status $3): $(echo "$2" | tail -c 300)" ;;
	esac
}

skip() { # config reason
	grep -q "\"config\": \"$1\"" "$SKIPS" 2>/dev/null && return
	printf '{"config": "%s", "reason": "%s"}\n' "$1" "$(echo "$2" | tr -d '"\\' | tr '\n' ' ')" >>"$SKIPS"
	note "skipped $1: $2"
}

# ---- peers ----
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
ensure_pkgs() { # name pkg...: installs only what's missing; non-zero if still missing
	local name=$1 missing=()
	shift
	for p in "$@"; do have_pkg "$p" || missing+=("$p"); done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$SMOKE" = 1 ]; then
		echo "not installed (${missing[*]}); --smoke installs nothing"
		return 1
	fi
	note "installing ${missing[*]} for $name"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >"$LOG/apt-$name.log" 2>&1; then
		echo "apt-get install ${missing[*]} failed (see $LOG/apt-$name.log)"
		return 1
	fi
}

HAVE_BPFTRACE=1 HAVE_SDT=1 HAVE_LTTNG=1
if ! r=$(ensure_pkgs bpftrace bpftrace) || ! command -v bpftrace >/dev/null; then
	HAVE_BPFTRACE=0
	for c in floor bpftrace_count bpftrace_sdt; do skip $c "bpftrace unavailable: $r"; done
fi
if ! r=$(ensure_pkgs sdt systemtap-sdt-dev); then
	HAVE_SDT=0
	skip bpftrace_sdt "sys/sdt.h unavailable: $r"
fi
if [ "$SMOKE" = 1 ]; then
	HAVE_LTTNG=0
	skip lttng "not run in --smoke (needs a session daemon; too slow for the smoke budget)"
elif ! want lttng && ! want lttng_kvmclock; then
	HAVE_LTTNG=0 # not asked for (CONFIGS): no session daemon
elif ! r=$(ensure_pkgs lttng liblttng-ust-dev lttng-tools); then
	HAVE_LTTNG=0
	skip lttng "LTTng unavailable: $r"
fi

if [ "$FAST_PATH" != 1 ]; then
	for c in fast_event fast_span fast_throughput fast_throughput_rules trigger_latency ring_touch \
		fast_event_kvmclock fast_span_kvmclock ring_touch_kvmclock; do
		skip $c "fast path not built yet"
	done
fi

# ---- build ----
CC=${CC:-cc}
# -falign-loops=64: the hot loops of loop_baseline and loop_detached both start on a
# 64-byte boundary (see bench.c), so detached_ratio does not measure code layout.
CFLAGS_B="-g -O2 -falign-loops=64 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -I$ROOT/include -pthread"
$CC $CFLAGS_B tools/bench/bench.c -o "$BIN/bench" 2>"$LOG/build-bench.log" ||
	die "building bench failed: $(cat "$LOG/build-bench.log")"
# Check it: the target of the backward branch after the first imul (FNV's multiply) of
# each loop function is its hot loop's start. Only a note if it differs or cannot be found.
hot_loops=$(objdump -d --no-show-raw-insn "$BIN/bench" 2>/dev/null | awk '
	/^[0-9a-f]+ <loop_(baseline|detached)>:$/ { fn = $2; st = 0; next }
	/^$/ { fn = "" }
	fn != "" && st == 0 && $2 == "imul" { st = 1; next }
	fn != "" && st == 1 && $2 ~ /^j/ { print fn, $3; st = 2 }')
hl_off=$(echo "$hot_loops" | while read -r fn a; do [ -n "$a" ] && echo "$((16#$a % 64))"; done | sort -u)
if [ "$(echo "$hot_loops" | grep -c .)" != 2 ] || [ "$(echo "$hl_off" | grep -c .)" != 1 ]; then
	note "code layout: the hot loops of loop_baseline and loop_detached could not be shown to" \
		"share their offset in a 64-byte line ($(echo "$hot_loops" | tr '\n' ' ')); detached_ratio may include a layout effect"
fi
if [ "$HAVE_SDT" = 1 ] && ! nm "$BIN/bench" >/dev/null 2>&1; then HAVE_SDT=0; fi
if [ "$HAVE_SDT" = 1 ] && ! readelf -n "$BIN/bench" | grep -q 'Name: hit'; then
	HAVE_SDT=0
	skip bpftrace_sdt "bench was built without a sys/sdt.h probe"
fi
if [ "$HAVE_LTTNG" = 1 ]; then
	if ! $CC -g -O2 -std=gnu11 -D_GNU_SOURCE -Itools/bench tools/bench/bench_lttng.c \
		-o "$BIN/bench_lttng" -llttng-ust -ldl 2>"$LOG/build-lttng.log"; then
		HAVE_LTTNG=0
		skip lttng "building the LTTng peer failed: $(head -c 300 "$LOG/build-lttng.log")"
	fi
fi
tools/bench/gen_sites.sh "$SITES" >"$BIN/sites.c" || die "gen_sites.sh failed"
$CC -O1 -g0 -I"$ROOT/include" "$BIN/sites.c" -o "$BIN/sites" 2>"$LOG/build-sites.log" ||
	die "building the $SITES-site program failed: $(head -c 300 "$LOG/build-sites.log")"
nsites=$(readelf -n "$BIN/sites" | grep -c 'Name: event')
[ "$nsites" -eq "$SITES" ] || die "sites program has $nsites event sites, expected $SITES"

# ---- the Rust bench (issue 27): rust/bench, --release, offline, into build/rust ----
RUST_BENCH=$BUILD/rust/release/rust-bench
HAVE_RUST=1
if ! (cd rust && CARGO_TARGET_DIR=$BUILD/rust cargo build --offline --release -p recorder-bench) \
	>"$LOG/build-rust.log" 2>&1; then
	HAVE_RUST=0
	for c in rust_detached rust_attached; do
		skip $c "building rust/bench failed: $(tail -c 300 "$LOG/build-rust.log")"
	done
fi

# ---- LTTng session daemon ----
# A session daemon that is already running is used and left alone. Otherwise one is
# started here as our own child (not --daemonize: that forks it away to init, which
# in some containers never reaps it) and stop_sessiond ends and reaps it. Every lttng
# command has --no-sessiond, so the client never spawns a daemon of its own.
LTTNG="lttng --no-sessiond"
if [ "$HAVE_LTTNG" = 1 ]; then
	if ! $LTTNG list >/dev/null 2>&1; then
		if pgrep -x lttng-sessiond >/dev/null; then
			HAVE_LTTNG=0
			skip lttng "an lttng-sessiond runs but does not answer 'lttng list' (not ours: left alone)"
		else
			: >"$LOG/sessiond.log"
			lttng-sessiond >>"$LOG/sessiond.log" 2>&1 &
			SESSIOND_PID=$!
			for _ in $(seq 100); do
				alive "$SESSIOND_PID" || break
				$LTTNG list >/dev/null 2>&1 && break
				sleep 0.1
			done
			if ! $LTTNG list >/dev/null 2>&1; then
				HAVE_LTTNG=0
				skip lttng "lttng-sessiond did not come up: $(tail -c 300 "$LOG/sessiond.log")"
				stop_sessiond
			fi
		fi
	fi
fi
if [ "$HAVE_LTTNG" = 1 ]; then
	LTTNG_SESSION=recbench$$
	if ! { $LTTNG create "$LTTNG_SESSION" --snapshot && $LTTNG enable-event -u -s "$LTTNG_SESSION" bench:event &&
		$LTTNG start "$LTTNG_SESSION"; } >"$LOG/lttng-session.log" 2>&1; then
		HAVE_LTTNG=0
		skip lttng "could not set up the snapshot session: $(tail -c 300 "$LOG/lttng-session.log")"
	fi
fi
# The kvm-clock round's LTTng peer is skipped with it, for its reason.
if [ "$HAVE_LTTNG" = 0 ] && grep -q '"config": "lttng"' "$SKIPS"; then
	skip lttng_kvmclock "as lttng: $(python3 -c 'import json, sys
print(next(json.loads(l)["reason"] for l in open(sys.argv[1]) if json.loads(l)["config"] == "lttng"))' "$SKIPS")"
fi

# ---- one configuration = one process ----
start_bench() { # outfile cmd...: starts, sets BP (its pid, checked against its "bench: pid" line)
	spawn "$@"
	BP=$LP
	own_pid "$1" bench "$BP" 5 || { stop "$BP"; return 1; }
}

reap_bench() { # wait (at most 60 s) for the bench process BP to end
	for _ in $(seq 6000); do alive "$BP" || break; sleep 0.01; done
	if alive "$BP"; then
		note "bench (pid $BP) round $ROUND still running after 60 s; killed"
		stop "$BP"
		return
	fi
	wait "$BP" 2>/dev/null
	forget "$BP"
}

# parse_bench OUTFILE: NS (ns per iteration) and EMITTED_EVENTS, EMITTED_SPANS, SDT_HITS
# (how many times the loop, warm-up included, ran each kind of site) from bench's lines.
# Sets WHY and fails if either line is missing. bench ring_touch's NS is its warm runs'
# (their median over its iterations), with no EXCESS.
parse_bench() {
	local l
	NS=$(awk '/^ns_per_iter /{print $2; exit} /^ring_touch /{printf "%.3f\n", $5 / $11; exit}' "$1")
	# What the loop took beyond its steady state (bench_time.h): a one-off cost shows there.
	EXCESS=$(awk '/^ns_per_iter /{print ($8 == "" ? "null" : $8); exit} /^ring_touch /{print "null"; exit}' "$1")
	l=$(grep -m1 '^emitted events ' "$1")
	if [ -z "$NS" ] || [ -z "$l" ]; then
		WHY="no result from bench: $(tr '\n' ' ' <"$1" | head -c 300)"
		return 1
	fi
	set -- $l
	# emitted events E span_pairs S sdt_hits H
	EMITTED_EVENTS=$3 EMITTED_SPANS=$5 SDT_HITS=$7
}

finish_bench() { # outfile: wait for bench BP to end, parse its result (sets WHY on failure)
	reap_bench
	parse_bench "$1"
}

# The detached cost: baseline and detached alternate in one process, in AB_CHUNKS
# pairs of short chunks (bench.c, run_ab). Nothing attaches, hence --no-wait. One row:
# the medians of the chunks' ns per iteration (baseline_ns, detached_ns) and the
# median of the pairs' ratios (ratio, with its quartiles).
run_ab() {
	local f=$LOG/detached_ab.r$ROUND l
	want detached_ab || return 0
	begin detached_ab
	start_bench "$f" "$BIN/bench" detached_ab --no-wait --iters "$IT_WORK" --chunks "$AB_CHUNKS" \
		--work-bytes "$WORK_BYTES" || { fail detached_ab "$WHY"; return; }
	reap_bench
	l=$(grep -m1 '^ab baseline_ns ' "$f")
	if [ -z "$l" ]; then
		fail detached_ab "no result: $(tr '\n' ' ' <"$f" | head -c 300)"
		return
	fi
	set -- $l
	# ab baseline_ns A detached_ns B ratio R ratio_p25 P ratio_p75 Q pairs N chunk_iters C
	emit detached_ab ratio "$7" ", \"baseline_ns\": $3, \"detached_ns\": $5, \"ratio_p25\": $9, \"ratio_p75\": ${11}, \"pairs\": ${13}, \"chunk_iters\": ${15}"
}

# run_attached CONFIG MODE [RECORDER-ATTACH FLAGS...]: bench MODE under recorder-attach
# with those flags. bench --hold stays alive after its loop, and verify.py checks that
# the recorder counted exactly the events the loop ran (see verify.py attached); the
# round's number counts only then. Mode ring_touch runs RING_TOUCH_EVENTS a loop (see
# bench.c) and adds its cold and warm times to the row. With BPF_STATS=1 (the batch
# path's fast_event*), the BPF statistics are on from just before the loop until every
# event is delivered, and the row adds what on_batch and collect_batches ran
# meanwhile (verify.py bpf-stats), or bpf_stats_failed with why: the loop's number
# counts without them.
run_attached() {
	local cfg=$1 mode=$2 f=$LOG/$1.r$ROUND a=$LOG/$1.attach.r$ROUND ap v rc l extra=""
	local sb=$LOG/$1.stats.r$ROUND st="" iters=$IT_EVENT flags dc
	shift 2
	flags="$*"
	want "$cfg" || return 0
	begin "$cfg"
	[ "$mode" = ring_touch ] && iters=$RING_TOUCH_EVENTS
	start_bench "$f" "$BIN/bench" "$mode" --iters "$iters" --hold || { fail "$cfg" "$WHY"; return; }
	spawn "$a" "$BUILD/recorder-attach" -p "$BP" --no-dump "$@"
	ap=$LP
	if ! wait_for "$a" "^attached to $BP:" 20 "$ap"; then
		fail "$cfg" "recorder-attach $* did not attach: $(head -c 300 "$a")"
		stop "$ap"
		stop "$BP"
		return
	fi
	if [ "${BPF_STATS:-0}" = 1 ]; then
		if ! bpf_stats_on; then
			st="\"bpf_stats_failed\": $(jstr "$WHY")"
		elif ! python3 tools/bench/verify.py bpf-stats --pid "$ap" >"$sb" 2>>"$LOG/verify.err"; then
			st="\"bpf_stats_failed\": $(jstr "$(jget "$(cat "$sb")" failed)")"
			bpf_stats_off
		fi
	fi
	kill -USR1 "$BP"
	if ! wait_for "$f" '^bench: holding$' 120 "$BP" || ! parse_bench "$f"; then
		fail "$cfg" "the bench loop did not finish: $(tr '\n' ' ' <"$f" | tail -c 300)"
		bpf_stats_off
		stop "$ap"
		stop "$BP"
		return
	fi
	# The batch path on the default ring: drops pass if counted exactly (ANALYSIS, issue 37).
	dc=--drops-counted
	case " $flags " in *" --per-event "*) dc= ;; esac
	v=$(python3 tools/bench/verify.py attached --tail "$BUILD/recorder-tail" --pid "$BP" --mode "$mode" \
		--events "$EMITTED_EVENTS" $dc 2>>"$LOG/verify.err")
	rc=$?
	if [ "${BPF_STATS:-0}" = 1 ] && [ -z "$st" ]; then
		# Every event is delivered (verify.py waited for it), the last ones collected.
		if ! l=$(python3 tools/bench/verify.py bpf-stats --pid "$ap" --since "$sb" 2>>"$LOG/verify.err"); then
			st="\"bpf_stats_failed\": $(jstr "$(jget "$l" failed)")"
		elif ! bpf_stats_still_on; then
			st="\"bpf_stats_failed\": $(jstr "$WHY")"
		else
			st="\"bpf_stats\": $l"
		fi
	fi
	bpf_stats_off
	[ -n "$st" ] && extra+=", $st"
	if [ "$mode" = ring_touch ]; then
		l=$(grep -m1 '^ring_touch ' "$f")
		set -- $l
		# ring_touch cold_ns C warm_ns W warm_min_ns A warm_max_ns B iters N warm_runs K warmup M
		extra+=", \"cold_ns\": ${3:-null}, \"warm_ns\": ${5:-null}, \"warm_min_ns\": ${7:-null},
			\"warm_max_ns\": ${9:-null}, \"touch_iters\": ${11:-null}, \"warm_runs\": ${13:-null}"
	fi
	kill -USR1 "$BP" # leave the hold
	reap_bench
	stop "$ap"
	verified "$cfg" "$v" $rc "{\"ns\": $NS, \"excess_ms\": $EXCESS, \"span_pairs\": $EMITTED_SPANS, \"attach_flags\": $(jstr "$flags"),
		\"attach\": $(jstr "$(head -1 "$a")")$extra}"
}

# run_bpftrace CONFIG MODE PROBE ACTION [verify]: with verify, ACTION counts into @c,
# and the round counts only if @c is exactly the number of hits the loop made.
run_bpftrace() {
	local cfg=$1 f=$LOG/$1.r$ROUND t=$LOG/$1.bt.r$ROUND tp c want wait=""
	want "$cfg" || return 0
	begin "$cfg"
	[ "$2" != sdt ] && wait=--wait-sema
	start_bench "$f" "$BIN/bench" "$2" --iters "$IT_SDT" $wait || { fail "$cfg" "$WHY"; return; }
	# BEGIN runs after every probe is attached.
	spawn "$t" timeout 120 bpftrace -p "$BP" -e "BEGIN { printf(\"ready\\n\"); } usdt:$BIN/bench:$3 $4"
	tp=$LP
	if ! wait_for "$t" '^ready' 30 "$tp" || grep -q 'Error attaching' "$t"; then
		fail "$cfg" "bpftrace did not attach: $(grep -v RLIMIT "$t" | head -c 300)"
		stop "$tp" INT
		stop "$BP"
		return
	fi
	kill -USR1 "$BP"
	if ! finish_bench "$f"; then
		fail "$cfg" "$WHY"
		stop "$tp" INT
		return
	fi
	stop "$tp" INT
	if [ "${5:-}" = verify ]; then
		c=$(awk '/^@c:/{print $2}' "$t")
		want=$EMITTED_EVENTS
		[ "$2" = sdt ] && want=$SDT_HITS
		if [ "$c" != "$want" ]; then
			fail "$cfg" "bpftrace counted ${c:-nothing} of the $want hits the loop made"
			return
		fi
		emit "$cfg" ns "$NS" ", \"hits\": $want, \"counted\": $c"
	else
		emit "$cfg" ns "$NS"
	fi
}

# run_lttng [CONFIG]: the LTTng peer (CONFIG lttng unless given). LTTng is a peer, not
# checked for what it recorded: a peer that did less would look faster, which makes
# every ratio of ours to it larger, never a false pass.
run_lttng() {
	local cfg=${1:-lttng} f=$LOG/${1:-lttng}.r$ROUND
	want "$cfg" || return 0
	begin "$cfg"
	start_bench "$f" "$BIN/bench_lttng" --iters "$IT_EVENT" || { fail "$cfg" "$WHY"; return; }
	kill -USR1 "$BP"
	reap_bench
	NS=$(awk '/^ns_per_iter /{print $2; exit}' "$f")
	if [ -z "$NS" ]; then
		fail "$cfg" "no result: $(tr '\n' ' ' <"$f" | head -c 300)"
		return
	fi
	emit "$cfg" ns "$NS"
}

ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null; }

# run_throughput CONFIG RATE CLIENTS [RECORDER-ATTACH FLAGS...]: TP_THREADS producer
# threads, RATE events/s each (0 = flat out), TP_EVENTS each (fast_throughput*:
# FAST_TP_EVENTS; storm*: STORM_EVENTS or STORM_FLAT_EVENTS, every event an error:
# workload --level error). A configuration in TP_FIRE gets its own dump directory
# (--dump-dir) and verify.py checks its rules (the --trigger flags, and the
# --trigger-cooldown in whole seconds, "Ns", if one is given) and the snapshot files. The workload is stopped
# (SIGSTOP) from just after its start until recorder-attach has attached and, with
# CLIENTS=1, until the clients are connected: IDLE_CLIENTS connections that never send
# a byte (verify.py idle, which reconnects any the recorder closes) and a --follow
# reader, stopped (SIGSTOP) once it has printed its first line. The run's time goes
# from the resume to the workload's report (written once its last event is emitted);
# verify.py checks produced = emitted and produced = kept + dropped per recording.
run_throughput() {
	local cfg=$1 rate=$2 clients=$3
	shift 3
	local w=$LOG/$cfg.w.r$ROUND a=$LOG/$cfg.a.r$ROUND rep=$LOG/$cfg.report.r$ROUND.json
	local fo=$LOG/$cfg.follow.r$ROUND io=$LOG/$cfg.idle.r$ROUND
	local wp ap fp="" ip="" t1 c1 c2 v rc extra cpu events=$TP_EVENTS wl=() check=() x n=0
	local fire=${TP_FIRE[$cfg]:-} dumps=$LOG/$cfg.dumps.r$ROUND prev="" cool=() prog=workload
	case $cfg in
	fast_throughput*) events=$FAST_TP_EVENTS ;;
	storm_flat*) events=$STORM_FLAT_EVENTS wl=(--level error) ;;
	sig_throughput*)
		events=$SIG_EVENTS wl=(--level error --error-sites "$SIG_SITES") prog=workload-sites
		;;
	storm*) events=$STORM_EVENTS wl=(--level error) ;;
	esac
	want "$cfg" || return 0
	begin "$cfg"
	rm -f "$rep"
	if [ -n "$fire" ]; then
		for x in "$@"; do
			case $x in --trigger | --trigger=*) n=$((n + 1)) ;; esac
			[ "$prev" = --trigger-cooldown ] && cool=(--cooldown-s "${x%s}")
			prev=$x
		done
		rm -rf "$dumps"
		if ! mkdir -m 0711 "$dumps"; then
			fail "$cfg" "cannot make the dump directory $dumps"
			return
		fi
		set -- "$@" --dump-dir "$dumps"
		check=(--triggers "$n" --fire "$fire" --dump-dir "$dumps" "${cool[@]}")
	fi
	spawn "$w" "$BUILD/$prog" --wait-attach --threads "$TP_THREADS" --events "$events" --rate "$rate" \
		--fields 3 --cap 1000 "${wl[@]}" --report "$rep" --hold 30
	wp=$LP
	if ! own_pid "$w" workload "$wp" 5; then
		fail "$cfg" "$WHY"
		stop "$wp"
		return
	fi
	kill -STOP "$wp"
	spawn "$a" "$BUILD/recorder-attach" -p "$wp" --no-dump "$@"
	ap=$LP
	if ! wait_for "$a" "^attached to $wp:" 20 "$ap"; then
		fail "$cfg" "recorder-attach $* did not attach: $(head -c 300 "$a")"
		stop "$ap"
		stop "$wp"
		return
	fi
	if [ "$clients" = 1 ]; then
		spawn "$io" python3 tools/bench/verify.py idle --sock "/run/recorder/$wp.sock" --n "$IDLE_CLIENTS"
		ip=$LP
		spawn "$fo" "$BUILD/recorder-tail" -p "$wp" --follow
		fp=$LP
		if ! wait_for "$io" "^idle: connected $IDLE_CLIENTS\$" 10 "$ip" ||
			! v=$(python3 tools/bench/verify.py clients --tail "$BUILD/recorder-tail" --pid "$wp" \
				--n $((IDLE_CLIENTS + 1)) 2>>"$LOG/verify.err"); then
			fail "$cfg" "the clients did not connect: $(head -c 200 "$io") $v $(head -c 200 "$fo")"
			stop "$fp"
			stop "$ip"
			stop "$ap"
			stop "$wp"
			return
		fi
	fi
	c1=$(ticks "$ap")
	t1=$(now)
	kill -CONT "$wp"
	if [ "$clients" = 1 ]; then
		if ! wait_for "$fo" . 10 "$fp"; then
			fail "$cfg" "the --follow reader printed nothing in 10 s: $(head -c 200 "$fo")"
			stop "$fp"
			stop "$ip"
			stop "$ap"
			stop "$wp"
			return
		fi
		kill -STOP "$fp"
		if [ -e "$rep" ]; then
			fail "$cfg" "the workload was done before the --follow reader was stopped: the run is too short"
			stop "$fp"
			stop "$ip"
			stop "$ap"
			stop "$wp"
			return
		fi
	fi
	if ! wait_for "$rep" 'last_seq' 120 "$wp"; then
		fail "$cfg" "no report from the workload: $(head -c 300 "$w")"
		[ -n "$fp" ] && stop "$fp"
		[ -n "$ip" ] && stop "$ip"
		stop "$ap"
		stop "$wp"
		return
	fi
	c2=$(ticks "$ap")
	cpu=$(awk -v a="$c1" -v b="$c2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", (b - a) / hz }')
	extra="{\"attach_flags\": $(jstr "$*"), \"attach\": $(jstr "$(head -1 "$a")"), \"workload_flags\": $(jstr "${wl[*]}")"
	if [ "$clients" = 1 ]; then
		stop "$ip" # it prints its tally at SIGTERM
		extra+=", \"idle_clients\": $IDLE_CLIENTS, \"idle\": $(sed -n 's/^idle: {/{/p' "$io" | tail -1 | grep . || echo null), \"follow_stopped\": true"
	fi
	extra+="}"
	v=$(python3 tools/bench/verify.py throughput --tail "$BUILD/recorder-tail" --pid "$wp" --report "$rep" \
		--t-start "$t1" --rate-asked $((rate * TP_THREADS)) --consumer-cpu-s "$cpu" "${check[@]}" \
		2>>"$LOG/verify.err")
	rc=$?
	[ -n "$fp" ] && stop "$fp"
	stop "$ap"
	stop "$wp"
	verified "$cfg" "$v" $rc "$extra"
}

# run_trigger_latency CONFIG [RECORDER-ATTACH FLAGS...]: from an error to its snapshot
# on disk, with --trigger 'level>=error' --trigger-after 0. The target, `incident
# requests LAT_REQUESTS LAT_BAD LAT_RATE`, runs quiet requests (INFO events, a
# recording each) at LAT_RATE a second, and request LAT_BAD logs one error: on the
# batch path its buffer is taken as a sleeping thread's is (every --collect-ms). The
# snapshot is the one recorder-attach's stderr announces; verify.py trigger-latency
# takes the event's own time from it and the time the snapshot appeared in the dump
# directory from a watcher (inotify) started before the target.
run_trigger_latency() {
	local cfg=$1 t=$LOG/$1.t.r$ROUND a=$LOG/$1.a.r$ROUND wl=$LOG/$1.watch.r$ROUND dumps=$LOG/$1.dumps.r$ROUND
	local tp ap wp n key v rc
	shift
	want "$cfg" || return 0
	begin "$cfg"
	rm -rf "$dumps"
	if ! mkdir -m 0711 "$dumps"; then
		fail "$cfg" "cannot make the dump directory $dumps"
		return
	fi
	# The watcher starts while recorder-attach attaches; the target, stopped (SIGSTOP)
	# until both are ready, runs its requests once attached.
	spawn "$wl" python3 tools/bench/verify.py watch --dir "$dumps"
	wp=$LP
	spawn "$t" "$BUILD/tests/targets/incident" requests "$LAT_REQUESTS" "$LAT_BAD" "$LAT_RATE"
	tp=$LP
	wait_for "$t" '^pid [0-9]+$' 5 "$tp"
	n=$(awk '$1 == "pid" { print $2; exit }' "$t")
	if [ "$n" != "$tp" ]; then
		fail "$cfg" "incident (pid $tp) printed no pid line of its own: $(head -c 300 "$t")"
		stop "$tp"
		stop "$wp"
		return
	fi
	kill -STOP "$tp"
	spawn "$a" "$BUILD/recorder-attach" -p "$tp" --dump-dir "$dumps" --trigger 'level>=error' \
		--trigger-after 0 "$@"
	ap=$LP
	if ! wait_for "$a" "^attached to $tp:" 20 "$ap"; then
		fail "$cfg" "recorder-attach $* did not attach: $(head -c 300 "$a")"
		stop "$ap"
		stop "$tp"
		stop "$wp"
		return
	fi
	if ! wait_for "$wl" '^watch: ready$' 10 "$wp"; then
		fail "$cfg" "the watcher of $dumps did not start: $(head -c 300 "$wl")"
		stop "$ap"
		stop "$tp"
		stop "$wp"
		return
	fi
	kill -CONT "$tp"
	if ! wait_for "$t" '^done$' 30 "$tp" || ! wait_for "$a" "fired in pid $tp" 10 "$ap"; then
		fail "$cfg" "no snapshot announced: target: $(tr '\n' ' ' <"$t" | head -c 200); recorder-attach: $(tr '\n' ' ' <"$a" | tail -c 300)"
		stop "$ap"
		stop "$tp"
		stop "$wp"
		return
	fi
	key=$(awk '$1 == "bad" { print $2; exit }' "$t")
	v=$(python3 tools/bench/verify.py trigger-latency --tail "$BUILD/recorder-tail" --pid "$tp" --attach-log "$a" \
		--watch-log "$wl" --recording "$key" 2>>"$LOG/verify.err")
	rc=$?
	stop "$ap"
	stop "$tp"
	stop "$wp"
	verified "$cfg" "$v" $rc "{\"attach_flags\": $(jstr "$*"), \"attach\": $(jstr "$(head -1 "$a")"),
		\"target\": $(jstr "incident requests $LAT_REQUESTS $LAT_BAD $LAT_RATE")}"
}

# run_pingpong CONFIG WHO [RECORDER-ATTACH FLAGS...]: bench pingpong (a parent and the
# child it forks pass a byte to and fro over two pipes, pinned to one CPU: two context
# switches a round trip, each side in a span), its ns per round trip, with WHO
# attached: "none" (nothing), "other" (recorder-attach with the flags, attached to a
# third, idle bench process: the cost of the scheduler hooks to processes it does not
# trace) or "both" (recorder-attach attached to both ends). The scheduler-hook ratios
# (sched_untraced_switch_ratio, sched_traced_switch_ratio) divide these by "none" of the
# same round.
run_pingpong() {
	local cfg=$1 who=$2 f=$LOG/$1.r$ROUND a=$LOG/$1.a.r$ROUND i=$LOG/$1.idle.r$ROUND
	local ap="" ip="" peer n=1 targets=()
	shift 2
	want "$cfg" || return 0
	begin "$cfg"
	start_bench "$f" taskset -c "$PP_CPU" "$BIN/bench" pingpong --iters "$IT_PP" || { fail "$cfg" "$WHY"; return; }
	if ! wait_for "$f" '^bench: peer [0-9]+$' 5 "$BP"; then
		fail "$cfg" "bench pingpong printed no peer line: $(head -c 300 "$f")"
		stop "$BP"
		return
	fi
	peer=$(awk '$1 == "bench:" && $2 == "peer" { print $3; exit }' "$f")
	case $who in
	other)
		spawn "$i" "$BIN/bench" baseline --iters 1
		ip=$LP
		if ! own_pid "$i" bench "$ip" 5; then
			fail "$cfg" "the idle bench: $WHY"
			stop "$ip"
			stop "$BP"
			return
		fi
		targets=(-p "$ip")
		;;
	both) targets=(-p "$BP" -p "$peer") n=2 ;;
	esac
	if [ "$who" != none ]; then
		spawn "$a" "$BUILD/recorder-attach" "${targets[@]}" --no-dump "$@"
		ap=$LP
		for _ in $(seq 2000); do
			[ "$(grep -c '^attached to' "$a")" -ge "$n" ] && break
			alive "$ap" || break
			sleep 0.01
		done
		if [ "$(grep -c '^attached to' "$a")" -lt "$n" ]; then
			fail "$cfg" "recorder-attach $* did not attach to ${targets[*]}: $(head -c 300 "$a")"
			stop "$ap"
			[ -n "$ip" ] && stop "$ip"
			stop "$BP"
			return
		fi
	fi
	kill -USR1 "$BP"
	reap_bench
	NS=$(awk '/^ns_per_iter /{print $2; exit}' "$f")
	[ -n "$ap" ] && stop "$ap"
	if [ -n "$ip" ]; then
		kill -USR1 "$ip"
		stop "$ip"
	fi
	if [ -z "$NS" ]; then
		fail "$cfg" "no result from bench pingpong: $(tr '\n' ' ' <"$f" | head -c 300)"
		return
	fi
	emit "$cfg" ns "$NS" ", \"who\": \"$who\", \"cpu\": $PP_CPU, \"attach_flags\": $(jstr "$*")"
}

run_attach_sites() {
	local s=$LOG/sites.r$ROUND a=$LOG/sites.a.r$ROUND sp ap t0 t1
	want attach_sites || return 0
	begin attach_sites
	spawn "$s" "$BIN/sites"
	sp=$LP
	own_pid "$s" sites "$sp" 5 || { fail attach_sites "$WHY"; stop "$sp"; return; }
	t0=$(now)
	spawn "$a" "$BUILD/recorder-attach" -p "$sp" --no-dump
	ap=$LP
	local ok=0
	for _ in $(seq 12000); do
		grep -q "^attached to $sp:" "$a" 2>/dev/null && { ok=1; break; }
		kill -0 "$ap" 2>/dev/null || break
		sleep 0.005
	done
	t1=$(now)
	if [ $ok = 1 ]; then
		emit attach_sites seconds "$(sub "$t1" "$t0")" ", \"sites\": $SITES, \"line\": $(jstr "$(head -1 "$a")")"
	else
		fail attach_sites "no 'attached to' line: $(head -c 300 "$a")"
	fi
	stop "$ap"
	stop "$sp"
}

# The loader's RSS while it serves RSS_RECS recordings. The workload's pid is the $! of
# the workload started just here (checked against its own "workload: pid" line, its
# report's "pid" and recorder-attach's "attached to" line); it holds (--hold 60) after
# its report, so it and recorder-attach must both still run when the RSS is read: if
# either does not, the round's value is dropped with a note, never recorded.
run_rss() {
	local w=$LOG/rss.w.r$ROUND a=$LOG/rss.a.r$ROUND rep=$LOG/rss.report.r$ROUND.json wp ap rpid rss hwm
	want loader_rss || return 0
	begin loader_rss
	rm -f "$rep"
	spawn "$w" "$BUILD/workload" --wait-attach --threads 1 --recordings "$RSS_RECS" --cap 1000 \
		--events "$RSS_EVENTS" --report "$rep" --hold 60
	wp=$LP
	if ! own_pid "$w" workload "$wp" 5; then
		fail loader_rss "workload (pid $wp) did not start: $WHY"
		stop "$wp"
		return
	fi
	spawn "$a" "$BUILD/recorder-attach" -p "$wp" --no-dump
	ap=$LP
	if ! wait_for "$a" "^attached to $wp:" 20 || ! wait_for "$rep" 'last_seq' 60; then
		fail loader_rss "attach to workload pid $wp or its report failed: $(head -c 300 "$a") $(head -c 200 "$w")"
		stop "$ap"
		stop "$wp"
		return
	fi
	sleep 0.3
	rpid=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["pid"])' "$rep" 2>/dev/null)
	if [ "$rpid" != "$wp" ]; then
		fail loader_rss "the report $rep is of pid ${rpid:-?}, not of the workload started (pid $wp)"
	elif ! alive "$wp"; then
		fail loader_rss "workload pid $wp is not alive at the measurement (it should hold 60 s): $(head -c 200 "$w")"
	elif ! alive "$ap"; then
		fail loader_rss "recorder-attach (pid $ap) for workload pid $wp ended before the measurement: $(head -c 300 "$a")"
	else
		rss=$(awk '/^VmRSS/{print $2}' "/proc/$ap/status" 2>/dev/null)
		hwm=$(awk '/^VmHWM/{print $2}' "/proc/$ap/status" 2>/dev/null)
		if [ -z "$rss" ] || [ -z "$hwm" ] || ! alive "$wp" || ! alive "$ap"; then
			fail loader_rss "workload pid $wp or recorder-attach pid $ap ended while the RSS was read (VmRSS '${rss}', VmHWM '${hwm}')"
		else
			emit loader_rss kib "$rss" ", \"hwm_kib\": $hwm, \"recordings\": $RSS_RECS, \"cap\": 1000, \"pid\": $wp"
		fi
	fi
	stop "$ap"
	stop "$wp"
}

# rust_ab_row LINE: the JSON members of a "rust_ab MODE a_ns A b_ns B ratio R ratio_p25
# P ratio_p75 Q pairs N chunk_iters C" line of rust-bench, their names prefixed by
# MODE_ ("" for detached); fails if LINE is not one.
rust_ab_row() {
	local p
	set -- $1
	[ "$1" = rust_ab ] && [ $# -eq 16 ] || return 1
	p=$2_
	[ "$2" = detached ] && p=""
	printf '"%sa_ns": %s, "%sb_ns": %s, "%sratio": %s, "%sratio_p25": %s, "%sratio_p75": %s, "%spairs": %s, "%schunk_iters": %s' \
		"$p" "$4" "$p" "$6" "$p" "$8" "$p" "${10}" "$p" "${12}" "$p" "${14}" "$p" "${16}"
}

# start_rust_bench OUTFILE MODE: starts rust-bench MODE; BP = its pid, checked.
start_rust_bench() {
	spawn "$1" "$RUST_BENCH" "$2" --iters "$IT_RUST" --chunks "$RUST_CHUNKS"
	BP=$LP
	own_pid "$1" rust-bench "$BP" 5 || { stop "$BP"; return 1; }
}

# attach_rust_bench CONFIG OUT ATTACH_OUT WHAT: attaches recorder-attach (AP) to rust-bench BP,
# starts its loops and waits for them to hold; fails CONFIG (non-zero) if either does not.
attach_rust_bench() {
	spawn "$3" "$BUILD/recorder-attach" -p "$BP" --no-dump "${TIMED_FLAGS[@]}" "${FAST_FLAGS[@]}"
	AP=$LP
	if ! wait_for "$3" "^attached to $BP:" 20 "$AP"; then
		fail "$1" "recorder-attach did not attach: $(head -c 300 "$3")"
		stop "$AP"
		stop "$BP"
		return 1
	fi
	kill -USR1 "$BP"
	if ! wait_for "$2" '^rust-bench: holding$' 120 "$BP"; then
		fail "$1" "$4 did not finish: $(tr '\n' ' ' <"$2" | tail -c 300)"
		stop "$AP"
		stop "$BP"
		return 1
	fi
}

# rust_detached_ratio: a tracing event through the registry with the recorder layer and
# nothing attached (a) over the registry alone (b), pairs of chunks in one process; and
# span_floor: a span pair through the registry alone over tracing_subscriber::fmt, the
# least rust_span_pair_vs_fmt a layer on the registry can reach; and layer_floor: the
# event through the registry with a layer that does nothing over the registry alone;
# own_detached: the event through recorder's own subscriber over the registry alone; and
# span_detached: a span pair through the registry with the layer over the registry alone.
run_rust_detached() {
	local f=$LOG/rust_detached.r$ROUND m m2 m3 m4 m5
	want rust_detached || return 0
	begin rust_detached
	start_rust_bench "$f" detached || { fail rust_detached "$WHY"; return; }
	reap_bench
	if ! m=$(rust_ab_row "$(grep -m1 '^rust_ab detached ' "$f")") ||
		! m2=$(rust_ab_row "$(grep -m1 '^rust_ab span_floor ' "$f")") ||
		! m3=$(rust_ab_row "$(grep -m1 '^rust_ab layer_floor ' "$f")") ||
		! m4=$(rust_ab_row "$(grep -m1 '^rust_ab own_detached ' "$f")") ||
		! m5=$(rust_ab_row "$(grep -m1 '^rust_ab span_detached ' "$f")"); then
		fail rust_detached "no result: $(tr '\n' ' ' <"$f" | head -c 300)"
		return
	fi
	printf '{"round": %d, "config": "rust_detached", %s, %s, %s, %s, %s}\n' "$ROUND" "$m" "$m2" "$m3" "$m4" "$m5" \
		>>"$RAW"
}

# rust_event_vs_fmt and rust_span_pair_vs_fmt: under recorder-attach (default path), the
# event and the span pair through the recorder layer (a) over tracing_subscriber::fmt
# to io::sink() (b), pairs of chunks in one process; then both through recorder's own
# subscriber (rust_own_event_vs_fmt, rust_own_span_pair_vs_fmt). The round counts only if the
# recording saw exactly the events and spans the bench sent through the layer, none
# dropped or lost.
run_rust_attached() {
	local f=$LOG/rust_attached.r$ROUND a=$LOG/rust_attached.attach.r$ROUND ap l ev sp m1 m2 m3 m4 v
	want rust_attached || return 0
	begin rust_attached
	start_rust_bench "$f" attached || { fail rust_attached "$WHY"; return; }
	attach_rust_bench rust_attached "$f" "$a" "the bench loops" || return
	ap=$AP
	l=$(grep -m1 '^emitted events ' "$f")
	set -- $l
	ev=${3:-} sp=${5:-}
	v=$("$BUILD/recorder-tail" -p "$BP" --list --spans --json 2>&1 | python3 -c '
import json, sys
ev, sp = int(sys.argv[1]), int(sys.argv[2])
try:
    r = [json.loads(l) for l in sys.stdin if l.strip()]
except ValueError as e:
    sys.exit(f"recorder-tail --list: {e}")
r = [x for x in r if x.get("subject") == "bench"]
if len(r) != 1:
    sys.exit(f"{len(r)} recordings with subject bench, expected 1")
x = r[0]
got = (x.get("seen"), x.get("dropped"), x.get("spans_seen"), x.get("spans_lost"))
if got != (ev, 0, sp, 0):
    sys.exit(f"the recorder counted events seen {got[0]}, dropped {got[1]}, spans seen {got[2]}, "
             f"lost {got[3]}; rust-bench sent {ev} events and {sp} spans")
' "${ev:-0}" "${sp:-0}" 2>&1)
	local rc=$?
	kill -USR1 "$BP"
	reap_bench
	stop "$ap"
	if [ -z "$ev" ] || [ -z "$sp" ]; then
		fail rust_attached "no emitted line: $(tr '\n' ' ' <"$f" | tail -c 300)"
	elif [ $rc -ne 0 ]; then
		fail rust_attached "$v"
	elif ! m1=$(rust_ab_row "$(grep -m1 '^rust_ab event ' "$f")") ||
		! m2=$(rust_ab_row "$(grep -m1 '^rust_ab span ' "$f")") ||
		! m3=$(rust_ab_row "$(grep -m1 '^rust_ab own_event ' "$f")") ||
		! m4=$(rust_ab_row "$(grep -m1 '^rust_ab own_span ' "$f")"); then
		fail rust_attached "no result: $(tr '\n' ' ' <"$f" | head -c 300)"
	else
		printf '{"round": %d, "config": "rust_attached", %s, %s, %s, %s, "events": %s, "spans": %s}\n' \
			"$ROUND" "$m1" "$m2" "$m3" "$m4" "$ev" "$sp" >>"$RAW"
	fi
}

# ---- the load generator of the server keys ----
$CC -g -O2 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -Itools/bench -pthread tools/bench/loadgen.c \
	-o "$BIN/loadgen" 2>"$LOG/build-loadgen.log" || die "building loadgen failed: $(cat "$LOG/build-loadgen.log")"

# ---- the machine: what decides the costs here (recorder-attach --machine) ----
MACHINE=$OUT/machine.json
if ! "$BUILD/recorder-attach" --machine >"$MACHINE" 2>"$LOG/machine.err"; then
	note "recorder-attach --machine failed: $(head -c 300 "$LOG/machine.err")"
	[ -s "$MACHINE" ] || echo '{}' >"$MACHINE"
fi

# rust_event: `rust-bench event`, the attached Rust event alone through the layer on
# the registry, timed as bench.c times its C event (bench_time.h), on the default path
# and ring: rust_event_vs_c_event, over fast_event's ns of the same round. Every
# event must be seen, none dropped.
run_rust_event() {
	local f=$LOG/rust_event.r$ROUND a=$LOG/rust_event.attach.r$ROUND ap ns l ev v rc
	want rust_event || return 0
	begin rust_event
	spawn "$f" "$RUST_BENCH" event --iters "$IT_EVENT"
	BP=$LP
	if ! own_pid "$f" rust-bench "$BP" 5; then
		fail rust_event "$WHY"
		stop "$BP"
		return
	fi
	attach_rust_bench rust_event "$f" "$a" "the event loop" || return
	ap=$AP
	ns=$(awk '/^ns_per_iter /{print $2; exit}' "$f")
	l=$(grep -m1 '^emitted events ' "$f")
	set -- $l
	ev=${3:-}
	# As fast_event's: drops pass when ring_full counts each one.
	v=$("$BUILD/recorder-tail" -p "$BP" --list --json 2>&1 | python3 -c '
import json, sys
ev, full = int(sys.argv[1]), sys.argv[2]
try:
    r = [json.loads(l) for l in sys.stdin if l.strip()]
except ValueError as e:
    sys.exit(f"recorder-tail --list: {e}")
r = [x for x in r if x.get("subject") == "bench"]
if len(r) != 1:
    sys.exit(f"{len(r)} recordings with subject bench, expected 1")
got = (r[0].get("seen"), r[0].get("dropped"), r[0].get("invalid"))
if got[0] != ev or got[2] or str(got[1]) != full:
    sys.exit(f"the recorder counted events seen {got[0]}, dropped {got[1]} (ring_full {full}), "
             f"invalid {got[2]}; rust-bench sent {ev}")
print(got[1])
' "${ev:-0}" "$("$BUILD/recorder-tail" -p "$BP" --stats --json 2>/dev/null | jq -r .counters.ring_full)" 2>&1)
	rc=$?
	kill -USR1 "$BP"
	reap_bench
	stop "$ap"
	if [ -z "$ns" ] || [ -z "$ev" ]; then
		fail rust_event "no result: $(tr '\n' ' ' <"$f" | head -c 300)"
	elif [ $rc -ne 0 ]; then
		fail rust_event "$v"
	else
		printf '{"round": %d, "config": "rust_event", "ns": %s, "events": %s, "dropped": %s}\n' "$ROUND" "$ns" \
			"$ev" "$v" >>"$RAW"
	fi
}

# run_server: the server keys, one round (tools/bench/server.py: the event-loop example
# on 127.0.0.1 under loadgen, detached and attached segments of one server in pairs,
# and an uninstrumented build beside it; each attached segment checked exact). With
# the BPF statistics on for it (server.py --bpf-stats: the batch programs' runs during
# the attached segments, server_flushes_per_request), off again right after.
run_server() {
	local v rc stats=(--bpf-stats) extra="{}"
	want server || return 0
	begin server
	if ! bpf_stats_on; then
		stats=()
		extra="{\"bpf_stats_failed\": $(jstr "$WHY")}"
	fi
	v=$(python3 tools/bench/server.py --build "$BUILD" --loadgen "$BIN/loadgen" --pairs "$SERVER_PAIRS" \
		--requests "$SERVER_REQUESTS" --attach-flags "${FAST_FLAGS[*]}" "${stats[@]}" 2>>"$LOG/server.err")
	rc=$?
	if [ ${#stats[@]} -gt 0 ] && ! bpf_stats_still_on; then
		extra="{\"bpf_stats_failed\": $(jstr "$WHY")}"
	fi
	bpf_stats_off
	verified server "$v" $rc "$extra"
}

# ---- the kvm-clock configurations (issue 37) ----
# Where the machine offers kvm-clock and does not use it already, each round ends with
# a few configurations run again with kvm-clock selected as the clocksource (their names
# end in _kvmclock), the clocksource of a guest whose TSC the kernel does not trust:
# the header then stamps a batched event with clock_gettime, not rdtsc, and BPF's
# bpf_ktime_get_ns reads kvm-clock. Every process of them starts after the switch (the
# header picks its batch clock from current_clocksource at a thread's first batch),
# and the clocksource is restored right after them (and by cleanup at any exit). The
# traps cost what they cost here: only the clock is emulated.
KVM_CFGS=(event_kvmclock fast_event_kvmclock fast_span_kvmclock ring_touch_kvmclock lttng_kvmclock)
MACHINE_KVM=$OUT/machine_kvmclock.json
rm -f "$MACHINE_KVM"
HAVE_KVMCLOCK=1
if [ "$KVMCLOCK" = 0 ]; then
	HAVE_KVMCLOCK=0 why="KVMCLOCK=0"
elif ! grep -qw kvm-clock "$CS_DIR/available_clocksource" 2>/dev/null; then
	HAVE_KVMCLOCK=0 why="kvm-clock is not an available clocksource here ($(cat "$CS_DIR/available_clocksource" 2>/dev/null))"
elif [ "$CS_START" = kvm-clock ]; then
	HAVE_KVMCLOCK=0 why="the clocksource is kvm-clock already: every configuration runs with it"
fi
if [ "$HAVE_KVMCLOCK" = 0 ]; then
	for c in "${KVM_CFGS[@]}"; do want "$c" && skip "$c" "$why"; done
fi

run_kvmclock() {
	local c any=0
	[ "$HAVE_KVMCLOCK" = 1 ] || return 0
	for c in "${KVM_CFGS[@]}"; do want "$c" && any=1; done
	[ $any = 1 ] || return 0
	if ! clocksource_set kvm-clock; then
		for c in "${KVM_CFGS[@]}"; do
			want "$c" || continue
			begin "$c"
			fail "$c" "$WHY"
		done
		return
	fi
	if [ ! -s "$MACHINE_KVM" ] && ! "$BUILD/recorder-attach" --machine >"$MACHINE_KVM" 2>>"$LOG/machine.err"; then
		note "recorder-attach --machine with kvm-clock failed: $(tail -c 300 "$LOG/machine.err")"
		rm -f "$MACHINE_KVM"
	fi
	run_attached event_kvmclock event "${TIMED_FLAGS[@]}" "${PER_EVENT_FLAGS[@]}"
	if [ "$FAST_PATH" = 1 ]; then
		BPF_STATS=1 run_attached fast_event_kvmclock event "${TIMED_FLAGS[@]}" "${FAST_FLAGS[@]}"
		run_attached fast_span_kvmclock span "${TIMED_FLAGS[@]}" "${FAST_FLAGS[@]}"
		run_attached ring_touch_kvmclock ring_touch "${FAST_FLAGS[@]}"
	fi
	[ "$HAVE_LTTNG" = 1 ] && run_lttng lttng_kvmclock
	clocksource_restore || die "the clocksource is not restored (see above)"
}

# ---- the rounds ----
START=$(now)
LOAD_START=$(cut -d' ' -f1 /proc/loadavg)
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
	note "round $ROUND of $ROUNDS"
	run_ab
	if [ "$HAVE_RUST" = 1 ]; then
		run_rust_detached
		run_rust_attached
		run_rust_event
	fi
	run_attached event event "${TIMED_FLAGS[@]}" "${PER_EVENT_FLAGS[@]}"
	run_attached span span "${TIMED_FLAGS[@]}" "${PER_EVENT_FLAGS[@]}"
	run_attached nested nested "${TIMED_FLAGS[@]}" "${PER_EVENT_FLAGS[@]}"
	if [ "$FAST_PATH" = 1 ]; then
		# With the batch programs' run times (batch_bpf_ns_per_event, events_per_flush).
		BPF_STATS=1 run_attached fast_event event "${TIMED_FLAGS[@]}" "${FAST_FLAGS[@]}"
		run_attached fast_span span "${TIMED_FLAGS[@]}" "${FAST_FLAGS[@]}"
		# A fresh default ring's first touch (ring_first_touch_ms): default settings.
		run_attached ring_touch ring_touch "${FAST_FLAGS[@]}"
	fi
	if [ "$HAVE_BPFTRACE" = 1 ]; then
		run_bpftrace floor event 'recorder:event' '{}'
		run_bpftrace bpftrace_count event 'recorder:event' '{ @c = count(); }' verify
		[ "$HAVE_SDT" = 1 ] && run_bpftrace bpftrace_sdt sdt 'benchsdt:hit' '{ @c = count(); }' verify
	fi
	[ "$HAVE_LTTNG" = 1 ] && run_lttng
	# Flat out, each event path: fast_throughput_vs_per_event.
	run_throughput throughput 0 0 "${PER_EVENT_FLAGS[@]}"
	# The batch path flat out, without and with 4 incident rules that never fire
	# (trigger_rules_throughput_ratio): a pair, its order alternating by round.
	# One pair's ratio swings by ±15 % flat out: RULE_PAIRS pairs a round, each
	# alternating its order, the round's ratio their median (report.py).
	for ((k = 1; FAST_PATH == 1 && k <= RULE_PAIRS; k++)); do
		sfx=""
		((k > 1)) && sfx=_p$k
		if (((ROUND + k) % 2 == 0)); then
			run_throughput "fast_throughput$sfx" 0 0 "${FAST_FLAGS[@]}"
			run_throughput "fast_throughput_rules$sfx" 0 0 "${FAST_FLAGS[@]}" "${NEVER_RULES[@]}"
		else
			run_throughput "fast_throughput_rules$sfx" 0 0 "${FAST_FLAGS[@]}" "${NEVER_RULES[@]}"
			run_throughput "fast_throughput$sfx" 0 0 "${FAST_FLAGS[@]}"
		fi
	done
	# An error storm at 1 M events/s, without and with a rule that fires on every
	# event (trigger_storm_extra_drops), and the same flat out with the default limiter
	# (a figure); the same alternation.
	if ((ROUND % 2)); then
		run_throughput storm "$PACED_RATE" 0 --trigger-cooldown "$STORM_COOLDOWN"
		run_throughput storm_trigger "$PACED_RATE" 0 --trigger-cooldown "$STORM_COOLDOWN" \
			--trigger 'level>=error'
		run_throughput storm_flat 0 0
		run_throughput storm_flat_trigger 0 0 --trigger 'level>=error'
	else
		run_throughput storm_trigger "$PACED_RATE" 0 --trigger-cooldown "$STORM_COOLDOWN" \
			--trigger 'level>=error'
		run_throughput storm "$PACED_RATE" 0 --trigger-cooldown "$STORM_COOLDOWN"
		run_throughput storm_flat_trigger 0 0 --trigger 'level>=error'
		run_throughput storm_flat 0 0
	fi
	# 1,000 signatures firing on every event, flat out on the batch path, without
	# and with the rule (trigger_signatures_throughput_ratio); the same alternation.
	# Its 60 snapshots all stay (--keep-snapshots 0), for verify.py to count them.
	if ((FAST_PATH == 1 && ROUND % 2)); then
		run_throughput sig_throughput 0 0 "${FAST_FLAGS[@]}"
		run_throughput sig_throughput_rules 0 0 "${FAST_FLAGS[@]}" "${SIG_RULES[@]}"
	elif ((FAST_PATH == 1)); then
		run_throughput sig_throughput_rules 0 0 "${FAST_FLAGS[@]}" "${SIG_RULES[@]}"
		run_throughput sig_throughput 0 0 "${FAST_FLAGS[@]}"
	fi
	# From an error to its snapshot on disk, each event path (trigger_latency_ms).
	[ "$FAST_PATH" = 1 ] && run_trigger_latency trigger_latency "${FAST_FLAGS[@]}"
	run_trigger_latency trigger_latency_per_event "${PER_EVENT_FLAGS[@]}"
	# The drop target, at 1 M events/s with default settings, without and with clients.
	run_throughput throughput_1m "$PACED_RATE" 0
	run_throughput throughput_1m_clients "$PACED_RATE" 1
	# The scheduler hooks' cost to context switches (issue 26), in an order alternating
	# by round: nothing attached, attached to a third process, attached to both ends.
	if ((ROUND % 2)); then
		run_pingpong sched_pp_none none
		run_pingpong sched_pp_untraced other "${SCHED_FLAGS[@]}"
		run_pingpong sched_pp_traced both "${SCHED_FLAGS[@]}"
	else
		run_pingpong sched_pp_traced both "${SCHED_FLAGS[@]}"
		run_pingpong sched_pp_untraced other "${SCHED_FLAGS[@]}"
		run_pingpong sched_pp_none none
	fi
	run_attach_sites
	run_rss
	run_server
	run_kvmclock
done
END=$(now)
LOAD_END=$(cut -d' ' -f1 /proc/loadavg)
cleanup
# Both settings must be as they were at the start.
[ "$(cat "$CS_DIR/current_clocksource" 2>/dev/null)" = "$CS_START" ] ||
	die "the clocksource is $(cat "$CS_DIR/current_clocksource" 2>/dev/null), it was $CS_START at the start"

ARGS=(--raw "$RAW" --ran "$RAN" --skipped "$SKIPS" --notes "$OUT/notes.txt" --json "$OUT/results.json"
	--rounds "$ROUNDS" --elapsed "$(sub "$END" "$START")" --work-bytes "$WORK_BYTES"
	--iters "work=$IT_WORK (detached_ab: $AB_CHUNKS pairs of chunks of $((IT_WORK / AB_CHUNKS))),event=$IT_EVENT,rust=$IT_RUST a side ($RUST_CHUNKS pairs of chunks of $((IT_RUST / RUST_CHUNKS))),bpftrace=$IT_SDT,throughput_events_per_thread=$TP_EVENTS (batch path flat out: $FAST_TP_EVENTS; error storm at 1 M/s: $STORM_EVENTS, flat out: $STORM_FLAT_EVENTS),pingpong=$IT_PP round trips,sites=$SITES,rss_recordings=$RSS_RECS"
	--never-rules="$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "${NEVER_RULES[@]}")" --latency-target="incident requests $LAT_REQUESTS $LAT_BAD $LAT_RATE"
	--per-event-flags="${PER_EVENT_FLAGS[*]}" --fast-flags="${FAST_FLAGS[*]}" --timed-flags="${TIMED_FLAGS[*]}"
	--load "$LOAD_START $LOAD_END" --machine "$MACHINE" --generated "$(date '+%Y-%m-%d %H:%M:%S %z')"
	--ring-touch-events "$RING_TOUCH_EVENTS")
[ -s "$MACHINE_KVM" ] && ARGS+=(--machine-kvmclock "$MACHINE_KVM")
if [ "$SMOKE" = 1 ]; then
	python3 tools/bench/report.py "${ARGS[@]}" --md "$OUT/BENCHMARKS.md" --smoke || die "report.py failed"
	# The smoke checks the harness, never the numbers or the targets: every configuration
	# that ran must have its value, in every round (a failed check is a failure here).
	python3 - "$OUT/results.json" "$FAST_PATH" "$HAVE_KVMCLOCK" <<'EOF' || die "smoke: configurations without results (see $LOG)"
import json, sys
r = json.load(open(sys.argv[1]))
bad = [f"round {f['round']}: {f['config']}: {f['why']}" for f in r["failures"]]
need = ("baseline_ns", "detached_ns", "detached_ratio", "event_ns", "span_pair_ns", "nested_event_ns",
        "events_per_s", "paced_events_per_s", "clients_dropped", "attach_5000_s", "loader_rss_mib",
        "trigger_storm_extra_drops", "trigger_latency_per_event_ms", "server_attached_vs_detached",
        "server_detached_vs_plain", "sched_untraced_switch_ratio", "sched_traced_switch_ratio",
        "rust_detached_ratio", "rust_event_vs_fmt", "rust_span_pair_vs_fmt", "server_flushes_per_request")
if sys.argv[2] == "1":  # the batch path's (skipped with FAST_PATH=0)
    need += ("trigger_rules_throughput_ratio", "trigger_latency_ms", "trigger_signatures_throughput_ratio",
             "batch_bpf_ns_per_event", "events_per_flush", "ring_first_touch_ms", "rust_event_vs_c_event")
    if sys.argv[3] == "1":  # kvm-clock offered here (no LTTng in the smoke)
        need += ("fast_event_ns_kvmclock", "batch_bpf_ns_per_event_kvmclock", "ring_first_touch_ms_kvmclock")
bad += [f"{k}: no value" for k in need if r.get(k) is None]
if bad:
    print("smoke: " + "\n       ".join(bad), file=sys.stderr)
    sys.exit(1)
EOF
	echo "bench smoke: ok ($OUT)"
elif [ -n "$CONFIGS" ]; then
	python3 tools/bench/report.py "${ARGS[@]}" --md "$OUT/BENCHMARKS.md" || die "report.py failed"
	echo "bench: CONFIGS='$CONFIGS': wrote $OUT/results.json and $OUT/BENCHMARKS.md"
else
	printf '%s\n' "${ARGS[@]}" >"$REPORT_ARGS"
	python3 tools/bench/report.py "${ARGS[@]}" --md docs/BENCHMARKS.md || die "report.py failed"
	echo "bench: wrote $OUT/results.json and docs/BENCHMARKS.md"
fi
