// SPDX-License-Identifier: MIT
//! The `tracing_subscriber::Layer`: it emits recorder's probe ABI for the spans
//! and events of the registry it is installed in.

use std::sync::atomic::{AtomicU64, Ordering};

use tracing::span::{Attributes, Id};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::{LookupSpan, SpanRef};

use crate::abi::{self, Sema};
use crate::event;
use crate::frames::{self, Frames};
use crate::meta;
use crate::{announce_recording_span, is_recording_callsite, recording_span_of, span_meta};

/// The recording spans a layer knows: span id -> (recording key, address).
/// A fixed table made with the layer, in buckets of 8 ids (a cache line or
/// two): an enter of a span its thread did not note at the span's creation
/// (see `made`) finds the recording from the span's root, so no other span
/// keeps anything, and no span or event allocates. A recording span whose
/// bucket is full keeps its recording in the registry's extensions of that
/// span instead (one allocation, never a loss).
struct Roots {
    ids: Box<[AtomicU64]>,
    vals: Box<[(AtomicU64, AtomicU64)]>,
}

pub(crate) const ROOT_SLOTS: usize = 4096;
const ROOT_BUCKET: usize = 8;
/// A slot being written.
const ROOT_BUSY: u64 = u64::MAX;

impl Roots {
    fn new() -> Self {
        Roots {
            ids: (0..ROOT_SLOTS).map(|_| AtomicU64::new(0)).collect(),
            vals: (0..ROOT_SLOTS).map(|_| (AtomicU64::new(0), AtomicU64::new(0))).collect(),
        }
    }

    /// The slots of id's bucket.
    fn bucket(id: u64) -> std::ops::Range<usize> {
        let b = (id.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as usize % (ROOT_SLOTS / ROOT_BUCKET);
        b * ROOT_BUCKET..(b + 1) * ROOT_BUCKET
    }

    fn insert(&self, id: u64, key: u64, rec: u64) -> bool {
        for i in Self::bucket(id) {
            let slot = &self.ids[i];
            if slot.compare_exchange(0, ROOT_BUSY, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                self.vals[i].0.store(key, Ordering::Relaxed);
                self.vals[i].1.store(rec, Ordering::Relaxed);
                slot.store(id, Ordering::Release);
                return true;
            }
        }
        false
    }

    fn get(&self, id: u64) -> Option<(u64, u64)> {
        Self::bucket(id).find(|&i| self.ids[i].load(Ordering::Acquire) == id).map(|i| {
            (self.vals[i].0.load(Ordering::Relaxed), self.vals[i].1.load(Ordering::Relaxed))
        })
    }

    /// Forgets id, if it is here. A span's close comes after every use of it.
    fn remove(&self, id: u64) {
        if let Some(i) = Self::bucket(id).find(|&i| self.ids[i].load(Ordering::Relaxed) == id) {
            self.ids[i].store(0, Ordering::Release);
        }
    }
}

/// A recording span's recording, kept in the registry when its bucket is full.
struct RootRec {
    key: u64,
    rec: u64,
}

/// The layer: it emits recorder's probe ABI for the spans and events of the
/// subscriber it is installed in. Install one per subscriber.
pub struct RecorderLayer {
    roots: Roots,
}

impl RecorderLayer {
    /// Made by `Recorder::layer()`.
    pub(crate) fn new() -> Self {
        RecorderLayer { roots: Roots::new() }
    }

    /// What this layer's frames are marked with.
    fn owner(&self) -> usize {
        self as *const RecorderLayer as usize
    }

    /// The recording of a span (key and address; 0 for none): a recording
    /// span's own; any other span's parent's, as the header's spans inherit
    /// their contextual parent's at creation, the registry's parent of a span
    /// being that. A parent entered on this thread (`entered`, its frames) has
    /// it in its frame; else the walk goes on to the root.
    fn recording_of<S>(&self, span: SpanRef<'_, S>, frames: &Frames) -> (u64, u64)
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let mut s = span;
        loop {
            if is_recording_callsite(s.metadata()) {
                let id = s.id().into_u64();
                return match self.roots.get(id) {
                    Some(r) => r,
                    None => s.extensions().get::<RootRec>().map_or((0, 0), |r| (r.key, r.rec)),
                };
            }
            s = match s.parent() {
                Some(p) => p,
                None => return (0, 0),
            };
            if let Some(e) = frames.find(s.id().into_u64(), self.owner()) {
                return e.recording();
            }
        }
    }

    /// on_event's work once the event probe is armed.
    #[inline(never)]
    fn on_event_armed<S>(&self, event: &Event<'_>, ctx: Context<'_, S>)
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let pid = match event.parent() {
            Some(pid) => pid,
            None => return event::emit_in_current(event),
        };
        // An explicit parent: its recording, whatever this thread is in.
        let span = match ctx.span(pid) {
            Some(s) => s,
            None => return,
        };
        let owner = self.owner();
        let got = frames::with(|frames| match frames.find(pid.into_u64(), owner) {
            // In this thread's frame of it if it is entered here, else in the
            // thread's current span (only a chain's stack is seeded).
            Some(e) => (e.recording(), e.frame as u64),
            None => (self.recording_of(span, frames), abi::current() as u64),
        });
        if let Some(((key, rec), at)) = got {
            if key != 0 {
                event::emit(event, key, at, rec);
            }
        }
    }
}

