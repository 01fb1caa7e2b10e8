#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a Chrome trace-event document written by recorder-tail --format chrome.

  check_trace.py TRACE [--jsonl FILE] [--events N] [--spans N] [--off-cpu-min N]
                       [--open-until TS]

It verifies that TRACE parses as {"traceEvents": [...]}; that each event has
the keys its phase needs (M: name, pid, tid, args.name; i: name, ts, pid, tid,
s "t", args; B: name, ts, pid, tid, args; E: ts, pid, tid); that per (pid, tid)
the times never go back and the B/E slices nest (an E closes the B open last,
not before it, and has its name); that every B has its E (viewers drop a B
left open: a span still open when the trace was read must end then, named
"NAME (open)", args.open true); that every pid has a
process_name and every (pid, tid) a thread_name; and that the counts equal the
tail's. --jsonl FILE is `recorder-tail --json` on the same input: its events
(one line each; "type":"span" lines are spans) must be the trace's events, the
same (recording, seq) pairs, and its span count the trace's. --events and
--spans give the counts by hand. --open-until TS (microseconds, as "ts" is):
there is a span still open, and each one's E is at TS (the snapshot's time). Off-CPU slices (--sched: B with
args.off_cpu, named "runq" or "blocked: CAUSE") are not spans: each must sit
in a span, hold nothing, and there must be at least --off-cpu-min of them.
Prints "check_trace: OK ..." or each problem,
and exits 1 on a problem.
"""
import decimal
import json
import sys


def fail(problems, msg):
    problems.append(msg)


def is_num(v):
    return isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool)


def check(doc, problems):
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail(problems, 'not an object with a "traceEvents" array')
        return None
    if "recorder_error" in doc or "recorder_not_shown" in doc:
        fail(problems, "the writer says something is missing: %r"
             % {k: doc[k] for k in doc if k.startswith("recorder_")})
    procs, threads, used = set(), set(), set()
    stacks, last_ts = {}, {}
    events, spans, off_cpu = set(), 0, 0
    open_ends = []
    for n, ev in enumerate(doc["traceEvents"]):
        where = "traceEvents[%d]" % n
        if not isinstance(ev, dict):
            fail(problems, "%s: not an object" % where)
            continue
        ph = ev.get("ph")
        need = {"M": ["name", "pid", "tid", "args"], "i": ["name", "ts", "pid", "tid", "s", "args"],
                "B": ["name", "ts", "pid", "tid", "args"], "E": ["ts", "pid", "tid"]}.get(ph)
        if need is None:
            fail(problems, "%s: unknown ph %r" % (where, ph))
            continue
        missing = [k for k in need if k not in ev]
        if missing:
            fail(problems, "%s (ph %s): missing %s" % (where, ph, ", ".join(missing)))
            continue
        if not isinstance(ev["pid"], int) or not isinstance(ev["tid"], int):
            fail(problems, "%s: pid and tid must be integers" % where)
            continue
        key = (ev["pid"], ev["tid"])
        if ph == "M":
            if not isinstance(ev["args"], dict) or not isinstance(ev["args"].get("name"), str):
                fail(problems, "%s: metadata without args.name" % where)
            elif ev["name"] == "process_name":
                procs.add(ev["pid"])
            elif ev["name"] == "thread_name":
                threads.add(key)
            continue
        if not is_num(ev["ts"]):
            fail(problems, "%s: ts is not a number" % where)
            continue
        if "args" in ev and not isinstance(ev["args"], dict):
            fail(problems, "%s: args is not an object" % where)
            continue
        used.add(key)
        if ev["ts"] < last_ts.get(key, ev["ts"]):
            fail(problems, "%s: ts %s goes back on pid %d tid %d" % (where, ev["ts"], *key))
        last_ts[key] = ev["ts"]
        stack = stacks.setdefault(key, [])
        args = ev.get("args", {})
        if stack and stack[-1][1].get("args", {}).get("off_cpu") and ph != "E":
            fail(problems, "%s: inside an off-CPU slice (traceEvents[%d])" % (where, stack[-1][0]))
        if ph == "i":
            if ev["s"] != "t":
                fail(problems, "%s: an instant not scoped to its thread (s %r)" % (where, ev["s"]))
            if args.get("enter") == "before the attach":
                spans += 1
            elif "seq" in args and "recording" in args:
                if (args["recording"], args["seq"]) in events:
                    fail(problems, "%s: event %s seq %s twice" % (where, args["recording"],
                                                                   args["seq"]))
                events.add((args["recording"], args["seq"]))
            else:
                fail(problems, "%s: an instant that is neither an event nor a span" % where)
        elif ph == "B" and args.get("off_cpu"):
            off_cpu += 1
            if not (ev["name"] == "runq" or ev["name"].startswith("blocked: ")):
                fail(problems, "%s: an off-CPU slice named %r" % (where, ev["name"]))
            if not stack or stack[-1][1].get("args", {}).get("off_cpu"):
                fail(problems, "%s: an off-CPU slice outside any span" % where)
            stack.append((n, ev))
        elif ph == "B":
            spans += 1
            stack.append((n, ev))
        elif ph == "E":
            if not stack:
                fail(problems, "%s: E with no B open on pid %d tid %d" % (where, *key))
            else:
                n_b, b = stack.pop()
                # Viewers such as speedscope pair an E with the B open last by name.
                if "name" in ev and ev["name"] != b["name"]:
                    fail(problems, "%s: E %r closes B %r (traceEvents[%d])"
                         % (where, ev["name"], b["name"], n_b))
                if b.get("args", {}).get("open"):
                    if not b["name"].endswith(" (open)"):
                        fail(problems, "traceEvents[%d]: open span %r not named \"NAME (open)\""
                             % (n_b, b["name"]))
                    open_ends.append((n_b, b["name"], ev["ts"]))
    for key, stack in stacks.items():
        for n, ev in stack:
            fail(problems, "traceEvents[%d]: B %r has no E (a viewer would not draw it)"
                 % (n, ev["name"]))
    for pid in sorted({k[0] for k in used} - procs):
        fail(problems, "pid %d has no process_name metadata" % pid)
    for key in sorted(used - threads):
        fail(problems, "pid %d tid %d has no thread_name metadata" % key)
    # Spans open whose enter is not known have no time: the document counts them.
    spans += int(doc.get("recorder_spans_open_untimed", 0))
    return events, spans, len(used), off_cpu, open_ends


def read_jsonl(path, problems):
    events, spans = set(), 0
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            o = json.loads(line)
            if o.get("type") == "span":
                spans += 1
            elif "seq" in o:
                events.add((o["recording"], o["seq"]))
    return events, spans


def main(argv):
    args, opts = [], {}
    i = 1
    while i < len(argv):
        if argv[i] in ("--jsonl", "--events", "--spans", "--off-cpu-min",
                       "--open-until") and i + 1 < len(argv):
            opts[argv[i]] = argv[i + 1]
            i += 2
        elif argv[i].startswith("-"):
            print(__doc__, file=sys.stderr)
            return 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    problems = []
    try:
        with open(args[0], "rb") as f:
            # Exactly: a double cannot tell nanoseconds apart at today's microseconds.
            doc = json.loads(f.read(), parse_float=decimal.Decimal)
    except (OSError, ValueError) as e:
        print("check_trace: %s does not parse: %s" % (args[0], e))
        return 1
    got = check(doc, problems)
    if got:
        events, spans, nthreads, off_cpu, open_ends = got
        if "--open-until" in opts:
            until = decimal.Decimal(opts["--open-until"])
            if not open_ends:
                fail(problems, "no span is open, one open until %s expected" % until)
            for n, name, ts in open_ends:
                if ts != until:
                    fail(problems, "traceEvents[%d]: open span %r ends at %s, not at %s"
                         % (n, name, ts, until))
        if "--jsonl" in opts:
            want_events, want_spans = read_jsonl(opts["--jsonl"], problems)
            if events != want_events:
                fail(problems, "events differ from %s: %d in the trace, %d in the tail; only "
                     "in the trace: %s; only in the tail: %s"
                     % (opts["--jsonl"], len(events), len(want_events),
                        sorted(events - want_events)[:5], sorted(want_events - events)[:5]))
            if spans != want_spans:
                fail(problems, "%d spans in the trace, %d in %s" % (spans, want_spans,
                                                                   opts["--jsonl"]))
        if "--off-cpu-min" in opts and off_cpu < int(opts["--off-cpu-min"]):
            fail(problems, "%d off-CPU slices in the trace, at least %s expected"
                 % (off_cpu, opts["--off-cpu-min"]))
        if "--events" in opts and len(events) != int(opts["--events"]):
            fail(problems, "%d events in the trace, %s expected" % (len(events), opts["--events"]))
        if "--spans" in opts and spans != int(opts["--spans"]):
            fail(problems, "%d spans in the trace, %s expected" % (spans, opts["--spans"]))
    if problems:
        for p in problems[:20]:
            print("check_trace: %s: %s" % (args[0], p))
        return 1
    print("check_trace: OK: %d events, %d spans, %d threads, %d off-CPU slices"
          % (len(events), spans, nthreads, off_cpu))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
