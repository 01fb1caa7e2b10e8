# SPDX-License-Identifier: MIT
# Behaviour a user sees that no other test would notice if it broke: exit
# statuses, the edges of copied strings and subjects, span unlinking, the
# detached fast path, escaping of what the target wrote, unsupported probe
# sites, decimal pids.

# The JSON line of the event with this message.
event_json() {
	rtail --json | jq -c --arg m "$1" 'select(.fields.message == $m)'
}

test_exit_status_is_the_one_the_process_exited_with() {
	start_target $SCENARIO exit_3 || return 1
	attach "$TARGET_PID" || return 1
	local dump
	dump=$(dump_of "$TARGET_PID") || return 1
	expect "recorder-attach says how it ended" \
		"recorder-attach: pid $TARGET_PID exited: exited with status 3" \
		"$(grep "^recorder-attach: pid $TARGET_PID exited" "$T/attach.out")" || return 1
	expect "the black box says so, after the last event" \
		'{"how":"exit","code":3} about to exit 3' \
		"$(jq -c '.ended | {how, code}' "$dump") $($B/recorder-tail --file "$dump" --json |
			jq -r '"\(.fields.message) \(.fields.status)"')" || return 1
	expect "and so does its text" "==> pid $TARGET_PID exited with status 3 <==" \
		"$($B/recorder-tail --file "$dump" | head -1)"
}

test_copied_string_of_255_bytes_is_whole_and_256_is_marked() {
	start_target $SCENARIO copied_strings || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	local e o
	e=$(printf 'e%.0s' $(seq 255))
	o=$(printf 'o%.0s' $(seq 255))
	expect "255 bytes whole, 256 cut to 255 and marked (JSON)" \
		"{\"exact\":\"$e\",\"over\":\"$o\",\"status\":{\"over\":\"truncated\"}}" \
		"$(event_json edges | jq -c '{exact: .fields.exact, over: .fields.over, status: .field_status}')" ||
		return 1
	expect "and in text" "edges, exact: $e, over: $o…[truncated]" \
		"$(rtail | grep -o 'edges, .*')"
}

test_copied_strings_of_one_event_each_keep_their_bytes() {
	start_target $SCENARIO copied_strings || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "three copied strings, none over another" \
		'{"message":"three","a":"alpha","b":"beta","c":"gamma"}' \
		"$(event_json three | jq -c .fields)"
}

test_unreadable_copied_string_is_not_null() {
	start_target $SCENARIO copied_strings || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "an unreadable string is null with status fault, not \"null\"" \
		'{"fields":{"message":"unreadable","bad":null,"after":"alpha"},"field_status":{"bad":"fault"}}' \
		"$(event_json unreadable | jq -c '{fields, field_status}')" || return 1
	expect "text says unreadable" "unreadable, bad: <unreadable>, after: alpha" \
		"$(rtail | grep -o 'unreadable, .*')" || return 1
	[ "$(rtail --stats --json | jq .counters.str_fault)" -ge 1 ] ||
		fail "str_fault did not count it: $(rtail --stats --json)"
}

test_subject_keeps_63_bytes() {
	start_target $SCENARIO long_subjects || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	local s63 s70
	s63="subject-of-63-bytes-....................................ends-63"
	s70="subject-of-70-bytes-....................................63-here"
	expect "63 bytes whole, 70 cut to 63" "$s63
$s70" "$(rtail --list --json | jq -r .subject)" || return 1
	expect "events carry them" "$s63 in 63
$s70 in 70" "$(rtail --json | jq -r '"\(.subject) \(.fields.message)"')" || return 1
	rtail --subject "$s70" --json | jq -e -s 'length == 1' >/dev/null ||
		fail "--subject does not find the 63 bytes kept"
}

test_exiting_an_outer_span_unlinks_it() {
	start_target $SCENARIO exit_outer_first || return 1
	wait_for "$T/target.out" '^inside' || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	# recorder-attach learns the stack from the target's chain of spans: an
	# exited outer_x still linked in it would show up here.
	expect "the thread is inside the recording span only" \
		'{"subject":"outer","stack":["recording"]}' \
		"$(rtail --stacks --json | jq -c '{subject, stack: [.stack[].name]}')" || return 1
	expect "and its event went to the recording" '["after attach"]' \
		"$(rtail --json | jq -sc 'map(.fields.message)')"
}

test_detached_event_builds_no_arguments() {
	start_target $SCENARIO detached_side_effects || return 1
	wait_for "$T/target.out" '^inside' || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "1000 events inside a recording span while detached evaluated no field" \
		"side effects while detached: 0, attached: 3" \
		"$(grep '^side effects' "$T/target.out")" || return 1
	expect "the attached ones did, once each" "1 2 3" \
		"$(rtail --json | jq -r .fields.calls | tr '\n' ' ' | sed 's/ $//')"
}

# True if stdin has a control byte (below 0x20 or DEL) other than newlines.
has_control_bytes() {
	LC_ALL=C tr -d '\n' | LC_ALL=C grep -q '[[:cntrl:]]'
}

