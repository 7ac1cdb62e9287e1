//! Study D (e2cm): ECM and E2CM on the single-hop output-generated hotspot.
//! Each run is 300 ms; the settled period is 200-300 ms (bins of 500 us).

use crate::common::*;
use cnsim_core::RunResult;

const FILE: &str = "scenarios/e2cm/e2cm.toml";
const HOT: &str = "SW->HOT";

fn variant(scheme: &str, control: &str, rtt_us: u64) -> RunResult {
    let mut ov: Vec<(String, String)> = Vec::new();
    match scheme {
        "ecm" => ov.push(("e2cm.enabled".into(), "false".into())),
        "e2cm-src" => ov.push(("e2cm.measure".into(), "source".into())),
        "e2cm-dst" => ov.push(("e2cm.measure".into(), "destination".into())),
        _ => unreachable!(),
    }
    if control != "pause" {
        ov.push(("defaults.switch.pause.mode".into(), "off".into()));
    }
    if control == "oq600" {
        ov.push(("defaults.switch.queue_limit".into(), "600KB".into()));
    }
    // The adapter's egress watermark leaves room for the delay line: 1500 KB - RTT x 10 Gb/s.
    let high = 1_500_000 - rtt_us * 1250;
    ov.push(("defaults.host.loop_delay".into(), format!("{rtt_us}us")));
    ov.push(("defaults.host.egress_high".into(), format!("{high}B")));
    ov.push((
        "defaults.host.egress_low".into(),
        format!("{}B", high - 10_000),
    ));
    let ov: Vec<(&str, &str)> = ov.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    run(&load_file(FILE, &ov), None)
}

fn drops(r: &RunResult) -> u64 {
    r.summary.queues.iter().map(|q| q.drops_frames).sum()
}

/// Per bin over the settled period: the hot queue's mean occupancy (bytes)
/// and the hot port's throughput (bit/s).
fn settled(r: &RunResult) -> (Vec<f64>, Vec<f64>) {
    let q = r.summary.queues.iter().position(|q| q.name == HOT).unwrap();
    let n = r.series.n_bins;
    let bin_s = r.series.bin.as_secs_f64();
    let (a, b) = (q * n + n * 2 / 3, (q + 1) * n);
    let occ = r.series.queue_occ_mean[a..b].to_vec();
    let tput = r.series.queue_tx_bytes[a..b]
        .iter()
        .map(|&x| x as f64 * 8.0 / bin_s)
        .collect();
    (occ, tput)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn with_pause_nothing_is_dropped_and_the_loops_stay_stable_at_500_us() {
    for scheme in ["ecm", "e2cm-src"] {
        let r = variant(scheme, "pause", 500);
        assert_eq!(drops(&r), 0, "{scheme}");
        assert_conservation(&r);
        let (occ, tput) = settled(&r);
        // No oscillation between empty and full: the hot port stays busy
        // in every 5 ms window, and its queue never empties for a whole bin
        // nor comes near the 16 x 300 KB the partitions could give it.
        for w in tput.chunks(10) {
            assert!(mean(w) > 0.95e9, "{scheme}: hot port {:.3e} b/s", mean(w));
        }
        let (lo, hi) = occ
            .iter()
            .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
        assert!(
            lo > 0.0 && hi < 2.4e6,
            "{scheme}: hot queue {lo:.0}..{hi:.0} B"
        );
    }
}

#[test]
fn ecm_holds_the_hot_queue_at_its_equilibrium() {
    let r = variant("ecm", "pause", 0);
    let (occ, _) = settled(&r);
    // Qeq = 75 KB.
    let m = mean(&occ);
    assert!((50e3..100e3).contains(&m), "{m:.0} B");
}

#[test]
fn source_and_destination_based_e2cm_agree() {
    let (src, dst) = (
        variant("e2cm-src", "pause", 0),
        variant("e2cm-dst", "pause", 0),
    );
    let (qs, qd) = (mean(&settled(&src).0), mean(&settled(&dst).0));
    assert!(
        (qs / qd - 1.0).abs() < 0.2,
        "hot queue {qs:.0} vs {qd:.0} B"
    );
    assert!(
        src.summary
            .flows
            .iter()
            .map(|f| f.counters.probes_sent)
            .sum::<u64>()
            > 0
    );
    let (ds, dd) = (
        drops(&variant("e2cm-src", "drop", 0)) as f64,
        drops(&variant("e2cm-dst", "drop", 0)) as f64,
    );
    assert!((ds / dd - 1.0).abs() < 0.1, "drops {ds} vs {dd}");
}

#[test]
fn an_output_queue_limit_cuts_drops_without_pause() {
    for scheme in ["ecm", "e2cm-src"] {
        let (plain, limited) = (
            drops(&variant(scheme, "drop", 0)),
            drops(&variant(scheme, "oq600", 0)),
        );
        assert!(
            limited > 0 && limited * 5 < plain,
            "{scheme}: {plain} vs {limited}"
        );
    }
}
