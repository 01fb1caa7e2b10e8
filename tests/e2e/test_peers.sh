# SPDX-License-Identifier: MIT
# Peers on the same probes (issue 22): bpftrace or perf attached beside
# recorder-attach, before it is attached or in the middle of a run, and gone
# again, must cost it no event. A peer arms the same semaphores; only
# recorder-attach's own tracer word (docs/probe-abi.md, "The attach block")
# makes the target take the batch path and say rec_is_attached(). Each round
# checks, per recording, seen = what the workload emitted after it was told it
# was attached, and seen = delivered + dropped.

# The workload of a round: 2 threads x 2 recordings, 10,000 events each at
# 20,000 events/s a thread, so about a second of events.
PEER_EVENTS=10000
PEER_WORKLOAD="--wait-attach --threads 2 --recordings 2 --cap 1000 --events $PEER_EVENTS --rate 20000"

# peer_start DIR NAME: starts the peer NAME (see peer_round) on $PEER_PID; PEER_JOB is its pid.
peer_start() {
	local d=$1 bin=$B/workload
	case $2 in
	bpftrace)
		bpftrace -p "$PEER_PID" -e "usdt:$bin:recorder:* { @[probe] = count(); }" \
			>"$d/peer.out" 2>&1 &
		;;
	bpftrace-batch)
		bpftrace -p "$PEER_PID" -e "usdt:$bin:recorder:batch { @ = count(); }" \
			>"$d/peer.out" 2>&1 &
		;;
	perf)
		perf record -q -e sdt_recorder:event -p "$PEER_PID" -o "$d/perf.data" \
			>"$d/peer.out" 2>&1 &
		;;
	esac
	PEER_JOB=$!
	BG_PIDS+=($PEER_JOB)
}

# peer_stop: the peer goes (its probes with it). SIGTERM: a background job of a
# script ignores SIGINT, and bpftrace -p would only end with its target.
peer_stop() {
	kill -TERM "$PEER_JOB" 2>/dev/null
	wait_gone "$PEER_JOB" || kill -KILL "$PEER_JOB" 2>/dev/null
	wait "$PEER_JOB" 2>/dev/null
}

# peer_attached DIR NAME: waits until the peer's probes are in (bpftrace says so; perf: a moment).
peer_attached() {
	case $2 in
	bpftrace*) wait_for "$1/peer.out" '^Attaching [0-9]+ probe' 30 ;;
	perf) sleep 0.3 ;;
	esac
}

# peer_round DIR PEER WHEN: one workload, recorder-attach and the peer PEER.
# WHEN is "race" (the peer starts with recorder-attach, and is often attached
# before it: then its armed "attached" semaphore must not start the workload),
# "mid" (it attaches once the events flow, stays to the end) or "detach" (it
# attaches and goes again while they flow).
peer_round() {
	local d=$1 peer=$2 when=$3 attach_pid dump i
	mkdir -p "$d/dumps"
	# shellcheck disable=SC2086
	$B/workload $PEER_WORKLOAD --die exit --report "$d/report.json" >"$d/target.out" \
		2>"$d/target.err" &
	BG_PIDS+=($!)
	wait_for "$d/target.out" '^workload: pid [0-9]+' || return 1
	PEER_PID=$(awk '{print $3; exit}' "$d/target.out")
	$B/recorder-attach $RECORDER_ATTACH_FLAGS -p "$PEER_PID" --dump-dir "$d/dumps" \
		>"$d/attach.out" 2>"$d/attach.err" &
	attach_pid=$!
	BG_PIDS+=($attach_pid)
	if [ "$when" = race ]; then
		peer_start "$d" "$peer"
		peer_attached "$d" "$peer" || return 1
	fi
	wait_for "$d/attach.out" '^attached to' 30 || { cat "$d/attach.err"; return 1; }
	if [ "$when" != race ]; then
		# The workload starts once it is told it is attached: let events flow
		# first. It is stopped while the peer starts, so that a peer slow to
		# start on a loaded machine still comes in the middle of its events.
		sleep 0.2
		kill -STOP "$PEER_PID"
		peer_start "$d" "$peer"
		peer_attached "$d" "$peer" || { kill -CONT "$PEER_PID"; return 1; }
		kill -CONT "$PEER_PID"
	fi
	if [ "$when" = detach ]; then
		# And it goes while they flow (stopped again, so that it goes before the end).
		sleep 0.1
		kill -STOP "$PEER_PID"
		peer_stop
		kill -CONT "$PEER_PID"
	fi
	wait_for "$d/attach.out" "black box of pid $PEER_PID written to " 60 ||
		{ cat "$d/attach.err" "$d/target.err"; return 1; }
	peer_stop
	for ((i = 0; i < 500; i++)); do
		kill -0 "$attach_pid" 2>/dev/null || break
		sleep 0.02
	done
	[ -s "$d/report.json" ] || fail "$peer $when: the workload wrote no report" || return 1
	dump=$(sed -n "s/^recorder-attach: black box of pid $PEER_PID written to //p" \
		"$d/attach.out")
	$B/recorder-tail --file "$dump" --list --json >"$d/list.json" || return 1
	expect "$peer $when: seen = emitted, per recording" \
		"$(jq -r '.recordings[] | "\(.key) \(.emitted)"' "$d/report.json" | sort)" \
		"$(jq -r '"\(.recording) \(.seen)"' "$d/list.json" | sort)" || return 1
	expect "$peer $when: seen = delivered + dropped, per recording" "" \
		"$(jq -c 'select(.seen != .delivered + .dropped)' "$d/list.json")"
}

# peer_rounds PEER WHEN...: a round for each WHEN, each in its own directory.
peer_rounds() {
	local peer=$1 n=0 when
	shift
	for when in "$@"; do
		n=$((n + 1))
		peer_round "$T/$peer-$n" "$peer" "$when" || { echo "in round $n ($when)"; return 1; }
	done
}

test_bpftrace_beside_recorder_loses_no_event() {
	peer_rounds bpftrace race mid detach race mid detach race mid detach race
}

test_bpftrace_on_batch_alone_loses_no_event() {
	peer_rounds bpftrace-batch race mid detach
}

test_perf_on_event_loses_no_event() {
	local out
	# perf probe needs tracefs; "File exists" for all but the first site is perf 6.1's way.
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing ||
		fail "cannot mount tracefs for perf probe" || return 1
	perf probe -d 'sdt_recorder:*' >/dev/null 2>&1
	out=$(perf probe -x "$(realpath "$B/workload")" -a sdt_recorder:event 2>&1)
	grep -q 'sdt_recorder:event' <<<"$(perf probe -l 2>/dev/null)" ||
		fail "perf probe added no sdt_recorder:event: $out" || return 1
	peer_rounds perf race mid detach
	local rc=$?
	perf probe -d 'sdt_recorder:*' >/dev/null 2>&1
	return $rc
}
