// SPDX-License-Identifier: MIT
//! Field values as the event probe carries them (docs/probe-abi.md, "event"):
//! one 4-bit type per field and one 8-byte word per value, strings copied and
//! cut as include/recorder.h cuts a `REC_STRN`. Pure logic, no probe.

use std::fmt::{self, Write};
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};

pub const MAX_FIELDS: usize = 8;
/// A copied string is read with at most this many bytes, NUL included (REC_STR_MAX).
pub const STR_MAX: usize = 256;
/// The string area of one batched event (REC_STR_AREA).
pub const STR_AREA: usize = 768;

pub const TYPE_STR: u64 = 1;
pub const TYPE_I64: u64 = 2;
pub const TYPE_U64: u64 = 3;
pub const TYPE_F64: u64 = 4;
pub const TYPE_BOOL: u64 = 5;

/// String statuses of a batched value slot (enum rec_str_status).
pub const STR_TRUNCATED: u64 = 1;
pub const STR_NULL: u64 = 3;
pub const STR_NOSPACE: u64 = 4;

/// What a value whose Display or Debug panicked ends with, after what it wrote.
pub const PANICKED: &str = "<panicked>";

/// The copied strings of an event's fields, each at most STR_MAX bytes (one
/// more than the BPF side reads, so that it marks a longer one truncated, as
/// for a C string), cut at the first NUL as a C string is, and NUL-terminated
/// for the per-event probe. Field i's string is formatted into STR_MAX + 1
/// bytes of its own, never zeroed first (an event would pay for 2 KiB it
/// mostly does not use).
pub struct Strs {
    bufs: [[MaybeUninit<u8>; STR_MAX + 1]; MAX_FIELDS],
    lens: [u16; MAX_FIELDS],
}

impl Strs {
    #[inline(always)]
    pub fn new() -> Self {
        Strs { bufs: [[MaybeUninit::uninit(); STR_MAX + 1]; MAX_FIELDS], lens: [0; MAX_FIELDS] }
    }

    /// Field i's string formatted by f, cut; a panic in f keeps what it wrote and adds PANICKED.
    pub fn format(&mut self, i: usize, f: &dyn Fn(&mut StrCut) -> fmt::Result) {
        // SAFETY: bufs[i] has STR_MAX + 1 bytes, borrowed for the cut's life.
        let mut cut = unsafe { StrCut::new(self.bufs[i].as_mut_ptr() as *mut u8) };
        cut.format(f);
        self.lens[i] = cut.len() as u16;
    }

    /// Field i's string s, cut as format cuts it (no Display runs: nothing can panic).
    pub fn copy(&mut self, i: usize, s: &str) {
        // SAFETY: as in format.
        let mut cut = unsafe { StrCut::new(self.bufs[i].as_mut_ptr() as *mut u8) };
        cut.push(s.as_bytes());
        self.lens[i] = cut.len() as u16;
    }

    /// The bytes field i's string took (no NUL); format(i) or copy(i) came first.
    pub fn bytes(&self, i: usize) -> &[u8] {
        let n = (self.lens[i] as usize).min(STR_MAX);
        // SAFETY: format wrote the first lens[i] <= STR_MAX bytes of bufs[i].
        unsafe { std::slice::from_raw_parts(self.bufs[i].as_ptr() as *const u8, n) }
    }

    /// A NUL-terminated copy of field i's string for the per-event probe: its
    /// address as a word; format(i) came first.
    pub fn c_ptr(&mut self, i: usize) -> u64 {
        let n = (self.lens[i] as usize).min(STR_MAX);
        self.bufs[i][n] = MaybeUninit::new(0);
        self.bufs[i].as_ptr() as u64
    }
}

/// Where a value is formatted: STR_MAX bytes of Strs, taken up to a NUL or
/// STR_MAX in all.
pub struct StrCut {
    at: *mut u8,
    len: usize,
    /// A NUL was written, or the value went on past STR_MAX bytes: no more is taken.
    full: bool,
}

impl StrCut {
    /// # Safety
    /// at points at STR_MAX writable bytes that outlive the StrCut.
    pub unsafe fn new(at: *mut u8) -> Self {
        StrCut { at, len: 0, full: false }
    }

