// SPDX-License-Identifier: MIT
//! A server that makes one recording per request (the README's "Rust programs").
//! Run it, then attach: `recorder-attach -p PID`, `recorder-tail`.
use std::time::Duration;

use tracing::{info, info_span, warn};
use tracing_subscriber::prelude::*;

fn handle(id: u64) -> Result<(), std::io::Error> {
    let _parse = info_span!("parse").entered();
    info!(id, bytes = 512u64, "parsed request");
    if id % 3 == 0 {
        return Err(std::io::Error::new(std::io::ErrorKind::Other, "backend timed out"));
    }
    Ok(())
}

fn main() {
    let recorder = recorder_tracing::Recorder::new();
    tracing_subscriber::registry().with(recorder.layer()).init();
    let requests: u64 = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(u64::MAX);
    for id in 0..requests {
        let recording = recorder.record(100);
        let span = recording.span(&format!("request {}", id));
        let _in = span.enter();
        match handle(id) {
            Ok(()) => info!(id, ok = true, "handled request"),
            Err(e) => warn!(id, error = &e as &dyn std::error::Error, "request failed"),
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
