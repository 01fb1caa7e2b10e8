// SPDX-License-Identifier: MIT
//! A server that keeps one recording per request: docs/guide/rust.md.
//! Run it, then `sudo recorder-attach -p PID` and `recorder-tail -p PID`.
use std::time::Duration;

use tracing::{info, info_span, instrument, warn};
use tracing_subscriber::prelude::*;

#[instrument]
fn parse(id: u64) -> Result<u64, std::io::Error> {
    info!(bytes = 512u64, "parsed request");
    if id % 3 == 0 {
        return Err(std::io::Error::new(std::io::ErrorKind::Other, "backend timed out"));
    }
    Ok(id * 2)
}

fn main() {
    let recorder = recorder_tracing::Recorder::new();
    tracing_subscriber::registry().with(recorder.layer()).init();
    println!("pid {}", std::process::id());

    let requests: u64 = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(u64::MAX);
    for id in 0..requests {
        // One recording per request: the last 100 events of each.
        let recording = recorder.record(100);
        let span = recording.span(&format!("request {}", id));
        let _in = span.enter();
        let _work = info_span!("handle", id).entered();
        match parse(id) {
            Ok(n) => info!(id, n, ok = true, "handled request"),
            Err(e) => warn!(id, error = &e as &dyn std::error::Error, "request failed"),
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
