#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the npm packages the tests use into build/npm (or $OTLP_NPM_DIR), each
# pinned and saved in its package.json (so that installing one never prunes another):
#  - @opentelemetry/otlp-transformer, whose generated OTLP message types check our
#    OTLP/JSON (tests/otlp/schema-check.js);
#  - speedscope, the trace viewer the browser test opens in Chromium
#    (tests/chrome/browser.sh).
# A second run with both in place does nothing. Needs node and npm (tools/install-deps.sh).
set -eu

OTLP_TRANSFORMER=0.57.2
SPEEDSCOPE=1.22.2
dir=${OTLP_NPM_DIR:-$(dirname "$0")/../build/npm}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# The version of package $1 installed in $dir, or nothing.
have() {
	node -p "require('$dir/node_modules/$1/package.json').version" 2>/dev/null || true
}

want=""
[ "$(have @opentelemetry/otlp-transformer)" = "$OTLP_TRANSFORMER" ] ||
	want="$want @opentelemetry/otlp-transformer@$OTLP_TRANSFORMER"
[ "$(have speedscope)" = "$SPEEDSCOPE" ] || want="$want speedscope@$SPEEDSCOPE"
[ -z "$want" ] && exit 0

[ -f "$dir/package.json" ] || echo '{"name":"recorder-test-deps","private":true}' >"$dir/package.json"
echo "install-npm: installing$want into $dir"
# shellcheck disable=SC2086
npm install --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel=error $want >/dev/null || {
	echo "install-npm: npm install$want failed" >&2
	exit 1
}
