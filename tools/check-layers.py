#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
The layout's rules (docs/ARCHITECTURE.md, "The folders"), checked from the code:
- each folder of user/ includes only from itself and from the folders below it
  in LAYERS (bpf/ and include/ are below them all);
- no source file in bpf/, user/ or include/ is over MAX_LINES lines, but
  include/recorder.h, which users read whole;
- no folder of user/ holds more than MAX_FILES files.
Prints each breach with its file and line; exits 1 if there is one.
"""
import os
import re
import sys

# Lowest first.
LAYERS = ["base", "wire", "model", "target", "usdt", "kernel", "output", "incidents", "dumps",
          "serving", "export", "session", "cli"]
MAX_LINES = 900
MAX_FILES = 12
LONG_ALLOWED = {"include/recorder.h"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    os.chdir(root)
    bad = []
    rank = {name: i for i, name in enumerate(LAYERS)}
    for folder in sorted(os.listdir("user")):
        path = os.path.join("user", folder)
        if not os.path.isdir(path):
            bad.append(f"{path}: a file of user/ outside a folder")
            continue
        if folder not in rank:
            bad.append(f"{path}: a folder that tools/check-layers.py's LAYERS does not place")
            continue
        files = sorted(f for f in os.listdir(path) if f.endswith((".c", ".h")))
        if len(files) > MAX_FILES:
            bad.append(f"{path}: {len(files)} files, more than {MAX_FILES}")
        for name in files:
            src = os.path.join(path, name)
            with open(src) as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or "/" not in m.group(1):
                        continue
                    to = m.group(1).split("/")[0]
                    if to in rank and rank[to] > rank[folder]:
                        bad.append(f"{src}:{n}: includes {m.group(1)}, from a folder above {folder}/")
    for top in ("bpf", "user", "include"):
        for dirpath, _, names in os.walk(top):
            for name in names:
                src = os.path.join(dirpath, name)
                if not name.endswith((".c", ".h")) or src in LONG_ALLOWED:
                    continue
                with open(src) as f:
                    lines = sum(1 for _ in f)
                if lines > MAX_LINES:
                    bad.append(f"{src}: {lines} lines, more than {MAX_LINES}")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
