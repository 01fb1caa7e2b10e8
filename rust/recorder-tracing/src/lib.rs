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
mod meta;

use std::cell::{Cell, RefCell, UnsafeCell};
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::{LookupSpan, SpanRef};

use abi::Sema;
use batch::Val;
use encode::{StrBuf, MAX_FIELDS, TYPE_BOOL, TYPE_F64, TYPE_I64, TYPE_STR, TYPE_U64};

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
        r.announce(Sema::RecordingNew, batch::BK_REC_NEW, 0);
        r
    }

    /// The layer that emits the probe ABI; install it into the subscriber.
    pub fn layer(&self) -> RecorderLayer {
        RecorderLayer { roots: Roots::new() }
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

    /// Fires a recording probe (new, span or free) or writes its batch record.
    fn announce(&self, sema: Sema, kind: u16, span: u64) {
        if !abi::armed(sema) {
            return;
        }
        let s = self.state();
        let w = [s.key, s.recorder_key, s.cap, self.rec as u64];
        if abi::batch_on() {
            if let Some(b) = batch::get(abi::current()) {
                // SAFETY: the subject is written only by span(), on this call's thread.
                batch::recording(b, kind, w, unsafe { &*s.subject.get() });
                return;
            }
        }
        // Its events this thread has pending go first.
        batch::sync();
        let subject = s.subject.get() as u64;
        match kind {
            batch::BK_REC_NEW => abi::probe_recording_new(s.key, s.recorder_key, s.cap, w[3]),
            batch::BK_REC_SPAN => abi::probe_recording_span(s.key, w[3], subject, span),
            _ => abi::probe_recording_free(s.key, w[3]),
        }
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
        self.announce(Sema::RecordingFree, batch::BK_REC_FREE, 0);
        // SAFETY: made by Box::into_raw in record(), dropped once.
        drop(unsafe { Box::from_raw(self.rec) });
    }
}

/// The recording spans a layer knows: span id -> (recording key, address).
/// A fixed table made with the layer, in buckets of 8 ids (a cache line or
/// two): a span's recording is found from its root at each enter, so no other
/// span keeps anything, and no span or event allocates. A recording span
/// whose bucket is full keeps its recording in the registry's extensions of
/// that span instead (one allocation, never a loss).
struct Roots {
    ids: Box<[AtomicU64]>,
    vals: Box<[(AtomicU64, AtomicU64)]>,
}

const ROOT_SLOTS: usize = 4096;
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

/// The callsite of `Recording::span()`'s span (its Metadata's address), set at
/// the first one: a span of that callsite is a recording span if its id is in
/// the layer's table (or extensions).
static RECORDING_CALLSITE: AtomicU64 = AtomicU64::new(0);

fn is_recording_callsite(md: &'static Metadata<'static>) -> bool {
    md as *const Metadata<'static> as u64 == RECORDING_CALLSITE.load(Ordering::Relaxed)
}

/// What an exit of a span this thread is not in names: a struct that no
/// thread's chain holds, which the BPF side counts as unmatched.
static UNMATCHED: RecSpan =
    RecSpan { meta: 0, recording_key: 0, recording: 0, parent: 0, prev: 0, entered: 0 };

/// The frames of the spans this thread is in (a span entered on several
/// threads at once has a frame on each), and frames to reuse.
struct Frames {
    entered: Vec<(u64, *mut RecSpan)>,
    free: Vec<*mut RecSpan>,
}

impl Drop for Frames {
    fn drop(&mut self) {
        for f in self.free.drain(..) {
            // SAFETY: made by Box::into_raw in on_enter, on no chain any more.
            drop(unsafe { Box::from_raw(f) });
        }
        // Frames still entered stay: a chain may still point at them.
    }
}

thread_local! {
    static FRAMES: RefCell<Frames> = const {
        RefCell::new(Frames { entered: Vec::new(), free: Vec::new() })
    };
}

/// Frames kept for reuse per thread.
const FREE_MAX: usize = 64;