test_target_text_is_escaped_for_the_terminal() {
	start_target $SCENARIO hostile_text || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	local opt out dump
	dump=$($B/recorder-tail -p "$TARGET_PID" --dump) || fail "--dump failed: $dump" || return 1
	for opt in "" "--json" "--list" "--list --json" "--stacks" "--stacks --json" "--stats"; do
		# shellcheck disable=SC2086
		out=$(rtail $opt) || fail "recorder-tail $opt failed" || return 1
		[ -n "$out" ] || fail "recorder-tail $opt printed nothing" || return 1
		# shellcheck disable=SC2086
		for out in "$out" "$($B/recorder-tail --file "$dump" $opt)"; do
			if printf '%s' "$out" | has_control_bytes; then
				fail "a control byte reached the terminal with '$opt':"
				printf '%s\n' "$out" | cat -v | sed 's/^/    | /'
				return 1
			fi
			if printf '%s\n' "$out" | grep -q '^I0101 \|^forged'; then
				fail "a line was forged with '$opt': $(printf '%s\n' "$out" | cat -v)"
				return 1
			fi
		done
	done
	local subject='s\nI0101 00:00:00.000000 1 forged.c:1] forged\u001b[2J\u001b]0;t\u0007'
	expect "the header shows the subject escaped" \
		"==> pid $TARGET_PID recording $(key_of hostile) <$subject> cap 10, seen 1, delivered 1, dropped 0 <==" \
		"$(rtail | head -1)" || return 1
	expect "the event line too" \
		"<$subject> msg\\u001b[1m\\r, copied: del\\u007f csi\\u009b31m nl\\n, lit: lit\\u001b\\u0007" \
		"$(rtail | sed -n 2p | grep -o '<.*')" || return 1
	expect "the stack too" \
		"pid $TARGET_PID tid $TARGET_PID recording $(key_of hostile) <$subject>:
    span\\u001b[31m\\nforged (scenario.c:L)
    recording" "$(rtail --stacks | sed -E 's/\(scenario\.c:[0-9]+\)/(scenario.c:L)/; s/ open [0-9]+\.[0-9]{6} s$//')" ||
		return 1
	expect "JSON keeps the bytes" \
		"$(printf 's\nI0101 00:00:00.000000 1 forged.c:1] forged\033[2J\033]0;t\007|del\177 csi\302\23331m nl\n')" \
		"$(rtail --json | jq -j '.subject, "|", .fields.copied')"
}

test_unsupported_argument_spec_skips_only_that_site() {
	start_target $B/tests/targets/odd_note || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "a warning names the file, the probe and the spec" \
		"recorder-attach: warning: skipped 1 site of probe recorder:event in $(realpath $B/tests/targets/odd_note) (pid $TARGET_PID): unsupported argument spec '8@(%rax,%rbx,8)'; its other sites are attached" \
		"$(cat "$T/attach.err")" || return 1
	expect "the other sites are attached and record" \
		'{"subject":"odd","fields":{"message":"the other sites work","n":7}}' \
		"$(rtail --json | jq -c '{subject, fields}')"
}

test_pids_and_counts_are_decimal() {
	start_target $B/workload --wait-attach --events 20 --cap 20 --fields 1 --hold 60 \
		--report "$T/report.json" || return 1
	attach "0$TARGET_PID" || return 1
	grep -q "^attached to $TARGET_PID: " "$T/attach.out" ||
		fail "-p 0$TARGET_PID did not attach to $TARGET_PID: $(cat "$T/attach.out")" || return 1
	wait_for "$T/report.json" 'last_seq' 20 || return 1
	expect "recorder-tail -p 0$TARGET_PID -n 010: the last ten events of pid $TARGET_PID" \
		"$(for i in $(seq 10 19); do echo "$TARGET_PID $i"; done)" \
		"$($B/recorder-tail -p "0$TARGET_PID" -n 010 --json | jq -r '"\(.pid) \(.seq)"')" ||
		return 1
	local out
	out=$($B/recorder-tail -p 0x10 2>&1)
	echo "$out" | grep -q "invalid pid '0x10': expected a positive decimal integer" ||
		fail "a hex pid was not refused: $out" || return 1
	out=$($B/recorder-attach -p 0x10 2>&1)
	echo "$out" | grep -q "invalid pid '0x10': expected a positive decimal integer" ||
		fail "a hex pid was not refused by recorder-attach: $out"
}

# Hostile batches (tests/targets/scenario.c, hostile_batch): a forged callsite,
# a record overrunning its batch, a header claiming too much, a flush of
# another address, a buffer at an unmapped address. Each is counted; the
# recording beside them keeps exactly its own events, and the victim's good
# ones (before and after) are all there.
test_hostile_batches_are_counted_and_contained() {
	start_target $SCENARIO hostile_batch || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "the bystander has its 3 events, nothing else" "0 0 1 1 2 2 | 3 3 0" \
		"$(rtail --json --subject bystander | jq -r '"\(.seq) \(.fields.n)"' | tr '\n' ' ')| $(rtail --list --json | jq -r 'select(.subject == "bystander") | "\(.seen) \(.kept) \(.dropped)"')" ||
		return 1
	if grep -q '^no batch path' "$T/target.out"; then
		# --per-event: the header never wrote a batch; nothing to count.
		expect "no batch counted on the per-event path" "0 0" \
			"$(rtail --stats --json | jq -r '"\(.counters.batch_bad) \(.counters.batch_fault)"')"
		return
	fi
	grep -q '^hostile batches sent' "$T/target.out" || fail "the target sent no hostile batch" || return 1
	expect "the victim keeps its good events, and the forged callsite stays its own" \
		'0 {"message":"before","n":0}
1 {"field0":7}
2 {"message":"after","n":2}' \
		"$(rtail --json --subject victim | jq -c '"\(.seq) \(.fields | del(.message | select(startswith("<callsite"))) | tojson)"' -r)" ||
		return 1
	expect "each bad batch counted: 3 malformed, at least 1 unreadable" "3 true" \
		"$(rtail --stats --json | jq -r '"\(.counters.batch_bad) \(.counters.batch_fault >= 1)"')"
}
