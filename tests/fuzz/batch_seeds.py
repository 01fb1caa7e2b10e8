#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes seed REC_RT_BATCH records (bpf/recorder_abi.h, struct rec_batch_rec) for
# the batch fuzzer into the directory given: numbered and skipped events, span
# records, string areas, a start past the first record, an empty batch, a
# recording's new, subject and free.
import os
import struct
import sys

RT_BATCH, RT_EVENT = 6, 1
BK_EVENT, BK_ENTER, BK_EXIT = 1, 2, 3
BK_REC_NEW, BK_REC_SPAN, BK_REC_FREE = 4, 5, 6
TAKEN = 1


def brec(kind, size, strbytes=0, nvals=0, pad=0, time=1000):
    return struct.pack("<HHHBBQ", kind, size, strbytes, nvals, pad, time)


def event(seq, vals, types, strs=b"", taken=True):
    area = strs + b"\0" * (-len(strs) % 8)
    size = 16 + 40 + 8 * len(vals) + len(area)
    return (brec(BK_EVENT, size, len(strs), len(vals), TAKEN if taken else 0) +
            struct.pack("<5Q", 0x401000, types, 77, seq, 0x5000) +
            struct.pack(f"<{len(vals)}Q", *vals) + area)


def enter():
    return brec(BK_ENTER, 48) + struct.pack("<4Q", 0x7000, 0x401100, 77, 0)


def leave():
    return brec(BK_EXIT, 32) + struct.pack("<2Q", 0x7000, 0)


def rec(kind, state=1, taken=True, subject=b"req[1]"):
    tail = subject.ljust(64, b"\0") if kind == BK_REC_SPAN else b""
    return (brec(kind, 80 + len(tail), pad=TAKEN if taken else 0) +
            struct.pack("<7QII", 77, 1, 16, 0x6000, 3, 0, 0, state, 0) + tail)


def batch(records, start=0, flags=1):
    data = b"".join(records)
    hdr = struct.pack("<HHIIIQ", RT_BATCH, 32 + len(data), 10, 11, flags, 123)
    return hdr + struct.pack("<II", start, len(data)) + data


def slot(off, n, st=0):
    return off | n << 16 | st << 32


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
i64, s, b = 2, 1, 5
seeds = {
    "empty": batch([]),
    "spans-only": batch([enter(), leave()]),
    "one-event": batch([enter(), event(0, [42], i64), leave()]),
    "strings": batch([event(0, [7, slot(0, 5), 1], i64 | s << 4 | b << 8, b"hello\0"),
                      event(1, [slot(0, 3), slot(4, 2)], s | s << 4, b"abc\0de\0")]),
    "skipped": batch([event(0, [1], i64, taken=False), event(0, [2], i64)]),
    "start": batch([event(0, [1], i64), event(1, [2], i64)], start=64),
    "eight-fields": batch([event(5, list(range(8)), 0x22222222)]),
    "monotonic": batch([event(0, [1], i64)], flags=0),
    "recording": batch([rec(BK_REC_NEW), rec(BK_REC_SPAN), enter(), event(0, [1], i64), leave(),
                        rec(BK_REC_FREE, state=2), rec(BK_REC_NEW, taken=False)]),
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
