//! Study A (baseline): `no_cm` drops match the analytic excess; `pause`
//! drops nothing and slows the innocent flow (head-of-line blocking at E4).

use crate::common::*;

const FRAME_BITS: f64 = 1500.0 * 8.0;

#[test]
fn no_cm_drops_match_the_analytic_excess_at_the_core_port_toward_s1() {
    let sc = load_file("scenarios/baseline/no_cm.toml", &[]);
    let r = run(&sc, None);
    assert_conservation(&r);
    // Offered to S1 while all four culprits run (5..85 ms): 4 x 48% of 10 Gb/s
    // into a 10 Gb/s port. After 85 ms two culprits (9.6 Gb/s) fit, and the
    // full buffer (150 KiB = 102 frames) drains instead of overflowing.
    let culprits: Vec<_> = sc
        .sources
        .iter()
        .filter(|s| sc.nodes[s.dsts[0]].name == "S1")
        .collect();
    assert_eq!(culprits.len(), 4);
    let both_on = 0.080;
    let offered_bps: f64 = culprits.iter().map(|s| s.load * 10e9).sum();
    let excess_frames = (offered_bps - 10e9) * both_on / FRAME_BITS;
    let buffered_frames = (150.0 * 1024.0 / 1500.0f64).floor();
    let expected = excess_frames - buffered_frames;
    let core = queue(&r, "CORE->S1");
    let drops = core.drops_frames as f64;
    assert!(
        (drops - expected).abs() / expected < 0.05,
        "drops {drops} vs analytic {expected:.0}"
    );
    // All of them at that one port.
    assert_eq!(core.drops_frames, r.summary.totals.volume.dropped_frames);
    // The congested link runs at line rate while oversubscribed.
    let s1: u64 = r
        .summary
        .flows
        .iter()
        .filter(|f| f.dst == "S1")
        .map(|f| f.counters.volume.delivered_bytes)
        .sum();
    let gbps = s1 as f64 * 8.0 / 0.095 / 1e9;
    assert!(gbps > 9.9, "S1 received {gbps} Gb/s");
}

#[test]
fn pause_drops_nothing_and_slows_the_innocent_flow() {
    let no_cm = run(&load_file("scenarios/baseline/no_cm.toml", &[]), None);
    let pause = run(&load_file("scenarios/baseline/pause.toml", &[]), None);
    assert_conservation(&pause);
    assert_eq!(pause.summary.totals.volume.dropped_frames, 0);
    assert!(pause.summary.totals.pause_frames_sent > 0);
    // E4's inputs (C4 and CR1) are paused, not only the culprits' ports.
    assert!(queue(&pause, "CR1->E4").paused_time_s > 0.01);
    let innocent =
        |r: &cnsim_core::RunResult| flow(r, "CR1->S2").counters.volume.delivered_bytes as f64;
    let ratio = innocent(&pause) / innocent(&no_cm);
    assert!(
        ratio < 0.6,
        "innocent flow under PAUSE is {ratio:.2} of its no_cm throughput"
    );
    // Without PAUSE the innocent flow gets what it offers (4 Gb/s over 95 ms).
    let offered = flow(&no_cm, "CR1->S2").counters.volume.offered_bytes as f64;
    assert!(innocent(&no_cm) / offered > 0.999);
}

#[test]
fn pause_keeps_every_switch_buffer_within_its_size() {
    let pause = run(&load_file("scenarios/baseline/pause.toml", &[]), None);
    for q in &pause.summary.queues {
        assert!(
            q.max_occupancy_bytes <= 150 * 1024,
            "{} reached {} B",
            q.name,
            q.max_occupancy_bytes
        );
    }
}
