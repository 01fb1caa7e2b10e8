# SPDX-License-Identifier: MIT
# Probe sites must not corrupt the red zone of leaf functions. The kernel's
# optimized uprobe (a 5-byte nop turned into a call) would; recorder's sites are
# never optimized. The negative control shows the test can fail: a bare
# 5-byte-nop site, attached with bpftrace, is corrupted on this kernel.

REDZONE=$B/tests/targets/redzone
REDZONE_N=100000

test_red_zone_control_bare_nop5_is_corrupted() {
	start_target $REDZONE bare $REDZONE_N || return 1
	bpftrace -e "usdt:$REDZONE:redzone_test:bare { @hits = count(); }" \
		>"$T/bpftrace.out" 2>&1 &
	BG_PIDS+=($!)
	# bpftrace says "Attaching" before it has; the kernel's list of uprobes tells.
	local i
	for ((i = 0; i < 1000; i++)); do
		bpftool perf list 2>/dev/null | grep -q "uprobe.*redzone" && break
		sleep 0.02
	done
	bpftool perf list 2>/dev/null | grep -q "uprobe.*redzone" ||
		fail "bpftrace did not attach within 20 s: $(cat "$T/bpftrace.out")" || return 1
	kill -USR1 "$TARGET_PID"
	wait_for "$T/target.out" '^corrupted' 60 || return 1
	local k
	k=$(awk '/^corrupted/{print $2}' "$T/target.out")
	# Every hit after the first (which traps through int3) runs the optimized call.
	[ "$k" -gt $((REDZONE_N / 2)) ] ||
		fail "the bare site was corrupted only $k times of $REDZONE_N: the hazard did not show, so the recorder test below proves nothing ($(cat "$T/target.err"))"
}

test_red_zone_recorder_sites_are_safe() {
	start_target $REDZONE recorder $REDZONE_N || return 1
	# The probe site itself, on both paths: on the batch path an event is a
	# write to the thread's buffer and the site runs in a call (the flush),
	# which the compiler already keeps clear of the red zone; the target's
	# hand-filled red zone only survives code that makes no call.
	RECORDER_ATTACH_FLAGS=--per-event attach "$TARGET_PID" || return 1
	kill -USR1 "$TARGET_PID"
	wait_for "$T/target.out" '^corrupted' 60 || return 1
	expect "no corruption with recorder sites attached" "corrupted 0 of $REDZONE_N" \
		"$(grep '^corrupted' "$T/target.out")" || return 1
	# Never optimized: no trampoline, so nothing pushes below %rsp, and no call
	# into a page that a forked child would not have (tests/e2e/test_fork.sh).
	grep -q 'trampoline not mapped' "$T/target.err" ||
		fail "the kernel optimized a recorder site: $(cat "$T/target.err")"
}
