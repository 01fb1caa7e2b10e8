# SPDX-License-Identifier: MIT
# A process between recorder-attach -p and recorder-attach --binary (issue 24,
# item 1), started and stopped in every order. A process that runs a watched
# executable is known to the --binary one from its exec, its fork or its
# discovery, probe hit or not; of two recorder-attach on one process, one holds
# it and the other waits, keeping its events, and takes it over when the
# holder stops. Each test checks, per recording, seen = what the target
# emitted (live, then in the black box), and that a kill -9 leaves exactly
# one black box. The target (tests/targets/handover.c) emits only between the
# starts and stops, a round per SIGUSR1.

HANDOVER=$B/tests/targets/handover
# Two threads, 3,000 events a round each: more than a batch buffer holds.
HO_ARGS="2 3000"

# ho_binary NAME: recorder-attach --binary $HANDOVER, its output in $T/NAME.{out,err}; its pid in NAME_PID.
ho_binary() {
	$B/recorder-attach $RECORDER_ATTACH_FLAGS --binary "$HANDOVER" --dump-dir "$T/dumps" \
		>"$T/$1.out" 2>"$T/$1.err" &
	BG_PIDS+=($!)
	printf -v "${1}_PID" %s $!
	wait_for "$T/$1.out" '^attached to .* in every process that runs it' 30 ||
		{ cat "$T/$1.err"; return 1; }
}

# ho_pid NAME: recorder-attach -p $TARGET_PID, as ho_binary (attach_named).
ho_pid() {
	attach_named "$1" -p "$TARGET_PID"
}

# ho_stop NAME: stops that recorder-attach and waits until it is gone (stop_named).
ho_stop() {
	stop_named "$1" TERM
}

# ho_target [--daemon | --spawn PROG]: starts the target, idle until its first round.
ho_target() {
	mkdir -p "$T/dumps"
	# shellcheck disable=SC2086
	start_target "$HANDOVER" "$@" $HO_ARGS "$T/report.json" || return 1
	# A daemon's child is not the shell's: stopped at the end all the same.
	BG_PIDS+=("$TARGET_PID")
	HO_ROUND=0
}

# ho_round: a round of events, and its report.
ho_round() {
	HO_ROUND=$((HO_ROUND + 1))
	kill -USR1 "$TARGET_PID"
	wait_for "$T/target.out" "^round $HO_ROUND done" 30
}

# ho_emitted: "KEY EMITTED" per recording, from the target's report.
ho_emitted() {
	jq -r '.recordings[] | "\(.key) \(.emitted)"' "$T/report.json" | sort
}

# ho_seen_live WHAT: seen = emitted per recording, as recorder-tail -p reads it
# (what threads asleep hold is collected within a moment: waited for).
ho_seen_live() {
	local want got i
	want=$(ho_emitted)
	for ((i = 0; i < 250; i++)); do
		got=$($B/recorder-tail -p "$TARGET_PID" --list --json | jq -r '"\(.recording) \(.seen)"' |
			sort)
		[ "$got" = "$want" ] && return 0
		sleep 0.04
	done
	expect "$1: live, seen = emitted per recording" "$want" "$got"
}

# ho_held_by NAME: recorder-tail -p says that recorder-attach NAME traces the
# process (a hand-over, or an adoption at exec, takes a moment: waited for).
ho_held_by() {
	local pid=${1}_PID got i
	for ((i = 0; i < 250; i++)); do
		got=$($B/recorder-tail -p "$TARGET_PID" --stats --json 2>&1 | jq -r .traced_by.pid 2>&1)
		[ "$got" = "${!pid}" ] && return 0
		sleep 0.04
	done
	expect "recorder-tail says who traces pid $TARGET_PID" "${!pid}" "$got"
}

