# SPDX-License-Identifier: MIT
# End-to-end tests beyond the seed: attach mid-span, threads, shared libraries,
# retired recordings, every field type, recorders, following, errors.

# Replaces the parts of a glog line that change from run to run.
normalize_glog() {
	sed -E 's/^([TDIWE])[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6} [0-9]+ /\1MMDD hh:mm:ss.us TID /; s/\.c:[0-9]+\]/.c:L]/'
}

test_attach_mid_span() {
	start_target $SCENARIO attach_mid_span || return 1
	wait_for "$T/target.out" '^inside' || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "events after the attach go to the recording created before it" \
'{"subject":"mid","seq":0,"fields":{"message":"after attach","n":1}}
{"subject":"mid","seq":1,"fields":{"message":"after attach","n":2}}' \
		"$(rtail --json | jq -c '{subject, seq, fields}')" || return 1
	expect "the stack entered before the attach is known" \
		'{"subject":"mid","stack":["before_attach","recording"]}' \
		"$(rtail --stacks --json | jq -c '{subject, stack: [.stack[].name]}')"
}

test_stack_of_a_thread_running_at_the_attach_is_seeded() {
	# It spins inside its spans through the attach, then sleeps in them
	# without another probe: only a second seeding can find its stack.
	start_target $SCENARIO running_at_attach || return 1
	wait_for "$T/target.out" '^inside' || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "the stack it was running in at the attach is known" \
		'{"subject":"busy","stack":["spinning","recording"]}' \
		"$(rtail --stacks --json | jq -c '{subject, stack: [.stack[].name]}')"
}

test_threads_have_no_cross_talk() {
	start_target $SCENARIO threads || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	local expected i j
	expected=$(for i in 0 1 2 3 4 5 6 7; do
		for j in $(seq 0 49); do echo "thread[$i] $j $i $j"; done
	done)
	expect "each thread's 50 events, in order, only in its own recording" "$expected" \
		"$(rtail --json | jq -r '"\(.subject) \(.seq) \(.fields.thread) \(.fields.n)"' |
			sort -s -t' ' -k1,1)" || return 1
	expect "8 recordings of 50 events, none dropped" \
		"$(for i in 0 1 2 3 4 5 6 7; do echo "thread[$i] 50 50 0"; done)" \
		"$(rtail --list --json | jq -r '"\(.subject) \(.seen) \(.kept) \(.dropped)"' | sort)"
}

test_shared_library_probes() {
	start_target $SCENARIO shared_library || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	grep -qE "^attached to $TARGET_PID: [0-9]+ probe sites in 2 objects$" "$T/attach.out" ||
		fail "expected probes in 2 objects: $(cat "$T/attach.out")" || return 1
	expect "events from the library and the executable, in order" \
'shlib.c from shared library {"i":0}
shlib.c from shared library {"i":1}
shlib.c from shared library {"i":2}
scenario.c back in main {}' \
		"$(rtail --json | jq -r '"\(.file | split("/") | last) \(.fields.message) \(.fields | del(.message) | tojson)"')"
}

test_retired_recordings_ignore_their_spans() {
	start_target $SCENARIO retired || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "the old recording keeps what came before its free, the new one starts afresh" \
'{"subject":"old","seq":0,"fields":{"message":"kept"}}
{"subject":"new","seq":0,"fields":{"message":"fresh"}}' \
		"$(rtail --json | jq -c '{subject, seq, fields}')" || return 1
	expect "the list shows the old one retired" \
'{"subject":"old","seen":1,"state":"retired"}
{"subject":"new","seen":1,"state":"live"}' \
		"$(rtail --list --json | jq -c '{subject, seen, state}')" || return 1
	[ "$(key_of old)" != "$(key_of new)" ] || fail "the new recording reused the old key"
}

