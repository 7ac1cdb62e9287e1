//! Benchmarks: study A end to end (frame-hops/s as criterion throughput),
//! one TCP flow against one UDP flow of the same rate, the cost of one
//! frame-hop on the simplest path, and the event queue on its own.
//!
//! `cargo bench -p cnsim-core --bench engine`

use cnsim_core::engine::{EventKey, EventQueue};
use cnsim_core::units::Time;
use cnsim_core::{RunOptions, Scenario};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;
use std::path::PathBuf;

#[path = "../tests/common/line.rs"]
mod line;
use line::Line;

fn scenario(rel: &str) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    cnsim_core::scenario::load_file(&path, &[]).expect("shipped scenario is valid")
}

/// Whole runs of `sc`, with frame-hops per second as the throughput.
fn bench_runs(c: &mut Criterion, group: &str, function: &str, samples: usize, sc: &Scenario) {
    let probe = cnsim_core::run(sc, &RunOptions::default()).expect("runs");
    eprintln!(
        "{group}: {} events, {} frame-hops per run",
        probe.summary.events, probe.summary.frame_hops
    );
    let mut g = c.benchmark_group(group);
    g.sample_size(samples);
    g.throughput(Throughput::Elements(probe.summary.frame_hops));
    g.bench_function(function, |b| {
        b.iter(|| cnsim_core::run(black_box(sc), &RunOptions::default()).unwrap())
    });
    g.finish();
}

fn study_a(c: &mut Criterion) {
    for variant in ["no_cm", "pause", "bcn", "bcn_pause"] {
        let sc = scenario(&format!("scenarios/baseline/{variant}.toml"));
        bench_runs(c, &format!("baseline/{variant}"), "frame-hops", 20, &sc);
    }
}

/// H1 -- SW -- H2 at 10 Gb/s, 100 ms of 9 KB transactions at 50% load
/// over `transport`, behind a 1 Gb/s drain from 40 ms to 60 ms (drops for
/// UDP, losses and recovery for TCP), so TCP's whole state machine runs.
fn transport_pair(transport: &str) -> Scenario {
    let text = Line {
        duration: "100ms",
        delay: "2us",
        switch: r#"buffer = "150KB""#,
        h1: r#"egress = "150KB""#,
        h2: r#"service = { rate = "1Gbps", start = "40ms", end = "60ms" }"#,
        source: &format!(
            "kind = \"transactions\"\ntransaction = \"9KB\"\ntransport = \"{transport}\"\nload = 0.5"
        ),
        ..Line::default()
    }
    .toml();
    cnsim_core::scenario::load(&text, "pair.toml", cnsim_core::Format::Toml, &[])
        .expect("valid scenario")
}

fn transport(c: &mut Criterion) {
    for t in ["udp", "tcp"] {
        bench_runs(
            c,
            &format!("transport/{t}"),
            "frame-hops",
            20,
            &transport_pair(t),
        );
    }
}

/// One saturated UDP source, H1 -> SW -> H2, 10 ms: nothing but frames
/// moving (two hops each), so the time per element is one frame-hop's cost.
fn frame_hop(c: &mut Criterion) {
    let text = r#"
duration = "10ms"
[[switches]]
name = "SW"
latency = "1us"
buffer = "150KB"
[[hosts]]
name = "H1"
egress = "150KB"
[[hosts]]
name = "H2"
[[links]]
between = ["H1", "SW"]
delay = "0.5us"
[[links]]
between = ["SW", "H2"]
delay = "0.5us"
[[sources]]
host = "H1"
to = "H2"
load = 1.0
"#;
    let sc = cnsim_core::scenario::load(text, "hop.toml", cnsim_core::Format::Toml, &[])
        .expect("valid scenario");
    bench_runs(c, "frame_hop", "two-hop path", 30, &sc);
}

/// As large as the simulator's events (12 bytes).
#[derive(Clone, Copy)]
struct Ev(#[allow(dead_code)] [u32; 3]);
impl EventKey for Ev {
    fn tie(&self, _time: Time) -> u64 {
        0
    }
}

fn event_queue(c: &mut Criterion) {
    // Hold `pending` events and do pop/schedule pairs, as a network does:
    // study A keeps about 17 pending, a fat tree thousands.
    let mut g = c.benchmark_group("event_queue");
    g.throughput(Throughput::Elements(100_000));
    for pending in [16u64, 1000, 100_000] {
        g.bench_function(format!("pop+schedule, {pending} pending"), |b| {
            b.iter_batched(
                || {
                    let mut q = EventQueue::with_capacity(2 * pending as usize);
                    for i in 0..pending {
                        q.schedule(Time(i * 997 % pending), Ev([i as u32; 3]));
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
                        q.schedule(Time(t.0 + 1 + (x >> 54) % (2 * pending)), e);
                    }
                    q
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, study_a, transport, frame_hop, event_queue);
criterion_main!(benches);
