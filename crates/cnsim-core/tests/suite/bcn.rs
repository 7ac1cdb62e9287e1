//! BCN on the shipped study scenarios: study A's `bcn` and `bcn_pause`
//! against `no_cm` and `pause`, and study E's control loop.

use crate::common::*;
use cnsim_core::RunResult;

/// Mean delivered rate of a flow over [from, to), Gb/s, from the binned series.
fn flow_gbps(r: &RunResult, name: &str, from_ms: u64, to_ms: u64) -> f64 {
    let i = r.summary.flows.iter().position(|f| f.name == name).unwrap();
    let n = r.series.n_bins;
    let bin_ms = r.series.bin.as_secs_f64() * 1e3;
    let (a, b) = (
        (from_ms as f64 / bin_ms) as usize,
        (to_ms as f64 / bin_ms) as usize,
    );
    let bytes: u64 = r.series.flow_rx_bytes[i * n + a..i * n + b].iter().sum();
    bytes as f64 * 8.0 / ((to_ms - from_ms) as f64 * 1e-3) / 1e9
}

/// Sum of a per-queue binned counter over bins starting at or after `from_ms`.
fn after(r: &RunResult, series: &[u64], from_ms: u64) -> u64 {
    let n = r.series.n_bins;
    let first = (from_ms as f64 / (r.series.bin.as_secs_f64() * 1e3)) as usize;
    series
        .chunks(n)
        .map(|row| row[first..].iter().sum::<u64>())
        .sum()
}

#[test]
fn study_a_bcn_drops_ten_times_fewer_frames_than_no_cm_and_only_in_the_transient() {
    let no_cm = run(&load_file("scenarios/baseline/no_cm.toml", &[]), None);
    let bcn = run(&load_file("scenarios/baseline/bcn.toml", &[]), None);
    assert_conservation(&bcn);
    let (d0, d1) = (
        no_cm.summary.totals.volume.dropped_frames,
        bcn.summary.totals.volume.dropped_frames,
    );
    assert!(d1 > 0 && d1 * 10 < d0, "bcn {d1} vs no_cm {d0}");
    assert_eq!(
        after(&bcn, &bcn.series.queue_drops, 20),
        0,
        "drops after 20 ms"
    );
    // The control loop keeps the hot link busy.
    let s1: f64 = ["C1->S1", "C2->S1", "C3->S1", "C4->S1"]
        .iter()
        .map(|f| flow_gbps(&bcn, f, 20, 80))
        .sum();
    assert!(s1 > 9.8, "{s1}");
    assert!(bcn.summary.totals.notifications_sent > 0);
}

#[test]
fn study_a_bcn_with_pause_is_lossless_pauses_only_in_the_transient_and_spares_the_innocent_flow() {
    let pause = run(&load_file("scenarios/baseline/pause.toml", &[]), None);
    let both = run(&load_file("scenarios/baseline/bcn_pause.toml", &[]), None);
    assert_conservation(&both);
    assert_eq!(both.summary.totals.volume.dropped_frames, 0);
    assert!(
        both.summary.totals.pause_frames_sent > 0,
        "PAUSE acts in the transient"
    );
    assert_eq!(
        after(&both, &both.series.queue_xoff, 20),
        0,
        "XOFF after 20 ms"
    );
    assert!(after(&pause, &pause.series.queue_xoff, 20) > 0);
    // CR1 -> S2 offers 4 Gb/s.
    let innocent_pause = flow_gbps(&pause, "CR1->S2", 20, 80);
    let innocent_both = flow_gbps(&both, "CR1->S2", 20, 80);
    assert!(
        (4.0 - innocent_both) < (4.0 - innocent_pause) / 5.0,
        "bcn_pause {innocent_both:.2} vs pause {innocent_pause:.2} Gb/s"
    );
}