test_all_field_types_render() {
	start_target $SCENARIO all_fields || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	# The first 255 bytes of the 300-byte literal.
	local long
	long="$(printf '0123456789%.0s' $(seq 25))01234"
	expect "glog lines" \
'==> pid PID recording KEY <fields> cap 10, seen 6, delivered 6, dropped 0 <==
IMMDD hh:mm:ss.us TID scenario.c:L] <fields> all types, s: text, i: -42, u: 42, f: 1.5, b: true, err: bad thing, quote: a "quoted"\nline, last: 8
IMMDD hh:mm:ss.us TID scenario.c:L] <fields> strings, buf: copied 1, lit: literal, null: (null), long_lit: '"$long"'…[truncated]
WMMDD hh:mm:ss.us TID scenario.c:L] <fields> warned
EMMDD hh:mm:ss.us TID scenario.c:L] <fields> failed, code: 7
DMMDD hh:mm:ss.us TID scenario.c:L] <fields> debugging
TMMDD hh:mm:ss.us TID scenario.c:L] <fields> tracing' \
		"$(rtail | normalize_glog | sed -E "s/pid $TARGET_PID recording 0x[0-9a-f]+/pid PID recording KEY/")" || return 1
	expect "JSON keys, levels and typed fields" \
'{"keys":["pid","tid","recording","recorder","subject","seq","time","level","target","name","file","line","fields"],"level":"INFO","fields":{"message":"all types","s":"text","i":-42,"u":42,"f":1.5,"b":true,"err":"bad thing","quote":"a \"quoted\"\nline","last":8}}
{"keys":["pid","tid","recording","recorder","subject","seq","time","level","target","name","file","line","fields","field_status"],"level":"INFO","fields":{"message":"strings","buf":"copied 1","lit":"literal","null":null,"long_lit":"'"$long"'"},"field_status":{"null":"null","long_lit":"truncated"}}
{"keys":["pid","tid","recording","recorder","subject","seq","time","level","target","name","file","line","fields"],"level":"WARN","fields":{"message":"warned"}}
{"keys":["pid","tid","recording","recorder","subject","seq","time","level","target","name","file","line","fields"],"level":"ERROR","fields":{"message":"failed","code":7}}
{"keys":["pid","tid","recording","recorder","subject","seq","time","level","target","name","file","line","fields"],"level":"DEBUG","fields":{"message":"debugging"}}
{"keys":["pid","tid","recording","recorder","subject","seq","time","level","target","name","file","line","fields"],"level":"TRACE","fields":{"message":"tracing"}}' \
		"$(rtail --json | jq -c '{keys: keys_unsorted, level, fields, field_status} | del(.field_status | nulls)')" || return 1
	local times
	times=$(rtail --json | jq -r .time) || return 1
	expect "one time per event" 6 "$(echo "$times" | grep -c .)" || return 1
	if echo "$times" | grep -qvE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$'; then
		fail "a time is not RFC 3339 with microseconds: $times"
		return 1
	fi
	# The events happened a moment ago: their wall-clock time is within the hour.
	expect "every time is within an hour of now ($times)" 6 \
		"$(echo "$times" | jq -R --argjson now "$(date +%s)" \
			'sub("\\.[0-9]+Z$"; "Z") | fromdate | . > $now - 3600 and . < $now + 3600' |
			grep -c '^true$')" || return 1
	rtail -n 2 --json | jq -r .fields.message | tr '\n' ' ' | grep -qx 'debugging tracing ' ||
		fail "-n 2 did not give the last two events"
}

test_recordings_belong_to_one_recorder() {
	start_target $SCENARIO recorders || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	local r1 r2
	r1=$(awk '$1 == "recorder" && $2 == "r1" {print $3}' "$T/target.out")
	r2=$(awk '$1 == "recorder" && $2 == "r2" {print $3}' "$T/target.out")
	[ -n "$r1" ] && [ -n "$r2" ] && [ "$r1" != "$r2" ] || fail "recorder keys r1=$r1 r2=$r2"
	expect "each recording is labelled with its recorder's key" \
"r1 $r1
r2 $r2" "$(rtail --list --json | jq -r '"\(.subject) \(.recorder)"')" || return 1
	expect "asking for r1's recordings shows none of r2's" '["from r1"]' \
		"$(rtail --json --recorder "$r1" | jq -sc 'map(.fields.message)')" || return 1
	expect "and the other way round" '["from r2"]' \
		"$(rtail --json --recorder "$r2" | jq -sc 'map(.fields.message)')"
}

