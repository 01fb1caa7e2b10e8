# SPDX-License-Identifier: MIT
# Dump files: who may read them, where they can be written, and what reading one
# costs. Files that are not dumps are refused at once; a dump directory that
# cannot take a dump fails recorder-attach at its start; a dump that cannot be
# written says why and makes the exit status 1; reading a dump costs what the
# file holds, whatever it declares.

# Dump files and directories (modes, owners, retention, a full disk): not the event path.
batch_path_only dumpfiles_fifo_and_devices_are_refused_at_once dumpfiles_are_0600_and_belong_to_the_targets_owner dumpfiles_existing_directory_is_never_changed dumpfiles_unusable_dump_directory_fails_at_start dumpfiles_full_filesystem_reports_enospc_and_exit_status dumpfiles_reading_is_bounded_by_the_file_size dumpfiles_keep_dumps_removes_the_oldest dumpfiles_max_dump_bytes_removes_the_oldest_and_keeps_the_new_one dumpfiles_retention_options_refuse_bad_values dumpfiles_black_box_takes_the_room_of_snapshots

# Mounts and immutable directories made by a test, undone on its way out.
DUMPFILES_MOUNTS=()
DUMPFILES_IMMUTABLE=()

dumpfiles_undo() {
	local d
	for d in "${DUMPFILES_IMMUTABLE[@]}"; do chattr -i "$d" 2>/dev/null; done
	for d in "${DUMPFILES_MOUNTS[@]}"; do umount "$d" 2>/dev/null; done
}

# dumpfiles_mount DIR OPTIONS: a small tmpfs at DIR, unmounted when the test ends.
dumpfiles_mount() {
	mkdir -p "$1" && mount -t tmpfs -o "$2" tmpfs "$1" || fail "cannot mount a tmpfs at $1" ||
		return 1
	DUMPFILES_MOUNTS+=("$1")
	trap 'dumpfiles_undo; cleanup' EXIT
}

# dumpfiles_immutable DIR: a directory that even root cannot write into (chattr +i).
dumpfiles_immutable() {
	mkdir "$1" && chattr +i "$1" || fail "cannot make $1 immutable" || return 1
	DUMPFILES_IMMUTABLE+=("$1")
	trap 'dumpfiles_undo; cleanup' EXIT
}

# dumpfiles_fill DIR: fills DIR's file system to the last byte.
dumpfiles_fill() {
	dd if=/dev/zero of="$1/fill" bs=4096 2>/dev/null
	head -c 4096 /dev/zero >"$1/fill2" 2>/dev/null
	[ "$(df --output=avail "$1" | tail -1)" -eq 0 ] || fail "$1 is not full" || return 1
}

# dumpfiles_attach DIR PID: recorder-attach -p PID --dump-dir DIR, until it has
# attached or exited.
dumpfiles_attach() {
	$B/recorder-attach $RECORDER_ATTACH_FLAGS -p "$2" --dump-dir "$1" >"$T/attach.out" 2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	local i
	for ((i = 0; i < 500; i++)); do
		grep -q '^attached to' "$T/attach.out" && return 0
		kill -0 "$ATTACH_PID" 2>/dev/null || return 0
		sleep 0.02
	done
	fail "recorder-attach neither attached nor exited within 10 s"
}

# dumpfiles_wait_exit: waits (10 s at most) for recorder-attach to exit; sets
# ATTACH_STATUS to its exit status, or to "still running".
dumpfiles_wait_exit() {
	if ! wait_gone "$ATTACH_PID"; then
		ATTACH_STATUS="still running"
		return
	fi
	wait "$ATTACH_PID"
	ATTACH_STATUS=$?
}

# dumpfiles_dump_of PID: the path recorder-attach printed for PID's black box.
dumpfiles_dump_of() {
	wait_for "$T/attach.out" "black box of pid $1 written to " 30 >&2 || {
		cat "$T/attach.err" >&2
		return 1
	}
	sed -n "s/^recorder-attach: black box of pid $1 written to //p" "$T/attach.out"
}

