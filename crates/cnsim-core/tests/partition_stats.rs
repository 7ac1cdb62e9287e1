//! Partition statistics (feature `partition-stats`, docs/parallel.md):
//! counts that can be worked out by hand.
//!
//! cargo test -p cnsim-core --profile release-tests --features partition-stats --test partition_stats

use cnsim_core::scenario::{load, Format};
use cnsim_core::sim::partstats::{run_partitioned, FatTreeRule, PartitionReport, Partitioning};
use cnsim_core::units::Time;
use cnsim_core::{RunOptions, Scenario};

const US: u64 = 1_000_000;

/// H1 -- S1 -- S2 -- H2, 10 Gb/s links of 1 us, switch latency and PAUSE
/// response 1 us; H1 sends one 1500 B frame (1.2 us on the wire) to H2 at
/// the start of each of the first three slots: at 0, 1.2 and 2.4 us.
fn line(extra_s2: &str, source: &str, sections: &str) -> Scenario {
    let text = format!(
        r#"
duration = "20us"
[defaults.link]
rate = "10Gbps"
delay = "1us"
[defaults.switch]
latency = "1us"
response_time = "1us"
[[switches]]
name = "S1"
[[switches]]
name = "S2"
{extra_s2}
[[hosts]]
name = "H1"
[[hosts]]
name = "H2"
[[links]]
between = ["H1", "S1"]
[[links]]
between = ["S1", "S2"]
[[links]]
between = ["S2", "H2"]
[[sources]]
host = "H1"
to = "H2"
frame = "1500B"
slot_offset = "0ns"
{source}
{sections}
"#
    );
    load(&text, "line.toml", Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"))
}

fn split(sc: &Scenario) -> Partitioning {
    Partitioning::by_names(sc, &[&["H1", "S1"], &["S2", "H2"]]).unwrap()
}

fn windows(r: &PartitionReport, v: &[u32], p: usize) -> Vec<u32> {
    (0..r.windows).map(|w| v[w * r.parts() + p]).collect()
}

/// Each frame: SourceFire at H1 (t0), TxDone at H1 (t0 + 1.2), Arrive at S1
/// (+ 1 us link + 1 us latency: t0 + 3.2), TxDone at S1 (t0 + 4.4), Arrive
/// at S2 (t0 + 6.4, the crossing), TxDone at S2 (t0 + 7.6); the last hop's
/// frame is delivered at its last bit, without an event. With L = 2 us the
/// windows are [0, 2), [2, 4), ... us; for t0 = 0, 1.2, 2.4:
///
/// | window | P1 (H1, S1)                        | P2 (S2, H2)          | crossed into P2 |
/// |---|---|---|---|
/// | 0 | SF 0, Tx 1.2, SF 1.2                      | | |
/// | 1 | Arr 3.2, Tx 2.4, SF 2.4, Tx 3.6           | | |
/// | 2 | Tx 4.4, Arr 4.4, Tx 5.6, Arr 5.6          | | |
/// | 3 | Tx 6.8                                    | Arr 6.4, Tx 7.6, Arr 7.6 | 2 |
/// | 4 | | Tx 8.8, Arr 8.8 | 1 |
/// | 5 | | Tx 10.0 | |
#[test]
fn three_frames_across_two_switches() {
    let sc = line("", "load = 1.0\nstop = \"3.6us\"", "");
    let part = split(&sc);
    let (result, r) = run_partitioned(&sc, &RunOptions::default(), &part, None).unwrap();
    assert_eq!(r.lookahead, Time(2 * US));
    assert_eq!(r.windows, 10);
    assert_eq!(windows(&r, &r.events, 0), [3, 4, 4, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(windows(&r, &r.events, 1), [0, 0, 0, 3, 2, 1, 0, 0, 0, 0]);
    assert_eq!(windows(&r, &r.crossed, 0), [0; 10]);
    assert_eq!(windows(&r, &r.crossed, 1), [0, 0, 0, 2, 1, 0, 0, 0, 0, 0]);
    assert_eq!(r.total_events(), result.summary.events);
    assert_eq!(r.pairs, [0, 3, 0, 0]);
    assert_eq!(r.crossings.len(), 1);
    assert_eq!((r.crossings[0].kind, r.crossings[0].count), ("Arrive", 3));
    assert_eq!(r.crossings[0].min_delay, Time(2 * US));
    assert_eq!((r.short, r.direct), (0, 0));
    assert_eq!(result.summary.totals.volume.delivered_frames, 3);
    // Windows 0-5 have events; the busiest partition over the mean of the
    // two: 3 / 1.5, 4 / 2, 4 / 2, 3 / 2 (P1 1, P2 3), 2 / 1, 1 / 0.5.
    let expected = (2.0 + 2.0 + 2.0 + 1.5 + 2.0 + 2.0) / 6.0;
    assert!(
        (r.imbalance() - expected).abs() < 1e-12,
        "{}",
        r.imbalance()
    );
    // 18 events; on two threads each window takes its larger partition:
    // 3 + 4 + 4 + 3 + 2 + 1 = 17, plus the sync cost in each of 10 windows.
    assert!((r.speedup(2, 0.0) - 18.0 / 17.0).abs() < 1e-12);
    assert!((r.speedup(2, 1.0) - 18.0 / 27.0).abs() < 1e-12);
    assert!((r.speedup(1, 0.0) - 1.0).abs() < 1e-12);
    // The recorder changes nothing: the same run without it.
    let plain = cnsim_core::run(&sc, &RunOptions::default()).unwrap();
    assert_eq!(plain.summary.fingerprint, result.summary.fingerprint);
    assert_eq!(plain.summary.events, result.summary.events);
}

/// Everything in one partition: one window, no crossing.
#[test]
fn one_partition_has_one_window_and_no_crossing() {
    let sc = line("", "load = 1.0\nstop = \"3.6us\"", "");
    let (result, r) = run_partitioned(
        &sc,
        &RunOptions::default(),
        &Partitioning::single(&sc),
        None,
    )
    .unwrap();
    assert_eq!((r.windows, r.lookahead), (1, Time(20 * US)));
    assert_eq!(r.events, [result.summary.events as u32]);
    assert_eq!((r.total_crossed(), r.direct), (0, 0));
}

/// H2 on S1's side: the last hop crosses, and its UDP frames are delivered
/// at their last bit, a change at another partition without an event. The
/// host link is the only one between partitions: L = 1 us (no latency at a
/// host, PAUSE response 1 us).
#[test]
fn a_delivery_at_the_last_bit_is_a_direct_change() {
    let sc = line(
        "",
        "load = 1.0\nstop = \"3.6us\"",
        "[defaults.host]\nresponse_time = \"1us\"",
    );
    let part = Partitioning::by_names(&sc, &[&["H1", "S1", "S2"], &["H2"]]).unwrap();
    let (_, r) = run_partitioned(&sc, &RunOptions::default(), &part, None).unwrap();
    assert_eq!(r.lookahead, Time(US));
    assert_eq!((r.direct, r.total_crossed()), (3, 0));
    assert_eq!(windows(&r, &r.events, 1), [0; 20]);
}

/// S2's link to H2 at 1 Gb/s and H1 at the full 10 Gb/s for 60 us: S2's
/// queue passes XOFF and S2 pauses S1. Every PAUSE frame S2 sends is a
/// crossing (PauseRx at S1), as is every frame S1 sends (Arrive at S2),
/// each 2 us after its cause; the source stops early enough that all of
/// them take effect before the end.
#[test]
fn pause_frames_cross_like_data() {
    let sc = line_slow_s2();
    let part = split(&sc);
    let (result, r) = run_partitioned(&sc, &RunOptions::default(), &part, None).unwrap();
    let q = |name: &str| {
        result
            .summary
            .queues
            .iter()
            .find(|q| q.name == name)
            .unwrap_or_else(|| panic!("queue {name}"))
    };
    let frames_s1 = q("S1->S2").tx_bytes / 1500;
    let pauses_s2 = q("S2->S1").pause_frames_sent;
    assert!(pauses_s2 > 0, "S2 paused S1");
    let count = |kind: &str| {
        r.crossings
            .iter()
            .find(|c| c.kind == kind)
            .map_or(0, |c| c.count)
    };
    assert_eq!(count("Arrive"), frames_s1);
    assert_eq!(count("PauseRx"), pauses_s2);
    assert_eq!(r.total_crossed(), frames_s1 + pauses_s2);
    assert_eq!(r.pairs, [0, frames_s1, pauses_s2, 0]);
    assert_eq!(r.short, 0);
    assert!(r.crossings.iter().all(|c| c.min_delay == Time(2 * US)));
    assert_eq!(r.total_events(), result.summary.events);
    let plain = cnsim_core::run(&sc, &RunOptions::default()).unwrap();
    assert_eq!(plain.summary.fingerprint, result.summary.fingerprint);
}

fn line_slow_s2() -> Scenario {
    let text = r#"
duration = "400us"
[defaults.link]
rate = "10Gbps"
delay = "1us"
[defaults.switch]
latency = "1us"
response_time = "1us"
buffer_model = "per_output"
buffer = "100KB"
[[switches]]
name = "S1"
[[switches]]
name = "S2"
pause = { mode = "global", xoff = "20KB", xon = "10KB" }
[[hosts]]
name = "H1"
[[hosts]]
name = "H2"
[[links]]
between = ["H1", "S1"]
[[links]]
between = ["S1", "S2"]
[[links]]
between = ["S2", "H2"]
rate = "1Gbps"
[[sources]]
host = "H1"
to = "H2"
frame = "1500B"
slot_offset = "0ns"
load = 1.0
stop = "60us"
"#;
    load(text, "slow.toml", Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// The fat-tree rules on k = 4: who goes where, and the lookahead.
#[test]
fn fat_tree_rules() {
    let text = r#"
duration = "10us"
[topology]
kind = "fat_tree"
k = 4
[defaults.link]
rate = "10Gbps"
delay = "1us"
[defaults.switch]
latency = "500ns"
response_time = "700ns"
[[sources]]
host = "H1.1.1"
to = "H4.2.2"
load = 0.5
"#;
    let sc = load(text, "ft.toml", Format::Toml, &[]).unwrap();
    let of = |p: &Partitioning, name: &str| {
        let n = sc.nodes.iter().position(|n| n.name == name).unwrap();
        p.names[p.node_part[n] as usize].clone()
    };
    let pod = Partitioning::fat_tree(&sc, FatTreeRule::PodCoresSpread).unwrap();
    assert_eq!(pod.len(), 4);
    assert_eq!(of(&pod, "H3.2.1"), "pod 3");
    assert_eq!(of(&pod, "A3.2"), "pod 3");
    // Cores C1.1, C1.2, C2.1, C2.2 are numbered 0-3: pods 1-4.
    assert_eq!(
        ["C1.1", "C1.2", "C2.1", "C2.2"].map(|c| of(&pod, c)),
        ["pod 1", "pod 2", "pod 3", "pod 4"]
    );
    let own = Partitioning::fat_tree(&sc, FatTreeRule::PodCoresOwn).unwrap();
    assert_eq!(own.len(), 5);
    assert_eq!(of(&own, "C2.1"), "cores");
    let edge = Partitioning::fat_tree(&sc, FatTreeRule::Edge).unwrap();
    assert_eq!(edge.len(), 8);
    assert_eq!(of(&edge, "H2.2.1"), "E2.2");
    assert_eq!(of(&edge, "A2.2"), "E2.2");
    // C2.1 (number 2) is with A3.2, in E3.2's partition.
    assert_eq!(of(&edge, "C2.1"), "E3.2");
    // Between switches: 1 us + 500 ns latency, or 1 us + 700 ns response.
    for p in [&pod, &own, &edge] {
        let (_, r) = run_partitioned(&sc, &RunOptions::default(), p, None).unwrap();
        assert_eq!(r.lookahead, Time(1_500_000));
        assert_eq!((r.short, r.direct), (0, 0));
    }
}

/// Each sending host starts its own workload flows (one `FlowStart`
/// chain per host): H1's flow at 0 and H2's at 0 and 0.5 us start from
/// events of their own hosts, so nothing crosses but frames, one
/// lookahead or more ahead.
#[test]
fn workload_starts_stay_with_their_host() {
    let sc = line(
        "",
        "load = 0.1\nstop = \"1us\"",
        r#"[[workloads]]
name = "w"
kind = "list"
flows = [
  { from = "H1", to = "H2", size = 3000, start = "0us" },
  { from = "H2", to = "H1", size = 3000, start = "0us" },
  { from = "H2", to = "H1", size = 3000, start = "0.5us" },
]"#,
    );
    let (result, r) = run_partitioned(&sc, &RunOptions::default(), &split(&sc), None).unwrap();
    assert!(!r.crossings.is_empty(), "the frames cross");
    for c in &r.crossings {
        assert_eq!(c.kind, "Arrive", "{c:?}");
        assert!(c.min_delay >= r.lookahead, "{c:?}");
    }
    assert_eq!((r.short, r.direct), (0, 0));
    assert_eq!(r.total_events(), result.summary.events);
    assert_eq!(result.workload_flows.len(), 3);
    assert!(
        result
            .workload_flows
            .iter()
            .all(|f| f.record.finish.is_some()),
        "all three finish"
    );
}
