# SPDX-License-Identifier: MIT
# Triggers (issue 23): a rule that fires on a real attached process saves a
# snapshot of the story it fired in, in the dump format, under a cooldown and
# an hourly cap; recorder-tail reads it like a black box.

INCIDENT=$B/tests/targets/incident

# trig_attach ARGS...: recorder-attach on TARGET_PID with ARGS, dumps and snapshots in $T/dumps.
trig_attach() {
	$B/recorder-attach $RECORDER_ATTACH_FLAGS -p "$TARGET_PID" --dump-dir "$T/dumps" "$@" \
		>"$T/attach.out" 2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	wait_for "$T/attach.out" '^attached to' 30 || { cat "$T/attach.err"; return 1; }
}

# snapshot_of N: the path of the Nth snapshot recorder-attach announced (waits for it).
snapshot_of() {
	local n=${1:-1}
	wait_for "$T/attach.err" "snapshot written to " 30 >&2 || return 1
	local i
	for ((i = 0; i < 500; i++)); do
		[ "$(grep -c 'snapshot written to ' "$T/attach.err")" -ge "$n" ] && break
		sleep 0.02
	done
	sed -n 's/^recorder-attach: trigger .* snapshot written to //p' "$T/attach.err" |
		sed -n "${n}p"
}

# snapshots: how many snapshot files are in $T/dumps.
snapshots() {
	find "$T/dumps" -maxdepth 1 -name 'snapshot-*.json' | wc -l
}

# One error in 2,000 requests, each its own recording, freed at once: one
# snapshot, holding that request's whole story (its tail up to the error and
# what --trigger-after saw after it), and nothing of the other 1,999.
test_trigger_level_saves_the_failed_request_alone() {
	local snap bad
	start_target $INCIDENT requests 2000 1234 || return 1
	trig_attach --trigger 'level>=error' --trigger-after 100ms || return 1
	wait_for "$T/target.out" '^done' 60 || return 1
	bad=$(awk '$1 == "bad" {print $2}' "$T/target.out")
	snap=$(snapshot_of 1) || return 1
	expect "the announcement names the rule, the pid and the subject" \
		"recorder-attach: trigger 'level>=error' fired in pid $TARGET_PID (req[1234]): snapshot written to $snap" \
		"$(grep 'snapshot written' "$T/attach.err")" || return 1
	expect "the snapshot holds the failed request's recording alone" "$bad req[1234] 8 8 0" \
		"$($B/recorder-tail --file "$snap" --list --json | jq -r '"\(.recording) \(.subject) \(.seen) \(.kept) \(.dropped)"')" ||
		return 1
	expect "its whole story: the steps, the error, and the steps after it" \
		"step 0|step 1|request failed 503|step 3|step 4|step 5|step 6|step 7" \
		"$($B/recorder-tail --file "$snap" --json | jq -r 'select(.seq != null) | if .fields.status then "\(.fields.message) \(.fields.status)" else "\(.fields.message) \(.fields.i)" end' | paste -sd'|')" ||
		return 1
	expect "it names its trigger, first in its tail" "level>=error $bad req[1234]" \
		"$($B/recorder-tail --file "$snap" --json | head -1 | jq -r '"\(.rule) \(.recording) \(.subject)"')" ||
		return 1
	sleep 0.3
	expect "one snapshot, whatever else ran" 1 "$(snapshots)"
}

# A request that hangs inside its span is caught while the span is open.
test_trigger_hung_span_is_caught_while_open() {
	local snap
	start_target $INCIDENT hang || return 1
	trig_attach --trigger 'span:request>300ms' --trigger-after 0 || return 1
	wait_for "$T/target.out" '^hanging' || return 1
	snap=$(snapshot_of 1) || return 1
	kill -0 "$TARGET_PID" || fail "the hung process was let die" || return 1
	expect "its stack shows the open request span" "request recording" \
		"$($B/recorder-tail --file "$snap" --stacks --json | jq -r '.stack[].name' | paste -sd' ')" ||
		return 1
	grep -q "span request open for " <(jq -r .trigger.what "$snap") ||
		fail "the trigger says what it saw: $(jq -c .trigger "$snap")"
}

