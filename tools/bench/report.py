#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report.py: turns tools/bench/run.sh's raw.jsonl into results.json and BENCHMARKS.md.

Each round runs every configuration once, and each run ends in one row: its value, or
"failed" with why (run.sh checks that the work was done: see verify.py). A ratio is
computed per round, from two configurations of that round, and reported as the median
of the per-round ratios, with their min and max. A value (a ratio, a time, a count) is
in results.json only if every round has it; otherwise it is null, with the reason in
KEY_why, and its target is "no result (why)", never met. A configuration skipped
(a peer not installed, the fast path not built) is "no result (its reason)".
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def selftest():
    """report.py on a made-up run whose right answers are known: what the smoke runs
    to check that the report cannot show a pass that did not happen. Exit status 1
    and what went wrong, if anything did."""
    raw = []

    def ns(cfg, *vals):
        raw.extend({"round": r, "config": cfg, "ns": v} for r, v in enumerate(vals, 1) if v is not None)

    def failed(cfg, rnd, why):
        raw.append({"round": rnd, "config": cfg, "failed": why})

    ab = [{"round": r, "config": "detached_ab", "ratio": v, "baseline_ns": 100, "detached_ns": 100 * v,
           "ratio_p25": v, "ratio_p75": v, "pairs": 2, "chunk_iters": 10} for r, v in enumerate((1.0, 1.01, 1.05), 1)]
    raw.extend(ab)
    # Per-round ratios 1, 2, 0.5: median 1.0; the medians' ratio would be 200 / 100 = 2.0.
    ns("event", 100, 200, 300)
    ns("floor", 100, 100, 600)
    ns("nested", 100, 100, 100)
    ns("span", 100, None, 100)
    failed("span", 2, "the recorder counted 0 events, the loop ran 10")
    ns("bpftrace_count", 100, 100, 100)
    ns("bpftrace_sdt", 100, 100, 100)

    def tp(cfg, rnd, achieved, dropped, asked=1000000):
        raw.append({"round": rnd, "config": cfg, "emitted": 10, "produced": 10, "kept": 10 - dropped,
                    "dropped": dropped, "wall_s": 1, "achieved_per_s": achieved, "events_per_s": achieved,
                    "rate_asked": asked, "consumer_cpu_s": 0.1, "consumer_cpu_pct": 10})
    for r in (1, 2, 3):
        tp("throughput", r, 1.2e6, 0, 0)
        # The paced runs: one round at 0.97 M/s, short of 1 M/s by more than 2%.
        tp("throughput_1m", r, 0.97e6 if r == 2 else 1e6, 0)
        tp("throughput_1m_clients", r, 1e6, 5 if r == 1 else 0)
        raw.append({"round": r, "config": "loader_rss", "kib": 1024, "recordings": 1})
    raw.extend({"round": r, "config": "attach_sites", "seconds": 0.1, "sites": 5} for r in (1, 3))
    # The storm at 1 M/s: +60 and -10 extra drops; round 3's run with the rule wrote too
    # many snapshots. Flat out: +5 in each round, a figure with no target.
    tp("storm", 1, 1e6, 40)
    tp("storm_trigger", 1, 1e6, 100)
    tp("storm", 2, 1e6, 10)
    tp("storm_trigger", 2, 1e6, 0)
    tp("storm", 3, 1e6, 0)
    failed("storm_trigger", 3, "4 snapshot files written, the limiter allows 1")
    for r in (1, 2, 3):
        tp("storm_flat", r, 5e6, 10, 0)
        tp("storm_flat_trigger", r, 4e6, 15, 0)
    for r, (b, p) in enumerate(((10, 50), (30, 150), (20, 120)), 1):
        raw.append({"round": r, "config": "trigger_latency", "latency_ms": b, "mtime_latency_ms": b})
        raw.append({"round": r, "config": "trigger_latency_per_event", "latency_ms": p, "mtime_latency_ms": p})
    # rust-bench: its rounds' ratios 1.2, 1.05, 1.08 (median 1.08); the attached run of
    # round 3 failed its check, so neither attached key has a value.
    for r, v in enumerate((1.2, 1.05, 1.08), 1):
        raw.append({"round": r, "config": "rust_detached", "a_ns": 10 * v, "b_ns": 10, "ratio": v,
                    "ratio_p25": v, "ratio_p75": v, "pairs": 2, "chunk_iters": 10})
    for r, (e, sp) in enumerate(((0.3, 0.6), (0.4, 0.2)), 1):
        raw.append({"round": r, "config": "rust_attached", "event_a_ns": 30, "event_b_ns": 100, "event_ratio": e,
                    "span_a_ns": 20, "span_b_ns": 100, "span_ratio": sp, "events": 10, "spans": 12})
    failed("rust_attached", 3, "the recorder counted events seen 9; rust-bench sent 10 events")
    # Issue 37: a fresh ring's first touch, cold less warm: 20, 1 and 20 ms. The kvm-clock
    # event's BPF stats: 12 ns an event and 25 events a flush in round 1; round 3's could
    # not be read, so neither key has a value, and the loop's own ns stands.
    for r, (c, w) in enumerate(((30e6, 10e6), (12e6, 11e6), (30e6, 10e6)), 1):
        raw.append({"round": r, "config": "ring_touch", "ns": 80, "cold_ns": c, "warm_ns": w, "seen": 10})
    for r in (1, 2, 3):
        x = {"round": r, "config": "fast_event_kvmclock", "ns": 90, "seen": 100}
        if r < 3:
            x["bpf_stats"] = {"on_batch_runs": 4, "on_batch_run_time_ns": 1000, "collect_batches_runs": 2,
                              "collect_batches_run_time_ns": 200}
        else:
            x["bpf_stats_failed"] = "BPF statistics not turned on: stats-on: BPF_ENABLE_STATS: EPERM"
        raw.append(x)
    ran = [{"round": r["round"], "config": r["config"]} for r in raw] + [{"round": 2, "config": "attach_sites"}]
    skips = [{"config": c, "reason": "fast path not built yet "}
             for c in ("fast_event", "fast_span", "fast_throughput", "fast_throughput_rules")]
    skips.append({"config": "lttng", "reason": "LTTng unavailable: test"})
    with tempfile.TemporaryDirectory() as d:
        for name, lines in (("raw", raw), ("ran", ran), ("skipped", skips)):
            with open(f"{d}/{name}.jsonl", "w") as fo:
                fo.writelines(json.dumps(x) + "\n" for x in lines)
        open(f"{d}/notes", "w").close()
        subprocess.run([sys.executable, os.path.abspath(__file__), "--raw", f"{d}/raw.jsonl", "--ran", f"{d}/ran.jsonl",
                        "--skipped", f"{d}/skipped.jsonl", "--notes", f"{d}/notes", "--json", f"{d}/r.json",
                        "--md", f"{d}/r.md", "--rounds", "3"], check=True)
        r = json.load(open(f"{d}/r.json"))
    t = r["targets"]
    want = [
        ("event_vs_floor is the median of per-round ratios", r["event_vs_floor"], 1.0),
        ("its per-round range", r["event_vs_floor_range"], [0.5, 2.0]),
        ("detached_ratio", r["detached_ratio"], 1.01),
        ("a failed round leaves span_pair_ns without a value", r["span_pair_ns"], None),
        ("... and its target without a result", t["span_pair_vs_floor"]["verdict"], "no result"),
        ("a run without a row is a failure", [f["config"] for f in r["failures"] if f["round"] == 2],
         ["attach_sites", "span"]),
        ("... and its target has no result", t["attach_5000_s"]["verdict"], "no result"),
        ("a skipped configuration has no result", t["fast_event_vs_lttng"]["verdict"], "no result"),
        ("... with its reason", t["fast_event_vs_lttng"]["why"], "fast path not built yet"),
        ("event_vs_floor with every round is judged", t["event_vs_floor"]["verdict"], "met"),
        ("... lttng", r["event_vs_lttng"], None),
        ("0.97 M/s is not 1 M/s", t["paced_dropped"]["verdict"], "rate not reached"),
        ("... nor beside clients", t["clients_minus_paced_dropped"]["verdict"], "rate not reached"),
        ("clients minus no clients, per round", r["clients_minus_paced_dropped_per_round"],
         {"1": 5, "2": 0, "3": 0}),
        ("fast_throughput_vs_per_event without the fast path", t["fast_throughput_vs_per_event"]["verdict"],
         "no result"),
        ("rules / no rules without the fast path", t["trigger_rules_throughput_ratio"]["verdict"], "no result"),
        ("storm: a failed round leaves no value", r["trigger_storm_extra_drops"], None),
        ("... and its target without a result", t["trigger_storm_extra_drops"]["verdict"], "no result"),
        ("... with the reason", "limiter allows 1" in t["trigger_storm_extra_drops"]["why"], True),
        ("storm extra drops, per round", r["trigger_storm_extra_drops_per_round"], {"1": 60, "2": -10}),
        ("flat-out storm extra drops: a figure", r["trigger_storm_flat_out_extra_drops"], 5),
        ("... with no target", "trigger_storm_flat_out_extra_drops" in t, False),
        ("trigger latency, median of rounds", r["trigger_latency_ms"], 20),
        ("... met", t["trigger_latency_ms"]["verdict"], "met"),
        ("per-event trigger latency 120 ms", t["trigger_latency_per_event_ms"]["verdict"], "missed"),
        ("rust_detached_ratio: the median of the rounds' ratios", r["rust_detached_ratio"], 1.08),
        ("... met (≤ 1.10)", t["rust_detached_ratio"]["verdict"], "met"),
        ("rust_event_vs_fmt: a failed round leaves no value", r["rust_event_vs_fmt"], None),
        ("... and its target without a result", t["rust_event_vs_fmt"]["verdict"], "no result"),
        ("... with the reason", "seen 9" in t["rust_event_vs_fmt"]["why"], True),
        ("rust_span_pair_vs_fmt per round", r["rust_span_pair_vs_fmt_per_round"], {"1": 0.6, "2": 0.2}),
        ("ring_first_touch_ms: the median of the rounds' cold less warm", r["ring_first_touch_ms"], 20.0),
        ("... per round", r["ring_first_touch_ms_per_round"], {"1": 20.0, "2": 1.0, "3": 20.0}),
        ("batch_bpf_ns_per_event: a round without stats leaves no value", r["batch_bpf_ns_per_event_kvmclock"],
         None),
        ("... with the reason", "EPERM" in r["batch_bpf_ns_per_event_kvmclock_why"], True),
        ("... per round", r["batch_bpf_ns_per_event_kvmclock_per_round"], {"1": 12.0, "2": 12.0}),
        ("events_per_flush per round", r["events_per_flush_kvmclock_per_round"], {"1": 25.0, "2": 25.0}),
        ("... the loop's own ns stands", r["fast_event_ns_kvmclock"], 90),
        ("rust_event_vs_c_event without the fast path", t["rust_event_vs_c_event"]["verdict"], "no result"),
        ("no target met on a missing value", [k for k, v in t.items() if v["verdict"] == "met" and v["value"] is None],
         []),
    ]
    bad = [f"{what}: {got!r}, expected {exp!r}" for what, got, exp in want if got != exp]
    for b in bad:
        print("report.py --selftest: " + b, file=sys.stderr)
    return 1 if bad else 0


