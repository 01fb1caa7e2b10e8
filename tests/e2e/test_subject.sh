# SPDX-License-Identifier: MIT
# --subject: the subject as written, or a glob; a filter that selects no
# recording is an error, live and on a black box.

# subjects_of ARGS...: the sorted subjects of recorder-tail --list --json ARGS.
subjects_of() {
	$B/recorder-tail "$@" --list --json | jq -r .subject | sort | tr '\n' ' '
}

test_subject_glob_exact_and_no_match() {
	local out rc dump
	# Twelve recordings: w[0] .. w[11].
	start_target $B/workload --wait-attach --recordings 12 --events 2 --cap 10 --subject w \
		--hold 30 || return 1
	attach "$TARGET_PID" || return 1
	wait_for "$T/attach.out" '^attached to' || return 1
	local i
	for ((i = 0; i < 250; i++)); do
		[ "$($B/recorder-tail -p "$TARGET_PID" --list --json 2>/dev/null | wc -l)" -ge 12 ] && break
		sleep 0.02
	done
	expect "a glob" "w[10] w[11] w[1] " "$(subjects_of -p "$TARGET_PID" --subject 'w\[1*')" ||
		return 1
	expect "brackets as written" "w[1] " "$(subjects_of -p "$TARGET_PID" --subject 'w[1]')" ||
		return 1
	expect "a glob, in the tail too" "w[10] w[11] w[1] " \
		"$($B/recorder-tail -p "$TARGET_PID" --json --subject 'w?1*' | jq -r .subject | sort -u |
			tr '\n' ' ')" || return 1
	out=$($B/recorder-tail -p "$TARGET_PID" --subject 'conn#6*' 2>&1)
	rc=$?
	expect "no match, live" "recorder-attach: no recording of pid $TARGET_PID matches --subject 'conn#6*'" \
		"$out" || return 1
	expect "its exit status" 1 "$rc" || return 1
	out=$($B/recorder-tail -p "$TARGET_PID" --recording 0x1 --list 2>&1)
	expect "no recording by key" "recorder-attach: no recording of pid $TARGET_PID matches --recording 0x1" \
		"$out" || return 1
	# The same on its black box.
	$B/recorder-tail -p "$TARGET_PID" --dump >"$T/dump.out" || return 1
	dump=$(cat "$T/dump.out")
	expect "a glob, on the dump" "w[10] w[11] w[1] " "$(subjects_of --file "$dump" --subject 'w\[1*')" ||
		return 1
	out=$($B/recorder-tail --file "$dump" --subject 'nothing*' 2>&1)
	rc=$?
	expect "no match, on the dump" "recorder-tail: no recording in $dump matches --subject 'nothing*'" \
		"$out" || return 1
	expect "its exit status, on the dump" 1 "$rc"
}
