// SPDX-License-Identifier: MIT
//! rust-scenario: the Rust twin of tests/targets/scenario.c, driven the same way by
//! tests/e2e/test_rust.sh:
//!
//!	rust-scenario NAME
//!	  -> "rust-scenario: pid N"
//!	  waits until recorder-attach arms the probes
//!	  runs the scenario
//!	  -> "recording SUBJECT 0xKEY" per recording
//!	  -> "ready"
//!	  waits for SIGTERM or SIGINT, then leaves its spans and exits 0
//!
//! Exit status: 0 done, 2 usage, 3 nothing attached within 20 s.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
use std::thread;

use recorder_e2e::{block_signals, install, say, say_pid, wait_for_attach, wait_stop};
use recorder_tracing::{Recorder, Recording};
use tracing::span::EnteredSpan;
use tracing::{error, info, info_span, Instrument, Span};

const PROG: &str = "rust-scenario";

/// What a scenario leaves for the epilogue: the recordings to announce (and keep
/// alive), the spans still entered on the main thread (outermost first), and
/// threads that hold spans until the end.
#[derive(Default)]
struct Scenario {
    recordings: Vec<(&'static str, Recording)>,
    held: Vec<EnteredSpan>,
    holders: Vec<mpsc::Sender<()>>,
    running: Vec<mpsc::Receiver<()>>,
}

impl Scenario {
    fn record(&mut self, recorder: &Recorder, cap: usize, name: &'static str) -> usize {
        self.recordings.push((name, recorder.record(cap)));
        self.recordings.len() - 1
    }

    fn rec(&self, i: usize) -> &Recording {
        &self.recordings[i].1
    }
}

fn events_are_recorded(sc: &mut Scenario, r: &Recorder) {
    let i = sc.record(r, 10, "test");
    let span = sc.rec(i).span("test");
    let _g = span.enter();
    info!("This event should be recorded");
    info!("another event");
}

fn last_n_entries(sc: &mut Scenario, r: &Recorder) {
    let i = sc.record(r, 5, "test");
    let span = sc.rec(i).span("test");
    let _g = span.enter();
    for n in 0..10 {
        info!("event {}", n);
    }
}

fn events_outside_span_are_not_recorded(sc: &mut Scenario, r: &Recorder) {
    let i = sc.record(r, 10, "test");
    // Created but never entered: the event below belongs to no recording.
    let _span = sc.rec(i).span("test");
    info!("This event should NOT be recorded");
}

fn child_span_inherits_recorder(sc: &mut Scenario, r: &Recorder) {
    let i = sc.record(r, 10, "test");
    let outer = sc.rec(i).span("test");
    let _og = outer.enter();
    {
        let inner = info_span!("child_span");
        let _ig = inner.enter();
        info!("Event from inner span");
    }
}

fn recording_spans_are_isolated(sc: &mut Scenario, r: &Recorder) {
    let a = sc.record(r, 10, "test_a");
    let b = sc.record(r, 10, "test_b");
    let span_a = sc.rec(a).span("test_a");
    let _ga = span_a.enter();
    info!("event_from_a");
    {
        let span_b = sc.rec(b).span("test_b");
        let _gb = span_b.enter();
        info!("event_from_b");
    }
}

fn active_spans(sc: &mut Scenario, r: &Recorder) {
    let i = sc.record(r, 10, "test");
    sc.held.push(sc.rec(i).span("test").entered());
    sc.held.push(info_span!("child_span").entered());
    info!("inside child");
    // Both stay entered while the test asks for the stacks.
}

/// A thread that runs f, then holds whatever f returned (entered spans) until the
/// epilogue: the test reads its stack meanwhile. wait_held waits until f is done.
fn hold_on_thread<F>(sc: &mut Scenario, name: &str, f: F)
where
    F: FnOnce() -> Vec<EnteredSpan> + Send + 'static,
{
    let (tx, rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let mut held = f();
            done_tx.send(()).unwrap();
            let _ = rx.recv();
            while let Some(g) = held.pop() {
                drop(g);
            }
        })
        .unwrap();
    sc.holders.push(tx);
    sc.running.push(done_rx);
}

/// Until every thread started by hold_on_thread has run its f.
fn wait_held(sc: &mut Scenario) {
    for done in sc.running.drain(..) {
        done.recv().unwrap();
    }
}

