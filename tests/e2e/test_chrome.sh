# SPDX-License-Identifier: MIT
# recorder-tail --format chrome: the Chrome trace of a live tail and of a black
# box, with every filter, checked by tests/chrome/check_trace.py against the
# JSON lines of the same tail (same events, spans, nesting, metadata).

# Rendering the model into a timeline: the same on either path, whose capture the other files test on both.
batch_path_only chrome_live_and_black_box_with_every_filter chrome_threads_are_named_by_their_recordings chrome_hung_request_is_drawn_up_to_the_snapshot

CHECK_TRACE=tests/chrome/check_trace.py

# chrome_same_as_json WHAT SOURCE... -- FILTERS...: the trace of SOURCE with FILTERS
# holds exactly the events of its JSON tail (and at least one unless NONE=1).
chrome_same_as_json() {
	local what=$1 src=() out
	shift
	while [ "$1" != -- ]; do
		src+=("$1")
		shift
	done
	shift
	$B/recorder-tail "${src[@]}" --format chrome "$@" >"$T/trace.json" 2>"$T/trace.err" ||
		fail "$what: recorder-tail --format chrome failed: $(cat "$T/trace.err")" || return 1
	# The JSON tail with its spans: the trace must hold both, the same ones.
	$B/recorder-tail "${src[@]}" --json --spans "$@" >"$T/tail.jsonl" 2>&1 ||
		fail "$what: recorder-tail --json --spans failed" || return 1
	[ "${NONE:-0}" = 1 ] || [ -s "$T/tail.jsonl" ] || fail "$what: the tail is empty" || return 1
	out=$($CHECK_TRACE "$T/trace.json" --jsonl "$T/tail.jsonl") ||
		fail "$what: $out" || return 1
	echo "$what: $out"
}

test_chrome_live_and_black_box_with_every_filter() {
	local dump key rkey all
	start_target $SCENARIO all_fields || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	key=$(key_of fields)
	rkey=$(rtail --json -n 1 | jq -r .recorder)
	local live=(-p "$TARGET_PID")
	chrome_same_as_json "live" "${live[@]}" -- || return 1
	all=$(jq -r '.traceEvents[] | select(.ph == "i") | .args.seq' "$T/trace.json" | wc -l)
	expect "live: every event of the tail is an instant" 6 "$all" || return 1
	expect "live: the thread is named by its recording's subject" fields \
		"$(jq -r '.traceEvents[] | select(.name == "thread_name") | .args.name' "$T/trace.json")" ||
		return 1
	expect "live: the fields are in args" 1 \
		"$(jq '[.traceEvents[] | select(.ph == "i") | .args | select(has("seq") and has("level"))] |
			length > 0 | if . then 1 else 0 end' "$T/trace.json")" || return 1
	chrome_same_as_json "live --level warn" "${live[@]}" -- --level warn || return 1
	expect "--level warn keeps 2" 2 \
		"$(jq '[.traceEvents[] | select(.ph == "i")] | length' "$T/trace.json")" || return 1
	chrome_same_as_json "live --target glob" "${live[@]}" -- --target '*scenario*' || return 1
	NONE=1 chrome_same_as_json "live --target none" "${live[@]}" -- --target 'nothing*' ||
		return 1
	expect "--target none: no instant" 0 \
		"$(jq '[.traceEvents[] | select(.ph == "i")] | length' "$T/trace.json")" || return 1
	chrome_same_as_json "live --since" "${live[@]}" -- --since 1h || return 1
	chrome_same_as_json "live -n 2" "${live[@]}" -- -n 2 || return 1
	expect "-n 2 keeps 2" 2 \
		"$(jq '[.traceEvents[] | select(.ph == "i")] | length' "$T/trace.json")" || return 1
	chrome_same_as_json "live --subject" "${live[@]}" -- --subject 'fie*' || return 1
	chrome_same_as_json "live --recording" "${live[@]}" -- --recording "$key" || return 1
	chrome_same_as_json "live --recorder" "${live[@]}" -- --recorder "$rkey" || return 1
	chrome_same_as_json "live, filters together" "${live[@]}" -- --level info -n 3 \
		--subject fields || return 1
	expect "--format json is --json" "$(rtail --json)" "$(rtail --format json)" || return 1
	expect "--format text is the default" "$(rtail)" "$(rtail --format text)" || return 1
	dump=$(rtail --dump) || return 1
	chrome_same_as_json "black box" --file "$dump" -- || return 1
	chrome_same_as_json "black box --level warn -n 1" --file "$dump" -- --level warn -n 1 ||
		return 1
	chrome_same_as_json "black box --subject --since" --file "$dump" -- --subject fields \
		--since 1h || return 1
	chrome_same_as_json "black box --recording --target" --file "$dump" -- --recording "$key" \
		--target '*scenario*'
}

test_chrome_threads_are_named_by_their_recordings() {
	local want got
	start_target $SCENARIO threads || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	chrome_same_as_json "threads" -p "$TARGET_PID" -- || return 1
	# Each thread serves one recording: its name is that recording's subject.
	want=$(jq -r '"\(.tid) \(.subject)"' "$T/tail.jsonl" | sort -u)
	got=$(jq -r '.traceEvents[] | select(.name == "thread_name") | "\(.tid) \(.args.name)"' \
		"$T/trace.json" | sort)
	expect "thread names" "$want" "$got" || return 1
	expect "one process" "pid $TARGET_PID" \
		"$(jq -r '.traceEvents[] | select(.name == "process_name") | .args.name' "$T/trace.json")"
}

# Usage errors: not the event path.
batch_path_only chrome_bad_format_and_follow_are_usage_errors

