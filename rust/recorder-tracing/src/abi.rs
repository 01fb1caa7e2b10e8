// SPDX-License-Identifier: MIT
//! The probe ABI at the machine level (docs/probe-abi.md), written as
//! include/recorder.h writes it: the semaphores and the attach block in
//! `.probes` (weak, hidden), the thread's current span `rec__current` and its
//! batch buffer `rec__tbuf` (weak `__thread`), the key counter and the batch
//! clock (weak), and the USDT sites (a 1-byte nop and a `.note.stapsdt` note,
//! the format `<sys/sdt.h>` writes). The symbols have the header's names, so
//! that a program that links C objects built with the header and this crate
//! has one of each. Stable Rust cannot declare weak or thread-local statics, so
//! they are defined in `global_asm!` and read and written through `asm!`.

use std::arch::asm;
use std::arch::global_asm;
use std::sync::atomic::{AtomicI32, AtomicU64};

/// The `.note.stapsdt` note of the site at local label 990, and `_.stapsdt.base`
/// (include/recorder.h `REC__NOTE`).
macro_rules! rec_site {
    ($name:literal, $args:literal) => {
        concat!(
            "990: nop\n",
            ".pushsection .note.stapsdt,\"?\",\"note\"\n",
            ".balign 4\n",
            ".4byte 992f-991f, 994f-993f, 3\n",
            "991: .asciz \"stapsdt\"\n",
            "992: .balign 4\n",
            "993: .8byte 990b\n",
            ".8byte _.stapsdt.base\n",
            ".8byte recorder_",
            $name,
            "_semaphore\n",
            ".asciz \"recorder\"\n",
            ".asciz \"",
            $name,
            "\"\n",
            ".asciz \"",
            $args,
            "\"\n",
            "994: .balign 4\n",
            ".popsection\n",
            ".ifndef _.stapsdt.base\n",
            ".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n",
            ".weak _.stapsdt.base\n",
            ".hidden _.stapsdt.base\n",
            "_.stapsdt.base: .space 1\n",
            ".size _.stapsdt.base, 1\n",
            ".popsection\n",
            ".endif\n"
        )
    };
}

/// A weak hidden semaphore in `.probes` (include/recorder.h `REC__DECLARE_SEMA`).
macro_rules! rec_sema {
    ($name:literal) => {
        concat!(
            ".weak recorder_",
            $name,
            "_semaphore\n",
            ".hidden recorder_",
            $name,
            "_semaphore\n",
            ".type recorder_",
            $name,
            "_semaphore, @object\n",
            ".size recorder_",
            $name,
            "_semaphore, 2\n",
            ".balign 2\n",
            "recorder_",
            $name,
            "_semaphore: .2byte 0\n"
        )
    };
}

/// A weak zero-initialized object of size bytes in section sect.
macro_rules! rec_weak {
    ($sym:literal, $sect:literal, $size:literal) => {
        concat!(
            ".pushsection ",
            $sect,
            "\n",
            ".weak ",
            $sym,
            "\n",
            ".type ",
            $sym,
            ", @object\n",
            ".size ",
            $sym,
            ", ",
            $size,
            "\n",
            ".balign 8\n",
            $sym,
            ": .zero ",
            $size,
            "\n",
            ".popsection\n"
        )
    };
}

global_asm!(
    ".pushsection .probes,\"aw\",@progbits",
    rec_sema!("event"),
    rec_sema!("span_enter"),
    rec_sema!("span_exit"),
    rec_sema!("recording_new"),
    rec_sema!("recording_span"),
    rec_sema!("recording_free"),
    rec_sema!("recorder_new"),
    rec_sema!("recorder_free"),
    rec_sema!("batch"),
    rec_sema!("trigger"),
    // The attach block: the "attached" semaphore, the marker, the tracer word.
    ".weak recorder_attached_semaphore",
    ".hidden recorder_attached_semaphore",
    ".type recorder_attached_semaphore, @object",
    ".size recorder_attached_semaphore, 8",
    ".balign 8",
    "recorder_attached_semaphore: .2byte 0",
    ".2byte 0x5244", // REC_ATTACH_MARKER_BIG: recordings in batches, 64 KiB buffers
    ".4byte 0",
    ".popsection",
    rec_weak!("rec__current", ".tbss,\"awT\",@nobits", "8"),
    rec_weak!("rec__tbuf", ".tbss,\"awT\",@nobits", "8"),
    rec_weak!("rec__key_counter", ".bss", "8"),
    rec_weak!("rec__bclock", ".bss", "4"),
    options(att_syntax)
);

