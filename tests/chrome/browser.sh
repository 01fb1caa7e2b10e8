#!/bin/bash
# SPDX-License-Identifier: MIT
# Opens Chrome traces in a real trace viewer in a real browser: speedscope (npm)
# served from 127.0.0.1, in headless Chromium (Debian), one screenshot a trace,
# checked by tests/chrome/check_screenshot.py (slices drawn, or none).
#   tests/chrome/browser.sh --drawn TRACE [--none TRACE] [--wide TRACE]...
# --drawn: the viewer must draw the trace's slices; --none: it must not (an empty
# or broken trace: this proves the check can fail); --wide: drawn, and one slice
# spans most of the time shown (the hung span a snapshot was taken for, open for
# a second beside a request of a few ms: drawn up to the snapshot's time). Prints "PASS browser: ..." or
# "FAIL browser: ..." a trace; exits 1 if one failed. speedscope is installed
# with npm into build/npm by tools/install-npm.sh (make test runs it), or here if
# it is missing, saved there so that installing another package keeps it.
# speedscope draws B/E slices, not instants: a trace of events only shows nothing.
set -u
cd "$(dirname "$0")/../.."
SPEEDSCOPE_VERSION=1.22.2
NPM_DIR=build/npm
OUT=build/browser
failed=0

die() {
	echo "FAIL browser: $*"
	exit 1
}

command -v chromium >/dev/null || die "chromium is not installed (tools/install-deps.sh installs it)"
command -v npm >/dev/null || die "npm is not installed (tools/install-deps.sh installs it)"
release=$NPM_DIR/node_modules/speedscope/dist/release
if ! grep -qs "\"version\": \"$SPEEDSCOPE_VERSION\"" "$NPM_DIR/node_modules/speedscope/package.json"; then
	mkdir -p "$NPM_DIR"
	[ -f "$NPM_DIR/package.json" ] || echo '{"name":"recorder-test-deps","private":true}' >"$NPM_DIR/package.json"
	npm install --prefix "$NPM_DIR" --no-audit --no-fund --ignore-scripts --loglevel=error \
		"speedscope@$SPEEDSCOPE_VERSION" >"$NPM_DIR/install.log" 2>&1 ||
		{ cat "$NPM_DIR/install.log"; die "npm install speedscope@$SPEEDSCOPE_VERSION failed"; }
fi
[ -f "$release/index.html" ] || die "no $release/index.html after npm install"

rm -rf "$OUT"
mkdir -p "$OUT/site" "$OUT/profile"
cp -r "$release"/. "$OUT/site/"
# speedscope's page, with alert() (how it reports a trace it cannot import)
# writing into the page: a headless browser would wait on the dialog forever.
sed 's|<head>|<head><script>window.alert = function (m) { document.title = "alert: " + m; };</script>|' \
	"$release/index.html" >"$OUT/site/view.html"

python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$OUT/site" >"$OUT/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
port=
for _ in $(seq 100); do
	port=$(sed -nE 's/^Serving HTTP on [0-9.]+ port ([0-9]+).*/\1/p' "$OUT/server.log")
	[ -n "$port" ] && break
	sleep 0.05
done
[ -n "$port" ] || { cat "$OUT/server.log"; die "python3 -m http.server did not start"; }

n=0
while [ $# -ge 2 ]; do
	want=$1 trace=$2
	shift 2
	n=$((n + 1))
	name=$(basename "$trace" .json)
	cp "$trace" "$OUT/site/trace-$n.json" || die "cannot read $trace"
	png=$OUT/$n-$name.png
	timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$OUT/profile/$n" --window-size=1200,800 --virtual-time-budget=10000 \
		--screenshot="$png" "http://127.0.0.1:$port/view.html#profileURL=trace-$n.json" \
		>"$OUT/$n-chromium.log" 2>&1
	if [ ! -s "$png" ]; then
		sed 's/^/    | /' "$OUT/$n-chromium.log" | tail -20
		echo "FAIL browser: $trace: chromium wrote no screenshot"
		failed=$((failed + 1))
		continue
	fi
	wide=()
	[ "$want" = --wide ] && wide=(--wide 50)
	out=$(tests/chrome/check_screenshot.py "$png" "${wide[@]}")
	rc=$?
	echo "    $out"
	case "$want:$rc" in
	--drawn:0) echo "PASS browser: speedscope draws the slices of $trace" ;;
	--wide:0) echo "PASS browser: speedscope draws a slice across the time of $trace" ;;
	--none:1) echo "PASS browser: the check sees no slices for $trace" ;;
	*)
		echo "FAIL browser: $trace: expected ${want#--} (screenshot: $png)"
		failed=$((failed + 1))
		;;
	esac
done
[ $n -gt 0 ] || die "no trace given"
[ $failed -eq 0 ]