test_dumpfiles_fifo_and_devices_are_refused_at_once() {
	mkfifo "$T/fifo" || return 1
	mkdir "$T/dir" || return 1
	local f kind out rc
	for f in "$T/fifo:a FIFO" "/dev/zero:a character device" "/dev/null:a character device" \
		"$T/dir:a directory"; do
		kind=${f#*:}
		f=${f%%:*}
		# The deadline only bounds a hang: a FIFO with no writer used to block forever,
		# and /dev/zero was read for 1 GiB.
		out=$(timeout 10 $B/recorder-tail --file "$f" 2>&1)
		rc=$?
		[ $rc -ne 124 ] || fail "recorder-tail --file $f was still reading after 10 s" ||
			return 1
		expect "$f is refused, and said why" \
			"recorder-tail: failed to read $f: $kind, not a regular file (exit 1)" \
			"$out (exit $rc)" || return 1
	done
	# A link to a dump is read: it is the file it points to that counts.
	echo '{"format":"no"}' >"$T/x.json"
	ln -s "$T/x.json" "$T/link.json"
	expect "a symbolic link to a regular file is followed" \
		"recorder-tail: $T/link.json is not a valid recorder dump: not a recorder dump: \"format\" is not \"recorder-dump\"" \
		"$($B/recorder-tail --file "$T/link.json" 2>&1)"
}

test_dumpfiles_are_0600_and_belong_to_the_targets_owner() {
	# The target runs as nobody (65534); $T lets nobody through to reach the dump.
	nobody_scenario || return 1
	start_target setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$NB_SCENARIO" events_are_recorded || return 1
	dumpfiles_attach "$T/dumps" "$TARGET_PID" || return 1
	grep -q '^attached to' "$T/attach.out" || fail "not attached: $(cat "$T/attach.err")" ||
		return 1
	wait_ready || return 1
	stop_target
	local dump
	dump=$(dumpfiles_dump_of "$TARGET_PID") || return 1
	expect "the dump is 0600, of the target's owner" "600 65534" "$(stat -c '%a %u' "$dump")" ||
		return 1
	expect "the dump directory recorder created is 0711, root's" "711 0" \
		"$(stat -c '%a %u' "$T/dumps")" || return 1
	expect "no temporary file is left" "$(basename "$dump")" "$(ls -A "$T/dumps")" || return 1
	local as_root
	as_root=$($B/recorder-tail --file "$dump" --json)
	[ -n "$as_root" ] || fail "the dump shows no event" || return 1
	expect "its owner reads it" "$as_root" \
		"$(setpriv --reuid=65534 --regid=65534 --clear-groups $B/recorder-tail --file "$dump" --json)" ||
		return 1
	expect "another user does not" \
		"recorder-tail: failed to read $dump: Permission denied" \
		"$(setpriv --reuid=65533 --regid=65533 --clear-groups $B/recorder-tail --file "$dump" 2>&1)"
}

test_dumpfiles_existing_directory_is_never_changed() {
	mkdir "$T/shared" && chmod 1777 "$T/shared" && chown 1234:1234 "$T/shared" || return 1
	start_target $SCENARIO events_are_recorded || return 1
	dumpfiles_attach "$T/shared" "$TARGET_PID" || return 1
	wait_ready || return 1
	stop_target
	local dump
	dump=$(dumpfiles_dump_of "$TARGET_PID") || return 1
	expect "the directory keeps its mode and owner" "1777 1234:1234" \
		"$(stat -c '%a %u:%g' "$T/shared")" || return 1
	expect "the dump of a root target is root's, 0600" "600 0" "$(stat -c '%a %u' "$dump")"
}

# dumpfiles_refused_at_start DIR REASON: recorder-attach --dump-dir DIR exits 1 at
# once, before attaching, naming DIR and REASON.
dumpfiles_refused_at_start() {
	dumpfiles_attach "$1" "$TARGET_PID" || return 1
	dumpfiles_wait_exit
	expect "recorder-attach --dump-dir $1 exits 1 at its start" "1" "$ATTACH_STATUS" ||
		{ cat "$T/attach.out" "$T/attach.err"; return 1; }
	grep -q '^attached to' "$T/attach.out" && fail "it attached before refusing $1" && return 1
	expect "it says which directory and why" \
		"recorder-attach: cannot write black boxes into $1: $2 (use --dump-dir DIR, or --no-dump)" \
		"$(cat "$T/attach.err")"
}

test_dumpfiles_unusable_dump_directory_fails_at_start() {
	start_target $SCENARIO events_are_recorded || return 1
	touch "$T/file" || return 1
	dumpfiles_refused_at_start "$T/file" "Not a directory" || return 1
	dumpfiles_refused_at_start "$T/file/boxes" "Not a directory" || return 1

	dumpfiles_mount "$T/ro" ro,size=64k || return 1
	dumpfiles_refused_at_start "$T/ro" "Read-only file system" || return 1
	dumpfiles_refused_at_start "$T/ro/missing/boxes" "Read-only file system" || return 1

	# Not writable by root through its mode (recorder-attach keeps no CAP_DAC_OVERRIDE).
	mkdir "$T/theirs" && chown 1234 "$T/theirs" && chmod 0755 "$T/theirs" || return 1
	dumpfiles_refused_at_start "$T/theirs" \
		"Permission denied: its mode does not let root write in it" || return 1

	# Not writable even by root.
	dumpfiles_immutable "$T/immutable" || return 1
	dumpfiles_refused_at_start "$T/immutable" "Operation not permitted" || return 1
	dumpfiles_refused_at_start "$T/immutable/missing" "Operation not permitted" || return 1

	dumpfiles_mount "$T/full" size=64k || return 1
	dumpfiles_fill "$T/full" || return 1
	dumpfiles_refused_at_start "$T/full" "No space left on device" || return 1

	expect "the target was never attached to" "" "$(grep ready "$T/target.out")"
}

test_dumpfiles_full_filesystem_reports_enospc_and_exit_status() {
	dumpfiles_mount "$T/full" size=64k || return 1
	start_target $SCENARIO events_are_recorded || return 1
	dumpfiles_attach "$T/full" "$TARGET_PID" || return 1
	grep -q '^attached to' "$T/attach.out" || fail "not attached: $(cat "$T/attach.err")" ||
		return 1
	wait_ready || return 1
	# The directory was fine at the start; it fills up before the target ends.
	dumpfiles_fill "$T/full" || return 1
	stop_target
	dumpfiles_wait_exit
	expect "recorder-attach exits 1 when a black box is lost" "1" "$ATTACH_STATUS" ||
		return 1
	expect "it says why, with the real reason, and which one was lost" \
		"recorder-attach: failed to write the black box of pid $TARGET_PID into $T/full: No space left on device
recorder-attach: 1 black box could not be written: pid $TARGET_PID" \
		"$(cat "$T/attach.err")" || return 1
	expect "no partial dump is left behind" "fill fill2" "$(ls -A "$T/full" | tr '\n' ' ' | sed 's/ $//')"
}

# dumpfiles_cost FILE [ARGS]: "<exit status> <max RSS in KiB>" of recorder-tail --file FILE,
# with 5 s as a deadline that only bounds a hang (it takes well under a second).
dumpfiles_cost() {
	python3 - "$B/recorder-tail" "$@" <<'EOF'
import resource, subprocess, sys
try:
    rc = subprocess.run([sys.argv[1], "--file"] + sys.argv[2:], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL, timeout=5).returncode
except subprocess.TimeoutExpired:
    rc = "timeout"
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
EOF
}

# dumpfiles_within FILE WANT_STATUS [ARGS]: reading FILE gives WANT_STATUS within the
# deadline and under 64 MiB.
dumpfiles_within() {
	local file=$1 want=$2 cost
	shift 2
	cost=$(dumpfiles_cost "$file" "$@")
	[ "${cost% *}" = "$want" ] ||
		fail "reading $(basename "$file") ($(stat -c %s "$file") bytes) ended with ${cost% *}, not $want" ||
		return 1
	[ "${cost#* }" -lt 65536 ] ||
		fail "reading $(basename "$file") ($(stat -c %s "$file") bytes) took ${cost#* } KiB" ||
		return 1
}

test_dumpfiles_reading_is_bounded_by_the_file_size() {
	python3 - "$T" <<'EOF' || return 1
import sys
t = sys.argv[1]
head = ('{"format":"recorder-dump","version":1,"pid":42,"ns_pid":0,'
        '"ended":{"how":"exit","code":0},"dumped_at":"2026-12-02T14:03:12.123456Z",'
        '"clock_offset_ns":5,"malformed":0,"orphans":0,'
        '"callsites":[{"addr":"0x1000","kind":"E","level":2,"name":"ev","target":"t",'
        '"file":"f.c","line":12,"message":"hi","fields":["a","b"]}],')
# About 1 MB: 1,000 recordings of cap 2^20, each with 3 events near the top of
# its seqs, as a process with a million events per recording would leave.
recs = []
for i in range(1000):
    evs = ",".join('{"seq":%d,"tid":7,"time_ns":%d,"callsite":"0x1000","values":['
                   '{"type":"str","value":"%s","status":"ok"},{"type":"u64","value":%d}]}'
                   % (999997 + s, s, "x" * 200, s) for s in range(3))
    recs.append('{"key":"0x%x","recorder":"0x1","subject":"s%d","cap":1048576,'
                '"state":"live","seen":1000000,"kept":1000000,"dropped":0,"stale":0,'
                '"events":[%s]}' % (0x8000000000000001 + i, i, evs))
open(t + "/caps.json", "w").write(head + '"recordings":[' + ",\n".join(recs) + '],"stacks":[]}')
# The hostile shapes, 4 MB each: an array of empty arrays where a dump should be,
# and inside a dump, under a key nobody knows.
n = 4 * 1024 * 1024 // 3
open(t + "/arrays.json", "w").write("[" + "[]," * n + "[]]")
open(t + "/unknown.json", "w").write(head + '"future":[' + "[]," * n + '[]],"recordings":[],"stacks":[]}')
# 1 MB of objects and of 64-deep arrays inside one value.
open(t + "/objects.json", "w").write(head + '"future":[' + '{"a":{}},' * (1024 * 1024 // 9) + '{}],"recordings":[],"stacks":[]}')
open(t + "/deep.json", "w").write(head + '"future":[' + ("[" * 62 + "]" * 62 + ",") * 8000 + '0],"recordings":[],"stacks":[]}')
EOF
	local size
	size=$(stat -c %s "$T/caps.json")
	[ "$size" -gt 900000 ] && [ "$size" -lt 1200000 ] || fail "caps.json is $size bytes" || return 1
	dumpfiles_within "$T/caps.json" 0 --list || return 1
	expect "every recording is read, with its cap" "1000 1048576" \
		"$($B/recorder-tail --file "$T/caps.json" --list --json | jq -rs '"\(length) \(map(.cap) | unique | .[])"')" ||
		return 1
	expect "each shows its 3 events" "3000" \
		"$($B/recorder-tail --file "$T/caps.json" --json | jq -s length)" || return 1
	dumpfiles_within "$T/arrays.json" 1 || return 1
	dumpfiles_within "$T/unknown.json" 0 --list || return 1
	dumpfiles_within "$T/objects.json" 0 --list || return 1
	dumpfiles_within "$T/deep.json" 0 --list
}

# retention_attach ARGS...: recorder-attach --binary workload with ARGS, dumps into $T/dumps.
retention_attach() {
	mkdir -p "$T/dumps"
	$B/recorder-attach --binary "$B/workload" --dump-dir "$T/dumps" --sock-dir "$T/socks" "$@" \
		>"$T/attach.out" 2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	wait_for "$T/attach.out" '^attached to .* in every process that runs it' ||
		{ cat "$T/attach.err"; return 1; }
}

# retention_run: one workload process, traced and ended; echoes its pid once its box is written.
retention_run() {
	local out=$T/w.$RANDOM p
	$B/workload --wait-attach --events 3 --cap 10 --subject keep >"$out" 2>&1 || return 1
	p=$(awk '{print $3}' "$out")
	wait_for "$T/attach.out" "black box.*recorder-$p-" 10 >&2 || return 1
	echo "$p"
}

test_dumpfiles_keep_dumps_removes_the_oldest() {
	local p1 p2 p3 p4 left
	retention_attach --keep-dumps 2 --max-dump-bytes 0 || return 1
	# Not black boxes: never removed.
	echo '{}' >"$T/dumps/notes.json"
	echo x >"$T/dumps/recorder-1-20260101T000000Z.json.tmp"
	p1=$(retention_run) && p2=$(retention_run) && p3=$(retention_run) && p4=$(retention_run) ||
		return 1
	left=$(cd "$T/dumps" && ls recorder-*.json | sed -E 's/^recorder-([0-9]+)-.*/\1/' | sort -n |
		tr '\n' ' ')
	expect "the two newest black boxes stay" "$(printf '%s\n' "$p3" "$p4" | sort -n | tr '\n' ' ')" \
		"$left" || return 1
	[ -e "$T/dumps/notes.json" ] && [ -e "$T/dumps/recorder-1-20260101T000000Z.json.tmp" ] ||
		fail "retention removed a file that is not a finished black box: $(ls "$T/dumps")" ||
		return 1
	grep -q "removed 1 old black box(es) from $T/dumps (--keep-dumps 2" "$T/attach.err" ||
		fail "no word of the removal on stderr: $(cat "$T/attach.err")" || return 1
	# The counter, in --stats of a process the same recorder-attach serves.
	$B/workload --wait-attach --events 1 --hold 30 >"$T/w5.out" 2>&1 &
	BG_PIDS+=($!)
	wait_for "$T/w5.out" '^workload: pid' || return 1
	local p5
	p5=$(awk '{print $3}' "$T/w5.out")
	wait_for "$T/attach.out" "^recorder-attach: tracing pid $p5 " 10 || return 1
	expect "--stats counts the removed boxes" 2 \
		"$($B/recorder-tail -p "$p5" --sock-dir "$T/socks" --stats --json | jq -r '.dumps.removed')"
}

test_dumpfiles_max_dump_bytes_removes_the_oldest_and_keeps_the_new_one() {
	local p left
	mkdir -p "$T/dumps"
	# Two old boxes of 40 KiB each, older than anything written now.
	head -c 40960 /dev/zero >"$T/dumps/recorder-7-20250101T000000Z.json"
	head -c 40960 /dev/zero >"$T/dumps/recorder-8-20250102T000000Z.json"
	touch -d '2025-01-01' "$T/dumps/recorder-7-20250101T000000Z.json"
	touch -d '2025-01-02' "$T/dumps/recorder-8-20250102T000000Z.json"
	retention_attach --keep-dumps 0 --max-dump-bytes 50k || return 1
	p=$(retention_run) || return 1
	left=$(cd "$T/dumps" && ls -tr recorder-*.json | tr '\n' ' ')
	[[ $left == "recorder-8-20250102T000000Z.json recorder-$p-"*".json " ]] ||
		fail "expected the newer old box and the new one to stay, in 50 KiB: $left" || return 1
	# Under 1 KiB: only the one just written stays, however big it is.
	kill "$ATTACH_PID"
	wait "$ATTACH_PID" 2>/dev/null
	retention_attach --keep-dumps 0 --max-dump-bytes 1 || return 1
	local q
	q=$(retention_run) || return 1
	left=$(cd "$T/dumps" && ls recorder-*.json | tr '\n' ' ')
	[[ $left == "recorder-$q-"*".json " ]] ||
		fail "expected only the box just written to stay: $left" || return 1
	[ -n "$($B/recorder-tail --file "$T/dumps"/recorder-"$q"-*.json -n 1)" ] ||
		fail "the box just written does not read back"
}

test_dumpfiles_retention_options_refuse_bad_values() {
	local out
	out=$($B/recorder-attach -p 1 --max-dump-bytes 1GB 2>&1)
	[[ $out == *"invalid --max-dump-bytes '1GB': expected a size in bytes, with an optional suffix k, M or G (0: no limit)"* ]] ||
		fail "bad --max-dump-bytes: $out" || return 1
	out=$($B/recorder-attach -p 1 --keep-dumps -3 2>&1)
	[[ $out == *"invalid --keep-dumps '-3': expected 0 to 1000000"* ]] || fail "bad --keep-dumps: $out"
}

# Issue 35, item 4: a rule with no cooldown fires every 10 ms and its snapshots
# fill a 64 KiB dump directory. The snapshots that no longer fit are said on a
# few lines, each with a count of the failures since the last, not a line each;
# they are counted (--triggers, --stats). When the process exits, its black box
# takes the room of the oldest snapshots (said on one line), is written and
# read back, and recorder-attach exits 0.
test_dumpfiles_black_box_takes_the_room_of_snapshots() {
	local dump before after removed failed lines
	dumpfiles_mount "$T/small" size=64k || return 1
	start_target $B/tests/targets/incident errors 200 10 || return 1
	$B/recorder-attach $RECORDER_ATTACH_FLAGS -p "$TARGET_PID" --dump-dir "$T/small" \
		--trigger 'level>=error' --trigger-cooldown 0 --trigger-cap 0 --trigger-signature-cap 0 --trigger-after 0 \
		>"$T/attach.out" 2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	wait_for "$T/attach.out" '^attached to' 30 || { cat "$T/attach.err"; return 1; }
	wait_for "$T/target.out" '^done' 60 || return 1
	wait_for "$T/attach.err" 'its snapshot could not be written' 30 || return 1
	# The last errors may still be on their way (a batch): until all 200 were tried.
	local i tried
	for ((i = 0; i < 500; i++)); do
		tried=$($B/recorder-tail -p "$TARGET_PID" --triggers --json | jq -r '.saved + .failed')
		[ "$tried" = 200 ] && break
		sleep 0.02
	done
	expect "each of the 200 errors fired a snapshot, saved or failed" 200 "$tried" || return 1
	failed=$($B/recorder-tail -p "$TARGET_PID" --triggers --json | jq -r .failed)
	[ "$failed" -gt 10 ] ||
		fail "--triggers counts the snapshots that failed: $failed" || return 1
	expect "--stats counts them too, for the process" "$failed" \
		"$($B/recorder-tail -p "$TARGET_PID" --stats --json | jq -r .snapshots.failed)" || return 1
	before=$(find "$T/small" -name 'snapshot-*.json' | wc -l)
	[ "$before" -gt 0 ] || fail "no snapshot was written" || return 1
	stop_target
	dumpfiles_wait_exit
	expect "recorder-attach exits 0: the black box was written" "0" "$ATTACH_STATUS" ||
		{ cat "$T/attach.err"; return 1; }
	dump=$(dumpfiles_dump_of "$TARGET_PID") || return 1
	[ -f "$dump" ] || fail "no black box at $dump" || return 1
	expect "recorder-tail reads it" "errors" \
		"$($B/recorder-tail --file "$dump" --list --json | jq -r .subject)" || return 1
	after=$(find "$T/small" -name 'snapshot-*.json' | wc -l)
	removed=$(sed -nE "s/^recorder-attach: removed ([0-9]+) snapshot\(s\) \([0-9]+ bytes\) from .* to make room for the black box of pid $TARGET_PID$/\1/p" "$T/attach.err")
	[ -n "$removed" ] && [ "$removed" -gt 0 ] ||
		fail "it says it removed snapshots to make room: $(grep -v 'fired in pid' "$T/attach.err")" ||
		return 1
	expect "the snapshots left are the ones not removed" "$before" "$((after + removed))" ||
		return 1
	lines=$(grep -c 'its snapshot could not be written' "$T/attach.err")
	[ "$lines" -le 5 ] ||
		fail "$lines lines for $failed failed snapshots: $(grep 'could not be written' "$T/attach.err" | head -8)" ||
		return 1
	grep -qE 'its snapshot could not be written into .*: No space left on device \([0-9]+ more since\)' \
		"$T/attach.err" || grep -qE 'could not be written .* [0-9]+ more times' "$T/attach.err" ||
		fail "the repeats are counted: $(grep 'could not be written' "$T/attach.err" | head -5)"
}