/// Takes frame f off this thread's chain of spans (include/recorder.h rec__span_unlink).
///
/// # Safety
/// The chain from `rec__current` holds valid spans.
unsafe fn unlink(f: *mut RecSpan) {
    let mut cur = abi::current() as *mut RecSpan;
    if cur == f {
        abi::set_current((*f).prev as usize);
    } else {
        let mut inner: *mut RecSpan = std::ptr::null_mut();
        while !cur.is_null() && cur != f {
            inner = cur;
            cur = (*cur).prev as *mut RecSpan;
        }
        if cur == f {
            if inner.is_null() {
                abi::set_current((*f).prev as usize);
            } else {
                (*inner).prev = (*f).prev;
            }
        }
    }
    if (*f).entered > 0 {
        (*f).entered -= 1;
    }
}

/// The layer: it emits recorder's probe ABI for the spans and events of the
/// subscriber it is installed in. Install one per subscriber.
pub struct RecorderLayer {
    roots: Roots,
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

/// An event's fields as the probe carries them.
struct Fields {
    md: &'static Metadata<'static>,
    /// Fields the event carries: its callsite's, at most 8.
    n: usize,
    types: u64,
    vals: [u64; MAX_FIELDS],
    strs: [StrBuf; MAX_FIELDS],
}

impl Fields {
    /// The event's fields, in its callsite's order: the first 8 of them, a
    /// field left unrecorded a NULL string (the types end at the first 0).
    fn of(event: &Event<'_>) -> Fields {
        let md = event.metadata();
        let n = md.fields().len().min(MAX_FIELDS);
        let mut f = Fields { md, n, types: 0, vals: [0; MAX_FIELDS], strs: [NO_STR; MAX_FIELDS] };
        event.record(&mut f);
        for i in 0..n {
            if encode::type_of(f.types, i) == 0 {
                f.types = encode::types_set(f.types, i, TYPE_STR);
                f.vals[i] = 0;
            }
        }
        f
    }

    /// The field's place in the callsite, if it is one of the first 8.
    fn slot(&mut self, field: &Field, t: u64) -> Option<usize> {
        let i = self.md.fields().iter().take(MAX_FIELDS).position(|f| f == *field)?;
        self.types = encode::types_set(self.types, i, t);
        Some(i)
    }

    fn word(&mut self, field: &Field, t: u64, v: u64) {
        if let Some(i) = self.slot(field, t) {
            self.vals[i] = v;
        }
    }

    fn text(&mut self, field: &Field, f: &dyn Fn(&mut StrBuf) -> std::fmt::Result) {
        if let Some(i) = self.slot(field, TYPE_STR) {
            self.vals[i] = 1;
            self.strs[i].format(f);
        }
    }
}

impl Visit for Fields {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.word(field, TYPE_I64, value as u64);
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.word(field, TYPE_U64, value);
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.word(field, TYPE_F64, value.to_bits());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.word(field, TYPE_BOOL, value as u64);
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.text(field, &|w| w.write_str(value));
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.text(field, &|w| write!(w, "{}", value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.text(field, &|w| write!(w, "{:?}", value));
    }
}

const NO_STR: StrBuf = StrBuf::new();

impl RecorderLayer {
    /// Emits an event of recording key, in span (a struct rec_span's address).
    #[inline(never)]
    fn emit(&self, event: &Event<'_>, key: u64, span: u64, rec: u64) {
        let blob = meta::blob(event.metadata());
        if blob.dropped != 0 {
            FIELDS_LEFT_OUT.fetch_add(blob.dropped as u64, Ordering::Relaxed);
        }
        let mut f = Fields::of(event);
        let n = f.n;
        let head = [blob.addr, f.types, key, span, rec];
        if abi::batch_on() {
            if let Some(b) = batch::get(abi::current()) {
                let mut vals = [
                    Val::Word(0),
                    Val::Word(0),
                    Val::Word(0),
                    Val::Word(0),
                    Val::Word(0),
                    Val::Word(0),
                    Val::Word(0),
                    Val::Word(0),
                ];
                for i in 0..n {
                    vals[i] = if encode::type_of(f.types, i) != TYPE_STR {
                        Val::Word(f.vals[i])
                    } else if f.vals[i] == 0 {
                        Val::Str(None)
                    } else {
                        Val::Str(Some(f.strs[i].bytes()))
                    };
                }
                batch::event(b, head, &vals[..n]);
                // A new callsite's blob is on the heap: hand its first event
                // over now, so that recorder-attach reads the blob while the
                // process lives (docs/probe-abi.md, "The Rust emitter").
                if blob.first_named() {
                    batch::flush(b);
                }
                return;
            }
        }
        for i in 0..n {
            if encode::type_of(f.types, i) == TYPE_STR && f.vals[i] != 0 {
                f.vals[i] = f.strs[i].c_ptr();
            }
        }
        abi::probe_event(blob.addr, f.types, key, span, &f.vals);
    }
}

impl RecorderLayer {
    /// The recording of a span (key and address; 0 for none): a recording
    /// span's own; any other span's parent's, as the header's spans inherit
    /// their contextual parent's at creation, the registry's parent of a span
    /// being that. A parent entered on this thread (`entered`, its frames) has
    /// it in its frame; else the walk goes on to the root.
    fn recording_of<S>(&self, span: SpanRef<'_, S>, entered: &[(u64, *mut RecSpan)]) -> (u64, u64)
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
            let id = s.id().into_u64();
            if let Some(e) = entered.iter().rev().find(|e| e.0 == id) {
                // SAFETY: a frame on this thread's chain.
                return unsafe { ((*e.1).recording_key, (*e.1).recording) };
            }
        }
    }