if sys.argv[1:] == ["--selftest"]:
    sys.exit(selftest())

p = argparse.ArgumentParser()
p.add_argument("--raw", required=True)
p.add_argument("--ran", required=True)
p.add_argument("--skipped", required=True)
p.add_argument("--json", required=True)
p.add_argument("--md", required=True)
p.add_argument("--rounds", type=int, required=True)
p.add_argument("--elapsed", type=float, default=0)
p.add_argument("--generated", default="", help="when the run ended (run.sh --report: the run's, not now)")
p.add_argument("--work-bytes", type=int, default=0)
p.add_argument("--iters", default="")
p.add_argument("--per-event-flags", default="")
p.add_argument("--fast-flags", default="")
p.add_argument("--timed-flags", default="")
p.add_argument("--load", default="")
p.add_argument("--machine", default="", help="recorder-attach --machine's JSON line, a file")
p.add_argument("--machine-kvmclock", default="", help="the same with kvm-clock selected (the *_kvmclock keys)")
p.add_argument("--ring-touch-events", type=int, default=0, help="the events of each ring_touch loop")
p.add_argument("--never-rules", default="")
p.add_argument("--latency-target", default="")
p.add_argument("--smoke", action="store_true")
p.add_argument("--notes", default=None)
a = p.parse_args()

ROUNDS = list(range(1, a.rounds + 1))
# The drop target's rate must be reached within this fraction of the asked rate.
RATE_TOLERANCE = 0.02

# ---------------- the rows ----------------
failures = []  # {round, config, why}: every configuration run of a round without a value
rows = []
for n, l in enumerate(open(a.raw), 1):
    if not l.strip():
        continue
    try:
        rows.append(json.loads(l))
    except ValueError:
        failures.append({"round": None, "config": "?", "why": f"harness: raw.jsonl line {n} is not JSON: {l[:200]}"})
skipped = {}
for l in open(a.skipped):
    if l.strip():
        s = json.loads(l)
        skipped[s["config"]] = s["reason"].strip()
ran = {(r["round"], r["config"]) for r in (json.loads(l) for l in open(a.ran) if l.strip())}

row = {}  # (round, config) -> its row; a second row for the same run is a harness error
for r in rows:
    k = (r["round"], r["config"])
    if k in row:
        row[k] = {"round": k[0], "config": k[1], "failed": "harness: two rows for one run"}
    else:
        row[k] = r
for (rnd, cfg) in sorted(ran):
    if (rnd, cfg) not in row:
        row[(rnd, cfg)] = {"round": rnd, "config": cfg, "failed": "harness: the run wrote no row"}
for (rnd, cfg), r in sorted(row.items()):
    if "failed" in r:
        failures.append({"round": rnd, "config": cfg, "why": r["failed"]})


def why_none(cfg, rnd):
    """Why configuration cfg has no value in round rnd."""
    if cfg in skipped:
        return skipped[cfg]
    r = row.get((rnd, cfg))
    if r is None:
        return f"{cfg} was not run"
    if "failed" in r:
        return f"round {rnd}: {cfg} failed: {r['failed']}"
    return f"round {rnd}: {cfg} has no value"


class Result:
    """A value per round, or why a round has none."""

    def __init__(self, per, missing, skip=None):
        self.per, self.missing, self.skip = per, missing, skip

    @property
    def complete(self):
        return self.skip is None and not self.missing and len(self.per) == len(ROUNDS)

    def vals(self):
        return [self.per[r] for r in sorted(self.per)]

    @property
    def median(self):
        return statistics.median(self.vals()) if self.per else None

    @property
    def lo(self):
        return min(self.vals()) if self.per else None

    @property
    def hi(self):
        return max(self.vals()) if self.per else None

    @property
    def why(self):
        """Why there is no (complete) value; None if complete."""
        if self.skip is not None:
            return self.skip
        if not self.missing:
            return None if self.per else "no rounds"
        reasons = [self.missing[r] for r in sorted(self.missing)]
        if len(ROUNDS) > 1:
            head = f"{len(self.missing)} of {len(ROUNDS)} rounds without a value: "
        else:
            head = ""
        more = f"; and {len(reasons) - 2} more" if len(reasons) > 2 else ""
        return head + "; ".join(reasons[:2]) + more


def per_round(cfgs, fn):
    """fn(row of cfgs[0], row of cfgs[1], ...) per round, where all have a value."""
    for c in cfgs:
        if c in skipped:
            return Result({}, {}, skipped[c])
    per, missing = {}, {}
    for rnd in ROUNDS:
        rs = [row.get((rnd, c)) for c in cfgs]
        bad = [c for c, r in zip(cfgs, rs) if r is None or "failed" in r]
        if bad:
            missing[rnd] = why_none(bad[0], rnd)
            continue
        v = fn(*rs)
        if v is None:
            missing[rnd] = f"round {rnd}: no value for {'/'.join(cfgs)}"
        else:
            per[rnd] = v
    return Result(per, missing)


def key_of(cfg, key):
    return per_round([cfg], lambda r: r.get(key))


def ratio_of(num, den, key="ns"):
    def f(n, d):
        return n[key] / d[key] if d.get(key) else None
    return per_round([num, den], f)


res = {"rounds": a.rounds, "smoke": a.smoke, "elapsed_s": round(a.elapsed, 1),
       "generated": a.generated or time.strftime("%Y-%m-%d %H:%M:%S %z"), "work_bytes": a.work_bytes,
       "iterations": a.iters, "per_event_flags": a.per_event_flags, "fast_flags": a.fast_flags,
       "timed_flags": a.timed_flags, "load_average_1min_start_end": a.load.split(),
       "trigger_never_rules": json.loads(a.never_rules) if a.never_rules.startswith("[") else a.never_rules,
       "trigger_latency_target": a.latency_target}
M = {}  # results key -> Result


def put(key, r, scale=1.0):
    """results.json: key (the median, only if every round has a value), its per-round
    min – max and values, and key_why when it is null."""
    M[key] = r
    sc = (lambda v: v * scale) if scale != 1.0 else (lambda v: v)
    res[key] = sc(r.median) if r.complete else None
    res[key + "_range"] = [sc(r.lo), sc(r.hi)] if r.per else None
    res[key + "_per_round"] = {str(k): sc(v) for k, v in sorted(r.per.items())}
    if not r.complete:
        res[key + "_why"] = r.why