/// The recording of the registry's current span on this thread: that of the
/// last frame of owner's that is not a span entered again (the registry's
/// current span skips those); none if there is none.
fn registry_current_recording(frames: &Frames, owner: usize) -> (u64, u64) {
    let e = &frames.entered;
    for i in (0..e.len()).rev() {
        if e[i].owner == owner && !e[..i].iter().any(|x| x.id == e[i].id && x.owner == owner) {
            return e[i].recording();
        }
    }
    (0, 0)
}

/// The spans this thread made lately, by id: what an enter of one needs, so
/// that it makes no registry lookup. A cache: a span not found in it (made on
/// another thread, with an explicit parent, or pushed out) is looked up.
mod made {
    use std::cell::RefCell;

    #[derive(Clone, Copy)]
    struct Made {
        id: u64,
        owner: usize,
        meta: u64,
        key: u64,
        rec: u64,
    }

    const SLOTS: usize = 64;
    const NONE: Made = Made { id: 0, owner: 0, meta: 0, key: 0, rec: 0 };

    thread_local! {
        static MADE: RefCell<[Made; SLOTS]> = const { RefCell::new([NONE; SLOTS]) };
    }

    fn slot(id: u64) -> usize {
        (id.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize
    }

    pub(super) fn note(id: u64, owner: usize, meta: u64, key: u64, rec: u64) {
        let _ = MADE.try_with(|m| {
            if let Ok(mut m) = m.try_borrow_mut() {
                m[slot(id)] = Made { id, owner, meta, key, rec };
            }
        });
    }

    /// The blob, recording key and address of span id of owner, if noted here.
    pub(super) fn find(id: u64, owner: usize) -> Option<(u64, u64, u64)> {
        MADE.try_with(|m| {
            let m = m.try_borrow().ok()?;
            let e = m[slot(id)];
            if e.id == id && e.owner == owner {
                Some((e.meta, e.key, e.rec))
            } else {
                None
            }
        })
        .ok()
        .flatten()
    }

    /// Forgets a closed span (its id may be given to a new one).
    pub(super) fn forget(id: u64, owner: usize) {
        let _ = MADE.try_with(|m| {
            if let Ok(mut m) = m.try_borrow_mut() {
                let e = &mut m[slot(id)];
                if e.id == id && e.owner == owner {
                    *e = NONE;
                }
            }
        });
    }
}

impl<S> Layer<S> for RecorderLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    /// Makes the callsite's blob, once: spans and events then find it made.
    fn register_callsite(&self, md: &'static Metadata<'static>) -> Interest {
        meta::register(md);
        Interest::always()
    }

    /// A recording span is kept in the layer's table; any other span's
    /// recording is its parent's, found at its enters. What its enters need
    /// is noted in the thread's cache of the spans it made, from the thread's
    /// current span: found there, an enter makes no lookup.
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let (idv, owner) = (id.into_u64(), self.owner());
        let recording = recording_span_of(attrs);
        let noted = match recording {
            Some(r) => Some(r),
            None if attrs.is_root() => Some((0, 0)),
            None if attrs.is_contextual() => frames::with(|f| registry_current_recording(f, owner)),
            // An explicit parent: looked up at the enter.
            None => None,
        };
        if let Some((key, rec)) = noted {
            made::note(idv, owner, span_meta(attrs.metadata(), key), key, rec);
        }
        let (key, rec) = match recording {
            Some(r) => r,
            None => return,
        };
        if !self.roots.insert(idv, key, rec) {
            match ctx.span(id) {
                // replace, not insert (which panics on a second one): two
                // recorder layers in one subscriber emit twice (documented), but run.
                Some(span) => span.extensions_mut().replace(RootRec { key, rec }),
                None => return,
            };
        }
        announce_recording_span(rec);
    }

    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
        made::forget(id.into_u64(), self.owner());
        self.roots.remove(id.into_u64());
    }

    // Detached, the semaphore's test is all: inlined into the registry's dispatch,
    // the rest (armed) in a call of its own.
    #[inline(always)]
    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if abi::armed(Sema::Event) {
            self.on_event_armed(event, ctx);
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        let (idv, owner) = (id.into_u64(), self.owner());
        if let Some((meta, key, rec)) = made::find(idv, owner) {
            frames::with(|frames| frames::enter(frames, idv, owner, meta, key, rec));
            return;
        }
        let span = match ctx.span(id) {
            Some(s) => s,
            None => return,
        };
        let md = span.metadata();
        frames::with(|frames| {
            let (key, rec) = self.recording_of(span, frames);
            frames::enter(frames, idv, owner, span_meta(md, key), key, rec);
        });
    }

    fn on_exit(&self, id: &Id, _ctx: Context<'_, S>) {
        frames::exit(id.into_u64(), self.owner());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_refuses_and_a_close_makes_room() {
        let roots = Roots::new();
        // Ids of one bucket.
        let b0 = Roots::bucket(1);
        let ids: Vec<u64> = (1..).filter(|&i| Roots::bucket(i) == b0).take(ROOT_BUCKET + 1).collect();
        for &i in &ids[..ROOT_BUCKET] {
            assert!(roots.insert(i, i * 10, i * 100));
        }
        assert!(!roots.insert(ids[ROOT_BUCKET], 1, 1));
        assert_eq!(roots.get(ids[3]), Some((ids[3] * 10, ids[3] * 100)));
        assert_eq!(roots.get(ids[ROOT_BUCKET]), None);
        roots.remove(ids[3]);
        assert_eq!(roots.get(ids[3]), None);
        assert!(roots.insert(ids[ROOT_BUCKET], 7, 8));
        assert_eq!(roots.get(ids[ROOT_BUCKET]), Some((7, 8)));
    }
}
