#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a screenshot of speedscope showing a trace: slices were drawn.

  check_screenshot.py PNG [MIN_PERCENT] [--wide PERCENT]

speedscope fills each slice of its flame chart with a pastel colour, on white,
under a dark toolbar. A page that shows an error, its landing page (no trace:
grey text, blue links, a saturated blue button) or an empty profile has next
to none. So: the pastel pixels below the toolbar (each channel 150 or more,
the channels apart by 20 or more) must be at least MIN_PERCENT (default 2) of
that area. Prints the share and exits 1 below it. --wide PERCENT: one slice
spans most of the time shown, as the span a snapshot was taken for does (open
for a second, beside a 3 ms one): some row has slice colour over at least
PERCENT of the width.
Reads the PNG with the standard library only (8-bit RGB or RGBA, as Chromium
writes them).
"""
import struct
import sys
import zlib

TOOLBAR = 24  # rows of speedscope's toolbar, which has a coloured button


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("unsupported PNG (depth %d, colour type %d, interlace %d)"
                                 % (depth, ctype, interlace))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if width is None:
        raise ValueError("no IHDR")
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        filt = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if filt == 1:
                line[x] = (line[x] + a) & 255
            elif filt == 2:
                line[x] = (line[x] + b) & 255
            elif filt == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif filt == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[x] = (line[x] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main(argv):
    wide = None
    if len(argv) >= 3 and argv[-2] == "--wide":
        wide = float(argv[-1])
        argv = argv[:-2]
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    minimum = float(argv[2]) if len(argv) == 3 else 2.0
    try:
        width, height, bpp, rows = read_png(argv[1])
    except (OSError, ValueError, zlib.error) as e:
        print("check_screenshot: %s: %s" % (argv[1], e))
        return 1
    coloured = total = widest = 0
    for row in rows[TOOLBAR:]:
        in_row = 0
        for x in range(0, width * bpp, bpp * 2):  # every other pixel is enough
            r, g, b = row[x], row[x + 1], row[x + 2]
            total += 1
            if min(r, g, b) >= 150 and max(r, g, b) - min(r, g, b) >= 20:
                coloured += 1
                in_row += 1
        widest = max(widest, in_row)
    share = 100.0 * coloured / total if total else 0.0
    ok = share >= minimum
    print("check_screenshot: %s: %.1f%% of the chart area is slice colour (%s %.1f%%): %s"
          % (argv[1], share, ">=" if ok else "<", minimum,
             "slices drawn" if ok else "no slices drawn"))
    if wide is not None:
        row_share = 100.0 * widest / ((width + 1) // 2) if width else 0.0
        wide_ok = row_share >= wide
        print("check_screenshot: %s: the widest row is %.1f%% slice colour (%s %.1f%%): %s"
              % (argv[1], row_share, ">=" if wide_ok else "<", wide,
                 "a slice spans the time shown" if wide_ok else "no slice spans the time shown"))
        ok = ok and wide_ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
