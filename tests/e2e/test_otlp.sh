# SPDX-License-Identifier: MIT
# recorder-tail --otlp: events as OpenTelemetry log records to a real HTTP
# receiver (tests/otlp/receiver.py) that checks the OTLP/JSON shape field by
# field and answers 503 first, to prove the retry.

# Export to receivers (retries, bad receivers, the official schemas): the same on either path; the exports of recorder-attach itself (otlp_attach_*) run on both.
batch_path_only otlp_logs_live_and_dump_with_a_retry otlp_follow_sends_new_events_once otlp_hanging_garbage_and_unresolvable_receivers otlp_logs_pass_the_official_schema otlp_traces_pass_the_receiver_and_the_official_schema otlp_real_spans_to_traces

# otlp_receiver [ARGS...]: starts the receiver; sets OTLP_URL and RECEIVER_PID.
otlp_receiver() {
	python3 tests/otlp/receiver.py --port-file "$T/otlp.port" --out "$T/otlp.out" \
		--errors "$T/otlp.err" "$@" >"$T/receiver.log" 2>&1 &
	RECEIVER_PID=$!
	BG_PIDS+=($!)
	wait_for "$T/otlp.port" '^[0-9]+$' || return 1
	OTLP_URL="http://127.0.0.1:$(cat "$T/otlp.port")"
}

