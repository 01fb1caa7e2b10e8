# SPDX-License-Identifier: MIT
# What an operator sees (issue 24, items 2, 3, 5 and 8): spans entered before
# the attach shown as such, and what an attach mid-flight expects to see counted
# apart from anomalies; --min-cap and --max-cap, the program's cap beside the one
# kept; the age of each frame of --stacks; one word for the events delivered, and
# spans aged out by --span-cap named apart from spans lost.

# The clock_offset_ns of dump DUMP, as written (jq would round it to a double).
offset_of() {
	grep -o '"clock_offset_ns":-\?[0-9]*' "$1" | cut -d: -f2
}

# The wall-clock time of CLOCK_MONOTONIC time NS of dump DUMP, in ns since the epoch.
realtime_of() {
	echo $(($2 + $(offset_of "$1")))
}

# The glog time (UTC) of CLOCK_MONOTONIC time NS of dump DUMP.
glog_time_of() {
	local ns
	ns=$(realtime_of "$1" "$2")
	printf '%s.%06d' "$(date -u -d "@$((ns / 1000000000))" +%H:%M:%S)" $((ns % 1000000000 / 1000))
}

test_spans_entered_before_the_attach_say_so() {
	start_target $SCENARIO attach_mid_span || return 1
	wait_for "$T/target.out" '^inside' || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	local dump at
	dump=$(rtail --dump) || return 1
	[ "$(jq .attached_ns "$dump")" -gt 0 ] 2>/dev/null ||
		fail "the dump does not say when recorder-attach attached: $(jq -c 'del(.callsites, .recordings, .stacks)' "$dump")" ||
		return 1
	at=$(glog_time_of "$dump" "$(jq .attached_ns "$dump")")
	# Text: open, entered before the attach, timed by the attach (not 0101 00:00:00).
	expect "the text tail: both open spans entered before the attach, at the attach's time" \
		"$at recording: open, entered before the attach
$at before_attach: open, entered before the attach" \
		"$(TZ=UTC rtail --spans | sed -nE 's/^S[0-9]{4} ([0-9:.]+) .*\] <mid> span (.*), id .*/\1 \2/p')" ||
		return 1
	expect "JSON: no enter, no exit, entered before the attach" \
		'{"name":"recording","enter":null,"exit":null,"entered_before_attach":true}
{"name":"before_attach","enter":null,"exit":null,"entered_before_attach":true}' \
		"$(rtail --spans --json | jq -c 'select(.type == "span") | {name, enter, exit, entered_before_attach}')" ||
		return 1
	# Chrome: each a slice open from the attach, none left out as untimed. The live
	# trace and the dump each turn CLOCK_MONOTONIC into wall-clock time with the offset
	# read when they were made, which differ by microseconds on a loaded machine: at
	# the attach is within 1 ms of it (the spans were entered well before it).
	expect "chrome: a B at the attach for each, args.enter says before the attach" \
		"2 2 null" \
		"$(rtail --format chrome | jq -r --argjson at "$(($(realtime_of "$dump" "$(jq .attached_ns "$dump")") / 1000))" \
			'[.traceEvents[] | select(.ph == "B" and .args.enter == "before the attach")] as $b |
			 "\($b | length) \($b | map(select((.ts - $at) | fabs < 1000)) | length) \(.recorder_spans_open_untimed)"')" ||
		return 1
	expect "the dump reads back the same" "$(TZ=UTC rtail --spans)" \
		"$(TZ=UTC $B/recorder-tail --file "$dump" --spans | sed 's/^==> pid [0-9]* running <==$//; /^$/d')"
}