extern "C" {
    #[allow(non_upper_case_globals)]
    static rec__key_counter: AtomicU64;
    #[allow(non_upper_case_globals)]
    static rec__bclock: AtomicI32;
}

/// The process's key counter, shared with C objects (include/recorder.h).
pub fn key_counter() -> &'static AtomicU64 {
    // SAFETY: defined above, 8 bytes, 8-aligned, zero-initialized.
    unsafe { &rec__key_counter }
}

/// The process's batch clock, shared with C objects (0 until known).
pub fn bclock() -> &'static AtomicI32 {
    // SAFETY: defined above, 4 bytes, aligned, zero-initialized.
    unsafe { &rec__bclock }
}

/// The semaphores, by probe name.
#[derive(Clone, Copy)]
pub enum Sema {
    Event,
    SpanEnter,
    SpanExit,
    RecordingNew,
    RecordingSpan,
    RecordingFree,
    RecorderNew,
    RecorderFree,
    Batch,
    Trigger,
    Attached,
}

macro_rules! read_sema {
    ($sym:literal) => {{
        let v: u32;
        // SAFETY: a 2-byte load of a symbol defined in .probes above.
        unsafe {
            asm!(concat!("movzwl ", $sym, "(%rip), {0:e}"), out(reg) v,
                 options(att_syntax, nostack, preserves_flags, readonly));
        }
        v
    }};
}

/// Whether the probe's semaphore is armed (something attached to it).
#[inline(always)]
pub fn armed(s: Sema) -> bool {
    let v = match s {
        Sema::Event => read_sema!("recorder_event_semaphore"),
        Sema::SpanEnter => read_sema!("recorder_span_enter_semaphore"),
        Sema::SpanExit => read_sema!("recorder_span_exit_semaphore"),
        Sema::RecordingNew => read_sema!("recorder_recording_new_semaphore"),
        Sema::RecordingSpan => read_sema!("recorder_recording_span_semaphore"),
        Sema::RecordingFree => read_sema!("recorder_recording_free_semaphore"),
        Sema::RecorderNew => read_sema!("recorder_recorder_new_semaphore"),
        Sema::RecorderFree => read_sema!("recorder_recorder_free_semaphore"),
        Sema::Batch => read_sema!("recorder_batch_semaphore"),
        Sema::Trigger => read_sema!("recorder_trigger_semaphore"),
        Sema::Attached => read_sema!("recorder_attached_semaphore"),
    };
    v != 0
}

/// The image's tracer word (the attach block): 0 while no recorder-attach is attached.
#[inline(always)]
pub fn tracer() -> u32 {
    let v: u32;
    // SAFETY: a 4-byte load inside the attach block defined above.
    unsafe {
        asm!("movl recorder_attached_semaphore+4(%rip), {0:e}", out(reg) v,
             options(att_syntax, nostack, preserves_flags, readonly));
    }
    v
}

pub const TRACER_BATCH: u32 = 2;

/// The batch path is taken only while recorder-attach asks for it and its probe is armed.
#[inline(always)]
pub fn batch_on() -> bool {
    armed(Sema::Batch) && tracer() & TRACER_BATCH != 0
}

macro_rules! tls_get {
    ($sym:literal) => {{
        let p: usize;
        // SAFETY: an initial-exec load of a __thread pointer defined above.
        unsafe {
            asm!(concat!("movq ", $sym, "@gottpoff(%rip), {0}\n", "movq %fs:({0}), {0}"),
                 out(reg) p, options(att_syntax, nostack, preserves_flags, readonly));
        }
        p
    }};
}

macro_rules! tls_set {
    ($sym:literal, $v:expr) => {{
        let v: usize = $v;
        // SAFETY: an initial-exec store to a __thread pointer defined above.
        unsafe {
            asm!(concat!("movq ", $sym, "@gottpoff(%rip), {t}\n", "movq {v}, %fs:({t})"),
                 t = out(reg) _, v = in(reg) v, options(att_syntax, nostack, preserves_flags));
        }
    }};
}

