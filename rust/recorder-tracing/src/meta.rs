// SPDX-License-Identifier: MIT
//! Callsite metadata blobs (docs/probe-abi.md, "Callsite metadata"), made from
//! tracing's static `Metadata` once per callsite, when tracing registers the
//! callsite with the subscriber (where tracing itself allocates), and kept for
//! the life of the process: probes pass their addresses, as the header's pass
//! the addresses of its literals. A span or an event never makes one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

use tracing::Metadata;

use crate::encode::{level, MAX_FIELDS};

/// The longest blob recorder-attach reads (REC_CALLSITE_MAX).
pub const BLOB_MAX: usize = 2048;

/// The recording span's callsite, in the image's read-only data as the header's
/// literals are: the black box names the spans a process died in from the
/// file once the process is gone, and a blob on the heap is gone with it.
pub static RECORDING_SPAN: &[u8] = concat!(
    "RCS1\0",
    "S\0",
    "2\0",
    "recording\0",
    "recorder_tracing\0",
    "recorder_tracing\0",
    "0\0",
    "\0",
    "3\0",
    "recording\0",
    "recorder\0",
    "subject\0"
)
.as_bytes();

/// A string of the blob: cut at a NUL (it would end the field) and at max bytes.
fn push_str(out: &mut Vec<u8>, s: &str, max: usize) {
    let b = s.as_bytes();
    let mut n = b.iter().position(|&c| c == 0).unwrap_or(b.len()).min(max);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    out.extend_from_slice(&b[..n]);
    out.push(0);
}

/// The blob of a callsite, and how many of its fields it leaves out (past the 8th).
pub fn build(meta: &Metadata<'_>) -> (Vec<u8>, usize) {
    let mut b = Vec::with_capacity(256);
    let fields = meta.fields();
    let n = fields.len().min(MAX_FIELDS);

    b.extend_from_slice(b"RCS1\0");
    b.extend_from_slice(if meta.is_span() { b"S\0" } else { b"E\0" });
    b.push(b'0' + level(meta.level()));
    b.push(0);
    // 3 strings of 400 and 8 names of 80, with the rest: under BLOB_MAX.
    push_str(&mut b, meta.name(), 400);
    push_str(&mut b, meta.target(), 400);
    push_str(&mut b, meta.file().unwrap_or(""), 400);
    push_str(&mut b, &meta.line().unwrap_or(0).to_string(), 16);
    // The message is a field of tracing's events (the header's printf form).
    b.push(0);
    // Fields past the 8th: "8+M", so that recorder-attach counts them (docs/probe-abi.md).
    let left_out = fields.len() - n;
    if left_out > 0 {
        push_str(&mut b, &format!("{}+{}", n, left_out), 16);
    } else {
        push_str(&mut b, &n.to_string(), 4);
    }
    for f in fields.iter().take(n) {
        push_str(&mut b, f.name(), 80);
    }
    debug_assert!(b.len() <= BLOB_MAX);
    (b, left_out)
}

/// A callsite's blob, made once.
#[derive(Clone, Copy)]
pub struct Blob {
    pub addr: u64,
    /// Fields of the callsite past the 8th, which its events leave out.
    pub dropped: u32,
    /// Set by the first event that names the blob in a record.
    named: &'static AtomicBool,
}

impl Blob {
    /// True for the first event to name the blob: no record has named it yet.
    pub fn first_named(&self) -> bool {
        !self.named.load(Ordering::Relaxed) && !self.named.swap(true, Ordering::Relaxed)
    }
}

static BLOBS: RwLock<Option<HashMap<usize, Blob>>> = RwLock::new(None);

/// Blobs a thread found last, by callsite address.
const CACHE: usize = 64;
thread_local! {
    static RECENT: std::cell::RefCell<[Option<(usize, Blob)>; CACHE]> =
        const { std::cell::RefCell::new([None; CACHE]) };
}

/// Makes the blob of the callsite of meta, once: tracing registers a callsite
/// with each subscriber (and again with one installed later), before its
/// first span or event.
pub fn register(meta: &'static Metadata<'static>) {
    let k = meta as *const Metadata<'static> as usize;
    if shared(k).is_some() {
        return;
    }
    let (bytes, dropped) = build(meta);
    let mut m = match BLOBS.write() {
        Ok(m) => m,
        Err(p) => p.into_inner(),
    };
    let map = m.get_or_insert_with(HashMap::new);
    map.entry(k).or_insert_with(|| Blob {
        addr: Box::leak(bytes.into_boxed_slice()).as_ptr() as u64,
        dropped: dropped as u32,
        named: Box::leak(Box::new(AtomicBool::new(false))),
    });
}

/// The blob of the callsite of meta, made at its registration (a callsite
/// tracing never registered, a hand-made `Metadata` say, has its blob made now).
pub fn blob(meta: &'static Metadata<'static>) -> Blob {
    let k = meta as *const Metadata<'static> as usize;
    let at = (k >> 4) % CACHE;
    if let Ok(Some((ck, b))) = RECENT.try_with(|r| r.borrow()[at]) {
        if ck == k {
            return b;
        }
    }
    match shared(k) {
        Some(b) => {
            let _ = RECENT.try_with(|r| r.borrow_mut()[at] = Some((k, b)));
            b
        }
        None => {
            register(meta);
            shared(k).expect("a registered blob")
        }
    }
}

/// The blob from the process's table.
fn shared(k: usize) -> Option<Blob> {
    match BLOBS.read() {
        Ok(m) => m.as_ref().and_then(|m| m.get(&k)).copied(),
        Err(p) => p.into_inner().as_ref().and_then(|m| m.get(&k)).copied(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(b: &[u8]) -> Vec<String> {
        b.split(|&c| c == 0).map(|s| String::from_utf8_lossy(s).into_owned()).collect()
    }

    #[test]
    fn a_blob_has_the_v1_fields() {
        struct Cs;
        static CS: Cs = Cs;
        impl tracing::callsite::Callsite for Cs {
            fn set_interest(&self, _: tracing::subscriber::Interest) {}
            fn metadata(&self) -> &Metadata<'_> {
                &META
            }
        }
        static META: Metadata<'static> = tracing::metadata::Metadata::new(
            "event src/x.rs:7",
            "app::x",
            tracing::Level::WARN,
            Some("src/x.rs"),
            Some(7),
            None,
            tracing::field::FieldSet::new(&["message", "id"], tracing_core_id(&CS)),
            tracing::metadata::Kind::EVENT,
        );
        const fn tracing_core_id(cs: &'static Cs) -> tracing::callsite::Identifier {
            tracing::callsite::Identifier(cs)
        }
        let (b, dropped) = build(&META);
        assert_eq!(dropped, 0);
        assert!(b.len() <= BLOB_MAX);
        assert_eq!(b.last(), Some(&0));
        let f = parse(&b[..b.len() - 1]);
        assert_eq!(
            f,
            vec![
                "RCS1",
                "E",
                "3",
                "event src/x.rs:7",
                "app::x",
                "src/x.rs",
                "7",
                "",
                "2",
                "message",
                "id"
            ]
        );
    }

    #[test]
    fn the_recording_span_blob_parses() {
        let f = parse(&RECORDING_SPAN[..RECORDING_SPAN.len() - 1]);
        assert_eq!(
            f,
            vec![
                "RCS1",
                "S",
                "2",
                "recording",
                "recorder_tracing",
                "recorder_tracing",
                "0",
                "",
                "3",
                "recording",
                "recorder",
                "subject"
            ]
        );
    }
}
