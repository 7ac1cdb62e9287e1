//! Benchmarks: study A end to end (frame-hops/s as criterion throughput),
//! one TCP flow against one UDP flow of the same rate, and the event queue
//! on its own.
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

/// H1 -- SW -- H2 at 10 Gb/s, 100 ms of 9 KB transactions at 50% load
/// over `transport`, behind a 1 Gb/s drain from 40 ms to 60 ms (drops for
/// UDP, losses and recovery for TCP), so TCP's whole state machine runs.
fn transport_pair(transport: &str) -> Scenario {
    let text = format!(
        r#"
duration = "100ms"
[defaults.link]
rate = "10Gbps"
delay = "2us"
[[switches]]
name = "SW"
latency = "1us"
buffer = "150KB"
[[hosts]]
name = "H1"
egress = "150KB"
[[hosts]]
name = "H2"
service = {{ rate = "1Gbps", start = "40ms", end = "60ms" }}
[[links]]
between = ["H1", "SW"]
[[links]]
between = ["SW", "H2"]
[[sources]]
host = "H1"
to = "H2"
kind = "transactions"
transaction = "9KB"
transport = "{transport}"
load = 0.5
"#
    );
    cnsim_core::scenario::load(&text, "pair.toml", cnsim_core::Format::Toml, &[])
        .expect("valid scenario")
}

fn transport(c: &mut Criterion) {
    for t in ["udp", "tcp"] {
        let sc = transport_pair(t);
        let probe = cnsim_core::run(&sc, &RunOptions::default()).expect("runs");
        eprintln!(
            "transport/{t}: {} events, {} frame-hops per 100 ms run",
            probe.summary.events, probe.summary.frame_hops
        );
        let mut g = c.benchmark_group(format!("transport/{t}"));
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

criterion_group!(benches, study_a, transport, event_queue);
criterion_main!(benches);
