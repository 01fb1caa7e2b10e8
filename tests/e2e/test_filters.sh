# SPDX-License-Identifier: MIT
# --level, --target and --since: alone and together with the recording
# filters, live, with --follow, on a black box, as text and JSON lines.

# Filtering the model: the same on either path, whose capture the other files test on both.
batch_path_only filters_level_and_target_live_dump_and_formats filters_since_and_follow

test_filters_level_and_target_live_dump_and_formats() {
	local dump
	start_target $SCENARIO all_fields || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "--level warn, JSON" "warned failed" \
		"$(rtail --json --level warn | jq -r .fields.message | tr '\n' ' ' | sed 's/ $//')" || return 1
	expect "--level WARN -n 1: the last of those" "failed" \
		"$(rtail --json --level WARN -n 1 | jq -r .fields.message)" || return 1
	expect "--level error, text" \
		"EMMDD hh:mm:ss.us TID scenario.c:L] <fields> failed, code: 7" \
		"$(rtail --level error | grep -v '^==>' | normalize_glog)" || return 1
	expect "--level with --subject" "failed" \
		"$(rtail --json --level error --subject 'fie*' | jq -r .fields.message)" || return 1
	local target
	target=$(rtail --json -n 1 | jq -r .target)
	[ -n "$target" ] || fail "no target in the JSON lines" || return 1
	expect "--target, as written" 6 "$(rtail --json --target "$target" | wc -l)" || return 1
	expect "--target, a glob" 6 "$(rtail --json --target '*scenario*' | wc -l)" || return 1
	expect "--target that no event has" 0 "$(rtail --json --target 'nothing*' | wc -l)" || return 1
	dump=$(rtail --dump) || return 1
	expect "--level on the black box" "warned failed" \
		"$($B/recorder-tail --file "$dump" --json --level warn | jq -r .fields.message | tr '\n' ' ' |
			sed 's/ $//')" || return 1
	expect "--target on the black box" 0 \
		"$($B/recorder-tail --file "$dump" --json --target 'nothing*' | wc -l)" || return 1
	expect "--since on the black box" 6 "$($B/recorder-tail --file "$dump" --json --since 1h | wc -l)"
}

test_filters_since_and_follow() {
	start_target $SCENARIO ticks || return 1
	attach "$TARGET_PID" || return 1
	wait_for "$T/target.out" '^ticking' || return 1
	kill -USR1 "$TARGET_PID"
	# Ticks 0 and 1 are more than 3 s old when tick 2 comes.
	sleep 4
	$B/recorder-tail -p "$TARGET_PID" --follow --json --level info --since 3s \
		>"$T/follow.out" 2>"$T/follow.err" &
	BG_PIDS+=($!)
	kill -USR1 "$TARGET_PID"
	wait_for "$T/follow.out" '"seq":2,' 10 || return 1
	expect "--since: only the recent tick, then what follows" "2" \
		"$(jq -r .seq "$T/follow.out" | tr '\n' ' ' | sed 's/ $//')" || return 1
	expect "--since without --follow" "2" "$(rtail --json --since 3s | jq -r .seq)" || return 1
	expect "--since 1h" "0 1 2" "$(rtail --json --since 1h | jq -r .seq | tr '\n' ' ' | sed 's/ $//')"
}

# Usage errors: not the event path.
batch_path_only filters_bad_values_are_usage_errors

test_filters_bad_values_are_usage_errors() {
	local out
	out=$($B/recorder-tail -p 1 --level loud 2>&1)
	[[ $out == *"invalid --level 'loud': expected trace, debug, info, warn or error"* ]] ||
		fail "bad --level: $out" || return 1
	out=$($B/recorder-tail -p 1 --since 5x 2>&1)
	[[ $out == *"invalid --since '5x': expected a duration such as 500ms, 30s, 5m, 2h or 1d"* ]] ||
		fail "bad --since: $out"
}