NS = {  # config -> (results key, description)
    "event": ("event_ns", "REC_INFO, 3 fields (i64, str, bool), attached, per-event path, in a recording span"),
    "span": ("span_pair_ns", "span enter + exit pair, attached, per-event path"),
    "nested": ("nested_event_ns", "the same event, 4 spans deep under the recording span, per-event path"),
    "fast_event": ("fast_event_ns", "the same 3-field event, attached, batch (fast) path"),
    "fast_span": ("fast_span_pair_ns", "span enter + exit pair, attached, batch (fast) path"),
    "floor": ("floor_ns", "floor: bpftrace empty action `{}` on the same nop5 `recorder:event` site"),
    "bpftrace_count": ("bpftrace_count_ns", "bpftrace `@c = count()` on the same nop5 `recorder:event` site"),
    "bpftrace_sdt": ("bpftrace_sdt_ns", "bpftrace `@c = count()` on a sys/sdt.h `DTRACE_PROBE3` (1-byte nop)"),
    "lttng": ("lttng_ns", "LTTng-UST tracepoint (i64, string, int), userspace snapshot session"),
    "sched_pp_none": ("sched_pp_none_ns", "pipe ping-pong round trip (2 switches, one CPU), nothing attached"),
    "sched_pp_untraced": ("sched_pp_untraced_ns", "the same, `recorder-attach --sched` attached to a third process"),
    "sched_pp_traced": ("sched_pp_traced_ns", "the same, `recorder-attach --sched` attached to both ends (a span "
                        "a round trip on each)"),
}
# Issue 37: a few configurations again with kvm-clock as the clocksource (run.sh run_kvmclock).
NS_KVMCLOCK = {
    "event_kvmclock": ("event_ns_kvmclock", "the per-event path's 3-field event, kvm-clock"),
    "fast_event_kvmclock": ("fast_event_ns_kvmclock", "the batch path's 3-field event, kvm-clock"),
    "fast_span_kvmclock": ("fast_span_pair_ns_kvmclock", "the batch path's span enter + exit pair, kvm-clock"),
    "lttng_kvmclock": ("lttng_ns_kvmclock", "the LTTng-UST tracepoint, kvm-clock"),
}
NS.update(NS_KVMCLOCK)
put("baseline_ns", key_of("detached_ab", "baseline_ns"))
put("detached_ns", key_of("detached_ab", "detached_ns"))
for cfg, (key, _) in NS.items():
    put(key, key_of(cfg, "ns"))

RATIOS = {
    # The targets of issue 12.
    "detached_ratio": None,  # per round from bench detached_ab, below
    "fast_event_vs_lttng": ("fast_event", "lttng"),
    "fast_span_pair_vs_lttng": ("fast_span", "lttng"),
    "fast_event_vs_bpftrace_sdt": ("fast_event", "bpftrace_sdt"),
    "fast_event_vs_event": ("fast_event", "event"),
    # The per-event path.
    "event_vs_floor": ("event", "floor"),
    "event_vs_bpftrace_sdt": ("event", "bpftrace_sdt"),
    "event_vs_bpftrace_count": ("event", "bpftrace_count"),
    "span_pair_vs_floor": ("span", "floor"),
    "nested_event_vs_floor": ("nested", "floor"),
    "event_vs_lttng": ("event", "lttng"),
    "floor_vs_bpftrace_sdt": ("floor", "bpftrace_sdt"),
    # Kernel time per span (issue 26): the scheduler hooks' cost to context switches.
    "sched_untraced_switch_ratio": ("sched_pp_untraced", "sched_pp_none"),
    "sched_traced_switch_ratio": ("sched_pp_traced", "sched_pp_none"),
    # Issue 37: the attached Rust event (rust-bench, through the layer) over the C one, batch path.
    "rust_event_vs_c_event": ("rust_event", "fast_event"),
    # The same peers with kvm-clock as the clocksource.
    "fast_event_vs_lttng_kvmclock": ("fast_event_kvmclock", "lttng_kvmclock"),
    "fast_span_pair_vs_lttng_kvmclock": ("fast_span_kvmclock", "lttng_kvmclock"),
    "fast_event_kvmclock_vs_tsc": ("fast_event_kvmclock", "fast_event"),
}
for k, nd in RATIOS.items():
    if nd is None:
        put(k, key_of("detached_ab", "ratio"))
    elif k == "rust_event_vs_c_event":
        put(k, per_round(list(nd), lambda r, c: r["ns"] / c["ns"] if c.get("ns") else None))
    else:
        put(k, ratio_of(*nd))
ab = [r for r in rows if r["config"] == "detached_ab" and "failed" not in r]
if ab:
    # The spread of single pairs within a round: the medians of the rounds' quartiles.
    res["detached_pair_ratio_p25"] = statistics.median(r["ratio_p25"] for r in ab)
    res["detached_pair_ratio_p75"] = statistics.median(r["ratio_p75"] for r in ab)
    res["detached_ab_pairs"] = ab[0]["pairs"]
    res["detached_ab_chunk_iters"] = ab[0]["chunk_iters"]

# Throughput, flat out: the rows exist only where accounting was exact (verify.py).
for k in ("events_per_s", "consumer_cpu_pct", "consumer_cpu_s", "wall_s", "produced", "kept", "dropped",
          "emitted"):
    put("throughput_wall_s" if k == "wall_s" else k, key_of("throughput", k))
put("fast_events_per_s", key_of("fast_throughput", "events_per_s"))
put("fast_throughput_vs_per_event", ratio_of("fast_throughput", "throughput", "events_per_s"))

# The drop target at 1 M events/s (paced), and the same beside clients.
put("paced_events_per_s", key_of("throughput_1m", "achieved_per_s"))
put("paced_dropped", key_of("throughput_1m", "dropped"))
put("clients_events_per_s", key_of("throughput_1m_clients", "achieved_per_s"))
put("clients_dropped", key_of("throughput_1m_clients", "dropped"))
put("clients_minus_paced_dropped", per_round(["throughput_1m_clients", "throughput_1m"],
                                             lambda c, p: c["dropped"] - p["dropped"]))

# Incident triggers (issue 23): 4 rules that never fire, flat out on the batch path, over
# the same without rules; an error storm at 1 M events/s with a rule that fires on every
# event, minus the same without it (and the same flat out, a figure); from an error to
# its snapshot on disk, each event path.
put("fast_rules_events_per_s", key_of("fast_throughput_rules", "events_per_s"))
# Flat out, two producers and the consumer share 2 CPUs, and one pair's ratio swings by
# ±15 %: a round runs the pair RULE_PAIRS times, alternating, and its ratio is the median
# of its pairs'. The first pair is fast_throughput's own; a failed run fails the round.
RULE_PAIRS = [("fast_throughput_rules", "fast_throughput")] + [
    (f"fast_throughput_rules_p{k}", f"fast_throughput_p{k}") for k in (2, 3)]


def rules_ratio():
    if "fast_throughput_rules" in skipped:
        return Result({}, {}, skipped["fast_throughput_rules"])
    per, missing = {}, {}
    for rnd in ROUNDS:
        vals, why = [], None
        for k, (a, b) in enumerate(RULE_PAIRS):
            ra, rb = row.get((rnd, a)), row.get((rnd, b))
            if k and ra is None and rb is None:
                continue  # an extra pair this run did not make
            bad = [c for c, r in ((a, ra), (b, rb)) if r is None or "failed" in r or not r.get("events_per_s")]
            if bad:
                why = why_none(bad[0], rnd)
                break
            vals.append(ra["events_per_s"] / rb["events_per_s"])
        if why:
            missing[rnd] = why
        else:
            per[rnd] = statistics.median(vals)
            res.setdefault("trigger_rules_throughput_pairs", {})[str(rnd)] = vals
    return Result(per, missing)


put("trigger_rules_throughput_ratio", rules_ratio())
put("storm_dropped", key_of("storm", "dropped"))
put("storm_trigger_dropped", key_of("storm_trigger", "dropped"))
put("storm_events_per_s", key_of("storm", "events_per_s"))
put("storm_trigger_events_per_s", key_of("storm_trigger", "events_per_s"))
put("trigger_storm_extra_drops", per_round(["storm_trigger", "storm"], lambda t, n: t["dropped"] - n["dropped"]))
put("storm_flat_dropped", key_of("storm_flat", "dropped"))
put("storm_flat_trigger_dropped", key_of("storm_flat_trigger", "dropped"))
put("trigger_storm_flat_out_extra_drops", per_round(["storm_flat_trigger", "storm_flat"],
                                                    lambda t, n: t["dropped"] - n["dropped"]))
# Issue 35: events/s delivered with 1,000 signatures firing over the same without the rule.
put("trigger_signatures_throughput_ratio",
    per_round(["sig_throughput_rules", "sig_throughput"],
              lambda a, b: a["events_per_s"] / b["events_per_s"] if a.get("events_per_s") and b.get("events_per_s")
              else None))
put("trigger_latency_ms", key_of("trigger_latency", "latency_ms"))
put("trigger_latency_per_event_ms", key_of("trigger_latency_per_event", "latency_ms"))