/// Spans that cross threads:
/// - "shared": a recording span and its child entered on two threads at once, both
///   still inside them;
/// - "cross_a"/"cross_b": a span entered on thread A is exited and closed from
///   thread B, which is inside its own recording: neither thread's stack changes;
/// - "task": a future instrumented with its span, polled on three threads in turn.
fn threads(sc: &mut Scenario, r: &Recorder) {
    // A recording span and its child, both entered on two threads at once.
    let shared = sc.record(r, 10, "shared");
    let root = sc.rec(shared).span("shared");
    let child = info_span!(parent: &root, "shared_child");
    let both_inside = Arc::new(Barrier::new(2));
    for t in 0..2u64 {
        let (root, child) = (root.clone(), child.clone());
        let both_inside = Arc::clone(&both_inside);
        hold_on_thread(sc, &format!("shared{}", t), move || {
            let held = vec![root.entered(), child.entered()];
            both_inside.wait();
            info!(thread = t, "inside the shared span");
            held
        });
    }
    drop(child);
    drop(root);

    // Spans of thread A's recording that thread B, inside its own, closes or exits:
    // "closed_elsewhere", entered and left on A, is closed on B; "handed_over",
    // entered on A and never left there, is exited on B.
    let cross_a = sc.record(r, 10, "cross_a");
    let cross_b = sc.record(r, 10, "cross_b");
    let root_a = sc.rec(cross_a).span("cross_a");
    let root_b = sc.rec(cross_b).span("cross_b");
    let (to_b, from_a) = mpsc::channel::<(Span, Span)>();
    let (b_done_tx, b_done) = mpsc::channel::<()>();
    hold_on_thread(sc, "cross_b", move || {
        let g = root_b.entered();
        let (closed_elsewhere, handed_over) = from_a.recv().unwrap();
        drop(closed_elsewhere);
        handed_over.with_subscriber(|(id, dispatch)| dispatch.exit(id));
        drop(handed_over);
        info!("b after the foreign exit");
        b_done_tx.send(()).unwrap();
        vec![g]
    });
    hold_on_thread(sc, "cross_a", move || {
        let ga = root_a.entered();
        let closed_elsewhere = info_span!("closed_elsewhere");
        closed_elsewhere.in_scope(|| info!("a inside closed_elsewhere"));
        let handed_over = info_span!("handed_over");
        // Entered for good: its guard is never dropped on this thread.
        std::mem::forget(handed_over.enter());
        info!("a inside handed_over");
        to_b.send((closed_elsewhere, handed_over)).unwrap();
        b_done.recv().unwrap();
        info!("a after the foreign exit");
        vec![ga]
    });

    wait_held(sc);

    // A future with its span, polled on three threads in turn.
    let task = sc.record(r, 10, "task");
    let root = sc.rec(task).span("task");
    let mut fut: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(
        async {
            for step in 0..3u64 {
                info!(step = step, "task step");
                YieldOnce(false).await;
            }
        }
        .instrument(info_span!(parent: &root, "task_span")),
    );
    for step in 0..3 {
        fut = thread::Builder::new()
            .name(format!("poll{}", step))
            .spawn(move || {
                let pending = poll_once(&mut fut).is_pending();
                assert!(pending, "the task ended early");
                fut
            })
            .unwrap()
            .join()
            .unwrap();
    }
    assert!(poll_once(&mut fut).is_ready(), "the task did not end");
}

/// A future that is pending once, then ready: an await point.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        Poll::Pending
    }
}

fn poll_once(fut: &mut Pin<Box<dyn Future<Output = ()> + Send>>) -> Poll<()> {
    fn clone(_: *const ()) -> RawWaker {
        RawWaker::new(std::ptr::null(), &VTABLE)
    }
    fn noop(_: *const ()) {}
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
    // SAFETY: the vtable's functions do nothing and never touch the data pointer.
    let waker = unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) };
    fut.as_mut().poll(&mut Context::from_waker(&waker))
}

/// The black box: 20 events inside "work", which stays entered until kill -9. Like
/// a request handler's span, "work" was entered and left once before (a callsite
/// first entered after the attach and never left cannot be named in a black box:
/// docs/probe-abi.md, "Blobs on the heap and the black box").
fn blackbox(sc: &mut Scenario, r: &Recorder) {
    blackbox_in(sc, r, true);
}

/// As blackbox, with "work" entered for the first time and held: its callsite is
/// known to recorder-attach only from its enter (the batch path's).
fn blackbox_open(sc: &mut Scenario, r: &Recorder) {
    blackbox_in(sc, r, false);
}