    /// on_event's work once the event probe is armed.
    #[inline(never)]
    fn on_event_armed<S>(&self, event: &Event<'_>, ctx: Context<'_, S>)
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        if let Some(pid) = event.parent() {
            // An explicit parent: its recording, whatever this thread is in.
            if let Some(span) = ctx.span(pid) {
                let id = pid.into_u64();
                let got = FRAMES.try_with(|frames| {
                    let frames = frames.try_borrow().ok()?;
                    // In this thread's frame of it if it is entered here, else
                    // in the thread's current span (only a chain's stack is seeded).
                    Some(match frames.entered.iter().rev().find(|e| e.0 == id) {
                        // SAFETY: a frame on this thread's chain.
                        Some(e) => unsafe { ((*e.1).recording_key, (*e.1).recording, e.1 as u64) },
                        None => {
                            let (k, rec) = self.recording_of(span, &frames.entered);
                            (k, rec, abi::current() as u64)
                        }
                    })
                });
                if let Ok(Some((k, rec, at))) = got {
                    if k != 0 {
                        self.emit(event, k, at, rec);
                    }
                }
            }
            return;
        }
        if event.is_root() {
            return;
        }
        let cur = abi::current();
        if cur == 0 {
            return;
        }
        // SAFETY: rec__current is a valid struct rec_span while the thread is in it.
        let s = unsafe { *(cur as *const RecSpan) };
        if s.recording_key != 0 {
            self.emit(event, s.recording_key, cur as u64, s.recording);
        }
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

    /// Only a recording span is kept (in the layer's table): any other span's
    /// recording is its parent's, found at its enters.
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let md = attrs.metadata();
        if md.name() != "recording" || md.target() != module_path!() {
            return;
        }
        let mut v = KeyVisitor(None);
        attrs.record(&mut v);
        let (key, rec) = PENDING.try_with(|p| p.get()).unwrap_or((0, 0));
        if key == 0 || v.0 != Some(key) {
            return;
        }
        RECORDING_CALLSITE.store(md as *const Metadata<'static> as u64, Ordering::Relaxed);
        if !self.roots.insert(id.into_u64(), key, rec) {
            match ctx.span(id) {
                // replace, not insert (which panics on a second one): two
                // recorder layers in one subscriber emit twice (documented), but run.
                Some(span) => span.extensions_mut().replace(RootRec { key, rec }),
                None => return,
            };
        }
        // SAFETY: rec is the live recording whose span() call this is.
        // (Its span() holds the subject's lock on this thread.)
        let r = std::mem::ManuallyDrop::new(Recording {
            rec: rec as *mut RecRecording,
            subject_lock: std::sync::Mutex::new(()),
        });
        r.announce(Sema::RecordingSpan, batch::BK_REC_SPAN, 0);
    }

    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
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
        let span = match ctx.span(id) {
            Some(s) => s,
            None => return,
        };
        let md = span.metadata();
        let _ = FRAMES.try_with(|frames| {
            let mut frames = match frames.try_borrow_mut() {
                Ok(f) => f,
                Err(_) => return,
            };
            let (recording_key, recording) = self.recording_of(span, &frames.entered);
            let meta = if recording_key != 0 && is_recording_callsite(md) {
                meta::RECORDING_SPAN.as_ptr() as u64
            } else {
                meta::blob(md).addr
            };
            let mut fr = RecSpan { meta, recording_key, recording, ..RecSpan::default() };
            let f =
                frames.free.pop().unwrap_or_else(|| Box::into_raw(Box::new(RecSpan::default())));
            let armed = abi::armed(Sema::SpanEnter);
            let b = if armed && abi::batch_on() { batch::get(abi::current()) } else { None };
            fr.prev = abi::current() as u64;
            fr.entered = 1;
            // SAFETY: f is this thread's frame, on no chain.
            unsafe { *f = fr };
            abi::set_current(f as usize);
            frames.entered.push((id.into_u64(), f));
            if armed {
                let (fa, m, k, p) = (f as u64, fr.meta, fr.recording_key, fr.prev);
                match b {
                    Some(b) => batch::span(b, batch::BK_ENTER, [fa, m, k, p]),
                    None => abi::probe_span_enter(fa, m, k, fr.recording, p),
                }
            }
        });
    }