test_follow_streams_new_events() {
	start_target $SCENARIO ticks || return 1
	attach "$TARGET_PID" || return 1
	wait_for "$T/target.out" '^ticking' || return 1
	$B/recorder-tail -p "$TARGET_PID" --follow --json >"$T/follow.out" 2>"$T/follow.err" &
	local tail_pid=$! n i
	BG_PIDS+=($tail_pid)
	# The tail (tick 0) has come: from here on the follower is registered.
	wait_for "$T/follow.out" '"seq":0,' || return 1
	# Each new event must arrive while the target still runs, before the next
	# one is made: a line kept in a buffer would come only at the end.
	for n in 1 2 3; do
		kill -USR1 "$TARGET_PID"
		wait_for "$T/follow.out" "\"seq\":$n," 10 ||
			fail "tick $n did not arrive while the target ran" || return 1
		kill -0 "$TARGET_PID" || fail "the target is gone before tick $n was seen" || return 1
	done
	stop_target
	# recorder-attach ends the follow when the target exits.
	wait_gone "$tail_pid" || fail "recorder-tail --follow did not end with the target" || return 1
	wait "$tail_pid" || fail "recorder-tail --follow failed: $(cat "$T/follow.err")" || return 1
	expect "every event once, in order, as it happened" "0 0
1 1
2 2
3 3" "$(jq -r '"\(.seq) \(.fields.n)"' "$T/follow.out")"
}

# A thread that emitted 3 events and sleeps: on the batch path they are still
# in its buffer, and a read takes them from there (recorder-tail, --dump).
test_events_of_a_sleeping_thread_are_read() {
	start_target $SCENARIO ticks || return 1
	attach "$TARGET_PID" || return 1
	wait_for "$T/target.out" '^ticking' || return 1
	kill -USR1 "$TARGET_PID"
	kill -USR1 "$TARGET_PID"
	# Signals may merge: wait (bounded) for the 3rd tick to be recorded.
	local i out=
	for ((i = 0; i < 100; i++)); do
		out=$(rtail --json | jq -r .fields.n | tr '\n' ' ' | sed 's/ $//')
		[ "$out" = "0 1 2" ] && break
		[ "$out" = "0 1" ] && kill -USR1 "$TARGET_PID"
		sleep 0.1
	done
	expect "the 3 events of the sleeping thread" "0 1 2" "$out" || return 1
	local dump
	dump=$($B/recorder-tail -p "$TARGET_PID" --dump) || fail "--dump failed: $dump" || return 1
	expect "and the dump has them" "0 1 2" \
		"$($B/recorder-tail --file "$dump" --json | jq -r .fields.n | tr '\n' ' ' | sed 's/ $//')"
}

