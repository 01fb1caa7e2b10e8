// SPDX-License-Identifier: MIT
//! rust-mixed: a Rust program with a C object (c/mixed.c, built with
//! include/recorder.h) linked in. Both emit into one recording, "mixed":
//!
//!	rust-mixed
//!	  -> "rust-mixed: pid N", waits for the attach
//!	  Rust: recording span "mixed" entered, an event
//!	  C:    an event; span "c_span" with a C event and a Rust event in it
//!	  Rust: span "rust_held" entered, C: span "c_held" entered in it, an event
//!	  -> "recording mixed 0xKEY", "ready"; SIGTERM: leaves its spans, exits 0

use recorder_e2e::{block_signals, install, say, say_pid, wait_for_attach, wait_stop};
use recorder_tracing::Recorder;
use tracing::{info, info_span};

const PROG: &str = "rust-mixed";

extern "C" {
    fn mixed_c_side();
    fn mixed_c_enter_held();
    fn mixed_c_exit_held();
}

/// Called from C inside its span "c_span".
#[no_mangle]
pub extern "C" fn mixed_rust_inside_c() {
    info!(n = 3i64, "from rust inside c_span");
}

fn main() {
    block_signals();
    let recorder = Recorder::new();
    install(&recorder);
    say_pid(PROG);
    wait_for_attach(PROG);

    let rec = recorder.record(10);
    let root = rec.span("mixed").entered();
    info!(n = 0i64, "from rust");
    // SAFETY: plain C functions without arguments (c/mixed.c).
    unsafe { mixed_c_side() };
    let held = info_span!("rust_held").entered();
    // SAFETY: as above; the C span is static and left before the Rust one.
    unsafe { mixed_c_enter_held() };
    say(&format!("recording mixed {:#x}", rec.key()));
    say("ready");

    wait_stop();
    // SAFETY: as above.
    unsafe { mixed_c_exit_held() };
    drop(held);
    drop(root);
}