    /// The bytes taken (at most STR_MAX, no NUL).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Takes bytes of s up to a NUL or STR_MAX in all; false once no more is taken.
    pub fn push(&mut self, s: &[u8]) -> bool {
        if self.full {
            return false;
        }
        let room = STR_MAX - self.len;
        let mut n = s.len().min(room);
        if let Some(z) = nul_in(&s[..n]) {
            n = z;
            self.full = true;
        }
        // SAFETY: n <= STR_MAX - len bytes into the STR_MAX at `at`, past those taken.
        copy_bytes(unsafe { std::slice::from_raw_parts_mut(self.at.add(self.len), n) }, &s[..n]);
        self.len += n;
        if s.len() > room {
            self.full = true;
        }
        !self.full
    }

    /// The value formatted by f, cut; a panic in f keeps what it wrote and adds PANICKED.
    pub fn format(&mut self, f: &dyn Fn(&mut StrCut) -> fmt::Result) {
        self.len = 0;
        self.full = false;
        let r = catch_unwind(AssertUnwindSafe(|| {
            let _ = f(self);
        }));
        if r.is_err() {
            // What it wrote may end inside a character: the reader escapes bytes.
            self.full = false;
            self.push(PANICKED.as_bytes());
        }
    }
}

impl Write for StrCut {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // An error stops a long Display early: what is past the cut is never formatted.
        if self.push(s.as_bytes()) {
            Ok(())
        } else {
            Err(fmt::Error)
        }
    }
}

/// Where the first NUL of s is, if it has one: a word at a time (a byte at
/// a time cost a short message about as much as the rest of its copy).
#[inline]
pub fn nul_in(s: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // The lowest byte flagged is the first NUL of w: a false flag is only
    // ever set above a true one.
    let first = |w: u64| {
        let z = w.wrapping_sub(ONES) & !w & HIGHS;
        if z != 0 {
            Some(z.trailing_zeros() as usize / 8)
        } else {
            None
        }
    };
    let word = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap());
    let n = s.len();
    if n < 8 {
        return s.iter().position(|&c| c == 0);
    }
    let mut at = 0;
    while at + 8 <= n {
        if let Some(k) = first(word(at)) {
            return Some(at + k);
        }
        at += 8;
    }
    // The last bytes, in a word that overlaps bytes with no NUL.
    if at < n {
        return first(word(n - 8)).map(|k| n - 8 + k);
    }
    None
}

/// dst = src (of the same length): the short strings most fields hold
/// without a call to memcpy, whose start costs more than their bytes.
#[inline(always)]
pub fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    assert_eq!(dst.len(), n);
    let word = |at: usize| u64::from_ne_bytes(src[at..at + 8].try_into().unwrap());
    let half = |at: usize| u32::from_ne_bytes(src[at..at + 4].try_into().unwrap());
    if n > 16 {
        dst.copy_from_slice(src);
    } else if n >= 8 {
        // Two words that overlap when n < 16.
        let (a, z) = (word(0), word(n - 8));
        dst[..8].copy_from_slice(&a.to_ne_bytes());
        dst[n - 8..].copy_from_slice(&z.to_ne_bytes());
    } else if n >= 4 {
        let (a, z) = (half(0), half(n - 4));
        dst[..4].copy_from_slice(&a.to_ne_bytes());
        dst[n - 4..].copy_from_slice(&z.to_ne_bytes());
    } else {
        for k in 0..n {
            dst[k] = src[k];
        }
    }
}

/// A batched string's value slot: offset in the string area, length, status
/// (REC_STR_SLOT), and how many bytes it takes there (the NUL included), or 0.
/// taken is what the area already holds.
pub fn str_slot(bytes: &[u8], taken: usize) -> (u64, usize) {
    if taken > STR_AREA - STR_MAX {
        return (STR_NOSPACE << 32, 0);
    }
    let n = bytes.len().min(STR_MAX - 1);
    let st = if bytes.len() > STR_MAX - 1 { STR_TRUNCATED } else { 0 };
    (taken as u64 | (n as u64) << 16 | st << 32, n + 1)
}

/// The probe's types word: field i's type in bits 4i..4i+3.
pub fn types_set(types: u64, i: usize, t: u64) -> u64 {
    (types & !(0xf << (4 * i))) | t << (4 * i)
}

#[cfg(test)]
pub fn type_of(types: u64, i: usize) -> u64 {
    (types >> (4 * i)) & 0xf
}

