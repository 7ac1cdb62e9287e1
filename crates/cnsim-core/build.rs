//! Engine identity: a hash of the engine's sources and the locked
//! dependency versions, compiled in as `CNSIM_ENGINE_ID`. A result records
//! it, so that a sweep resumed after the engine changed recomputes its
//! points instead of reusing results of another engine.
//!
//! Also the build's flavour, `CNSIM_BUILD` ("release", "release, PGO",
//! "debug"), which benchmark reports state beside their numbers.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("src is readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let mut paths = Vec::new();
    files(&root.join("src"), &mut paths);
    paths.push(root.join("Cargo.toml"));
    let lock = root.join("../../Cargo.lock");
    if lock.is_file() {
        paths.push(lock);
    }
    // FNV-1a, 64 bits: stable across platforms and toolchains.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in &paths {
        let rel = p
            .strip_prefix(&root)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read(p).expect("source is readable");
        for b in rel.bytes().chain([0]).chain(text).chain([0]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
    }
    println!("cargo:rustc-env=CNSIM_ENGINE_ID={h:016x}");
    let profile = std::env::var("PROFILE").unwrap_or_default();
    let pgo = std::env::var("CARGO_ENCODED_RUSTFLAGS")
        .is_ok_and(|f| f.split('\x1f').any(|flag| flag.contains("profile-use")));
    let build = if pgo {
        format!("{profile}, PGO")
    } else {
        profile
    };
    println!("cargo:rustc-env=CNSIM_BUILD={build}");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=../../Cargo.lock");
}