test_chrome_bad_format_and_follow_are_usage_errors() {
	local out rc
	out=$($B/recorder-tail -p 1 --format yaml 2>&1)
	rc=$?
	[[ $out == *"invalid --format 'yaml': expected text, json or chrome"* ]] && [ $rc -ne 0 ] ||
		fail "bad --format (exit $rc): $out" || return 1
	out=$($B/recorder-tail -p 1 --format chrome --follow 2>&1)
	rc=$?
	[[ $out == *"--format chrome writes one trace of the tails: it does not go with --follow"* ]] &&
		[ $rc -ne 0 ] || fail "--format chrome --follow (exit $rc): $out" || return 1
	out=$($B/recorder-tail -p 1 --format chrome --list 2>&1)
	[[ $out == *"does not go with --follow, --list"* ]] || fail "--format chrome --list: $out"
}

# chrome_us RFC3339: the microseconds since the epoch of a dump's "dumped_at", as "ts" has them.
chrome_us() {
	python3 -c 'import datetime, sys
d = datetime.datetime.strptime(sys.argv[1], "%Y-%m-%dT%H:%M:%S.%fZ")
d = d.replace(tzinfo=datetime.timezone.utc)
print("%d" % (int(d.timestamp()) * 1000000 + d.microsecond))' "$1"
}

# chrome_extent TRACE NAME: the microseconds from the B of the slice NAME to its E.
chrome_extent() {
	jq -r --arg n "$2" '[.traceEvents[] | select(.name == $n and (.ph == "B" or .ph == "E")) | .ts] |
		(.[1] - .[0]) | floor' "$1"
}

# Issue 35, item 5: the snapshot of a hung get, taken when its command and lookup
# spans had been open for a second, draws them: each ends at the snapshot's time,
# named "NAME (open)" (B and E), next to the set that ended 3 ms after it began.
# Live, they end at the read; in the black box of the process, at its death
# (the dump's ended.time_ns).
test_chrome_hung_request_is_drawn_up_to_the_snapshot() {
	local snap at ext before after end box out
	start_target $B/tests/targets/incident hung-get || return 1
	$B/recorder-attach $RECORDER_ATTACH_FLAGS -p "$TARGET_PID" --dump-dir "$T/dumps" \
		--trigger 'span:lookup>1s' --trigger-scope process --trigger-after 0 \
		>"$T/attach.out" 2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	wait_for "$T/attach.out" '^attached to' 30 || { cat "$T/attach.err"; return 1; }
	wait_for "$T/target.out" '^hanging' || return 1
	wait_for "$T/attach.err" 'snapshot written to ' 30 || return 1
	snap=$(sed -n 's/^recorder-attach: trigger .* snapshot written to //p' "$T/attach.err" | head -1)
	$B/recorder-tail --file "$snap" --format chrome >"$T/snap.json" ||
		fail "recorder-tail --format chrome of $snap failed" || return 1
	at=$(chrome_us "$(jq -r .dumped_at "$snap")")
	out=$($CHECK_TRACE "$T/snap.json" --open-until "$at") || fail "snapshot: $out" || return 1
	expect "the set, and the get with its open spans" \
		"recording set
command set
recording (open) get
command (open) get
lookup (open) get" \
		"$(jq -r '.traceEvents[] | select(.ph == "B") | "\(.name) \(.args.subject)"' "$T/snap.json")" ||
		return 1
	ext=$(chrome_extent "$T/snap.json" "lookup (open)")
	[ "$ext" -ge 1000000 ] ||
		fail "the hung lookup is drawn for ${ext} us, not the second it hung" || return 1
	expect "it is marked open" "true" \
		"$(jq -r '.traceEvents[] | select(.name == "lookup (open)" and .ph == "B") | .args.open' "$T/snap.json")" ||
		return 1

	# Live: up to the read.
	before=$(date +%s%6N)
	$B/recorder-tail -p "$TARGET_PID" --format chrome >"$T/live.json" || return 1
	after=$(date +%s%6N)
	out=$($CHECK_TRACE "$T/live.json") || fail "live: $out" || return 1
	end=$(jq -r '.traceEvents[] | select(.name == "lookup (open)" and .ph == "E") | .ts | floor' "$T/live.json")
	[ "$end" -ge "$before" ] && [ "$end" -le "$after" ] ||
		fail "live: the open lookup ends at $end, not at the read ($before..$after)" || return 1

	# The black box: up to the death.
	kill -KILL "$TARGET_PID"
	wait_for "$T/attach.out" "black box of pid $TARGET_PID written to " 30 || return 1
	box=$(sed -n "s/^recorder-attach: black box of pid $TARGET_PID written to //p" "$T/attach.out")
	$B/recorder-tail --file "$box" --format chrome >"$T/box.json" || return 1
	# Its death, as "ts" has it: ended.time_ns (CLOCK_MONOTONIC) + clock_offset_ns.
	at=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
t = d["ended"]["time_ns"] + d["clock_offset_ns"]
print("%d.%03d" % (t // 1000, t % 1000))' "$box") || fail "the black box has no ended.time_ns" ||
		return 1
	out=$($CHECK_TRACE "$T/box.json" --open-until "$at") || fail "black box: $out" || return 1
	[ "${at%.*}" -ge "$after" ] && [ "${at%.*}" -le "$(chrome_us "$(jq -r .dumped_at "$box")")" ] ||
		fail "the black box's spans end at $at, not at the death (after $after, by its writing)" ||
		return 1
	ext=$(chrome_extent "$T/box.json" "lookup (open)")
	[ "$ext" -ge 1000000 ] || fail "black box: the lookup is drawn for ${ext} us" || return 1
}
