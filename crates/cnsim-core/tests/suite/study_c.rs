//! Study C's PAUSE-propagation result (C3), shortened: N3 drains at 1 Gb/s
//! during [100, 250] ms of a 300 ms run.

use crate::common::*;

const FILE: &str = "scenarios/qcn_tcp/pause_propagation.toml";
const PAUSE: [(&str, &str); 5] = [
    ("defaults.switch.buffer_model", "unlimited"),
    ("defaults.switch.pause.mode", "per_input"),
    ("switches[CENTER].pause.mode", "global"),
    ("switches[CENTER].pause.xoff", "130KB"),
    ("switches[CENTER].pause.xon", "110KB"),
];

/// Goodput (Gb/s) of N1 -> N3 and N2 -> N4 over [150, 250) ms.
fn congested(qcn: bool, pause: bool) -> (f64, f64, cnsim_core::RunResult) {
    let mut ov = vec![
        ("duration", "300ms"),
        ("hosts[N3].service.start", "100ms"),
        ("hosts[N3].service.end", "250ms"),
    ];
    if pause {
        ov.extend(PAUSE);
    }
    if qcn {
        ov.push(("qcn.enabled", "true"));
    }
    let r = run(&load_file(FILE, &ov), None);
    let n = r.series.n_bins;
    let rate = |f: usize| {
        let bytes: u64 = r.series.flow_rx_bytes[f * n + 150..f * n + 250]
            .iter()
            .sum();
        bytes as f64 * 8.0 / 0.1 / 1e9
    };
    (rate(0), rate(1), r)
}

#[test]
fn pause_drags_the_innocent_flow_down_and_qcn_restores_it() {
    // TCP alone: drops at CENTER->N3 slow N1 to N3's 1 Gb/s; N2 is untouched.
    let (n1, n2, r) = congested(false, false);
    assert!(n1 < 1.0 && n2 > 9.5, "TCP only: N1 {n1}, N2 {n2}");
    assert!(queue(&r, "CENTER->N3").drops_frames > 0);
    // With PAUSE, CENTER holds both inputs and N2 -> N4 falls to about
    // N3's drain rate.
    let (n1, n2, r) = congested(false, true);
    assert!(n1 < 1.0 && n2 < 2.0, "TCP + PAUSE: N1 {n1}, N2 {n2}");
    assert!(queue(&r, "CENTER->SW2").xoff_sent > 0);
    assert_eq!(
        r.summary.queues.iter().map(|q| q.drops_frames).sum::<u64>(),
        0
    );
    // QCN holds N1 at its rate limiter, the Center queue stays below the
    // PAUSE threshold, and N2 runs near the line rate again.
    let (n1, n2, r) = congested(true, true);
    assert!(n1 < 1.0 && n2 > 9.0, "TCP + QCN + PAUSE: N1 {n1}, N2 {n2}");
    assert!(flow(&r, "N1").counters.rl_installs > 0);
    assert_eq!(
        r.summary.queues.iter().map(|q| q.drops_frames).sum::<u64>(),
        0
    );
}
