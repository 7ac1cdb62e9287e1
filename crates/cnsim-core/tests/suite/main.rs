//! cnsim-core's integration tests, in one test binary: linking one
//! binary per file took about a minute of every `make test` on two cores.
//! (`tests/fingerprints.rs` stays its own binary: `make test` also runs it
//! in a debug build.)

#[path = "../common/mod.rs"]
mod common;

mod adapter;
mod bcn;
mod classes;
mod dcqcn;
mod determinism;
mod docs;
mod fuzz_parser;
mod layers;
mod lossless_property;
mod malformed;
mod model;
mod pause_property;
mod qcn;
mod repeat;
mod split;
mod study_a;
mod study_c;
mod study_d;
mod tcp;
mod timing;
mod topology;
mod watchdog;
mod workloads;