# ho_box WHAT HOLDER [OTHER]: once the target is gone (killed by the caller),
# HOLDER writes its black box, the only one (seen = emitted per recording in
# it), and OTHER, which waited for it, if still running, says it is not its own.
ho_box() {
	local what=$1 holder=$2 other=${3:-} box
	wait_for "$T/$holder.out" "^recorder-attach: black box of pid $TARGET_PID written to " 30 ||
		return 1
	if [ -n "$other" ]; then
		wait_for "$T/$other.err" "^recorder-attach: pid $TARGET_PID ended while recorder-attach [0-9]+ .* held it: its black box is that one's" 30 ||
			return 1
	fi
	expect "$what: one black box" "1 1" \
		"$(cat "$T"/*.out | grep -c "^recorder-attach: black box of pid $TARGET_PID written to ") $(find "$T/dumps" -type f | wc -l)" ||
		return 1
	box=$(sed -n "s/^recorder-attach: black box of pid $TARGET_PID written to //p" "$T/$holder.out")
	expect "$what: in the black box, seen = emitted per recording" "$(ho_emitted)" \
		"$($B/recorder-tail --file "$box" --list --json | jq -r '"\(.recording) \(.seen)"' | sort)"
}

# The issue's case: --binary first; a -p started on its advice, then stopped.
test_handover_binary_first_then_pid_started_and_stopped() {
	ho_binary bin || return 1
	ho_target || return 1
	# Known from its exec, before any probe: recorder-tail names its recorder-attach.
	ho_held_by bin || return 1
	ho_pid p || return 1
	wait_for "$T/p.err" "^recorder-attach: pid $TARGET_PID is held by recorder-attach $bin_PID \(--binary $(realpath "$HANDOVER")\): deferring to it" ||
		return 1
	ho_round || return 1
	ho_stop p || return 1
	ho_round || return 1
	ho_held_by bin && ho_seen_live "binary, -p, -p stopped" || return 1
	kill -KILL "$TARGET_PID"
	ho_box "binary, -p, -p stopped" bin
}

# -p first; --binary started beside it waits, and takes the process over when -p stops.
test_handover_pid_first_then_binary_then_pid_stopped() {
	ho_target || return 1
	ho_pid p || return 1
	ho_binary bin || return 1
	wait_for "$T/bin.err" "^recorder-attach: pid $TARGET_PID is held by recorder-attach $p_PID \(-p\): deferring to it" ||
		return 1
	ho_held_by p && ho_round || return 1
	ho_stop p || return 1
	grep -q "^recorder-attach: pid $TARGET_PID handed back to recorder-attach $bin_PID (--binary " "$T/p.err" ||
		fail "the -p recorder-attach did not say whom it handed the process to: $(cat "$T/p.err")" ||
		return 1
	wait_for "$T/bin.err" "^recorder-attach: pid $TARGET_PID handed back by recorder-attach $p_PID \(-p\), which let go of it: traced here now" ||
		return 1
	ho_round || return 1
	ho_held_by bin && ho_seen_live "-p, binary, -p stopped" || return 1
	kill -KILL "$TARGET_PID"
	ho_box "-p, binary, -p stopped" bin
}

# --binary first, -p beside it; --binary stops: the -p one takes the process over.
test_handover_binary_first_then_pid_then_binary_stopped() {
	ho_binary bin || return 1
	ho_target || return 1
	ho_pid p || return 1
	ho_round || return 1
	ho_stop bin || return 1
	grep -q "^recorder-attach: pid $TARGET_PID handed back to recorder-attach $p_PID (-p), which waited for it" "$T/bin.err" ||
		fail "the --binary recorder-attach did not say whom it handed the process to: $(cat "$T/bin.err")" ||
		return 1
	wait_for "$T/p.err" "^recorder-attach: pid $TARGET_PID handed back by recorder-attach $bin_PID \(--binary .*\), which let go of it: traced here now" ||
		return 1
	ho_round || return 1
	ho_held_by p && ho_seen_live "binary, -p, binary stopped" || return 1
	kill -KILL "$TARGET_PID"
	ho_box "binary, -p, binary stopped" p
}