# A span that ended slower than a rule's duration fires it; a longer duration does not.
test_trigger_slow_span_fires_only_past_its_duration() {
	start_target $INCIDENT slow 400 || return 1
	trig_attach --trigger 'span:request>300ms' --trigger 'span:request>5s' --trigger-after 0 ||
		return 1
	wait_for "$T/target.out" '^done' || return 1
	snapshot_of 1 >/dev/null || return 1
	expect "only the 300 ms rule fired" $'1 1 1\n2 0 0' \
		"$($B/recorder-tail -p "$TARGET_PID" --triggers --json | jq -r '"\(.id) \(.fired) \(.saved)"')"
}

# rec_trigger() from the program fires the code rules whose glob matches its reason.
test_trigger_from_code() {
	local snap
	start_target $INCIDENT code 'health check failed' || return 1
	trig_attach --trigger 'code:health*' --trigger 'code:oom*' --trigger-after 0 || return 1
	snap=$(snapshot_of 1) || return 1
	expect "the code rule whose glob matches fired, with the reason" \
		"code:health* health 3 code: health check failed" \
		"$(jq -r '.trigger.rule' "$snap") $($B/recorder-tail --file "$snap" --list --json | jq -r '"\(.subject) \(.seen)"') $(jq -r .trigger.what "$snap")" ||
		return 1
	expect "its signature is its reason" "code 'health check failed' 12" \
		"$(jq -r '"\(.trigger.signature) \(.trigger.signature_id | length)"' "$snap")" || return 1
	expect "the other did not" $'1 1\n2 0' \
		"$($B/recorder-tail -p "$TARGET_PID" --triggers --json | jq -r '"\(.id) \(.fired)"')"
}

# An event rule with a field condition: only events whose fields satisfy it.
test_trigger_event_rule_with_a_field_condition() {
	start_target $INCIDENT requests 50 7 || return 1
	trig_attach --trigger "event:'request failed' status>=500" \
		--trigger "event:'request failed' status>=600" --trigger 'event:step i=99' \
		--trigger-after 0 || return 1
	wait_for "$T/target.out" '^done' || return 1
	snapshot_of 1 >/dev/null || return 1
	expect "status>=500 fired once, the others never" $'1 1 1\n2 0 0\n3 0 0' \
		"$($B/recorder-tail -p "$TARGET_PID" --triggers --json | jq -r '"\(.id) \(.fired) \(.saved)"')"
}

# A storm of errors: the cooldown and the hourly cap hold, counted exactly.
test_trigger_cooldown_and_cap_are_counted_exactly() {
	start_target $INCIDENT storm 1000 || return 1
	trig_attach --trigger 'level>=error' --trigger "event:'request failed'" \
		--trigger-cooldown 0 --trigger-cap 1 --trigger-after 0 || return 1
	wait_for "$T/target.out" '^done' || return 1
	snapshot_of 1 >/dev/null || return 1
	sleep 0.3
	# Rule 1 took the hour's one snapshot at the first error; every other firing is capped.
	expect "fired, saved, cooldown, capped per rule" $'1 1000 1 0 999\n2 1000 0 0 1000' \
		"$($B/recorder-tail -p "$TARGET_PID" --triggers --json | jq -r '"\(.id) \(.fired) \(.saved) \(.cooldown) \(.capped)"')" ||
		return 1
	expect "one snapshot file" 1 "$(snapshots)" || return 1
	expect "--stats counts them too" '[[1,1000,1,0,999],[2,1000,0,0,1000]]' \
		"$($B/recorder-tail -p "$TARGET_PID" --stats --json | jq -c '[.triggers[] | [.id, .fired, .saved, .cooldown, .capped]]')" ||
		return 1
	expect "the ring dropped nothing" 0 \
		"$($B/recorder-tail -p "$TARGET_PID" --list --json | jq -r .dropped)" || return 1
	stop_target
	kill -TERM "$ATTACH_PID"
	wait "$ATTACH_PID"
	# And with a cooldown of an hour and no cap: one snapshot, the rest cooled down.
	start_target $INCIDENT storm 1000 || return 1
	rm -rf "$T/dumps"
	trig_attach --trigger 'level>=error' --trigger-cooldown 1h --trigger-cap 0 \
		--trigger-after 0 || return 1
	wait_for "$T/target.out" '^done' || return 1
	snapshot_of 1 >/dev/null || return 1
	sleep 0.3
	expect "fired, saved, cooldown, capped" "1 1000 1 999 0" \
		"$($B/recorder-tail -p "$TARGET_PID" --triggers --json | jq -r '"\(.id) \(.fired) \(.saved) \(.cooldown) \(.capped)"')"
}

