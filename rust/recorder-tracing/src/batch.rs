// SPDX-License-Identifier: MIT
//! The batch path (docs/probe-abi.md, "Batches"): the thread's buffer
//! `rec__tbuf` (shared with C objects of the program), its records written as
//! include/recorder.h writes them, and the `batch` probe that hands them over.

use std::sync::atomic::{compiler_fence, AtomicU32, AtomicU64, Ordering};

use crate::abi;
use crate::encode::{copy_bytes, str_slot, STR_NULL};

pub const TBUF_SIZE: usize = 65536;
pub const TBUF_HDR: usize = 64;
pub const TBUF_DATA: usize = TBUF_SIZE - TBUF_HDR;
pub const TBUF_MAGIC: u64 = 0x3146_5542_5443_4552; // "RECTBUF1"
pub const BCLOCK_MONO: i32 = 1;
pub const BCLOCK_TSC: i32 = 2;
pub const BK_EVENT: u16 = 1;
pub const BK_ENTER: u16 = 2;
pub const BK_EXIT: u16 = 3;
pub const BK_REC_NEW: u16 = 4;
pub const BK_REC_SPAN: u16 = 5;
pub const BK_REC_FREE: u16 = 6;
/// A record's head (struct rec_brec): kind, size, strbytes, nvals, pad, time.
pub const BREC_HEAD: usize = 16;
/// A recording's record (struct rec_brec_rec), before a span's subject.
pub const BREC_REC: usize = 80;
pub const SUBJECT_MAX: usize = 64;

/// struct rec__tbuf / struct rec_tbuf_hdr.
#[repr(C)]
pub struct TBuf {
    pub magic: AtomicU64,
    pub gen: AtomicU32,
    pub len: AtomicU32,
    pub clock: u32,
    pub tid: u32,
    pub tracer: u32,
    pub pad0: u32,
    pub pad: [u64; 4],
    pub data: [u8; TBUF_DATA],
}

/// REC__BCLOCK_TSC where the kernel's clocksource is the TSC, else REC__BCLOCK_MONO.
fn batch_clock() -> i32 {
    let c = abi::bclock().load(Ordering::Relaxed);
    if c != 0 {
        return c;
    }
    let f = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
    let c = match std::fs::read(f) {
        Ok(s) if s == b"tsc\n" => BCLOCK_TSC,
        _ => BCLOCK_MONO,
    };
    abi::bclock().store(c, Ordering::Relaxed);
    c
}

fn now(b: &TBuf) -> u64 {
    if b.clock == BCLOCK_TSC as u32 {
        abi::rdtsc()
    } else {
        abi::monotonic_ns()
    }
}

/// The thread's buffer, announced to the tracer; chain is the thread's current
/// span before the record about to be written. None if it cannot be had.
pub fn get(chain: usize) -> Option<&'static mut TBuf> {
    let p = abi::tbuf();
    if p != 0 {
        // SAFETY: rec__tbuf is only ever set to a mapping of TBUF_SIZE bytes.
        let b = unsafe { &mut *(p as *mut TBuf) };
        if b.magic.load(Ordering::Relaxed) == TBUF_MAGIC && b.tracer == abi::tracer() {
            return Some(b);
        }
    }
    open(chain)
}

#[cold]
#[inline(never)]
fn open(chain: usize) -> Option<&'static mut TBuf> {
    let mut p = abi::tbuf();
    if p == 0 {
        p = abi::map_wipeonfork(TBUF_SIZE);
        if p == 0 {
            return None;
        }
        abi::set_tbuf(p);
    }
    // SAFETY: a mapping of TBUF_SIZE bytes, this thread's own.
    let b = unsafe { &mut *(p as *mut TBuf) };
    b.tid = abi::gettid();
    if b.magic.load(Ordering::Relaxed) != TBUF_MAGIC {
        b.gen.store(0, Ordering::Relaxed);
        b.len.store(0, Ordering::Relaxed);
        b.tracer = 0;
        b.clock = batch_clock() as u32;
        b.magic.store(TBUF_MAGIC, Ordering::Release);
    }
    compiler_fence(Ordering::SeqCst);
    abi::probe_batch_open(p as u64, chain as u64);
    compiler_fence(Ordering::SeqCst);
    b.tracer = abi::tracer();
    Some(b)
}

