#!/bin/bash
# SPDX-License-Identifier: MIT
# make demo: start the shipped workload, attach the recorder, and show what it
# holds: the recordings, their tails, the span stacks, a JSON line, the black box
# of a kill -9, and a trigger saving a failed request's story by itself. Ends by
# itself, writing the black box as a Chrome trace to build/demo-trace.json.
set -u
cd "$(dirname "$0")/.."
B=build

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: recorder-attach loads BPF programs and must run as root (try: sudo make demo)" >&2
	exit 1
fi

tmp=$(mktemp -d)
cleanup() {
	kill "${workload:-}" "${incident:-}" "${attach:-}" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

run() {
	echo
	echo "\$ $*"
	"$@"
}

echo "\$ $B/workload --threads 2 --recordings 2 --events 25 --cap 10 --depth 2 --fields 3 --rate 200 --wait-attach --hold 30 --report $tmp/report.json &"
$B/workload --threads 2 --recordings 2 --events 25 --cap 10 --depth 2 --fields 3 --rate 200 \
	--wait-attach --hold 30 --report "$tmp/report.json" >"$tmp/workload.out" &
workload=$!
for _ in $(seq 100); do grep -q 'pid' "$tmp/workload.out" && break; sleep 0.05; done
cat "$tmp/workload.out"

echo "\$ $B/recorder-attach -p $workload --dump-dir $tmp/dumps &"
$B/recorder-attach -p "$workload" --dump-dir "$tmp/dumps" >"$tmp/attach.out" 2>&1 &
attach=$!
for _ in $(seq 200); do
	grep -q '^attached' "$tmp/attach.out" && break
	if ! kill -0 "$attach" 2>/dev/null; then
		cat "$tmp/attach.out"
		exit 1
	fi
	sleep 0.05
done
cat "$tmp/attach.out"

# The workload writes its report after its last event, then holds inside its spans.
for _ in $(seq 200); do [ -s "$tmp/report.json" ] && break; sleep 0.05; done

run $B/recorder-tail -p "$workload" --list
run $B/recorder-tail -p "$workload" -n 3
run $B/recorder-tail -p "$workload" --stacks --subject 'actor[0]'
run $B/recorder-tail -p "$workload" -n 1 --json --subject 'actor[3]'

echo
echo "\$ kill -9 $workload    # the black box survives"
kill -KILL "$workload"
wait "$workload" 2>/dev/null
for _ in $(seq 100); do grep -q 'black box' "$tmp/attach.out" && break; sleep 0.05; done
grep -E 'exited|black box' "$tmp/attach.out"
dump=$(sed -n 's/^recorder-attach: black box of pid [0-9]* written to //p' "$tmp/attach.out")
[ -n "$dump" ] || { cat "$tmp/attach.out"; exit 1; }
run $B/recorder-tail --file "$dump" -n 2 --subject 'actor[1]'
run $B/recorder-tail --file "$dump" --stacks --subject 'actor[1]'

# An incident in a process that lives on: 400 requests, one recording each, freed at
# once; request 321 fails. The rule saves its story by itself, and only its story.
echo
echo "\$ $B/tests/targets/incident requests 400 321 200 &    # request 321 fails"
$B/tests/targets/incident requests 400 321 200 >"$tmp/incident.out" 2>&1 &
incident=$!
for _ in $(seq 100); do grep -q '^pid' "$tmp/incident.out" && break; sleep 0.05; done
echo "\$ $B/recorder-attach -p $incident --dump-dir $tmp/dumps --trigger 'level>=error' --trigger 'span:request>500ms' &"
$B/recorder-attach -p "$incident" --dump-dir "$tmp/dumps" --trigger 'level>=error' \
	--trigger 'span:request>500ms' >"$tmp/attach2.out" 2>&1 &
attach=$!
for _ in $(seq 400); do grep -q 'snapshot written' "$tmp/attach2.out" && break; sleep 0.05; done
grep 'trigger' "$tmp/attach2.out" || { cat "$tmp/attach2.out"; exit 1; }
snap=$(sed -n 's/^recorder-attach: trigger .* snapshot written to //p' "$tmp/attach2.out" | head -1)
for _ in $(seq 200); do grep -q '^done' "$tmp/incident.out" && break; sleep 0.05; done
run $B/recorder-tail -p "$incident" --triggers
run $B/recorder-tail --file "$snap" --list
run $B/recorder-tail --file "$snap"
kill "$incident" 2>/dev/null
wait "$incident" 2>/dev/null

# The black box as a timeline: one Chrome trace-event document.
echo
echo "\$ $B/recorder-tail --file $dump --format chrome > $B/demo-trace.json"
$B/recorder-tail --file "$dump" --format chrome >"$B/demo-trace.json" || exit 1
./tests/chrome/check_trace.py "$B/demo-trace.json" || exit 1
echo
echo "Wrote $(pwd)/$B/demo-trace.json. To see it: open https://ui.perfetto.dev, click"
echo "'Open trace file' and pick that file (or drag it onto the page); chrome://tracing and"
echo "speedscope open it too."
