#![allow(dead_code)]
//! Helpers shared by the integration tests.

use cnsim_core::scenario::{self, Format};
use cnsim_core::{RunOptions, RunResult, Scenario};
use std::path::PathBuf;

mod line;
mod star;
#[allow(unused_imports)]
pub use line::Line;
#[allow(unused_imports)]
pub use star::{overload, two_to_one};

pub fn repo_file(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

pub fn load_str(text: &str) -> Scenario {
    scenario::load(text, "test.toml", Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"))
}

pub fn load_file(rel: &str, overrides: &[(&str, &str)]) -> Scenario {
    let ov: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    scenario::load_file(&repo_file(rel), &ov).unwrap_or_else(|e| panic!("{e}"))
}

pub fn run(sc: &Scenario, seed: Option<u64>) -> RunResult {
    cnsim_core::run(
        sc,
        &RunOptions {
            seed,
            ..RunOptions::default()
        },
    )
    .expect("run completes")
}

pub fn flow<'a>(r: &'a RunResult, name: &str) -> &'a cnsim_core::results::FlowSummary {
    r.summary
        .flows
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no flow {name}"))
}

pub fn queue<'a>(r: &'a RunResult, name: &str) -> &'a cnsim_core::results::QueueSummary {
    r.summary
        .queues
        .iter()
        .find(|q| q.name == name)
        .unwrap_or_else(|| panic!("no queue {name}"))
}

/// Offered = delivered + dropped + still buffered or in flight, per flow.
/// A stopped run's results end at the end of the run's window that holds
/// the stop (windows `[kW, (k+1)W)`), or one picosecond after the stop's
/// instant without a window.
pub fn assert_stops_at_its_window_end(r: &RunResult) {
    let p = r.summary.partial.as_ref().expect("stopped early");
    let ps = |s: f64| (s * 1e12).round() as u64;
    let end = match r.summary.window_s {
        Some(w) => (ps(p.reached_s) / ps(w) + 1) * ps(w),
        None => ps(p.reached_s) + 1,
    };
    assert_eq!(ps(p.at_s), end, "{p:?}, window {:?}", r.summary.window_s);
}

pub fn assert_conservation(r: &RunResult) {
    for f in &r.summary.flows {
        let c = &f.counters;
        assert_eq!(
            c.volume.offered_bytes,
            c.volume.delivered_bytes + c.volume.dropped_bytes + c.volume.in_flight_bytes,
            "bytes of flow {} are not conserved: {c:?}",
            f.name
        );
        assert_eq!(
            c.volume.offered_frames,
            c.volume.delivered_frames + c.volume.dropped_frames + c.volume.in_flight_frames,
            "frames of flow {}",
            f.name
        );
    }
    let queue_drops: u64 = r.summary.queues.iter().map(|q| q.drops_frames).sum();
    assert_eq!(
        queue_drops, r.summary.totals.volume.dropped_frames,
        "per-queue drops add up to per-flow drops"
    );
    let series_drops: u64 = r.series.queue_drops.iter().sum();
    assert_eq!(
        series_drops, queue_drops,
        "binned drops add up to the counters"
    );
    let rx: u64 = r.series.flow_rx_bytes.iter().sum();
    assert_eq!(
        rx, r.summary.totals.volume.delivered_bytes,
        "binned deliveries add up"
    );
    let tx: u64 = r.series.flow_tx_bytes.iter().sum();
    assert_eq!(
        tx, r.summary.totals.volume.offered_bytes,
        "binned offered bytes add up"
    );
}

/// The `[topology]` example of the format doc (`## Topology generators`).
#[allow(dead_code)]
pub fn documented_topology_example() -> String {
    let doc = std::fs::read_to_string(repo_file("docs/scenario-format.md")).unwrap();
    let section = doc
        .find("## Topology generators")
        .expect("a topology section");
    let start = section + doc[section..].find("```toml\n").unwrap() + "```toml\n".len();
    let end = start + doc[start..].find("```").unwrap();
    doc[start..end].to_string()
}
