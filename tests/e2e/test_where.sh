# SPDX-License-Identifier: MIT
# recorder-tail --where FIELD OP VALUE (issue 24): events filtered by their
# fields' values, on a real attached process (tests/targets/lookups.c: round R
# is seq 5R..5R+4, see there): live, with --follow, on a black box and a
# trigger snapshot, as text, JSON lines, a Chrome trace and OTLP; two --where
# are ANDed; a bad one is a usage error naming the bad part. Uses the helpers
# of test_otlp.sh (otlp_receiver), test_triggers.sh (trig_attach, snapshot_of)
# and test_core.sh (normalize_glog), which tests/run-all.sh sources with it.

# Filtering the model: the same on either path, whose capture the other files test on both.
batch_path_only where_live_dump_and_every_format where_follow_and_otlp_follow where_on_a_trigger_snapshot

LOOKUPS=$B/tests/targets/lookups

# seqs ARGS...: the seqs recorder-tail's JSON lines of ARGS hold, on one line.
seqs() {
	$B/recorder-tail --json "$@" | jq -r 'select(.seq != null) | .seq' | paste -sd' '
}

test_where_live_dump_and_every_format() {
	local dump out spans_all spans_where
	otlp_receiver || return 1
	start_target $LOOKUPS || return 1
	attach "$TARGET_PID" || return 1
	wait_for "$T/target.out" '^round 0' || return 1
	local live=(-p "$TARGET_PID")
	expect "no --where: every event" "0 1 2 3 4" "$(seqs "${live[@]}")" || return 1
	expect "a number: u64 503 and i64 500, not the string '500'" "2 3" \
		"$(seqs "${live[@]}" --where 'status>=500')" || return 1
	expect "a string glob" "0 1 3" "$(seqs "${live[@]}" --where 'key=user:*')" || return 1
	expect "a boolean" "1 2" "$(seqs "${live[@]}" --where 'hit=false')" || return 1
	expect "two --where are ANDed" "3" \
		"$(seqs "${live[@]}" --where 'status>=500' --where 'key=user:*')" || return 1
	expect "an event without the field is left out, with != too" "1 2" \
		"$(seqs "${live[@]}" --where 'hit!=true')" || return 1
	expect "!= on a number: the string status is another type" "1 2 3" \
		"$(seqs "${live[@]}" --where 'status != 200')" || return 1
	expect "a quoted number is a string" "4" "$(seqs "${live[@]}" --where "status='500'")" ||
		return 1
	expect "a float" "4" "$(seqs "${live[@]}" --where 'ms<3')" || return 1
	expect "a field no event has" "" "$(seqs "${live[@]}" --where 'nope=1')" || return 1
	expect "the message, as JSON lines name it" "3 4" \
		"$(seqs "${live[@]}" --where 'message=s*')" || return 1
	expect "with --level" "3" "$(seqs "${live[@]}" --where 'key=user:*' --level warn)" || return 1
	expect "with -n: the last of those it selects" "1 3" \
		"$(seqs "${live[@]}" --where 'key=user:*' -n 2)" || return 1
	expect "with --subject" "1 2" "$(seqs "${live[@]}" --where 'hit=false' --subject cache)" ||
		return 1
	expect "as text" \
		"WMMDD hh:mm:ss.us TID lookups.c:L] <cache> get, key: item:3, hit: false, status: 503, round: 0
EMMDD hh:mm:ss.us TID lookups.c:L] <cache> set, key: user:4, status: 500, round: 0" \
		"$(rtail --where 'status>=500' | grep -v '^==>' | normalize_glog)" || return 1

	# Chrome: the instants are filtered, the spans are not.
	rtail --format chrome >"$T/all.json" || return 1
	rtail --format chrome --where 'hit=false' >"$T/where.json" || return 1
	expect "chrome: the events --where selects" "1 2" \
		"$(jq -r '.traceEvents[] | select(.ph == "i") | .args.seq' "$T/where.json" | paste -sd' ')" ||
		return 1
	spans_all=$(jq '[.traceEvents[] | select(.ph == "B" or .ph == "E" or .ph == "X")] | length' \
		"$T/all.json")
	spans_where=$(jq '[.traceEvents[] | select(.ph == "B" or .ph == "E" or .ph == "X")] | length' \
		"$T/where.json")
	[ "$spans_all" -gt 0 ] || fail "chrome: no span in the trace" || return 1
	expect "chrome: spans are not filtered" "$spans_all" "$spans_where" || return 1

	# OTLP, live: only the log records --where selects are sent.
	out=$(rtail --otlp "$OTLP_URL" --where 'status>=500' --where 'key=user:*' 2>&1) ||
		fail "recorder-tail --otlp --where failed: $out" || return 1
	[[ $out == *"1 of 1 log records delivered"* ]] || fail "unexpected OTLP summary: $out" ||
		return 1
	expect "otlp: the one record both select" "3 set" \
		"$(jq -r '"\(.attributes["recorder.seq"]) \(.body)"' "$T/otlp.out")" || return 1

	# The black box: the same filters, in every format.
	dump=$(rtail --dump) || return 1
	local box=(--file "$dump")
	expect "dump: a boolean" "1 2" "$(seqs "${box[@]}" --where 'hit=false')" || return 1
	expect "dump: two --where" "3" \
		"$(seqs "${box[@]}" --where 'status>=500' --where 'key=user:*')" || return 1
	expect "dump: chrome" "0 1 3" \
		"$($B/recorder-tail "${box[@]}" --format chrome --where 'key=user:*' |
			jq -r '.traceEvents[] | select(.ph == "i") | .args.seq' | paste -sd' ')" || return 1
	expect "dump: text" "2" \
		"$($B/recorder-tail "${box[@]}" --where 'status>=500' | grep -c '^[IWE][0-9]')" || return 1
	: >"$T/otlp.out"
	out=$($B/recorder-tail "${box[@]}" --otlp "$OTLP_URL" --where 'hit=false' 2>&1) ||
		fail "--otlp --where on a dump failed: $out" || return 1
	expect "dump: otlp" "1 2" \
		"$(jq -r '.attributes["recorder.seq"]' "$T/otlp.out" | paste -sd' ')" || return 1
	[ ! -s "$T/otlp.err" ] || fail "the receiver refused a request: $(cat "$T/otlp.err")"
}

