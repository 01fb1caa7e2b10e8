// SPDX-License-Identifier: MIT
//! Each thread's chain of spans (`rec__current`), as include/recorder.h keeps
//! it, with a frame per enter (docs/probe-abi.md, "A frame per enter"): the
//! layer and the subscriber both enter and exit spans through here.

use std::cell::RefCell;

use crate::abi::{self, Sema};
use crate::batch;
use crate::RecSpan;

/// A frame of the chain: the span's id, its frame, and who entered it (the
/// layer's or subscriber's address: ids of two subscribers may be equal).
#[derive(Clone, Copy)]
pub(crate) struct Entered {
    pub(crate) id: u64,
    pub(crate) frame: *mut RecSpan,
    pub(crate) owner: usize,
}

impl Entered {
    /// The frame's recording: key and address.
    pub(crate) fn recording(&self) -> (u64, u64) {
        // SAFETY: a frame on this thread's chain is valid while it is entered.
        unsafe { ((*self.frame).recording_key, (*self.frame).recording) }
    }
}

/// The frames of the spans this thread is in (a span entered on several
/// threads at once has a frame on each), and frames to reuse.
pub(crate) struct Frames {
    pub(crate) entered: Vec<Entered>,
    free: Vec<*mut RecSpan>,
}

impl Frames {
    /// This thread's last enter of span id of owner, if it is in it.
    pub(crate) fn find(&self, id: u64, owner: usize) -> Option<&Entered> {
        self.entered.iter().rev().find(|e| e.id == id && e.owner == owner)
    }
}

impl Drop for Frames {
    fn drop(&mut self) {
        for f in self.free.drain(..) {
            // SAFETY: made by Box::into_raw in enter(), on no chain any more.
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

/// f on this thread's frames; None while they are borrowed (a span entered
/// from inside the layer's own work) or gone (the thread is exiting).
pub(crate) fn with<R>(f: impl FnOnce(&mut Frames) -> R) -> Option<R> {
    FRAMES.try_with(|fr| fr.try_borrow_mut().ok().map(|mut fr| f(&mut fr))).ok().flatten()
}

/// The recording (key, address) of the thread's current span, `rec__current`
/// (a C span's too, as the header inherits it); none outside every span.
pub(crate) fn chain_recording() -> (u64, u64) {
    let cur = abi::current();
    if cur == 0 {
        return (0, 0);
    }
    // SAFETY: rec__current is a valid struct rec_span while the thread is in it.
    let s = unsafe { &*(cur as *const RecSpan) };
    (s.recording_key, s.recording)
}

/// What an exit of a span this thread is not in names: a struct that no
/// thread's chain holds, which the BPF side counts as unmatched.
static UNMATCHED: RecSpan =
    RecSpan { meta: 0, recording_key: 0, recording: 0, parent: 0, prev: 0, entered: 0 };

/// Enters span id of owner on this thread: a frame with its callsite's blob
/// and its recording, pushed onto the chain; the enter's probe or record.
pub(crate) fn enter(frames: &mut Frames, id: u64, owner: usize, meta: u64, key: u64, rec: u64) {
    let f = frames.free.pop().unwrap_or_else(|| Box::into_raw(Box::new(RecSpan::default())));
    let armed = abi::armed(Sema::SpanEnter);
    let b = if armed && abi::batch_on() { batch::get(abi::current()) } else { None };
    let prev = abi::current() as u64;
    let fr = RecSpan { meta, recording_key: key, recording: rec, parent: 0, prev, entered: 1 };
    // SAFETY: f is this thread's frame, on no chain.
    unsafe { *f = fr };
    abi::set_current(f as usize);
    frames.entered.push(Entered { id, frame: f, owner });
    if armed {
        let fa = f as u64;
        match b {
            Some(b) => batch::span(b, batch::BK_ENTER, [fa, meta, key, prev]),
            None => abi::probe_span_enter(fa, meta, key, rec, prev),
        }
    }
}

/// Exits this thread's last enter of span id of owner: its frame unlinked
/// from the chain (out of order too); the exit's probe or record. A span not
/// entered on this thread leaves the chain as it is.
pub(crate) fn exit(id: u64, owner: usize) {
    with(|frames| {
        let armed = abi::armed(Sema::SpanExit);
        let at = frames.entered.iter().rposition(|e| e.id == id && e.owner == owner);
        let f = match at {
            Some(i) => frames.entered.remove(i).frame,
            None => {
                // The BPF side counts it as unmatched.
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
            // SAFETY: made by Box::into_raw in enter(), on no chain any more.
            drop(unsafe { Box::from_raw(f) });
        }
    });
}

/// The exit of a span this thread is not in (include/recorder.h fires the
/// same probe for a span it is not in).
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

#[cfg(test)]
mod tests {
    use super::*;

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
