# SPDX-License-Identifier: MIT
# Limits (docs/guide/limits.md): every table, cache and list a target can grow is
# bounded, and what does not fit is counted where --stats, --list and the dump
# show it. One hostile process cannot cost another its events.

LIMITS=$B/tests/targets/limits

# limits_attach [OPTION...] -- PID...: recorder-attach with options, dumps to $T/dumps.
limits_attach() {
	local opts=() pids=() n=0
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	for p in "$@"; do
		pids+=(-p "$p")
		n=$((n + 1))
	done
	$B/recorder-attach $RECORDER_ATTACH_FLAGS "${pids[@]}" "${opts[@]}" --dump-dir "$T/dumps" \
		>"$T/attach.out" 2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	local i
	for ((i = 0; i < 500; i++)); do
		[ "$(grep -c '^attached to' "$T/attach.out")" -ge "$n" ] && return 0
		if ! kill -0 "$ATTACH_PID" 2>/dev/null; then
			echo "recorder-attach exited before attaching:"
			cat "$T/attach.out" "$T/attach.err"
			return 1
		fi
		sleep 0.02
	done
	echo "recorder-attach did not attach within 10 s:"
	cat "$T/attach.out" "$T/attach.err"
	return 1
}

# limits_start NAME ARGS...: starts the limits target; sets NAME_PID and writes $T/NAME.out.
limits_start() {
	local name=$1
	shift
	$LIMITS "$@" >"$T/$name.out" 2>"$T/$name.err" &
	BG_PIDS+=($!)
	wait_for "$T/$name.out" '^pid [0-9]+' || { cat "$T/$name.err"; return 1; }
	printf -v "${name}_PID" '%s' "$(awk '/^pid/{print $2; exit}' "$T/$name.out")"
}

# limits_dump PID: the black box recorder-attach wrote for PID (waits for it).
limits_dump() {
	wait_for "$T/attach.out" "black box of pid $1 written to " 60 >&2 || return 1
	sed -n "s/^recorder-attach: black box of pid $1 written to //p" "$T/attach.out"
}

# limits_identity WHAT LIST_JSON: every row of a --list --json has seen = kept + dropped.
limits_identity() {
	local bad
	bad=$(echo "$2" | jq -c 'select(.seen != .kept + .dropped) | {subject, seen, kept, dropped}' | head -5)
	[ -z "$bad" ] || fail "$1: seen != kept + dropped for: $bad"
}

# Issue 10, item 2: 70,000 recordings in one process beside a normal one. The
# BPF table holds 65,536: before the quota, the hostile process took all of it
# and the normal one's recordings were lost without a count.
test_limits_hostile_process_leaves_its_neighbour_exact() {
	limits_start hostile many 70000 || return 1
	limits_start normal -w normal || return 1
	# A ring that holds the hostile burst (70,000 recordings, about 20 MB of records)
	# whatever the consumer's pace: this test is about the table's quota, and a
	# record the full ring refused (counted in ring_full) would take a refused
	# recording's subject with it. Checked below: nothing was refused.
	limits_attach --ring-size $((64 << 20)) -- "$hostile_PID" "$normal_PID" || return 1
	wait_for "$T/hostile.out" '^ready' 120 || return 1
	# Only now, with the hostile process done, does the normal one create its recordings.
	kill -USR1 "$normal_PID"
	wait_for "$T/normal.out" '^ready' 30 || return 1
	expect "the normal process's recordings are exact" \
		"$(for i in 0 1 2 3; do echo "normal[$i] 25 25 0 10 live"; done)" \
		"$($B/recorder-tail -p "$normal_PID" --list --json |
			jq -r '"\(.subject) \(.seen) \(.kept) \(.dropped) \(.tail) \(.state)"')" || return 1
	expect "and so are their tails" \
		"$(for i in 0 1 2 3; do for j in $(seq 15 24); do echo "normal[$i] $j $i $j"; done; done)" \
		"$($B/recorder-tail -p "$normal_PID" --json |
			jq -r '"\(.subject) \(.seq) \(.fields.i) \(.fields.n)"')" || return 1
	expect "the hostile process got its quota (a quarter of the table), the rest is counted" \
		'{"limit":16384,"used":16384,"over":53616,"events":160848}' \
		"$($B/recorder-tail -p "$hostile_PID" --stats --json | jq -c '.limits.recordings_per_process')" ||
		return 1
	expect "every event of the refused recordings is counted by the BPF side" 160848 \
		"$($B/recorder-tail -p "$hostile_PID" --stats --json | jq '.counters.untracked_events')" ||
		return 1
	expect "the ring refused nothing (the test's premise)" 0 \
		"$($B/recorder-tail -p "$hostile_PID" --stats --json | jq '.counters.ring_full')" || return 1
	local list
	list=$($B/recorder-tail -p "$hostile_PID" --list --json)
	expect "the refused recordings are listed, saying why, each with its 3 events lost" \
		"16384 live 3 3 0
