# SPDX-License-Identifier: MIT
# recorder-tail --format chrome: the Chrome trace of a live tail and of a black
# box, with every filter, checked by tests/chrome/check_trace.py against the
# JSON lines of the same tail (same events, spans, nesting, metadata).

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
	wait_for "$T/target.out" '^ready' || return 1
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
	wait_for "$T/target.out" '^ready' || return 1
	chrome_same_as_json "threads" -p "$TARGET_PID" -- || return 1
	# Each thread serves one recording: its name is that recording's subject.
	want=$(jq -r '"\(.tid) \(.subject)"' "$T/tail.jsonl" | sort -u)
	got=$(jq -r '.traceEvents[] | select(.name == "thread_name") | "\(.tid) \(.args.name)"' \
		"$T/trace.json" | sort)
	expect "thread names" "$want" "$got" || return 1
	expect "one process" "pid $TARGET_PID" \
		"$(jq -r '.traceEvents[] | select(.name == "process_name") | .args.name' "$T/trace.json")"
}

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
