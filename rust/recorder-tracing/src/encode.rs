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

/// A copied string: at most STR_MAX bytes (one more than the BPF side reads,
/// so that it marks a longer one truncated, as for a C string), cut at the
/// first NUL as a C string is, and NUL-terminated for the per-event probe.
pub struct StrBuf {
    /// Written up to len (and the NUL c_ptr puts there); never zeroed first.
    buf: [MaybeUninit<u8>; STR_MAX + 1],
    len: usize,
    /// A NUL was written, or the value went on past STR_MAX bytes: no more is taken.
    full: bool,
}

impl StrBuf {
    pub const fn new() -> Self {
        StrBuf { buf: [MaybeUninit::uninit(); STR_MAX + 1], len: 0, full: false }
    }

    pub fn clear(&mut self) {
        self.len = 0;
        self.full = false;
    }

    /// Takes bytes of s up to a NUL or STR_MAX in all; false once no more is taken.
    pub fn push(&mut self, s: &[u8]) -> bool {
        if self.full {
            return false;
        }
        let room = STR_MAX - self.len;
        let mut n = s.len().min(room);
        if let Some(z) = s[..n].iter().position(|&c| c == 0) {
            n = z;
            self.full = true;
        }
        // SAFETY: n <= STR_MAX - len bytes from s into the buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(
                s.as_ptr(),
                self.buf.as_mut_ptr().add(self.len) as *mut u8,
                n,
            )
        };
        self.len += n;
        if s.len() > room {
            self.full = true;
        }
        !self.full
    }

    /// The value formatted by f, cut; a panic in f keeps what it wrote and adds PANICKED.
    pub fn format(&mut self, f: &dyn Fn(&mut StrBuf) -> fmt::Result) {
        self.clear();
        let r = catch_unwind(AssertUnwindSafe(|| {
            let _ = f(self);
        }));
        if r.is_err() {
            // What it wrote may end inside a character: the reader escapes bytes.
            self.full = false;
            self.push(PANICKED.as_bytes());
        }
    }

    /// The bytes taken (no NUL).
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the first len bytes were written by push.
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr() as *const u8, self.len) }
    }

    /// A NUL-terminated copy for the per-event probe: its address as a word.
    pub fn c_ptr(&mut self) -> u64 {
        self.buf[self.len] = MaybeUninit::new(0);
        self.buf.as_ptr() as u64
    }
}

impl Write for StrBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // An error stops a long Display early: what is past the cut is never formatted.
        if self.push(s.as_bytes()) {
            Ok(())
        } else {
            Err(fmt::Error)
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
        let mut b = StrBuf::new();
        b.format(&|w| write!(w, "{}-{}", "a", 7));
        assert_eq!(b.bytes(), b"a-7");
        let (slot, used) = str_slot(b.bytes(), 0);
        assert_eq!(slot, 3 << 16);
        assert_eq!(used, 4);
    }

    #[test]
    fn huge_strings_are_cut_and_marked_truncated() {
        let mut b = StrBuf::new();
        b.format(&|w| write!(w, "{}", Huge));
        // One byte more than the BPF side reads, so that it marks the cut.
        assert_eq!(b.bytes().len(), STR_MAX);
        let p = b.c_ptr() as *const u8;
        // SAFETY: c_ptr points at STR_MAX + 1 bytes.
        assert_eq!(unsafe { *p.add(STR_MAX) }, 0);
        let (slot, used) = str_slot(b.bytes(), 40);
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
        let mut b = StrBuf::new();
        b.format(&|w| w.write_str("ab\0cd"));
        assert_eq!(b.bytes(), b"ab");
    }

    #[test]
    fn a_panicking_display_keeps_what_it_wrote() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let mut b = StrBuf::new();
        b.format(&|w| write!(w, "{}", Panics));
        std::panic::set_hook(prev);
        assert_eq!(b.bytes(), b"half<panicked>");
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
