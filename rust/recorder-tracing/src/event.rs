// SPDX-License-Identifier: MIT
//! An event's fields as the probe carries them, and its probe or batch record:
//! the layer and the subscriber both emit events through here.

use std::fmt::Write;
use std::sync::atomic::Ordering;

use tracing::field::{Field, Visit};
use tracing::{Event, Metadata};

use crate::abi;
use crate::batch::{self, Val};
use crate::encode::{
    self, StrCut, Strs, MAX_FIELDS, TYPE_BOOL, TYPE_F64, TYPE_I64, TYPE_STR, TYPE_U64,
};
use crate::frames;
use crate::meta;
use crate::FIELDS_LEFT_OUT;

/// An event's fields as the probe carries them.
struct Fields {
    md: &'static Metadata<'static>,
    /// Fields the event carries: its callsite's, at most 8.
    n: usize,
    /// Each field's type, 0 until it is recorded (the probe's types word, unpacked).
    kinds: [u8; MAX_FIELDS],
    vals: [u64; MAX_FIELDS],
    strs: Strs,
}

impl Fields {
    /// Room for the fields of an event of callsite md: none recorded yet.
    #[inline(always)]
    fn new(md: &'static Metadata<'static>) -> Fields {
        let n = md.fields().len().min(MAX_FIELDS);
        Fields { md, n, kinds: [0; MAX_FIELDS], vals: [0; MAX_FIELDS], strs: Strs::new() }
    }

    /// The event's fields, in its callsite's order: the first 8 of them, a
    /// field left unrecorded a NULL string (the types end at the first 0).
    /// Recorded where the Fields lie: they are not moved after (2 KiB).
    #[inline(always)]
    fn record(&mut self, event: &Event<'_>) {
        event.record(self);
        for i in 0..self.n {
            if self.kinds[i] == 0 {
                self.kinds[i] = TYPE_STR as u8;
                self.vals[i] = 0;
            }
        }
    }

    /// The probe's types word: field i's type in bits 4i..4i+3.
    fn types(&self) -> u64 {
        (0..self.n).fold(0, |t, i| encode::types_set(t, i, self.kinds[i] as u64))
    }

    /// Field i is a string (recorded as one, or not recorded).
    fn is_str(&self, i: usize) -> bool {
        self.kinds[i] == TYPE_STR as u8
    }

    /// The field's place in the callsite, if it is one of the first 8.
    fn slot(&mut self, field: &Field, t: u64) -> Option<usize> {
        let i = self.md.fields().iter().take(MAX_FIELDS).position(|f| f == *field)?;
        self.kinds[i] = t as u8;
        Some(i)
    }

    fn word(&mut self, field: &Field, t: u64, v: u64) {
        if let Some(i) = self.slot(field, t) {
            self.vals[i] = v;
        }
    }

    fn text(&mut self, field: &Field, f: &dyn Fn(&mut StrCut) -> std::fmt::Result) {
        if let Some(i) = self.slot(field, TYPE_STR) {
            self.vals[i] = 1;
            self.strs.format(i, f);
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
        if let Some(i) = self.slot(field, TYPE_STR) {
            self.vals[i] = 1;
            self.strs.copy(i, value);
        }
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.text(field, &|w| write!(w, "{}", value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.text(field, &|w| write!(w, "{:?}", value));
    }
}

/// Emits an event of recording key, in span (a struct rec_span's address).
#[inline(never)]
pub(crate) fn emit(event: &Event<'_>, key: u64, span: u64, rec: u64) {
    let blob = meta::blob(event.metadata());
    if blob.dropped != 0 {
        FIELDS_LEFT_OUT.fetch_add(blob.dropped as u64, Ordering::Relaxed);
    }
    let mut f = Fields::new(event.metadata());
    f.record(event);
    let n = f.n;
    let types = f.types();
    let head = [blob.addr, types, key, span, rec];
    if abi::batch_on() {
        if let Some(b) = batch::get(abi::current()) {
            let f = &f;
            batch::event(b, head, n, |i| {
                if !f.is_str(i) {
                    Val::Word(f.vals[i])
                } else if f.vals[i] == 0 {
                    Val::Str(None)
                } else {
                    Val::Str(Some(f.strs.bytes(i)))
                }
            });
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
        if f.is_str(i) && f.vals[i] != 0 {
            f.vals[i] = f.strs.c_ptr(i);
        }
    }
    abi::probe_event(blob.addr, types, key, span, &f.vals);
}

/// Emits an event with no explicit parent into the recording of the thread's
/// current span (as the header: a Rust event inside a C span goes to the C
/// span's recording); `parent: None` into none.
pub(crate) fn emit_in_current(event: &Event<'_>) {
    if event.is_root() {
        return;
    }
    let (key, rec) = frames::chain_recording();
    if key != 0 {
        emit(event, key, abi::current() as u64, rec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::Subscriber;
    use tracing_subscriber::layer::{Context, Layer};

    thread_local! {
        static LEFT_OUT: std::cell::Cell<usize> = std::cell::Cell::new(0);
    }

    /// A layer that keeps what Fields makes of each event.
    struct Capture(std::sync::Arc<std::sync::Mutex<Vec<(u64, Vec<u64>, Vec<Vec<u8>>)>>>);

    impl<S: Subscriber> Layer<S> for Capture {
        fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
            let mut f = Fields::new(event.metadata());
            f.record(event);
            LEFT_OUT.with(|l| l.set(meta::build(event.metadata()).1));
            let strs = (0..f.n).map(|i| f.strs.bytes(i).to_vec()).collect();
            self.0.lock().unwrap().push((f.types(), f.vals[..f.n].to_vec(), strs));
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
}