test_otlp_logs_live_and_dump_with_a_retry() {
	local out
	otlp_receiver --fail-first 1 --retry-after 1 || return 1
	start_target $SCENARIO all_fields || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	out=$(rtail --otlp "$OTLP_URL" 2>&1) || fail "recorder-tail --otlp failed: $out" || return 1
	[[ $out == *"answered 503; retrying in 1000 ms"* ]] ||
		fail "the 503 was not retried after its Retry-After: $out" || return 1
	# The scenario's one span goes to /v1/traces in a request of its own.
	[[ $out == *"6 of 6 log records delivered to $OTLP_URL/v1/logs in 3 requests (1 retries); 1 of 1 spans delivered to $OTLP_URL/v1/traces (0 not delivered)"* ]] ||
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

# recorder-tail's checks of --otlp URLs and receivers: not the event path.
batch_path_only otlp_bad_urls_and_unreachable_receivers

test_otlp_bad_urls_and_unreachable_receivers() {
	local out rc
	start_target $SCENARIO all_fields || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
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
	# The exporter follows inside recorder-attach, not through its control socket
	# (issue 36): this --stats is the socket's one client, connected and accepted.
	expect "the control socket's clients" "1 1" \
		"$(rtail --stats --json | jq -r '"\(.clients.connected) \(.clients.accepted)"')" || return 1
	kill -9 "$TARGET_PID"
	wait "$ATTACH_PID"
	expect "recorder-attach's exit status" 0 $? || { cat "$T/attach.err"; return 1; }
	expect "every tick once, the 503 retried" "0 1 2 3" \
		"$(jq -r '.attributes["recorder.seq"]' "$T/otlp.out" | paste -sd' ')" || return 1
	grep -q "recorder-attach: OTLP for pid $TARGET_PID: 4 of 4 log records delivered to $OTLP_URL/v1/logs" \
		"$T/attach.err" || fail "no delivery summary: $(cat "$T/attach.err")" || return 1
	[ ! -s "$T/otlp.err" ] || fail "the receiver refused a request: $(cat "$T/otlp.err")"
}

# Bad input (issue 13): a receiver that accepts and never answers, an endpoint
# that is not HTTP, a host that does not resolve. Each is a clear error naming
# the URL and what failed, after a bounded wait (--otlp-timeout, --otlp-tries),
# and a count of what was not delivered.
test_otlp_hanging_garbage_and_unresolvable_receivers() {
	local out rc tp
	start_target $SCENARIO all_fields || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	out=$(rtail --otlp http://127.0.0.1:1 --otlp-timeout 5x 2>&1)
	[[ $out == *"invalid --otlp-timeout '5x': expected a duration from 1ms to 10m"* ]] ||
		fail "--otlp-timeout 5x: $out" || return 1
	out=$($B/recorder-attach -p "$TARGET_PID" --otlp http://127.0.0.1:1 --otlp-tries 0 2>&1)
	[[ $out == *"invalid --otlp-tries '0': expected 1 to 100"* ]] ||
		fail "--otlp-tries 0: $out" || return 1
	otlp_receiver --mode hang || return 1
	local hang=$OTLP_URL
	out=$(rtail --otlp "$hang" --otlp-timeout 300ms --otlp-tries 2 2>&1)
	rc=$?
	expect "hanging receiver: exit status" 1 "$rc" || return 1
	[[ $out == *"giving up on 6 log records after 2 tries to $hang/v1/logs: no reply from 127.0.0.1:"*": timed out waiting for its answer"* ]] ||
		fail "hanging receiver: $out" || return 1
	[[ $out == *"0 of 6 log records delivered to $hang/v1/logs in 4 requests (2 retries); not delivered: 6 refused or unreachable, 0 not sent by recorder-attach (read too slowly); 0 of 1 spans delivered to $hang/v1/traces (1 not delivered)"* ]] ||
		fail "hanging receiver: no count of what was not delivered: $out" || return 1
	expect "the hanging receiver saw both tries of each request" 4 "$(wc -l <"$T/otlp.out")" ||
		return 1
	# --follow: the same bounded wait, then it goes on, and counts at the end.
	$B/recorder-tail -p "$TARGET_PID" --follow --otlp "$hang" --otlp-timeout 300ms --otlp-tries 2 \
		>"$T/tail.out" 2>"$T/tail.err" &
	tp=$!
	BG_PIDS+=($tp)
	wait_for "$T/tail.err" "giving up on 6 log records after 2 tries" 20 || return 1
	rm -f "$T/otlp.port"
	otlp_receiver --mode garbage || return 1
	local garbage=$OTLP_URL
	out=$(rtail --otlp "$garbage" --otlp-tries 3 2>&1)
	rc=$?
	expect "not HTTP: exit status" 1 "$rc" || return 1
	[[ $out == *"giving up on 6 log records after 1 try to $garbage/v1/logs: 127.0.0.1:"*" did not answer with HTTP (it sent something else)"* ]] ||
		fail "endpoint that is not HTTP: $out" || return 1
	out=$(rtail --otlp http://no-such-host.invalid:4318 --otlp-tries 2 2>&1)
	rc=$?
	expect "unresolvable host: exit status" 1 "$rc" || return 1
	[[ $out == *"to http://no-such-host.invalid:4318/v1/logs: cannot resolve no-such-host.invalid: "* ]] ||
		fail "unresolvable host: $out" || return 1
	[[ $out == *"0 of 6 log records delivered"*"6 refused or unreachable"* ]] ||
		fail "unresolvable host: no count: $out" || return 1
	stop_target
	wait "$tp"
	expect "--follow to a hanging receiver: exit status" 1 $? || return 1
	grep -q "recorder-tail: OTLP: 0 of 6 log records delivered to $hang/v1/logs.*6 refused or unreachable" \
		"$T/tail.err" || fail "--follow: no count: $(cat "$T/tail.err")"
}

# recorder-attach --otlp to a receiver that hangs: the ring consumer goes on.
# Every tick is recorded and recorder-tail answers with the tail while the
# OTLP follower waits on the network; what it could not deliver is counted:
# refused or unreachable + not sent to it (too slow) = every event.
test_otlp_attach_hanging_receiver_never_blocks_the_ring() {
	local n out
	otlp_receiver --mode hang || return 1
	start_target $SCENARIO ticks || return 1
	$B/recorder-attach $RECORDER_ATTACH_FLAGS -p "$TARGET_PID" --dump-dir "$T/dumps" \
		--otlp "$OTLP_URL" --otlp-timeout 10m --otlp-tries 1 --follow-buffer 4096 \
		>"$T/attach.out" 2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	wait_for "$T/attach.out" '^attached to' || { cat "$T/attach.err"; return 1; }
	wait_for "$T/target.out" '^ticking' || return 1
	# The follower has sent tick 0 and waits for an answer that never comes.
	wait_for "$T/otlp.out" '^connection' 10 || return 1
	# cap + 20 ticks in all, one at a time: every one is seen and delivered
	# (seen = kept + dropped, none dropped), the tail keeps the last cap.
	local cap last
	cap=$(rtail --list --json | jq .cap)
	last=$((cap + 19))
	for n in $(seq 1 "$last"); do
		kill -USR1 "$TARGET_PID"
		for _ in $(seq 500); do
			[ "$(rtail --list --json | jq .seen)" = $((n + 1)) ] && break
			sleep 0.01
		done
	done
	expect "every tick recorded, none dropped, the last cap in the tail" \
		"$((cap + 20)) $((cap + 20)) 0 $cap" \
		"$(rtail --list --json | jq -r '"\(.seen) \(.kept) \(.dropped) \(.tail)"')" || return 1
	expect "recorder-tail answers with the tail" "$(seq 20 "$last" | paste -sd' ')" \
		"$(rtail --json | jq -r .fields.n | paste -sd' ')" || return 1
	expect "the follower is still waiting on its one request" 1 "$(wc -l <"$T/otlp.out")" || return 1
	# The receiver goes away; the follower's request fails, the rest is refused.
	kill "$RECEIVER_PID"
	wait "$RECEIVER_PID" 2>/dev/null
	kill -9 "$TARGET_PID"
	wait "$ATTACH_PID"
	expect "recorder-attach's exit status" 1 $? || { cat "$T/attach.err"; return 1; }
	out=$(grep "recorder-attach: OTLP for pid $TARGET_PID: 0 of " "$T/attach.err") ||
		fail "no delivery summary: $(cat "$T/attach.err")" || return 1
	local records not_sent slow
	records=$(sed -nE 's/.*: 0 of ([0-9]+) log records delivered.*/\1/p' <<<"$out")
	not_sent=$(sed -nE 's/.*not delivered: ([0-9]+) refused or unreachable.*/\1/p' <<<"$out")
	slow=$(sed -nE 's/.*, ([0-9]+) not sent by recorder-attach.*/\1/p' <<<"$out")
	[ -n "$slow" ] || fail "no count of events not sent to the follower: $out" || return 1
	# (The socket holds this many records, so the follower usually misses none.)
	expect "not delivered + not sent = every tick" "$((cap + 20)) $records" \
		"$((not_sent + slow)) $not_sent" || { echo "$out"; return 1; }
}

# schema_check KIND FILE: tests/otlp/schema-check.js, the generated OTLP types
# of the official @opentelemetry/otlp-transformer (tools/install-npm.sh).
schema_check() {
	node tests/otlp/schema-check.js "$1" "$2" 2>&1
}

# expect_refused KIND FILE: each jq edit of the caller's broken array, made to
# FILE (a payload of ours), must be refused by the official schema with the
# caller's why of the same index; a span payload by our receiver too.
expect_refused() {
	local kind=$1 raw=$2 i
	for i in "${!broken[@]}"; do
		jq -c "${broken[$i]}" "$raw" >"$T/broken.json" || return 1
		expect "refused: ${broken[$i]}" "${why[$i]}" "$(schema_check "$kind" "$T/broken.json")" ||
			return 1
		[ "$kind" = logs ] || ! python3 tests/otlp/receiver.py --check "$kind" "$T/broken.json" >/dev/null ||
			{ fail "the receiver passed ${broken[$i]}"; return 1; }
	done
	return 0
}

# A third-party schema checks us too: one real payload of ours passes the
# official package's OTLP message types, and payloads broken one way each
# (a string enum, a short traceId, a field OTLP does not have, a 64-bit
# integer that is not a number, an ID in base64) are refused.
test_otlp_logs_pass_the_official_schema() {
	local out
	otlp_receiver --raw "$T/raw.json" || return 1
	start_target $SCENARIO all_fields || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	out=$(rtail --otlp "$OTLP_URL" 2>&1) || fail "recorder-tail --otlp failed: $out" || return 1
	expect "ours passes" "ok: 1 requests, 6 logRecords" "$(schema_check logs "$T/raw.json")" ||
		return 1
	local rec='.resourceLogs[0].scopeLogs[0].logRecords[0]'
	local broken=(
		"$rec.severityNumber |= tostring"
		"$rec.traceId |= .[2:]"
		"$rec.severity = 9"
		"$rec.timeUnixNano = \"soon\""
		"$rec.attributes[0].value = {intValue: \"4x2\"}"
		"$rec.spanId = \"AAAAAAAAAAE=\""
	)
	local why=(
		"refused: request 1: resourceLogs.scopeLogs.logRecords.severityNumber: enum value expected"
		"refused: request 1.resourceLogs[0].scopeLogs[0].logRecords[0].traceId: 15 bytes, not 16"
		"refused: request 1.resourceLogs[0].scopeLogs[0].logRecords[0].severity: not a field of opentelemetry.proto.logs.v1.LogRecord"
		"refused: request 1: resourceLogs.scopeLogs.logRecords.timeUnixNano: integer|Long expected"
		"refused: request 1: resourceLogs.scopeLogs.logRecords.attributes.value.intValue: integer|Long expected"
		"refused: request 1.resourceLogs[0].scopeLogs[0].logRecords[0].spanId: \"AAAAAAAAAAE=\" is not lower-case hex"
	)
	expect_refused logs "$T/raw.json"
}

# Spans to /v1/traces, the cases a live target does not easily give (a span
# entered before the attach, a 503 on /v1/traces): synthetic span views go
# through the real backend and exporter (tests/unit/test_otlp,
# traces_to_a_receiver) to the real receiver, which checks them field by
# field, and then through the official schema; broken spans are refused.
test_otlp_traces_pass_the_receiver_and_the_official_schema() {
	local out
	otlp_receiver --fail-first 1 --retry-after 0 --raw-traces "$T/traces.json" || return 1
	out=$(REC_OTLP_TRACES_URL=$OTLP_URL $B/tests/unit/test_otlp 2>&1) ||
		fail "sending synthetic spans failed: $out" || return 1
	[[ $out == *"test_otlp: 0 of 0 log records delivered to $OTLP_URL/v1/logs in 2 requests (1 retries); 3 of 3 spans delivered to $OTLP_URL/v1/traces (0 not delivered)"* ]] ||
		fail "no summary of the spans: $out" || return 1
	[ ! -s "$T/otlp.err" ] || fail "the receiver refused spans: $(cat "$T/otlp.err")" || return 1
	expect "the spans as the receiver read them" \
		"handle 1700000000000000100 1700000000000000900 null null|handle 1700000000000000200 1700000000000000999 true null|handle 1700000000000000300 1700000000000000300 null true" \
		"$(jq -r '"\(.name) \(.start) \(.end) \(.attributes["recorder.open"]) \(.attributes["recorder.enter_unknown"])"' \
			"$T/otlp.out.spans" | paste -sd'|')" || return 1
	expect "children name the root as parent" "1 2" \
		"$(jq -r 'select(.parentSpanId == null) | .spanId' "$T/otlp.out.spans" | wc -l) $(
			jq -r --arg root "$(jq -r 'select(.parentSpanId == null) | .spanId' "$T/otlp.out.spans")" \
				'select(.parentSpanId == $root) | .spanId' "$T/otlp.out.spans" | wc -l)" || return 1
	expect "ours passes" "ok: 1 requests, 3 spans" "$(schema_check traces "$T/traces.json")" ||
		return 1
	local sp='.resourceSpans[0].scopeSpans[0].spans[1]'
	local broken=(
		"$sp.kind = \"SPAN_KIND_INTERNAL\""
		"$sp.parentSpanId |= .[4:]"
		"$sp.startTimeUnixNano = \"12:00\""
		"$sp.duration = 5"
	)
	local why=(
		"refused: request 1: resourceSpans.scopeSpans.spans.kind: enum value expected"
		"refused: request 1.resourceSpans[0].scopeSpans[0].spans[1].parentSpanId: 6 bytes, not 8"
		"refused: request 1: resourceSpans.scopeSpans.spans.startTimeUnixNano: integer|Long expected"
		"refused: request 1.resourceSpans[0].scopeSpans[0].spans[1].duration: not a field of opentelemetry.proto.trace.v1.Span"
	)
	expect_refused traces "$T/traces.json"
}

# Real spans (the "spans" scenario: 100 step spans left, "recording" and
# "held" still open) to /v1/traces, with the log records, on a live process:
# the receiver checks them field by field and the official schema reads them.
test_otlp_real_spans_to_traces() {
	local out
	otlp_receiver --raw-traces "$T/traces.json" || return 1
	start_target $SCENARIO spans || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	out=$(rtail --otlp "$OTLP_URL" 2>&1) || fail "recorder-tail --otlp failed: $out" || return 1
	# (Once in a CI run, on the per-event path, 101 of 102 came; never in 62 runs since:
	# a failure says which spans came and what the recorder counted.)
	[[ $out == *"; 102 of 102 spans delivered to $OTLP_URL/v1/traces (0 not delivered)"* ]] ||
		fail "no span summary: $out; spans received: $(jq -r .name "$T/otlp.out.spans" | sort | uniq -c |
			tr -s ' \n' ' '); the recorder's: $(rtail --stats --json | jq -c '{spans, counters}')" || return 1
	[ ! -s "$T/otlp.err" ] || fail "the receiver refused a request: $(cat "$T/otlp.err")" || return 1
	local s=$T/otlp.out.spans
	expect "100 steps left, then the two still open" \
		"100 step null|1 recording true|1 held true" \
		"$(jq -r '"\(.name) \(.attributes["recorder.open"])"' "$s" | uniq -c |
			sed -E 's/^ +//' | paste -sd'|')" || return 1
	expect "every span but the recording's has it as parent" "1 101" \
		"$(jq -r 'select(.parentSpanId == null) | .name' "$s" | wc -l) $(
			jq -r --arg r "$(jq -r 'select(.name == "recording") | .spanId' "$s")" \
				'select(.parentSpanId == $r) | .name' "$s" | wc -l)" || return 1
	expect "one trace: the log records' and the spans'" 1 \
		"$(cat <(jq -r .traceId "$T/otlp.out") <(jq -r .traceId "$s") | sort -u | wc -l)" || return 1
	# (Decimal strings of the same length compare as numbers; jq's numbers are doubles.)
	expect "the steps end no earlier than they start" 100 \
		"$(jq -r 'select(.name == "step" and (.end | length) == (.start | length) and
			.end >= .start) | .name' "$s" | wc -l)" || return 1
	expect "the official schema reads them" "ok: 1 requests, 102 spans" \
		"$(schema_check traces "$T/traces.json")"
}

