# SPDX-License-Identifier: MIT
# REC_STRN (include/recorder.h): strings that are not NUL-terminated, read to
# their length and never past it, on both event paths (tests/run-all.sh runs
# every test batched and --per-event). The target is tests/targets/scenario.c,
# scenario strn.

# The fields (and statuses) of the strn scenario's event with this message.
strn_event() {
	rtail --json | jq -c --arg m "$1" 'select(.fields.message == $m) | {fields, field_status} |
		del(.fields.message) | del(.field_status | nulls)'
}

test_strn_reads_its_length_and_never_past_it() {
	start_target "$SCENARIO" strn || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	# A key in the last 7 bytes of a page whose next page is unmapped: a
	# NUL-terminated read would run into it (and show it unreadable).
	expect "a key before unmapped memory, whole" '{"fields":{"key":"user:42"}}' \
		"$(strn_event unmapped)" || return 1
	expect "keys followed by other bytes: only their own" \
		'{"fields":{"verb":"GET","key":"user:7","len":6}}' "$(strn_event followed)" || return 1
	expect "a NUL among the len bytes ends the string" '{"fields":{"key":"ab"}}' \
		"$(strn_event nul)" || return 1
	local e
	e=$(printf 'e%.0s' $(seq 255))
	expect "255 bytes whole and unmarked, 256 cut to 255 and marked truncated" \
		"{\"fields\":{\"exact\":\"$e\",\"over\":\"$e\"},\"field_status\":{\"over\":\"truncated\"}}" \
		"$(strn_event edges)" || return 1
	expect "NULL and a negative length are null, a zero length is empty" \
		'{"fields":{"null":null,"negative":null,"empty":""},"field_status":{"null":"null","negative":"null"}}' \
		"$(strn_event nothing)" || return 1
	expect "in text too" "unmapped, key: user:42
followed, verb: GET, key: user:7, len: 6
nul, key: ab
nothing, null: (null), negative: (null), empty: " \
		"$(rtail | grep -oE '(unmapped|followed|nul|nothing), .*')" || return 1
	# Beside a REC_STR that runs into the unmapped page: the batch path hands
	# that event to its own probe, where the REC_STRN is still read to its length.
	expect "a REC_STRN beside an unreadable REC_STR" \
		'{"fields":{"unterminated":null,"key":"user:42"},"field_status":{"unterminated":"fault"}}' \
		"$(strn_event mixed)" || return 1
	expect "one string fault counted: that REC_STR" 1 \
		"$(rtail --stats --json | jq .counters.str_fault)"
}

# Fields that point at one reused buffer (as inet_ntoa's) all hold the same
# bytes, the last call's: the buffer is read when the event fires, after
# every field's expression has run (in an order C leaves unspecified), on
# both paths; a write after the event does not show.
test_strn_fields_of_one_reused_buffer_hold_what_it_held_at_the_event() {
	start_target "$SCENARIO" strn || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	local f
	f=$(strn_event reused | jq -c .fields) || return 1
	jq -e '[.a, .b, .c, .d] | unique | length == 1 and
		(.[0] | IN("conn-1", "conn-2", "conn-3", "conn-4"))' <<<"$f" >/dev/null ||
		fail "fields of one buffer differ, or hold a later write: $f"
}