# -p first, --binary beside it, and --binary stops: -p holds on, nothing handed.
test_handover_pid_first_then_binary_started_and_stopped() {
	ho_target || return 1
	ho_pid p || return 1
	ho_binary bin || return 1
	wait_for "$T/bin.err" "^recorder-attach: pid $TARGET_PID is held by recorder-attach $p_PID \(-p\): deferring to it" ||
		return 1
	ho_round || return 1
	ho_stop bin || return 1
	ho_round || return 1
	ho_held_by p && ho_seen_live "-p, binary, binary stopped" || return 1
	kill -KILL "$TARGET_PID"
	ho_box "-p, binary, binary stopped" p
}

# Both running as the process is killed: the holder's box, and only it.
test_handover_killed_while_binary_holds_and_pid_waits() {
	ho_binary bin || return 1
	ho_target || return 1
	ho_pid p || return 1
	ho_round && ho_seen_live "binary holds, -p waits" || return 1
	kill -KILL "$TARGET_PID"
	ho_box "binary holds, -p waits" bin p || return 1
	# The -p one has nothing left to trace: it ends.
	wait_gone "$p_PID" || fail "the -p recorder-attach did not end with its process"
}

test_handover_killed_while_pid_holds_and_binary_waits() {
	ho_target || return 1
	ho_pid p || return 1
	ho_binary bin || return 1
	ho_round && ho_seen_live "-p holds, binary waits" || return 1
	kill -KILL "$TARGET_PID"
	ho_box "-p holds, binary waits" p bin
}

# The holder stops and the process is killed before the one that waits has
# taken it over (stopped meanwhile): that one writes the box.
test_handover_killed_as_the_holder_stops() {
	ho_target || return 1
	ho_pid p || return 1
	ho_binary bin || return 1
	wait_for "$T/bin.err" "is held by recorder-attach $p_PID" || return 1
	ho_round || return 1
	kill -STOP "$bin_PID"
	ho_stop p || { kill -CONT "$bin_PID"; return 1; }
	kill -KILL "$TARGET_PID"
	wait_gone "$TARGET_PID"
	kill -CONT "$bin_PID"
	ho_box "-p stopped, then killed" bin
}

# A daemonizing server (as "memcached -d"): the parent forks and exits without
# a probe, and gets a box all the same; the child is known from its fork.
test_handover_daemon_parent_and_child_get_their_boxes() {
	local parent box
	ho_binary bin || return 1
	ho_target --daemon || return 1
	parent=$(sed -n 's/^parent //p' "$T/target.out")
	[ -n "$parent" ] || fail "no parent line: $(cat "$T/target.out")" || return 1
	wait_for "$T/bin.out" "^recorder-attach: black box of pid $parent written to " 30 || return 1
	box=$(sed -n "s/^recorder-attach: black box of pid $parent written to //p" "$T/bin.out")
	expect "the parent's box: how it ended, no recording" "exit 0 0" \
		"$(jq -r '"\(.ended.how) \(.ended.code)"' "$box") $($B/recorder-tail --file "$box" --list --json | wc -l)" ||
		return 1
	rm "$box"
	# The child, before its first probe: held by the --binary recorder-attach.
	ho_held_by bin && ho_round && ho_seen_live "daemon child" || return 1
	kill -KILL "$TARGET_PID"
	ho_box "daemon child" bin
}

# A process adopted at its fork that execs another file before any recording
# is let go, and says so; one that execs the watched file again stays.
test_handover_fork_then_exec_of_another_file_is_let_go() {
	ho_binary bin || return 1
	ho_target --spawn /bin/sleep || return 1
	local child
	wait_for "$T/target.out" '^spawned [0-9]+' || return 1
	child=$(sed -n 's/^spawned //p' "$T/target.out")
	BG_PIDS+=("$child")
	wait_for "$T/bin.err" "^recorder-attach: pid $child exec'd a file no --binary names, before any recording: no longer traced" ||
		return 1
	kill -KILL "$child"
	wait_gone "$child"
	ho_held_by bin && ho_round && ho_seen_live "the spawner" || return 1
	kill -KILL "$TARGET_PID"
	ho_box "the spawner, its child let go" bin
}
