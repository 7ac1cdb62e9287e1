//! Exact timing: serialization + propagation + switch latency, to the picosecond.

use crate::common::*;

/// H1 -- SW -- H2, 10 Gb/s, 0.5 us links, 1 us switch latency. Sources sit
/// on the slot grid (slot_offset = 0) so production times are known.
fn line(source: &str) -> String {
    Line {
        duration: "1ms",
        source: &format!("slot_offset = \"0ns\"\n{source}"),
        ..Line::default()
    }
    .toml()
}

const SER: u64 = 1_200_000; // 1500 B at 10 Gb/s, ps
const PROP: u64 = 500_000;
const LAT: u64 = 1_000_000;

#[test]
fn a_single_frame_arrives_after_two_serializations_two_propagations_and_the_switch_latency() {
    // load 1 with a stop one slot later: exactly one frame, produced at t = 0.
    let r = run(&load_str(&line("load = 1.0\nstop = \"1.2us\"")), None);
    let f = flow(&r, "H1->H2");
    assert_eq!(f.counters.volume.delivered_frames, 1);
    let expected = 2 * SER + 2 * PROP + LAT; // 4.4 us
    assert_eq!(f.counters.first_delivery_ps, expected);
    assert_eq!(f.counters.latency_max_ps, expected);
}

#[test]
fn back_to_back_frames_are_spaced_by_exactly_one_serialization_time() {
    // A 9 KB transaction is six 1500 B frames queued at once at the host.
    let r = run(
        &load_str(&line(
            "kind = \"transactions\"\ntransaction = \"9KB\"\nload = 1.0\nstop = \"7.2us\"",
        )),
        None,
    );
    let f = flow(&r, "H1->H2");
    assert_eq!(f.counters.volume.delivered_frames, 6);
    let first = 2 * SER + 2 * PROP + LAT;
    assert_eq!(f.counters.first_delivery_ps, first);
    assert_eq!(f.counters.last_delivery_ps, first + 5 * SER);
    assert_eq!(f.counters.latency_min_ps, first);
    assert_eq!(f.counters.latency_max_ps, first + 5 * SER);
}

#[test]
fn a_source_at_full_load_keeps_the_link_busy_without_queueing() {
    // Five slots at load 1: frames produced every 1.2 us, each delivered 4.4 us later.
    let r = run(&load_str(&line("load = 1.0\nstop = \"6us\"")), None);
    let f = flow(&r, "H1->H2");
    assert_eq!(f.counters.volume.delivered_frames, 5);
    let first = 2 * SER + 2 * PROP + LAT;
    assert_eq!(f.counters.last_delivery_ps, first + 4 * SER);
    assert_eq!(f.counters.latency_max_ps, first);
    assert_eq!(queue(&r, "SW->H2").max_occupancy_bytes, 1500);
}

#[test]
fn a_reduced_service_window_slows_the_link_into_the_host() {
    // H2 drains at 1 Gb/s: the last hop takes 12 us instead of 1.2 us.
    let text = line("load = 1.0\nstop = \"1.2us\"").replace(
        "[[hosts]]\nname = \"H2\"",
        "[[hosts]]\nname = \"H2\"\nservice = { rate = \"1Gbps\", start = \"0ms\", end = \"1ms\" }",
    );
    let r = run(&load_str(&text), None);
    let f = flow(&r, "H1->H2");
    assert_eq!(
        f.counters.first_delivery_ps,
        SER + 2 * PROP + LAT + 10 * SER
    );
}

#[test]
fn pause_takes_wire_time_propagation_and_response_time_and_lets_the_frame_on_the_wire_finish() {
    // XOFF as soon as one frame sits in SW's queue toward a 1 Gb/s sink; XON when it is empty.
    let text = line("load = 1.0")
        .replace("duration = \"1ms\"", "duration = \"66us\"")
        .replace(
            "latency = \"1us\"",
            "latency = \"1us\"\nbuffer = \"150KB\"\npause = { mode = \"global\", xoff = \"1500B\", xon = \"0B\" }",
        )
        .replace("name = \"H1\"", "name = \"H1\"\nresponse_time = \"2us\"")
        .replace("name = \"H2\"", "name = \"H2\"\nservice = { rate = \"1Gbps\" }");
    let r = run(&load_str(&text), None);
    // Frame 1 reaches SW's queue at 1.2 + 0.5 + 1 = 2.7 us: XOFF. The 64 B PAUSE
    // frame takes 51.2 ns, 0.5 us on the wire and 2 us of H1's response:
    // H1 holds from 5.2512 us, after finishing frame 5 (4.8..6.0 us).
    // SW drains its 5 frames at 1 Gb/s (12 us each) from 2.7 us: empty at
    // 62.7 us: XON, effective at 65.2512 us.
    let h1 = queue(&r, "H1->SW");
    assert_eq!(h1.tx_bytes, 5 * 1500, "five frames left H1 before it held");
    assert_eq!(
        (h1.paused_time_s * 1e12).round() as u64,
        60_000_000,
        "paused for exactly 60 us"
    );
    let sw = queue(&r, "SW->H1");
    assert_eq!((sw.xoff_sent, sw.pause_frames_sent), (1, 2));
    assert_eq!(
        queue(&r, "SW->H2").pause_frames_sent,
        0,
        "no PAUSE toward the congested output itself"
    );
    assert_eq!(flow(&r, "H1->H2").counters.volume.delivered_frames, 5);
}

#[test]
fn a_udp_frame_is_delivered_only_if_it_arrives_before_the_end() {
    // One frame, due at H2 at 4.4 us. Its last hop is not an event: it is
    // delivered when it leaves SW, with its arrival time, if that is
    // before the end; otherwise it is still in flight.
    let one = "load = 1.0\nstop = \"1.2us\"";
    let due = 2 * SER + 2 * PROP + LAT;
    let at_end = line(one).replace("duration = \"1ms\"", "duration = \"4.4us\"");
    let r = run(&load_str(&at_end), None);
    let f = flow(&r, "H1->H2");
    assert_eq!(f.counters.volume.delivered_frames, 0);
    assert_eq!(f.counters.volume.in_flight_frames, 1);
    let after = line(one).replace("duration = \"1ms\"", "duration = \"4.401us\"");
    let r = run(&load_str(&after), None);
    let f = flow(&r, "H1->H2");
    assert_eq!(f.counters.volume.delivered_frames, 1);
    assert_eq!(f.counters.first_delivery_ps, due);
    // SourceFire, TxDone at H1, Arrive at SW, TxDone at SW: no event at H2.
    assert_eq!(r.summary.events, 4);
}
