#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the npm packages the tests use into build/npm (or $OTLP_NPM_DIR):
# @opentelemetry/otlp-transformer, whose generated OTLP message types check
# our OTLP/JSON (tests/otlp/schema-check.js). Pinned; a second run with the
# package in place does nothing. Needs node and npm (tools/install-deps.sh).
set -eu

OTLP_TRANSFORMER=0.57.2
dir=${OTLP_NPM_DIR:-$(dirname "$0")/../build/npm}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
have=$(node -p "require('$dir/node_modules/@opentelemetry/otlp-transformer/package.json').version" \
	2>/dev/null || true)
[ "$have" = "$OTLP_TRANSFORMER" ] && exit 0

[ -f "$dir/package.json" ] || echo '{"name":"recorder-test-deps","private":true}' >"$dir/package.json"
echo "install-npm: installing @opentelemetry/otlp-transformer@$OTLP_TRANSFORMER into $dir"
npm install --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel=error \
	"@opentelemetry/otlp-transformer@$OTLP_TRANSFORMER" >/dev/null || {
	echo "install-npm: npm install @opentelemetry/otlp-transformer@$OTLP_TRANSFORMER failed" >&2
	exit 1
}