    fn on_exit(&self, id: &Id, _ctx: Context<'_, S>) {
        let idv = id.into_u64();
        let _ = FRAMES.try_with(|frames| {
            let mut frames = match frames.try_borrow_mut() {
                Ok(f) => f,
                Err(_) => return,
            };
            let armed = abi::armed(Sema::SpanExit);
            let at = frames.entered.iter().rposition(|e| e.0 == idv);
            let f = match at {
                Some(i) => frames.entered.remove(i).1,
                None => {
                    // Not entered on this thread: the chain stays as it is; the
                    // BPF side counts the exit as unmatched.
                    if armed {
                        exit_unmatched();
                    }
                    return;
                }
            };
            let b = if armed && abi::batch_on() { batch::get(abi::current()) } else { None };
            // SAFETY: f is on this thread's chain, which holds valid spans.
            let fr = unsafe {
                unlink(f);
                *f
            };
            if armed {
                let cur = abi::current() as u64;
                match b {
                    Some(b) => batch::span(b, batch::BK_EXIT, [f as u64, cur, 0, 0]),
                    None => abi::probe_span_exit(f as u64, fr.recording_key, fr.recording, cur),
                }
            }
            if frames.free.len() < FREE_MAX {
                frames.free.push(f);
            } else {
                // SAFETY: made by Box::into_raw in on_enter, on no chain any more.
                drop(unsafe { Box::from_raw(f) });
            }
        });
    }
}

