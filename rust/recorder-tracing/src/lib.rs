// SPDX-License-Identifier: MIT
//! A `tracing` layer that speaks recorder's probe ABI (docs/probe-abi.md), so
//! that `recorder-attach -p PID` records a Rust program as it records a C one.
//!
//! ```no_run
//! use tracing::info;
//! use tracing_subscriber::prelude::*;
//!
//! let recorder = recorder_tracing::Recorder::new();
//! tracing_subscriber::registry().with(recorder.layer()).init();
//! let recording = recorder.record(100);
//! let span = recording.span("request 7");
//! let _in = span.enter();
//! info!(id = 7, ok = true, "handled request");
//! ```
//!
//! A program that records with recorder alone (no other layer, no log output)
//! can install recorder's own subscriber in place of the registry: a span then
//! costs a fifth of what it costs on the registry.
//!
//! ```no_run
//! let recorder = recorder_tracing::Recorder::new();
//! tracing::subscriber::set_global_default(recorder.subscriber()).unwrap();
//! ```
//!
//! While nothing is attached an event costs the layer one load and one branch:
//! it never allocates or formats, and neither does a span (a recording span's
//! recording is in the layer's table, made with it; callsite blobs are made
//! when tracing registers the callsite). Spans keep the thread's current span
//! (`rec__current`, shared with C objects of the program) whether or not
//! anything is attached, as the header does, so that an attach made while
//! threads are inside spans attributes their events right.

mod abi;
mod batch;
mod encode;
mod event;
mod frames;
mod layer;
mod meta;
mod subscriber;

use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicU64, Ordering};

use tracing::field::{Field, Visit};
use tracing::span::Attributes;
use tracing::{Level, Metadata};

use abi::Sema;

pub use layer::RecorderLayer;
pub use subscriber::RecorderSubscriber;

/// Set in a live recording (REC_RECORDING_MAGIC, "RCRDING1"); cleared before it is freed.
const RECORDING_MAGIC: u64 = 0x3147_4e49_4452_4352;
const SUBJECT_MAX: usize = batch::SUBJECT_MAX;

/// struct rec_recording (96 bytes), read by the BPF side.
#[repr(C)]
struct RecRecording {
    magic: AtomicU64,
    key: u64,
    recorder_key: u64,
    cap: u64,
    subject: UnsafeCell<[u8; SUBJECT_MAX]>,
}

/// struct rec_span (48 bytes), read by the BPF side.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RecSpan {
    meta: u64,
    recording_key: u64,
    recording: u64,
    parent: u64,
    prev: u64,
    entered: u64,
}

/// A process-unique key: a counter whose high 32 bits are a random salt
/// (include/recorder.h rec__next_key; the counter is the one C objects use).
fn next_key() -> u64 {
    let c = abi::key_counter();
    if c.load(Ordering::Relaxed) == 0 {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let local = 0u64;
        let mut salt = abi::rdtsc()
            ^ (t << 20)
            ^ ((&local as *const u64 as u64) >> 4)
            ^ (c as *const AtomicU64 as u64);
        salt = salt.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32;
        salt = (salt | 0x8000_0000) << 32;
        let _ = c.compare_exchange(0, salt | 1, Ordering::Relaxed, Ordering::Relaxed);
    }
    c.fetch_add(1, Ordering::Relaxed)
}

/// Fields past the 8th of events recorded while attached, left out.
static FIELDS_LEFT_OUT: AtomicU64 = AtomicU64::new(0);

/// How many fields (past the 8th of an event) this process has left out of
/// the events it recorded: the probe ABI carries at most 8.
pub fn fields_left_out() -> u64 {
    FIELDS_LEFT_OUT.load(Ordering::Relaxed)
}

/// True once recorder-attach has attached every probe of this program (it arms
/// the "attached" probe last); include/recorder.h `rec_is_attached()`.
pub fn is_attached() -> bool {
    if !abi::armed(Sema::Attached) {
        return false;
    }
    abi::probe_attached();
    abi::tracer() != 0
}

/// A recorder: it owns recordings and has a unique key. Install its
/// [`layer`](Recorder::layer) into the subscriber.
pub struct Recorder {
    key: u64,
}

impl Recorder {
    /// A new recorder with a unique key.
    pub fn new() -> Self {
        let key = next_key();
        if abi::armed(Sema::RecorderNew) {
            abi::probe_recorder_new(key);
        }
        Recorder { key }
    }

    pub fn key(&self) -> u64 {
        self.key
    }

