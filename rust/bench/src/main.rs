// SPDX-License-Identifier: MIT
//! rust-bench: the Rust keys of make bench (tools/bench/run.sh). Each mode runs two
//! subscribers side by side in one process: pairs of chunks, A B then B A, each
//! chunk timed on its own; a mode's ratio is the median of its pairs' ratios.
//!
//!	rust-bench detached --iters N --chunks C
//!	  the registry with our layer and nothing attached (A) over the registry
//!	  alone (B): a 3-field event inside a recording span; then a span created,
//!	  entered, exited and closed through the registry alone (A) over the same
//!	  through tracing_subscriber::fmt to io::sink() (B): the best ratio to fmt
//!	  that any layer on the registry can reach ("span_floor"); and the event
//!	  through the registry with a layer that does nothing (A) over the registry
//!	  alone (B): the least rust_detached_ratio any layer can have ("layer_floor");
//!	  and the event through recorder's own subscriber over the registry alone
//!	  ("own_detached"); and a span pair through the registry with our layer over
//!	  the registry alone ("span_detached")
//!	rust-bench attached --iters N --chunks C
//!	  waits for SIGUSR1 (sent once recorder-attach has attached), then the same
//!	  event through our layer, attached (A), over tracing_subscriber::fmt writing
//!	  to io::sink() (B); then a span created, entered, exited and closed, the same
//!	  way; then both again through recorder's own subscriber (Recorder::subscriber(),
//!	  "own_event", "own_span"); then prints what it emitted through both and holds
//!	  until SIGUSR1 so that run.sh can check that the recorder saw exactly that.
//!	rust-bench event --iters N [--subscriber layer|own] [--cpu-time]
//!	  the event alone, as tools/bench/bench.c times its C event (bench_time.h):
//!	  waits for SIGUSR1, then through the registry with our layer (or recorder's
//!	  own subscriber), the program's global default as a program installs it,
//!	  inside a recording span, a tenth of N to warm up, then N in 50 chunks each
//!	  timed on its own; prints "ns_per_iter X iters N total M excess_ms E" (X the
//!	  median chunk's), "emitted events E spans S" and "rust-bench: holding", and
//!	  holds until SIGUSR1. Its figure over bench.c's attached event is
//!	  rust_event_vs_c_event: the same three fields and message, the same path.
//!	  --cpu-time times the chunks with the thread's CPU time in place of
//!	  CLOCK_MONOTONIC: what the event costs, on a machine that others load.
//!
//! Lines: "rust-bench: pid N"; per mode "rust_ab MODE a_ns X b_ns Y ratio R
//! ratio_p25 P ratio_p75 Q pairs C chunk_iters I"; attached also "emitted events E
//! spans S" and "rust-bench: holding".

use std::time::Instant;

use recorder_e2e::{block_signals, say, say_pid, wait_usr1};
use recorder_tracing::{Recorder, Recording};
use tracing::dispatcher::{self, Dispatch};
use tracing::{info, info_span};
use tracing_subscriber::prelude::*;

const PROG: &str = "rust-bench";

/// A layer that does nothing: what any layer costs the registry's dispatch.
struct Noop;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Noop {}

/// What one chunk does, n times, inside a recording span of its own.
#[derive(Clone, Copy)]
enum Op {
    Event,
    SpanPair,
}