/// The thread's current span (`rec__current`), or 0.
#[inline(always)]
pub fn current() -> usize {
    tls_get!("rec__current")
}

#[inline(always)]
pub fn set_current(p: usize) {
    tls_set!("rec__current", p)
}

/// The thread's batch buffer (`rec__tbuf`), or 0.
#[inline(always)]
pub fn tbuf() -> usize {
    tls_get!("rec__tbuf")
}

#[inline(always)]
pub fn set_tbuf(p: usize) {
    tls_set!("rec__tbuf", p)
}

// The probe sites: functions in one section of global_asm!, so that a
// program that calls any of them keeps every site (a note whose function the
// linker dropped would point at address 0). Each takes its arguments as the
// C ABI passes them and fires its probe with them in registers ("8@%reg").

/// A probe function: its symbol, the site and its note, `ret`.
macro_rules! rec_probe_fn {
    ($sym:literal, $name:literal, $args:literal) => {
        concat!(
            ".weak ",
            $sym,
            "\n",
            ".hidden ",
            $sym,
            "\n",
            ".type ",
            $sym,
            ", @function\n",
            $sym,
            ":\n",
            rec_site!($name, $args),
            "ret\n",
            ".size ",
            $sym,
            ", .-",
            $sym,
            "\n"
        )
    };
}

global_asm!(
    ".pushsection .text.rec__rs_probes,\"ax\",@progbits",
    rec_probe_fn!("rec__rs_probe_attached", "attached", ""),
    rec_probe_fn!("rec__rs_probe_recorder_new", "recorder_new", "8@%rdi"),
    rec_probe_fn!("rec__rs_probe_recorder_free", "recorder_free", "8@%rdi"),
    rec_probe_fn!("rec__rs_probe_recording_free", "recording_free", "8@%rdi 8@%rsi"),
    rec_probe_fn!("rec__rs_probe_batch_flush", "batch", "8@%rdi 8@%rsi"),
    rec_probe_fn!("rec__rs_probe_batch_open", "batch", "8@%rdi 8@%rsi 8@%rdx"),
    rec_probe_fn!("rec__rs_probe_trigger", "trigger", "8@%rdi 8@%rsi 8@%rdx"),
    rec_probe_fn!("rec__rs_probe_recording_new", "recording_new", "8@%rdi 8@%rsi 8@%rdx 8@%rcx"),
    rec_probe_fn!("rec__rs_probe_recording_span", "recording_span", "8@%rdi 8@%rsi 8@%rdx 8@%rcx"),
    rec_probe_fn!("rec__rs_probe_span_exit", "span_exit", "8@%rdi 8@%rsi 8@%rdx 8@%rcx"),
    rec_probe_fn!("rec__rs_probe_span_enter", "span_enter", "8@%rdi 8@%rsi 8@%rdx 8@%rcx 8@%r8"),
    // The event: meta, types, key, span in rdi, rsi, rdx, rcx; r8 points at the
    // 8 values, loaded into registers (rbx and r12-r14 saved) for the probe.
    ".weak rec__rs_probe_event",
    ".hidden rec__rs_probe_event",
    ".type rec__rs_probe_event, @function",
    "rec__rs_probe_event:",
    "pushq %rbx",
    "pushq %r12",
    "pushq %r13",
    "pushq %r14",
    "movq 0(%r8), %r9",
    "movq 8(%r8), %r10",
    "movq 16(%r8), %r11",
    "movq 24(%r8), %rax",
    "movq 32(%r8), %rbx",
    "movq 40(%r8), %r12",
    "movq 48(%r8), %r13",
    "movq 56(%r8), %r14",
    rec_site!(
        "event",
        "8@%rdi 8@%rsi 8@%rdx 8@%rcx 8@%r9 8@%r10 8@%r11 8@%rax 8@%rbx 8@%r12 8@%r13 8@%r14"
    ),
    "popq %r14",
    "popq %r13",
    "popq %r12",
    "popq %rbx",
    "ret",
    ".size rec__rs_probe_event, .-rec__rs_probe_event",
    ".popsection",
    options(att_syntax)
);

