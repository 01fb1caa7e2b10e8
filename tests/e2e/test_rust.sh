# SPDX-License-Identifier: MIT
# Rust programs (issue 27): real processes built from rust/e2e with the recorder-tracing
# layer, attached for real. The seed's six behaviours with test_seed.sh's own
# expectations; spans that cross threads; a kill -9 black box; bad input; a binary
# that mixes C and Rust. The programs are built by `make rust-e2e` into build/rust.

RUST_BIN=${RUST_BIN:-build/rust/release}
RUST_SCENARIO=$RUST_BIN/rust-scenario
RUST_MIXED=$RUST_BIN/rust-mixed

# rust_built PROGRAM...: fails, naming it, if a program is missing.
rust_built() {
	local p
	for p in "$@"; do
		[ -x "$p" ] || fail "$p is missing: run 'make rust-e2e'" || return 1
	done
}

# The seed's six, as test_seed.sh checks them, with rust-scenario as the target.
rust_seed() { # TEST_FUNCTION
	rust_built "$RUST_SCENARIO" || return 1
	SEED_TARGET=$RUST_SCENARIO "$1"
}

test_rust_events_are_recorded() { rust_seed test_events_are_recorded; }
test_rust_last_n_entries() { rust_seed test_last_n_entries; }
test_rust_events_outside_span_are_not_recorded() { rust_seed test_events_outside_span_are_not_recorded; }
test_rust_child_span_inherits_recorder() { rust_seed test_child_span_inherits_recorder; }
test_rust_recording_spans_are_isolated_across_nested_recordings() {
	rust_seed test_recording_spans_are_isolated_across_nested_recordings
}
test_rust_active_spans() { rust_seed test_active_spans; }

# rust_run SCENARIO: starts rust-scenario SCENARIO, attaches, waits until it has run.
rust_run() {
	rust_built "$RUST_SCENARIO" || return 1
	start_target "$RUST_SCENARIO" "$1" || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || { cat "$T/target.err"; return 1; }
}

# The tid of the event whose message is $1.
tid_of_event() {
	rtail --json | jq -r --arg m "$1" 'select(.fields.message == $m) | .tid'
}

# Spans that cross threads (rust-scenario threads): a span entered on two threads at
# once; spans of thread A's recording closed and exited from thread B; a future with
# its span polled on three threads in turn. Each thread keeps its own stack.
test_rust_spans_cross_threads() {
	rust_run threads || return 1
	expect "every event in its own recording" \
'cross_a a after the foreign exit -
cross_a a inside closed_elsewhere -
cross_a a inside handed_over -
cross_b b after the foreign exit -
shared inside the shared span 0
shared inside the shared span 1
task task step 0
task task step 1
task task step 2' \
		"$(rtail --json | jq -r '"\(.subject) \(.fields.message) \(.fields.thread // .fields.step // "-")"' |
			LC_ALL=C sort)" || return 1
	expect "cross_a's events in the order thread A logged them" \
		'0 a inside closed_elsewhere
1 a inside handed_over
2 a after the foreign exit' \
		"$(rtail --json --subject cross_a | jq -r '"\(.seq) \(.fields.message)"')" || return 1
	expect "the task's steps in order, each polled on a thread of its own" \
		'0 1 2 distinct tids 3' \
		"$(rtail --json --subject task | jq -sr '"\(map(.fields.step) | map(tostring) | join(" ")) distinct tids \(map(.tid) | unique | length)"')" ||
		return 1
	# Thread A is still inside handed_over: B's exit of it was not A's. B is in its
	# own recording span alone. Both threads of the shared span are inside it. The
	# task left its span on every thread that polled it.
	expect "the stacks: one per thread, each as that thread entered it" \
'cross_a handed_over>recording
cross_b recording
shared shared_child>recording
shared shared_child>recording' \
		"$(rtail --stacks --json | jq -r '"\(.subject) \(.stack | map(.name) | join(">"))"' | LC_ALL=C sort)" ||
		return 1
	expect "the shared span's two stacks are on two threads" 2 \
		"$(rtail --stacks --json --subject shared | jq -r .tid | sort -u | grep -c .)" || return 1
	expect "B's exit of a span it was not in is counted, as a C one's" 1 \
		"$(rtail --stats --json | jq .counters.exit_unmatched)" || return 1
	expect "thread A's stack is on the thread of A's events, B's on B's" \
		"$(tid_of_event 'a after the foreign exit') $(tid_of_event 'b after the foreign exit')" \
		"$(rtail --stacks --json --subject cross_a | jq -r .tid) $(rtail --stacks --json --subject cross_b | jq -r .tid)"
}