# Rust programs (issue 27): rust-bench's pairs of subscribers, side by side in one
# process; a round's ratio is the median of its pairs' (a over b).
put("rust_detached_ratio", key_of("rust_detached", "ratio"))
put("rust_detached_ns", key_of("rust_detached", "a_ns"))
put("rust_registry_ns", key_of("rust_detached", "b_ns"))
# A span pair through the registry alone over fmt: the floor of rust_span_pair_vs_fmt.
put("rust_span_pair_registry_vs_fmt", key_of("rust_detached", "span_floor_ratio"))
put("rust_span_pair_registry_ns", key_of("rust_detached", "span_floor_a_ns"))
# The event through a layer that does nothing over the registry alone: the floor of rust_detached_ratio.
put("rust_noop_layer_ratio", key_of("rust_detached", "layer_floor_ratio"))
# The event through recorder's own subscriber (Recorder::subscriber()), detached, over the registry alone.
put("rust_own_detached_ratio", key_of("rust_detached", "own_detached_ratio"))
# A span pair through the registry with the layer, nothing attached, over the registry alone.
put("rust_span_pair_detached_ratio", key_of("rust_detached", "span_detached_ratio"))
for mode, key in (("event", "rust_event"), ("span", "rust_span_pair"), ("own_event", "rust_own_event"),
                  ("own_span", "rust_own_span_pair")):
    put(f"{key}_vs_fmt", key_of("rust_attached", f"{mode}_ratio"))
    put(f"{key}_ns", key_of("rust_attached", f"{mode}_a_ns"))
    put(f"{key}_fmt_ns", key_of("rust_attached", f"{mode}_b_ns"))

put("attach_5000_s", key_of("attach_sites", "seconds"))
# The attached timed loops' time beyond their steady state (bench_time.h): one-off costs.
put("fast_event_excess_ms", key_of("fast_event", "excess_ms"))
put("fast_span_excess_ms", key_of("fast_span", "excess_ms"))
# The server keys (issue 25): per round, the median of its pairs' throughput ratios, and
# the server's CPU per request in each mode.
put("server_attached_vs_detached", key_of("server", "attached_vs_detached_median"))
put("server_detached_vs_plain", key_of("server", "detached_vs_plain_median"))
for mode in ("attached", "detached", "plain"):
    put(f"server_{mode}_per_s", key_of("server", f"{mode}_per_s"))
    put(f"server_{mode}_cpu_ns_per_request", key_of("server", f"{mode}_cpu_ns_per_request"))


# Issue 37: the batch path's BPF time per event and events per flush, from bpf_stats
# during the timed fast_event loop (run.sh run_attached, BPF_STATS=1): on_batch runs once
# a flush, collect_batches once per thread each collection of sleeping threads visits.
def stats_key(cfg, fn):
    """fn(the row's bpf_stats, the row) per round; a round whose stats could not be read
    has no value, with why (the loop's own keys stand)."""
    per, missing = {}, {}
    if cfg in skipped:
        return Result({}, {}, skipped[cfg])
    for rnd in ROUNDS:
        r = row.get((rnd, cfg))
        if r is None or "failed" in r:
            missing[rnd] = why_none(cfg, rnd)
        elif "bpf_stats" not in r:
            missing[rnd] = f"round {rnd}: {cfg}: no BPF stats: {r.get('bpf_stats_failed', 'not read')}"
        else:
            v = fn(r["bpf_stats"], r)
            if v is None:
                missing[rnd] = f"round {rnd}: {cfg}: no flush counted"
            else:
                per[rnd] = v
    return Result(per, missing)


def bpf_ns(st, r):
    return (st["on_batch_run_time_ns"] + st["collect_batches_run_time_ns"]) / r["seen"] if r.get("seen") else None


def per_flush(st, r):
    return r["seen"] / st["on_batch_runs"] if st["on_batch_runs"] and r.get("seen") else None


def us_per_flush(st, r):
    return st["on_batch_run_time_ns"] / st["on_batch_runs"] / 1e3 if st["on_batch_runs"] else None


def ring_touch(r):
    return (r["cold_ns"] - r["warm_ns"]) / 1e6 if r.get("cold_ns") is not None and r.get("warm_ns") else None


for sfx in ("", "_kvmclock"):
    put(f"batch_bpf_ns_per_event{sfx}", stats_key(f"fast_event{sfx}", bpf_ns))
    put(f"events_per_flush{sfx}", stats_key(f"fast_event{sfx}", per_flush))
    put(f"batch_flushes{sfx}", stats_key(f"fast_event{sfx}", lambda st, r: st["on_batch_runs"]))
    put(f"batch_collects{sfx}", stats_key(f"fast_event{sfx}", lambda st, r: st["collect_batches_runs"]))
    put(f"on_batch_us_per_flush{sfx}", stats_key(f"fast_event{sfx}", us_per_flush))
    # The first touch of a fresh default ring: the loop over it just attached, less the
    # same loop over it warm (the median of the warm runs), ms.
    put(f"ring_first_touch_ms{sfx}", per_round([f"ring_touch{sfx}"], ring_touch))
    put(f"ring_cold_ms{sfx}", per_round([f"ring_touch{sfx}"], lambda r: r.get("cold_ns", 0) / 1e6 or None))
    put(f"ring_warm_ms{sfx}", per_round([f"ring_touch{sfx}"], lambda r: r.get("warm_ns", 0) / 1e6 or None))


# The server's flushes: the batch programs' runs during the attached segments over the
# requests they served (server.py --bpf-stats).
def server_stat(k):
    per, missing = {}, {}
    if "server" in skipped:
        return Result({}, {}, skipped["server"])
    for rnd in ROUNDS:
        r = row.get((rnd, "server"))
        if r is None or "failed" in r:
            missing[rnd] = why_none("server", rnd)
        elif r.get(k) is None or "bpf_stats_failed" in r:
            missing[rnd] = f"round {rnd}: server: no BPF stats: {r.get('bpf_stats_failed', 'not read')}"
        else:
            per[rnd] = r[k]
    return Result(per, missing)


put("server_flushes_per_request", server_stat("flushes_per_request"))
put("server_collects_per_request", server_stat("collects_per_request"))
put("server_batch_bpf_ns_per_request", server_stat("batch_bpf_ns_per_request"))
res["ring_touch_events"] = a.ring_touch_events
res["bench_chunks"] = 50  # BENCH_CHUNKS, tools/bench/bench_time.h
res["attach_sites"] = next((r["sites"] for r in rows if r["config"] == "attach_sites" and "sites" in r), None)
put("loader_rss_mib", key_of("loader_rss", "kib"), 1 / 1024)
rss_recs = next((r["recordings"] for r in rows if r["config"] == "loader_rss" and "recordings" in r), 100)
res["loader_rss_recordings"] = rss_recs
rss_budget = 8 + rss_recs * 1000 / 1024  # MiB: 8 MiB + sum(cap) x 1 KiB
res["loader_rss_budget_mib"] = rss_budget


# ---------------- the targets ----------------
def f(x, d=1):
    return "n/a" if x is None else f"{x:,.{d}f}"


def no_result(why):
    return "no result", why


def judge(r, ok):
    """(verdict, why): met / missed only if every round has a value."""
    if not r.complete:
        return no_result(r.why)
    return ("met", None) if ok(r.median) else ("missed", None)


def rate_check(cfgs):
    """The rounds of the paced configurations whose achieved rate is below the asked
    one by more than RATE_TOLERANCE: [(round, config, achieved, asked)]."""
    low = []
    for cfg in cfgs:
        for rnd in ROUNDS:
            r = row.get((rnd, cfg))
            if r and "failed" not in r:
                got, asked = r.get("achieved_per_s"), r.get("rate_asked")
                if got is None or not asked or got < (1 - RATE_TOLERANCE) * asked:
                    low.append((rnd, cfg, got, asked))
    return low


def rate_why(low, runs):
    rnd, cfg, got, asked = min(low, key=lambda x: x[2] or 0)
    return (f"{f((got or 0) / 1e6, 3)} M/s in round {rnd} ({cfg}), asked {f(asked / 1e6, 2)} M/s "
            f"± {RATE_TOLERANCE:.0%}; {len(low)} of {runs} runs short")


T = []  # the targets, in report order


def target(key, name, goal, r, ok, fmt, stretch=None):
    v, why = judge(r, ok)
    meas = fmt(r.median) if r.per else "—"
    if r.per and not r.complete:
        meas += f" ({len(r.per)} of {len(ROUNDS)} rounds)"
    rng = f"{fmt(r.lo)} – {fmt(r.hi)}" if r.per else "—"
    if v == "met" and stretch is not None:
        why = f"stretch {stretch[0]}: {'met' if stretch[1](r.median) else 'not met'}"
    T.append({"key": key, "name": name, "goal": goal, "measured": meas, "range": rng, "verdict": v,
              "why": why, "value": r.median if r.complete else None})


def x2(v):
    return f"{v:.2f}×"


def x3(v):
    return f"{v:.3f}×"


target("detached_ratio", "detached cost vs no probe site", "≤ 1.02×", M["detached_ratio"], lambda v: v <= 1.02, x3)
target("fast_event_vs_lttng", "3-field event, batch path, vs LTTng-UST", "≤ 0.5× (stretch ≤ 0.25×)",
       M["fast_event_vs_lttng"], lambda v: v <= 0.5, x2, ("≤ 0.25×", lambda v: v <= 0.25))
