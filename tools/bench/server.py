#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""server.py: one round of make bench's server keys (issue 25), on 127.0.0.1.

    server.py --build DIR --loadgen PATH [--pairs K] [--conns C] [--requests N]
              [--attach-flags FLAGS] [--bpf-stats]

The server is tests/targets/evloop.c (docs/guide/event-loop.md's example: one
recording per connection, entered around each wakeup, a span and an event per
request), built instrumented (DIR/tests/targets/evloop) and plain
(DIR/tests/targets/evloop-plain). The load is tools/bench/loadgen.c: C
keep-alive connections, N requests each, one at a time, every reply checked.

- attached vs detached: one instrumented server; K pairs of load segments,
  detached then attached (recorder-attach -p, default path, started and
  waited for before the segment, stopped after it), the order swapped every
  other pair, so that drift hits both alike.
- detached vs plain: an instrumented server nobody attaches to and a plain
  one, running side by side; K pairs of segments, alternating the same way.

Where the machine has two CPUs or more, the servers run on CPU 1 and loadgen on
CPU 0, each pinned. Left to the scheduler, a segment ran at another speed
when server and client shared a CPU than when they did not: unpinned, the
detached server ran 0.92 - 0.99x the plain one a round, pinned 1.00 - 1.03x
(tools/bench/ANALYSIS.md). recorder-attach is not pinned.

A segment's throughput is requests / its wall time (loadgen's own clock), its
server CPU the server's on-CPU time over the segment (/proc/PID/schedstat, ns)
divided by requests. An attached segment counts only if recorder-attach
attached and recorder-tail shows, over the connections' recordings (subject
127.0.0.1:*), once the server is idle again, one event per request (the
"get") and two more per connection (its "accepted" and "closed"), none
dropped, and no error counter. Prints one
JSON line: each pair's ratios and their medians, or {"failed": why}.

With --bpf-stats (run.sh holds the BPF statistics on for the run), what the
batch path's programs of the attached segments' recorder-attach ran during each
segment, from its start to its check (the server idle again, its last buffers
collected): on_batch runs (flushes) and collect_batches runs (one per thread a
collection visits), summed over the attached segments, and the requests those
segments served (flushes_per_request, collects_per_request). If they cannot be
read, bpf_stats_failed says why and the other keys stand.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree for the import below
from verify import bpf_prog_stats  # noqa: E402


def fail(why):
    print(json.dumps({"failed": why}))
    sys.exit(1)


def wait_line(proc, prefix, secs):
    """The first line of proc's stdout that starts with prefix (read line by line)."""
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                return None
            continue
        if line.startswith(prefix):
            return line.strip()
    return None


# The CPUs of the servers and of loadgen (None: not pinned), set in main().
PIN = {"server": None, "loadgen": None}


def pinned(who):
    """A preexec_fn that pins the child to PIN[who], or None."""
    cpus = PIN[who]
    return (lambda: os.sched_setaffinity(0, cpus)) if cpus else None