test_an_attach_mid_flight_is_not_an_anomaly() {
	start_target $SCENARIO exit_at_attach || return 1
	wait_for "$T/target.out" '^inside' || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	local stats
	stats=$(rtail --stats --json) || return 1
	# Both threads left spans entered before the attach.
	expect "no unmatched exit, no orphan span" '{"exit_unmatched":0,"orphans":0}' \
		"$(jq -c '{exit_unmatched: .counters.exit_unmatched, orphans: .spans.orphans}' <<<"$stats")" ||
		return 1
	# Each of the 3 spans once: its recording unknown (before_attach), its exit
	# unknown (exit_before_attach), or kept as entered before the attach (its
	# recording learned from the target meanwhile).
	local kept
	kept=$(rtail --spans --json | jq -s '[.[] | select(.type == "span" and .entered_before_attach)] | length')
	expect "what the attach expects is counted apart: exits and spans from before it, each once" "3" \
		"$(jq --argjson kept "$kept" '.spans.before_attach + .counters.exit_before_attach + $kept' <<<"$stats")" ||
		fail "the stats: $(jq -c '{spans, counters}' <<<"$stats"); kept as entered before the attach: $kept" || return 1
	grep -qE "^spans: .* orphan spans: 0; spans of recordings older than the attach: $(jq .spans.before_attach <<<"$stats")\b" <<<"$(rtail --stats)" ||
		fail "the text stats do not say it: $(rtail --stats | grep '^spans')" || return 1
	local dump
	dump=$(rtail --dump) || return 1
	expect "the dump keeps the count" "$(jq .spans.before_attach <<<"$stats")" \
		"$($B/recorder-tail --file "$dump" --stats --json | jq .spans.before_attach)"
}

# cap_scenario ATTACH ARGS...: the "spans" scenario (cap 10, 101 events) attached with them.
cap_scenario() {
	start_target $SCENARIO spans || return 1
	RECORDER_ATTACH_FLAGS="$RECORDER_ATTACH_FLAGS $*" attach "$TARGET_PID" || return 1
	wait_ready || { cat "$T/target.err"; return 1; }
}

test_min_cap_and_max_cap_override_the_program() {
	cap_scenario --min-cap 50 || return 1
	expect "--min-cap 50: the recording keeps 50 of its 101 events, though it asked for 10" \
		'{"cap":50,"asked_cap":10,"seen":101,"tail":50}' \
		"$(rtail --list --json | jq -c '{cap, asked_cap, seen, tail}')" || return 1
	expect "the text list shows both caps" "CAP ASKED
50 10" "$(rtail --list | awk '{print $5, $6}')" || return 1
	expect "the tail header too" "cap 50 (asked 10), seen 101" \
		"$(rtail | head -1 | grep -o 'cap [^,]*, seen [0-9]*')" || return 1
	expect "the tail holds seq 51..100" "51 100 50" \
		"$(rtail --json | jq -sr '"\(.[0].seq) \(.[-1].seq) \(length)"')" || return 1
	local dump
	dump=$(rtail --dump) || return 1
	expect "the dump keeps both" '{"cap":50,"asked_cap":10}' \
		"$(jq -c '.recordings[0] | {cap, asked_cap}' "$dump")" || return 1
	expect "and reads back both" '{"cap":50,"asked_cap":10,"tail":50}' \
		"$($B/recorder-tail --file "$dump" --list --json | jq -c '{cap, asked_cap, tail}')" || return 1
	stop_target
	kill -TERM "$ATTACH_PID" 2>/dev/null
	wait "$ATTACH_PID" 2>/dev/null
	cap_scenario --max-cap 4 --min-cap 2 || return 1
	expect "--max-cap 4: it keeps 4" '{"cap":4,"asked_cap":10,"seen":101,"tail":4}' \
		"$(rtail --list --json | jq -c '{cap, asked_cap, seen, tail}')"
}

# Usage errors: not the event path.
batch_path_only bad_caps_are_usage_errors_naming_the_bad_part

