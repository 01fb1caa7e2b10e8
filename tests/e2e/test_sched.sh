# SPDX-License-Identifier: MIT
# Kernel time per span (issue 26): each span a thread left has the time it was
# on the CPU, blocked (by system call) and waiting to run, from the scheduler
# hooks; cpu + blocked + runq = duration (docs/kernel-time.md). Each test runs
# the sched target (tests/targets/sched.c) in one mode, attached with --sched.

SCHED_TARGET=$B/tests/targets/sched

# sched_run MODE [ARG] [-- ATTACH ARGS...]: runs the sched target in MODE, attached
# with --sched and the args (each one word, blanks and all), until it has done; SPANS
# is then its spans as recorder-tail --spans --json prints them.
sched_run() {
	local args=() i
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	start_target "$SCHED_TARGET" "${args[@]}" || return 1
	# shellcheck disable=SC2086 # the suite's flags are words
	$B/recorder-attach $RECORDER_ATTACH_FLAGS --sched "$@" -p "$TARGET_PID" \
		--dump-dir "$T/dumps" >"$T/attach.out" 2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	for ((i = 0; i < 500; i++)); do
		grep -q '^attached to' "$T/attach.out" && break
		kill -0 "$ATTACH_PID" 2>/dev/null || break
		sleep 0.02
	done
	grep -q '^attached to' "$T/attach.out" ||
		{ echo "recorder-attach did not attach:"; cat "$T/attach.out" "$T/attach.err"; return 1; }
	wait_for "$T/target.out" '^done' 30 || { cat "$T/target.err"; return 1; }
	SPANS=$(rtail --spans --json | jq -c 'select(.type == "span")') || return 1
}

# span NAME: the first span called NAME of SPANS.
span() {
	jq -sc --arg n "$1" 'map(select(.name == $n))[0]' <<<"$SPANS"
}

test_sched_a_sleeping_span_is_blocked_in_clock_nanosleep() {
	sched_run sleep || return 1
	local s
	s=$(span sleep)
	expect "sleep: blocked >= 95 ms, most of it in clock_nanosleep, cpu under 20 ms" \
		'{"blocked":true,"in_nanosleep":true,"cpu_small":true,"switched":true}' \
		"$(jq -c '{blocked: (.blocked_ns >= 95000000),
			in_nanosleep: (.blocked_by.clock_nanosleep >= 95000000),
			cpu_small: (.cpu_ns < 20000000), switched: (.switches >= 1)}' <<<"$s")" ||
		{ echo "    $s"; return 1; }
	expect "the text S line shows it: (cpu …, blocked 100.x [clock_nanosleep 100.x], runq …)" \
		'yes' \
		"$(rtail --spans | grep -E '\] <sched> span sleep: [0-9.]+ ms \(cpu [0-9]+\.[0-9], blocked (9[5-9]|[1-9][0-9]{2,})\.[0-9] \[clock_nanosleep [0-9]+\.[0-9]\], runq [0-9]+\.[0-9]\), id ' >/dev/null && echo yes)" ||
		{ rtail --spans | sed 's/^/    | /'; return 1; }
}

test_sched_a_spinning_span_is_on_the_cpu() {
	sched_run spin || return 1
	local s
	s=$(span spin)
	# It spins until its thread's CPU clock has run 100 ms: the scheduler saw as much.
	expect "spin: cpu >= 90 ms, nothing blocked in a system call" \
		'{"cpu":true,"blocked_small":true}' \
		"$(jq -c '{cpu: (.cpu_ns >= 90000000), blocked_small: (.blocked_ns < 5000000)}' <<<"$s")" ||
		{ echo "    $s"; return 1; }
}

test_sched_a_span_beside_a_cpu_hog_waits_to_run() {
	sched_run hog || return 1
	local s
	s=$(span contended)
	# It needs 50 ms of CPU while a hog shares its one CPU: about as long waiting.
	expect "contended: runq well above zero (>= 10 ms), cpu >= 45 ms, preempted often" \
		'{"runq":true,"cpu":true,"switches":true}' \
		"$(jq -c '{runq: (.runq_ns >= 10000000), cpu: (.cpu_ns >= 45000000),
			switches: (.switches >= 2)}' <<<"$s")" || { echo "    $s"; return 1; }
}