target("fast_span_pair_vs_lttng", "span enter+exit, batch path, vs LTTng-UST", "≤ 0.75×",
       M["fast_span_pair_vs_lttng"], lambda v: v <= 0.75, x2)
target("fast_event_vs_bpftrace_sdt", "3-field event, batch path, vs bpftrace `count()` on sys/sdt.h", "≤ 0.1×",
       M["fast_event_vs_bpftrace_sdt"], lambda v: v <= 0.1, x2)
target("fast_throughput_vs_per_event", "events/s delivered, 2 threads flat out, batch / per-event path "
       "(accounting exact in every round of both, or no result)", "≥ 5×",
       M["fast_throughput_vs_per_event"], lambda v: v >= 5, x2)
target("sched_untraced_switch_ratio", "pipe ping-pong of two processes not traced, `recorder-attach --sched` "
       "attached to a third / nothing attached, same round", "≤ 1.03×", M["sched_untraced_switch_ratio"],
       lambda v: v <= 1.03, x3)
target("sched_traced_switch_ratio", "the same ping-pong with both ends traced inside spans / nothing attached, "
       "same round", "≤ 1.15×", M["sched_traced_switch_ratio"], lambda v: v <= 1.15, x3)
target("event_vs_floor", "attached 3-field event, per-event path, vs floor", "≤ 1.3×", M["event_vs_floor"],
       lambda v: v <= 1.3, x2)
target("event_vs_bpftrace_sdt", "attached event, per-event path, vs bpftrace `count()` on sys/sdt.h", "≤ 0.7×",
       M["event_vs_bpftrace_sdt"], lambda v: v <= 0.7, x2)
target("span_pair_vs_floor", "span enter+exit, per-event path, vs one floor hit", "≤ 2.6×",
       M["span_pair_vs_floor"], lambda v: v <= 2.6, x2)


def drops_at_rate():
    r = M["paced_dropped"]
    rate = M["paced_events_per_s"]
    d = {"key": "paced_dropped", "name": "drops at 1 M events/s (2 × 500,000/s), default settings",
         "goal": "0 in every round", "value": r.median if r.complete else None}
    d["measured"] = ("—" if not r.per else
                     f"{sum(r.vals()):,} dropped (per round {', '.join(f'{v:,}' for v in r.vals())}) "
                     f"at {f(rate.median / 1e6, 3)} M/s achieved")
    d["range"] = (f"{r.lo:,} – {r.hi:,} dropped; {f(rate.lo / 1e6, 3)} – {f(rate.hi / 1e6, 3)} M/s"
                  if r.per and rate.per else "—")
    low = rate_check(["throughput_1m"])
    if not r.complete:
        d["verdict"], d["why"] = no_result(r.why)
    elif low:
        d["verdict"], d["why"] = "rate not reached", rate_why(low, len(r.per))
    else:
        d["verdict"], d["why"] = ("met", None) if all(v == 0 for v in r.vals()) else ("missed", None)
    T.append(d)


def drops_minus(key, name, with_key, without_key, paced=()):
    """A target on drops with something minus drops without it, per round: ≤ 0 on the
    median of rounds; judged only if the paced configurations reached their rate."""
    r = M[key]
    c, p = M[with_key], M[without_key]
    d = {"key": key, "name": name, "goal": "≤ 0 (median of rounds)", "value": r.median if r.complete else None}
    if r.per:
        pairs = ", ".join(f"{c.per[k]:,} vs {p.per[k]:,}" for k in sorted(r.per))
        d["measured"] = f"{r.median:+,.0f} (with vs without, per round: {pairs})"
        d["range"] = f"{r.lo:+,} – {r.hi:+,}"
    else:
        d["measured"], d["range"] = "—", "—"
    low = rate_check(list(paced))
    if not r.complete:
        d["verdict"], d["why"] = no_result(r.why)
    elif low:
        d["verdict"], d["why"] = "rate not reached", rate_why(low, len(paced) * len(r.per))
    else:
        d["verdict"], d["why"] = ("met", None) if r.median <= 0 else ("missed", None)
    T.append(d)


drops_at_rate()
drops_minus("clients_minus_paced_dropped", "drops at 1 M events/s beside a stalled `--follow` reader and 10 idle "
            "connections, minus drops without clients, same round", "clients_dropped", "paced_dropped",
            ("throughput_1m", "throughput_1m_clients"))
target("trigger_rules_throughput_ratio", "events/s delivered, 2 threads flat out, batch path, with 4 incident rules "
       "that never fire / without rules, same round", "≥ 0.95×", M["trigger_rules_throughput_ratio"],
       lambda v: v >= 0.95, x3)
target("trigger_signatures_throughput_ratio", "events/s delivered, 2 threads flat out, batch path, every event "
       "REC_ERROR at one of 1,000 callsites, with `--trigger 'level>=error'` (1,000 signatures firing) / without "
       "it, same round", "≥ 0.90×", M["trigger_signatures_throughput_ratio"], lambda v: v >= 0.90, x3)
drops_minus("trigger_storm_extra_drops", "error storm at 1 M events/s (every event REC_ERROR, 2 × 500,000/s, "
            "`--trigger-cooldown 1s`): drops with `--trigger 'level>=error'` minus drops without it, same "
            "round (snapshots written within the limiter's allowance, or the round failed)",
            "storm_trigger_dropped", "storm_dropped", ("storm", "storm_trigger"))


def ms(v):
    return f"{v:.1f} ms"


target("trigger_latency_ms", "from an error to its snapshot on disk, `--trigger-after 0`, batch path",
       "≤ 100 ms", M["trigger_latency_ms"], lambda v: v <= 100, ms)
target("trigger_latency_per_event_ms", "the same, per-event path", "≤ 100 ms", M["trigger_latency_per_event_ms"],
       lambda v: v <= 100, ms)
target("rust_detached_ratio", "Rust: a 3-field `tracing` event in a recording span through the registry with the "
       "recorder layer, nothing attached / the registry alone, pairs of chunks in one process", "≤ 1.10×",
       M["rust_detached_ratio"], lambda v: v <= 1.10, x3)
target("rust_event_vs_fmt", "Rust: the same event attached (default path) / through `tracing_subscriber::fmt` to "
       "`io::sink()`, pairs of chunks in one process", "≤ 0.5×", M["rust_event_vs_fmt"], lambda v: v <= 0.5, x2)
target("rust_span_pair_vs_fmt", "Rust: a span created, entered, exited and closed, attached (default path) / "
       "through `tracing_subscriber::fmt` to `io::sink()`", "≤ 0.5×", M["rust_span_pair_vs_fmt"],
       lambda v: v <= 0.5, x2)
target("rust_own_span_pair_vs_fmt", "Rust: the same span pair through recorder's own subscriber "
       "(`Recorder::subscriber()`, no registry), attached (default path) / through `tracing_subscriber::fmt`",
       "≤ 0.5×", M["rust_own_span_pair_vs_fmt"], lambda v: v <= 0.5, x2)
target("rust_own_event_vs_fmt", "Rust: the event through recorder's own subscriber, attached (default path) / "
       "through `tracing_subscriber::fmt`", "≤ 0.5×", M["rust_own_event_vs_fmt"], lambda v: v <= 0.5, x2)
target("rust_own_detached_ratio", "Rust: the event through recorder's own subscriber, nothing attached / the "
       "registry alone", "≤ 1.10×", M["rust_own_detached_ratio"], lambda v: v <= 1.10, x3)
target("rust_event_vs_c_event", "Rust: the attached event alone through the recorder layer (`rust-bench event`, default path) / "
       "the attached C 3-field event, batch path (`fast_event`), same round", "≤ 1.5×", M["rust_event_vs_c_event"],
       lambda v: v <= 1.5, x2)
target("batch_bpf_ns_per_event", "BPF run time per event on the batch path (`on_batch` + `collect_batches`, "
       "bpf_stats, during the `fast_event` loop; issue 37, on a tsc machine)", "≤ 3 ns",
       M["batch_bpf_ns_per_event"], lambda v: v <= 3, lambda v: f"{v:.1f} ns")
target("events_per_flush", "events per `on_batch` run (a flush), the same loop (issue 37, the 3-field event)",
       "≥ 400", M["events_per_flush"], lambda v: v >= 400, lambda v: f"{v:.0f}")
target("attach_5000_s", f"attach, {res['attach_sites'] or 5000} sites", "< 1 s", M["attach_5000_s"],
       lambda v: v < 1, lambda v: f"{v:.3f} s")
target("server_attached_vs_detached", "the event-loop example under load on 127.0.0.1, requests/s attached "
       "(default path) / detached, paired segments of one server", "≥ 0.97×", M["server_attached_vs_detached"],
       lambda v: v >= 0.97, x3)
target("server_detached_vs_plain", "the same server detached / built without recorder, paired segments",
       "≥ 0.99×", M["server_detached_vs_plain"], lambda v: v >= 0.99, x3)