    /// A new recording of this recorder that keeps the last cap events (cap > 1).
    pub fn record(&self, cap: usize) -> Recording {
        assert!(cap > 1, "capacity must be > 1");
        let rec = Box::into_raw(Box::new(RecRecording {
            magic: AtomicU64::new(0),
            key: next_key(),
            recorder_key: self.key,
            cap: cap as u64,
            subject: UnsafeCell::new([0; SUBJECT_MAX]),
        }));
        let r = Recording { rec, subject_lock: std::sync::Mutex::new(()) };
        r.state().magic.store(RECORDING_MAGIC, Ordering::Release);
        r.state().announce(Sema::RecordingNew, batch::BK_REC_NEW);
        r
    }

    /// The layer that emits the probe ABI; install it into the subscriber.
    pub fn layer(&self) -> RecorderLayer {
        RecorderLayer::new()
    }

    /// A subscriber of recorder's own, for a program that records with
    /// recorder alone: the layer's work without the registry under it
    /// (docs/probe-abi.md, "The subscriber"). Install it in place of a
    /// registry, `tracing::subscriber::set_global_default(recorder.subscriber())`.
    pub fn subscriber(&self) -> RecorderSubscriber {
        RecorderSubscriber::new()
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if abi::armed(Sema::RecorderFree) {
            abi::probe_recorder_free(self.key);
        }
    }
}

impl RecRecording {
    /// Fires a recording probe (new, span or free) or writes its batch record.
    fn announce(&self, sema: Sema, kind: u16) {
        if !abi::armed(sema) {
            return;
        }
        let at = self as *const RecRecording as u64;
        let w = [self.key, self.recorder_key, self.cap, at];
        if abi::batch_on() {
            if let Some(b) = batch::get(abi::current()) {
                // SAFETY: the subject is written only by span(), on this call's thread.
                batch::recording(b, kind, w, unsafe { &*self.subject.get() });
                return;
            }
        }
        // Its events this thread has pending go first.
        batch::sync();
        let subject = self.subject.get() as u64;
        match kind {
            batch::BK_REC_NEW => abi::probe_recording_new(self.key, self.recorder_key, self.cap, at),
            // The span's address is not read (docs/probe-abi.md): a span has a frame per enter.
            batch::BK_REC_SPAN => abi::probe_recording_span(self.key, at, subject, 0),
            _ => abi::probe_recording_free(self.key, at),
        }
    }
}

/// A recording: events inside its span are recorded into it. Dropping it
/// retires its key: its spans may live on, their events are then ignored.
pub struct Recording {
    rec: *mut RecRecording,
    /// Held while span() writes the subject and announces it: two threads
    /// making spans of one recording write it one after the other.
    subject_lock: std::sync::Mutex<()>,
}

// SAFETY: the recording is written only at its creation, by span() (its
// subject, as include/recorder.h does, under subject_lock) and at its drop.
unsafe impl Send for Recording {}
// SAFETY: as above.
unsafe impl Sync for Recording {}