#[test]
fn study_e_holds_the_hot_link_at_line_rate_and_the_queue_near_qeq() {
    for v in ["bcn", "bcn00", "pause", "pause_bcn00"] {
        let sc = load_file(&format!("scenarios/cn_sim_baseline/{v}.toml"), &[]);
        let r = run(&sc, Some(3));
        assert_conservation(&r);
        let f = r
            .summary
            .fairness
            .as_ref()
            .expect("the scenario asks for fairness");
        let total: f64 = f.rates_bps.iter().sum();
        assert!((total - 10e9).abs() < 0.01e9, "{v}: {total}");
        // Mean occupancy of the hot queue over 20-80 ms near Qeq = 24,000 B.
        let q = r
            .summary
            .queues
            .iter()
            .position(|q| q.name == "B0->D")
            .unwrap();
        let n = r.series.n_bins;
        let occ = &r.series.queue_occ_mean[q * n + 200..q * n + 800];
        let mean = occ.iter().sum::<f64>() / occ.len() as f64;
        assert!(
            (15_000.0..35_000.0).contains(&mean),
            "{v}: mean queue {mean:.0} B"
        );
        let st = r.summary.stability.as_ref().unwrap();
        assert!(
            st.onset_s.unwrap() > 0.005 && st.time_to_stability_s.unwrap() < 0.005,
            "{v}: {st:?}"
        );
    }
}

#[test]
fn study_e_rates_move_toward_the_fair_share_without_favouring_any_source() {
    // Over seeds, each source's mean rate is the fair share (the sources are
    // symmetric), and the spread around it shrinks from 20-40 ms to 60-80 ms.
    let sc = load_file("scenarios/cn_sim_baseline/bcn.toml", &[]);
    let flows = ["S1->D", "S2->D", "S3->D", "S4->D"];
    // Per seed a source's 20-80 ms rate has a standard deviation of about
    // 0.8 Gb/s, so the mean over 25 seeds is within 0.6 Gb/s (3.7 sigma).
    let seeds = 25;
    let (mut per_flow, mut early, mut late) = ([0.0; 4], 0.0, 0.0);
    for seed in 1..=seeds {
        let r = run(&sc, Some(seed));
        let dev = |a, b| {
            flows
                .iter()
                .map(|f| (flow_gbps(&r, f, a, b) - 2.5).abs() / 2.5)
                .fold(0.0, f64::max)
        };
        early += dev(20, 40) / seeds as f64;
        late += dev(60, 80) / seeds as f64;
        for (i, f) in flows.iter().enumerate() {
            per_flow[i] += flow_gbps(&r, f, 20, 80) / seeds as f64;
        }
    }
    for (f, m) in flows.iter().zip(per_flow) {
        assert!(
            (m - 2.5).abs() < 0.6,
            "{f}: mean {m:.2} Gb/s over {seeds} seeds"
        );
    }
    assert!(
        late < 0.85 * early,
        "Dev_max 20-40 ms {early:.3}, 60-80 ms {late:.3}"
    );
}

/// A congestion point samples the frames its queue takes in, never one the
/// buffer drops. Two line-rate sources overload SW->H3 twice over, so half
/// of the arrivals are dropped; every enqueued frame is sampled
/// (`sample_probability = 1`) and, with Qeq one page and the queue near
/// full, each sample is negative. The notifications take effect only after
/// the run (a 1 s response time), so the overload lasts: the negative
/// messages count the enqueued frames, not the arrivals.
#[test]
fn a_congestion_point_never_samples_a_dropped_frame() {
    let r = run(
        &load_str(&overload(
            r#"
[bcn]
qeq = "64B"
sample_probability = 1.0
"#,
        )),
        None,
    );
    let q = queue(&r, "SW->H3");
    // Data only leaves on SW->H3 (notifications go back toward H1 and H2).
    let sent = q.tx_bytes / 1500;
    // At most a buffer's worth (100 frames) is still queued at the end.
    let enqueued_at_most = sent + 100;
    assert!(q.drops_frames > sent / 2, "the overload drops: {q:?}");
    assert!(
        q.cn_negative <= enqueued_at_most,
        "{} negative samples, at most {enqueued_at_most} frames enqueued ({} dropped)",
        q.cn_negative,
        q.drops_frames
    );
    assert!(q.cn_negative * 10 >= sent * 9, "{q:?}");
}