# recorder-attach --otlp sends each span to /v1/traces as the thread leaves it,
# not only those of its first read.
test_otlp_attach_sends_spans_as_they_are_left() {
	otlp_receiver || return 1
	start_target $SCENARIO span_ticks || return 1
	$B/recorder-attach -p "$TARGET_PID" --dump-dir "$T/dumps" --otlp "$OTLP_URL" >"$T/attach.out" \
		2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	wait_for "$T/attach.out" '^attached to' || { cat "$T/attach.err"; return 1; }
	wait_for "$T/target.out" '^ticking' || return 1
	local n s=$T/otlp.out.spans
	for n in 1 2 3; do
		kill -USR1 "$TARGET_PID"
		wait_for "$T/otlp.out" "\"recorder.seq\": \"$n\"" 10 || { cat "$T/attach.err"; return 1; }
		for ((i = 0; i < 500; i++)); do
			[ "$(jq -r 'select(.name == "tick") | .spanId' "$s" 2>/dev/null | wc -l)" -ge "$n" ] && break
			sleep 0.02
		done
		expect "tick spans at /v1/traces after tick $n" "$n" \
			"$(jq -r 'select(.name == "tick") | .spanId' "$s" | sort -u | wc -l)" || return 1
	done
	kill -9 "$TARGET_PID"
	wait "$ATTACH_PID"
	expect "recorder-attach's exit status" 0 $? || { cat "$T/attach.err"; return 1; }
	# The 3 ticks', and the recording span the target died in, once.
	grep -q "recorder-attach: OTLP for pid $TARGET_PID: 4 of 4 log records delivered to $OTLP_URL/v1/logs.*; 4 of 4 spans delivered to $OTLP_URL/v1/traces (0 not delivered)" \
		"$T/attach.err" || fail "no delivery summary: $(cat "$T/attach.err")" || return 1
	[ ! -s "$T/otlp.err" ] || fail "the receiver refused a request: $(cat "$T/otlp.err")" || return 1
	expect "the recording span, open at the kill, once, the ticks' parent" \
		"recording true|tick null|tick null|tick null" \
		"$(jq -r '"\(.name) \(.attributes["recorder.open"])"' "$s" | sort | paste -sd'|')"
}