# A program that never calls rec_is_attached() (a real server does not) still
# takes the batch path once attached: recorder-attach finds its attach block
# through the note every image carries, and writes the tracer word once every
# probe is attached (events of the attach itself come one by one). --stats says
# how the events came; on the per-event path, none come in batches.
test_a_program_that_never_asks_takes_its_path() {
	start_target $B/tests/targets/never_asks || return 1
	attach "$TARGET_PID" || return 1
	local i n0= n= now want
	taken() { rtail --stats --json | jq -r '.events_taken | "\(.batches) \(.batched) \(.single)"'; }
	for ((i = 0; i < 500; i++)); do
		read -r -a n0 <<<"$(taken)"
		[ $((n0[1] + n0[2])) -ge 100 ] && break
		sleep 0.05
	done
	for ((i = 0; i < 500; i++)); do
		read -r -a n <<<"$(taken)"
		[ $((n[1] + n[2])) -ge $((n0[1] + n0[2] + 300)) ] && break
		sleep 0.05
	done
	[ $((n[1] + n[2])) -ge $((n0[1] + n0[2] + 300)) ] ||
		fail "events taken: ${n0[*]} (batches, batched, single), then ${n[*]} 25 s later" || return 1
	now="batches $((n[0] > n0[0])), batched $((n[1] > n0[1])), single $((n[2] > n0[2]))"
	want="batches 1, batched 1, single 0"
	case " $RECORDER_ATTACH_FLAGS " in *" --per-event "*) want="batches 0, batched 0, single 1" ;; esac
	expect "what grew once attached, from ${n0[*]} to ${n[*]} ($RECORDER_ATTACH_FLAGS)" "$want" "$now" || return 1
	expect "the text says it too" 1 "$(rtail --stats | grep -cE '^events taken: [0-9]+ in [0-9]+ batches, [0-9]+ one by one')"
}

# A program built against the header before this one (marker 0x5243, 16 KiB batch
# buffers) keeps the batch path, every event taken; this header's 64 KiB buffers
# hand the same events over in a quarter of the batches (docs/probe-abi.md, "The
# marker's values"). On the per-event path, both fire a probe per event.
test_an_image_of_the_previous_header_keeps_the_batch_path() {
	local name bin n batches=()
	for name in 5243 now; do
		bin=$B/tests/targets/workload-5243
		[ "$name" = now ] && bin=$B/workload
		: >"$T/report.json"
		start_target "$bin" --wait-attach --events 4000 --cap 5000 --fields 3 --hold 60 \
			--report "$T/report.json" || return 1
		attach "$TARGET_PID" || return 1
		wait_for "$T/report.json" 'last_seq' 20 || return 1
		read -r -a n <<<"$(rtail --stats --json |
			jq -r '.events_taken | "\(.batches) \(.batched) \(.single)"')"
		case " $RECORDER_ATTACH_FLAGS " in
		*" --per-event "*) expect "$name: events taken one by one" "0 0 4000" "${n[*]}" ;;
		*) expect "$name: events taken in batches, all of them" "4000 0" "${n[1]} ${n[2]}" ;;
		esac || return 1
		batches+=("${n[0]}")
		expect "$name: nothing refused" "0 0" "$(rtail --stats --json |
			jq -r '"\(.counters.batch_bad) \(.counters.batch_foreign)"')" || return 1
		kill "$ATTACH_PID" "$TARGET_PID"
		wait_gone "$ATTACH_PID" || return 1
	done
	case " $RECORDER_ATTACH_FLAGS " in *" --per-event "*) return 0 ;; esac
	# 4000 events of about 80 bytes: 20 full 16 KiB buffers, 4 of 64 KiB, and a collect.
	[ "${batches[0]}" -ge 19 ] && [ "${batches[1]}" -le 7 ] ||
		fail "batches of 16 KiB then 64 KiB buffers: ${batches[*]} (want >= 19, <= 7)"
}

