//! Targeted behaviour of the network model: buffer models, per-input PAUSE,
//! host egress watermarks, service schedules.

use crate::common::*;

/// A and B -> SW -> S. `extra` is appended (switch, host and source settings).
fn star(switch: &str, hosts: &str, sources: &str) -> String {
    format!(
        r#"
duration = "2ms"
bin = "100us"
[defaults.link]
delay = "0.5us"
[[switches]]
name = "SW"
latency = "1us"
{switch}
[[hosts]]
name = "A"
[[hosts]]
name = "B"
[[hosts]]
name = "S"
{hosts}
[[links]]
between = ["A", "SW"]
[[links]]
between = ["B", "SW"]
[[links]]
between = ["SW", "S"]
{sources}
"#
    )
}

const TWO_SOURCES: &str = "[[sources]]\nhost = \"A\"\nto = \"S\"\nload = 1.0\n[[sources]]\nhost = \"B\"\nto = \"S\"\nload = 0.05\n";
const SLOW_SINK: &str = "service = { rate = \"1Gbps\" }";

#[test]
fn per_input_pause_holds_only_the_input_that_fills_its_partition() {
    let sw = "buffer_model = \"per_input\"\nbuffer = \"150KB\"\npause = { mode = \"per_input\", xoff = \"120KB\", xon = \"100KB\" }";
    let r = run(&load_str(&star(sw, SLOW_SINK, TWO_SOURCES)), Some(1));
    assert_conservation(&r);
    assert_eq!(r.summary.totals.volume.dropped_frames, 0);
    assert!(queue(&r, "A->SW").paused_time_s > 1e-3, "A is paused");
    assert_eq!(queue(&r, "B->SW").paused_time_s, 0.0, "B is not");
    assert!(queue(&r, "SW->A").xoff_sent > 0);
    assert_eq!(queue(&r, "SW->B").pause_frames_sent, 0);
}

#[test]
fn per_input_partitions_drop_without_pause() {
    let sw = "buffer_model = \"per_input\"\nbuffer = \"30KB\"";
    let r = run(&load_str(&star(sw, SLOW_SINK, TWO_SOURCES)), Some(1));
    assert_conservation(&r);
    assert!(flow(&r, "A->S").counters.volume.dropped_frames > 0);
    // The slow output holds at most the two partitions.
    assert!(queue(&r, "SW->S").max_occupancy_bytes <= 60_000);
}

#[test]
fn a_queue_limit_caps_an_unlimited_buffer() {
    let sw = "buffer_model = \"unlimited\"\nqueue_limit = \"30KB\"";
    let r = run(&load_str(&star(sw, SLOW_SINK, TWO_SOURCES)), Some(1));
    assert_conservation(&r);
    let q = queue(&r, "SW->S");
    assert!(q.drops_frames > 0);
    assert!(
        q.max_occupancy_bytes <= 30_000 && q.max_occupancy_bytes > 27_000,
        "{}",
        q.max_occupancy_bytes
    );
}

#[test]
fn egress_watermarks_stop_and_resume_the_source() {
    // Global PAUSE at SW pushes back into A's egress buffer.
    let sw = "buffer = \"150KB\"\npause = { xoff = \"100KB\", xon = \"80KB\" }";
    let hosts = format!("{SLOW_SINK}\n[defaults.host]\negress = \"150KB\"\negress_high = \"60KB\"\negress_low = \"30KB\"\n");
    let r = run(&load_str(&star(sw, &hosts, TWO_SOURCES)), Some(1));
    assert_eq!(r.summary.totals.volume.dropped_frames, 0);
    let a = queue(&r, "A->SW");
    assert!(
        a.max_occupancy_bytes >= 60_000 && a.max_occupancy_bytes < 61_500,
        "{}",
        a.max_occupancy_bytes
    );
    // While stopped A offers less than its 10 Gb/s.
    assert!(flow(&r, "A->S").counters.volume.offered_bytes < 10_000_000_000 / 8 * 2 / 1000 / 2);
}

#[test]
fn an_unlimited_egress_never_stops_its_source() {
    let sw = "buffer = \"150KB\"\npause = { xoff = \"100KB\", xon = \"80KB\" }";
    let src = "[[sources]]\nhost = \"A\"\nto = \"S\"\nload = 1.0\nslot_offset = \"0ns\"\n";
    let r = run(&load_str(&star(sw, SLOW_SINK, src)), Some(1));
    // Every one of the 2 ms / 1.2 us slots produced a frame.
    assert_eq!(flow(&r, "A->S").counters.volume.offered_frames, 1667);
    assert!(queue(&r, "A->SW").max_occupancy_bytes > 1_000_000);
}

#[test]
fn a_periodic_service_schedule_alternates_the_drain_rate() {
    // 1 Gb/s for the first 100 us of every 200 us, 10 Gb/s otherwise.
    let hosts = "service = { rate = \"1Gbps\", period = \"200us\", reduced = \"100us\" }";
    let src = "[[sources]]\nhost = \"A\"\nto = \"S\"\nload = 1.0\n";
    let r = run(&load_str(&star("", hosts, src)), Some(1));
    let link = r
        .summary
        .queues
        .iter()
        .position(|q| q.name == "SW->S")
        .unwrap();
    let n = r.series.n_bins;
    let gbps: Vec<f64> = r.series.queue_tx_bytes[link * n..(link + 1) * n]
        .iter()
        .map(|&b| b as f64 * 8.0 / 100e-6 / 1e9)
        .collect();
    for (i, g) in gbps.iter().enumerate().skip(2) {
        if i % 2 == 0 {
            assert!((g - 1.0).abs() < 0.2, "bin {i}: {g} Gb/s while reduced");
        } else {
            assert!(*g > 9.0, "bin {i}: {g} Gb/s at full rate");
        }
    }
}

#[test]
fn a_source_that_stops_mid_transaction_still_starts_its_idle_link() {
    // A 9 KB transaction meets a 3 KB high watermark on an idle host: the
    // source stops after two frames, and those frames must still go out.
    let hosts =
        "[defaults.host]\negress = \"150KB\"\negress_high = \"3KB\"\negress_low = \"1.5KB\"\n";
    let src = "[[sources]]\nhost = \"A\"\nto = \"S\"\nkind = \"transactions\"\ntransaction = \"9KB\"\nload = 0.1\n";
    let r = run(&load_str(&star("", hosts, src)), Some(1));
    assert_conservation(&r);
    let f = flow(&r, "A->S");
    assert!(
        f.counters.volume.delivered_frames > 50,
        "{:?}",
        f.counters.volume
    );
    assert!(queue(&r, "A->SW").max_occupancy_bytes <= 3_000);
}

#[test]
fn an_egress_buffer_smaller_than_a_frame_is_rejected() {
    let hosts = "[defaults.host]\negress = \"1000B\"\n";
    let src = "[[sources]]\nhost = \"A\"\nto = \"S\"\nload = 0.5\n";
    let e = cnsim_core::scenario::load(
        &star("", hosts, src),
        "t.toml",
        cnsim_core::Format::Toml,
        &[],
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("sources[0]: a 1500 B frame does not fit"),
        "{e}"
    );
    assert!(
        e.to_string().contains("egress buffer of host 'A' (1000 B)"),
        "{e}"
    );
}