test_where_follow_and_otlp_follow() {
	otlp_receiver || return 1
	start_target $LOOKUPS || return 1
	attach "$TARGET_PID" || return 1
	wait_for "$T/target.out" '^round 0' || return 1
	$B/recorder-tail -p "$TARGET_PID" --follow --json --where 'hit=false' --where 'key=user:*' \
		>"$T/follow.out" 2>"$T/follow.err" &
	local fp=$!
	BG_PIDS+=("$fp")
	$B/recorder-tail -p "$TARGET_PID" --follow --otlp "$OTLP_URL" --where 'status>=500' \
		>"$T/otlp-tail.out" 2>"$T/otlp-tail.err" &
	local op=$!
	BG_PIDS+=("$op")
	wait_for "$T/follow.out" '"seq":1,' || return 1
	wait_for "$T/otlp.out" '"recorder.seq": "3"' || return 1
	kill -USR1 "$TARGET_PID"
	wait_for "$T/target.out" '^round 1' || return 1
	wait_for "$T/follow.out" '"seq":6,' || return 1
	wait_for "$T/otlp.out" '"recorder.seq": "8"' || return 1
	stop_target
	wait "$fp" "$op"
	expect "--follow: the tail, then round 1, both --where" "1 6" \
		"$(jq -r '.seq' "$T/follow.out" | paste -sd' ')" || return 1
	expect "--follow --otlp: what --where selects, each once" "2 3 7 8" \
		"$(jq -r '.attributes["recorder.seq"]' "$T/otlp.out" | paste -sd' ')" || return 1
	[ ! -s "$T/otlp.err" ] || fail "the receiver refused a request: $(cat "$T/otlp.err")"
}

# A trigger rule and --where take one grammar: the rule's condition saves the
# snapshot, --where reads it.
test_where_on_a_trigger_snapshot() {
	local snap
	start_target $LOOKUPS || return 1
	trig_attach --trigger 'event:set status>=500' || return 1
	wait_for "$T/target.out" '^round 0' || return 1
	snap=$(snapshot_of 1) || return 1
	expect "snapshot: a string glob" "0 1 3" "$(seqs --file "$snap" --where 'key=user:*')" ||
		return 1
	expect "snapshot: two --where" "2" \
		"$(seqs --file "$snap" --where 'hit=false' --where 'status>500')" || return 1
}

# Usage errors: not the event path.
batch_path_only where_bad_expressions_are_usage_errors where_with_list_stacks_or_stats_is_a_usage_error

test_where_bad_expressions_are_usage_errors() {
	local out rc arg want args=()
	while IFS='|' read -r arg want; do
		out=$($B/recorder-tail -p 1 --where "$arg" 2>&1)
		rc=$?
		expect "exit status of --where '$arg'" 64 "$rc" || return 1
		[[ $out == *"invalid --where '$arg': $want"* ]] ||
			fail "--where '$arg' does not name the bad part: $out" || return 1
		[[ $out == *"COND is FIELD OP VALUE"* ]] || fail "no grammar after: $out" || return 1
	done <<'EOF'
status>=|'status>=' has no value
status=>5|bad operator in 'status=>5': expected one of = != < <= > >=
key<user|'<' does not apply to a string ('user')
hit>=true|'>=' does not apply to a boolean (true)
5xx=1|bad field name in '5xx=1'
>=500|'>=500' has no field name
key='open|unterminated quote ' in 'key='open'
hit=true extra|unexpected 'extra' after the value in 'hit=true extra'
n=99999999999999999999|number '99999999999999999999' is out of range
|empty condition: expected FIELD OP VALUE
EOF
	# On a dump too, before the file is read; and at most 8 of them.
	out=$($B/recorder-tail --file /nonexistent --where 'a<' 2>&1)
	expect "exit status on --file" 64 "$?" || return 1
	[[ $out == *"invalid --where 'a<': 'a<' has no value"* ]] || fail "on --file: $out" || return 1
	for arg in 1 2 3 4 5 6 7 8 9; do
		args+=(--where "n!=$arg")
	done
	out=$($B/recorder-tail -p 1 "${args[@]}" 2>&1)
	expect "exit status of a 9th --where" 64 "$?" || return 1
	[[ $out == *"too many --where 'n!=9': at most 8 conditions"* ]] || fail "9 --where: $out"
}

# The event filters with a view that shows no events: a usage error, not ignored.
test_where_with_list_stacks_or_stats_is_a_usage_error() {
	local out view filter
	for view in --list --stacks --stats; do
		for filter in "--where status>=500" "--level warn" "--target app" "--since 5m"; do
			# shellcheck disable=SC2086
			out=$($B/recorder-tail -p 1 $view $filter 2>&1)
			expect "exit status of $view $filter" 64 "$?" || return 1
			[[ $out == *"--level, --target, --since and --where choose events: they do not go with --list, --stacks or --stats"* ]] ||
				fail "$view $filter: $out" || return 1
		done
	done
}