# A Rust process killed by SIGKILL inside its spans, idle since its last events
# (which recorder-attach has seen live): the black box has those events with their
# fields, exact counts, and the stack it died in, named. The Rust layer's
# callsites are on the heap, gone with the process: on the batch path "work" is
# entered for the first time and held, and its name comes from its enter,
# read while the process lived. The per-event path sends no enter to user space
# (the documented limit, docs/probe-abi.md): there "work" was left once before,
# as a request handler's span would have been.
test_rust_kill_9_black_box() { rust_kill_9 pid; }

# The same with recorder-attach --binary, started before the program: a Rust
# process that starts later is traced, shown live and boxed as a C one is.
test_rust_binary_follows_a_new_process() { rust_kill_9 binary; }

# rust_kill_9 pid|binary: the test above, attached with -p after the start or with
# --binary before it.
rust_kill_9() {
	local scenario=blackbox_open
	[[ " $RECORDER_ATTACH_FLAGS " == *" --per-event "* ]] && scenario=blackbox
	rust_built "$RUST_SCENARIO" || return 1
	if [ "$1" = binary ]; then
		$B/recorder-attach $RECORDER_ATTACH_FLAGS --binary "$RUST_SCENARIO" --dump-dir "$T/dumps" \
			>"$T/attach.out" 2>"$T/attach.err" &
		ATTACH_PID=$!
		BG_PIDS+=($ATTACH_PID)
		wait_for "$T/attach.out" '^attached to .* in every process that runs it' ||
			{ cat "$T/attach.err"; return 1; }
		start_target "$RUST_SCENARIO" $scenario || return 1
	else
		start_target "$RUST_SCENARIO" $scenario || return 1
		attach_dumping "$TARGET_PID" || return 1
	fi
	wait_ready || { cat "$T/target.err"; return 1; }
	# A condition, bounded generously (a loaded machine): every event seen live.
	local i seen
	for ((i = 0; i < 3000; i++)); do
		seen=$(rtail --list --json | jq .seen)
		[ "$seen" = 20 ] && break
		sleep 0.02
	done
	[ "$seen" = 20 ] || fail "recorder-attach saw $seen of the 20 events in 60 s" || return 1
	kill -9 "$TARGET_PID"
	ended_box "$TARGET_PID" SIGKILL || return 1
	local dump=$DUMP
	expect "the last 10 of 20 events, the last one last" \
		"$(for n in $(seq 10 19); do echo "box $n $n $([ "$n" = 19 ] && echo true || echo false)"; done)" \
		"$($B/recorder-tail --file "$dump" --json | jq -r '"\(.subject) \(.seq) \(.fields.n) \(.fields.last)"')" ||
		return 1
	expect "every event counted: seen 20, kept 20, none dropped" \
		'{"subject":"box","cap":10,"seen":20,"kept":20,"dropped":0,"tail":10}' \
		"$($B/recorder-tail --file "$dump" --list --json | jq -c '{subject, cap, seen, kept, dropped, tail}')" ||
		return 1
	expect "the stack it died in" '{"subject":"box","stack":["work","recording"]}' \
		"$($B/recorder-tail --file "$dump" --stacks --json | jq -c '{subject, stack: [.stack[].name]}')"
}