/// A level as the ABI numbers it: 0 TRACE .. 4 ERROR.
pub fn level(l: &tracing::Level) -> u8 {
    match *l {
        tracing::Level::TRACE => 0,
        tracing::Level::DEBUG => 1,
        tracing::Level::INFO => 2,
        tracing::Level::WARN => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Huge;
    impl fmt::Display for Huge {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            for _ in 0..1_000_000 {
                f.write_str("0123456789")?;
            }
            Ok(())
        }
    }

    struct Panics;
    impl fmt::Display for Panics {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("half")?;
            panic!("a Display that panics");
        }
    }

    #[test]
    fn short_strings_are_kept_whole() {
        let mut b = Strs::new();
        b.format(3, &|w| write!(w, "{}-{}", "a", 7));
        assert_eq!(b.bytes(3), b"a-7");
        let (slot, used) = str_slot(b.bytes(3), 0);
        assert_eq!(slot, 3 << 16);
        assert_eq!(used, 4);
    }

    #[test]
    fn huge_strings_are_cut_and_marked_truncated() {
        let mut b = Strs::new();
        b.format(3, &|w| write!(w, "{}", Huge));
        // One byte more than the BPF side reads, so that it marks the cut.
        assert_eq!(b.bytes(3).len(), STR_MAX);
        let p = b.c_ptr(3) as *const u8;
        // SAFETY: c_ptr points at STR_MAX + 1 bytes.
        assert_eq!(unsafe { *p.add(STR_MAX) }, 0);
        let (slot, used) = str_slot(b.bytes(3), 40);
        assert_eq!(slot, 40 | (255 << 16) | (STR_TRUNCATED << 32));
        assert_eq!(used, 256);
    }

    #[test]
    fn exactly_255_bytes_are_not_truncated() {
        let s = [b'x'; 255];
        let (slot, _) = str_slot(&s, 0);
        assert_eq!(slot >> 32, 0);
        let s = [b'x'; 256];
        let (slot, _) = str_slot(&s, 0);
        assert_eq!(slot >> 32, STR_TRUNCATED);
    }

    #[test]
    fn a_nul_ends_the_string_as_in_c() {
        let mut b = Strs::new();
        b.format(3, &|w| w.write_str("ab\0cd"));
        assert_eq!(b.bytes(3), b"ab");
    }

    #[test]
    fn a_panicking_display_keeps_what_it_wrote() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let mut b = Strs::new();
        b.format(3, &|w| write!(w, "{}", Panics));
        std::panic::set_hook(prev);
        assert_eq!(b.bytes(3), b"half<panicked>");
    }

    #[test]
    fn a_nul_is_found_wherever_it_is() {
        for n in 0..40 {
            let mut s: Vec<u8> = (0..n).map(|k| 1 + (k * 37 % 250) as u8).collect();
            assert_eq!(nul_in(&s), None, "length {}", n);
            for at in 0..n {
                s[at] = 0;
                // A byte 0x01 above the NUL: the word's borrow flags it too.
                if at + 1 < n {
                    s[at + 1] = 1;
                }
                assert_eq!(nul_in(&s), Some(at), "length {} NUL at {}", n, at);
                let later = at + 3;
                if later < n {
                    s[later] = 0;
                    assert_eq!(nul_in(&s), Some(at), "length {} NULs at {} and {}", n, at, later);
                    s[later] = 1;
                }
                s[at] = 0x80;
            }
        }
    }

    #[test]
    fn a_full_area_gives_nospace() {
        let (slot, used) = str_slot(b"x", STR_AREA - STR_MAX + 1);
        assert_eq!(slot, STR_NOSPACE << 32);
        assert_eq!(used, 0);
        let (slot, _) = str_slot(b"x", STR_AREA - STR_MAX);
        assert_eq!(slot >> 32, 0);
    }

    #[test]
    fn types_pack_four_bits_a_field() {
        let mut t = 0;
        t = types_set(t, 0, TYPE_STR);
        t = types_set(t, 1, TYPE_I64);
        t = types_set(t, 7, TYPE_BOOL);
        assert_eq!(t, 0x5000_0021);
        assert_eq!(type_of(t, 7), TYPE_BOOL);
        t = types_set(t, 1, TYPE_F64);
        assert_eq!(t & 0xff, 0x41);
    }

    #[test]
    fn levels_match_the_header() {
        assert_eq!(level(&tracing::Level::TRACE), 0);
        assert_eq!(level(&tracing::Level::DEBUG), 1);
        assert_eq!(level(&tracing::Level::INFO), 2);
        assert_eq!(level(&tracing::Level::WARN), 3);
        assert_eq!(level(&tracing::Level::ERROR), 4);
    }
}
