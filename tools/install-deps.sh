#!/bin/sh
# SPDX-License-Identifier: MIT
# Install, with apt-get, every Debian package recorder needs to build, test, demo and
# benchmark. Only what is missing is installed; a second run does nothing.
set -eu

# libclang-rt-14-dev: the ASan, UBSan and libFuzzer runtimes of clang 14 (Debian 12's clang)
# for make test's sanitized build and fuzzers; llvm gives llvm-symbolizer for their reports.
# scdoc turns docs/man/*.scd into the man pages; man-db (man -l) checks them in make test.
# chromium: the headless browser that renders a --format chrome trace in make test.
PKGS="make gcc g++ clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libcmocka-dev
pkg-config bpftrace binutils jq util-linux python3 systemtap-sdt-dev procps
libclang-rt-14-dev clang-format scdoc man-db chromium
librust-tracing-dev librust-tracing-core-dev librust-tracing-subscriber-dev"
# librust-*: the crates rust/recorder-tracing builds against, offline, from
# /usr/share/cargo/registry (rust/.cargo/config.toml); tracing-subscriber's
# package carries every feature (registry, fmt, std). Debian's cargo and rustc
# (1.63) only where the machine has no cargo (a rustup toolchain will do).
command -v cargo >/dev/null 2>&1 || PKGS="$PKGS cargo rustc"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
# node and npm: the npm packages of the tests (tools/install-npm.sh: speedscope for
# the browser test, @opentelemetry/otlp-transformer for the OTLP schema check); a node
# that came with its own npm (not Debian's) will do.
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"

# tools/install-npm.sh: the npm packages of the tests (build/npm), after the apt ones.
[ -z "$missing" ] && exec "$(dirname "$0")/install-npm.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing; run as root (or with sudo) to install them" >&2
	exit 1
fi

echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || { echo "install-deps: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
	echo "install-deps: apt-get install failed for:$missing" >&2
	exit 1
}
exec "$(dirname "$0")/install-npm.sh"
