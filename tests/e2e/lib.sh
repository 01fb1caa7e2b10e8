# SPDX-License-Identifier: MIT
# Helpers for the end-to-end tests: real instrumented processes, the real
# recorder-attach and recorder-tail. Sourced by tests/run-all.sh.

# The binaries: recorder-attach and recorder-tail from RECORDER_BIN (the
# sanitizer run sets build/asan, which links to build's targets), else build.
B=${RECORDER_BIN:-build}
# Flags of every recorder-attach the tests start: tests/run-all.sh sets
# --per-event for the second run of the suite (one run per event path).
RECORDER_ATTACH_FLAGS=${RECORDER_ATTACH_FLAGS:-}
SCENARIO=$B/tests/targets/scenario
BG_PIDS=()
# Tests whose subject is not the event path (usage errors, make install, the
# limiter of signatures): tests/run-all.sh runs them on the batch path only,
# and says so. A test file names its own with batch_path_only.
BATCH_PATH_ONLY=()

# batch_path_only NAME...: tests (without test_) run on the batch path only.
batch_path_only() {
	BATCH_PATH_ONLY+=("$@")
}

fail() {
	echo "FAILED: $*"
	return 1
}

# wait_for FILE REGEX [SECONDS]: until a line of FILE matches.
wait_for() {
	local file=$1 re=$2 secs=${3:-10} i
	for ((i = 0; i < secs * 50; i++)); do
		grep -qE -- "$re" "$file" 2>/dev/null && return 0
		sleep 0.02
	done
	echo "timed out after ${secs}s waiting for /$re/ in $file:"
	sed 's/^/    | /' "$file" 2>/dev/null
	return 1
}

# wait_asleep PID: until no thread of process PID is running or runnable (10 s
# at most; 1 if one still is). On the batch path a read collects what sleeping
# threads hold; a running thread hands its buffer over itself, later
# (docs/probe-abi.md): a target that has just printed a line may not be asleep
# yet.
wait_asleep() {
	local i f line running
	for ((i = 0; i < 500; i++)); do
		running=
		for f in /proc/"$1"/task/*/stat; do
			read -r line <"$f" 2>/dev/null || continue
			line=${line##*) }
			[ "${line%% *}" = R ] && running=$f && break
		done
		[ -z "$running" ] && return 0
		sleep 0.02
	done
	echo "a thread of pid $1 still runs after 10 s: $running"
	return 1
}

# wait_ready [SECONDS]: until the target has said "ready" and sleeps.
wait_ready() {
	wait_for "$T/target.out" '^ready' "$@" && wait_asleep "$TARGET_PID"
}

# wait_gone PID: until process PID has ended (10 s at most); 1 if it has not.
wait_gone() {
	local i
	for ((i = 0; i < 500; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.02
	done
	return 1
}

# start_target CMD...: runs CMD in the background; sets TARGET_PID from its "pid N" line.
start_target() {
	# Emptied here, not only by the redirection: the wait below may look before
	# the background process has opened (and truncated) the file, and would then
	# take an earlier target's "pid N" line for this one's (on a loaded machine,
	# clients_sock_dir_is_never_changed attached to its first target again and
	# waited in vain for the second one's "ready").
	: >"$T/target.out"
	"$@" >"$T/target.out" 2>"$T/target.err" &
	BG_PIDS+=($!)
	wait_for "$T/target.out" '^([a-z-]+: )?pid [0-9]+' || { cat "$T/target.err"; return 1; }
	TARGET_PID=$(sed -nE 's/^([a-z-]+: )?pid ([0-9]+).*/\2/p' "$T/target.out" | head -1)
}

# nobody_scenario: copies the scenario and its libraries into $T/nobody, which every
# user may read, and sets NB_SCENARIO to it: a target run as another user loads its
# libraries by absolute path ($ORIGIN), which a checkout inside a 0700 directory hides.
nobody_scenario() {
	mkdir -p "$T/nobody" &&
		cp "$SCENARIO" "$(dirname "$SCENARIO")"/*.so "$T/nobody/" &&
		chmod -R a+rX "$T/nobody" && chmod 0711 "$T" || return 1
	NB_SCENARIO=$T/nobody/scenario
}

# attach PID... [-- EXTRA ARGS]: starts recorder-attach and waits until it has attached.
attach() {
	local args=() p n=0
	for p in "$@"; do
		args+=(-p "$p")
		n=$((n + 1))
	done
	$B/recorder-attach $RECORDER_ATTACH_FLAGS "${args[@]}" --dump-dir "$T/dumps" >"$T/attach.out" 2>"$T/attach.err" &
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

# attach_named NAME ARGS...: recorder-attach ARGS (with this run's flags and dump
# directory), its output in $T/NAME.{out,err}, its pid in NAME_PID; waits until it
# has attached. The output is emptied first: the wait must not take an earlier
# one's line for this one's (the background redirection may come after it looks).
attach_named() {
	local name=$1
	shift
	: >"$T/$name.out"
	$B/recorder-attach $RECORDER_ATTACH_FLAGS "$@" --dump-dir "$T/dumps" \
		>"$T/$name.out" 2>"$T/$name.err" &
	BG_PIDS+=($!)
	printf -v "${name}_PID" %s $!
	wait_for "$T/$name.out" '^attached to' 30 || { cat "$T/$name.err"; return 1; }
}

# stop_named NAME [SIGNAL]: stops recorder-attach NAME (attach_named; TERM by
# default: a background job ignores SIGINT) and waits until it is gone.
stop_named() {
	local pid=${1}_PID
	kill "-${2:-TERM}" "${!pid}" 2>/dev/null
	wait_gone "${!pid}" || fail "recorder-attach $1 did not stop" || return 1
	wait "${!pid}" 2>/dev/null
	return 0
}

# The recording key the scenario printed for NAME.
key_of() {
	awk -v n="$1" '$1 == "recording" && $2 == n {print $3; exit}' "$T/target.out"
}

rtail() {
	$B/recorder-tail -p "$TARGET_PID" "$@"
}

# expect WHAT EXPECTED ACTUAL: compares two texts, shows a diff when they differ.
expect() {
	if [ "$2" != "$3" ]; then
		echo "FAILED: $1"
		diff -u <(printf '%s\n' "$2") <(printf '%s\n' "$3") | sed '1,2d' | sed 's/^/    /'
		return 1
	fi
}

stop_target() {
	kill -TERM "$TARGET_PID" 2>/dev/null
	wait "$TARGET_PID" 2>/dev/null
	return 0
}

cleanup() {
	local p i
	# TERM first: recorder-attach then detaches in the background instead of
	# making its own exit wait for every uprobe to go.
	for p in "${BG_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for ((i = 0; i < 100; i++)); do
		local alive=0
		for p in "${BG_PIDS[@]}"; do
			kill -0 "$p" 2>/dev/null && alive=1
		done
		[ $alive -eq 0 ] && break
		sleep 0.02
	done
	for p in "${BG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$T"
}

# e2e_run TEST_FUNCTION: runs one test in this (sub)shell with its own temp dir.
e2e_run() {
	T=$(mktemp -d /tmp/recorder-e2e.XXXXXX)
	BG_PIDS=()
	trap cleanup EXIT
	set -o pipefail
	"$1"
}
