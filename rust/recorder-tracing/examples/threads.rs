// SPDX-License-Identifier: MIT
//! Spans that cross threads: one span entered on two threads at once, and a
//! future polled on one thread, then another, then the first.
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Barrier};
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

use tracing::{info, info_span, Instrument};
use tracing_subscriber::prelude::*;

/// Ready on the third poll.
struct ThreePolls(u8);
impl Future for ThreePolls {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        self.0 += 1;
        if self.0 == 3 {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

fn noop_waker() -> Waker {
    fn clone(_: *const ()) -> RawWaker {
        RawWaker::new(std::ptr::null(), &VTABLE)
    }
    fn noop(_: *const ()) {}
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
    // SAFETY: the vtable's functions do nothing.
    unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) }
}

fn main() {
    let recorder = recorder_tracing::Recorder::new();
    tracing_subscriber::registry().with(recorder.layer()).init();
    let rounds: u64 = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(u64::MAX);
    for round in 0..rounds {
        let recording = recorder.record(100);
        let root = recording.span(&format!("round {}", round));
        let shared = root.in_scope(|| info_span!("shared"));
        let both = Arc::new(Barrier::new(2));
        let threads: Vec<_> = (0..2)
            .map(|t| {
                let (shared, both) = (shared.clone(), both.clone());
                std::thread::spawn(move || {
                    let _in = shared.enter();
                    both.wait();
                    info!(thread = t, "in the shared span");
                    both.wait();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut fut = Box::pin(
            async {
                info!("first poll");
                ThreePolls(0).await;
                info!("last poll");
            }
            .instrument(root.in_scope(|| info_span!("task"))),
        );
        let waker = noop_waker();
        let _ = fut.as_mut().poll(&mut Context::from_waker(&waker));
        let mut fut = std::thread::spawn(move || {
            let _ = fut.as_mut().poll(&mut Context::from_waker(&noop_waker()));
            fut
        })
        .join()
        .unwrap();
        let _ = fut.as_mut().poll(&mut Context::from_waker(&waker));
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