def start_server(path):
    p = subprocess.Popen([path, "3600"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         preexec_fn=pinned("server"))
    port = wait_line(p, "port ", 10)
    if not port or not wait_line(p, "ready", 10):
        p.kill()
        fail(f"{path} did not start")
    # Its "conn" lines are not read again: keep the pipe from filling.
    subprocess.Popen(["cat"], stdin=p.stdout, stdout=subprocess.DEVNULL)
    return p, int(port.split()[1])


def cpu_ns(pid):
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def segment(a, server, port):
    """One load segment on server: (requests/s, server CPU ns per request)."""
    c0 = cpu_ns(server.pid)
    p = subprocess.run([a.loadgen, str(port), str(a.conns), str(a.requests)], capture_output=True,
                       text=True, timeout=120, preexec_fn=pinned("loadgen"))
    c1 = cpu_ns(server.pid)
    if p.returncode != 0 or not p.stdout.startswith("requests "):
        fail(f"loadgen: {p.stderr.strip() or p.stdout.strip()}")
    _, n, _, secs = p.stdout.split()
    n, secs = int(n), float(secs)
    return n / secs, (c1 - c0) / n


def settle(pid):
    """Until the server has been idle for 50 ms (it has served its last closes): an
    attach then starts between requests, not in the middle of a connection's end."""
    last, deadline = cpu_ns(pid), time.monotonic() + 10
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = cpu_ns(pid)
        if now == last:
            return
        last = now


def attach(a, pid):
    settle(pid)
    r = subprocess.Popen([f"{a.build}/recorder-attach", "-p", str(pid), "--no-dump", "--keep-retired", "1000"]
                         + a.attach_flags.split(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not wait_line(r, f"attached to {pid}:", 30):
        r.kill()
        fail(f"recorder-attach did not attach: {r.stderr.read()[:300]}")
    return r


def check_attached(a, pid):
    """None, or why the attached segment's work was not all recorded."""
    p = subprocess.run([f"{a.build}/recorder-tail", "-p", str(pid), "--list", "--json"], capture_output=True,
                       text=True, timeout=60)
    if p.returncode:
        return f"recorder-tail --list: {p.stderr.strip()[:200]}"
    rows = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    conns = [r for r in rows if r.get("subject", "").startswith("127.0.0.1:")]
    seen = sum(r["seen"] for r in conns)
    dropped = sum(r["dropped"] for r in conns)
    want = a.conns * a.requests
    if len(conns) != a.conns:
        return f"{len(conns)} connection recordings, {a.conns} connections"
    if seen != want + 2 * a.conns or dropped:
        return f"the connections' recordings saw {seen} events ({dropped} dropped) for {want} requests"
    p = subprocess.run([f"{a.build}/recorder-tail", "-p", str(pid), "--stats", "--json"], capture_output=True,
                       text=True, timeout=60)
    try:
        st = json.loads(p.stdout.splitlines()[0])
    except (ValueError, IndexError):
        return f"recorder-tail --stats: {p.stderr.strip()[:200]}"
    # batch_deferred and batch_queued count hand-overs of a batch, not losses (docs/dump-format.md).
    bad = {k: v for k, v in st.get("counters", {}).items() if v and k not in ("batch_deferred", "batch_queued")}
    return f"error counters: {bad}" if bad else None


def stats_of(a, r, res):
    """With --bpf-stats, the batch programs' counts of recorder-attach r now; None
    (and res["bpf_stats_failed"]) if they cannot be read."""
    if not a.bpf_stats or "bpf_stats_failed" in res:
        return None
    try:
        return bpf_prog_stats(r.pid)
    except RuntimeError as e:
        res["bpf_stats_failed"] = str(e)
        return None


def add_stats(a, r, res, before):
    """Adds what the batch programs ran since before to res["bpf_stats"]."""
    after = stats_of(a, r, res)
    if before is None or after is None:
        return
    st = res.setdefault("bpf_stats", {})
    for n in after:
        for k in ("runs", "run_time_ns"):
            st[f"{n}_{k}"] = st.get(f"{n}_{k}", 0) + after[n][k] - before[n][k]


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--loadgen", required=True)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--conns", type=int, default=4)
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--attach-flags", default="")
    ap.add_argument("--bpf-stats", action="store_true")
    a = ap.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) >= 2:
        PIN["loadgen"], PIN["server"] = {cpus[0]}, {cpus[1]}
    inst, inst_port = start_server(f"{a.build}/tests/targets/evloop")
    plain, plain_port = start_server(f"{a.build}/tests/targets/evloop-plain")
    res = {"pairs": a.pairs, "conns": a.conns, "requests_per_conn": a.requests, "attached": [], "detached": [],
           "plain": [], "detached_side": [],
           "pinned": {k: sorted(v) for k, v in PIN.items() if v}}
    try:
        # Warm both up: the first connections and pages of each cost what later ones do not.
        segment(a, inst, inst_port)
        segment(a, plain, plain_port)
        for k in range(a.pairs):
            for which in (("detached", "attached") if k % 2 == 0 else ("attached", "detached")):
                if which == "attached":
                    r = attach(a, inst.pid)
                    before = stats_of(a, r, res)
                    res["attached"].append(segment(a, inst, inst_port))
                    settle(inst.pid)
                    why = check_attached(a, inst.pid)
                    # After the check: a client's read collects what sleeping threads hold.
                    add_stats(a, r, res, before)
                    stop(r)
                    if why:
                        fail(f"attached segment: {why}")
                else:
                    res["detached"].append(segment(a, inst, inst_port))
            for which in (("plain", "detached_side") if k % 2 == 0 else ("detached_side", "plain")):
                s, port = (plain, plain_port) if which == "plain" else (inst, inst_port)
                res[which].append(segment(a, s, port))
    finally:
        stop(inst)
        stop(plain)
    if a.bpf_stats and "bpf_stats_failed" not in res:
        st = res["bpf_stats"]
        # check_attached holds each attached segment to conns x requests requests.
        st["requests"] = a.pairs * a.conns * a.requests
        res["flushes_per_request"] = st["on_batch_runs"] / st["requests"]
        res["collects_per_request"] = st["collect_batches_runs"] / st["requests"]
        res["batch_bpf_ns_per_request"] = (st["on_batch_run_time_ns"]
                                           + st["collect_batches_run_time_ns"]) / st["requests"]
    att = [x[0] / y[0] for x, y in zip(res["attached"], res["detached"])]
    det = [x[0] / y[0] for x, y in zip(res["detached_side"], res["plain"])]
    res["attached_vs_detached"] = att
    res["detached_vs_plain"] = det
    res["attached_vs_detached_median"] = statistics.median(att)
    res["detached_vs_plain_median"] = statistics.median(det)
    for k in ("attached", "detached", "plain"):
        res[f"{k}_per_s"] = statistics.median(x[0] for x in res[k])
        res[f"{k}_cpu_ns_per_request"] = statistics.median(x[1] for x in res[k])
    print(json.dumps(res))


if __name__ == "__main__":
    main()
