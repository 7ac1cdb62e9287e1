//! DCQCN in a running network: ECN marks at the switch, CNPs from the
//! receiver, rate limiters at the senders, over a lossless (PFC) port.

use crate::common::*;
use cnsim_core::RunResult;

const FILE: &str = "scenarios/dcqcn/convergence.toml";

/// Each flow's delivered Gb/s over the bins from `from_s` to the end.
fn rates_from(r: &RunResult, from_s: f64) -> Vec<f64> {
    let s = &r.series;
    let bin_s = r.summary.duration_s / s.n_bins as f64;
    let first = (from_s / bin_s).round() as usize;
    let span = (s.n_bins - first) as f64 * bin_s;
    (0..r.summary.flows.len())
        .map(|f| {
            let row = &s.flow_rx_bytes[f * s.n_bins..(f + 1) * s.n_bins];
            row[first..].iter().sum::<u64>() as f64 * 8.0 / span / 1e9
        })
        .collect()
}

fn jain(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    sum * sum / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

#[test]
fn flows_converge_to_the_fair_share_without_pfc_and_with_the_queue_in_the_marking_range() {
    for n in [2, 4, 8] {
        let sc = load_file(FILE, &[("params.n", &n.to_string())]);
        let r = run(&sc, None);
        assert_conservation(&r);
        // Over the second half of the run (50 to 100 ms).
        let rates = rates_from(&r, 0.05);
        let j = jain(&rates);
        assert!(j >= 0.99, "N = {n}: Jain {j} of {rates:?}");
        let total: f64 = rates.iter().sum();
        assert!(total > 0.95 * 40.0, "N = {n}: {total} Gb/s of 40");
        assert_eq!(r.summary.totals.volume.dropped_frames, 0);
        let pfc = r.summary.pfc.as_ref().expect("PFC is on");
        assert_eq!(
            pfc.frames_sent, 0,
            "N = {n}: DCQCN holds the queue below XOFF"
        );
        // The bottleneck's mean occupancy sits inside [Kmin, Kmax].
        let q = r
            .summary
            .queues
            .iter()
            .position(|q| q.name == "SW->R")
            .unwrap();
        let s = &r.series;
        let occ = &s.queue_occ_mean[q * s.n_bins..(q + 1) * s.n_bins][s.n_bins / 2..];
        let mean = occ.iter().sum::<f64>() / occ.len() as f64;
        assert!((5e3..200e3).contains(&mean), "N = {n}: mean queue {mean} B");
        for f in &r.summary.flows {
            let c = &f.counters;
            assert!(
                c.rl_installs >= 1,
                "{}: a CNP installed its limiter",
                f.name
            );
            // At most one CNP per flow every 50 us over the 100 ms run.
            assert!(
                c.cnps_sent > 0 && c.cnps_sent <= 2000,
                "{}: {} CNPs",
                f.name,
                c.cnps_sent
            );
        }
    }
}

#[test]
fn a_flow_that_joins_late_reaches_its_share() {
    let mut sc = load_file(FILE, &[("duration", "150ms")]);
    sc.sources[1].start = cnsim_core::units::Time::from_ms(50);
    let r = run(&sc, None);
    let late = rates_from(&r, 0.1);
    for (f, rate) in late.iter().enumerate() {
        assert!(
            (rate / 20.0 - 1.0).abs() < 0.1,
            "flow {f}: {rate} Gb/s against 20 from 100 ms on"
        );
    }
    let before = rates_from(&r, 0.0);
    assert!(
        before[1] < before[0],
        "the late flow delivered less over the whole run"
    );
}

#[test]
fn dcqcn_is_repeatable_and_without_marks_pfc_alone_holds_the_port() {
    let sc = load_file(FILE, &[("duration", "20ms")]);
    let (a, b) = (run(&sc, None), run(&sc, None));
    assert_eq!(a.summary.fingerprint, b.summary.fingerprint);
    // Without marking there is no CNP: the senders stay at their line rate
    // and PFC alone holds the port.
    let unmarked = run(
        &load_file(
            FILE,
            &[
                ("duration", "20ms"),
                ("defaults.switch.ecn.pmax", "1"),
                ("defaults.switch.ecn.kmin", "10MB"),
                ("defaults.switch.ecn.kmax", "10MB"),
            ],
        ),
        None,
    );
    assert!(unmarked
        .summary
        .flows
        .iter()
        .all(|f| f.counters.rl_installs == 0));
    assert!(unmarked.summary.pfc.as_ref().unwrap().frames_sent > 0);
    assert_eq!(unmarked.summary.totals.volume.dropped_frames, 0);
}

/// scenarios/dcqcn/incast_roce.toml (64 RoCE senders, 500 KB each, into
/// one port) with `overrides`; totals over the flows: written, delivered,
/// segments lost, retransmitted, go-backs, and the last delivery in ms.
fn incast(overrides: &[(&str, &str)]) -> (RunResult, [u64; 5], f64) {
    let r = run(
        &load_file("scenarios/dcqcn/incast_roce.toml", overrides),
        None,
    );
    let sum = |g: fn(&cnsim_core::results::FlowCounters) -> u64| -> u64 {
        r.summary.flows.iter().map(|f| g(&f.counters)).sum()
    };
    let totals = [
        sum(|c| c.volume.offered_bytes),
        sum(|c| c.volume.delivered_bytes),
        sum(|c| c.segments_dropped),
        sum(|c| c.retransmissions),
        sum(|c| c.go_backs),
    ];
    let last = r
        .summary
        .flows
        .iter()
        .map(|f| f.counters.last_delivery_ps)
        .max()
        .unwrap() as f64
        / 1e9;
    (r, totals, last)
}

#[test]
fn a_roce_incast_over_pfc_loses_nothing_and_sends_nothing_twice() {
    let (r, [written, delivered, lost, resent, go_backs], last) = incast(&[]);
    assert!(r.summary.flows.iter().all(|f| f.counters.naks_sent == 0));
    // 100 us of 40 Gb/s from each of 64 hosts, less what its source's
    // slots left empty: about 32 MB.
    assert!(written > 31_000_000, "{written}");
    assert_eq!(delivered, written, "every byte arrives");
    assert_eq!((lost, resent, go_backs), (0, 0, 0));
    assert!(
        r.summary.pfc.as_ref().unwrap().frames_sent > 0,
        "PFC held the incast"
    );
    assert!(last < 10.0, "done in {last} ms");
}

/// With `cnp_on_ack` the receiver sends ACKs and nothing else: its CNPs
/// ride on them (one flag each), and the senders still react to them.
/// Sent as frames, the same decisions add one 64-B frame each.
#[test]
fn cnps_on_acks_add_no_frame_to_the_reverse_path() {
    let reverse = |on_ack: &str| {
        let (r, [written, delivered, lost, resent, _], _) = incast(&[("dcqcn.cnp_on_ack", on_ack)]);
        assert_eq!((delivered, lost, resent), (written, 0, 0));
        let sum = |g: fn(&cnsim_core::results::FlowCounters) -> u64| -> u64 {
            r.summary.flows.iter().map(|f| g(&f.counters)).sum()
        };
        let (segments, cnps, installs) = (
            sum(|c| c.segments_sent),
            sum(|c| c.cnps_sent),
            sum(|c| c.rl_installs),
        );
        assert!(
            cnps > 0 && installs > 0,
            "{on_ack}: {cnps} CNPs, {installs} installs"
        );
        let q = r.summary.queues.iter().find(|q| q.name == "R->SW").unwrap();
        (q.tx_bytes, segments, cnps)
    };
    let (tx, segments, _) = reverse("true");
    assert_eq!(tx % segments, 0, "ACKs only");
    let ack = tx / segments;
    let (tx, segments, cnps) = reverse("false");
    assert_eq!(tx, segments * ack + cnps * 64);
}

#[test]
fn without_pfc_go_back_n_recovers_every_byte_once_and_much_later() {
    let (r, [written, delivered, lost, resent, go_backs], last) = incast(&[
        ("defaults.switch.buffer_model", "per_output"),
        ("roce.rto", "4ms"),
        ("duration", "200ms"),
    ]);
    assert_eq!(
        delivered, written,
        "every byte arrives once (the receiver checks in order)"
    );
    assert!(
        lost > 0 && go_backs > 0 && resent >= lost,
        "{lost} lost, {resent} resent, {go_backs} go-backs"
    );
    assert!(last > 50.0, "recovery takes long: done at {last} ms");
    let naks: u64 = r.summary.flows.iter().map(|f| f.counters.naks_sent).sum();
    assert!(
        naks >= go_backs,
        "every go-back answers a NAK: {naks} NAKs, {go_backs} go-backs"
    );
}

#[test]
fn the_mellanox_variant_converges_too() {
    let sc = load_file(FILE, &[("params.n", "4"), ("dcqcn.variant", "mellanox")]);
    let r = run(&sc, None);
    let rates = rates_from(&r, 0.05);
    let j = jain(&rates);
    assert!(j >= 0.99, "Jain {j} of {rates:?}");
    assert!(rates.iter().sum::<f64>() > 0.95 * 40.0);
    for f in &r.summary.flows {
        let c = &f.counters;
        assert!(c.cnps_sent > 0, "{}", f.name);
    }
    let e = cnsim_core::scenario::load(
        &std::fs::read_to_string(repo_file(FILE))
            .unwrap()
            .replace("\n[dcqcn]\n", "\n[dcqcn]\ndecrease_interval = \"4us\"\n"),
        "t.toml",
        cnsim_core::scenario::Format::Toml,
        &[],
    )
    .expect_err("refused")
    .to_string();
    assert!(
        e.contains("'decrease_interval' applies only with variant = \"mellanox\""),
        "{e}"
    );
}

/// The error `file` gives with `overrides`.
fn refused(file: &str, overrides: &[(&str, &str)]) -> String {
    let ov: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match cnsim_core::scenario::load_file(&repo_file(file), &ov) {
        Ok(_) => panic!("{overrides:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_transport_and_dcqcn_settings_are_refused_where_they_are_given() {
    const TCP: &str = "scenarios/dctcp/long_flows.toml";
    const ROCE: &str = "scenarios/dcqcn/incast_roce.toml";
    for (file, overrides, message) in [
        (
            TCP,
            &[("defaults.source.ecn", "true")][..],
            "sources[0].ecn: a TCP source's segments are ECN-capable by [tcp] ecn",
        ),
        (
            TCP,
            &[("tcp.ecn", "classic"), ("tcp.dctcp_g", "0.5")],
            "tcp.dctcp_g: 'dctcp_g' applies only with ecn = \"dctcp\"",
        ),
        (
            TCP,
            &[("tcp.dctcp_g", "0")],
            "tcp.dctcp_g: expected a gain in (0, 1], found 0",
        ),
        (
            TCP,
            &[("tcp.dctcp_alpha", "2")],
            "tcp.dctcp_alpha: expected a fraction in [0, 1], found 2",
        ),
        (
            ROCE,
            &[("defaults.source.ecn", "true")],
            "sources[0].ecn: a RoCE source's segments are always ECN-capable",
        ),
        (
            ROCE,
            &[("sources[F{i}].frame", "1000B"), ("roce.header", "1024B")],
            "sources[0]: a RoCE source needs frames larger than the 1024 B header, found 1000 B",
        ),
        (
            ROCE,
            &[("roce.window", "0B")],
            "roce.window: expected a window above zero, found 0 B",
        ),
        (
            ROCE,
            &[("roce.ack_every", "0")],
            "roce.ack_every: expected at least one segment, found 0",
        ),
        (
            ROCE,
            &[("roce.nak_interval", "0us")],
            "roce.nak_interval: expected a time above zero, found 0",
        ),
        (
            ROCE,
            &[("qcn.enabled", "false")],
            "dcqcn: give one congestion-notification scheme: [bcn], [qcn] or [dcqcn]",
        ),
        (
            ROCE,
            &[("dcqcn.g", "0")],
            "dcqcn.g: expected a number in (0, 1], found 0",
        ),
        (
            ROCE,
            &[("dcqcn.variant", "fast")],
            "dcqcn.variant: expected \"paper\" or \"mellanox\", found \"fast\"",
        ),
    ] {
        let e = refused(file, overrides);
        assert!(e.contains(message), "{overrides:?}: {e}");
    }
}

/// A frame held back by its DCQCN limiter takes four events on its two
/// hops (its release, the host's and the switch's departures, the switch's
/// arrival): its source, which the full limiter queue holds back, waits
/// without an event, and the receiver's arrival is no event (a CNP leaves
/// by one of its own). Before both, a frame took six. What the events buy
/// is checked by the results: the flows still converge (above) and all
/// data frames offered are delivered or in flight.
#[test]
fn a_dcqcn_frame_takes_one_event_per_hop_and_its_release() {
    let sc = load_file(FILE, &[("params.n", "8"), ("duration", "20ms")]);
    let r = run(&sc, None);
    assert_conservation(&r);
    let v = &r.summary.totals.volume;
    assert_eq!(v.dropped_frames, 0);
    let per_frame = r.summary.events as f64 / v.delivered_frames as f64;
    // Four per frame, plus CNPs, DCQCN's timers, PFC frames and the first
    // microseconds, before the limiters hold the sources back (a few in a
    // hundred frames over 20 ms).
    assert!(
        (4.0..4.25).contains(&per_frame),
        "{per_frame} events per frame"
    );
    let cnps: u64 = r.summary.flows.iter().map(|f| f.counters.cnps_sent).sum();
    assert!(cnps > 0, "no CNP was sent");
}