/// The exit of a span this thread is not in: a struct that no thread's stack
/// holds (include/recorder.h fires the same probe for a span it is not in).
fn exit_unmatched() {
    let at = &UNMATCHED as *const RecSpan as u64;
    let cur = abi::current() as u64;
    if abi::batch_on() {
        if let Some(b) = batch::get(abi::current()) {
            batch::span(b, batch::BK_EXIT, [at, cur, 0, 0]);
            return;
        }
    }
    abi::probe_span_exit(at, 0, 0, cur);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_objects_have_the_headers_layout() {
        assert_eq!(std::mem::size_of::<RecRecording>(), 96);
        assert_eq!(std::mem::size_of::<RecSpan>(), 48);
        let abi_h = include_str!("../../../bpf/recorder_abi.h");
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
        use tracing_subscriber::prelude::*;
        let recorder = Recorder::new();
        let recording = recorder.record(4);
        let sub = tracing_subscriber::registry().with(recorder.layer());
        tracing::subscriber::with_default(sub, || {
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

    thread_local! {
        static LEFT_OUT: std::cell::Cell<usize> = std::cell::Cell::new(0);
    }

    /// A layer that keeps what Fields::of makes of each event.
    struct Capture(std::sync::Arc<std::sync::Mutex<Vec<(u64, Vec<u64>, Vec<Vec<u8>>)>>>);

    impl<S: Subscriber> Layer<S> for Capture {
        fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
            let f = Fields::of(event);
            LEFT_OUT.with(|l| l.set(meta::build(event.metadata()).1));
            let strs = f.strs.iter().take(f.n).map(|s| s.bytes().to_vec()).collect();
            self.0.lock().unwrap().push((f.types, f.vals[..f.n].to_vec(), strs));
        }
    }

    fn capture(f: impl FnOnce()) -> Vec<(u64, Vec<u64>, Vec<Vec<u8>>)> {
        use tracing_subscriber::prelude::*;
        let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sub = tracing_subscriber::registry().with(Capture(got.clone()));
        tracing::subscriber::with_default(sub, f);
        let v = got.lock().unwrap().clone();
        v
    }

    #[test]
    fn fields_are_typed_in_callsite_order() {
        let err = std::io::Error::new(std::io::ErrorKind::Other, "disk full");
        let got = capture(|| {
            tracing::info!(
                a = -3i64,
                b = 7u64,
                c = 0.5f64,
                d = true,
                e = "text",
                f = ?(1, 2),
                g = &err as &dyn std::error::Error,
                "hello {}",
                "world"
            )
        });
        let (types, vals, strs) = &got[0];
        // message first: tracing puts it before the named fields.
        assert_eq!(*types, 0x1115_4321);
        assert_eq!(strs[0], b"hello world");
        assert_eq!(vals[1], -3i64 as u64);
        assert_eq!(vals[2], 7);
        assert_eq!(vals[3], 0.5f64.to_bits());
        assert_eq!(vals[4], 1);
        assert_eq!(strs[5], b"text");
        assert_eq!(strs[6], b"(1, 2)");
        assert_eq!(strs[7], b"disk full");
    }

    #[test]
    fn an_event_keeps_its_first_8_fields() {
        let got = capture(|| {
            tracing::info!(a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8, i = 9, "ten")
        });
        let (types, vals, strs) = &got[0];
        assert_eq!(*types, 0x2222_2221);
        assert_eq!(strs[0], b"ten");
        assert_eq!(vals[1..], [1, 2, 3, 4, 5, 6, 7]);
        // The message and a..g are kept; h and i are counted as left out.
        assert_eq!(LEFT_OUT.with(|l| l.get()), 2);
    }

    #[test]
    fn a_panicking_field_leaves_the_event_and_the_program() {
        struct Panics;
        impl std::fmt::Display for Panics {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("half")?;
                panic!("a Display that panics");
            }
        }
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let got = capture(|| tracing::info!(p = %Panics, after = 1u64, "bad"));
        std::panic::set_hook(prev);
        let (types, vals, strs) = &got[0];
        assert_eq!(*types, 0x311);
        assert_eq!(strs[1], b"half<panicked>");
        assert_eq!(vals[2], 1);
    }

    #[test]
    fn an_exit_on_another_thread_leaves_both_chains() {
        use tracing_subscriber::prelude::*;
        let recorder = Recorder::new();
        let recording = recorder.record(4);
        let dispatch =
            tracing::Dispatch::new(tracing_subscriber::registry().with(recorder.layer()));
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
        use tracing_subscriber::prelude::*;
        let recorder = Recorder::new();
        let (a, b) = (recorder.record(4), recorder.record(4));
        let sub = tracing_subscriber::registry().with(recorder.layer());
        tracing::subscriber::with_default(sub, || {
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

    #[test]
    fn out_of_order_exits_unlink() {
        let mut a = RecSpan { entered: 1, ..RecSpan::default() };
        let mut b = RecSpan { entered: 1, ..RecSpan::default() };
        let pa = &mut a as *mut RecSpan;
        let pb = &mut b as *mut RecSpan;
        b.prev = pa as u64;
        abi::set_current(pb as usize);
        // SAFETY: a chain of two valid spans.
        unsafe { unlink(pa) };
        assert_eq!(abi::current(), pb as usize);
        assert_eq!(b.prev, 0);
        // SAFETY: as above.
        unsafe { unlink(pb) };
        assert_eq!(abi::current(), 0);
        // Not on the chain: nothing changes.
        let mut c = RecSpan::default();
        // SAFETY: as above.
        unsafe { unlink(&mut c) };
        assert_eq!(abi::current(), 0);
    }
}