/// Hands the records over; the tracer has taken them when the probe returns.
#[inline(never)]
pub fn flush(b: &mut TBuf) {
    compiler_fence(Ordering::SeqCst);
    abi::probe_batch_flush(b as *mut TBuf as u64);
    compiler_fence(Ordering::SeqCst);
    b.len.store(0, Ordering::Release);
    let g = b.gen.load(Ordering::Relaxed);
    b.gen.store(g.wrapping_add(1), Ordering::Release);
}

/// Flushes this thread's pending records, if any: before a probe they must precede.
pub fn sync() {
    let p = abi::tbuf();
    if p == 0 || !abi::batch_on() {
        return;
    }
    // SAFETY: as in get().
    let b = unsafe { &mut *(p as *mut TBuf) };
    if b.magic.load(Ordering::Relaxed) == TBUF_MAGIC && b.len.load(Ordering::Relaxed) != 0 {
        flush(b);
    }
}

/// Room for size bytes at the end of b's records (flushed first if need be): its offset.
fn reserve(b: &mut TBuf, size: usize) -> usize {
    if b.len.load(Ordering::Relaxed) as usize + size > TBUF_DATA {
        flush(b);
    }
    b.len.load(Ordering::Relaxed) as usize
}

fn commit(b: &mut TBuf, size: usize) {
    let l = b.len.load(Ordering::Relaxed);
    b.len.store(l + size as u32, Ordering::Release);
}

fn put_u64(d: &mut [u8], at: usize, v: u64) {
    d[at..at + 8].copy_from_slice(&v.to_ne_bytes());
}

/// Writes a record head at off: kind, size, strbytes, nvals, time.
fn head(b: &mut TBuf, off: usize, kind: u16, size: usize, strbytes: usize, nvals: usize) {
    let t = now(b);
    let d = &mut b.data[off..off + BREC_HEAD];
    d[0..2].copy_from_slice(&kind.to_ne_bytes());
    d[2..4].copy_from_slice(&(size as u16).to_ne_bytes());
    d[4..6].copy_from_slice(&(strbytes as u16).to_ne_bytes());
    d[6] = nvals as u8;
    d[7] = 0;
    d[8..16].copy_from_slice(&t.to_ne_bytes());
}

/// Appends a span enter (span, meta, recording key, previous span) or exit (span, current).
pub fn span(b: &mut TBuf, kind: u16, w: [u64; 4]) {
    let size = if kind == BK_ENTER { 48 } else { 32 };
    let off = reserve(b, size);
    head(b, off, kind, size, 0, 0);
    let words = if kind == BK_ENTER { 4 } else { 2 };
    for (i, v) in w.iter().take(words).enumerate() {
        put_u64(&mut b.data, off + BREC_HEAD + 8 * i, *v);
    }
    commit(b, size);
}

/// Appends a recording's new, span or free: its key, recorder key, cap and
/// address, four words for the BPF side, and for a span its subject.
pub fn recording(b: &mut TBuf, kind: u16, w: [u64; 4], subject: &[u8; SUBJECT_MAX]) {
    let size = BREC_REC + if kind == BK_REC_SPAN { SUBJECT_MAX } else { 0 };
    let off = reserve(b, size);
    head(b, off, kind, size, 0, 0);
    let d = &mut b.data[off + BREC_HEAD..off + size];
    for (i, v) in w.iter().enumerate() {
        put_u64(d, 8 * i, *v);
    }
    for x in d[32..64].iter_mut() {
        *x = 0;
    }
    if kind == BK_REC_SPAN {
        d[64..64 + SUBJECT_MAX].copy_from_slice(subject);
    }
    commit(b, size);
}