test_errors_name_what_failed() {
	local out dead
	sleep 30 &
	local plain=$!
	BG_PIDS+=($plain)
	out=$($B/recorder-attach -p "$plain" 2>&1)
	expect "no probes" "recorder-attach: pid $plain has no recorder probes in its executable or loaded libraries" "$out" || return 1
	out=$($B/recorder-tail -p "$plain" 2>&1)
	expect "nobody attached" "recorder-tail: no recorder-attach is running for pid $plain (no socket at /run/recorder/$plain.sock); start one with: recorder-attach -p $plain" "$out" || return 1
	true &
	dead=$!
	wait "$dead"
	out=$($B/recorder-attach -p "$dead" 2>&1)
	expect "no such process" "recorder-attach: failed to attach to pid $dead: No such process" "$out" || return 1
	out=$($B/recorder-tail -p "$dead" 2>&1)
	expect "tail of no such process" "recorder-tail: no such process: pid $dead (and no recorder-attach serving it at /run/recorder/$dead.sock)" "$out" || return 1
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups $B/recorder-attach -p "$plain" 2>&1)
	expect "not root" "recorder-attach: must run as root (loading BPF programs and attaching uprobes needs CAP_BPF and CAP_PERFMON)" "$out" || return 1
	# A socket directory only root may enter (as /run/recorder may be): root's process.
	mkdir -m 0700 "$T/closed"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups $B/recorder-tail -p "$plain" --sock-dir "$T/closed" 2>&1)
	expect "tail not root" "recorder-tail: permission denied on $T/closed/$plain.sock: only root may read the trace of pid $plain" "$out" || return 1
	# Root by uid but without capabilities: loading BPF genuinely fails.
	out=$(unshare --user --map-root-user $B/recorder-attach -p "$plain" 2>&1)
	expect "BPF unavailable" "recorder-attach: failed to load the BPF programs: Operation not permitted (BPF unavailable? the kernel needs BPF, BTF and uprobes; -v shows libbpf's messages)" "$out" || return 1
	out=$($B/recorder-tail -p abc 2>&1)
	echo "$out" | grep -q "invalid pid 'abc': expected a positive decimal integer" ||
		fail "bad pid message: $out" || return 1
	out=$($B/recorder-attach 2>&1)
	echo "$out" | grep -q "no process given: use -p PID" || fail "missing -p message: $out"
}

test_workload_report_matches_tail() {
	start_target $B/workload --wait-attach --threads 2 --recordings 3 --events 25 --cap 10 \
		--depth 2 --fields 8 --hold 30 --report "$T/report.json" || return 1
	attach "$TARGET_PID" || return 1
	wait_for "$T/report.json" 'last_seq' 20 || return 1
	expect "the last seq of every recording is the one the workload reported" \
		"$(jq -r '.recordings[] | "\(.key) \(.subject) \(.last_seq)"' "$T/report.json" | sort)" \
		"$(rtail --json -n 1 | jq -r '"\(.recording) \(.subject) \(.seq)"' | sort)" || return 1
	expect "6 stacks, each depth2 > depth1 > recording" \
		"$(for i in 1 2 3 4 5 6; do echo '["depth2","depth1","recording"]'; done)" \
		"$(rtail --stacks --json | jq -c '[.stack[].name]')"
}

test_runtime_level_is_one_site_with_each_events_level() {
	start_target $SCENARIO runtime_level || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "each event's own level" \
'IMMDD hh:mm:ss.us TID scenario.c:L] <levels> request done, status: 200
WMMDD hh:mm:ss.us TID scenario.c:L] <levels> request done, status: 404
EMMDD hh:mm:ss.us TID scenario.c:L] <levels> request done, status: 503
DMMDD hh:mm:ss.us TID scenario.c:L] <levels> request done, status: 100
-- 1 event lost (seq 4..4) --' \
		"$(rtail | grep -v '^==>' | normalize_glog)" || return 1
	expect "in JSON, from one site" "INFO WARN ERROR DEBUG 1" \
		"$(rtail --json | jq -r .level | tr '\n' ' ')$(rtail --json | jq -r .line | sort -u | wc -l)" ||
		return 1
	expect "--level takes each event's own level" "WARN ERROR" \
		"$(rtail --json --level warn | jq -r .level | tr '\n' ' ' | sed 's/ $//')" || return 1
	expect "the out-of-range level is counted invalid" '{"seen":5,"delivered":4,"dropped":1,"invalid":1}' \
		"$(rtail --list --json | jq -c '{seen, delivered, dropped, invalid}')" || return 1
	local dump
	dump=$(rtail --dump) || return 1
	expect "the black box keeps each level" "INFO WARN ERROR DEBUG" \
		"$($B/recorder-tail --file "$dump" --json | jq -r .level | tr '\n' ' ' | sed 's/ $//')"
}

