# SPDX-License-Identifier: MIT
# recorder-tail --otlp: events as OpenTelemetry log records to a real HTTP
# receiver (tests/otlp/receiver.py) that checks the OTLP/JSON shape field by
# field and answers 503 first, to prove the retry.

# otlp_receiver [ARGS...]: starts the receiver; sets OTLP_URL.
otlp_receiver() {
	python3 tests/otlp/receiver.py --port-file "$T/otlp.port" --out "$T/otlp.out" \
		--errors "$T/otlp.err" "$@" >"$T/receiver.log" 2>&1 &
	BG_PIDS+=($!)
	wait_for "$T/otlp.port" '^[0-9]+$' || return 1
	OTLP_URL="http://127.0.0.1:$(cat "$T/otlp.port")"
}

test_otlp_logs_live_and_dump_with_a_retry() {
	local out
	otlp_receiver --fail-first 1 --retry-after 1 || return 1
	start_target $SCENARIO all_fields || return 1
	attach "$TARGET_PID" || return 1
	wait_for "$T/target.out" '^ready' || return 1
	out=$(rtail --otlp "$OTLP_URL" 2>&1) || fail "recorder-tail --otlp failed: $out" || return 1
	[[ $out == *"answered 503; retrying in 1000 ms"* ]] ||
		fail "the 503 was not retried after its Retry-After: $out" || return 1
	[[ $out == *"6 of 6 log records delivered to $OTLP_URL/v1/logs in 2 requests (1 retries)"* ]] ||
		fail "unexpected summary: $out" || return 1
	[ ! -s "$T/otlp.err" ] || fail "the receiver refused a request: $(cat "$T/otlp.err")" || return 1
	expect "each event once, in order, with its severity" \
		"INFO all types|INFO strings|WARN warned|ERROR failed|DEBUG debugging|TRACE tracing" \
		"$(jq -r '"\(.severity) \(.body)"' "$T/otlp.out" | paste -sd'|')" || return 1
	expect "seqs as decimal strings" "0 1 2 3 4 5" \
		"$(jq -r '.attributes["recorder.seq"]' "$T/otlp.out" | paste -sd' ')" || return 1
	expect "fields as typed attributes" '"-42" "42" 1.5 true "text"' \
		"$(jq -c '.attributes | .i, .u, .f, .b, .s' "$T/otlp.out" | head -5 | paste -sd' ')" || return 1
	expect "service.name is the process's comm" "scenario" "$(jq -r .service "$T/otlp.out" | sort -u)" ||
		return 1
	expect "one trace for the recording" 1 "$(jq -r .traceId "$T/otlp.out" | sort -u | wc -l)" ||
		return 1
	# The black box, with a filter and a service name.
	local dump
	dump=$(rtail --dump) || return 1
	: >"$T/otlp.out"
	out=$($B/recorder-tail --file "$dump" --otlp "$OTLP_URL/" --level warn --service-name box 2>&1) ||
		fail "--otlp on a dump failed: $out" || return 1
	expect "the dump's warnings, as service box" "box WARN warned|box ERROR failed" \
		"$(jq -r '"\(.service) \(.severity) \(.body)"' "$T/otlp.out" | paste -sd'|')"
}

test_otlp_follow_sends_new_events_once() {
	otlp_receiver || return 1
	start_target $SCENARIO ticks || return 1
	attach "$TARGET_PID" || return 1
	wait_for "$T/target.out" '^ticking' || return 1
	$B/recorder-tail -p "$TARGET_PID" --follow --otlp "$OTLP_URL" >"$T/tail.out" 2>"$T/tail.err" &
	local tp=$! n
	BG_PIDS+=($tp)
	wait_for "$T/otlp.out" '"recorder.seq": "0"' 10 || return 1
	for n in 1 2 3; do
		kill -USR1 "$TARGET_PID"
		wait_for "$T/otlp.out" "\"recorder.seq\": \"$n\"" 10 || return 1
	done
	stop_target
	wait "$tp"
	expect "every tick once" "0 1 2 3" \
		"$(jq -r '.attributes["recorder.seq"]' "$T/otlp.out" | paste -sd' ')"
}

test_otlp_bad_urls_and_unreachable_receivers() {
	local out rc
	start_target $SCENARIO all_fields || return 1
	attach "$TARGET_PID" || return 1
	wait_for "$T/target.out" '^ready' || return 1
	out=$(rtail --otlp https://127.0.0.1:4318 2>&1)
	expect "https" "recorder-tail: invalid --otlp 'https://127.0.0.1:4318': https is not supported: use http://" \
		"$out" || return 1
	out=$(rtail --otlp http://127.0.0.1:4318 --list 2>&1)
	[[ $out == *"--otlp sends events: it does not go with --list"* ]] || fail "--otlp --list: $out" ||
		return 1
	# Nothing listens on port 1: a bounded number of tries, then a count of what was lost.
	out=$(rtail --otlp http://127.0.0.1:1 2>&1)
	rc=$?
	expect "unreachable: exit status" 1 "$rc" || return 1
	[[ $out == *"giving up on 6 log records after 6 tries to http://127.0.0.1:1/v1/logs: cannot connect to 127.0.0.1:1: Connection refused"* ]] ||
		fail "unreachable receiver: $out" || return 1
	[[ $out == *"0 of 6 log records delivered"*"6 refused or unreachable"* ]] ||
		fail "no count of what was not delivered: $out"
}

test_otlp_attach_sends_every_event_to_the_end() {
	otlp_receiver --fail-first 1 --retry-after 0 || return 1
	start_target $SCENARIO ticks || return 1
	$B/recorder-attach -p "$TARGET_PID" --dump-dir "$T/dumps" --otlp "$OTLP_URL" >"$T/attach.out" \
		2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	wait_for "$T/attach.out" '^attached to' || { cat "$T/attach.err"; return 1; }
	wait_for "$T/target.out" '^ticking' || return 1
	local n
	for n in 1 2 3; do
		kill -USR1 "$TARGET_PID"
		wait_for "$T/otlp.out" "\"recorder.seq\": \"$n\"" 10 || { cat "$T/attach.err"; return 1; }
	done
	kill -9 "$TARGET_PID"
	wait "$ATTACH_PID"
	expect "recorder-attach's exit status" 0 $? || { cat "$T/attach.err"; return 1; }
	expect "every tick once, the 503 retried" "0 1 2 3" \
		"$(jq -r '.attributes["recorder.seq"]' "$T/otlp.out" | paste -sd' ')" || return 1
	grep -q "recorder-attach: OTLP for pid $TARGET_PID: 4 of 4 log records delivered to $OTLP_URL/v1/logs" \
		"$T/attach.err" || fail "no delivery summary: $(cat "$T/attach.err")" || return 1
	[ ! -s "$T/otlp.err" ] || fail "the receiver refused a request: $(cat "$T/otlp.err")"
}