thread_local! {
    /// The recording whose span this thread is creating: (key, address).
    static PENDING: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

impl Recording {
    fn state(&self) -> &RecRecording {
        // SAFETY: rec lives until drop.
        unsafe { &*self.rec }
    }

    pub fn key(&self) -> u64 {
        self.state().key
    }

    pub fn recorder_key(&self) -> u64 {
        self.state().recorder_key
    }

    /// The recording's span: a root span named `recording` with the fields
    /// recording, recorder and subject. It records nothing until entered. The
    /// subject (its first 63 bytes) labels the recording.
    pub fn span(&self, subject: &str) -> tracing::Span {
        let _subject = self.subject_lock.lock().unwrap_or_else(|p| p.into_inner());
        {
            // SAFETY: see Send above; the lock is held.
            let dst = unsafe { &mut *self.state().subject.get() };
            let b = subject.as_bytes();
            let n = b.iter().position(|&c| c == 0).unwrap_or(b.len()).min(SUBJECT_MAX - 1);
            dst[..n].copy_from_slice(&b[..n]);
            dst[n] = 0;
        }
        let _ = PENDING.try_with(|p| p.set((self.key(), self.rec as u64)));
        let span = tracing::span!(
            parent: None,
            Level::INFO,
            "recording",
            recording = self.key(),
            recorder = self.recorder_key(),
            subject = subject
        );
        let _ = PENDING.try_with(|p| p.set((0, 0)));
        span
    }

    /// Tells recorder-attach that something went wrong in this recording's
    /// story (its `code` trigger rules save a snapshot); include/recorder.h
    /// `rec_trigger()`. The reason's first 127 bytes are read.
    pub fn trigger(&self, reason: &str) {
        if !abi::armed(Sema::Trigger) {
            return;
        }
        batch::sync();
        let mut r = [0u8; 128];
        let b = reason.as_bytes();
        let n = b.len().min(127);
        r[..n].copy_from_slice(&b[..n]);
        abi::probe_trigger(self.key(), self.rec as u64, r.as_ptr() as u64);
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        // Cleared first: another thread's events of it, read later, are of a freed one.
        self.state().magic.store(0, Ordering::Release);
        self.state().announce(Sema::RecordingFree, batch::BK_REC_FREE);
        // SAFETY: made by Box::into_raw in record(), dropped once.
        drop(unsafe { Box::from_raw(self.rec) });
    }
}

/// The callsite of `Recording::span()`'s span (its Metadata's address), set at
/// the first one: a span of that callsite is a recording span if its id is in
/// the layer's table (or extensions).
static RECORDING_CALLSITE: AtomicU64 = AtomicU64::new(0);

fn is_recording_callsite(md: &'static Metadata<'static>) -> bool {
    md as *const Metadata<'static> as u64 == RECORDING_CALLSITE.load(Ordering::Relaxed)
}

/// A span named and targeted as `Recording::span()`'s (which one it is, its
/// recording says: see recording_span_of).
fn is_recording_span_md(md: &Metadata<'_>) -> bool {
    md.is_span() && md.name() == "recording" && md.target() == module_path!()
}

/// The recording (key, address) of a span being created if it is a recording
/// span: `Recording::span()`'s, running on this thread, for that recording (a
/// span made elsewhere with its name and fields is not one).
fn recording_span_of(attrs: &Attributes<'_>) -> Option<(u64, u64)> {
    let md = attrs.metadata();
    if !is_recording_span_md(md) {
        return None;
    }
    let mut v = KeyVisitor(None);
    attrs.record(&mut v);
    let (key, rec) = PENDING.try_with(|p| p.get()).unwrap_or((0, 0));
    if key == 0 || v.0 != Some(key) {
        return None;
    }
    RECORDING_CALLSITE.store(md as *const Metadata<'static> as u64, Ordering::Relaxed);
    Some((key, rec))
}

/// Announces the span of the recording at rec: `recording_span` or its record.
fn announce_recording_span(rec: u64) {
    // SAFETY: rec is the live recording whose span() call this is.
    // (Its span() holds the subject's lock on this thread.)
    let r = unsafe { &*(rec as *const RecRecording) };
    r.announce(Sema::RecordingSpan, batch::BK_REC_SPAN);
}

/// The blob a frame of a span of callsite md, in recording key, names.
fn span_meta(md: &'static Metadata<'static>, key: u64) -> u64 {
    if key != 0 && is_recording_callsite(md) {
        meta::RECORDING_SPAN.as_ptr() as u64
    } else {
        meta::blob(md).addr
    }
}

/// Picks the recording key out of a recording span's fields.
struct KeyVisitor(Option<u64>);

impl Visit for KeyVisitor {
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "recording" {
            self.0 = Some(value);
        }
    }
    fn record_debug(&mut self, _field: &Field, _value: &dyn std::fmt::Debug) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two ways to install recorder: the layer on a registry, and its own subscriber.
    fn both(recorder: &Recorder) -> [tracing::Dispatch; 2] {
        use tracing_subscriber::prelude::*;
        [
            tracing::Dispatch::new(tracing_subscriber::registry().with(recorder.layer())),
            tracing::Dispatch::new(recorder.subscriber()),
        ]
    }
    use crate::encode::MAX_FIELDS;
    use crate::layer::ROOT_SLOTS;

    #[test]
    fn target_objects_have_the_headers_layout() {
        assert_eq!(std::mem::size_of::<RecRecording>(), 96);
        assert_eq!(std::mem::size_of::<RecSpan>(), 48);
        let abi_h = include_str!("../../../bpf/recorder_abi_probe.h");
        let define = |name: &str| -> String {
            let pre = format!("#define {} ", name);
            let line = abi_h.lines().find(|l| l.starts_with(&pre)).expect(name);
            line[pre.len()..].split_whitespace().next().unwrap().to_string()
        };
        assert_eq!(define("REC_MAX_FIELDS"), MAX_FIELDS.to_string());
        assert_eq!(define("REC_SUBJECT_MAX"), SUBJECT_MAX.to_string());
        assert_eq!(define("REC_STR_MAX"), encode::STR_MAX.to_string());
        assert_eq!(define("REC_STR_AREA"), encode::STR_AREA.to_string());
        assert_eq!(define("REC_TBUF_SIZE"), batch::TBUF_SIZE.to_string());
        assert_eq!(define("REC_TBUF_HDR"), batch::TBUF_HDR.to_string());
        assert_eq!(define("REC_CALLSITE_MAX"), meta::BLOB_MAX.to_string());
        assert_eq!(define("REC_RECORDING_MAGIC"), format!("0x{:x}ULL", RECORDING_MAGIC));
        assert_eq!(define("REC_TBUF_MAGIC"), format!("0x{:x}ULL", batch::TBUF_MAGIC));
    }

    #[test]
    fn keys_are_unique_and_salted() {
        let a = next_key();
        let b = next_key();
        assert_ne!(a, b);
        assert_ne!(a >> 63, 0);
        assert_eq!(a >> 32, b >> 32);
    }

    #[test]
    fn detached_spans_keep_the_current_span() {
        let recorder = Recorder::new();
        let recording = recorder.record(4);
        for dispatch in both(&recorder) {
            detached_spans_keep_the_current_span_in(&recording, &dispatch);
        }
    }

    fn detached_spans_keep_the_current_span_in(recording: &Recording, dispatch: &tracing::Dispatch) {
        tracing::dispatcher::with_default(dispatch, || {
            assert_eq!(abi::current(), 0);
            let span = recording.span("s");
            let g = span.enter();
            let outer = abi::current();
            // SAFETY: the thread is in that frame.
            let f = unsafe { *(outer as *const RecSpan) };
            assert_eq!(f.recording_key, recording.key());
            {
                let child = tracing::info_span!("child");
                let _c = child.enter();
                // SAFETY: as above.
                let c = unsafe { *(abi::current() as *const RecSpan) };
                assert_eq!(c.recording_key, recording.key());
                assert_eq!(c.prev, outer as u64);
                let root = tracing::info_span!(parent: None, "elsewhere");
                let _r = root.enter();
                // SAFETY: as above.
                let r = unsafe { *(abi::current() as *const RecSpan) };
                assert_eq!(r.recording_key, 0);
            }
            assert_eq!(abi::current(), outer);
            drop(g);
            assert_eq!(abi::current(), 0);
        });
    }

    #[test]
    fn an_exit_on_another_thread_leaves_both_chains() {
        let recorder = Recorder::new();
        let recording = recorder.record(4);
        for dispatch in both(&recorder) {
            an_exit_on_another_thread_leaves_both_chains_in(&recording, dispatch);
        }
    }

    fn an_exit_on_another_thread_leaves_both_chains_in(recording: &Recording, dispatch: tracing::Dispatch) {
        tracing::dispatcher::with_default(&dispatch, || {
            let root = recording.span("s");
            let _in = root.enter();
            let span = tracing::info_span!("shared");
            let id = span.id().unwrap();
            dispatch.enter(&id);
            let here = abi::current();
            // SAFETY: the thread is in that frame.
            assert_eq!(unsafe { (*(here as *const RecSpan)).recording_key }, recording.key());
            let (d, i) = (dispatch.clone(), id.clone());
            let there = std::thread::spawn(move || {
                tracing::dispatcher::with_default(&d, || {
                    let other = tracing::info_span!("other");
                    let _o = other.enter();
                    let before = abi::current();
                    // An exit of a span this thread never entered.
                    d.exit(&i);
                    before == abi::current() && before != 0
                })
            })
            .join()
            .unwrap();
            assert!(there, "the other thread's chain changed");
            assert_eq!(abi::current(), here, "this thread's chain changed");
            dispatch.exit(&id);
            assert_ne!(abi::current(), here);
        });
    }

    #[test]
    fn two_layers_in_one_subscriber_do_not_panic() {
        use tracing_subscriber::prelude::*;
        let (a, b) = (Recorder::new(), Recorder::new());
        let recording = a.record(4);
        let sub = tracing_subscriber::registry().with(a.layer()).with(b.layer());
        tracing::subscriber::with_default(sub, || {
            let span = recording.span("s");
            let _in = span.enter();
            let _c = tracing::info_span!("child").entered();
            tracing::info!("x");
        });
    }

    /// The recording of the span this thread is in.
    fn current_key() -> u64 {
        // SAFETY: the thread is in that frame.
        unsafe { (*(abi::current() as *const RecSpan)).recording_key }
    }

    #[test]
    fn a_span_keeps_the_recording_it_was_created_in() {
        let recorder = Recorder::new();
        let (a, b) = (recorder.record(4), recorder.record(4));
        for dispatch in both(&recorder) {
            a_span_keeps_the_recording_it_was_created_in_by(&a, &b, &dispatch);
        }
    }

    fn a_span_keeps_the_recording_it_was_created_in_by(a: &Recording, b: &Recording, dispatch: &tracing::Dispatch) {
        tracing::dispatcher::with_default(dispatch, || {
            let (child, grandchild) = {
                let sa = a.span("a");
                let _in = sa.enter();
                let child = tracing::info_span!("child");
                let grandchild = child.in_scope(|| tracing::info_span!("grandchild"));
                (child, grandchild)
            };
            // Entered later, inside another recording, and its parent not entered.
            let sb = b.span("b");
            let _in = sb.enter();
            assert_eq!(current_key(), b.key());
            grandchild.in_scope(|| assert_eq!(current_key(), a.key()));
            child.in_scope(|| {
                assert_eq!(current_key(), a.key());
                let late = tracing::info_span!("late");
                late.in_scope(|| assert_eq!(current_key(), a.key()));
            });
            tracing::info_span!("of b").in_scope(|| assert_eq!(current_key(), b.key()));
            tracing::info_span!(parent: None, "root").in_scope(|| assert_eq!(current_key(), 0));
        });
    }

    #[test]
    fn a_span_made_in_a_span_entered_again_is_the_registry_parents() {
        use tracing_subscriber::prelude::*;
        let recorder = Recorder::new();
        let (a, b) = (recorder.record(4), recorder.record(4));
        let dispatch =
            tracing::Dispatch::new(tracing_subscriber::registry().with(recorder.layer()));
        tracing::dispatcher::with_default(&dispatch, || {
            let sa = a.span("a");
            let _ina = sa.enter();
            let sb = b.span("b");
            let _inb = sb.enter();
            let _again = sa.enter();
            assert_eq!(current_key(), a.key());
            // The registry's current span skips a span entered again: c's parent is b's span.
            let c = tracing::info_span!("c");
            // Entered here (what the thread noted at c's creation) and on another
            // thread (the walk up the registry's parents): b's, both.
            c.in_scope(|| assert_eq!(current_key(), b.key()));
            let (d, c2, bk) = (dispatch.clone(), c.clone(), b.key());
            let there = std::thread::spawn(move || {
                tracing::dispatcher::with_default(&d, || c2.in_scope(current_key)) == bk
            });
            assert!(there.join().unwrap(), "entered on another thread, c is not b's");
        });
    }

    #[test]
    fn the_subscribers_level_spares_recording_spans() {
        let recorder = Recorder::new();
        let recording = recorder.record(4);
        let sub = recorder.subscriber().with_max_level(Level::WARN);
        tracing::subscriber::with_default(sub, || {
            let span = recording.span("r");
            assert!(!span.is_disabled(), "the recording span is disabled");
            span.in_scope(|| {
                assert_eq!(current_key(), recording.key());
                assert!(tracing::info_span!("info").is_disabled());
                let warn = tracing::warn_span!("warn");
                assert!(!warn.is_disabled());
                warn.in_scope(|| assert_eq!(current_key(), recording.key()));
            });
        });
    }

    #[test]
    fn recording_spans_past_the_table_keep_their_recording() {
        use tracing_subscriber::prelude::*;
        let recorder = Recorder::new();
        let sub = tracing_subscriber::registry().with(recorder.layer());
        tracing::subscriber::with_default(sub, || {
            // More live recording spans than the table has slots: full
            // buckets send some to the registry's extensions.
            let n = ROOT_SLOTS + ROOT_SLOTS / 4;
            let recs: Vec<Recording> = (0..n).map(|_| recorder.record(2)).collect();
            let spans: Vec<tracing::Span> = recs.iter().map(|r| r.span("r")).collect();
            for (r, s) in recs.iter().zip(&spans) {
                s.in_scope(|| {
                    assert_eq!(current_key(), r.key());
                    tracing::info_span!("child").in_scope(|| assert_eq!(current_key(), r.key()));
                });
            }
        });
    }
}
