# SPDX-License-Identifier: MIT
# End-to-end twins of the reference recorder's six tests (shared/seed/recorder.rs):
# the same scenario in a real instrumented process, attached for real, checked
# through recorder-tail's JSON the way the seed checks json_value().

# run_scenario NAME: starts the scenario, attaches, waits until it has run. The
# program is SEED_TARGET if set (tests/e2e/test_rust.sh: the Rust twin), else scenario.c.
run_scenario() {
	start_target ${SEED_TARGET:-$SCENARIO} "$1" || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || { cat "$T/target.err"; return 1; }
}

test_events_are_recorded() {
	run_scenario events_are_recorded || return 1
	expect "tail of recording 'test'" \
'{"subject":"test","seq":0,"fields":{"message":"This event should be recorded"}}
{"subject":"test","seq":1,"fields":{"message":"another event"}}' \
		"$(rtail --json | jq -c '{subject, seq, fields}')"
}

test_last_n_entries() {
	run_scenario last_n_entries || return 1
	expect "cap 5 after 10 events keeps seq 5..9" \
'5 event 5
6 event 6
7 event 7
8 event 8
9 event 9' \
		"$(rtail --json | jq -r '"\(.seq) \(.fields.message)"')" || return 1
	expect "the list counts 10 seen, 10 kept, 0 dropped, 5 in the tail" \
		'{"subject":"test","cap":5,"seen":10,"kept":10,"dropped":0,"tail":5}' \
		"$(rtail --list --json | jq -c '{subject, cap, seen, kept, dropped, tail}')"
}

test_events_outside_span_are_not_recorded() {
	run_scenario events_outside_span_are_not_recorded || return 1
	# The recording exists and is known to the recorder; it just holds nothing.
	expect "the recording is listed with nothing seen" \
		'{"subject":"test","seen":0,"kept":0}' \
		"$(rtail --list --json | jq -c '{subject, seen, kept}')" || return 1
	expect "no events" "" "$(rtail --json)"
}

test_child_span_inherits_recorder() {
	run_scenario child_span_inherits_recorder || return 1
	expect "the child span's event goes to the parent's recording" \
		'{"subject":"test","seq":0,"fields":{"message":"Event from inner span"}}' \
		"$(rtail --json | jq -c '{subject, seq, fields}')"
}

test_recording_spans_are_isolated_across_nested_recordings() {
	run_scenario recording_spans_are_isolated_across_nested_recordings || return 1
	expect "recording A holds only event_from_a" '["event_from_a"]' \
		"$(rtail --json --subject test_a | jq -sc 'map(.fields.message)')" || return 1
	expect "recording B holds only event_from_b" '["event_from_b"]' \
		"$(rtail --json --subject test_b | jq -sc 'map(.fields.message)')" || return 1
	expect "selecting by key gives the same" '["event_from_b"]' \
		"$(rtail --json --recording "$(key_of test_b)" | jq -sc 'map(.fields.message)')"
}

test_active_spans() {
	run_scenario active_spans || return 1
	expect "one stack, leaf first, recording last" \
		'{"subject":"test","stack":["child_span","recording"]}' \
		"$(rtail --stacks --json | jq -c '{subject, stack: [.stack[].name]}')" || return 1
	# Once the spans are exited, nothing is active.
	stop_target
	expect "the target exited and recorder-attach noticed" "" \
		"$(wait_for "$T/attach.out" 'pid [0-9]+ exited' >/dev/null || echo 'no exit line')"
}