test_machine_facts_are_measured() {
	local m cs want_pti
	m=$($B/recorder-attach --machine) || return 1
	cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
	case $(cat /sys/devices/system/cpu/vulnerabilities/meltdown) in
	*PTI*) want_pti=on ;;
	"Not affected"*) want_pti="not needed" ;;
	Vulnerable*) want_pti=off ;;
	*) want_pti=unknown ;;
	esac
	expect "--machine names the kernel's clocksource and pti" "$cs $want_pti" \
		"$(jq -r '"\(.clocksource) \(.pti)"' <<<"$m")" || return 1
	# A uprobe hit traps into the kernel: never the ~1 ns of the nop alone, as
	# it would be if the site were timed unattached.
	expect "--machine timed a system call and a uprobe hit" "true true" \
		"$(jq -r '"\(.syscall_ns > 0) \(.uprobe_ns >= 50)"' <<<"$m")" || return 1
	start_target $SCENARIO attach_mid_span || return 1
	wait_for "$T/target.out" '^inside' || return 1
	RECORDER_ATTACH_FLAGS="$RECORDER_ATTACH_FLAGS -v" attach "$TARGET_PID" || return 1
	wait_for "$T/attach.err" "^recorder-attach: this machine: clocksource $cs \(available: .*\), pti $want_pti, system call [0-9]+ ns, uprobe hit [0-9]+ ns$"
}

test_retired_elsewhere_ignores_events_after_the_free() {
	start_target $SCENARIO retired_elsewhere || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	expect "the worker's events before the free are kept, none after it" \
'{"subject":"shared","seq":0,"message":"before the free","n":0}
{"subject":"shared","seq":1,"message":"before the free","n":1}
{"subject":"shared","seq":2,"message":"before the free","n":2}' \
		"$(rtail --json | jq -c '{subject, seq, message: .fields.message, n: .fields.n}')" || return 1
	expect "the list shows it retired with the 3 events" '{"subject":"shared","seen":3,"state":"retired"}' \
		"$(rtail --list --json | jq -c '{subject, seen, state}')"
}

# A request's recording (new, subject, free) costs no probe hit of its own on
# the batch path: its records come in the thread's batches. Each of the 200
# requests is whole, in order, and retired.
test_a_request_s_recording_costs_no_probe_hit() {
	local n=200 want_batched want_single
	start_target $B/tests/targets/incident requests $n 0 || return 1
	RECORDER_ATTACH_FLAGS="$RECORDER_ATTACH_FLAGS --keep-retired $n" attach "$TARGET_PID" || return 1
	wait_for "$T/target.out" '^done' || return 1
	expect "every request's 5 steps, kept, its recording retired" \
		"$(for i in $(seq 1 $n); do echo "req[$i] 5 5 retired"; done)" \
		"$(rtail --list --json | jq -r '"\(.subject) \(.seen) \(.kept) \(.state)"' | sort -t'[' -k2 -n)" || return 1
	expect "the steps in order" "$(for i in $(seq 1 $n); do echo "req[$i] 0 1 2 3 4"; done)" \
		"$(rtail --json | jq -r '"\(.subject) \(.fields.i)"' | awk '{a[$1] = a[$1] " " $2} END {for (k in a) print k a[k]}' | sort -t'[' -k2 -n)" || return 1
	# new, span and free of each request: 3 records a request.
	if [ -z "$RECORDER_ATTACH_FLAGS" ] || [ "${RECORDER_ATTACH_FLAGS#*--per-event}" = "$RECORDER_ATTACH_FLAGS" ]; then
		want_batched=$((3 * n)) want_single=0
	else
		want_batched=0 want_single=$((3 * n))
	fi
	expect "how the recordings' records came (batched, single)" "$want_batched $want_single" \
		"$(rtail --stats --json | jq -r '.recordings_taken | "\(.batched) \(.single)"')"
}