/// Runs op n times under dispatch; returns ns per iteration.
fn chunk(dispatch: &Dispatch, rec: &Recording, op: Op, n: u64) -> f64 {
    dispatcher::with_default(dispatch, || {
        let root = rec.span("bench");
        let _g = root.enter();
        let t = Instant::now();
        match op {
            Op::Event => {
                for i in 0..n {
                    info!(i = i as i64, s = "text", b = true, "bench event");
                }
            }
            Op::SpanPair => {
                for _ in 0..n {
                    let s = info_span!("pair");
                    let _e = s.enter();
                }
            }
        }
        t.elapsed().as_nanos() as f64 / n as f64
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn quartile(v: &[f64], q: usize) -> f64 {
    // v sorted
    v[(v.len() - 1) * q / 4]
}

/// Pairs of chunks of A and B, alternating their order; prints the mode's line.
fn ab(mode: &str, a: &Dispatch, b: &Dispatch, rec: &Recording, op: Op, iters: u64, chunks: u64) {
    let n = (iters / chunks).max(1);
    // Warm-up: a tenth of the work, each side.
    chunk(a, rec, op, (iters / 10).max(1));
    chunk(b, rec, op, (iters / 10).max(1));
    let (mut av, mut bv, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..chunks {
        let (x, y) = if k % 2 == 0 {
            let x = chunk(a, rec, op, n);
            (x, chunk(b, rec, op, n))
        } else {
            let y = chunk(b, rec, op, n);
            (chunk(a, rec, op, n), y)
        };
        av.push(x);
        bv.push(y);
        ratios.push(x / y);
    }
    let (am, bm, r) = (median(&mut av), median(&mut bv), median(&mut ratios));
    say(&format!(
		"rust_ab {} a_ns {:.3} b_ns {:.3} ratio {:.4} ratio_p25 {:.4} ratio_p75 {:.4} pairs {} chunk_iters {}",
		mode,
		am,
		bm,
		r,
		quartile(&ratios, 1),
		quartile(&ratios, 3),
		chunks,
		n
	));
}

fn arg(args: &[String], name: &str) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .filter(|&v| v > 0)
        .unwrap_or_else(|| {
            eprintln!("{}: {} N (a positive number) is required", PROG, name);
            std::process::exit(2);
        })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("");
    if mode == "event" {
        return event_alone(&args);
    }
    if mode != "detached" && mode != "attached" {
        eprintln!(
            "usage: {} detached|attached --iters N --chunks C\n       {} event --iters N [--subscriber layer|own]",
            PROG, PROG
        );
        std::process::exit(2);
    }
    let iters = arg(&args, "--iters");
    let chunks = arg(&args, "--chunks");
    block_signals();
    say_pid(PROG);

    let recorder = Recorder::new();
    let rec = recorder.record(1000);
    let ours = Dispatch::new(tracing_subscriber::registry().with(recorder.layer()));
    let own = Dispatch::new(recorder.subscriber());
    let fmt = Dispatch::new(tracing_subscriber::fmt().with_writer(std::io::sink).finish());
    if mode == "detached" {
        let registry = Dispatch::new(tracing_subscriber::registry());
        ab("detached", &ours, &registry, &rec, Op::Event, iters, chunks);
        ab("own_detached", &own, &registry, &rec, Op::Event, iters, chunks);
        ab("span_detached", &ours, &registry, &rec, Op::SpanPair, iters, chunks);
        ab("span_floor", &registry, &fmt, &rec, Op::SpanPair, iters, chunks);
        let noop = Dispatch::new(tracing_subscriber::registry().with(Noop));
        ab("layer_floor", &noop, &registry, &rec, Op::Event, iters, chunks);
        return;
    }
    wait_usr1();
    let n = (iters / chunks).max(1);
    let warm = (iters / 10).max(1);
    ab("event", &ours, &fmt, &rec, Op::Event, iters, chunks);
    ab("span", &ours, &fmt, &rec, Op::SpanPair, iters, chunks);
    ab("own_event", &own, &fmt, &rec, Op::Event, iters, chunks);
    ab("own_span", &own, &fmt, &rec, Op::SpanPair, iters, chunks);
    // Through our layer, then our subscriber: the events of the event chunks; the
    // spans left: the pairs of the span chunks and every chunk's recording span.
    let events = 2 * (warm + chunks * n);
    let spans = 2 * (warm + chunks * n + 2 * (chunks + 1));
    say(&format!("emitted events {} spans {}", events, spans));
    say(&format!("{}: holding", PROG));
    wait_usr1();
}

/// The chunks of `rust-bench event` (bench_time.h BENCH_CHUNKS).
const EVENT_CHUNKS: u64 = 50;

/// rust-bench event: the attached event alone, timed as bench.c times its own.
fn event_alone(args: &[String]) {
    let iters = arg(args, "--iters");
    let cpu = args.iter().any(|a| a == "--cpu-time");
    let now = || if cpu { thread_cpu_ns() } else { monotonic_ns() };
    let own = match args.iter().position(|a| a == "--subscriber").and_then(|i| args.get(i + 1)) {
        None => false,
        Some(s) if s == "layer" => false,
        Some(s) if s == "own" => true,
        Some(s) => {
            eprintln!("{}: --subscriber {}: neither layer nor own", PROG, s);
            std::process::exit(2);
        }
    };
    block_signals();
    say_pid(PROG);
    let recorder = Recorder::new();
    let rec = recorder.record(1000);
    let installed = if own {
        tracing::subscriber::set_global_default(recorder.subscriber())
    } else {
        tracing::subscriber::set_global_default(
            tracing_subscriber::registry().with(recorder.layer()),
        )
    };
    if installed.is_err() {
        eprintln!("{}: a subscriber was installed already", PROG);
        std::process::exit(2);
    }
    wait_usr1();
    let root = rec.span("bench");
    let entered = root.enter();
    let events = |n: u64| {
        for i in 0..n {
            info!(i = i as i64, s = "text", b = true, "bench event");
        }
    };
    let warm = iters / 10 + 1;
    events(warm);
    let per = (iters / EVENT_CHUNKS).max(1);
    let (mut done, mut all, mut ns) = (0u64, 0f64, Vec::new());
    while done < iters && (ns.len() as u64) < EVENT_CHUNKS {
        let c = if ns.len() as u64 == EVENT_CHUNKS - 1 || done + per > iters {
            iters - done
        } else {
            per
        };
        let t = now();
        events(c);
        let dt = (now() - t) as f64;
        all += dt;
        ns.push(dt / c as f64);
        done += c;
    }
    ns.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = ns.len();
    let x = if n % 2 == 1 { ns[n / 2] } else { (ns[n / 2 - 1] + ns[n / 2]) / 2.0 };
    say(&format!(
        "ns_per_iter {:.3} iters {} total {} excess_ms {:.3}",
        x,
        done,
        done + warm,
        (all - x * done as f64) / 1e6
    ));
    say(&format!("emitted events {} spans 1", done + warm));
    say(&format!("{}: holding", PROG));
    wait_usr1();
    drop(entered);
}

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

extern "C" {
    fn clock_gettime(clk: i32, ts: *mut Timespec) -> i32;
}

fn clock_ns(clk: i32) -> u64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: ts is a valid timespec.
    unsafe { clock_gettime(clk, &mut ts) };
    ts.sec as u64 * 1_000_000_000 + ts.nsec as u64
}

/// CLOCK_MONOTONIC, as bench_time.h reads it.
fn monotonic_ns() -> u64 {
    clock_ns(1)
}

/// CLOCK_THREAD_CPUTIME_ID: this thread's CPU time, user and system.
fn thread_cpu_ns() -> u64 {
    clock_ns(3)
}