target("loader_rss_mib", f"loader RSS, {rss_recs} recordings of cap 1,000",
       f"≤ {rss_budget:.2f} MiB (8 MiB + Σcap × 1 KiB)", M["loader_rss_mib"], lambda v: v * 1 / 1024 <= rss_budget,
       lambda v: f"{v / 1024:.2f} MiB")
MACHINE = {}
if a.machine:
    try:
        MACHINE = json.load(open(a.machine))
    except (OSError, ValueError):
        MACHINE = {}
res["machine"] = MACHINE
MACHINE_KVM = {}
if a.machine_kvmclock:
    try:
        MACHINE_KVM = json.load(open(a.machine_kvmclock))
    except (OSError, ValueError):
        MACHINE_KVM = {}
res["machine_kvmclock"] = MACHINE_KVM


def prediction(sfx, mach):
    """The attached batch event split as ANALYSIS predicts it (user space + BPF per event
    + a trap / events per flush, the machine's uprobe hit standing in for the trap), and
    that split moved to the issue's slow machine (a 5,000 ns trap, 38 ns of BPF an event)
    at the same events per flush; None without every part."""
    ev, b, epf = M.get("fast_event_ns" + sfx), M["batch_bpf_ns_per_event" + sfx], M["events_per_flush" + sfx]
    trap = mach.get("uprobe_ns")
    if not (ev and ev.complete and b.complete and epf.complete and trap):
        return None
    user = ev.median - b.median - trap / epf.median
    return {"event_ns": ev.median, "user_ns": user, "bpf_ns": b.median, "trap_ns": trap,
            "events_per_flush": epf.median, "slow_machine_event_ns": user + 38 + 5000 / epf.median}


res["prediction"] = prediction("", MACHINE)
res["prediction_kvmclock"] = prediction("_kvmclock", MACHINE_KVM)
res["targets"] = {t["key"]: {k: t[k] for k in ("name", "goal", "value", "verdict", "why")} for t in T}
res["failures"] = failures
res["skipped"] = skipped
notes = [l.rstrip() for l in open(a.notes)] if a.notes else []
notes = [n for n in notes if n and not n.startswith(("skipped ", "round "))]
res["harness_notes"] = notes
res["raw"] = rows

with open(a.json, "w") as fo:
    json.dump(res, fo, indent=2)
    fo.write("\n")


# ---------------- BENCHMARKS.md ----------------
def verdict_md(t):
    v = t["verdict"]
    if v == "met":
        return "met" + (f" ({t['why']})" if t.get("why") else "")
    if v == "missed":
        return "**missed**"
    return f"**{v}** ({t['why']})"


def partial(r):
    return "" if r.complete or not r.per else f" ({len(r.per)} of {len(ROUNDS)} rounds)"


L = []
L.append("# Benchmarks")
L.append("")
L.append("Generated by `make bench` (`tools/bench/run.sh`); do not edit by hand. Raw numbers: "
         "`build/bench/results.json` and `build/bench/raw.jsonl`.")
L.append("")
L.append(f"- Run: {res['generated']}, {a.rounds} interleaved rounds (each round runs every "
         f"configuration once, in a fixed order, each in its own process; the baseline and detached "
         f"loops share one; the two runs of each incident trigger pair swap places every other "
         f"round), {res['elapsed_s']} s.")
L.append("- Machine: Debian 12, 2 vCPUs, shared and noisy. Read the numbers as orders of magnitude "
         "and the ratios as the result: every ratio compares configurations of the same round."
         + (f" Load average (1 min) at the start and the end of the run: {' and '.join(a.load.split())}."
            if a.load else ""))


def machine_ns(k):
    v = MACHINE.get(k)
    return "not measured" if v is None else f"{v:,.0f} ns"


if MACHINE:
    L.append(f"- What decides the costs here (`recorder-attach --machine`, at the start of the run): "
             f"clocksource `{MACHINE.get('clocksource') or 'unknown'}` (available: "
             f"{MACHINE.get('clocksources') or 'unknown'}), pti {MACHINE.get('pti', 'unknown')}, a system "
             f"call {machine_ns('syscall_ns')}, a uprobe hit {machine_ns('uprobe_ns')}. A per-event probe "
             f"pays about one uprobe hit; the batch path pays one per batch, and stamps events with the "
             f"TSC only where the clocksource is `tsc`.")
else:
    L.append("- What decides the costs here: not known (`recorder-attach --machine` was not run or failed).")
L.append(f"- Iterations per configuration and round: {a.iters}.")
L.append(f"- recorder-attach flags: per-event path `{a.per_event_flags or '(none: the default)'}`, "
         f"batch path `{a.fast_flags or '(none: the default)'}`; the timed (ns) configurations add "
         f"`{a.timed_flags or '(nothing: the default ring, 8 MiB)'}`, the throughput runs nothing (default "
         "settings).")
L.append("- Timing: after a warm-up of N/10 iterations, N iterations in 50 chunks, each timed on its own with "
         "`clock_gettime(CLOCK_MONOTONIC)`: ns per iteration of the median chunk (the steady state; the "
         "time the chunks took beyond it is `*_excess_ms`). Medians across rounds; min – max of the rounds.")
L.append("- **Ratios** are computed per round, from two configurations measured in that round, and "
         "reported as the median of the per-round ratios with their min – max.")
L.append("- **A value counts only if the work was done.** After each recorder-attached run the bench "
         "process holds, and `recorder-tail` must show that its recording saw exactly the events the "
         "loop ran (warm-up included), kept + dropped = seen, none dropped or invalid, and every BPF "
         "error counter at 0; in span mode, that the thread's span stack ends in the loop's span "
         "(entered once more after the loop). Throughput runs: produced = emitted and produced = "
         "kept + dropped for every recording. bpftrace `count()` runs: `@c` = the hits the loop made. "
         "Otherwise, and whenever a query fails, the round *failed* for that configuration (see "
         "*Failed measurements*).")
L.append("- **A missing value is never a pass.** A target with a round without a value (failed, "
         "skipped, not built) is **no result**, with the reason. The drop targets count only if "
         f"every paced run achieved its asked rate within {RATE_TOLERANCE:.0%}; otherwise **rate not "
         "reached**.")
if ab:
    L.append(f"- Detached cost: one process per round alternates the baseline and detached loops in "
             f"{res['detached_ab_pairs']} pairs of {res['detached_ab_chunk_iters']:,}-iteration chunks "
             "(order A B, B A, ...), each chunk timed on its own, so that drift and process-to-process "
             "differences hit both loops alike. A round's ratio is the median of its per-pair ratios "
             "(all pairs; the ns rows are the medians of the chunks); `detached_ratio` is the median "
             "over rounds, its range the rounds' min – max.")
L.append("")
L.append("## Targets")
L.append("")
L.append("| target | key | goal | measured (median of rounds) | per-round min – max | verdict |")
L.append("|---|---|---|---|---|---|")
for t in T:
    L.append(f"| {t['name']} | `{t['key']}` | {t['goal']} | {t['measured']} | {t['range']} | {verdict_md(t)} |")
L.append("")
L.append("## Cost per operation")
L.append("")
L.append("| configuration | ns per iteration, median | min – max |")
L.append("|---|---|---|")
rows_ns = [("baseline_ns", f"work only: FNV-1a over {a.work_bytes} bytes, no probe site"),
           ("detached_ns", "work + REC_INFO (3 fields) + span enter/exit, nothing attached")]
rows_ns += [v for v in NS.values()]
rows_ns += [("rust_registry_ns", "Rust: a 3-field `tracing` event through the registry alone (rust-bench)"),
            ("rust_detached_ns", "Rust: the same with the recorder layer, nothing attached"),
            ("rust_event_ns", "Rust: the same, attached, default path"),
            ("rust_event_fmt_ns", "Rust: the same through `tracing_subscriber::fmt` to `io::sink()`"),
            ("rust_span_pair_ns", "Rust: a span created, entered, exited and closed, attached, default path"),
            ("rust_span_pair_fmt_ns", "Rust: the same through `tracing_subscriber::fmt` to `io::sink()`"),
            ("rust_span_pair_registry_ns", "Rust: the same through the registry alone, no layer (the floor of "
             "any layer: `rust_span_pair_registry_vs_fmt` is the least `rust_span_pair_vs_fmt` can be)"),
            ("rust_own_event_ns", "Rust: the event through recorder's own subscriber, attached, default path"),
            ("rust_own_span_pair_ns", "Rust: the span pair through recorder's own subscriber, attached, default "
             "path")]
for key, desc in rows_ns:
    r = M[key]
    if r.per:
        L.append(f"| {desc} | {f(r.median, 2)}{partial(r)} | {f(r.lo, 2)} – {f(r.hi, 2)} |")
    else:
        L.append(f"| {desc} | no result | {r.why} |")
L.append("")
L.append("## Ratios")
L.append("")
L.append("| ratio | median of per-round ratios | per-round min – max |")
L.append("|---|---|---|")
for k in RATIOS:
    r = M[k]
    d = 3 if k == "detached_ratio" else 2
    sup = "¹" if k == "detached_ratio" and ab else ""
    if r.per:
        L.append(f"| `{k}`{sup} | {r.median:.{d}f}×{partial(r)} | {r.lo:.{d}f} – {r.hi:.{d}f} |")
    else:
        L.append(f"| `{k}`{sup} | no result | {r.why} |")
