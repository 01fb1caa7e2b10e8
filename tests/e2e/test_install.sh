# SPDX-License-Identifier: MIT
# make install and uninstall into a DESTDIR, a program built against the
# installed header with pkg-config, the installed CLIs on it, the man pages,
# and the systemd unit's command line.

# install_into DIR: make install with DESTDIR=DIR and PREFIX=/usr.
install_into() {
	make --no-print-directory -s install DESTDIR="$1" PREFIX=/usr >"$T/install.out" 2>&1 ||
		fail "make install failed: $(cat "$T/install.out")"
}

# make install and the systemd unit: not the event path.
batch_path_only install_destdir_pkg_config_man_and_uninstall install_service_exec_start_follows_the_binary_and_keeps_black_boxes

test_install_destdir_pkg_config_man_and_uninstall() {
	local root=$T/root out f page warn
	install_into "$root" || return 1
	for f in usr/bin/recorder-attach usr/bin/recorder-tail usr/include/recorder.h \
		usr/share/pkgconfig/recorder.pc usr/share/man/man1/recorder-tail.1 \
		usr/share/man/man7/recorder.7 usr/share/man/man8/recorder-attach.8 \
		usr/share/bash-completion/completions/recorder-attach \
		usr/share/bash-completion/completions/recorder-tail \
		usr/lib/systemd/system/recorder@.service; do
		[ -e "$root/$f" ] || fail "make install did not install /$f" || return 1
	done
	# A program that knows only the installed header, found by pkg-config.
	local cflags
	cflags=$(PKG_CONFIG_PATH=$root/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root \
		pkg-config --cflags recorder) || fail "pkg-config --cflags recorder failed" || return 1
	expect "the header's directory" "-I$root/usr/include" "$(echo $cflags)" || return 1
	cc -std=c11 -D_DEFAULT_SOURCE -O2 -Wall -Werror $cflags tests/install/hello.c \
		-o "$T/hello" 2>"$T/cc.err" || fail "build against the installed header: $(cat "$T/cc.err")" ||
		return 1
	start_target "$T/hello" || return 1
	"$root/usr/bin/recorder-attach" -p "$TARGET_PID" --dump-dir "$T/dumps" >"$T/attach.out" \
		2>"$T/attach.err" &
	BG_PIDS+=($!)
	wait_for "$T/attach.out" '^attached to' || { cat "$T/attach.err"; return 1; }
	local i
	for ((i = 0; i < 250; i++)); do
		out=$("$root/usr/bin/recorder-tail" -p "$TARGET_PID" -n 1 2>&1)
		[[ $out == *"hello from the installed header"* ]] && break
		sleep 0.02
	done
	[[ $out == *"<installed> hello from the installed header"* ]] ||
		fail "the installed recorder-tail did not show the event: $out" || return 1
	# Every page renders, without a warning from man or groff.
	for page in "$root"/usr/share/man/man*/*; do
		warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
		[ -z "$warn" ] || fail "man -l $page: $warn" || return 1
		[ "$(MANWIDTH=80 man -l "$page" 2>/dev/null | wc -l)" -gt 20 ] ||
			fail "man -l $page rendered almost nothing" || return 1
	done
	# The completion loads and completes an option.
	out=$(bash -c ". '$root/usr/share/bash-completion/completions/recorder-tail'
		PATH=$root/usr/bin:\$PATH; COMP_WORDS=(recorder-tail --fol); COMP_CWORD=1
		_recorder_tail; echo \"\${COMPREPLY[*]}\"")
	expect "bash completion of --fol" "--follow" "$out" || return 1
	make --no-print-directory -s uninstall DESTDIR="$root" PREFIX=/usr >/dev/null 2>&1 ||
		fail "make uninstall failed" || return 1
	expect "nothing left after make uninstall" "" "$(find "$root" -type f -o -type l)"
}

# The unit's ExecStart, as systemd would run it: its variables from the
# environment file, under its capability bounding set and no-new-privileges
# (systemd is not PID 1 here, so the line is run as written).
test_install_service_exec_start_follows_the_binary_and_keeps_black_boxes() {
	local root=$T/root unit line caps p
	install_into "$root" || return 1
	unit=$root/usr/lib/systemd/system/recorder@.service
	line=$(sed -n 's/^ExecStart=//p' "$unit")
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit")
	[ -n "$line" ] && [ -n "$caps" ] || fail "no ExecStart or CapabilityBoundingSet in $unit" ||
		return 1
	grep -qx 'NoNewPrivileges=yes' "$unit" && grep -qx 'ProtectSystem=strict' "$unit" &&
		grep -qx 'PrivateTmp=yes' "$unit" && grep -q '^ProtectHome=' "$unit" &&
		grep -qx 'StateDirectory=recorder' "$unit" ||
		fail "the unit lacks its hardening: $(cat "$unit")" || return 1
	mkdir -p "$T/etc"
	# What /etc/recorder/INSTANCE.env holds; the dumps and sockets go under $T.
	cat >"$T/etc/workload.env" <<-ENV
		RECORDER_BINARY=$PWD/$B/workload
		RECORDER_ARGS=--dump-dir $T/dumps --sock-dir $T/socks
	ENV
	local bset
	bset=$(echo "$caps" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
	(
		# KEY=VALUE lines, as systemd reads them: the value is the rest of the line.
		while IFS='=' read -r k v; do
			[ -n "$k" ] && export "$k=$v"
		done <"$T/etc/workload.env"
		# systemd's ${VAR} is one word, $VAR is split on spaces.
		line=${line//\$\{RECORDER_BINARY\}/$RECORDER_BINARY}
		line=${line//\$RECORDER_ARGS/$RECORDER_ARGS}
		# The program as installed under DESTDIR.
		line=$root$line
		# shellcheck disable=SC2086
		exec setpriv --no-new-privs --bounding-set "-all,$bset" $line
	) >"$T/attach.out" 2>"$T/attach.err" &
	ATTACH_PID=$!
	BG_PIDS+=($ATTACH_PID)
	wait_for "$T/attach.out" '^attached to .* in every process that runs it' ||
		{ cat "$T/attach.err"; return 1; }
	$B/workload --wait-attach --events 5 --cap 10 --subject svc --hold 30 >"$T/w.out" 2>&1 &
	BG_PIDS+=($!)
	wait_for "$T/w.out" '^workload: pid' || return 1
	p=$(awk '{print $3}' "$T/w.out")
	wait_for "$T/attach.out" "^recorder-attach: tracing pid $p " 10 ||
		{ cat "$T/attach.err"; return 1; }
	kill -9 "$p"
	wait_for "$T/attach.out" "black box.*recorder-$p-" 10 || { cat "$T/attach.err"; return 1; }
	local dump
	dump=$(ls "$T/dumps"/recorder-"$p"-*.json 2>/dev/null | head -1)
	[ -n "$dump" ] || fail "no black box of pid $p in $T/dumps" || return 1
	expect "the black box holds the workload's events" "4" \
		"$($B/recorder-tail --file "$dump" --json -n 1 | jq -r .seq)"
}