fn blackbox_in(sc: &mut Scenario, r: &Recorder, left_once: bool) {
    let i = sc.record(r, 10, "box");
    sc.held.push(sc.rec(i).span("box").entered());
    let work = || info_span!("work");
    if left_once {
        drop(work().entered());
    }
    sc.held.push(work().entered());
    for n in 0..20u64 {
        info!(n = n, last = n == 19, "box event");
    }
}

/// A Display that panics.
struct Bomb;

impl fmt::Display for Bomb {
    fn fmt(&self, _f: &mut fmt::Formatter<'_>) -> fmt::Result {
        panic!("a Display that panics");
    }
}

/// A Display of n bytes: "0123456789" again and again.
struct Huge(usize);

impl fmt::Display for Huge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for i in 0..self.0 {
            f.write_str(&"0123456789"[i % 10..i % 10 + 1])?;
        }
        Ok(())
    }
}

/// Bad input: a Display that panics, one of 100,000 bytes, and 11 fields.
fn bad_input(sc: &mut Scenario, r: &Recorder) {
    let i = sc.record(r, 10, "bad");
    let span = sc.rec(i).span("bad");
    let _g = span.enter();
    info!(bad = %Bomb, after = 1u64, "a panicking display");
    info!(huge = %Huge(100_000), after = 2u64, "a huge display");
    info!(
        f1 = 1u64,
        f2 = 2u64,
        f3 = 3u64,
        f4 = 4u64,
        f5 = 5u64,
        f6 = 6u64,
        f7 = 7u64,
        f8 = 8u64,
        f9 = 9u64,
        f10 = 10u64,
        "eleven fields"
    );
    info!("still alive");
    say(&format!("fields_left_out {}", recorder_tracing::fields_left_out()));
}

/// Incidents: 10 requests, each its own recording, span "request" and 3 steps;
/// request 7's last step is an error. Then a "health" recording whose code calls
/// trigger().
fn incident(sc: &mut Scenario, r: &Recorder) {
    for req in 0..10u64 {
        let name: &'static str = Box::leak(format!("req[{}]", req).into_boxed_str());
        let i = sc.record(r, 10, name);
        let root = sc.rec(i).span(name);
        let _g = root.enter();
        let request = info_span!("request", req = req);
        let _rg = request.enter();
        for step in 0..2u64 {
            info!(step = step, "step");
        }
        if req == 7 {
            error!(status = 503u64, "request failed");
        } else {
            info!(status = 200u64, "request done");
        }
    }
    let i = sc.record(r, 10, "health");
    let root = sc.rec(i).span("health");
    let _g = root.enter();
    info!("checking");
    sc.rec(i).trigger("health check failed");
}

type Run = fn(&mut Scenario, &Recorder);

const SCENARIOS: &[(&str, Run)] = &[
    ("events_are_recorded", events_are_recorded),
    ("last_n_entries", last_n_entries),
    ("events_outside_span_are_not_recorded", events_outside_span_are_not_recorded),
    ("child_span_inherits_recorder", child_span_inherits_recorder),
    ("recording_spans_are_isolated_across_nested_recordings", recording_spans_are_isolated),
    ("active_spans", active_spans),
    ("threads", threads),
    ("blackbox", blackbox),
    ("blackbox_open", blackbox_open),
    ("bad_input", bad_input),
    ("incident", incident),
];

fn usage() {
    eprintln!("usage: {} SCENARIO", PROG);
    eprintln!("scenarios:");
    for (name, _) in SCENARIOS {
        eprintln!("  {}", name);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        usage();
        std::process::exit(2);
    }
    let run = match SCENARIOS.iter().find(|(name, _)| *name == args[1]) {
        Some((_, run)) => *run,
        None => {
            eprintln!("{}: unknown scenario '{}'", PROG, args[1]);
            usage();
            std::process::exit(2);
        }
    };
    block_signals();
    let recorder = Recorder::new();
    install(&recorder);

    say_pid(PROG);
    wait_for_attach(PROG);
    let mut sc = Scenario::default();
    run(&mut sc, &recorder);
    for (name, rec) in &sc.recordings {
        say(&format!("recording {} {:#x}", name, rec.key()));
    }
    say("ready");

    wait_stop();
    while let Some(g) = sc.held.pop() {
        drop(g);
    }
    drop(sc.holders);
}