L.append("")
if ab:
    L.append(f"¹ The median over rounds of each round's median per-pair ratio (see above). Single pairs "
             f"are noisy: the middle half of a round's pair ratios spans "
             f"{res['detached_pair_ratio_p25']:.3f} – {res['detached_pair_ratio_p75']:.3f} (medians over rounds).")
    L.append("")
L.append("## Scale")
L.append("")


def tp_line(cfg, label, cmd):
    rate, cpu = key_of(cfg, "events_per_s"), key_of(cfg, "consumer_cpu_pct")
    if not rate.per:
        return [f"- **{label}**: no result ({rate.why})."]
    out = [f"- **{label}** (`{cmd}`): {f(rate.median / 1e6, 2)} M events/s delivered{partial(rate)} "
           f"(rounds {f(rate.lo / 1e6, 2)} – {f(rate.hi / 1e6, 2)}); recorder-attach used "
           f"{f(cpu.median, 0)}% of one CPU."]
    per = [row[(k, cfg)] for k in ROUNDS if (k, cfg) in row and "failed" not in row[(k, cfg)]]
    out.append("  - Per round, summed over recordings (`recorder-tail --list --json`): " + "; ".join(
        f"emitted {r['emitted']:,}, produced {r['produced']:,}, kept {r['kept']:,}, dropped {r['dropped']:,}"
        for r in per) + ". produced = emitted and produced = kept + dropped for every recording of these rounds.")
    if not rate.complete:
        out.append(f"  - Rounds without a value: {rate.why}.")
    return out


TPCMD = "workload --threads 2 --fields 3 --cap 1000"
L += tp_line("throughput", "Throughput, flat out, per-event path", f"{TPCMD} --rate 0")
L += tp_line("fast_throughput", "Throughput, flat out, batch path", f"{TPCMD} --rate 0")
for cfg, label in (("throughput_1m", "Paced at 2 × 500,000 events/s, default settings"),
                   ("throughput_1m_clients", "The same beside a stalled `--follow` reader and 10 idle "
                                             "connections")):
    ach, drp = key_of(cfg, "achieved_per_s"), key_of(cfg, "dropped")
    if not ach.per:
        L.append(f"- **{label}**: no result ({ach.why}).")
        continue
    L.append(f"- **{label}**: achieved {f(ach.median / 1e6, 3)} M events/s{partial(ach)} (rounds "
             f"{f(ach.lo / 1e6, 3)} – {f(ach.hi / 1e6, 3)}); dropped per round: "
             f"{', '.join(f'{v:,}' for v in drp.vals())}.")
    if cfg == "throughput_1m_clients":
        per = [row[(k, cfg)] for k in ROUNDS if (k, cfg) in row and "failed" not in row[(k, cfg)]]
        L.append("  - The clients, per round (recorder-attach's counters; the idle connections are "
                 "reopened whenever the recorder closes one): " + "; ".join(
                     f"idle connects {r.get('idle', {}).get('connects', '?')}, closed by the recorder "
                     f"{r.get('idle', {}).get('closed_by_recorder', '?')}, timed out "
                     f"{(r.get('clients') or {}).get('timed_out', '?')}, events not sent to the stalled "
                     f"reader {(r.get('clients') or {}).get('events_not_sent', '?')}" for r in per) + ".")


def shell_words(args):
    """A command line's words as one would type them: quoted where needed."""
    out = []
    for w in args:
        if w and all(c.isalnum() or c in "-_=./:" for c in w):
            out.append(w)
        else:
            out.append(f'"{w}"' if "'" in w else f"'{w}'")
    return " ".join(out)


try:
    NEVER = shell_words(json.loads(a.never_rules)) if a.never_rules else "(the rules)"
except ValueError:
    NEVER = a.never_rules
L += tp_line("fast_throughput_rules", "Throughput, flat out, batch path, with 4 incident rules that never fire",
             f"{TPCMD} --rate 0`, recorder-attach `{NEVER}")
rr = M["trigger_rules_throughput_ratio"]
if rr.per:
    pairs = res.get("trigger_rules_throughput_pairs", {})
    L.append("  - Over the same without rules, per round (the median of its pairs, run in turn): "
             + "; ".join(f"{rr.per[r]:.3f}× ({', '.join(f'{v:.3f}' for v in pairs.get(str(r), []))})"
                         for r in sorted(rr.per))
             + ". Each rule's counts are 0 in every run (checked), and no file was written.")
STORMS = (
    ("storm", "Error storm at 1 M events/s, no rule", "--rate 500000", "--trigger-cooldown 1s"),
    ("storm_trigger", "Error storm at 1 M events/s with `--trigger 'level>=error'`", "--rate 500000",
     "--trigger-cooldown 1s --trigger 'level>=error'"),
    ("storm_flat", "Error storm flat out, no rule", "--rate 0", ""),
    ("storm_flat_trigger", "Error storm flat out with `--trigger 'level>=error'` (default limiter)", "--rate 0",
     "--trigger 'level>=error'"),
    ("sig_throughput", "Error storm flat out over 1,000 callsites, no rule", "--rate 0 --error-sites 1000", ""),
    ("sig_throughput_rules", "Error storm flat out over 1,000 callsites with `--trigger 'level>=error'` "
     "(1,000 signatures, default limiter)", "--rate 0 --error-sites 1000", "--trigger 'level>=error'"),
)
for cfg, label, rate, flags in STORMS:
    # The 1,000 callsites are in build/workload-sites only (tools/workload.c).
    cmd = TPCMD.replace("workload", "workload-sites", 1) if "--error-sites" in rate else TPCMD
    L += tp_line(cfg, label, f"{cmd} --level error {rate}" + (f"`, recorder-attach `{flags}" if flags else ""))
    per = [row[(k, cfg)] for k in ROUNDS if (k, cfg) in row and "failed" not in row[(k, cfg)]]
    if per and rate != "--rate 0":
        L.append("  - Dropped per round: " + ", ".join(f"{r['dropped']:,}" for r in per) + "; achieved "
                 + ", ".join(f"{f(r['achieved_per_s'] / 1e6, 3)}" for r in per) + " M events/s.")
    if per and (cfg.endswith("_trigger") or cfg.endswith("_rules")):
        L.append("  - The rule, per round: " + "; ".join(
            f"fired {r.get('fired', 0):,} (every event kept), snapshots saved {r.get('snapshots_saved', '?')}, "
            f"files written {r.get('snapshot_files', '?')} (the limiter allows {r.get('snapshots_allowed', '?')})"
            for r in per) + ".")
fo = M["trigger_storm_flat_out_extra_drops"]
if fo.per:
    L.append("  - Flat out, drops with the rule minus drops without it, per round (a figure, no target: "
             "flat out the ring overflows with or without a rule): "
             + ", ".join(f"{v:+,}" for v in fo.vals()) + ".")
for cfg, label in (("trigger_latency", "batch path"), ("trigger_latency_per_event", "per-event path")):
    lat, mt = key_of(cfg, "latency_ms"), key_of(cfg, "mtime_latency_ms")
    if not lat.per:
        L.append(f"- **Trigger latency, {label}**: no result ({lat.why}).")
        continue
    L.append(f"- **Trigger latency, {label}** (`{a.latency_target or 'incident requests'}`, `--trigger 'level>=error' "
             f"--trigger-after 0`): {ms(lat.median)}{partial(lat)} from the error's own time to the snapshot "
             f"seen in the dump directory; per round {', '.join(ms(v) for v in lat.vals())} (by the file's "
             f"mtime, a coarse clock: {', '.join(ms(v) for v in mt.vals())}).")
at = M["attach_5000_s"]
L.append(f"- **Attach time**, a generated binary with {res['attach_sites']} distinct REC_INFO sites: "
         f"{f(at.median, 3)} s median ({f(at.lo, 3)} – {f(at.hi, 3)} s), from starting recorder-attach to "
         "its `attached to` line (includes loading the BPF object; polled every 5 ms).")
for k, what in (("fast_event_excess_ms", "event"), ("fast_span_excess_ms", "span pair")):
    ex = M[k]
    if ex.per:
        L.append(f"- **One-off costs in the attached {what} loop, batch path** (`{k}`): the loop's time beyond "
                 f"its steady state (its median chunk of {res['bench_chunks']} timed on their own, which is what "
                 f"its ns figure is): {f(ex.median, 1)} ms ({f(ex.lo, 1)} – {f(ex.hi, 1)}). A cost paid once "
                 "(an attach's, a thread's first batch, memory touched the first time) shows here, as would "
                 "other programs' interruptions.")
