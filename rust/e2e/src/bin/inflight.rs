// SPDX-License-Identifier: MIT
//! rust-inflight: the Rust twin of tests/targets/inflight.c (issue 35, item 0), a
//! program that serves one request at a time, each in a recording of its own, so
//! that an attach made while it serves finds a request in flight. A request: a
//! recording, its span "request" entered, SLEEP_MS asleep inside it, one event
//! "done" after the sleep, the span left and the recording dropped.
//!
//!	rust-inflight SLEEP_MS
//!	  -> "rust-inflight: pid N"
//!	  SIGUSR1: serves requests, one after the other, until SIGUSR2
//!	    -> "request N" as each request's span is entered (N counts from 1)
//!	    -> "idle N" once SIGUSR2 came and the request it found ended
//!	  SIGTERM or SIGINT: exits 0
//!
//! Exit status: 0 stopped, 2 usage.

use std::thread::sleep;
use std::time::Duration;

use recorder_e2e::{block_signals, install, say, say_pid, usr2_pending, wait_usr1_or_stop};
use recorder_tracing::Recorder;
use tracing::info;

const PROG: &str = "rust-inflight";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sleep_ms = match args.get(1).and_then(|a| a.parse::<u64>().ok()) {
        Some(ms) if ms > 0 && args.len() == 2 => ms,
        _ => {
            eprintln!("usage: {} SLEEP_MS", PROG);
            std::process::exit(2);
        }
    };
    block_signals();
    let recorder = Recorder::new();
    install(&recorder);
    say_pid(PROG);
    let mut served = 0u64;
    while wait_usr1_or_stop() {
        loop {
            served += 1;
            let recording = recorder.record(16);
            let span = recording.span("request");
            let _g = span.enter();
            say(&format!("request {}", served));
            // An attach made now finds this request in flight.
            sleep(Duration::from_millis(sleep_ms));
            info!(n = served, "done");
            drop(_g);
            drop(span);
            drop(recording);
            if usr2_pending() {
                break;
            }
        }
        say(&format!("idle {}", served));
    }
}
