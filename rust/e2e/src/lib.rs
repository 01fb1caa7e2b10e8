// SPDX-License-Identifier: MIT
//! What every test program shares with tests/targets/scenario.c: the protocol the
//! shell drives it with ("pid N", wait for the attach, "recording NAME 0xKEY" lines,
//! "ready", then SIGTERM or SIGINT to end), written with std alone (no libc crate).

use std::io::Write;
use std::process::exit;
use std::thread::sleep;
use std::time::{Duration, Instant};

/// How long a program waits for recorder-attach before it gives up (exit status 3).
pub const ATTACH_TIMEOUT: Duration = Duration::from_secs(20);

const SIG_BLOCK: i32 = 0;
const SIGINT: i32 = 2;
const SIGUSR1: i32 = 10;
const SIGUSR2: i32 = 12;
const SIGTERM: i32 = 15;

/// glibc's sigset_t on Linux: 1024 bits.
#[repr(C)]
struct SigSet([u64; 16]);

extern "C" {
    fn sigemptyset(set: *mut SigSet) -> i32;
    fn sigaddset(set: *mut SigSet, sig: i32) -> i32;
    fn pthread_sigmask(how: i32, set: *const SigSet, old: *mut SigSet) -> i32;
    fn sigwait(set: *const SigSet, sig: *mut i32) -> i32;
    fn sigtimedwait(set: *const SigSet, info: *mut [u64; 16], timeout: *const [i64; 2]) -> i32;
}

fn sigset(sigs: &[i32]) -> SigSet {
    let mut set = SigSet([0; 16]);
    // SAFETY: set is a valid sigset_t-sized buffer; the signal numbers are valid.
    unsafe {
        sigemptyset(&mut set);
        for &s in sigs {
            sigaddset(&mut set, s);
        }
    }
    set
}

/// Blocks SIGTERM, SIGINT, SIGUSR1 and SIGUSR2 in this thread and every thread it starts
/// later, so that they stay pending for wait_* below instead of ending the process.
/// Call it first in main, before any thread exists.
pub fn block_signals() {
    let set = sigset(&[SIGTERM, SIGINT, SIGUSR1, SIGUSR2]);
    // SAFETY: a valid set; no old set wanted.
    unsafe {
        pthread_sigmask(SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Until one of sigs arrives; returns it.
fn wait_signals(sigs: &[i32]) -> i32 {
    let set = sigset(sigs);
    let mut sig = 0;
    // SAFETY: a valid set and out pointer.
    while unsafe { sigwait(&set, &mut sig) } != 0 {}
    sig
}

/// Until SIGTERM or SIGINT arrives.
pub fn wait_stop() {
    wait_signals(&[SIGTERM, SIGINT]);
}

/// Until SIGUSR1 arrives.
pub fn wait_usr1() {
    wait_signals(&[SIGUSR1]);
}

/// Whether SIGUSR2 was pending (it is taken): no wait.
pub fn usr2_pending() -> bool {
    let set = sigset(&[SIGUSR2]);
    let zero = [0i64; 2];
    let mut info = [0u64; 16];
    // SAFETY: a valid set, a siginfo_t-sized buffer (128 bytes) and a zero timespec.
    unsafe { sigtimedwait(&set, &mut info, &zero) == SIGUSR2 }
}

/// Until SIGUSR1 (true) or SIGTERM or SIGINT (false) arrives.
pub fn wait_usr1_or_stop() -> bool {
    wait_signals(&[SIGUSR1, SIGTERM, SIGINT]) == SIGUSR1
}

/// Prints a line and flushes it at once: the shell waits for these lines.
pub fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", line);
    let _ = out.flush();
}

/// "pid N", the line start_target (tests/e2e/lib.sh) waits for.
pub fn say_pid(prog: &str) {
    say(&format!("{}: pid {}", prog, std::process::id()));
}

/// Until recorder-attach has attached every probe of this process; exits 3 after
/// ATTACH_TIMEOUT, like scenario.c.
pub fn wait_for_attach(prog: &str) {
    let deadline = Instant::now() + ATTACH_TIMEOUT;
    while !recorder_tracing::is_attached() {
        if Instant::now() >= deadline {
            eprintln!("{}: no recorder attached after {} s", prog, ATTACH_TIMEOUT.as_secs());
            exit(3);
        }
        sleep(Duration::from_millis(1));
    }
}

/// Installs recorder as the program's subscriber: the layer on a registry, or
/// with REC_RUST_SUBSCRIBER=own in the environment recorder's own subscriber
/// (tests/e2e/test_rust.sh runs its tests both ways).
pub fn install(recorder: &recorder_tracing::Recorder) {
    use tracing_subscriber::prelude::*;
    match std::env::var("REC_RUST_SUBSCRIBER").as_deref() {
        Ok("own") => {
            if tracing::subscriber::set_global_default(recorder.subscriber()).is_err() {
                eprintln!("a subscriber was installed already");
                exit(2);
            }
            say("subscriber: own");
        }
        Ok("layer") | Err(_) => tracing_subscriber::registry().with(recorder.layer()).init(),
        Ok(other) => {
            eprintln!("REC_RUST_SUBSCRIBER: '{}' is neither own nor layer", other);
            exit(2);
        }
    }
}