fl, nl = M["rust_span_pair_registry_vs_fmt"], M["rust_noop_layer_ratio"]
if fl.per and nl.per:
    L.append(f"- **What any `tracing` layer costs** (rust-bench, pairs of chunks in one process): a span "
             f"created, entered, exited and closed through the registry alone, no layer, is {f(fl.median, 3)}× "
             f"({f(fl.lo, 3)} – {f(fl.hi, 3)}) the same through `tracing_subscriber::fmt`: the least "
             f"`rust_span_pair_vs_fmt` a layer on the registry can reach. An event through a layer that does "
             f"nothing is {f(nl.median, 3)}× ({f(nl.lo, 3)} – {f(nl.hi, 3)}) the registry alone: the least "
             "`rust_detached_ratio` can be.")
sd = M["rust_span_pair_detached_ratio"]
if sd.per:
    L.append(f"- **A span pair with the layer, nothing attached** (`rust_span_pair_detached_ratio`): "
             f"{f(sd.median, 3)}× ({f(sd.lo, 3)} – {f(sd.hi, 3)}) the registry alone. The layer keeps the "
             "thread's current span right while detached, as the header does.")
sv = {m: (M[f"server_{m}_per_s"], M[f"server_{m}_cpu_ns_per_request"]) for m in ("plain", "detached", "attached")}
if sv["attached"][0].per:
    L.append("- **Server** (`tests/targets/evloop.c`, one recording per connection, a span and an event per "
             "request; `tools/bench/loadgen` on 127.0.0.1, 4 keep-alive connections, one request at a time "
             "each): requests/s and the server's CPU per request (its on-CPU time over the segment), medians "
             "of rounds: " + "; ".join(
                 f"{m} {f(r.median / 1e3, 1)} k/s ({f(r.lo / 1e3, 1)} – {f(r.hi / 1e3, 1)}), "
                 f"{f(c.median / 1e3, 2)} µs" for m, (r, c) in sv.items() if r.per) + ".")
else:
    L.append(f"- **Server**: no result ({sv['attached'][0].why}).")
rm = M["loader_rss_mib"]
L.append(f"- **Loader RSS** with {rss_recs} recordings of cap 1,000 (`workload --recordings {rss_recs} "
         f"--cap 1000 --events 1000 --hold`, after all events): VmRSS "
         f"{f(rm.median / 1024 if rm.per else None, 1)} MiB "
         f"({f(rm.lo / 1024 if rm.per else None, 1)} – {f(rm.hi / 1024 if rm.per else None, 1)}).")
L.append("")
L.append("## The batch path per event, and the ring (issue 37)")
L.append("")
L.append("Measured on every machine, to predict a slower one: an attached batch-path event costs about its "
         "user-space time + the BPF time per event + a trap (a uprobe hit) / the events per flush. The BPF "
         "keys come from the kernel's BPF statistics (`BPF_ENABLE_STATS`, what `kernel.bpf_stats_enabled=1` "
         "turns on), on only while `fast_event`'s loop runs (and the server's run), read with `bpftool prog "
         "show -j` for the programs that run's recorder-attach holds; `_kvmclock` is the same configuration "
         "in the same round with kvm-clock as the clocksource.")
L.append("")
# What a ring_touch run writes to the ring: a flush is a 16 KiB record (REC__TBUF_SIZE).
epf = M["events_per_flush"]
ring_mib = (f", about {a.ring_touch_events * 16384 / epf.median / 2**20:.1f} MiB in the 8 MiB ring at "
            f"{16384 / epf.median:.0f} bytes an event" if epf.per and a.ring_touch_events else "")
PER_EVENT_KEYS = [
    ("batch_bpf_ns_per_event", 2, "BPF run time of `on_batch` and `collect_batches` over the events delivered, "
     "`fast_event`'s loop (ns)"),
    ("events_per_flush", 0, "events delivered / `on_batch` runs (flushes), the same loop"),
    ("batch_flushes", 0, "`on_batch` runs in the loop (a full 16 KiB buffer, or a thread that sleeps)"),
    ("batch_collects", 0, "`collect_batches` runs in the loop (one per thread a collection of sleeping "
     "threads visits, every `--collect-ms`)"),
    ("on_batch_us_per_flush", 2, "`on_batch` run time per run (µs)"),
    ("ring_first_touch_ms", 2, f"the event loop ({a.ring_touch_events:,} events{ring_mib}) over a freshly "
     "attached default ring, less the same loop over the same ring warm (ms)"),
    ("ring_cold_ms", 2, "that loop over the fresh ring (ms)"),
    ("ring_warm_ms", 2, "that loop over the same ring warm, the median of 5 runs (ms)"),
    ("rust_event_vs_c_event", 2, "the attached Rust event alone (`rust-bench event`, the layer) / `fast_event`, same round"),
    ("server_flushes_per_request", 4, "`on_batch` runs during the server's attached segments / requests served"),
    ("server_collects_per_request", 4, "`collect_batches` runs during them / requests served"),
    ("server_batch_bpf_ns_per_request", 0, "BPF run time of both during them / requests served (ns)"),
]
L.append("| key | what it is | median (min – max) | with kvm-clock |")
L.append("|---|---|---|---|")


def med_range(k, d):
    r = M.get(k)
    if r is None:
        return "—"
    if not r.per:
        return f"no result ({r.why})"
    return f"{r.median:,.{d}f}{partial(r)} ({r.lo:,.{d}f} – {r.hi:,.{d}f})"


for k, d, what in PER_EVENT_KEYS:
    L.append(f"| `{k}` | {what} | {med_range(k, d)} | {med_range(k + '_kvmclock', d)} |")
L.append("")


for sfx, label in (("", f"clocksource `{MACHINE.get('clocksource', '?')}`"), ("_kvmclock", "kvm-clock")):
    p = res["prediction" + sfx]
    if p is None:
        L.append(f"- **Split, {label}**: not computed (a key of it has no value in every round, or "
                 "`recorder-attach --machine` did not run).")
        continue
    trap = p["trap_ns"] / p["events_per_flush"]
    L.append(f"- **Split, {label}** (medians of rounds): the attached event {p['event_ns']:.1f} ns = BPF "
             f"{p['bpf_ns']:.1f} + a uprobe hit {p['trap_ns']:,.0f} ns / {p['events_per_flush']:.0f} events a "
             f"flush ({trap:.1f}) + the rest, user space, {p['user_ns']:.1f}. On a machine with a 5,000 ns "
             f"trap and 38 ns of BPF an event, at these events per flush: {p['user_ns']:.1f} + 38 + "
             f"{5000 / p['events_per_flush']:.1f} = {p['slow_machine_event_ns']:.1f} ns an event.")
if MACHINE_KVM:
    L.append(f"- With kvm-clock selected (`recorder-attach --machine`, in the first round's kvm-clock "
             f"configurations): clocksource `{MACHINE_KVM.get('clocksource') or 'unknown'}`, a system call "
             f"{MACHINE_KVM.get('syscall_ns', 0):,.0f} ns, a uprobe hit {MACHINE_KVM.get('uprobe_ns', 0):,.0f} "
             "ns. Only the clock is emulated: the traps cost what they cost on this machine.")
L.append("")
L.append("## Failed measurements")
L.append("")
if failures:
    for x in failures:
        L.append(f"- round {x['round']}, `{x['config']}`: {x['why']}")
else:
    L.append("- none: every configuration that ran passed its checks in every round")
L.append("")
L.append("## Skipped")
L.append("")
L.extend([f"- `{k}`: {v}" for k, v in skipped.items()] or ["- nothing"])
L.append("")
L.append("## Harness notes")
L.append("")
L.extend([f"- {n}" for n in notes] or ["- none"])
L.append("")
L.append("## Missed targets")
L.append("")
miss = []
for t in T:
    if t["verdict"] != "missed":
        continue
    line = f"- **{t['name']}**: {t['measured']} vs {t['goal']}."
    if t["key"] == "event_vs_floor" and M["event_ns"].complete and M["floor_ns"].complete:
        line += (f" ({f(res['event_ns'], 0)} ns vs {f(res['floor_ns'], 0)} ns: "
                 f"{f(res['event_ns'] - res['floor_ns'], 0)} ns of BPF work per event on top of the uprobe entry.)")
    if t["key"] == "detached_ratio" and M["detached_ns"].complete and M["baseline_ns"].complete:
        line += (f" Absolute: {f(res['detached_ns'] - res['baseline_ns'], 2)} ns per iteration for one event "
                 "site and one span pair.")
    miss.append(line)
L.extend(miss or ["- none in this run"])
nores = [t for t in T if t["verdict"] not in ("met", "missed")]
if nores:
    L.append("")
    L.append("Not judged in this run: " + ", ".join(f"`{t['key']}` ({t['verdict']})" for t in nores) + ".")
L.append("")
if miss:
    L.append("Why, and what would close the gaps: see *Analysis* below.")
    L.append("")
L.append("## Analysis")
L.append("")
L.append("See `tools/bench/ANALYSIS.md` for the method's caveats, the reasons behind missed targets "
         "and what would close them (kept in the source tree; this file is regenerated).")
L.append("")
try:
    L.append(open(__file__.rsplit("/", 1)[0] + "/ANALYSIS.md").read().rstrip())
    L.append("")
except OSError:
    pass

with open(a.md, "w") as fo:
    fo.write("\n".join(L))
