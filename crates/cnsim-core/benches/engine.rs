//! Benchmarks: study A end to end (frame-hops/s as criterion throughput)
//! and the event queue on its own.
//!
//! `cargo bench -p cnsim-core --bench engine`

use cnsim_core::engine::{EventClass, EventQueue};
use cnsim_core::units::Time;
use cnsim_core::{RunOptions, Scenario};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;
use std::path::PathBuf;

fn scenario(rel: &str) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    cnsim_core::scenario::load_file(&path, &[]).expect("shipped scenario is valid")
}

fn study_a(c: &mut Criterion) {
    for variant in ["no_cm", "pause", "bcn", "bcn_pause"] {
        let sc = scenario(&format!("scenarios/baseline/{variant}.toml"));
        let probe = cnsim_core::run(&sc, &RunOptions::default()).expect("runs");
        eprintln!(
            "baseline/{variant}: {} events, {} frame-hops per 100 ms run",
            probe.summary.events, probe.summary.frame_hops
        );
        let mut g = c.benchmark_group(format!("baseline/{variant}"));
        g.sample_size(20);
        g.throughput(Throughput::Elements(probe.summary.frame_hops));
        g.bench_function("frame-hops", |b| {
            b.iter(|| cnsim_core::run(black_box(&sc), &RunOptions::default()).unwrap())
        });
        g.finish();
    }
}

#[derive(Clone, Copy)]
struct Ev(#[allow(dead_code)] [u64; 4]);
impl EventClass for Ev {
    fn class(&self) -> u8 {
        0
    }
}

fn event_queue(c: &mut Criterion) {
    // Hold ~1000 pending events and do push/pop pairs, as a busy network does.
    let mut g = c.benchmark_group("event_queue");
    g.throughput(Throughput::Elements(100_000));
    g.bench_function("push+pop, 1000 pending", |b| {
        b.iter_batched(
            || {
                let mut q = EventQueue::with_capacity(2048);
                for i in 0..1000u64 {
                    q.schedule(Time(i * 997 % 1000), Ev([i; 4]));
                }
                q
            },
            |mut q| {
                let mut x = 12345u64;
                for _ in 0..100_000 {
                    let (t, e) = q.pop().unwrap();
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    q.schedule(Time(t.0 + 1 + (x >> 54)), e);
                }
                q
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, study_a, event_queue);
criterion_main!(benches);