/// An event's values for the batch: each word, or for a copied string its bytes.
#[derive(Clone, Copy)]
pub enum Val<'a> {
    Word(u64),
    Str(Option<&'a [u8]>),
}

/// Appends an event of nf values, value i being val(i): meta, types,
/// recording key, span, the span's recording, the values, then the string
/// area (each string as the BPF side would have read it). Its strings are
/// known, so it takes the room it needs and no more: a buffer fills up to its
/// end before it is handed over.
#[inline(always)]
pub fn event<'a>(b: &mut TBuf, head_w: [u64; 5], nf: usize, val: impl Fn(usize) -> Val<'a>) {
    let fixed = BREC_HEAD + 40 + 8 * nf;
    let mut strbytes = 0;
    for i in 0..nf {
        if let Val::Str(Some(s)) = val(i) {
            strbytes += str_slot(s, strbytes).1;
        }
    }
    let size = fixed + ((strbytes + 7) & !7);
    let off = reserve(b, size);
    {
        let d = &mut b.data[off..off + size];
        for (i, w) in head_w.iter().enumerate() {
            put_u64(d, BREC_HEAD + 8 * i, *w);
        }
        let mut taken = 0;
        for i in 0..nf {
            let slot = match val(i) {
                Val::Word(w) => w,
                Val::Str(None) => STR_NULL << 32,
                Val::Str(Some(s)) => {
                    let (slot, used) = str_slot(s, taken);
                    if used != 0 {
                        let at = fixed + taken;
                        copy_bytes(&mut d[at..at + used - 1], &s[..used - 1]);
                        d[at + used - 1] = 0;
                        taken += used;
                    }
                    slot
                }
            };
            put_u64(d, BREC_HEAD + 40 + 8 * i, slot);
        }
    }
    head(b, off, BK_EVENT, size, strbytes, nf);
    commit(b, size);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::STR_NOSPACE;

    #[test]
    fn the_buffer_is_laid_out_as_the_header_says() {
        assert_eq!(std::mem::size_of::<TBuf>(), TBUF_SIZE);
        let b = std::mem::MaybeUninit::<TBuf>::uninit();
        let base = b.as_ptr() as usize;
        // SAFETY: addresses only, nothing read.
        unsafe {
            let p = b.as_ptr();
            assert_eq!(std::ptr::addr_of!((*p).gen) as usize - base, 8);
            assert_eq!(std::ptr::addr_of!((*p).len) as usize - base, 12);
            assert_eq!(std::ptr::addr_of!((*p).clock) as usize - base, 16);
            assert_eq!(std::ptr::addr_of!((*p).tid) as usize - base, 20);
            assert_eq!(std::ptr::addr_of!((*p).tracer) as usize - base, 24);
            assert_eq!(std::ptr::addr_of!((*p).data) as usize - base, TBUF_HDR);
        }
    }

    fn fresh() -> Box<TBuf> {
        // SAFETY: all-zero bytes are a valid TBuf.
        let mut b: Box<TBuf> = unsafe { Box::new(std::mem::zeroed()) };
        b.clock = BCLOCK_MONO as u32;
        b
    }

    fn u64_at(b: &TBuf, at: usize) -> u64 {
        u64::from_ne_bytes(b.data[at..at + 8].try_into().unwrap())
    }

    #[test]
    fn an_event_record_is_the_headers() {
        let mut b = fresh();
        let long = [b'y'; 300];
        let types = 0x1112; // i64, then three strings
        let vals = [Val::Word(7), Val::Str(Some(b"hey")), Val::Str(Some(&long)), Val::Str(None)];
        event(&mut b, [0x1000, types, 42, 0x2000, 0x3000], vals.len(), |i| vals[i]);
        let len = b.len.load(Ordering::Relaxed) as usize;
        // head 16, 5 words, 4 values, strings "hey\0" and 255 + NUL, rounded to 8.
        assert_eq!(len, 16 + 40 + 32 + ((4 + 256 + 7) & !7));
        assert_eq!(u16::from_ne_bytes([b.data[0], b.data[1]]), BK_EVENT);
        assert_eq!(u16::from_ne_bytes([b.data[2], b.data[3]]) as usize, len);
        assert_eq!(u16::from_ne_bytes([b.data[4], b.data[5]]), 260);
        assert_eq!(b.data[6], 4);
        assert_eq!(u64_at(&b, 16), 0x1000);
        assert_eq!(u64_at(&b, 24), types);
        assert_eq!(u64_at(&b, 32), 42);
        assert_eq!(u64_at(&b, 56), 7);
        assert_eq!(u64_at(&b, 64), 3 << 16);
        assert_eq!(u64_at(&b, 72), 4 | 255 << 16 | 1 << 32);
        assert_eq!(u64_at(&b, 80), 3 << 32);
        assert_eq!(&b.data[88..92], b"hey\0");
        assert_eq!(b.data[92 + 255], 0);
    }

    #[test]
    fn an_event_takes_the_room_it_needs_and_no_more() {
        let mut b = fresh();
        // Room for the event (88 bytes and 24 of strings), not for a whole string area.
        let len = TBUF_DATA - 120;
        b.len.store(len as u32, Ordering::Relaxed);
        let vals =
            [Val::Str(Some(b"bench event")), Val::Word(7), Val::Str(Some(b"text")), Val::Word(1)];
        event(&mut b, [0x1000, 0x5121, 42, 0x2000, 0x3000], vals.len(), |i| vals[i]);
        assert_eq!(b.gen.load(Ordering::Relaxed), 0, "flushed with room left");
        assert_eq!(b.len.load(Ordering::Relaxed) as usize, len + 112);
        assert_eq!(u16::from_ne_bytes([b.data[len + 2], b.data[len + 3]]), 112);
        assert_eq!(&b.data[len + 88..len + 105], b"bench event\0text\0");
        // No room for the next: handed over first, then written at the start.
        event(&mut b, [0x1000, 0x5121, 42, 0x2000, 0x3000], vals.len(), |i| vals[i]);
        assert_eq!(b.gen.load(Ordering::Relaxed), 1);
        assert_eq!(b.len.load(Ordering::Relaxed), 112);
    }

    #[test]
    fn a_full_string_area_takes_no_room_for_what_it_leaves_out() {
        let mut b = fresh();
        let long = [b'z'; 300];
        let vals = [Val::Str(Some(&long)); 4];
        event(&mut b, [0x1000, 0x1111, 42, 0x2000, 0x3000], vals.len(), |i| vals[i]);
        // Three strings of 255 bytes and a NUL; the fourth REC_STR_NOSPACE.
        assert_eq!(b.len.load(Ordering::Relaxed) as usize, 16 + 40 + 32 + 768);
        assert_eq!(u16::from_ne_bytes([b.data[4], b.data[5]]), 768);
        assert_eq!(u64_at(&b, 56 + 16), 512 | 255 << 16 | 1 << 32);
        assert_eq!(u64_at(&b, 56 + 24), STR_NOSPACE << 32);
    }

    #[test]
    fn span_and_recording_records_have_the_headers_sizes() {
        let mut b = fresh();
        span(&mut b, BK_ENTER, [1, 2, 3, 4]);
        span(&mut b, BK_EXIT, [1, 5, 0, 0]);
        let subject = [b's'; SUBJECT_MAX];
        recording(&mut b, BK_REC_NEW, [9, 8, 10, 0x4000], &subject);
        recording(&mut b, BK_REC_SPAN, [9, 8, 10, 0x4000], &subject);
        assert_eq!(b.len.load(Ordering::Relaxed) as usize, 48 + 32 + 80 + 144);
        assert_eq!(u64_at(&b, 48 + 16 + 8), 5);
        assert_eq!(u64_at(&b, 80 + 16 + 24), 0x4000);
        assert_eq!(b.data[160 + 80], b's');
    }
}