# The run-queue wait after a wakeup (from the kernel's sched_info, with no hook on
# wakeups): a span that only sleeps, beside a hog on its CPU, waits to run after
# each of its 20 wakeups, and hardly runs at all, so nearly all of its runq is that.
test_sched_a_woken_span_waits_to_run() {
	sched_run wake || return 1
	local s
	s=$(span woken)
	# 20 us: 1 us a wakeup, below the least a wakeup that preempts the hog at once
	# waits (from the timer's interrupt to the switch: 2 us on one machine, 1.75 on
	# another, 35 us over the 20, which failed the 40 us this bound was); read from
	# a stale clock it was 0 - 12 us, with the wakeup hook 127 us - 2.8 ms.
	expect "woken: blocked >= 19 ms in clock_nanosleep, runq >= 20 us, 20 switches or more" \
		'{"blocked":true,"runq":true,"switches":true}' \
		"$(jq -c '{blocked: (.blocked_by.clock_nanosleep >= 19000000), runq: (.runq_ns >= 20000),
			switches: (.switches >= 20)}' <<<"$s")" || { echo "    $s"; return 1; }
}

test_sched_a_span_waiting_on_a_mutex_is_blocked_in_futex() {
	sched_run mutex || return 1
	local s
	s=$(span lock)
	expect "lock: blocked >= 90 ms in futex" '{"futex":true}' \
		"$(jq -c '{futex: (.blocked_by.futex >= 90000000)}' <<<"$s")" || { echo "    $s"; return 1; }
	expect "the parent (the recording span) includes its child's time" 'true' \
		"$(jq -sc 'map(select(.name == "recording"))[0].blocked_by.futex >=
			map(select(.name == "lock"))[0].blocked_by.futex' <<<"$SPANS")" || return 1
}

test_sched_a_span_faulting_pages_in_is_blocked_in_fault() {
	# 16 MiB the target maps after dropping it from the page cache: each page
	# it reads is a major fault that waits on the disk.
	dd if=/dev/urandom of="$T/pages" bs=1M count=16 status=none || return 1
	sched_run fault "$T/pages" || return 1
	local s
	s=$(span fault)
	expect "fault: blocked in fault, most of its blocked time" '{"fault":true,"most":true}' \
		"$(jq -c '{fault: (.blocked_by.fault > 0),
			most: (.blocked_by.fault * 2 > .blocked_ns)}' <<<"$s")" || { echo "    $s"; return 1; }
	expect "the text S line names it: blocked … [fault …]" 'yes' \
		"$(rtail --spans | grep -E '\] <sched> span fault: .* blocked [0-9.]+ \[fault [0-9.]+' >/dev/null && echo yes)" ||
		{ rtail --spans | sed 's/^/    | /'; return 1; }
}

test_sched_a_thread_switching_all_the_time_is_bounded_and_counted() {
	# 100,000 round trips with another thread: 200,000 switches of this
	# thread, far more than the 8192 intervals a thread keeps.
	sched_run switch 100000 || return 1
	local s
	s=$(span switchy)
	expect "switchy: the switches its thread kept (at most 8192), the older gone, so partial" \
		'{"switches":true,"partial":true,"sum":true}' \
		"$(jq -c '{switches: (.switches > 1000 and .switches <= 8192),
			partial: (.sched_partial == true),
			sum: (.cpu_ns + .blocked_ns + .runq_ns == .duration_ns)}' <<<"$s")" ||
		{ echo "    $s"; return 1; }
	expect "--stats --json counts what was pushed out, and intervals" '{"forgotten":true,"intervals":true}' \
		"$(rtail --stats --json | jq -c 'select(.sched) | .sched |
			{forgotten: (.forgotten > 0), intervals: (.intervals > 8192)}' | head -1)" ||
		{ rtail --stats --json | sed 's/^/    | /'; return 1; }
}

