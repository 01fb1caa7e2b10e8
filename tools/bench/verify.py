#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""verify.py: what tools/bench/run.sh asks the recorder after a measurement.

A configuration's number counts only if the recorder did the work it was timed
on. Each subcommand prints one JSON object on stdout: the counts it read, and
"failed" with the reason when the check did not hold (exit status 1; 2 on bad
usage). A query that fails is a failure, never a zero.

  attached    a bench process held after its timed loop (bench --hold): its one
              recording "bench" must have seen exactly the events the loop ran,
              kept + dropped = seen, nothing dropped or invalid, every BPF counter
              and the malformed/orphan counts 0; in span mode the thread's
              innermost span must be the loop's span, entered once more by --hold.
  throughput  a workload that wrote its --report: per recording, seen = emitted
              and seen = kept + dropped; prints the sums, the achieved and
              delivered rates and the recorder's client counters.
  idle        holds N connections to a control socket that never send a byte,
              reconnecting any the recorder closes, until SIGTERM; prints
              "idle: connected N" once all are open, and its tallies at the end.
  clients     waits until the recorder serves at least N clients at once.
              throughput with --triggers N (the incident trigger runs): also that
              recorder-attach holds N rules; with --fire never, that none fired
              and no snapshot file was written; with --fire every, that each rule
              fired on every event kept, wrote its snapshots without a failure,
              and that the dump directory holds exactly the snapshots counted
              saved, no more than the limiter allows (--trigger-cap per hour,
              one per signature per --trigger-cooldown, at most --sig-cap a
              signature: issue 35).
  watch       prints "watch: ready", then one JSON line per file that appears in
              a directory (renamed into it, or closed after writing): its name
              and the CLOCK_REALTIME ns at which this process saw it (inotify).
  trigger-latency
              one snapshot announced on recorder-attach's stderr, for the rule's
              one firing: the time from its event (the event's own time, in the
              snapshot) to the snapshot on disk (seen by watch: an upper bound;
              its mtime too, stamped from the kernel's coarse clock, which lags).
  stats-on    turns the kernel's BPF run-time statistics on (BPF_ENABLE_STATS,
              what kernel.bpf_stats_enabled=1 does) for as long as it runs:
              prints "stats-on: ready", and ends at SIGTERM or SIGINT. The
              kernel counts such holders apart from the sysctl, and turns the
              statistics off when the last ends, however it ends: nothing to
              restore, and another program's use of the sysctl meanwhile
              neither stops them nor is undone.
  bpf-stats   the runs and run time (while stats-on runs) of the batch path's
              programs, on_batch and collect_batches, that one recorder-attach
              (--pid) holds, summed over its copies of each (`bpftool prog
              show -j`); with --since FILE (an earlier output), what they added
              since.
"""
import argparse
import calendar
import ctypes
import ctypes.util
import json
import os
import re
import signal
import struct
import socket
import subprocess
import sys
import time

# Every recorder-tail query is bounded: a recorder that does not answer is a
# failed measurement, not a hang of the harness.
QUERY_TIMEOUT_S = 10
# How long the counts may take to settle after the workload's last event (the
# recorder drains every 10 ms by default).
SETTLE_S = 10


def query(tail, pid, *what):
    """recorder-tail -p PID WHAT --json: (list of objects, None) or (None, why)."""
    cmd = [tail, "-p", str(pid), *what, "--json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=QUERY_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"`recorder-tail {' '.join(what)}` did not answer in {QUERY_TIMEOUT_S} s"
    if p.returncode != 0:
        return None, (f"`recorder-tail {' '.join(what)}` failed (status {p.returncode}): "
                      f"{p.stderr.strip()[:200]}")
    try:
        return [json.loads(l) for l in p.stdout.splitlines() if l.strip()], None
    except ValueError as e:
        return None, f"`recorder-tail {' '.join(what)}` printed bad JSON ({e}): {p.stdout[:200]}"


def poll(tail, pid, settled):
    """Lists until settled(rows) is true or SETTLE_S pass; (rows, why)."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        # With --spans: spans_lost, which ring_full counts too.
        rows, why = query(tail, pid, "--list", "--spans")
        if rows is not None and settled(rows):
            return rows, None
        if time.monotonic() >= deadline:
            return rows, why
        time.sleep(0.05)


