//! QCN in a running network: one flow, one congestion point.

use crate::common::*;

/// H1 -- SW -- H2 at 10 Gb/s with QCN (study C's parameters and `qcn`);
/// H2's link drains as `service` says; `sources` are H1's.
fn bottleneck(duration: &str, service: &str, sources: &str, qcn: &str) -> cnsim_core::RunResult {
    let sc = load_str(&format!(
        r#"
duration = "{duration}"
bin = "1ms"
[defaults.link]
rate = "10Gbps"
delay = "1us"
[[switches]]
name = "SW"
latency = "1us"
buffer = "150KB"
[[hosts]]
name = "H1"
response_time = "2us"
[[hosts]]
name = "H2"
service = {service}
[[links]]
between = ["H1", "SW"]
[[links]]
between = ["SW", "H2"]
{sources}
[qcn]
{qcn}
"#
    ));
    run(&sc, None)
}

/// H1 offers 9.5 Gb/s to H2, whose link drains at 5 Gb/s from 20 ms until `end`.
fn step_down(end: &str) -> cnsim_core::RunResult {
    bottleneck(
        "300ms",
        &format!(r#"{{ rate = "5Gbps", start = "20ms", end = "{end}" }}"#),
        "[[sources]]\nhost = \"H1\"\nto = \"H2\"\nload = 0.95",
        "",
    )
}

/// Mean of a per-bin row over [from, to) ms (1 ms bins).
fn mean_ms(row: &[f64], from: usize, to: usize) -> f64 {
    row[from..to].iter().sum::<f64>() / (to - from) as f64
}

#[test]
fn a_flow_follows_a_bottleneck_step_down_with_the_queue_near_qeq() {
    let r = step_down("300ms");
    let n = r.series.n_bins;
    let cp = r
        .summary
        .queues
        .iter()
        .position(|q| q.name == "SW->H2")
        .unwrap();
    let occ = &r.series.queue_occ_mean[cp * n..(cp + 1) * n];
    // Settled from 100 ms on: the queue sits around Qeq = 26 KB.
    let q = mean_ms(occ, 100, 300);
    assert!((13_000.0..=39_000.0).contains(&q), "mean queue {q} B");
    // ... and the 5 Gb/s link stays busy: at least 98% of it.
    let tx: u64 = r.series.queue_tx_bytes[cp * n + 100..cp * n + 300]
        .iter()
        .sum();
    let gbps = tx as f64 * 8.0 / 0.2 / 1e9;
    assert!(gbps >= 0.98 * 5.0, "{gbps} Gb/s");
    // The limiter converged to the new rate: CR within 2% of 5 Gb/s.
    let cr = mean_ms(&r.series.flow_rl_rate_mean[..n], 100, 300);
    assert!((cr / 5e9 - 1.0).abs() < 0.02, "CR {cr}");
    // The transient peak fits the 150 KB buffer: nothing is dropped, and
    // the source waited on its limiter instead.
    assert_eq!(queue(&r, "SW->H2").drops_frames, 0);
    assert!(queue(&r, "SW->H2").cn_negative > 0);
    assert_eq!(flow(&r, "H1->H2").counters.rl_installs, 1);
    assert_conservation(&r);
}

#[test]
fn the_limiter_recovers_to_line_rate_and_is_released_after_the_bottleneck() {
    let r = step_down("60ms");
    let n = r.series.n_bins;
    let cr = &r.series.flow_rl_rate_mean[..n];
    let tr = &r.series.flow_rl_target_mean[..n];
    assert!(mean_ms(cr, 40, 60) < 5.5e9);
    // Fast recovery, then active and hyper-active increase bring CR and TR
    // back to 10 Gb/s; the limiter is then removed (CR stays at the line rate).
    assert_eq!(cr[n - 1], 10e9, "CR at the end");
    assert_eq!(tr[n - 1], 10e9, "TR at the end");
    let c = &flow(&r, "H1->H2").counters;
    assert!(c.volume.delivered_bytes > 0);
    // The whole offered 9.5 Gb/s flows again over the last 50 ms.
    let rx: u64 = r.series.flow_rx_bytes[n - 50..n].iter().sum();
    let gbps = rx as f64 * 8.0 / 0.05 / 1e9;
    assert!((gbps - 9.5).abs() < 0.2, "{gbps}");
}

/// H1 runs two sources, A and B, each offering 4.5 Gb/s to H2, whose link
/// drains at 5 Gb/s; QCN limiters per flow or per destination.
fn two_sources(limiter: &str) -> cnsim_core::RunResult {
    let source = |name: &str| {
        format!("[[sources]]\nname = \"{name}\"\nhost = \"H1\"\nto = \"H2\"\nload = 0.45\n")
    };
    bottleneck(
        "200ms",
        r#"{ rate = "5Gbps" }"#,
        &(source("A") + &source("B")),
        &format!("limiter = \"{limiter}\""),
    )
}

#[test]
fn a_per_destination_limiter_is_shared_by_the_hosts_flows_to_it() {
    let r = two_sources("destination");
    let n = r.series.n_bins;
    // One limiter, the first flow's, carries both flows at ~5 Gb/s; the
    // second flow never had one, so its levels have no row.
    assert!(flow(&r, "A").counters.rl_installs > 0);
    assert_eq!(flow(&r, "B").counters.rl_installs, 0);
    assert_eq!(r.series.flow_rl_flows, [0]);
    assert_eq!(r.series.flow_rl_rate_mean.len(), n);
    let cr = mean_ms(&r.series.flow_rl_rate_mean[..n], 100, 200);
    assert!((cr / 5e9 - 1.0).abs() < 0.05, "shared CR {cr}");
    let a = flow(&r, "A").counters.volume.delivered_bytes as f64;
    let b = flow(&r, "B").counters.volume.delivered_bytes as f64;
    assert!((a / b - 1.0).abs() < 0.05, "A {a} B {b}");
    assert_conservation(&r);

    let r = two_sources("flow");
    assert!(flow(&r, "A").counters.rl_installs > 0);
    assert!(flow(&r, "B").counters.rl_installs > 0);
    assert_eq!(r.series.flow_rl_flows, [0, 1]);
    let both = mean_ms(&r.series.flow_rl_rate_mean[..n], 100, 200)
        + mean_ms(&r.series.flow_rl_rate_mean[n..], 100, 200);
    assert!((both / 5e9 - 1.0).abs() < 0.15, "sum of CRs {both}");
}

/// QCN's congestion point counts every data frame arriving at its queue,
/// admitted or dropped (the 802.1Qau congestion point as switch hardware
/// implements it), unlike BCN's (`tests/suite/bcn.rs`). Two line-rate sources
/// overload SW->H3 twice over; with a 1500 B sampling base every arrival
/// is sampled and, the queue above Qeq, each gives a CNM; the CNMs take
/// effect only after the run. So they count the arrivals, about twice the
/// frames the queue took in.
#[test]
fn a_qcn_congestion_point_samples_dropped_arrivals_too() {
    let r = run(
        &load_str(&overload(
            r#"
[qcn]
sample_interval = "1500B"
sample_jitter = 0.0
"#,
        )),
        None,
    );
    let q = queue(&r, "SW->H3");
    let enqueued_at_most = q.tx_bytes / 1500 + 100;
    assert!(
        q.drops_frames * 10 > enqueued_at_most * 9,
        "half of the arrivals are dropped: {q:?}"
    );
    assert!(
        q.cn_negative > enqueued_at_most + q.drops_frames / 2,
        "{} CNMs, {} frames enqueued at most, {} dropped",
        q.cn_negative,
        enqueued_at_most,
        q.drops_frames
    );
}
