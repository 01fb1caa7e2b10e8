// SPDX-License-Identifier: MIT
//! The record an event of the layer leaves in its thread's batch buffer, byte
//! for byte (docs/probe-abi.md, "Batches"), with the `event` and `batch`
//! semaphores armed and the tracer word set by hand, as recorder-attach
//! would: no BPF reads them, so the buffer keeps what the layer wrote. (Its
//! own test binary: the semaphores are the whole program's.)

use std::arch::asm;

use tracing::info;
use tracing_subscriber::prelude::*;

extern "C" {
    static mut recorder_event_semaphore: u16;
    static mut recorder_batch_semaphore: u16;
    /// The attach block: the "attached" semaphore, the marker, the tracer word.
    static mut recorder_attached_semaphore: [u32; 2];
}

/// The batch path, as recorder-attach asks for it (TRACER_BATCH).
fn arm() {
    // SAFETY: the crate's weak symbols in .probes, written before any event.
    unsafe {
        recorder_event_semaphore = 1;
        recorder_batch_semaphore = 1;
        recorder_attached_semaphore[1] = 0x7f00_0002;
    }
}

/// The thread's batch buffer (`rec__tbuf`).
fn tbuf() -> *const u8 {
    let p: usize;
    // SAFETY: an initial-exec load of the crate's __thread pointer.
    unsafe {
        asm!("movq rec__tbuf@gottpoff(%rip), {0}", "movq %fs:({0}), {0}", out(reg) p,
             options(att_syntax, nostack, readonly));
    }
    p as *const u8
}

fn u16_at(b: *const u8, at: usize) -> u16 {
    // SAFETY: inside the buffer's 16 KiB.
    unsafe { (b.add(at) as *const u16).read_unaligned() }
}

fn u32_at(b: *const u8, at: usize) -> u32 {
    // SAFETY: as above.
    unsafe { (b.add(at) as *const u32).read_unaligned() }
}

fn u64_at(b: *const u8, at: usize) -> u64 {
    // SAFETY: as above.
    unsafe { (b.add(at) as *const u64).read_unaligned() }
}

/// The head's len (bytes of records after the 64-byte header) and gen.
fn len_gen(b: *const u8) -> (usize, u32) {
    (u32_at(b, 12) as usize, u32_at(b, 8))
}

#[test]
fn an_event_is_written_as_the_header_writes_it() {
    arm();
    let recorder = recorder_tracing::Recorder::new();
    let recording = recorder.record(16);
    let sub = tracing_subscriber::registry().with(recorder.layer());
    tracing::subscriber::with_default(sub, || {
        let span = recording.span("r");
        let _in = span.enter();
        let event = |i: i64| info!(i = i, s = "text", b = true, "bench event");
        // The callsite's first event is handed over at once (its blob is on the heap).
        event(1);
        let b = tbuf();
        assert!(!b.is_null(), "no batch buffer");
        let (len, gen) = len_gen(b);
        assert_eq!(len, 0, "the first event of a callsite was not handed over");
        event(7);
        let (len, gen2) = len_gen(b);
        assert_eq!(gen2, gen);
        // head 16, 5 words, 4 values, "bench event\0text\0" rounded to 24.
        assert_eq!(len, 112);
        let r = 64;
        assert_eq!(u16_at(b, r), 1, "kind");
        assert_eq!(u16_at(b, r + 2), 112, "size");
        assert_eq!(u16_at(b, r + 4), 17, "strbytes");
        assert_eq!(unsafe { *b.add(r + 6) }, 4, "nvals");
        assert_ne!(u64_at(b, r + 16), 0, "meta");
        // message (string), i (i64), s (string), b (bool): the callsite's order.
        assert_eq!(u64_at(b, r + 24), 0x5121, "types");
        assert_eq!(u64_at(b, r + 32), recording.key(), "recording key");
        assert_ne!(u64_at(b, r + 40), 0, "span");
        assert_eq!(u64_at(b, r + 56), 11 << 16, "message slot");
        assert_eq!(u64_at(b, r + 64), 7, "i");
        assert_eq!(u64_at(b, r + 72), 12 | 4 << 16, "s slot");
        assert_eq!(u64_at(b, r + 80), 1, "b");
        // SAFETY: inside the buffer.
        let area = unsafe { std::slice::from_raw_parts(b.add(r + 88), 17) };
        assert_eq!(area, b"bench event\0text\0");
        // The buffer fills to its end: 584 of these (65,472 bytes of records
        // in a 65,536-byte buffer, docs/probe-abi.md) before one is handed over.
        for i in 0..583 {
            event(i);
        }
        assert_eq!(len_gen(b), (584 * 112, gen), "handed over before it was full");
        event(0);
        assert_eq!(len_gen(b), (112, gen + 1));
    });
}