extern "C" {
    fn rec__rs_probe_attached();
    fn rec__rs_probe_recorder_new(key: u64);
    fn rec__rs_probe_recorder_free(key: u64);
    fn rec__rs_probe_recording_free(key: u64, rec: u64);
    fn rec__rs_probe_batch_flush(op: u64, buf: u64);
    fn rec__rs_probe_batch_open(op: u64, buf: u64, chain: u64);
    fn rec__rs_probe_trigger(key: u64, rec: u64, reason: u64);
    fn rec__rs_probe_recording_new(key: u64, rkey: u64, cap: u64, rec: u64);
    fn rec__rs_probe_recording_span(key: u64, rec: u64, subject: u64, span: u64);
    fn rec__rs_probe_span_exit(span: u64, key: u64, rec: u64, current: u64);
    fn rec__rs_probe_span_enter(span: u64, meta: u64, key: u64, rec: u64, prev: u64);
    fn rec__rs_probe_event(meta: u64, types: u64, key: u64, span: u64, v: *const u64);
}

// SAFETY (all below): each is a nop, a note and a return; the probe reads
// what its arguments point at, which the caller keeps alive for the call.

pub fn probe_attached() {
    unsafe { rec__rs_probe_attached() }
}

pub fn probe_recorder_new(key: u64) {
    unsafe { rec__rs_probe_recorder_new(key) }
}

pub fn probe_recorder_free(key: u64) {
    unsafe { rec__rs_probe_recorder_free(key) }
}

pub fn probe_recording_new(key: u64, rkey: u64, cap: u64, rec: u64) {
    unsafe { rec__rs_probe_recording_new(key, rkey, cap, rec) }
}

pub fn probe_recording_span(key: u64, rec: u64, subject: u64, span: u64) {
    unsafe { rec__rs_probe_recording_span(key, rec, subject, span) }
}

pub fn probe_recording_free(key: u64, rec: u64) {
    unsafe { rec__rs_probe_recording_free(key, rec) }
}

pub fn probe_span_enter(span: u64, meta: u64, key: u64, rec: u64, prev: u64) {
    unsafe { rec__rs_probe_span_enter(span, meta, key, rec, prev) }
}

pub fn probe_span_exit(span: u64, key: u64, rec: u64, current: u64) {
    unsafe { rec__rs_probe_span_exit(span, key, rec, current) }
}

pub fn probe_trigger(key: u64, rec: u64, reason: u64) {
    unsafe { rec__rs_probe_trigger(key, rec, reason) }
}

pub fn probe_batch_open(buf: u64, chain: u64) {
    unsafe { rec__rs_probe_batch_open(2, buf, chain) }
}

pub fn probe_batch_flush(buf: u64) {
    unsafe { rec__rs_probe_batch_flush(1, buf) }
}

/// The event probe: meta, types, recording key, span, then the 8 value words.
pub fn probe_event(meta: u64, types: u64, key: u64, span: u64, v: &[u64; 8]) {
    unsafe { rec__rs_probe_event(meta, types, key, span, v.as_ptr()) }
}

/// The TSC.
#[inline(always)]
pub fn rdtsc() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86-64.
    unsafe { std::arch::x86_64::_rdtsc() }
}

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clk: i32, ts: *mut Timespec) -> i32;
    fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
    fn munmap(addr: *mut u8, len: usize) -> i32;
    fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
    fn syscall(n: i64, ...) -> i64;
}

/// CLOCK_MONOTONIC in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec.
    unsafe { clock_gettime(1, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
}

/// size bytes mapped private and anonymous, wiped in a forked child; 0 if not.
pub fn map_wipeonfork(size: usize) -> usize {
    // SAFETY: a fresh anonymous mapping; unmapped again if madvise fails.
    unsafe {
        let p = mmap(std::ptr::null_mut(), size, 3, 0x22, -1, 0);
        if p as isize == -1 {
            return 0;
        }
        // MADV_WIPEONFORK (18): libc 0.2.139 has no name for it.
        if madvise(p, size, 18) != 0 {
            munmap(p, size);
            return 0;
        }
        p as usize
    }
}

pub fn gettid() -> u32 {
    // SAFETY: gettid takes no arguments.
    unsafe { syscall(186) as u32 }
}