53616 over-quota 3 0 3" \
		"$(echo "$list" | jq -r '"\(.state) \(.seen) \(.kept) \(.dropped)"' | sort | uniq -c |
			awk '{print $1, $2, $3, $4, $5}')" || return 1
	expect "a refused recording keeps its subject" '"many[69999]" "over-quota"' \
		"$(echo "$list" | jq -c 'select(.subject == "many[69999]") | .subject, .state' | tr '\n' ' ' |
			sed 's/ $//')" || return 1
	limits_identity "hostile, live" "$list" || return 1
	# Its black box holds what a reader accepts (65,536 recordings), and says what it left out.
	kill -TERM "$hostile_PID"
	local dump
	dump=$(limits_dump "$hostile_PID") || return 1
	expect "the black box is readable, and counts the recordings left out" "65536 4464" \
		"$($B/recorder-tail --file "$dump" --list --json | jq -s length) $($B/recorder-tail --file "$dump" --stats --json | jq .recordings_omitted)"
}

# Item 2 with small limits: the quota, then a full table, each counted per process.
test_limits_quota_and_full_table_are_counted_per_process() {
	limits_start a many 50 || return 1
	limits_start b -w many 30 || return 1
	limits_attach --max-recordings 64 --max-recordings-per-process 40 -- "$a_PID" "$b_PID" ||
		return 1
	wait_for "$T/a.out" '^ready' 30 || return 1
	kill -USR1 "$b_PID"
	wait_for "$T/b.out" '^ready' 30 || return 1
	# B's recordings reach the table with its batch: at a read of B, or within
	# --collect-ms (50 ms). A's figure of the whole table waits for them (10 s at most).
	local i
	for ((i = 0; i < 200; i++)); do
		[ "$($B/recorder-tail -p "$a_PID" --stats --json | jq -c .limits.recordings.used)" = 64 ] && break
		sleep 0.05
	done
	expect "A: 40 recordings tracked, 10 refused at its quota with their 30 events" \
		'{"limit":40,"used":40,"over":10,"events":30} {"limit":64,"used":64,"over":0,"events":0}' \
		"$($B/recorder-tail -p "$a_PID" --stats --json | jq -c '.limits.recordings_per_process, .limits.recordings' | tr '\n' ' ' | sed 's/ $//')" ||
		return 1
	expect "B: the 24 places left, then 6 refused for want of room with their 18 events" \
		'{"limit":40,"used":24,"over":0,"events":0} {"limit":64,"used":64,"over":6,"events":18}' \
		"$($B/recorder-tail -p "$b_PID" --stats --json | jq -c '.limits.recordings_per_process, .limits.recordings' | tr '\n' ' ' | sed 's/ $//')" ||
		return 1
	expect "B lists them as table-full" "24 live
6 table-full" \
		"$($B/recorder-tail -p "$b_PID" --list --json | jq -r .state | sort | uniq -c | awk '{print $1, $2}')" ||
		return 1
	limits_identity "A" "$($B/recorder-tail -p "$a_PID" --list --json)" || return 1
	limits_identity "B" "$($B/recorder-tail -p "$b_PID" --list --json)" || return 1
	expect "the BPF side counts every refusal and every lost event" '{"untracked_events":48,"over_quota":10,"table_full":6}' \
		"$($B/recorder-tail -p "$b_PID" --stats --json | jq -c '.counters | {untracked_events, over_quota, table_full}')"
}

# A freed recording keeps its place in the table until recorder-attach has read
# its last counters: a process that churns recordings faster than they are read
# still gets no more than its quota. Nothing is read here until the end (a drain
# every 10 s), so the first 16 recordings take the quota and the rest are refused,
# retired untracked ones included.
test_limits_churn_cannot_pass_the_quota() {
	# Churns only once the attach is done (-w, SIGUSR1): the attach itself drains
	# the ring (and so releases entries) while it seeds the stacks.
	limits_start t -w retire 40 || return 1
	limits_attach --max-recordings 64 --max-recordings-per-process 16 --keep-retired 100 \
		--drain-ms 10000 -- "$t_PID" || return 1
	kill -USR1 "$t_PID"
	wait_for "$T/t.out" '^ready' || return 1
	local list
	list=$($B/recorder-tail -p "$t_PID" --list --json)
	expect "16 tracked, then 24 retired and 1 live refused, each event counted" \
		"16 retired 3 3 0 -
24 retired 3 0 3 over-quota
1 live 2 0 2 over-quota" \
		"$(echo "$list" | jq -r '"\(.state) \(.seen) \(.kept) \(.dropped) \(.untracked // "-")"' |
			sed 's/^over-quota /live /' | uniq -c | awk '{print $1, $2, $3, $4, $5, $6}')" ||
		return 1
	expect "the process's count" '{"limit":16,"used":0,"over":25,"events":74}' \
		"$($B/recorder-tail -p "$t_PID" --stats --json | jq -c .limits.recordings_per_process)"
}