# Rules added and removed on a running recorder-attach; a stranger may do neither.
test_trigger_rules_added_and_removed_at_run_time() {
	local out rc
	start_target $INCIDENT hang || return 1
	trig_attach || return 1
	expect "added" "added trigger 1: span:request>200ms" \
		"$($B/recorder-tail -p "$TARGET_PID" --add-trigger 'span:request>200ms')" || return 1
	# The socket's mode lets anyone connect: the server's SO_PEERCRED check is what refuses.
	chmod 0666 "/run/recorder/$TARGET_PID.sock"
	out=$(setpriv --reuid=65533 --regid=65533 --clear-groups \
		$B/recorder-tail -p "$TARGET_PID" --add-trigger code 2>&1)
	rc=$?
	expect "a stranger's rule is refused, told who may" \
		"1 recorder-attach: uid 65533 may not read pid $TARGET_PID: only root may" \
		"$rc $out" || return 1
	expect "the stranger changed nothing" "1 span:request>200ms" \
		"$($B/recorder-tail -p "$TARGET_PID" --triggers --json | jq -r '"\(.id) \(.rule)"')" ||
		return 1
	snapshot_of 1 >/dev/null || return 1
	expect "removed by its id" "removed trigger '1'" \
		"$($B/recorder-tail -p "$TARGET_PID" --remove-trigger 1)" || return 1
	out=$($B/recorder-tail -p "$TARGET_PID" --remove-trigger 1 2>&1)
	rc=$?
	expect "removing it again names it" \
		"1 recorder-attach: cannot remove trigger '1' of pid $TARGET_PID: no trigger rule has id 1" \
		"$rc $out"
}

# Bad rules are usage errors that print the grammar and name the bad part.
test_trigger_bad_rules_are_usage_errors() {
	local out rc what
	for what in "level>=loud|unknown level 'loud'" "span:x>5 parsecs|in duration '5 parsecs'" \
		"event:x status~5|bad operator" "evnt:x|unknown rule kind 'evnt'"; do
		out=$($B/recorder-attach -p 1 --trigger "${what%%|*}" 2>&1)
		rc=$?
		[ $rc -eq 64 ] || fail "'${what%%|*}': exit status $rc, not 64: $out" || return 1
		echo "$out" | grep -q "invalid --trigger '${what%%|*}'" ||
			fail "the error names the rule: $out" || return 1
		echo "$out" | grep -q "${what#*|}" || fail "the error names the bad part: $out" ||
			return 1
		echo "$out" | grep -q "A trigger RULE is one of" ||
			fail "the error prints the grammar: $out" || return 1
	done
	out=$($B/recorder-attach -p 1 --trigger-after 3parsecs 2>&1)
	echo "$out" | grep -q "invalid --trigger-after '3parsecs'" || fail "bad duration: $out" ||
		return 1
	out=$($B/recorder-attach -p 1 --trigger-scope everything 2>&1)
	echo "$out" | grep -q "invalid --trigger-scope 'everything': expected recording or process" ||
		fail "bad scope: $out" || return 1
	out=$($B/recorder-attach -p 1 --trigger-signature-cap 33 2>&1)
	echo "$out" | grep -q "invalid --trigger-signature-cap '33': expected 0 to 32" ||
		fail "bad signature cap: $out"
}

# A dump directory that cannot be written: said, counted, and recording goes on.
test_trigger_unwritable_dump_dir_is_reported_and_counted() {
	start_target $INCIDENT storm 10 || return 1
	trig_attach --trigger 'level>=error' --trigger-after 200ms || return 1
	# Taken away after the check at start: a disk gone read-only, say.
	chmod 0500 "$T/dumps"
	chattr +i "$T/dumps" 2>/dev/null
	wait_for "$T/attach.err" "its snapshot could not be written" 30 || return 1
	chattr -i "$T/dumps" 2>/dev/null
	grep -q "into $T/dumps" "$T/attach.err" || fail "it names the directory" || return 1
	expect "counted failed" "1 0 1" \
		"$($B/recorder-tail -p "$TARGET_PID" --triggers --json | jq -r '"\(.fired - .cooldown - .capped) \(.saved) \(.failed)"')" ||
		return 1
	expect "recording went on" 10 "$($B/recorder-tail -p "$TARGET_PID" --list --json | jq -r .seen)"
}

