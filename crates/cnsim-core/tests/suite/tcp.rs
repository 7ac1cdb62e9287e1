//! TCP NewReno connections in a running network: reliable, in order,
//! back-pressured at the host, ACKs on the reverse path.

use crate::common::*;

/// H1 -- SW -- H2 at 10 Gb/s; H1 writes 9 KB transactions over TCP to H2
/// at `load` from 0 to 20 ms. `switch` and `h2` are extra keys.
fn pair(duration: &str, load: f64, switch: &str, h2: &str) -> cnsim_core::RunResult {
    let source = format!(
        r#"kind = "transactions"
transaction = "9KB"
transport = "tcp"
load = {load}
stop = "20ms""#
    );
    let sc = load_str(
        &Line {
            duration,
            delay: "2us",
            top: r#"bin = "1ms""#,
            switch,
            h1: r#"egress = "150KB""#,
            h2,
            source: &source,
            ..Line::default()
        }
        .toml(),
    );
    run(&sc, None)
}

#[test]
fn a_lossless_path_delivers_every_byte_once_in_order() {
    let r = pair("40ms", 0.5, r#"buffer_model = "unlimited""#, "");
    let c = &flow(&r, "H1->H2").counters;
    // 20 ms at 5 Gb/s of 9 KB transactions: about 12.5 MB written.
    assert!(c.volume.offered_bytes > 10_000_000, "{c:?}");
    assert_eq!(c.volume.delivered_bytes, c.volume.offered_bytes);
    assert_eq!(c.volume.in_flight_bytes, 0);
    assert_eq!(
        (c.retransmissions, c.timeouts, c.segments_dropped),
        (0, 0, 0)
    );
    // Every segment went out once. Without Nagle a 9 KB write may end in a
    // short segment: from offered/MSS up to 7 segments per write.
    let mss = 1460;
    assert!(c.segments_sent >= c.volume.offered_bytes.div_ceil(mss));
    assert!(c.segments_sent <= c.volume.offered_frames * 9_000u64.div_ceil(mss));
    // ACKs are 64 B frames from H2 back to H1.
    let acks = queue(&r, "H2->SW").tx_bytes;
    assert!(acks > 0 && acks % 64 == 0, "{acks}");
    assert_eq!(queue(&r, "SW->H1").tx_bytes, acks);
}

#[test]
fn losses_are_repaired_and_every_byte_arrives() {
    // H2 drains at 1 Gb/s behind a 30 KB output buffer: drop tail.
    let r = pair(
        "700ms",
        0.5,
        r#"buffer = "30KB""#,
        r#"service = { rate = "1Gbps" }"#,
    );
    let c = &flow(&r, "H1->H2").counters;
    assert!(c.segments_dropped > 0, "{c:?}");
    assert_eq!(queue(&r, "SW->H2").drops_frames, c.segments_dropped);
    // Each lost segment was sent again, and nothing was lost for good.
    assert!(c.retransmissions >= c.segments_dropped, "{c:?}");
    assert!(c.fast_retransmits > 0, "{c:?}");
    assert_eq!(c.volume.delivered_bytes, c.volume.offered_bytes, "{c:?}");
}

#[test]
fn a_paused_host_blocks_the_sender_instead_of_dropping() {
    // Global PAUSE at the switch holds H1 while H2 drains at 1 Gb/s; TCP
    // sees no loss, its window grows past the 150 KB adapter, and the
    // sender waits for room.
    let r = pair(
        "200ms",
        0.9,
        r#"buffer = "150KB"
pause = { mode = "global", xoff = "100KB", xon = "80KB" }"#,
        r#"service = { rate = "1Gbps" }"#,
    );
    let c = &flow(&r, "H1->H2").counters;
    let egress = queue(&r, "H1->SW");
    assert!(egress.max_occupancy_bytes <= 150_000, "{egress:?}");
    assert!(egress.max_occupancy_bytes > 100_000, "{egress:?}");
    assert!(egress.paused_time_s > 0.0);
    assert_eq!(
        r.summary.queues.iter().map(|q| q.drops_frames).sum::<u64>(),
        0
    );
    assert_eq!((c.retransmissions, c.timeouts), (0, 0));
    // A sender held back by its adapter does not inflate its window: it
    // stays below the 1 MB receiver window.
    let cwnd_max = r.series.flow_cwnd_mean.iter().copied().fold(0.0, f64::max);
    assert!(
        cwnd_max > 100_000.0 && cwnd_max <= 1_000_000.0,
        "{cwnd_max}"
    );
    // 1 Gb/s of goodput at most (1460 of every 1500 bytes) while H1 offers 9.
    let gbps = c.volume.delivered_bytes as f64 * 8.0 / 0.2 / 1e9;
    assert!(gbps > 0.9 * 0.973 && gbps <= 0.973, "{gbps}");
}

#[test]
fn tcp_and_udp_connections_share_a_run() {
    let mut sc = load_str(
        r#"
duration = "10ms"
[defaults.link]
rate = "10Gbps"
[[switches]]
name = "SW"
buffer_model = "unlimited"
[[hosts]]
name = "H1"
[[hosts]]
name = "H2"
[[hosts]]
name = "H3"
[[links]]
between = ["H1", "SW"]
[[links]]
between = ["H2", "SW"]
[[links]]
between = ["H3", "SW"]
[[sources]]
host = "H1"
to = "H3"
transport = "tcp"
load = 0.3
stop = "5ms"
[[sources]]
host = "H2"
to = "H3"
load = 0.3
stop = "5ms"
"#,
    );
    sc.seed = 7;
    let r = run(&sc, None);
    let tcp = &flow(&r, "H1->H3").counters;
    let udp = &flow(&r, "H2->H3").counters;
    assert_eq!(tcp.volume.delivered_bytes, tcp.volume.offered_bytes);
    assert_eq!(udp.volume.delivered_bytes, udp.volume.offered_bytes);
    assert!(tcp.segments_sent > 0 && udp.segments_sent == 0);
    assert_eq!(
        r.summary.flows[0].transport,
        cnsim_core::transport::Transport::Tcp
    );
}

/// scenarios/dctcp/long_flows.toml with ten flows for 20 ms and [tcp] ecn
/// = `mode`; the bottleneck SW->R: its peak occupancy in frames and the
/// Gb/s it sent, both from 5 ms on (after slow start).
fn long_flows(mode: &str) -> (cnsim_core::RunResult, f64, f64) {
    let sc = load_file(
        "scenarios/dctcp/long_flows.toml",
        &[("duration", "20ms"), ("tcp.ecn", mode)],
    );
    let r = run(&sc, None);
    let q = r
        .summary
        .queues
        .iter()
        .position(|q| q.name == "SW->R")
        .expect("the bottleneck");
    let s = &r.series;
    let settled = s.n_bins / 4..s.n_bins;
    let row = |v: &[u64]| v[q * s.n_bins..(q + 1) * s.n_bins][settled.clone()].to_vec();
    let peak = row(&s.queue_occ_max).into_iter().max().unwrap() as f64 / 1500.0;
    let sent: u64 = row(&s.queue_tx_bytes).iter().sum();
    let gbps = sent as f64 * 8.0 / (settled.len() as f64 * 10e-6) / 1e9;
    (r, peak, gbps)
}

#[test]
fn dctcp_holds_the_queue_at_k_plus_n_with_the_link_full_and_nothing_lost() {
    let (r, peak, gbps) = long_flows("dctcp");
    // DCTCP's analysis (Alizadeh et al. 2010, 3.3): Q_max = K + N = 75 frames.
    assert!((74.0..=77.0).contains(&peak), "peak {peak} frames");
    assert!(gbps > 9.99, "{gbps} Gb/s");
    for f in &r.summary.flows {
        assert_eq!(f.counters.segments_dropped, 0, "{}", f.name);
        assert!(
            f.counters.ecn_reductions > 0 && f.counters.ce_received > 0,
            "{}",
            f.name
        );
        assert_eq!(f.counters.retransmissions, 0, "{}", f.name);
    }
    // RFC 3168 halves the window at the same marks: the queue empties
    // and the link idles at times, nothing is lost either.
    let (classic, _, classic_gbps) = long_flows("classic");
    assert!(classic
        .summary
        .flows
        .iter()
        .all(|f| f.counters.segments_dropped == 0));
    assert!(classic_gbps < 9.7, "{classic_gbps} Gb/s");
    // Without ECN, NewReno grows its windows until the 1 MB buffer (666
    // frames) overflows: the queue stands far above K.
    let (plain, plain_peak, _) = long_flows("off");
    assert!(plain_peak > 4.0 * 75.0, "{plain_peak}");
    let lost: u64 = plain
        .summary
        .flows
        .iter()
        .map(|f| f.counters.segments_dropped)
        .sum();
    assert!(lost > 0);
    assert!(plain
        .summary
        .flows
        .iter()
        .all(|f| f.counters.ecn_reductions == 0));
}