# Bad input from Rust code: a Display that panics, a Display of 100,000 bytes, and an
# event with 11 fields. Every event is recorded and the program lives on.
test_rust_bad_input() {
	rust_run bad_input || return 1
	local json long
	json=$(rtail --json) || return 1
	expect "four events, the program unharmed" \
		'a panicking display
a huge display
eleven fields
still alive' "$(jq -r .fields.message <<<"$json")" || return 1
	expect "the panicking Display: the event kept with its other fields, the field marked" \
		'{"after":1,"bad":"<panicked>"}' \
		"$(jq -c 'select(.fields.message == "a panicking display") | {after: .fields.after, bad: .fields.bad}' \
			<<<"$json")" || return 1
	# Cut as C strings are: the first 255 bytes, marked truncated.
	long="$(printf '0123456789%.0s' $(seq 25))01234"
	expect "the huge Display: cut and marked" \
		'{"after":2,"huge":"'"$long"'","status":"truncated"}' \
		"$(jq -c 'select(.fields.message == "a huge display") |
			{after: .fields.after, huge: .fields.huge, status: .field_status.huge}' <<<"$json")" || return 1
	expect "eleven fields: the first 8 kept" \
		'{"kept":["message","f1","f2","f3","f4","f5","f6","f7"],"values":[1,2,3,4,5,6,7]}' \
		"$(jq -c 'select(.fields.message == "eleven fields") |
			{kept: (.fields | keys_unsorted), values: [.fields[] | numbers]}' <<<"$json")" || return 1
	expect "... and the other 3 counted (recorder_tracing::fields_left_out())" "fields_left_out 3" \
		"$(grep '^fields_left_out ' "$T/target.out")" || return 1
	# Counted where a user looks too: the callsite says "8+3", recorder-attach adds
	# 3 an event of it.
	expect "... and in recorder-tail --stats" "3
fields left out: 3 (of events whose callsite has more than 8: the first 8 are kept)" \
		"$(rtail --stats --json | jq .fields_left_out; rtail --stats | grep '^fields left out')" || return 1
	expect "the panic went to stderr, the process did not end" "ready" "$(tail -1 "$T/target.out")"
}

# One binary, C and Rust: one rec__current and one of each semaphore, whichever
# language defines them; both emit into one recording and stack on one thread.
test_rust_mixed_c_and_rust() {
	rust_built "$RUST_MIXED" || return 1
	local s want="" got=""
	for s in rec__current recorder_{event,span_enter,span_exit,recording_new,recording_span}_semaphore \
		recorder_{recording_free,recorder_new,recorder_free,batch,trigger,attached}_semaphore; do
		want+="$s 1"$'\n'
		got+="$s $(nm "$RUST_MIXED" | awk -v s="$s" '$3 == s' | grep -c .)"$'\n'
	done
	expect "nm: each defined once in the mixed binary" "$want" "$got" || return 1
	# The notes of both languages' sites (C's and Rust's event, span_enter and span_exit
	# sites) name that one semaphore.
	local notes
	notes=$(readelf -n "$RUST_MIXED" | awk '$1 == "Name:" { n = $2 } /Semaphore:/ { print n, $NF }')
	expect "readelf: one semaphore address per probe name" "" \
		"$(sort -u <<<"$notes" | awk '{ print $1 }' | uniq -d)" || return 1
	expect "readelf: event, span_enter and span_exit sites of both languages" "event span_enter span_exit" \
		"$(awk '{ print $1 }' <<<"$notes" | sort | uniq -c | awk '$1 >= 2 && $2 != "attached" && $2 != "batch" { print $2 }' |
			tr '\n' ' ' | sed 's/ $//')" || return 1
	start_target "$RUST_MIXED" || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || { cat "$T/target.err"; return 1; }
	expect "both languages' events, in order, in the one recording, each with its own file" \
		'mixed 0 mixed.rs from rust 0
mixed 1 mixed.c from c 1
mixed 2 mixed.c from c inside c_span 2
mixed 3 mixed.rs from rust inside c_span 3
mixed 4 mixed.c inside c_held null' \
		"$(rtail --json | jq -r '"\(.subject) \(.seq) \(.file | split("/") | last) \(.fields.message) \(.fields.n)"')" ||
		return 1
	expect "the C span inside the Rust span inside the recording, on one stack" \
		'{"subject":"mixed","stack":["c_held","rust_held","recording"]}' \
		"$(rtail --stacks --json | jq -c '{subject, stack: [.stack[].name]}')"
}

