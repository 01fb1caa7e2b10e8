# SPDX-License-Identifier: MIT
# The event-loop guide (docs/guide/event-loop.md): tests/targets/evloop.c,
# an epoll server with one recording per connection, driven by
# tests/targets/evloop_client.py (several connections at once, pipelined
# requests), with the real recorder-attach and recorder-tail.

EVLOOP=$B/tests/targets/evloop
EVLOOP_CLIENT=tests/targets/evloop_client.py
# Connections, requests on each, and how many of them then send QUIT.
EVLOOP_CONNS=4
EVLOOP_REQS=5
EVLOOP_QUIT=2

# evloop_run: the server attached, and the client done (QUIT connections
# closed, the others held open); sets EVLOOP_SUBJECTS, one per connection.
evloop_run() {
	start_target "$EVLOOP" 120 || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	local port
	port=$(sed -n 's/^port //p' "$T/target.out")
	python3 "$EVLOOP_CLIENT" "$port" $EVLOOP_CONNS $EVLOOP_REQS $EVLOOP_QUIT \
		>"$T/client.out" 2>"$T/client.err" &
	CLIENT_PID=$!
	BG_PIDS+=("$CLIENT_PID")
	wait_for "$T/client.out" '^done' 30 || { cat "$T/client.err"; return 1; }
	mapfile -t EVLOOP_SUBJECTS < <(awk '$1 == "conn" {print $3}' "$T/client.out")
	[ ${#EVLOOP_SUBJECTS[@]} -eq $EVLOOP_CONNS ] || fail "client connections: $(cat "$T/client.out")"
}

# The events connection I must hold, one line each: message, then its fields.
evloop_expected() {
	local i=$1 j
	echo "accepted peer=${EVLOOP_SUBJECTS[$i]}"
	for ((j = 0; j < EVLOOP_REQS; j++)); do
		echo "get key=c$i-k$j n=$((j + 1))"
	done
	[ "$i" -lt $EVLOOP_QUIT ] && echo "closed why=quit requests=$EVLOOP_REQS"
	return 0
}

# The events of recorder-tail's JSON lines (on stdin) as evloop_expected writes them.
evloop_events() {
	jq -r '.fields | "\(.message) " + (del(.message) | to_entries | map("\(.key)=\(.value)") | join(" "))'
}

# check_connections TAIL...: every connection's recording, read by "TAIL ARGS",
# holds exactly its own events, in order, numbered from 0; and its state.
check_connections() {
	local i s
	for ((i = 0; i < EVLOOP_CONNS; i++)); do
		s=${EVLOOP_SUBJECTS[$i]}
		expect "connection $i ($s): its own events, in order" "$(evloop_expected $i)" \
			"$("$@" --subject "$s" --json | evloop_events)" || return 1
		expect "connection $i: seq 0.. with no gap" \
			"$(seq 0 $(($(evloop_expected $i | wc -l) - 1)))" \
			"$("$@" --subject "$s" --json | jq .seq)" || return 1
		expect "connection $i: retired once it quit, else live" \
			"$([ $i -lt $EVLOOP_QUIT ] && echo retired || echo live)" \
			"$("$@" --subject "$s" --list --json | jq -r .state)" || return 1
	done
	expect "the loop's recording: its accept wakeups accepted every connection" \
		"$EVLOOP_CONNS" \
		"$("$@" --subject loop --json | jq -s 'map(select(.fields.message == "accept wakeup")) |
			map(.fields.accepted) | add')"
}

test_evloop_each_connection_records_its_own_requests() {
	evloop_run || return 1
	check_connections rtail || return 1
	expect "one recording per connection, and the loop's" "$((EVLOOP_CONNS + 1))" \
		"$(rtail --list --json | jq -s length)" || return 1
	# Spans: one "request" span per request line (QUIT too), inside one of
	# its connection's recording spans (entered each wakeup), and each get
	# event inside the request span of its turn.
	local i s json
	for ((i = 0; i < EVLOOP_CONNS; i++)); do
		s=${EVLOOP_SUBJECTS[$i]}
		json=$(rtail --subject "$s" --spans --json) || return 1
		expect "connection $i: a request span per request, each in a wakeup of its own" \
			"{\"requests\":$((EVLOOP_REQS + (i < EVLOOP_QUIT ? 1 : 0))),\"in_its_wakeups\":true,\"events_inside\":$EVLOOP_REQS}" \
			"$(jq -sc 'map(select(.type == "span")) as $sp |
				($sp | map(select(.name == "request"))) as $req |
				($sp | map(select(.name == "recording")) | map(.id)) as $wake |
				map(select(.type == null and .fields.message == "get")) as $gets |
				{requests: ($req | length),
				 in_its_wakeups: ($req | all(.parent as $p | $wake | index($p) != null)),
				 events_inside: ([range(0; $gets | length)] |
					map(select($gets[.].time >= $req[.].enter and
						   $gets[.].time <= $req[.].exit)) | length)}' <<<"$json")" ||
			return 1
	done
}

test_evloop_kill_9_leaves_the_open_connections_in_the_black_box() {
	evloop_run || return 1
	kill -KILL "$TARGET_PID"
	local dump
	dump=$(dump_of "$TARGET_PID") || return 1
	check_connections "$B"/recorder-tail --file "$dump" || return 1
	# Its held connections closed by the kernel, the client ends by itself.
	wait_gone "$CLIENT_PID" || fail "the client still holds its connections"
}

# A request that hangs shows in --stacks as its request span in its
# connection's recording; while the loop waits, its thread is in no span.
test_evloop_stacks_show_a_hung_request_in_its_connection() {
	start_target "$EVLOOP" 120 || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "waiting in epoll_wait: in no span" "" "$(rtail --stacks --json)" || return 1
	exec 3<>"/dev/tcp/127.0.0.1/$(sed -n 's/^port //p' "$T/target.out")" || return 1
	printf 'GET k\nHANG\n' >&3
	wait_for "$T/target.out" '^hanging ' || return 1
	local peer
	peer=$(sed -n 's/^hanging //p' "$T/target.out")
	expect "the hung request, inside its connection's recording span" \
		"{\"subject\":\"$peer\",\"stack\":[\"request\",\"recording\"]}" \
		"$(rtail --stacks --json | jq -c '{subject, stack: [.stack[].name]}')" || return 1
	expect "its events so far" "accepted get hanging" \
		"$(rtail --subject "$peer" --json | jq -r .fields.message | tr '\n' ' ' | sed 's/ $//')" ||
		return 1
	exec 3>&-
	kill -TERM "$TARGET_PID"
	wait "$TARGET_PID"
	expect "SIGTERM ends the hang, and the server stops" "0 stopped" \
		"$? $(tail -1 "$T/target.out")"
}

# The plain build (-DEVLOOP_PLAIN, tests/targets/evloop_plain.h) is the same
# server without a probe: it serves the same client, and has no recorder note.
test_evloop_plain_build_serves_without_recorder() {
	# Read whole, then matched: grep -q on the pipe would end it early, and
	# readelf's SIGPIPE fails the pipeline (pipefail).
	local notes
	notes=$(readelf -n "$EVLOOP")
	grep -q 'Provider: recorder' <<<"$notes" ||
		fail "the instrumented build has no recorder probe" || return 1
	notes=$(readelf -n "$EVLOOP-plain")
	if grep -q stapsdt <<<"$notes"; then
		fail "the plain build has probes"
		return 1
	fi
	start_target "$EVLOOP-plain" 120 || return 1
	wait_ready || return 1
	timeout 60 python3 "$EVLOOP_CLIENT" "$(sed -n 's/^port //p' "$T/target.out")" \
		$EVLOOP_CONNS $EVLOOP_REQS $EVLOOP_CONNS >"$T/client.out" 2>"$T/client.err" ||
		{ fail "the client of the plain build: $(cat "$T/client.err")"; return 1; }
	kill -TERM "$TARGET_PID"
	wait "$TARGET_PID"
	expect "it stops on SIGTERM" "0 stopped" "$? $(tail -1 "$T/target.out")" || return 1
	expect "and by itself after its SECONDS" "0 stopped" \
		"$(timeout 30 "$EVLOOP-plain" 1 >"$T/bounded.out"; echo "$? $(tail -1 "$T/bounded.out")")"
}

# A second recorder-attach after the first has gone: the loop thread's buffer
# still holds what it wrote under the first (taken by it), and the second must
# take none of it again. Without that, the connections the first client left
# open get their events twice, and those it quit count as retired events.
test_evloop_a_second_recorder_attach_takes_nothing_twice() {
	local port first
	evloop_run || return 1
	first=("${EVLOOP_SUBJECTS[@]}")
	kill -TERM "$ATTACH_PID"
	wait_gone "$ATTACH_PID" || fail "the first recorder-attach did not stop" || return 1
	attach "$TARGET_PID" || return 1
	port=$(sed -n 's/^port //p' "$T/target.out")
	# The second client quits every connection: all four retired.
	python3 "$EVLOOP_CLIENT" "$port" $EVLOOP_CONNS $EVLOOP_REQS $EVLOOP_CONNS \
		>"$T/client2.out" 2>"$T/client2.err" || { cat "$T/client2.err"; return 1; }
	mapfile -t EVLOOP_SUBJECTS < <(awk '$1 == "conn" {print $3}' "$T/client2.out")
	EVLOOP_QUIT=$EVLOOP_CONNS check_connections rtail || return 1
	expect "the first client's connections hold nothing here" "" \
		"$(for s in "${first[@]}"; do rtail --subject "$s" --json; done)" || return 1
	expect "no event of the first recorder-attach's time, and no exit, taken again" "0 0" \
		"$(rtail --stats --json | jq -r '"\(.counters.retired_events) \(.counters.exit_unmatched)"')"
}