def stats_problems(st):
    """The malformed, orphan and BPF counters that are not 0, as text."""
    bad = [f"{k} {st.get(k)}" for k in ("malformed", "orphans") if st.get(k)]
    bad += [f"{k} {v}" for k, v in sorted(st.get("counters", {}).items()) if v]
    return bad


def out(obj, failed=None):
    if failed:
        obj["failed"] = failed
    print(json.dumps(obj))
    return 1 if failed else 0


def cmd_attached(a):
    res = {"expected_events": a.events}

    def bench_rows(rows):
        return [r for r in rows if r.get("subject") == "bench"]

    def settled(rows):
        b = bench_rows(rows)
        return len(b) == 1 and b[0]["seen"] >= a.events and b[0]["kept"] + b[0]["dropped"] == b[0]["seen"]

    rows, why = poll(a.tail, a.pid, settled)
    if rows is None:
        return out(res, why)
    b = bench_rows(rows)
    if len(b) != 1:
        return out(res, f"{len(b)} recordings with subject 'bench' in `recorder-tail --list`, expected 1")
    b = b[0]
    for k in ("seen", "kept", "dropped", "invalid", "spans_lost"):
        res[k] = b.get(k)
    if b["seen"] != a.events:
        return out(res, f"the recorder counted {b['seen']:,} events, the loop ran {a.events:,}")
    if b["kept"] + b["dropped"] != b["seen"]:
        return out(res, f"kept {b['kept']:,} + dropped {b['dropped']:,} != seen {b['seen']:,} "
                        f"after {SETTLE_S} s")
    st, why = query(a.tail, a.pid, "--stats")
    full = (st[0] if st else {}).get("counters", {}).get("ring_full", "?") if st is not None else "?"
    # The batch path's timed loops (--drops-counted): a batch the full ring refused costs
    # the loop a second walk instead of the copy, no less, and is counted, exactly.
    counted = a.drops_counted and not b.get("invalid") and full == b["dropped"] + b.get("spans_lost", 0)
    if counted and b["dropped"]:
        res["ring_full"] = full
    if (b["dropped"] or b.get("invalid")) and not counted:
        res["ring_full"] = full
        return out(res, f"{b['dropped']:,} events dropped ({b.get('invalid', 0):,} invalid, ring_full {full}): "
                        "a dropped event does not take the whole path. A full ring means the consumer fell "
                        "behind the loop: a user would be told to give recorder-attach a CPU, or the ring room "
                        "for the burst (--ring-size; tools/bench/ANALYSIS.md, issue 37)")
    if st is None:
        return out(res, why)
    bad = [x for x in stats_problems(st[0] if st else {}) if not (counted and x.startswith("ring_full "))]
    if bad:
        return out(res, "recorder counters not 0: " + ", ".join(bad))
    if a.mode == "span":
        sk, why = query(a.tail, a.pid, "--stacks")
        if sk is None:
            return out(res, why)
        leaves = [s["stack"][0]["name"] for s in sk if s.get("stack")]
        res["span_leaves"] = leaves
        if "bench span" not in leaves:
            return out(res, "no thread's span stack ends in 'bench span' after the loop's span was "
                            f"entered once more (leaves: {leaves}): the span probes were not handled")
    return out(res)