# Issue 10, item 12: events that fail validation count in their recording.
test_limits_invalid_events_count_in_their_recording() {
	limits_start t invalid || return 1
	limits_attach -- "$t_PID" || return 1
	wait_for "$T/t.out" '^ready' || return 1
	local want='{"subject":"invalid","seen":5,"kept":3,"dropped":2,"invalid":2}'
	expect "seen = kept + dropped, the invalid ones among the dropped" "$want" \
		"$($B/recorder-tail -p "$t_PID" --list --json | jq -c '{subject, seen, kept, dropped, invalid}')" ||
		return 1
	grep -qE '^[0-9]+ +0x[0-9a-f]+ +0x[0-9a-f]+ +invalid +10 +10 +5 +3 +2 +3 live$' <<<"$($B/recorder-tail -p "$t_PID" --list)" ||
		fail "the text list does not say seen 5, kept 3, dropped 2: $($B/recorder-tail -p "$t_PID" --list)" ||
		return 1
	expect "the tail shows them as gaps" "0 2 4" \
		"$($B/recorder-tail -p "$t_PID" --json | jq -r .seq | tr '\n' ' ' | sed 's/ $//')" || return 1
	expect "and the process-wide count still has them" 2 \
		"$($B/recorder-tail -p "$t_PID" --stats --json | jq .malformed)" || return 1
	kill -9 "$t_PID"
	local dump
	dump=$(limits_dump "$t_PID") || return 1
	expect "the black box says the same" "$want" \
		"$($B/recorder-tail --file "$dump" --list --json | jq -c '{subject, seen, kept, dropped, invalid}')"
}

# limits_retire_check KEEP FORGOTTEN: after "retire N", what --stats and the dump say.
limits_retire_check() {
	local keep=$1 gone=$2 a
	a=$(awk '$1 == "recorder" && $2 == "a" {print $3}' "$T/t.out")
	local tally="[{\"recorder\":\"$a\",\"recordings\":$gone,\"seen\":$((gone * 3)),\"delivered\":$((gone * 3)),\"kept\":$((gone * 3)),\"dropped\":0}]"
	local row="{\"limit\":$keep,\"used\":$keep,\"over\":$gone,\"events\":$((gone * 3))}"
	expect "the recordings forgotten to make room, tallied for their recorder" "$tally $row" \
		"$($B/recorder-tail -p "$t_PID" --stats --json | jq -c '.forgotten, .limits.retired_kept' | tr '\n' ' ' | sed 's/ $//')" ||
		return 1
	expect "the $keep retired last are kept, beside the live one" \
		"$keep retired
1 live" \
		"$($B/recorder-tail -p "$t_PID" --list --json | jq -r .state | sort | uniq -c | awk '{print $1, $2}' | sort -r)" ||
		return 1
	grep -qE "^    recorder $a +recordings $gone, seen $((gone * 3)), delivered $((gone * 3)), dropped 0$" \
		<<<"$($B/recorder-tail -p "$t_PID" --stats)" ||
		fail "--stats does not show the tally: $($B/recorder-tail -p "$t_PID" --stats)" || return 1
	kill -9 "$t_PID"
	local dump
	dump=$(limits_dump "$t_PID") || return 1
	# The dump's own name for delivered is kept (docs/dump-format.md).
	expect "the black box has the tally" "$(jq -c 'map(del(.delivered))' <<<"$tally")" \
		"$(jq -c .forgotten "$dump")" || return 1
	expect "and --stats of the black box shows it" "$tally $row" \
		"$($B/recorder-tail --file "$dump" --stats --json | jq -c '.forgotten, .limits.retired_kept' | tr '\n' ' ' | sed 's/ $//')"
}

# Retired recordings kept after free: 64 by default, and what is forgotten is tallied.
test_limits_forgotten_recordings_are_tallied_per_recorder() {
	limits_start t retire 100 || return 1
	limits_attach -- "$t_PID" || return 1
	wait_for "$T/t.out" '^ready' || return 1
	limits_retire_check 64 36
}

