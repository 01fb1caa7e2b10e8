#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that the excerpts of the README and the guide are their files' code.

An excerpt is a fenced code block right after a line
"<!-- excerpt of PATH: ... -->"; its lines must appear in PATH (relative to
the repository's top folder, whatever folder the Markdown file is in), in
order and one after the other. A sample of recorder-tail text output is a
block after "<!-- output of PATH: ... -->": each of its event lines names
"FILE:LINE] <subject> MESSAGE", and line LINE of PATH must hold "MESSAGE"
(its event site). Prints one line per block that is not right, naming its
file and line, and exits 1; exits 1 too if the files have no excerpt at all
(a marker lost in an edit). Ends with the count of blocks checked.

    tests/readme_excerpts.py [FILE.md...]    (default: README.md)
"""
import os
import re
import sys

# PATH in a mark is relative to the repository: the folder above tests/.
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MARK = re.compile(r"^<!-- (excerpt|output) of (\S+): .*-->$")
# An event line of recorder-tail's text: "...] FILE:LINE] <subject> MESSAGE, fields".
EVENT = re.compile(r" ([^ :]+):(\d+)\] <[^>]*> ([^,]+)")


def excerpts(lines):
    """(README line number, kind, path, code lines) of each marked block."""
    for i, line in enumerate(lines):
        m = MARK.match(line)
        if not m:
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            yield i + 1, m.group(1), m.group(2), None
            continue
        end = i + 2
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        yield i + 1, m.group(1), m.group(2), lines[i + 2:end]


def output_errors(path, src, code):
    """What is wrong with a sample output of path's events: a list of texts."""
    errors = []
    events = 0
    for line in code:
        m = EVENT.search(line)
        if not m or not path.endswith("/" + m.group(1)):
            continue
        events += 1
        n, msg = int(m.group(2)), m.group(3)
        if n < 1 or n > len(src) or '"%s"' % msg not in src[n - 1]:
            errors.append("line %d of %s is not the site of \"%s\"" % (n, path, msg))
    if not events:
        errors.append("no event line of %s" % path)
    return errors


def check(readme):
    """(blocks found, blocks wrong) in the Markdown file readme; prints what is wrong."""
    with open(readme) as f:
        lines = f.read().split("\n")
    bad = found = 0
    for line_no, kind, path, code in excerpts(lines):
        found += 1
        if code is None:
            print("%s:%d: the %s mark is not followed by a code block" % (readme, line_no, kind))
            bad += 1
            continue
        with open(os.path.join(REPO, path)) as f:
            src = f.read().split("\n")
        if kind == "output":
            for e in output_errors(path, src, code):
                print("%s:%d: this output sample: %s" % (readme, line_no, e))
                bad += 1
            continue
        n = len(code)
        if not any(src[i:i + n] == code for i in range(len(src) - n + 1)):
            print("%s:%d: this excerpt of %s is not its code (%d lines from: %s)"
                  % (readme, line_no, path, n, code[0] if code else ""))
            bad += 1
    return found, bad


def main():
    readmes = sys.argv[1:] or ["README.md"]
    bad = found = 0
    for readme in readmes:
        f, b = check(readme)
        found += f
        bad += b
    if not found:
        print("%s: no excerpt marks" % ", ".join(readmes))
        return 1
    print("%d excerpts and samples in %d file%s, %d wrong"
          % (found, len(readmes), "" if len(readmes) == 1 else "s", bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