# --otlp-keep: the collector gets the failed requests, all their events and
# spans, and nothing of the others, which are counted skipped.
test_trigger_otlp_keep_sends_only_the_failed_recordings() {
	local keys line
	otlp_receiver || return 1
	start_target $INCIDENT requests 300 40 || return 1
	trig_attach --otlp "$OTLP_URL" --otlp-keep 'level>=error' --trigger-after 50ms || return 1
	wait_for "$T/target.out" '^done' 60 || return 1
	sleep 0.3
	stop_target
	wait_for "$T/attach.err" 'kept 1 of its 300 recordings \(--otlp-keep\); 299 skipped' 30 ||
		return 1
	wait_for "$T/attach.err" 'log records delivered' 30 || return 1
	[ ! -s "$T/otlp.err" ] || fail "the receiver refused a request: $(cat "$T/otlp.err")" ||
		return 1
	expect "the failed request's events, and only its" \
		"step|step|request failed|step|step|step|step|step" \
		"$(jq -r '.body' "$T/otlp.out" | paste -sd'|')" || return 1
	expect "its spans: the request and its recording span" "recording request" \
		"$(jq -r '.name' "$T/otlp.out.spans" | sort | paste -sd' ')" || return 1
	keys=$(jq -r '.attributes["recorder.subject"]' "$T/otlp.out" | sort -u)
	expect "all of one subject" "req[40]" "$keys" || return 1
	# Issue 35: each record names the trigger and signature that kept it.
	line=$(grep -n 'REC_ERROR("request failed", REC_U64(status, 503)' tests/targets/incident.c |
		cut -d: -f1)
	expect "each names the trigger that kept it, and its signature" \
		"level>=error 'request failed' at tests/targets/incident.c:$line 12" \
		"$(jq -rs '.[] | .attributes | "\(.["recorder.trigger.rule"]) \(.["recorder.trigger.signature"]) \(.["recorder.trigger.signature_id"] | length)"' "$T/otlp.out" "$T/otlp.out.spans" | sort -u)"
}

# A rule that fires as its process dies: one file, the black box, which names it.
test_trigger_firing_as_the_process_dies_leaves_one_file() {
	local box
	start_target $INCIDENT storm 5 || return 1
	trig_attach --trigger 'level>=error' --trigger-after 10s || return 1
	wait_for "$T/target.out" '^done' || return 1
	sleep 0.3
	kill -KILL "$TARGET_PID"
	wait_for "$T/attach.err" "as it ended: its story is in its black box " 30 || return 1
	box=$(sed -n 's/^recorder-attach: trigger .* as it ended: its story is in its black box //p' \
		"$T/attach.err")
	expect "one file, the black box" "$box" "$(ls "$T"/dumps/*.json)" || return 1
	expect "it names the trigger" "level>=error storm" \
		"$(jq -r '.triggers_pending[] | "\(.rule) \(.subject)"' "$box")"
}

# A storm of snapshots keeps --keep-snapshots of them, and never a black box less.
test_trigger_snapshot_retention_never_removes_a_black_box() {
	start_target $INCIDENT storm 1 || return 1
	trig_attach || return 1
	$B/recorder-tail -p "$TARGET_PID" --dump >/dev/null || return 1
	stop_target
	kill -TERM "$ATTACH_PID"
	wait "$ATTACH_PID"
	start_target $INCIDENT storm 200 || return 1
	trig_attach --trigger 'level>=error' --trigger-cooldown 0 --trigger-cap 0 \
		--trigger-after 0 --keep-snapshots 3 || return 1
	wait_for "$T/target.out" '^done' || return 1
	wait_for "$T/attach.err" "removed .* old snapshot" 30 || return 1
	sleep 0.5
	expect "3 snapshots kept" 3 "$(snapshots)" || return 1
	expect "the black boxes all stay" 2 \
		"$(find "$T/dumps" -maxdepth 1 -name 'recorder-*.json' | wc -l)"
}

