# SPDX-License-Identifier: MIT
# Trust across an attach, a restart and a hand-over (issue 35, item 1): an
# attach made while requests are in flight loses none of their later events,
# and leaves no span open that the program has left. Each test repeats its
# race many times in one run, so that a 1-in-3 race cannot pass by luck.

INFLIGHT=$B/tests/targets/inflight
MTSERVER=$B/tests/targets/mtserver
# 20 rounds on the batch path, where the races of issue 35 were (the in-flight
# loss on it alone, phantom spans in 4 of 8 rounds against 1 of 6); 10 on
# --per-event (2 of each way), the two paths 30 attaches in all.
# TRUST_ROUNDS from the environment sets both (kept apart: this file is read
# once a path, in one shell).
: "${TRUST_ROUNDS_ASKED=${TRUST_ROUNDS:-}}"
if [ -n "$TRUST_ROUNDS_ASKED" ]; then
	TRUST_ROUNDS=$TRUST_ROUNDS_ASKED
elif [[ " $RECORDER_ATTACH_FLAGS " == *" --per-event "* ]]; then
	TRUST_ROUNDS=10
else
	TRUST_ROUNDS=20
fi

# wait_lines FILE REGEX N: until N lines of FILE match (30 s at most).
wait_lines() {
	local i
	for ((i = 0; i < 1500; i++)); do
		[ "$(grep -cE -- "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.02
	done
	fail "timed out waiting for $3 lines /$2/ in $1: $(grep -cE -- "$2" "$1") came"
}

# trust_attach NAME [ARGS...]: recorder-attach -p $TARGET_PID ARGS (attach_named).
trust_attach() {
	local name=$1
	shift
	attach_named "$name" -p "$TARGET_PID" "$@"
}

# inflight_start NAME PROGRAM: starts PROGRAM 150 (a request sleeps 150 ms), its
# output in $T/NAME.out; its pid in NAME_PID.
inflight_start() {
	: >"$T/$1.out"
	"$2" 150 >"$T/$1.out" 2>"$T/$1.err" &
	BG_PIDS+=($!)
	wait_for "$T/$1.out" '^([a-z-]+: )?pid [0-9]+' || { cat "$T/$1.err"; return 1; }
	printf -v "${1}_PID" %s "$(sed -nE 's/^([a-z-]+: )?pid ([0-9]+).*/\2/p' "$T/$1.out" | head -1)"
}

# inflight_check NAME ROUND: every recording of NAME that the attach saw got its one
# event and was retired: the one in flight at the attach too (it showed seen 0,
# live for ever, its event counted as retired_events).
inflight_check() {
	local pid=${1}_PID list n bad
	# What threads asleep hold is collected by the read itself.
	list=$($B/recorder-tail -p "${!pid}" --list --json) ||
		fail "round $2 ($1): recorder-tail --list failed; recorder-attach said: $(cat "$T/attach.out" "$T/attach.err")" ||
		return 1
	n=$(jq -s 'length' <<<"$list")
	[ "$n" -ge 3 ] || fail "round $2 ($1): $n recordings listed, want at least 3:
$list" || return 1
	bad=$(jq -c 'select(.state != "retired" or .seen != 1 or .delivered != 1)' <<<"$list")
	[ -z "$bad" ] || fail "round $2 ($1): recordings not seen once and retired:
$bad
all of them:
$list
$($B/recorder-tail -p "${!pid}" --stats)" || return 1
	n=$($B/recorder-tail -p "${!pid}" --stats --json | jq '.counters.retired_events')
	[ "$n" = 0 ] ||
		fail "round $2 ($1): retired_events $n: an event of a live recording taken for one after its free"
}

# The request in flight at an attach (issue 35, item 0), in C (inflight) and in
# Rust (rust-inflight, the layer on a registry), TRUST_ROUNDS times: one
# recorder-attach for both each time, attached while a request of each sleeps
# inside its recording; a few more requests run, then they stop between two.
test_inflight_request_at_attach_keeps_its_events() {
	local round name pid last
	mkdir -p "$T/dumps"
	inflight_start c "$INFLIGHT" && inflight_start rust "$B/rust/release/rust-inflight" ||
		return 1
	declare -A lastreq=([c]=0 [rust]=0)
	for ((round = 1; round <= TRUST_ROUNDS; round++)); do
		for name in c rust; do
			pid=${name}_PID
			kill -USR1 "${!pid}"
			wait_for "$T/$name.out" "^request $((lastreq[$name] + 1))\$" 20 || return 1
		done
		: >"$T/attach.out"
		$B/recorder-attach $RECORDER_ATTACH_FLAGS -p "$c_PID" -p "$rust_PID" \
			--dump-dir "$T/dumps" >"$T/attach.out" 2>"$T/attach.err" &
		BG_PIDS+=($!)
		attach_PID=$!
		wait_lines "$T/attach.out" '^attached to' 2 || { cat "$T/attach.err"; return 1; }
		# Two requests wholly after the attach, then a stop between two requests.
		for name in c rust; do
			last=$(sed -n 's/^request //p' "$T/$name.out" | tail -1)
			wait_for "$T/$name.out" "^request $((last + 2))\$" 20 || return 1
			pid=${name}_PID
			kill -USR2 "${!pid}"
		done
		for name in c rust; do
			wait_lines "$T/$name.out" '^idle [0-9]+$' "$round" || return 1
			lastreq[$name]=$(sed -n 's/^idle //p' "$T/$name.out" | tail -1)
			inflight_check "$name" "$round" || return 1
		done
		stop_named attach || return 1
	done
}

# load_round N: starts a burst of the server's load; returns once it has begun.
load_round() {
	kill -USR2 "$TARGET_PID"
	wait_for "$T/target.out" "^load $1\$" 20
}

# trust_check NAME ROUND WAY: after a burst of load, recorder-attach NAME saw it exactly:
# no span open on the idle server, no malformed record, no exit unmatched or out
# of order, no depth overflow; span:*>1s fired for the slow request's 3 spans (the
# connection's recording span, command and lookup), each saved, and for nothing
# else (a phantom open span would fire it too).
trust_check() {
	local name=$1 round=$2 stacks stats trig="" why=" " i
	# Snapshots are written a moment (--trigger-after) after they fire: waited for.
	for ((i = 0; i < 250; i++)); do
		trig=$($B/recorder-tail -p "$TARGET_PID" --triggers --json) ||
			fail "round $round ($name): recorder-tail --triggers failed" || return 1
		[ "$(jq -r '"\(.fired) \(.saved)"' <<<"$trig")" = "3 3" ] && break
		sleep 0.04
	done
	stacks=$($B/recorder-tail -p "$TARGET_PID" --stacks) ||
		fail "round $round ($name): recorder-tail --stacks failed" || return 1
	stats=$($B/recorder-tail -p "$TARGET_PID" --stats --json) ||
		fail "round $round ($name): recorder-tail --stats failed" || return 1
	[ -z "$stacks" ] || why+=" spans open on the idle server;"
	[ "$(jq '.counters.depth_overflow' <<<"$stats")" = 0 ] || why+=" depth overflows;"
	# A malformed record (a span whose enter came after its exit) or an exit
	# unmatched or out of order: the collecting iterator and the thread's own
	# flush walked the thread's stack at the same time (issue 35, session 27:
	# 1 to 3 rounds of 20 on the batch path before the walk queue).
	[ "$(jq '.malformed' <<<"$stats")" = 0 ] || why+=" malformed records;"
	[ "$(jq -c '.counters | [.exit_unmatched, .exit_out_of_order]' <<<"$stats")" = "[0,0]" ] ||
		why+=" exits unmatched or out of order;"
	echo "round $round ($3): malformed $(jq '.malformed' <<<"$stats"), exit_unmatched and exit_out_of_order $(jq -c '.counters | [.exit_unmatched, .exit_out_of_order]' <<<"$stats"), batch_deferred and batch_queued $(jq -c '.counters | [.batch_deferred, .batch_queued]' <<<"$stats")"
	[ "$(jq -r '"\(.fired) \(.saved)"' <<<"$trig")" = "3 3" ] ||
		why+=" span:*>1s did not fire and save for the slow request's 3 spans alone;"
	[ "$why" = " " ] && return 0
	fail "round $round ($name):$why
--stacks:
$stacks
--triggers:
$trig
--stats:
$($B/recorder-tail -p "$TARGET_PID" --stats)
recorder-attach's stderr:
$(cat "$T/$name.err")"
}

# One attach of the server mid-load, in the way ROUND picks, then its slow request,
# the end of the load and the checks. Ways: a first attach; a kill -9 of a
# recorder-attach and a new one at once; a SIGTERM and a new one at once; a
# hand-over from one to another (the second waits, then takes over); two
# --binary, the server's the second.
RULES=(--trigger 'span:*>1s' --trigger-cooldown 0)
trust_round() {
	local round=$1 way=$2 now=attach
	load_round "$round" || return 1
	case "$way" in
	first)
		trust_attach attach "${RULES[@]}" || return 1
		;;
	kill9 | term)
		trust_attach old "${RULES[@]}" || return 1
		[ "$way" = kill9 ] && stop_named old KILL
		[ "$way" = term ] && stop_named old TERM
		trust_attach attach "${RULES[@]}" || return 1
		;;
	handover)
		# -p holds it; a --binary one waits beside it and takes it over when -p stops.
		trust_attach old "${RULES[@]}" || return 1
		: >"$T/attach.out"
		: >"$T/attach.err"
		$B/recorder-attach $RECORDER_ATTACH_FLAGS --binary "$MTSERVER" --dump-dir "$T/dumps" \
			"${RULES[@]}" >"$T/attach.out" 2>"$T/attach.err" &
		BG_PIDS+=($!)
		attach_PID=$!
		wait_for "$T/attach.err" "^recorder-attach: pid $TARGET_PID is held by recorder-attach $old_PID" 30 ||
			return 1
		stop_named old TERM || return 1
		wait_for "$T/attach.err" "^recorder-attach: pid $TARGET_PID handed back by recorder-attach $old_PID" 30 ||
			return 1
		;;
	binaries)
		# Two --binary, the server the second: its process, adopted while
		# the second's links are attached, is not ready before they all are,
		# whatever the first's are (item 4).
		attach_named attach --binary "$INFLIGHT" --binary "$MTSERVER" "${RULES[@]}" || return 1
		wait_lines "$T/attach.out" '^attached to' 2 || return 1
		;;
	esac
	# The slow request comes after the attach, during the load; then the load ends.
	kill -USR1 "$TARGET_PID"
	wait_for "$T/target.out" "^slow $round\$" 30 || return 1
	kill -USR2 "$TARGET_PID"
	wait_for "$T/target.out" "^idle $round\$" 30 || return 1
	trust_check "$now" "$round" "$way" || return 1
	stop_named attach TERM
}