def cmd_throughput(a):
    try:
        rep = json.load(open(a.report))
        mtime = os.stat(a.report).st_mtime_ns / 1e9
    except (OSError, ValueError) as e:
        return out({}, f"cannot read the workload's report {a.report}: {e}")
    emitted = {r["key"]: r["emitted"] for r in rep["recordings"]}
    res = {"emitted": sum(emitted.values()), "recordings": len(emitted)}

    def settled(rows):
        by = {r["recording"]: r for r in rows}
        return all(k in by and by[k]["seen"] >= n and by[k]["kept"] + by[k]["dropped"] == by[k]["seen"]
                   for k, n in emitted.items())

    rows, why = poll(a.tail, a.pid, settled)
    if rows is None:
        return out(res, why)
    by = {r["recording"]: r for r in rows}
    res["produced"] = sum(r["seen"] for r in rows)
    res["kept"] = sum(r["kept"] for r in rows)
    res["dropped"] = sum(r["dropped"] for r in rows)
    # The rates: from resuming the workload (--t-start) to the mtime of its report,
    # written once every thread has emitted its last event.
    wall = mtime - a.t_start
    res["wall_s"] = wall
    res["achieved_per_s"] = res["emitted"] / wall if wall > 0 else None
    res["events_per_s"] = res["kept"] / wall if wall > 0 else None
    res["rate_asked"] = a.rate_asked
    res["consumer_cpu_s"] = a.consumer_cpu_s
    res["consumer_cpu_pct"] = 100 * a.consumer_cpu_s / wall if wall > 0 else None
    st, why = query(a.tail, a.pid, "--stats")
    if st is not None and st:
        res["clients"] = st[0].get("clients")
        res["ring_full"] = st[0].get("counters", {}).get("ring_full")
    bad = []
    for k, n in emitted.items():
        r = by.get(k)
        if r is None:
            bad.append(f"recording {k} not listed")
        elif r["seen"] != n:
            bad.append(f"recording {k}: produced {r['seen']:,} != emitted {n:,}")
        elif r["kept"] + r["dropped"] != r["seen"]:
            bad.append(f"recording {k}: kept {r['kept']:,} + dropped {r['dropped']:,} != "
                       f"produced {r['seen']:,}")
    extra = set(by) - set(emitted)
    if extra:
        bad.append(f"{len(extra)} recordings listed that the workload did not report")
    if bad:
        return out(res, "; ".join(bad[:3]) + (f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""))
    if st is None:
        return out(res, why)
    if wall <= 0:
        return out(res, f"the report is older than the start of the run ({wall:.3f} s)")
    if a.triggers is not None:
        why = check_triggers(a, res)
        if why:
            return out(res, why)
    return out(res)