# wait_triggers JQ WANT [SECONDS]: until JQ, over all the lines of --triggers --json
# (slurped), gives WANT; the ring drains at its own pace on a loaded machine.
wait_triggers() {
	local jq=$1 want=$2 secs=${3:-60} i got
	for ((i = 0; i < secs * 10; i++)); do
		got=$($B/recorder-tail -p "$TARGET_PID" --triggers --json | jq -sc "$jq")
		[ "$got" = "$want" ] && return 0
		sleep 0.1
	done
	fail "after ${secs}s, $jq gave $got, not $want"
}

# The limiter of signatures, and usage errors: not the event path.
batch_path_only trigger_a_flood_of_one_signature_starves_no_other trigger_bad_rules_are_usage_errors

# Issue 35: 10,000 errors of one callsite, then one error of another and a
# slow span. Each of the three signatures gets a snapshot (the flood's
# cooldown and cap are its own), and --triggers counts each exactly.
# STARVE_ROUNDS rounds (20: the issue's 20 of 20), each a new process and
# recorder-attach.
test_trigger_a_flood_of_one_signature_starves_no_other() {
	local round line sigs snap occurred seen
	line=$(grep -n 'REC_ERROR("request failed", REC_U64(status, 500), REC_U64(i, k));' \
		tests/targets/incident.c | tail -1 | cut -d: -f1)
	for ((round = 1; round <= ${STARVE_ROUNDS:-20}; round++)); do
		rm -rf "$T/dumps"
		start_target $INCIDENT starve 10000 300 || return 1
		trig_attach --ring-size $((32 << 20)) --trigger 'level>=error' \
			--trigger 'span:slowreq>100ms' --trigger-after 0 || return 1
		wait_for "$T/target.out" '^done' 60 || return 1
		wait_triggers '[.[] | .signatures[] | select(.saved == 1 or (.fired == 10000 and .saved >= 1))] | length' \
			3 || return 1
		sigs=$($B/recorder-tail -p "$TARGET_PID" --triggers --json |
			jq -r '.id as $r | .signatures[] | "\($r) \(.fired) \(.fired - .cooldown - .capped >= 1) \(.signature)"')
		expect "round $round: three signatures, each counted exactly" \
			"1 10000 true 'request failed' at tests/targets/incident.c:$line
1 1 true 'disk full' at tests/targets/incident.c:$((line + 1))
2 1 true span slowreq at tests/targets/incident.c:$((line + 2))" "$sigs" || return 1
		expect "round $round: the rules' counts are the sums" "1 10001 0|2 1 0" \
			"$($B/recorder-tail -p "$TARGET_PID" --triggers --json | jq -r '"\(.id) \(.fired) \(.folded)"' | paste -sd'|')" ||
			return 1
		for what in "'disk full'" "span slowreq"; do
			snap=$(grep -l "\"signature\":\"$what" "$T"/dumps/snapshot-*.json | head -1)
			[ -n "$snap" ] || fail "round $round: no snapshot of $what: $(ls "$T/dumps")" ||
				return 1
			occurred=$(jq -r .trigger.occurred "$snap")
			seen=$(jq -r .trigger.time "$snap")
			[[ "$occurred" != null && ! "$occurred" > "$seen" ]] ||
				fail "round $round: $what happened at $occurred, seen at $seen" || return 1
			expect "round $round: --triggers names its first snapshot" "$snap" \
				"$($B/recorder-tail -p "$TARGET_PID" --triggers --json | jq -r --arg w "$what" '.signatures[] | select(.signature | startswith($w)) | .snapshot')" ||
				return 1
		done
		expect "round $round: --stats counts the signatures" \
			'{"used":3,"limit":1024,"folded":0,"new_capped":0}' \
			"$($B/recorder-tail -p "$TARGET_PID" --stats --json | jq -c .trigger_signatures)" ||
			return 1
		expect "round $round: the ring dropped nothing" 0 \
			"$($B/recorder-tail -p "$TARGET_PID" --list --json | jq -r .dropped)" || return 1
		stop_target
		kill -TERM "$ATTACH_PID"
		wait "$ATTACH_PID"
	done
}