# Attaches made in the middle of a multi-threaded server's load (4 worker threads,
# 8 connections, nested spans per request), TRUST_ROUNDS of them, among them
# restarts after a kill -9, restarts after a SIGTERM, hand-overs and a --binary
# that is not the first.
test_attach_under_load_leaves_no_phantom_span() {
	local round way
	mkdir -p "$T/dumps"
	start_target "$MTSERVER" || return 1
	wait_ready 10 || return 1
	for ((round = 1; round <= TRUST_ROUNDS; round++)); do
		case $((round % 5)) in
		1) way=kill9 ;;
		2) way=term ;;
		3) way=handover ;;
		4) way=binaries ;;
		*) way=first ;;
		esac
		trust_round "$round" "$way" || fail "round $round: $way" || return 1
	done
}

# A --binary recorder-attach that stops while two busy processes of its file run
# lets each go once. A process let go is untraced in BPF and says hello again at
# its next probe; the last drain of the next one let go took it back, and so on
# for as long as they hit probes (dozens of "tracing pid" lines, each a lock and
# a socket taken again on the way out). 3 rounds.
test_binary_stop_adopts_nothing_on_its_way_out() {
	local round i pids=() n
	for ((round = 1; round <= 3; round++)); do
		pids=()
		for i in 1 2; do
			: >"$T/mt$i.out"
			"$MTSERVER" >"$T/mt$i.out" 2>&1 &
			BG_PIDS+=($!)
			pids+=($!)
			wait_for "$T/mt$i.out" '^ready' 10 || return 1
			kill -USR2 "${pids[-1]}"
			wait_for "$T/mt$i.out" '^load 1$' 10 || return 1
		done
		attach_named attach --binary "$MTSERVER" || return 1
		for i in 0 1; do
			wait_for "$T/attach.out" "^recorder-attach: tracing pid ${pids[i]} " 20 || return 1
		done
		stop_named attach TERM || return 1
		for i in 0 1; do
			n=$(grep -c "^recorder-attach: tracing pid ${pids[i]} " "$T/attach.out")
			[ "$n" = 1 ] ||
				fail "round $round: pid ${pids[i]} adopted $n times, not once: $(sort "$T/attach.out" | uniq -c)" ||
				return 1
		done
		kill -KILL "${pids[@]}"
		for i in 0 1; do
			wait_gone "${pids[i]}" || return 1
		done
	done
}
