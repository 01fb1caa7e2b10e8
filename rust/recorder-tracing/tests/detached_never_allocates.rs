// SPDX-License-Identifier: MIT
//! While nothing is attached the layer never allocates: spans inside a
//! recording, their enters and exits, and events make no allocation once the
//! registry and the thread have warmed up. (Its own test binary: the counting
//! allocator is the whole program's.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use tracing::{info, info_span};
use tracing_subscriber::prelude::*;

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: System's, with a count of this thread's allocations.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
        System.realloc(p, l, size)
    }
}

#[global_allocator]
static A: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.with(|n| n.get())
}

/// A request's work: a recording span, children, a span with an explicit
/// parent entered later, events in each and one with an explicit parent.
fn request(recording: &recorder_tracing::Recording, i: u64) {
    let span = recording.span("request");
    let later = {
        let _in = span.enter();
        let child = info_span!("child", n = i);
        let _c = child.enter();
        info!(a = 1u64, s = "text", "in the child");
        let inner = info_span!("inner");
        inner.in_scope(|| info!(ok = true, "in the inner span"));
        info!(parent: &child, "an explicit parent");
        info_span!(parent: &span, "explicit")
    };
    // Entered outside its recording span, as a future's span is polled later.
    let _l = later.enter();
    info!("later");
}

/// 1,000 requests under dispatch, after 100 to warm up: the allocations.
fn allocations_of_requests(recorder: &recorder_tracing::Recorder, dispatch: tracing::Dispatch) -> u64 {
    tracing::dispatcher::with_default(&dispatch, || {
        let recording = recorder.record(64);
        // The registry's pages, the thread's span stack, frames and slots, the callsites.
        for i in 0..100 {
            request(&recording, i);
        }
        let before = allocs();
        for i in 0..1000 {
            request(&recording, i);
        }
        allocs() - before
    })
}

#[test]
fn detached_spans_and_events_never_allocate() {
    assert!(!recorder_tracing::is_attached());
    let recorder = recorder_tracing::Recorder::new();
    let layer = tracing::Dispatch::new(tracing_subscriber::registry().with(recorder.layer()));
    assert_eq!(allocations_of_requests(&recorder, layer), 0, "the layer on a registry");
    let own = tracing::Dispatch::new(recorder.subscriber());
    assert_eq!(allocations_of_requests(&recorder, own), 0, "recorder's own subscriber");
}
