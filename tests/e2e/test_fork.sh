# SPDX-License-Identifier: MIT
# Fork safety: a traced process forks after the attach, and its children run
# every kind of probe site: ones the parent hit (on kernel 6.18, an optimized
# site would be a call into the parent's [uprobes-trampoline] page, which a
# child does not inherit), one nobody hit, and the shared library's.

FORKER=$B/tests/targets/forker

# The "child PID ..." lines forker printed, one per child.
children_of_forker() {
	awk '$1 == "child" {print $2}' "$T/target.out"
}

test_forked_children_survive_a_pid_attach() {
	start_target $FORKER 3 || return 1
	attach "$TARGET_PID" || return 1
	wait_ready 20 || { cat "$T/target.err"; return 1; }
	expect "every child ran every site and exited normally" \
		"exited with status 0
exited with status 0
exited with status 0" \
		"$(awk '$1 == "child" {$1 = $2 = ""; print substr($0, 3)}' "$T/target.out")" || return 1
	# -p follows one process: the children's events are theirs, not the parent's.
	expect "the parent's recordings hold the parent's events only" \
'parent shared site parent
parent from shared library null
parent inside inner null
parent shared site parent
parent from shared library null
parent inside inner null
parent shared site parent after the children' \
		"$(rtail --json --subject parent | jq -r '"\(.subject) \(.fields.message) \(.fields.who)"')" || return 1
	grep -q "tracing pid" "$T/attach.out" &&
		fail "recorder-attach -p started tracing a child: $(cat "$T/attach.out")"
	return 0
}

test_forked_children_survive_and_are_recorded_under_binary() {
	$B/recorder-attach $RECORDER_ATTACH_FLAGS --binary $FORKER --dump-dir "$T/dumps" >"$T/attach.out" 2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	wait_for "$T/attach.out" '^attached to .* in every process that runs it' ||
		{ cat "$T/attach.err"; return 1; }
	start_target $FORKER 3 || return 1
	wait_ready 20 || { cat "$T/target.err"; return 1; }
	local child dump n=0
	for child in $(children_of_forker); do
		n=$((n + 1))
		grep -q "^child $child exited with status 0$" "$T/target.out" ||
			fail "child $child: $(grep "^child $child " "$T/target.out")" || return 1
		dump=$(dump_of "$child") || return 1
		# Each child is a process of its own: its own black box, with every
		# site it ran, the ones its parent had hit and the one nobody had.
		expect "child $child's black box has every event it emitted" \
"parent shared site child in the parent's span forker.c
child shared site child forker.c
child only children run this site null forker.c
child from shared library null shlib.c
child inside inner null forker.c" \
			"$($B/recorder-tail --file "$dump" --json |
				jq -r '"\(.subject) \(.fields.message) \(.fields.who) \(.file | split("/") | last)"')" ||
			return 1
		expect "child $child's black box says how it ended" "exit 0" \
			"$(jq -r '"\(.ended.how) \(.ended.code)"' "$dump")" || return 1
	done
	[ "$n" -eq 3 ] || fail "expected 3 children, forker printed $n" || return 1
	stop_target
	dump=$(dump_of "$TARGET_PID") || return 1
	expect "the parent's own black box still has the library's events" 4 \
		"$($B/recorder-tail --file "$dump" --json | jq -s 'map(select(.fields.message == "from shared library")) | length')"
}

# The negative control: the kernel defect these tests guard against is real on
# this kernel. A bare 5-byte-nop site, traced by bpftrace, hit by the parent,
# then run by a forked child: the child dies (docs/uprobe-fork.md).
test_fork_control_optimized_site_kills_the_child() {
	local repro=$B/tests/targets/uprobe_fork i
	start_target $repro || return 1
	bpftrace -p "$TARGET_PID" -e "usdt:$repro:repro:site {}" >"$T/bpftrace.out" 2>&1 &
	BG_PIDS+=($!)
	for ((i = 0; i < 1000; i++)); do
		bpftool perf list 2>/dev/null | grep -q "uprobe.*uprobe_fork" && break
		sleep 0.02
	done
	kill -USR1 "$TARGET_PID"
	wait_for "$T/target.out" '^child' 20 || return 1
	grep -q 'trampoline mapped' "$T/target.err" ||
		fail "the kernel did not optimize the bare site, so the control shows nothing: $(cat "$T/target.err" "$T/bpftrace.out")" ||
		return 1
	expect "the child of a process whose site was optimized dies" "child killed by SIGSEGV" \
		"$(grep '^child' "$T/target.out")"
}
