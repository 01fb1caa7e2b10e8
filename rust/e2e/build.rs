// SPDX-License-Identifier: MIT
//! Compiles rust-mixed's C half (c/mixed.c) with the system C compiler and
//! include/recorder.h, and links the object into that binary only (no cc crate:
//! the build is offline, from Debian's packages).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let include = manifest.join("../../include");
    let src = manifest.join("c/mixed.c");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("mixed.o");
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let status = Command::new(&cc)
        .args(["-c", "-g", "-O2", "-fPIC", "-Wall", "-Wextra", "-Werror", "-std=gnu11"])
        .arg("-I")
        .arg(&include)
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler '{}': {}", cc, e));
    assert!(status.success(), "'{}' failed to compile {}", cc, src.display());
    println!("cargo:rustc-link-arg-bin=rust-mixed={}", out.display());
    println!("cargo:rerun-if-changed={}", src.display());
    println!("cargo:rerun-if-changed={}", include.join("recorder.h").display());
    println!("cargo:rerun-if-env-changed=CC");
}