def check_triggers(a, res):
    """The incident rules of a throughput run (--triggers N): None, or why not."""
    def settled(rows):
        # Nothing pending: every firing is saved, failed, or counted in cooldown or capped.
        return all(r["fired"] == r["saved"] + r["failed"] + r["cooldown"] + r["capped"] for r in rows)

    deadline = time.monotonic() + SETTLE_S
    while True:
        rows, why = query(a.tail, a.pid, "--triggers")
        if rows is None:
            return why
        if settled(rows) or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    elapsed = time.time() - a.t_start
    # A rule's signatures (issue 35) are counted, not kept: 1,000 of them would fill raw.jsonl.
    res["triggers"] = [{k: v for k, v in r.items() if k != "signatures"} for r in rows]
    res["fired"] = sum(r["fired"] for r in rows)
    res["snapshots_saved"] = sum(r["saved"] for r in rows)
    if len(rows) != a.triggers:
        return f"recorder-tail --triggers lists {len(rows)} rules, recorder-attach was given {a.triggers}"
    if not settled(rows):
        return f"snapshots still pending {SETTLE_S} s after the run: {rows}"
    try:
        files = sorted(os.listdir(a.dump_dir))
    except OSError as e:
        return f"cannot list the dump directory {a.dump_dir}: {e}"
    res["snapshot_files"] = len(files)
    if a.fire == "never":
        fired = [f"'{r['rule']}' {r['fired']:,} times" for r in rows if r["fired"]]
        if fired:
            return "a rule that should never fire fired: " + ", ".join(fired)
        if files:
            return f"{len(files)} files in the dump directory, none expected: {files[:3]}"
        return None
    # --fire every: every event is an error, and every rule matches every error.
    bad = [f"'{r['rule']}' fired {r['fired']:,} times, the recorder kept {res['kept']:,} events"
           for r in rows if r["fired"] != res["kept"]]
    bad += [f"'{r['rule']}': {r['failed']} snapshots not written" for r in rows if r["failed"]]
    bad += [f"'{r['rule']}' saved no snapshot" for r in rows if not r["saved"]]
    if bad:
        return "; ".join(bad)
    # Issue 35: each signature (a rule and the callsite it fired on) has its own cooldown
    # and hourly cap (--sig-cap), the process's cap (--cap) over them all.
    per_sig = 1 + int(elapsed // a.cooldown_s) if a.cooldown_s > 0 else a.cap
    if a.sig_cap:
        per_sig = min(per_sig, a.sig_cap) if per_sig else a.sig_cap
    allowed = sum(r.get("nsignatures", 1) for r in rows) * per_sig
    if a.cap:
        allowed = min(allowed, a.cap)
    res["snapshots_allowed"] = allowed
    if len(files) > allowed:
        return (f"{len(files)} snapshot files written, the limiter allows {allowed} ({len(rows)} rules, "
                f"{sum(r.get('nsignatures', 1) for r in rows)} signatures, cooldown {a.cooldown_s:g} s, "
                f"cap {a.cap} an hour, {a.sig_cap} a signature, {elapsed:.1f} s since the start): {files[:5]}")
    if len(files) != res["snapshots_saved"]:
        return (f"{len(files)} files in the dump directory, but the rules count "
                f"{res['snapshots_saved']} snapshots saved: {files[:5]}")
    return None


IN_CLOSE_WRITE = 0x8
IN_MOVED_TO = 0x80


def cmd_watch(a):
    """Every file that appears in a.dir, with the time this process saw it."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0 or libc.inotify_add_watch(fd, a.dir.encode(), IN_CLOSE_WRITE | IN_MOVED_TO) < 0:
        print(f"watch: cannot watch {a.dir}: {os.strerror(ctypes.get_errno())}", flush=True)
        return 1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("watch: ready", flush=True)
    while True:
        buf = os.read(fd, 65536)
        t_ns = time.time_ns()
        off = 0
        while off + 16 <= len(buf):
            _, mask, _, n = struct.unpack_from("iIII", buf, off)
            name = buf[off + 16:off + 16 + n].split(b"\0", 1)[0].decode(errors="replace")
            off += 16 + n
            print(json.dumps({"name": name, "mask": mask, "t_ns": t_ns}), flush=True)


ANNOUNCE = re.compile(r"^recorder-attach: trigger '(.*)' fired in pid (\d+) \((.*)\): snapshot written to (.+)$")


def rfc3339_ns(s):
    """2026-12-04T23:39:03.812792Z: ns since the epoch."""
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?Z", s)
    if not m:
        raise ValueError(f"not an RFC 3339 UTC time: {s!r}")
    sec = calendar.timegm(tuple(int(x) for x in m.groups()[:6]))
    return sec * 10**9 + int((m.group(7) or "0").ljust(9, "0"))


def cmd_trigger_latency(a):
    res = {}
    # The one snapshot of the one firing, by recorder-attach's stderr line, not by its file name.
    lines = open(a.attach_log, errors="replace").read().splitlines()
    ann = [m for m in map(ANNOUNCE.match, lines) if m]
    if len(ann) != 1 or any("trigger '" in l and "fired" in l for l in lines if not ANNOUNCE.match(l)):
        return out(res, f"{len(ann)} snapshots announced, expected 1: "
                        + " | ".join(l for l in lines if "trigger" in l)[:300])
    rule, pid, subject, path = ann[0].groups()
    res.update(rule=rule, subject=subject, snapshot=path)
    if int(pid) != a.pid:
        return out(res, f"the snapshot announced is of pid {pid}, the target is {a.pid}")
    # When it was seen on disk (renamed into place once whole).
    seen = None
    deadline = time.monotonic() + QUERY_TIMEOUT_S
    while seen is None:
        for l in open(a.watch_log, errors="replace"):
            if l.startswith("{"):
                w = json.loads(l)
                if w["name"] == os.path.basename(path):
                    seen = w["t_ns"]
                    break
        if seen is None:
            if time.monotonic() >= deadline:
                return out(res, f"the watcher of {os.path.dirname(path)} did not see {os.path.basename(path)}")
            time.sleep(0.05)
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError as e:
        return out(res, f"the snapshot announced is not there: {e}")
    try:
        p = subprocess.run([a.tail, "--file", path, "--json"], capture_output=True, text=True,
                           timeout=QUERY_TIMEOUT_S)
        evs = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    except (subprocess.TimeoutExpired, ValueError) as e:
        return out(res, f"`recorder-tail --file {path}` failed: {e}")
    if p.returncode != 0:
        return out(res, f"`recorder-tail --file {path}` failed (status {p.returncode}): {p.stderr.strip()[:200]}")
    errs = [e for e in evs if e.get("recording") == a.recording and e.get("level") == "ERROR"]
    if len(errs) != 1:
        return out(res, f"the snapshot holds {len(errs)} ERROR events of recording {a.recording}, expected 1 "
                        f"({len(evs)} events in all)")
    ev_ns = rfc3339_ns(errs[0]["time"])
    res["event_time"] = errs[0]["time"]
    res["latency_ms"] = (seen - ev_ns) / 1e6
    res["mtime_latency_ms"] = (mtime - ev_ns) / 1e6
    tr, why = query(a.tail, a.pid, "--triggers")
    if tr is None:
        return out(res, why)
    res["triggers"] = tr
    if [(r["fired"], r["saved"]) for r in tr] != [(1, 1)]:
        return out(res, f"expected one rule, fired once and saved once: {tr}")
    if res["latency_ms"] < 0:
        return out(res, f"the snapshot was seen {-res['latency_ms']:.3f} ms before its event's time")
    return out(res)


# The batch path's programs: a flush (a full buffer, or a thread going to sleep with
# events pending) runs on_batch; recorder-attach's collection of sleeping threads'
# buffers (every --collect-ms) runs collect_batches once per thread it visits.
BATCH_PROGS = ("on_batch", "collect_batches")


def bpf_prog_stats(pid, names=BATCH_PROGS):
    """{name: {"runs", "run_time_ns", "progs"}} of the programs of those names that
    process pid holds (by the prog_id of its BPF fds, /proc/PID/fdinfo), summed;
    raises RuntimeError with why if they cannot be read."""
    ids = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fdinfo"):
            try:
                with open(f"/proc/{pid}/fdinfo/{fd}") as fo:
                    ids.update(int(l.split()[1]) for l in fo if l.startswith("prog_id:"))
            except (OSError, ValueError, IndexError):
                continue  # a file closed meanwhile
    except OSError as e:
        raise RuntimeError(f"cannot read the BPF fds of pid {pid}: {e}")
    try:
        p = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True,
                           timeout=QUERY_TIMEOUT_S)
        progs = json.loads(p.stdout) if p.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError) as e:
        raise RuntimeError(f"bpftool prog show -j: {e}")
    if progs is None:
        raise RuntimeError(f"bpftool prog show -j failed (status {p.returncode}): {p.stderr.strip()[:200]}")
    # bpftool leaves run_time_ns and run_cnt out while they are 0 (a program that has
    # not run while the statistics were on).
    res = {n: {"runs": 0, "run_time_ns": 0, "progs": 0} for n in names}
    for x in progs:
        if x.get("id") in ids and x.get("name") in res:
            r = res[x["name"]]
            r["runs"] += x.get("run_cnt", 0)
            r["run_time_ns"] += x.get("run_time_ns", 0)
            r["progs"] += 1
    missing = [n for n, r in res.items() if not r["progs"]]
    if missing:
        raise RuntimeError(f"pid {pid} holds no program named {', '.join(missing)} "
                           f"({len(ids)} BPF programs held)")
    return res


# bpf(2): its number, and the command and statistics type of BPF_ENABLE_STATS
# (<linux/bpf.h>: enum bpf_cmd, enum bpf_stats_type).
SYS_BPF = {"x86_64": 321, "aarch64": 280}
BPF_ENABLE_STATS = 32
BPF_STATS_RUN_TIME = 0


def cmd_stats_on(a):
    nr = SYS_BPF.get(os.uname().machine)
    if nr is None:
        print(f"stats-on: no bpf(2) number known for {os.uname().machine}", flush=True)
        return 1
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(struct.pack("I", BPF_STATS_RUN_TIME), 8)  # union bpf_attr.enable_stats
    fd = libc.syscall(ctypes.c_long(nr), ctypes.c_long(BPF_ENABLE_STATS), attr, ctypes.c_uint(8))
    if fd < 0:
        print(f"stats-on: BPF_ENABLE_STATS: {os.strerror(ctypes.get_errno())}", flush=True)
        return 1
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    print("stats-on: ready", flush=True)
    while not stop:
        signal.pause()
    os.close(fd)
    return 0


def cmd_bpf_stats(a):
    try:
        now = bpf_prog_stats(a.pid)
    except RuntimeError as e:
        return out({}, str(e))
    if a.since is None:
        return out(now)
    try:
        before = json.load(open(a.since))
        res = {}
        for n, r in now.items():
            res[f"{n}_runs"] = r["runs"] - before[n]["runs"]
            res[f"{n}_run_time_ns"] = r["run_time_ns"] - before[n]["run_time_ns"]
    except (OSError, ValueError, KeyError) as e:
        return out({}, f"cannot read the stats before ({a.since}): {e}")
    return out(res)


def cmd_clients(a):
    deadline = time.monotonic() + QUERY_TIMEOUT_S
    while True:
        st, why = query(a.tail, a.pid, "--stats")
        # This query is a client too.
        n = st[0].get("clients", {}).get("connected", 0) - 1 if st else -1
        if n >= a.n:
            return out({"connected": n})
        if time.monotonic() >= deadline:
            return out({"connected": n}, why or f"{n} clients connected after {QUERY_TIMEOUT_S} s, "
                                                f"expected {a.n}")
        time.sleep(0.05)


def cmd_idle(a):
    tally = {"connects": 0, "closed_by_recorder": 0, "connect_errors": 0}
    socks = []
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    def connect():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(a.sock)
        except OSError as e:
            s.close()
            tally["connect_errors"] += 1
            tally["last_error"] = str(e)
            return None
        tally["connects"] += 1
        s.setblocking(False)
        return s

    while len(socks) < a.n and not stop:
        s = connect()
        if s is None:
            time.sleep(0.05)
            if tally["connect_errors"] > 100:
                print(f"idle: cannot connect to {a.sock}: {tally['last_error']}", flush=True)
                return 1
            continue
        socks.append(s)
    print(f"idle: connected {len(socks)}", flush=True)
    # Never send anything; notice a close (EOF or error) and open a new one.
    while not stop:
        for i, s in enumerate(socks):
            if s is None:
                socks[i] = connect()
                continue
            try:
                if s.recv(4096) != b"":
                    continue  # a message before the close, say; EOF follows
            except BlockingIOError:
                continue
            except OSError:
                pass
            s.close()
            tally["closed_by_recorder"] += 1
            socks[i] = connect()
        time.sleep(0.05)
    print("idle: " + json.dumps(tally), flush=True)
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("attached")
    s.add_argument("--tail", required=True)
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--mode", required=True)
    s.add_argument("--events", type=int, required=True)
    s.add_argument("--drops-counted", action="store_true",
                   help="events the full ring refused pass if ring_full counts each (the batch path)")
    s = sub.add_parser("throughput")
    s.add_argument("--tail", required=True)
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--report", required=True)
    s.add_argument("--t-start", type=float, required=True)
    s.add_argument("--rate-asked", type=int, required=True)
    s.add_argument("--consumer-cpu-s", type=float, required=True)
    s.add_argument("--triggers", type=int, default=None)
    s.add_argument("--fire", choices=("never", "every"), default="never")
    s.add_argument("--dump-dir", default=None)
    s.add_argument("--cooldown-s", type=float, default=10)
    s.add_argument("--cap", type=int, default=60)
    s.add_argument("--sig-cap", type=int, default=6)
    s = sub.add_parser("watch")
    s.add_argument("--dir", required=True)
    s = sub.add_parser("trigger-latency")
    s.add_argument("--tail", required=True)
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--attach-log", required=True)
    s.add_argument("--watch-log", required=True)
    s.add_argument("--recording", required=True)
    s = sub.add_parser("clients")
    s.add_argument("--tail", required=True)
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--n", type=int, required=True)
    s = sub.add_parser("stats-on")
    s = sub.add_parser("bpf-stats")
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--since", default=None)
    s = sub.add_parser("idle")
    s.add_argument("--sock", required=True)
    s.add_argument("--n", type=int, required=True)
    a = p.parse_args()
    return {"attached": cmd_attached, "throughput": cmd_throughput, "clients": cmd_clients,
            "idle": cmd_idle, "watch": cmd_watch, "trigger-latency": cmd_trigger_latency,
            "bpf-stats": cmd_bpf_stats, "stats-on": cmd_stats_on}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
