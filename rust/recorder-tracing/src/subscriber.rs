// SPDX-License-Identifier: MIT
//! A subscriber of recorder's own, for a program that records with recorder
//! alone: the layer's spans and events without the registry under it. A
//! span's id is the address of a small slot holding what the probes need (its
//! callsite's blob, its recording), taken from the thread's pool of slots and
//! given back at its close; a span inherits its recording from the thread's
//! current span at its creation, as the header's spans do.

use std::cell::RefCell;
use std::sync::atomic::{fence, AtomicUsize, Ordering};

use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_core::span::Current;

use crate::abi::{self, Sema};
use crate::event;
use crate::frames;
use crate::meta;
use crate::{announce_recording_span, is_recording_span_md, recording_span_of, span_meta};

/// A span: its handles, its callsite, the blob its frames name, its recording.
struct Slot {
    refs: AtomicUsize,
    md: &'static Metadata<'static>,
    meta: u64,
    key: u64,
    rec: u64,
}

/// Slots given back on this thread, for its next spans.
struct Pool(Vec<*mut Slot>);

impl Drop for Pool {
    fn drop(&mut self) {
        for s in self.0.drain(..) {
            // SAFETY: made by Box::into_raw in take(), closed.
            drop(unsafe { Box::from_raw(s) });
        }
    }
}

thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Pool(Vec::new())) };
}

/// Slots kept for reuse per thread.
const POOL_MAX: usize = 1024;

/// A slot holding s: one of the thread's pool, or a new one while the
/// thread's open spans grow.
fn take(s: Slot) -> *mut Slot {
    let reused = POOL.try_with(|p| p.try_borrow_mut().ok().and_then(|mut p| p.0.pop()));
    match reused {
        Ok(Some(p)) => {
            // SAFETY: a closed slot of the pool, which nothing else holds.
            unsafe { p.write(s) };
            p
        }
        _ => Box::into_raw(Box::new(s)),
    }
}

/// Gives a closed slot back to this thread's pool.
fn give(p: *mut Slot) {
    let kept = POOL.try_with(|pool| match pool.try_borrow_mut() {
        Ok(mut pool) if pool.0.len() < POOL_MAX => {
            pool.0.push(p);
            true
        }
        _ => false,
    });
    if kept != Ok(true) {
        // SAFETY: made by Box::into_raw in take(), closed.
        drop(unsafe { Box::from_raw(p) });
    }
}

/// The slot of span id.
///
/// # Safety
/// id is a span of this subscriber's that is not closed.
unsafe fn slot<'a>(id: &Id) -> &'a Slot {
    &*(id.into_u64() as *const Slot)
}

/// recorder's own subscriber (`Recorder::subscriber()`): spans and events
/// reach recorder as through the layer, at less than the registry's cost.
/// It keeps no span data but recorder's (no other layer can be stacked on
/// it); a program that also logs installs the layer on a registry instead.
pub struct RecorderSubscriber {
    max_level: LevelFilter,
}

impl RecorderSubscriber {
    pub(crate) fn new() -> Self {
        RecorderSubscriber { max_level: LevelFilter::TRACE }
    }

    /// Spans and events more verbose than level are disabled (no probe, no
    /// slot), as `tracing_subscriber`'s level filters disable them. Recording
    /// spans (`Recording::span()`, INFO) stay enabled at any level.
    pub fn with_max_level(self, level: impl Into<LevelFilter>) -> Self {
        RecorderSubscriber { max_level: level.into() }
    }

    /// What this subscriber's frames are marked with.
    fn owner(&self) -> usize {
        self as *const RecorderSubscriber as usize
    }

    /// event's work once the event probe is armed.
    #[inline(never)]
    fn event_armed(&self, event: &Event<'_>) {
        let pid = match event.parent() {
            Some(pid) => pid,
            None => return event::emit_in_current(event),
        };
        // An explicit parent: its recording, whatever this thread is in; its
        // frame if it is entered here, else the thread's current span.
        // SAFETY: a span named as a parent is open.
        let s = unsafe { slot(pid) };
        let owner = self.owner();
        let at = frames::with(|f| f.find(pid.into_u64(), owner).map(|e| e.frame as u64))
            .flatten()
            .unwrap_or(abi::current() as u64);
        if s.key != 0 {
            event::emit(event, s.key, at, s.rec);
        }
    }
}

impl Subscriber for RecorderSubscriber {
    /// Makes the callsite's blob, once: spans and events then find it made.
    fn register_callsite(&self, md: &'static Metadata<'static>) -> Interest {
        meta::register(md);
        if self.enabled(md) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    /// What is as verbose as max_level or less; and recording spans whatever
    /// their level, without which nothing would be recorded.
    fn enabled(&self, md: &Metadata<'_>) -> bool {
        *md.level() <= self.max_level || is_recording_span_md(md)
    }

    /// At least INFO: the level of recording spans.
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(self.max_level.max(LevelFilter::INFO))
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let md = attrs.metadata();
        let recording = recording_span_of(attrs);
        let (key, rec) = match recording {
            Some(r) => r,
            None if attrs.is_root() => (0, 0),
            // SAFETY: a span named as a parent is open.
            None => match attrs.parent() {
                Some(p) => unsafe { (slot(p).key, slot(p).rec) },
                None => frames::chain_recording(),
            },
        };
        let meta = span_meta(md, key);
        let p = take(Slot { refs: AtomicUsize::new(1), md, meta, key, rec });
        if recording.is_some() {
            announce_recording_span(rec);
        }
        Id::from_u64(p as u64)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    // Detached, the semaphore's test is all; the rest in a call of its own.
    #[inline(always)]
    fn event(&self, event: &Event<'_>) {
        if abi::armed(Sema::Event) {
            self.event_armed(event);
        }
    }

    fn enter(&self, id: &Id) {
        // SAFETY: an entered span is open.
        let s = unsafe { slot(id) };
        frames::with(|f| frames::enter(f, id.into_u64(), self.owner(), s.meta, s.key, s.rec));
    }

    fn exit(&self, id: &Id) {
        frames::exit(id.into_u64(), self.owner());
    }

    fn clone_span(&self, id: &Id) -> Id {
        // SAFETY: a span being cloned is open.
        unsafe { slot(id) }.refs.fetch_add(1, Ordering::Relaxed);
        id.clone()
    }

    fn try_close(&self, id: Id) -> bool {
        // SAFETY: a span being closed is open until its last handle goes.
        if unsafe { slot(&id) }.refs.fetch_sub(1, Ordering::Release) != 1 {
            return false;
        }
        fence(Ordering::Acquire);
        give(id.into_u64() as *mut Slot);
        true
    }

    fn current_span(&self) -> Current {
        let owner = self.owner();
        let top = frames::with(|f| f.entered.iter().rev().find(|e| e.owner == owner).map(|e| e.id));
        match top.flatten() {
            // SAFETY: an entered span is open.
            Some(id) => Current::new(Id::from_u64(id), unsafe { slot(&Id::from_u64(id)) }.md),
            None => Current::none(),
        }
    }
}