test_bad_caps_are_usage_errors_naming_the_bad_part() {
	local args want got
	while IFS='|' read -r args want; do
		# shellcheck disable=SC2086
		got=$($B/recorder-attach -p 1 $args 2>&1)
		[ $? = 64 ] || fail "recorder-attach $args: not a usage error (exit 64): $got" || return 1
		expect "recorder-attach $args says what is wrong" "$want" "$(head -1 <<<"$got")" || return 1
	done <<'EOF'
--min-cap 0|recorder-attach: invalid --min-cap '0': expected 2 to 1048576
--max-cap 1|recorder-attach: invalid --max-cap '1': expected 2 to 1048576
--min-cap lots|recorder-attach: invalid --min-cap 'lots': expected 2 to 1048576
--max-cap 10k|recorder-attach: invalid --max-cap '10k': expected 2 to 1048576
--min-cap 99999999999|recorder-attach: invalid --min-cap '99999999999': expected 2 to 1048576
--min-cap 100 --max-cap 10|recorder-attach: --max-cap 10 is less than --min-cap 100: no recording could keep both
EOF
	# Not "--help | grep -q": grep leaves at the match, and the rest of the
	# text meets a closed pipe (SIGPIPE, and the pipeline fails).
	local help
	help=$($B/recorder-attach --help) || fail "recorder-attach --help failed" || return 1
	grep -q -- '--min-cap=N' <<<"$help" || fail "--help does not show --min-cap" || return 1
	grep -q -- '--max-cap=N' <<<"$help" || fail "--help does not show --max-cap"
}

test_stacks_show_how_long_each_frame_has_been_open() {
	start_target $SCENARIO spans || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	local json now
	json=$(rtail --stacks --json) || return 1
	now=$(date +%s)
	# held (entered last) inside recording: each with its enter, and an age that counts from it.
	expect "JSON: each frame has its enter and its age, the outer one the older" \
		'{"names":["held","recording"],"entered":true,"aged":true,"older_outside":true,"recent":true}' \
		"$(jq -c --argjson now "$now" '.stack as $s | {names: [$s[].name],
			entered: ($s | all(.enter != null and .entered_before_attach == false)),
			aged: ($s | all(.age_ns >= 0)),
			older_outside: ($s[1].age_ns >= $s[0].age_ns),
			recent: ($s | all((.enter | sub("\\.[0-9]+Z$"; "Z") | fromdate) <= $now + 1))}' <<<"$json")" ||
		return 1
	expect "text: each frame says how long it has been open" \
		"held (scenario.c:L) open S
recording open S" \
		"$(rtail --stacks | sed -n 's/^    //p' | sed -E 's/:[0-9]+\)/:L)/; s/ open [0-9]+\.[0-9]{6} s$/ open S/')" ||
		return 1
	# A dump: the ages are as of its writing, exactly.
	local dump want="" at e
	dump=$(rtail --dump) || return 1
	at=$(date -u -d "$(jq -r .dumped_at "$dump")" +%s%N)
	for e in $(jq -r '.stacks[0].frames | reverse | .[].enter_ns' "$dump"); do
		want="$want${want:+ }$((at - $(realtime_of "$dump" "$e")))"
	done
	expect "the dump's ages are its dumped_at minus each enter" "$want" \
		"$($B/recorder-tail --file "$dump" --stacks --json | jq -r '[.stack[].age_ns | tostring] | join(" ")')"
}

test_stacks_of_frames_entered_before_the_attach_say_so() {
	start_target $SCENARIO attach_mid_span || return 1
	wait_for "$T/target.out" '^inside' || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "text: open since before the attach, for at least the time since it" \
		"before_attach (scenario.c:L) open since before the attach, over S
recording open since before the attach, over S" \
		"$(rtail --stacks | sed -n 's/^    //p' | sed -E 's/:[0-9]+\)/:L)/; s/ over [0-9]+\.[0-9]{6} s$/ over S/')" ||
		return 1
	expect "JSON: no enter, an age since the attach" '[true,true]' \
		"$(rtail --stacks --json | jq -c '[.stack[] | .enter == null and .entered_before_attach and .age_ns >= 0]')"
}

test_tail_and_list_say_delivered_alike() {
	start_target $SCENARIO spans || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "the list's column and the tail header's word: DELIVERED, delivered 101" \
		"DELIVERED 101
delivered 101" \
		"$(rtail --list | awk '{print $8}' | paste -sd ' '; rtail | head -1 | grep -o 'delivered [0-9]*')" ||
		return 1
	head -1 <<<"$(rtail)" | grep -q ' kept ' && fail "the tail header still says kept: $(rtail | head -1)"
	return 0
}
