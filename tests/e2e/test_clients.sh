# SPDX-License-Identifier: MIT
# The clients of recorder-attach's control sockets: none of them can stall the
# ring's consumer, they are bounded (count, time, buffer), one recorder-attach
# serves a process, and root and the process's owner read it, nobody else.

# The control socket, its clients and the capabilities kept: not the event path.
batch_path_only clients_stalled_and_idle_cost_the_workload_nothing clients_cap_and_timeout clients_second_attach_is_refused_and_the_first_keeps_serving clients_sock_dir_is_never_changed clients_owner_reads_its_process_and_other_users_are_refused clients_attach_keeps_only_the_capabilities_it_needs clients_caps_kept_attach_a_library_loaded_later_from_a_private_directory clients_caps_kept_adopt_another_users_process_under_binary

# attach_with PID ARGS...: like attach, with more options for recorder-attach.
attach_with() {
	local pid=$1 i
	shift
	# Emptied here, not by the redirection: the loop below may look before the
	# background process has opened (and truncated) the file of an earlier attach.
	: >"$T/attach.out"
	$B/recorder-attach $RECORDER_ATTACH_FLAGS -p "$pid" --dump-dir "$T/dumps" "$@" >"$T/attach.out" 2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	for ((i = 0; i < 500; i++)); do
		grep -q '^attached to' "$T/attach.out" && return 0
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

# stop_attach: SIGTERM to the last recorder-attach, and wait for it.
stop_attach() {
	kill -TERM "$ATTACH_PID" 2>/dev/null
	wait "$ATTACH_PID" 2>/dev/null
	return 0
}

# hold_connections SOCKET N SECONDS >FILE: N connections that send nothing. Prints
# "held N" once connected, then for each, within SECONDS: "closed: WHAT IT WAS TOLD"
# once the server closes it, or "open".
hold_connections() {
	python3 -c '
import socket, sys, time
path, n, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
conns = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    conns.append(s)
print("held", n, flush=True)
end = time.time() + secs
for s in conns:
    data = b""
    try:
        while True:
            s.settimeout(max(0.05, end - time.time()))
            b = s.recv(4096)
            if not b:
                break
            data += b
        print("closed:", data.decode(errors="replace").strip(), flush=True)
    except (socket.timeout, TimeoutError):
        print("open", flush=True)
' "$@"
}

# dropped_of PID [ARGS]: the events of PID's recordings lost on the way (ring full).
dropped_of() {
	$B/recorder-tail -p "$@" --list --json | jq -s 'map(.dropped) | add'
}

test_clients_stalled_and_idle_cost_the_workload_nothing() {
	local events=600000 tail_pid dropped base listed out
	start_target $B/workload --wait-attach --rate 200000 --events $events --cap 1000 \
		--fields 1 --hold 60 --report "$T/report.json" || return 1
	attach "$TARGET_PID" || return 1
	# A --follow reader that stops reading: stopped once it has its first answer.
	$B/recorder-tail -p "$TARGET_PID" --follow --json >"$T/follow.out" 2>"$T/follow.err" &
	tail_pid=$!
	BG_PIDS+=($tail_pid)
	wait_for "$T/follow.out" '"seq"' || return 1
	kill -STOP "$tail_pid"
	# Ten connections that never send a request.
	hold_connections "/run/recorder/$TARGET_PID.sock" 10 30 >"$T/idle.out" &
	BG_PIDS+=($!)
	wait_for "$T/idle.out" '^held 10' || return 1
	# Answered while all of them sit there and the workload runs.
	listed=$(timeout 5 $B/recorder-tail -p "$TARGET_PID" --list --json) ||
		fail "--list did not answer within 5 s beside a stalled follower and 10 idle clients" ||
		return 1
	[ "$(echo "$listed" | jq -s length)" -eq 1 ] || fail "--list gave: $listed" || return 1
	wait_for "$T/report.json" 'last_seq' 60 || return 1
	dropped=$(dropped_of "$TARGET_PID") || return 1
	expect "every event was seen" "$events" \
		"$(rtail --list --json | jq -s 'map(.seen) | add')" || return 1
	if [ "$dropped" -ne 0 ]; then
		# Only what the machine loses with no client at all is allowed.
		stop_target
		stop_attach
		start_target $B/workload --wait-attach --rate 200000 --events $events --cap 1000 \
			--fields 1 --hold 60 --report "$T/report0.json" || return 1
		attach "$TARGET_PID" || return 1
		wait_for "$T/report0.json" 'last_seq' 60 || return 1
		base=$(dropped_of "$TARGET_PID") || return 1
		[ "$dropped" -le "$base" ] ||
			fail "$dropped events dropped with the clients, $base without" || return 1
		return 0
	fi
	[ "$(rtail --stats --json | jq .clients.events_not_sent)" -gt 0 ] ||
		fail "--stats counts no event not sent: $(rtail --stats --json)" || return 1
	# The follower resumes, gets the rest and is told what it missed.
	kill -CONT "$tail_pid"
	stop_target
	timeout 20 tail --pid="$tail_pid" -f /dev/null ||
		fail "the follower did not end after the target did" || return 1
	out=$(jq -rs '[(map(select(.seq != null)) | length), (map(.not_sent // 0) | add),
		(map(select(.seq != null)) | .[0].seq)] | @tsv' "$T/follow.out") ||
		fail "follow output is not JSON lines: $(head -c 300 "$T/follow.out")" || return 1
	local sent missed first
	read -r sent missed first <<<"$out"
	[ "$missed" -gt 0 ] || fail "the stalled follower was never told it missed events ($out)" ||
		return 1
	expect "every event from the first it got is sent or counted as not sent" \
		"$((events - first))" "$((sent + missed))" || return 1
	grep -qE '^\{"pid":'"$TARGET_PID"',"not_sent":[0-9]+,"reason":"reader too slow"\}$' \
		"$T/follow.out" || fail "no not_sent line of the documented form"
}

test_clients_cap_and_timeout() {
	local out rc
	start_target $SCENARIO events_are_recorded || return 1
	attach_with "$TARGET_PID" --max-clients 2 --client-timeout 1000 || return 1
	wait_ready || return 1
	hold_connections "/run/recorder/$TARGET_PID.sock" 2 10 >"$T/idle.out" &
	BG_PIDS+=($!)
	wait_for "$T/idle.out" '^held 2' || return 1
	out=$(timeout 5 $B/recorder-tail -p "$TARGET_PID" --list 2>&1)
	rc=$?
	expect "a third client is refused, and told why" \
		"1 recorder-attach: too many clients: at most 2 at once (--max-clients); pid $TARGET_PID was not read, try again later" \
		"$rc $out" || return 1
	# The two that never sent a request are closed after --client-timeout, and told why.
	wait_for "$T/idle.out" '^(closed|open)' 5 || return 1
	sleep 0.2
	expect "idle clients are closed after the timeout" \
		"held 2
closed: 1recorder-attach: no whole request within 1000 ms (--client-timeout); closing
closed: 1recorder-attach: no whole request within 1000 ms (--client-timeout); closing" \
		"$(cat "$T/idle.out")" || return 1
	expect "then clients are served again, and the counters say what happened" \
		'{"connected":1,"max_clients":2,"accepted":3,"denied":0,"refused":1,"timed_out":2,"events_not_sent":0}' \
		"$(rtail --stats --json | jq -c .clients)" || return 1
	grep -qE '^    refused +1$' <<<"$(rtail --stats)" || fail "no refused line in --stats: $(rtail --stats)"
}

test_clients_second_attach_is_refused_and_the_first_keeps_serving() {
	local out rc first stale
	start_target $SCENARIO events_are_recorded || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	first=$(rtail --json | jq -c .seq | tr '\n' ' ')
	[ -n "$first" ] || fail "no events before the second attach" || return 1
	out=$(timeout 10 $B/recorder-attach -p "$TARGET_PID" --dump-dir "$T/dumps2" 2>&1)
	rc=$?
	expect "the second attach is refused, naming the pid, the holder, its lock and socket" \
		"1 recorder-attach: pid $TARGET_PID is already traced by recorder-attach pid $ATTACH_PID, which holds the lock /run/recorder/$TARGET_PID.lock and serves /run/recorder/$TARGET_PID.sock" \
		"$rc $out" || return 1
	[ -S "/run/recorder/$TARGET_PID.sock" ] ||
		fail "the first recorder-attach's socket is gone" || return 1
	expect "the first one keeps serving" "$first" "$(rtail --json | jq -c .seq | tr '\n' ' ')" ||
		return 1
	# The directory is made ready at start; no black box may be in it.
	[ -z "$(ls -A "$T/dumps2" 2>/dev/null)" ] ||
		fail "the refused attach wrote a dump: $(ls "$T/dumps2")" || return 1
	# A socket left by a recorder-attach that died is replaced.
	start_target $SCENARIO events_are_recorded || return 1
	mkdir "$T/socks"
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
		"$T/socks/$TARGET_PID.sock" || return 1
	attach_with "$TARGET_PID" --sock-dir "$T/socks" || return 1
	wait_ready || return 1
	stale=$($B/recorder-tail -p "$TARGET_PID" --sock-dir "$T/socks" --json | jq -c .seq | tr '\n' ' ')
	expect "a stale socket is replaced and served" "$first" "$stale"
}

test_clients_sock_dir_is_never_changed() {
	local d out rc
	# Safe directories of someone else's making: used as they are.
	mkdir "$T/mine" "$T/sticky"
	chmod 0750 "$T/mine"
	chmod 1777 "$T/sticky"
	for d in mine sticky; do
		local before
		before=$(stat -c '%a %U %G' "$T/$d")
		start_target $SCENARIO events_are_recorded || return 1
		attach_with "$TARGET_PID" --sock-dir "$T/$d" || return 1
		wait_ready || return 1
		[ "$($B/recorder-tail -p "$TARGET_PID" --sock-dir "$T/$d" --json | jq -s length)" -gt 0 ] ||
			fail "nothing read through $T/$d" || return 1
		expect "$d: mode and owner left as they were" "$before" \
			"$(stat -c '%a %U %G' "$T/$d")" || return 1
		stop_attach
	done
	# Unsafe ones: refused, and still left as they were.
	mkdir "$T/users" "$T/open"
	chown 65534:65534 "$T/users"
	chmod 0755 "$T/users"
	chmod 0777 "$T/open"
	out=$($B/recorder-attach -p "$TARGET_PID" --sock-dir "$T/users" --no-dump 2>&1)
	rc=$?
	expect "a directory of another user is refused" \
		"1 recorder-attach: refusing the socket directory $T/users: it belongs to uid 65534, not to root (an existing directory is never changed: fix it, or choose another with --sock-dir)" \
		"$rc $out" || return 1
	expect "and left as it was" "755 nobody nogroup" "$(stat -c '%a %U %G' "$T/users")" ||
		return 1
	out=$($B/recorder-attach -p "$TARGET_PID" --sock-dir "$T/open" --no-dump 2>&1)
	rc=$?
	expect "a directory anyone may write to is refused" \
		"1 recorder-attach: refusing the socket directory $T/open: its mode 0777 lets others write to it without the sticky bit (an existing directory is never changed: fix it, or choose another with --sock-dir)" \
		"$rc $out" || return 1
	expect "and left as it was" "777 root root" "$(stat -c '%a %U %G' "$T/open")" || return 1
	# A missing one is created: root's, searchable, not listable.
	attach_with "$TARGET_PID" --sock-dir "$T/new" || return 1
	expect "a directory it creates" "711 root root" "$(stat -c '%a %U %G' "$T/new")"
}

test_clients_owner_reads_its_process_and_other_users_are_refused() {
	local as_owner out rc sock
	# Where uid 65534 may go: the test's directory, searchable.
	nobody_scenario || return 1
	start_target setpriv --reuid=65534 --regid=65534 --clear-groups "$NB_SCENARIO" all_fields ||
		return 1
	attach_with "$TARGET_PID" --sock-dir "$T/socks" || return 1
	wait_ready || return 1
	sock="$T/socks/$TARGET_PID.sock"
	expect "the socket belongs to the process's owner, who alone may connect" \
		"600 nobody" "$(stat -c '%a %U' "$sock")" || return 1
	as_owner=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
		$B/recorder-tail -p "$TARGET_PID" --sock-dir "$T/socks" --json) ||
		fail "the owner could not read its process: $as_owner" || return 1
	[ -n "$as_owner" ] || fail "the owner read nothing" || return 1
	expect "the owner reads what root reads" \
		"$($B/recorder-tail -p "$TARGET_PID" --sock-dir "$T/socks" --json)" "$as_owner" ||
		return 1
	out=$(setpriv --reuid=65533 --regid=65533 --clear-groups \
		$B/recorder-tail -p "$TARGET_PID" --sock-dir "$T/socks" 2>&1)
	rc=$?
	expect "another user is refused, told who may read" \
		"1 recorder-tail: permission denied on $sock: only root and the owner of pid $TARGET_PID (uid 65534) may read its trace" \
		"$rc $out" || return 1
	# Whatever the socket's mode, the server's SO_PEERCRED check decides.
	chmod 0666 "$sock"
	out=$(setpriv --reuid=65533 --regid=65533 --clear-groups \
		$B/recorder-tail -p "$TARGET_PID" --sock-dir "$T/socks" 2>&1)
	rc=$?
	expect "past the socket's mode, the server refuses another user" \
		"1 recorder-attach: uid 65533 may not read pid $TARGET_PID: only root and its owner (uid 65534) may" \
		"$rc $out"
}

