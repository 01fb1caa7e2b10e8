#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that the README's excerpts are their files' code, line for line.

An excerpt is a fenced code block right after a line
"<!-- excerpt of PATH: ... -->"; its lines must appear in PATH (relative to
the repository), in order and one after the other. Prints one line per
excerpt that is not there, naming its README line, and exits 1; exits 1 too
if the README has no excerpt at all (a marker lost in an edit).

    tests/readme_excerpts.py [README]
"""
import re
import sys

MARK = re.compile(r"^<!-- excerpt of (\S+): .*-->$")


def excerpts(lines):
    """(README line number, path, code lines) of each marked block."""
    for i, line in enumerate(lines):
        m = MARK.match(line)
        if not m:
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            yield i + 1, m.group(1), None
            continue
        end = i + 2
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        yield i + 1, m.group(1), lines[i + 2:end]


def main():
    readme = sys.argv[1] if len(sys.argv) > 1 else "README.md"
    with open(readme) as f:
        lines = f.read().split("\n")
    bad = found = 0
    for line_no, path, code in excerpts(lines):
        found += 1
        if code is None:
            print("%s:%d: the excerpt mark is not followed by a code block" % (readme, line_no))
            bad += 1
            continue
        with open(path) as f:
            src = f.read().split("\n")
        n = len(code)
        if not any(src[i:i + n] == code for i in range(len(src) - n + 1)):
            print("%s:%d: this excerpt of %s is not its code (%d lines from: %s)"
                  % (readme, line_no, path, n, code[0] if code else ""))
            bad += 1
    if not found:
        print("%s: no excerpt marks" % readme)
        return 1
    print("%d excerpts, %d not their code" % (found, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
