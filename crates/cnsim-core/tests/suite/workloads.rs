//! Workload flows in a running network: a lone flow's completion time is
//! its ideal to the picosecond, flows start when drawn, every byte of
//! every flow arrives once, and a run can end when the last flow has.

use crate::common::*;
use cnsim_core::results::WorkloadFlow;

/// H1 -100G- S1 -40G- S2 -100G- H2, 1 µs links, switch latency `lat`.
fn line_of_three(lat: &str, flows: &str) -> String {
    format!(
        r#"
duration = "1ms"
until = "flows_finished"
[defaults.switch]
latency = "{lat}"
[[switches]]
name = "S1"
[[switches]]
name = "S2"
[[hosts]]
name = "H1"
[[hosts]]
name = "H2"
[[links]]
between = ["H1", "S1"]
rate = "100Gbps"
delay = "1us"
[[links]]
between = ["S1", "S2"]
rate = "40Gbps"
delay = "1us"
[[links]]
between = ["S2", "H2"]
rate = "100Gbps"
delay = "1us"
{}"#,
        list_workload(flows)
    )
}

/// RoCE with 58-B headers and the workload `w` of `flows`, in 1,058-B
/// frames (1,000 B of payload).
fn list_workload(flows: &str) -> String {
    format!(
        r#"
[roce]
header = "58B"
[[workloads]]
name = "w"
kind = "list"
frame = "1058B"
flows = [{flows}]
"#
    )
}

fn fct_ps(f: &WorkloadFlow) -> u64 {
    f.fct().expect("the flow finished").0
}

#[test]
fn a_lone_flow_takes_exactly_its_ideal_time() {
    // 10 full frames of 1,058 B: the first crosses the 100G hop (84,640 ps),
    // all ten cross the 40G hop back to back (211,600 ps each), the last
    // crosses the second 100G hop; three 1 µs links.
    let sc = load_str(&line_of_three(
        "0ns",
        r#"{ from = "H1", to = "H2", size = 10000, start = "10us" }"#,
    ));
    let r = run(&sc, None);
    let f = &r.workload_flows[0];
    assert_eq!(f.record.ideal.0, 3_000_000 + 2 * 84_640 + 10 * 211_600);
    assert_eq!(fct_ps(f), f.record.ideal.0);
    // Sizes that leave a short last frame, one frame, switch latency, and
    // a NIC that holds two frames (the rest waits in the queue pair).
    for (lat, size, nic) in [
        ("0ns", 10_500, false),
        ("250ns", 999, false),
        ("1us", 123_457, false),
        ("1us", 1, false),
        ("1us", 123_457, true),
    ] {
        let mut text = line_of_three(
            lat,
            &format!(r#"{{ from = "H1", to = "H2", size = {size}, start = "3us" }}"#),
        );
        if nic {
            text = text.replace("[roce]", "[defaults.host]\negress = \"2116B\"\n[roce]");
        }
        let sc = load_str(&text);
        let r = run(&sc, None);
        let f = &r.workload_flows[0];
        assert_eq!(fct_ps(f), f.record.ideal.0, "latency {lat}, {size} B");
        assert_eq!(f.counters.volume.delivered_bytes, size);
        // The run ended with the flow.
        assert_eq!(
            r.summary.flows_finished_s,
            Some(f.record.finish.unwrap().as_secs_f64())
        );
    }
}

#[test]
fn flows_start_when_given_and_finish_once_with_every_byte() {
    let sc = load_str(&line_of_three(
        "1us",
        r#"{ from = "H1", to = "H2", size = "200KB", start = "5us" },
           { from = "H2", to = "H1", size = 3000, start = "7us" },
           { from = "H1", to = "H2", size = 64000, start = "5us" }"#,
    ));
    let r = run(&sc, None);
    assert_conservation(&r);
    let w = &r.workload_flows;
    // In start order; equal starts keep the list's order.
    let names: Vec<&str> = w.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["w#0", "w#1", "w#2"]);
    assert_eq!(w[0].record.size, 200_000);
    assert_eq!(w[1].record.size, 64_000);
    assert_eq!((w[2].src.as_str(), w[2].dst.as_str()), ("H2", "H1"));
    for f in w {
        assert_eq!(
            f.counters.volume.delivered_bytes, f.record.size,
            "{}",
            f.name
        );
        // Sharing the path costs time; alone it would be the ideal.
        assert!(fct_ps(f) >= f.record.ideal.0, "{}", f.name);
    }
    // The reverse flow shares no output port with the others: ideal.
    assert_eq!(fct_ps(&w[2]), w[2].record.ideal.0);
    let s = &r.summary.workloads[0];
    assert_eq!(
        (s.flows, s.finished, s.unfinished, s.bytes),
        (3, 3, 0, 267_000)
    );
    // The series' workload row holds the bytes of all three flows.
    let row = &r.series.flow_rx_bytes[..r.series.n_bins];
    assert_eq!(row.iter().sum::<u64>(), 267_000);
}

/// H1, H2 and H3 on one switch (no latency), 100 Gb/s, 1 µs links; H1's
/// NIC holds two 1,058-B frames; `flows` from H1 to H2 and H3.
fn one_switch(flows: &str) -> String {
    let top = r#"
duration = "1ms"
until = "flows_finished"
[defaults.link]
rate = "100Gbps"
delay = "1us"
[defaults.host]
egress = "2116B""#;
    two_to_one(top, "", &list_workload(flows))
}