test_clients_attach_keeps_only_the_capabilities_it_needs() {
	local bnd keep want
	start_target $SCENARIO events_are_recorded || return 1
	attach "$TARGET_PID" || return 1
	wait_ready || return 1
	# Answered from the loop, so the capabilities are dropped by now.
	[ -n "$(rtail)" ] || fail "no answer" || return 1
	# CAP_SYS_PTRACE 19, CAP_DAC_READ_SEARCH 2, CAP_CHOWN 0; never more than this
	# shell's bounding set.
	keep=$(((1 << 19) | (1 << 2) | (1 << 0)))
	bnd=$((16#$(awk '$1 == "CapBnd:" {print $2}' /proc/self/status)))
	want=$(printf '%016x' $((keep & bnd)))
	expect "recorder-attach's capabilities once attached" \
		"CapInh:	0000000000000000
CapPrm:	$want
CapEff:	$want
CapBnd:	$want
CapAmb:	0000000000000000
NoNewPrivs:	1" "$(grep -E '^(Cap|NoNewPrivs)' "/proc/$ATTACH_PID/status")" || return 1
	# And it still does its work: a dump on request.
	local dump
	dump=$(rtail --dump) || fail "--dump failed: $dump" || return 1
	[ -s "$dump" ] || fail "no dump at '$dump'"
}

# What each capability kept is for (see docs/guide/access.md): without it, these fail.
test_clients_caps_kept_attach_a_library_loaded_later_from_a_private_directory() {
	# CAP_DAC_READ_SEARCH: the library is in a directory only its user may enter.
	chmod 0711 "$T"
	mkdir "$T/priv"
	cp $B/tests/targets/scenario $B/tests/targets/*.so "$T/priv/"
	chown -R 65534:65534 "$T/priv"
	chmod 0700 "$T/priv"
	start_target setpriv --reuid=65534 --regid=65534 --clear-groups "$T/priv/scenario" dlopen ||
		return 1
	attach "$TARGET_PID" || return 1
	wait_ready 20 || { cat "$T/target.err"; return 1; }
	expect "events from the late library are recorded, in order" \
'before dlopen scenario.c
from a library loaded late late.c
from a library loaded late late.c
after dlopen scenario.c' \
		"$(rtail --json | jq -r '"\(.fields.message) \(.file | split("/") | last)"')"
}

test_clients_caps_kept_adopt_another_users_process_under_binary() {
	# CAP_SYS_PTRACE (its /proc/PID/exe) and CAP_CHOWN (its socket is its owner's).
	local p
	chmod 0711 "$T"
	$B/recorder-attach $RECORDER_ATTACH_FLAGS --binary $B/workload --dump-dir "$T/dumps" --sock-dir "$T/socks" \
		>"$T/attach.out" 2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	wait_for "$T/attach.out" '^attached to .* in every process that runs it' ||
		{ cat "$T/attach.err"; return 1; }
	setpriv --reuid=65534 --regid=65534 --clear-groups $B/workload --wait-attach --events 7 \
		--cap 10 --subject other --hold 30 >"$T/w1.out" 2>&1 &
	BG_PIDS+=($!)
	wait_for "$T/w1.out" '^workload: pid' || return 1
	p=$(awk '{print $3}' "$T/w1.out")
	wait_for "$T/attach.out" "^recorder-attach: tracing pid $p " 10 ||
		{ cat "$T/attach.err"; return 1; }
	expect "its socket belongs to its owner" "600 nobody" \
		"$(stat -c '%a %U' "$T/socks/$p.sock")" || return 1
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$($B/recorder-tail -p "$p" --sock-dir "$T/socks" --json -n 1 | jq -r .seq)" = 6 ] &&
			break
		sleep 0.05
	done
	expect "its owner reads its events" "0 1 2 3 4 5 6" \
		"$(setpriv --reuid=65534 --regid=65534 --clear-groups \
			$B/recorder-tail -p "$p" --sock-dir "$T/socks" --json |
			jq -r .seq | tr '\n' ' ' | sed 's/ $//')"
}