test_sched_cpu_blocked_and_runq_add_up_over_many_spans() {
	sched_run many 200 || return 1
	# The identity is exact in ns (docs/kernel-time.md): cpu is the span's time
	# not covered by an interval off the CPU. Each iteration sleeps 1 ms, of
	# which the thread is off the CPU all but the few us before it switches.
	# Known issue (docs/kernel-time.md): under load about 1 span in 300 shows
	# no interval for its sleep; at most 4 of 200 may, and they are shown.
	expect "200 iter spans, each: cpu + blocked + runq == duration; blocked >= 0.9 ms and 1+ switch in 196 or more" \
		'{"n":200,"sum":200,"blocked":true,"switched":true,"partial":0}' \
		"$(jq -sc 'map(select(.name == "iter")) |
			{n: length,
			 sum: map(select(.cpu_ns + .blocked_ns + .runq_ns == .duration_ns)) | length,
			 blocked: (map(select(.blocked_ns >= 900000)) | length >= 196),
			 switched: (map(select(.switches >= 1)) | length >= 196),
			 partial: map(select(.sched_partial)) | length}' <<<"$SPANS")" ||
		{ jq -c 'select(.name == "iter" and (.blocked_ns < 900000 or .switches < 1))' <<<"$SPANS"; return 1; }
	jq -c 'select(.name == "iter" and (.blocked_ns < 900000 or .switches < 1)) |
		"    note: a span with no sleep seen: \(.duration_ns) ns, \(.switches) switches"' -r <<<"$SPANS"
	expect "the parts the text line shows add up to its time, to 0.2 ms (three roundings)" \
		'0' \
		"$(rtail --spans | sed -nE 's/.*span iter: ([0-9.]+) ms \(cpu ([0-9.]+), blocked ([0-9.]+)( \[[^]]*\])?, runq ([0-9.]+)\).*/\1 \2 \3 \5/p' |
			awk '{ d = $1 - $2 - $3 - $4; if (d < 0) d = -d; if (d > 0.2) bad++; n++ }
				END { print (n == 200 ? bad + 0 : "only " n " lines") }')"
}

test_sched_no_sched_attaches_no_hook_and_shows_nothing() {
	sched_run sleep -- --no-sched || return 1
	expect "--no-sched: no kernel time in the spans" 'null null' \
		"$(span sleep | jq -r '"\(.cpu_ns) \(.blocked_ns)"')" || return 1
	expect "it says so at start" 'kernel time per span: off (--sched: on)' \
		"$(grep '^kernel time per span' "$T/attach.out")"
}

test_sched_black_box_keeps_the_kernel_time() {
	sched_run mutex || return 1
	local live dump bad
	live=$(jq -c '{name, cpu_ns, blocked_ns, runq_ns, switches, blocked_by}' <<<"$SPANS")
	kill -9 "$TARGET_PID"
	wait_for "$T/attach.out" "black box of pid $TARGET_PID written to " 30 || return 1
	dump=$(sed -n "s/^recorder-attach: black box of pid $TARGET_PID written to //p" "$T/attach.out")
	expect "the black box is version 3, with the sched counts" '3 true' \
		"$(jq -r '"\(.version) \(.sched.intervals > 0)"' "$dump")" || return 1
	expect "its spans read back with the kernel time the live process showed" "$live" \
		"$($B/recorder-tail --file "$dump" --spans --json |
			jq -c 'select(.type == "span" and .exit != null) |
				{name, cpu_ns, blocked_ns, runq_ns, switches, blocked_by}')" || return 1
	expect "--stats says what was kept" 'yes' \
		"$(grep -qE '^kernel time \(--sched\): [1-9][0-9]* intervals off the CPU, 0 lost' \
			<<<"$($B/recorder-tail --file "$dump" --stats)" && echo yes)" ||
		return 1
	bad=$T/bad.json
	jq -c '.recordings[0].spans[0].cpu_ns += 1' "$dump" >"$bad"
	expect "a span whose parts do not add up is refused, named" \
		'recordings[0].spans[0].cpu_ns: cpu_ns + blocked_ns + runq_ns is not exit_ns - enter_ns' \
		"$($B/recorder-tail --file "$bad" 2>&1 | grep -o 'recordings\[0\]\.spans\[0\]\.cpu_ns: .*')"
}

test_sched_chrome_trace_draws_time_off_the_cpu_inside_spans() {
	sched_run mutex || return 1
	local trace=$T/trace.json dump
	rtail --format chrome >"$trace" || return 1
	tests/chrome/check_trace.py "$trace" --off-cpu-min 1 >"$T/check.out" ||
		{ cat "$T/check.out"; return 1; }
	# The slice follows the B of the span it is in: "lock", in "recording".
	expect "a 'blocked: futex' slice of 90 ms or more, right inside the lock span" \
		'{"name":"blocked: futex","long":true,"in":"lock"}' \
		"$(jq -c '[.traceEvents[] | select(.ph == "B" or .ph == "E")] as $e |
			[range(0; $e | length) as $i |
			 select($e[$i].ph == "B" and $e[$i].name == "blocked: futex") |
			 {name: $e[$i].name, long: (($e[$i + 1].ts - $e[$i].ts) >= 90000),
			  in: ([$e[0:$i][] | select(.ph == "B" and (.args.off_cpu | not))] | last | .name)}] |
			max_by(.long)' "$trace")" || return 1
	kill -9 "$TARGET_PID"
	wait_for "$T/attach.out" "black box of pid $TARGET_PID written to " 30 || return 1
	dump=$(sed -n "s/^recorder-attach: black box of pid $TARGET_PID written to //p" "$T/attach.out")
	expect "the black box's trace draws the same slices" \
		"$(jq -c '[.traceEvents[] | select(.args.off_cpu) | {name, ts}]' "$trace")" \
		"$($B/recorder-tail --file "$dump" --format chrome | jq -c '[.traceEvents[] | select(.args.off_cpu) | {name, ts}]')"
}