#[test]
fn flows_of_one_host_take_its_link_in_turn_a_frame_each() {
    // Two flows of ten 1,058-B frames (84,640 ps each at 100 Gb/s) start
    // together. The first fills the NIC (two frames) and sends its third
    // when the first leaves; from then on each freed place goes to the
    // other flow: A0 A1 A2 B0 A3 B1 ... A9 B7 B8 B9. A's last frame is the
    // 17th on H1's link, B's the 20th; each then crosses two 1 µs links
    // and the switch's 100 Gb/s port.
    let frame = 84_640;
    let sc = load_str(&one_switch(
        r#"{ from = "H1", to = "H2", size = 10000, start = "1us" },
           { from = "H1", to = "H3", size = 10000, start = "1us" }"#,
    ));
    let r = run(&sc, None);
    let w = &r.workload_flows;
    assert_eq!(fct_ps(&w[0]), 17 * frame + 2_000_000 + frame);
    assert_eq!(fct_ps(&w[1]), 20 * frame + 2_000_000 + frame);
    // A one-frame flow that starts at 1.1 µs, while A1 is on the wire and
    // B waits ahead of A, joins the line behind them: the places freed at
    // the ends of A1 and A2 go to B0 and A3, the next to it. Its frame is
    // the sixth on the wire (A0 A1 A2 B0 A3 C0), not the 21st after both.
    let sc = load_str(&one_switch(
        r#"{ from = "H1", to = "H2", size = 10000, start = "1us" },
           { from = "H1", to = "H3", size = 10000, start = "1us" },
           { from = "H1", to = "H3", size = 1000, start = "1100ns" }"#,
    ));
    let r = run(&sc, None);
    let c = &r.workload_flows[2];
    let leaves = 1_000_000 + 6 * frame;
    assert_eq!(c.record.finish.unwrap().0, leaves + 2_000_000 + frame);
    assert_conservation(&r);
}

const INCAST: &str = r#"
duration = "20ms"
until = "flows_finished"
[params]
n = 16
[defaults.link]
rate = "40Gbps"
delay = "1us"
[defaults.switch]
latency = "1us"
buffer_model = "per_input"
buffer = "200KB"
pfc = { classes = [0], xoff = "150KB", xon = "130KB" }
[[switches]]
name = "SW"
[[hosts]]
name = "H{i}"
repeat = { i = "n" }
[[links]]
between = ["H{i}", "SW"]
repeat = { i = "n" }
[[workloads]]
name = "incast"
kind = "incast"
to = "H1"
fan_in = 12
bytes = "250KB"
at = ["100us", "2ms"]
frame = "1058B"
"#;

#[test]
fn an_incast_under_pfc_finishes_without_loss_and_ends_the_run() {
    let sc = load_str(INCAST);
    let r = run(&sc, None);
    assert_conservation(&r);
    assert_eq!(r.summary.totals.volume.dropped_frames, 0);
    let w = &r.workload_flows;
    assert_eq!(w.len(), 24);
    for (k, f) in w.iter().enumerate() {
        let at = if k < 12 { 100_000_000 } else { 2_000_000_000 };
        assert_eq!(f.record.start.0, at, "{}", f.name);
        assert_eq!(f.dst, "H1");
        assert_eq!(f.counters.retransmissions, 0, "{}", f.name);
        assert!(f.record.finish.is_some(), "{}", f.name);
    }
    // 12 × 250 KB through one 40 Gb/s port takes at least 600 µs.
    let first_done = w[..12]
        .iter()
        .map(|f| f.record.finish.unwrap().0)
        .max()
        .unwrap();
    assert!(first_done >= 100_000_000 + 600_000_000);
    let end = r.summary.flows_finished_s.expect("every flow finished");
    assert!(end < 0.005, "{end}");
    assert_eq!(
        end,
        w[12..]
            .iter()
            .map(|f| f.record.finish.unwrap())
            .max()
            .unwrap()
            .as_secs_f64()
    );
}

#[test]
fn a_run_that_ends_first_lists_its_unfinished_flows() {
    // 16 ms of work at 40 Gb/s in a 5 ms run.
    let text = INCAST
        .replace("duration = \"20ms\"", "duration = \"5ms\"")
        .replace("bytes = \"250KB\"", "bytes = \"8MB\"")
        .replace("at = [\"100us\", \"2ms\"]", "at = \"100us\"");
    let r = run(&load_str(&text), None);
    assert_eq!(r.summary.flows_finished_s, None);
    let s = &r.summary.workloads[0];
    assert_eq!(s.finished + s.unfinished, 12);
    assert!(s.unfinished > 0);
    assert!(r.workload_flows.iter().any(|f| f.record.finish.is_none()));
}

#[test]
fn poisson_flows_are_the_same_for_a_seed_and_differ_across_seeds() {
    let text = INCAST.replace(
        "kind = \"incast\"\nto = \"H1\"\nfan_in = 12\nbytes = \"250KB\"\nat = [\"100us\", \"2ms\"]",
        "sizes = \"websearch\"\nload = 0.2\nstop = \"1ms\"",
    );
    let sc = load_str(&text);
    let a = run(&sc, Some(4));
    let b = run(&sc, Some(4));
    let c = run(&sc, Some(5));
    let key = |r: &cnsim_core::RunResult| {
        r.workload_flows
            .iter()
            .map(|f| {
                (
                    f.record.start,
                    f.src.clone(),
                    f.dst.clone(),
                    f.record.size,
                    f.record.finish,
                )
            })
            .collect::<Vec<_>>()
    };
    assert!(!key(&a).is_empty());
    assert_eq!(key(&a), key(&b));
    assert_eq!(a.summary.fingerprint, b.summary.fingerprint);
    assert_ne!(key(&a), key(&c));
}