# Triggers and exports of a Rust process (rust-scenario incident): an error! fires a
# level rule and Recording::trigger() a code rule, each saving its own recording's
# story; a request's spans are in --spans and in the chrome trace.
test_rust_triggers_and_exports() {
	rust_built "$RUST_SCENARIO" || return 1
	start_target "$RUST_SCENARIO" incident || return 1
	trig_attach --trigger 'level>=error' --trigger 'code:health*' --trigger-after 0 || return 1
	wait_ready || { cat "$T/target.err"; return 1; }
	local s1 s2 s key
	s1=$(snapshot_of 1) && s2=$(snapshot_of 2) || return 1
	expect "two snapshots: the failed request's story alone, the health check's alone" \
		'code:health* health checking
level>=error req[7] step 0|step 1|request failed 503' \
		"$(for s in "$s1" "$s2"; do
			echo "$(jq -r .trigger.rule "$s") $($B/recorder-tail --file "$s" --list --json | jq -r .subject)" \
				"$($B/recorder-tail --file "$s" --json | jq -r 'select(.seq != null) |
					[.fields.message, .fields.step, .fields.status] | map(select(. != null)) | join(" ")' |
					paste -sd'|')"
		done | LC_ALL=C sort)" || return 1
	key=$(key_of 'req[3]')
	# The probe ABI has no span fields: the span's req is not recorded (as with C).
	expect "a request's spans, left in order: request (with its file), then its recording span" \
		'request scenario.rs
recording' \
		"$(rtail --recording "$key" --spans --json |
			jq -r 'select(.type == "span") | .name + (if .name == "request" then " " + (.file | split("/") | last) else "" end)')" ||
		return 1
	expect "the chrome trace draws them" '["recording","request"]' \
		"$(rtail --recording "$key" --format chrome | jq -c '[.traceEvents[] | select(.ph == "X" or .ph == "B") | .name] | unique')" ||
		return 1
	# And to OpenTelemetry, a real receiver: its events as log records, its spans as one trace.
	local out
	otlp_receiver --raw-traces "$T/traces.json" || return 1
	out=$(rtail --recording "$key" --otlp "$OTLP_URL" 2>&1) || fail "recorder-tail --otlp failed: $out" || return 1
	[[ $out == *"3 of 3 log records delivered to $OTLP_URL/v1/logs"*"2 of 2 spans delivered to $OTLP_URL/v1/traces (0 not delivered)"* ]] ||
		fail "unexpected summary: $out" || return 1
	[ ! -s "$T/otlp.err" ] || fail "the receiver refused a request: $(cat "$T/otlp.err")" || return 1
	expect "its events, with their severity and fields, from service rust-scenario" \
		'rust-scenario INFO step 0|rust-scenario INFO step 1|rust-scenario INFO request done 200' \
		"$(jq -r '"\(.service) \(.severity) \(.body) \(.attributes.step // .attributes.status)"' "$T/otlp.out" |
			paste -sd'|')" || return 1
	expect "the request span a child of the recording span, in the events' trace" "request recording 1" \
		"$(jq -r --arg r "$(jq -r 'select(.name == "recording") | .spanId' "$T/otlp.out.spans")" \
			'select(.parentSpanId == $r) | .name' "$T/otlp.out.spans") $(jq -r 'select(.parentSpanId == null) | .name' \
			"$T/otlp.out.spans") $(cat <(jq -r .traceId "$T/otlp.out") <(jq -r .traceId "$T/otlp.out.spans") |
			sort -u | wc -l)"
}

# The tests above again, with recorder's own subscriber (Recorder::subscriber()) in
# place of the layer on a registry; the target says which it installed.
rust_own() { # TEST_FUNCTION
	REC_RUST_SUBSCRIBER=own "$1" || return 1
	grep -q '^subscriber: own$' "$T/target.out" || fail "the target did not install recorder's own subscriber"
}

test_rust_own_events_are_recorded() { rust_own test_rust_events_are_recorded; }
test_rust_own_last_n_entries() { rust_own test_rust_last_n_entries; }
test_rust_own_events_outside_span_are_not_recorded() { rust_own test_rust_events_outside_span_are_not_recorded; }
test_rust_own_child_span_inherits_recorder() { rust_own test_rust_child_span_inherits_recorder; }
test_rust_own_recording_spans_are_isolated_across_nested_recordings() {
	rust_own test_rust_recording_spans_are_isolated_across_nested_recordings
}
test_rust_own_active_spans() { rust_own test_rust_active_spans; }
test_rust_own_spans_cross_threads() { rust_own test_rust_spans_cross_threads; }
test_rust_own_kill_9_black_box() { rust_own test_rust_kill_9_black_box; }
test_rust_own_binary_follows_a_new_process() { rust_own test_rust_binary_follows_a_new_process; }
test_rust_own_bad_input() { rust_own test_rust_bad_input; }
test_rust_own_mixed_c_and_rust() { rust_own test_rust_mixed_c_and_rust; }
test_rust_own_triggers_and_exports() { rust_own test_rust_triggers_and_exports; }