# recorder-tail --otlp: a span's kernel time as attributes, checked by the real
# receiver (tests/otlp/receiver.py) field by field.
test_sched_otlp_spans_carry_the_kernel_time() {
	sched_run mutex || return 1
	python3 tests/otlp/receiver.py --port-file "$T/otlp.port" --out "$T/otlp.out" \
		--errors "$T/otlp.err" --raw-traces "$T/traces.json" >"$T/receiver.log" 2>&1 &
	BG_PIDS+=($!)
	wait_for "$T/otlp.port" '^[0-9]+$' || return 1
	local out
	out=$(rtail --spans --otlp "http://127.0.0.1:$(cat "$T/otlp.port")" 2>&1) ||
		fail "recorder-tail --otlp failed: $out" || return 1
	[ ! -s "$T/otlp.err" ] || fail "the receiver refused a request: $(cat "$T/otlp.err")" || return 1
	# jq reads the epoch ns as doubles: the sum is checked to 1 us.
	expect "the lock span says it was blocked 90 ms or more in futex, and the parts add up" \
		'{"futex":true,"sum":true,"switches":true}' \
		"$(jq -c 'select(.name == "lock") | .attributes as $a |
			{futex: (($a["recorder.blocked.futex"] | tonumber) >= 90000000),
			 sum: ((($a["recorder.cpu_ns"] | tonumber) + ($a["recorder.blocked_ns"] | tonumber) +
			        ($a["recorder.runq_ns"] | tonumber) - ((.end | tonumber) - (.start | tonumber))) |
			       fabs < 1000),
			 switches: (($a["recorder.switches"] | tonumber) >= 1)}' "$T/otlp.out.spans")" || return 1
	# schema_check: tests/e2e/test_otlp.sh (the official OTLP schema, tools/install-npm.sh).
	expect "the official schema reads them" "ok: 1 requests, 2 spans" "$(schema_check traces "$T/traces.json")"
}

test_sched_list_shows_each_recordings_totals() {
	sched_run many 20 || return 1
	# The recording's one outermost span, "recording", holds the 20 iterations.
	expect "--list --json: the recording's totals are its recording span's" \
		"$(span recording | jq -c '{cpu_ns, blocked_ns, runq_ns}')" \
		"$(rtail --list --json | jq -c '{cpu_ns, blocked_ns, runq_ns}')" || return 1
	expect "the text list has the columns, in ms" 'CPU-MS BLOCKED-MS RUNQ-MS yes' \
		"$(rtail --list | awk 'NR == 1 {print $(NF-2), $(NF-1), $NF}
			NR == 2 {print ($(NF-1) >= 18 ? "yes" : "no: " $0)}' | paste -sd' ')"
}

# A trigger on a part of a span's time: span:GLOB blocked>DURATION fires on the
# span that waited 100 ms on a mutex; the same rule on its cpu does not.
test_sched_trigger_fires_on_a_spans_blocked_time() {
	sched_run mutex -- --trigger 'span:lock blocked>50ms' \
		--trigger 'span:lock cpu>50ms' --trigger-after 0 || return 1
	wait_for "$T/attach.err" "trigger 'span:lock blocked>50ms' fired in pid $TARGET_PID" 30 ||
		{ cat "$T/attach.out"; return 1; }
	expect "the blocked rule fired once and saved its snapshot; the cpu rule never fired" \
		"span:lock blocked>50ms 1 1|span:lock cpu>50ms 0 0" \
		"$(rtail --triggers --json | jq -r '"\(.rule) \(.fired) \(.saved)"' | paste -sd'|')" || return 1
	expect "without --sched such a rule is refused, named" \
		"recorder-attach: --trigger 'span:lock blocked>50ms' needs --sched" \
		"$($B/recorder-attach --no-sched --trigger 'span:lock blocked>50ms' -p "$TARGET_PID" 2>&1)"
}
