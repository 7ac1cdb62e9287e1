//! Per-destination adapter queues, the loop delay in front of the egress
//! buffer, and the expedited class.

use crate::common::*;
use cnsim_core::units::Time;

/// H1 (per-destination queues, 100 us loop delay) -- SW -- H2, all links
/// 10 Gb/s with 1 us of propagation, switch latency 2 us.
fn one_hop(extra_host: &str, load: f64) -> String {
    Line {
        duration: "5ms",
        delay: "1us",
        latency: "2us",
        h1: &format!("voq = true\nloop_delay = \"100us\"\n{extra_host}"),
        source: &format!("name = \"S1\"\nload = {load}\nslot_offset = \"0ns\""),
        ..Line::default()
    }
    .toml()
}

#[test]
fn a_frame_crosses_the_loop_delay_before_its_egress_buffer() {
    let r = run(&load_str(&one_hop("", 0.5)), None);
    let f = flow(&r, "S1");
    // Produced at t; egress buffer at t + 100 us; on the wire 1.2 us; link
    // 1 us; switch 2 us; on the wire 1.2 us; link 1 us: 106.4 us, exactly,
    // for an uncontended frame.
    assert_eq!(f.counters.latency_min_ps, Time::from_ns(106_400).0);
    assert_eq!(f.counters.volume.dropped_frames, 0);
    assert_conservation(&r);
}

#[test]
fn the_egress_watermark_leaves_room_for_the_delay_line_and_sources_never_wait() {
    // The switch passes on at 1 Gb/s and pauses H1 at 280 KB of its 300 KB
    // partition, so H1's egress buffer fills: it stops its queues at
    // high = 1500 KB - 100 us x 10 Gb/s = 1375 KB; what is in the delay
    // line still fits in 1500 KB.
    let text = one_hop(
        r#"egress = "1500KB"
egress_high = "1375KB"
egress_low = "1365KB""#,
        0.9,
    )
    .replace(
        "[[switches]]\nname = \"SW\"",
        "[[switches]]\nname = \"SW\"\nbuffer_model = \"per_input\"\nbuffer = \"300KB\"\n\
         pause = { mode = \"per_input\", xoff = \"280KB\", xon = \"260KB\" }",
    )
    .replace(
        "[[hosts]]\nname = \"H2\"",
        "[[hosts]]\nname = \"H2\"\nservice = { rate = \"1Gbps\" }",
    )
    .replace("duration = \"5ms\"", "duration = \"20ms\"");
    let r = run(&load_str(&text), None);
    let egress = queue(&r, "H1->SW");
    assert!(
        (1_375_000..=1_500_000).contains(&egress.max_occupancy_bytes),
        "{}",
        egress.max_occupancy_bytes
    );
    assert_eq!(r.summary.totals.volume.dropped_frames, 0);
    // The source keeps producing at 9 Gb/s (its frames wait in its queue):
    // 20 ms x 9 Gb/s = 22.5 MB offered, within 2%.
    let offered = flow(&r, "S1").counters.volume.offered_bytes as f64;
    assert!((offered / 22.5e6 - 1.0).abs() < 0.02, "{offered}");
    assert_conservation(&r);
}

/// H1 sends 9 Gb/s spread over H2 (served at 1 Gb/s) and H3; BCN at the
/// switch throttles H1's flow to H2.
fn throttled(voq: bool) -> cnsim_core::RunResult {
    let text = format!(
        r#"
duration = "20ms"
[defaults.link]
rate = "10Gbps"
[[switches]]
name = "SW"
[[hosts]]
name = "H1"
voq = {voq}
[[hosts]]
name = "H2"
service = {{ rate = "1Gbps" }}
[[hosts]]
name = "H3"
[[links]]
between = ["H1", "SW"]
[[links]]
between = ["SW", "H2"]
[[links]]
between = ["SW", "H3"]
[[sources]]
name = "S1"
host = "H1"
to = ["H2", "H3"]
load = 0.9
[bcn]
sample_interval = "30KB"
rl_queue = "150KB"
"#
    );
    run(&load_str(&text), None)
}

#[test]
fn a_throttled_destination_holds_up_no_other_behind_per_destination_queues() {
    let rx = |r: &cnsim_core::RunResult, name: &str| {
        flow(r, name).counters.volume.delivered_bytes as f64 * 8.0 / 20e-3
    };
    // With per-destination queues the flow to H3 keeps its whole 4.5 Gb/s
    // while the flow to H2 is held near H2's 1 Gb/s.
    let voq = throttled(true);
    assert!(
        (rx(&voq, "S1->H3") / 4.5e9 - 1.0).abs() < 0.03,
        "{}",
        rx(&voq, "S1->H3")
    );
    assert!(rx(&voq, "S1->H2") < 1.05e9, "{}", rx(&voq, "S1->H2"));
    assert_conservation(&voq);
    // With one rate-limiter queue per flow but a source that waits when it
    // is full, frames for H3 wait behind those for H2.
    let shared = throttled(false);
    assert!(
        rx(&shared, "S1->H3") < 0.5 * 4.5e9,
        "{}",
        rx(&shared, "S1->H3")
    );
}