test_limits_keep_retired_option() {
	limits_start t retire 20 || return 1
	limits_attach --keep-retired 5 -- "$t_PID" || return 1
	wait_for "$T/t.out" '^ready' || return 1
	limits_retire_check 5 15
}

# Issue 10, item 6: the callsite and literal caches are bounded; past them
# events still show right, live and in the black box.
test_limits_callsite_and_literal_caches_are_bounded() {
	limits_start t callsites || return 1
	limits_attach --max-callsites 16 --max-literals 8 -- "$t_PID" || return 1
	wait_for "$T/t.out" '^ready' || return 1
	local want i
	want=$(for i in $(seq 10 89); do
		case $i in *8 | *9) continue ;; esac
		echo "callsite $i literal $i limits.c"
	done)
	expect "every event shows its own callsite and literal" "$want" \
		"$($B/recorder-tail -p "$t_PID" --json | jq -r '"\(.fields.message) \(.fields.lit) \(.file | split("/") | last)"')" ||
		return 1
	local stats
	stats=$($B/recorder-tail -p "$t_PID" --stats --json)
	expect "both caches are full, and the reads past them are counted" "16 true 8 true" \
		"$(echo "$stats" | jq -r '"\(.limits.callsites.used) \(.limits.callsites.over > 0) \(.limits.literals.used) \(.limits.literals.over > 0)"')" ||
		return 1
	kill -9 "$t_PID"
	local dump
	dump=$(limits_dump "$t_PID") || return 1
	expect "the black box has every callsite its events need" "$want" \
		"$($B/recorder-tail --file "$dump" --json | jq -r '"\(.fields.message) \(.fields.lit) \(.file | split("/") | last)"')"
}

# Issue 10, item 5: stacks of threads that died inside spans are bounded.
test_limits_dead_thread_stacks_are_bounded() {
	limits_start t dead 50 || return 1
	limits_attach --max-dead-stacks 10 -- "$t_PID" || return 1
	wait_for "$T/t.out" '^ready' 30 || return 1
	expect "10 stacks kept, the 40 oldest counted" '{"limit":10,"used":10,"over":40,"events":0}' \
		"$($B/recorder-tail -p "$t_PID" --stats --json | jq -c .limits.dead_stacks)" || return 1
	kill -9 "$t_PID"
	local dump
	dump=$(limits_dump "$t_PID") || return 1
	expect "the black box holds the 10 stacks (the last threads to die) and the count" \
		"10 $(for i in $(seq 10); do echo '["doomed","recording"]'; done | sort -u) {\"limit\":10,\"used\":10,\"over\":40,\"events\":0}" \
		"$($B/recorder-tail --file "$dump" --stacks --json | jq -s length) $($B/recorder-tail --file "$dump" --stacks --json | jq -c '[.stack[].name]' | sort -u) $($B/recorder-tail --file "$dump" --stats --json | jq -c .limits.dead_stacks)" ||
		return 1
	expect "they are the last 10 threads to die, in the order they died" \
		"$(awk '$1 == "thread" {print $2}' "$T/t.out" | tail -10)" \
		"$(jq -r '.stacks[].tid' "$dump")"
}

# Item 5 as reported: 70,000 threads that ended inside spans made a black box
# with 70,000 stacks, which the reader (65,536 at most) refused.
test_limits_70000_dead_threads_leave_a_readable_black_box() {
	limits_start t dead 70000 || return 1
	limits_attach -- "$t_PID" || return 1
	wait_for "$T/t.out" '^ready' 120 || return 1
	kill -9 "$t_PID"
	local dump
	dump=$(limits_dump "$t_PID") || return 1
	expect "the black box is readable: the default 4096 newest stacks, the rest counted" \
		'4096 {"limit":4096,"used":4096,"over":65904,"events":0}' \
		"$($B/recorder-tail --file "$dump" --stacks --json | jq -s length) $($B/recorder-tail --file "$dump" --stats --json | jq -c .limits.dead_stacks)"
}

test_limits_bad_values_are_refused() {
	local out
	out=$($B/recorder-attach -p 1 --max-recordings 0 2>&1)
	echo "$out" | grep -q "invalid --max-recordings '0': expected 16 to 4194304" ||
		fail "unexpected: $out" || return 1
	out=$($B/recorder-attach -p 1 --max-recordings 64 --max-recordings-per-process 65 2>&1)
	echo "$out" | grep -q -- "--max-recordings-per-process 65 is more than --max-recordings 64" ||
		fail "unexpected: $out" || return 1
	out=$($B/recorder-attach -p 1 --max-dead-stacks 65537 2>&1)
	echo "$out" | grep -q "invalid --max-dead-stacks '65537': expected 1 to 65536" ||
		fail "unexpected: $out"
}
