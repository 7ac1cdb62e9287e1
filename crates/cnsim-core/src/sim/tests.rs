//! The reaction point inside a running network: notifications are
//! injected as events so their times and contents are exact.

use super::conn::End;
use super::*;
use crate::net::frame::FrameKind;
use crate::net::rate_limiter::NO_CP;
use crate::scenario::{load, Format};

#[path = "../../tests/common/line.rs"]
mod line;
use line::Line;
// Shared with the integration tests, which use the helpers these do not.
#[path = "../../tests/common/star.rs"]
#[allow(dead_code)]
mod star;

/// A result's summary as JSON without what the machine measured (wall
/// time, rates, memory) and the fields `also` names.
fn summary_json(r: &RunResult, also: &[&str]) -> serde_json::Value {
    let mut v = serde_json::to_value(&r.summary).unwrap();
    let o = v.as_object_mut().unwrap();
    for k in [
        "wall_time_s",
        "events_per_s",
        "frame_hops_per_s",
        "slowdown",
        "peak_memory_bytes",
        "rss_growth_bytes",
    ]
    .iter()
    .chain(also)
    {
        o.remove(*k);
    }
    v
}

/// Two runs of one scenario gave the same results: fingerprint, events,
/// summary (but the machine's costs), every flow, queue, series and PFC
/// event. `name` says which case failed.
fn assert_same_results(a: &RunResult, b: &RunResult, name: &str) {
    assert_eq!(a.summary.fingerprint, b.summary.fingerprint, "{name}");
    assert_eq!(a.summary.events, b.summary.events, "{name}");
    assert_eq!(summary_json(a, &[]), summary_json(b, &[]), "{name}");
    let debug = |r: &RunResult| {
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}",
            r.flows, r.workload_flows, r.series, r.pfc_events
        )
    };
    assert_eq!(a.queues, b.queues, "{name}");
    assert_eq!(debug(a), debug(b), "{name}");
}

/// H1 -- SW -- H2 at 10 Gb/s; H1 sends 1500 B frames at 90% of the line
/// rate on the slot grid; the congestion point never samples on its own.
fn sim(bcn_extra: &str) -> Simulator {
    sim_with("", bcn_extra)
}

/// The same, with extra keys for H2.
fn sim_with(h2_extra: &str, bcn_extra: &str) -> Simulator {
    let bcn = format!("[bcn]\nsample_interval = \"1000MB\"\n{bcn_extra}");
    let h1 = r#"response_time = "2us""#;
    let sc = line_of_three(
        "rp.toml",
        "10ms",
        ["", h1, h2_extra, r#"slot_offset = "0ns""#, &bcn],
    );
    let mut s = Simulator::new(&sc, 1);
    s.start_sources();
    s
}

/// A shipped scenario file (from the repository's root) with `sets`.
fn shipped(file: &str, sets: &[(&str, &str)]) -> Scenario {
    let path = format!("{}/../../{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    load(&text, file, Format::Toml, &sets).unwrap_or_else(|e| panic!("{e}"))
}

/// H1 -- SW -- H2 at 10 Gb/s (0.5 us links, 1 us switch latency), H1
/// offering 90% of the line rate to H2 for `duration`. `extra` adds keys
/// to SW, H1, H2 and the source, then whole sections.
fn line_of_three(name: &str, duration: &str, extra: [&str; 5]) -> Scenario {
    let [switch, h1, h2, source, sections] = extra;
    let text = Line {
        duration,
        switch,
        h1,
        h2,
        source: &format!("load = 0.9\n{source}"),
        sections,
        ..Line::default()
    }
    .toml();
    load(&text, name, Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// A notification handed to the switch at `t0`, addressed to H2 whose
/// link drains at 1 Gb/s behind about 1 MB of queued data: the time at
/// which it takes effect (the limiter of flow 0 counts it).
fn notification_delay(expedite: bool) -> Time {
    let mut s = sim_with(
        r#"service = { rate = "1Gbps" }"#,
        &format!("expedite = {expedite}"),
    );
    let t0 = Time::from_ms(1);
    s.run_until(t0, None).unwrap();
    assert!(s.ports[2].occupancy > 900_000, "{}", s.ports[2].occupancy);
    let Role::Host(h2) = &s.roles[s.ports[3].node as usize] else {
        unreachable!()
    };
    let frame = Frame {
        created: t0,
        flow: 0,
        size: 64,
        dst_host: h2.host_number,
        tag: 1,
        cpid: 2,
        aux: Frame::pack_fb(-100),
        kind: FrameKind::Bcn,
        qfb: 0,
    };
    let slot = s.parked.insert(frame) as u32;
    s.events.schedule(t0, Event::Inject { port: 1, slot });
    let mut t = t0;
    while s.limiters[0].messages == 0 {
        t = t + Time::from_us(1);
        s.run_until(t, None).unwrap();
    }
    t - t0
}

#[test]
fn expedited_frames_overtake_queued_data() {
    // Behind the frame on the wire (at most 12 us at 1 Gb/s), then its
    // own 0.512 us and 0.5 us of link: effect within 14 us.
    let fast = notification_delay(true);
    assert!(fast <= Time::from_us(14), "{fast}");
    // Without the expedited class it waits its turn behind ~1 MB: > 7 ms.
    let slow = notification_delay(false);
    assert!(slow > Time::from_ms(7), "{slow}");
}

fn notify(s: &mut Simulator, at: Time, kind: FrameKind, fb: i16, cpid: u32) {
    let frame = Frame {
        created: at,
        flow: 0,
        size: 64,
        dst_host: 0,
        tag: 0,
        cpid,
        aux: Frame::pack_fb(fb as i32),
        kind,
        qfb: 0,
    };
    s.schedule_notify(at, frame);
}

const CP: u32 = 2; // SW's port toward H2

#[test]
fn a_known_message_sequence_gives_the_hand_computed_rates() {
    let mut s = sim("");
    let t0 = Time::from_us(100);
    notify(&mut s, t0, FrameKind::Bcn, -1875, CP);
    notify(&mut s, t0 + Time::from_us(10), FrameKind::Bcn, -250, CP);
    notify(&mut s, t0 + Time::from_us(20), FrameKind::Bcn, 175, CP);
    // Positive feedback from another congestion point is ignored.
    notify(&mut s, t0 + Time::from_us(30), FrameKind::Bcn, 1875, CP + 1);
    s.run_until(t0 + Time::from_us(40), None).unwrap();
    let rl = &s.limiters[0];
    assert!(rl.active);
    assert_eq!(rl.cpid, CP);
    assert_eq!(rl.messages, 3);
    let expected = 10e9 * (1.0 - 2.6e-4 * 1875.0) * (1.0 - 2.6e-4 * 250.0) + 0.53 * 175.0 * 1e6;
    assert!(
        (rl.rate - expected).abs() < 1e-3,
        "{} vs {expected}",
        rl.rate
    );
    assert_eq!(s.flows[0].rl_installs, 1);
}

#[test]
fn frames_leave_the_limiter_tagged_and_spaced_at_its_rate() {
    let mut s = sim("");
    let t0 = Time::from_us(100);
    notify(&mut s, t0, FrameKind::Bcn, -1875, CP); // 5.125 Gb/s
    s.run_until(Time::from_ms(1), None).unwrap();
    let before = s.flows[0].volume.delivered_bytes;
    s.run_until(Time::from_ms(9), None).unwrap();
    let after = s.flows[0].volume.delivered_bytes;
    // 8 ms at 5.125 Gb/s: 5,125,000 B, within one frame.
    let sent = (after - before) as i64;
    assert!((sent - 5_125_000).abs() <= 1500, "{sent}");
    // The source (9 Gb/s offered) now waits on a full limiter queue: no drops.
    assert_eq!(s.limiters[0].bytes, 150_000 / 1500 * 1500);
    assert_eq!(s.flows[0].volume.dropped_frames, 0);
    // Frames in flight to H2 carry the congestion point's id.
    let tagged = s.ports[CP as usize].queued().all(|f| f.cpid == CP);
    assert!(tagged);
}

#[test]
fn drift_adds_rd_every_td_from_installation_and_releases_at_line_rate() {
    let mut s = sim(r#"drift = { rate = "1Gbps", interval = "100us" }"#);
    let t0 = Time::from_us(100);
    notify(&mut s, t0, FrameKind::Bcn, -1875, CP); // 5.125 Gb/s
    s.run_until(t0 + Time::from_us(300), None).unwrap();
    // Ticks at t0 + 100 and t0 + 200 us; the one at t0 + 300 us is not yet handled.
    assert!(
        (s.limiters[0].rate - 7.125e9).abs() < 1e-3,
        "{}",
        s.limiters[0].rate
    );
    s.run_until(t0 + Time::from_us(300) + Time(1), None)
        .unwrap();
    assert!((s.limiters[0].rate - 8.125e9).abs() < 1e-3);
    // Two more ticks reach the line rate (capped). The limiter stays
    // until the backlog the source built up has drained (at 10 - 9 Gb/s
    // net), then is released and frames go out untagged.
    s.run_until(t0 + Time::from_us(600), None).unwrap();
    assert_eq!(s.limiters[0].rate, 10e9);
    assert!(s.limiters[0].active && !s.limiters[0].queue.is_empty());
    s.run_until(t0 + Time::from_ms(3), None).unwrap();
    assert!(!s.limiters[0].active);
    assert_eq!(s.limiters[0].cpid, NO_CP);
    s.run_until(t0 + Time::from_ms(3) + Time::from_us(10), None)
        .unwrap();
    assert!(s.ports[CP as usize].queued().all(|f| f.cpid == NO_CP));
}

#[test]
fn bcn00_stops_for_at_most_tmax_then_restarts_at_the_restart_rate() {
    let mut s = sim(
        r#"stop = { threshold = "100KB", tmax = "100us", restart_rate = "1Gbps" }
min_rate = "1Gbps""#,
    );
    let t0 = Time::from_us(100);
    notify(&mut s, t0, FrameKind::BcnStop, 0, CP);
    s.run_until(t0 + Time(1), None).unwrap();
    let rl = &s.limiters[0];
    assert_eq!(rl.rate, 1e9);
    assert_eq!(rl.cpid, CP);
    let resume = rl.next_allowed;
    assert!(
        resume >= t0 && resume <= t0 + Time::from_us(100),
        "{resume}"
    );
    // Nothing leaves the limiter before `resume`, then one frame per 12 us.
    let queued_at_stop = rl.queue.len();
    s.run_until(resume, None).unwrap();
    assert!(s.limiters[0].queue.len() >= queued_at_stop);
    let egress_before: u64 = s.queue_tx.row(0).sum();
    s.run_until(resume + Time::from_us(120), None).unwrap();
    let sent = s.queue_tx.row(0).sum::<u64>() - egress_before;
    // 120 us at 1 Gb/s is 10 frames (11 if the first leaves at `resume`).
    assert!((15_000..=16_500).contains(&sent), "{sent}");
}

/// H1 -- SW -- H2, H2 draining at 1 Gb/s, H1 offering 9 Gb/s, run for
/// 5 ms with `fault` injected.
fn faulty(
    switch_extra: &str,
    extra: &str,
    fault: invariants::Fault,
    no_checks: bool,
) -> Result<RunResult, RunError> {
    let sw = format!("buffer = \"150KB\"\n{switch_extra}");
    let h2 = r#"service = { rate = "1Gbps" }"#;
    let sc = line_of_three("fault.toml", "5ms", [&sw, "", h2, "", extra]);
    let mut s = Simulator::new(&sc, 1);
    s.fault = fault;
    let opts = RunOptions {
        no_checks,
        ..RunOptions::default()
    };
    s.run(&sc, &opts)
}

fn violation(switch_extra: &str, extra: &str, fault: invariants::Fault) -> String {
    match faulty(switch_extra, extra, fault, false) {
        Err(RunError::Invariant(msg)) => msg,
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("{fault:?} went unnoticed"),
    }
}

const PAUSE: &str = r#"pause = { mode = "global", xoff = "100KB", xon = "80KB" }"#;
const BCN: &str = "[bcn]";
use invariants::Fault;

#[test]
fn a_clean_run_passes_every_check() {
    for (sw, extra) in [("", ""), (PAUSE, ""), ("", BCN)] {
        faulty(sw, extra, Fault::None, false).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn each_broken_invariant_stops_the_run_and_is_named() {
    let cases = [
        (
            "",
            "",
            Fault::LoseOccupancy(2),
            "no negative occupancy",
            "port SW->H2",
        ),
        (
            "",
            "",
            Fault::IgnoreBuffer(2),
            "no over-capacity occupancy",
            "port SW->H2",
        ),
        (
            PAUSE,
            "",
            Fault::IgnorePause,
            "paused ports send nothing",
            "port H1->SW",
        ),
        (
            "",
            "",
            Fault::DeliverTwice,
            "frames of a UDP flow arrive once and in order",
            "node H2",
        ),
        (
            r#"buffer_model = "unlimited""#,
            "",
            Fault::ExtraByte(2),
            "conservation of bytes per queue",
            "port SW->H2",
        ),
        (
            "",
            r#"[defaults.source]
transport = "tcp""#,
            Fault::TcpDeliverTwice,
            "TCP delivers every byte once",
            "node H2",
        ),
        (
            "",
            BCN,
            Fault::RateAboveLine,
            "rate limiters within [min rate, line rate]",
            "node H1",
        ),
        (
            "",
            "",
            Fault::DoubleDrop,
            "conservation of bytes and frames per flow",
            "node H1",
        ),
    ];
    for (sw, extra, fault, invariant, place) in cases {
        let msg = violation(sw, extra, fault);
        assert!(
            msg.starts_with(&format!("invariant violated: {invariant} (at ")),
            "{fault:?}: {msg}"
        );
        assert!(
            msg.contains(place) && msg.contains("seed 1"),
            "{fault:?}: {msg}"
        );
    }
}

#[test]
fn checks_can_be_turned_off() {
    assert!(faulty("", "", Fault::DeliverTwice, true).is_ok());
}

/// H1 and H2 (per-flow queues) send to H3 through SW; with `congested`
/// both at the line rate, H2 from 10 us, else H1 alone at 10%. ECM with
/// E2CM (source form), L0 from `baseline`. Returns flow 0's L0 after 5 ms
/// and the probes it sent.
fn e2cm_baseline(congested: bool, baseline: &str) -> (Time, u64) {
    let second = if congested {
        "[[sources]]\nhost = \"H2\"\nto = \"H3\"\nload = 1.0\nstart = \"10us\"\nslot_offset = \"0ns\"\n"
    } else {
        ""
    };
    let share = if congested { 1.0 } else { 0.1 };
    let top = r#"
duration = "5ms"
[defaults.link]
rate = "10Gbps"
delay = "0.5us"
[defaults.host]
voq = true"#;
    let rest = format!(
        r#"
[[sources]]
host = "H1"
to = "H3"
load = {share}
slot_offset = "0ns"
{second}
[bcn]
qeq = "75KB"
[e2cm]
baseline = "{baseline}"
"#
    );
    let text = star::two_to_one(top, "latency = \"1us\"\nbuffer = \"2MB\"", &rest);
    let sc = load(&text, "e2cm_l0.toml", Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"));
    let mut s = Simulator::new(&sc, 1);
    s.start_sources();
    s.run_until(Time::from_ms(5), None).unwrap();
    let Scheme::Bcn(b) = &s.scheme else {
        panic!("a BCN scheme")
    };
    let e = b.e2cm().expect("E2CM runs");
    let l0 = e.baseline_latency(0).expect("flow 0 has an L0");
    (l0, e.counts(0).0)
}

/// E2CM's L0 comes from a probe sent with the flow's first frame: after
/// the overload's transient it is the unloaded path's round trip, to the
/// picosecond; learnt only while throttled it holds the standing queue.
#[test]
fn e2cm_baseline_latency_after_a_transient_is_the_unloaded_paths() {
    let (unloaded, _) = e2cm_baseline(false, "flow_start");
    let (l0, probes) = e2cm_baseline(true, "flow_start");
    assert!(probes > 2, "flow 0 probed while throttled: {probes} probes");
    assert_eq!(l0, unloaded);
    // Probe 64 B and reply 64 B, each over two 0.5 us links and the 1 us
    // switch, at 10 Gb/s (51.2 ns per hop).
    let hop = Time::from_ns(500) + crate::units::Rate::gbps(10).tx_time(64);
    assert_eq!(unloaded, Time(4 * hop.0 + 2 * Time::from_us(1).0));
    let (late, _) = e2cm_baseline(true, "while_probing");
    assert!(
        late > l0 + Time::from_us(10),
        "while probing: {late}, from the start: {l0}"
    );
}

/// The caller's poll is asked every 65,536 events, and `true` cancels the
/// run there; `false` changes nothing.
#[test]
fn poll_cancels_at_the_periodic_check() {
    use std::sync::atomic::AtomicU64;
    let asked = Arc::new(AtomicU64::new(0));
    let run_with = |answer: bool| {
        let sc = line_of_three("poll.toml", "50ms", ["buffer = \"150KB\"", "", "", "", ""]);
        let counter = asked.clone();
        let opts = RunOptions {
            poll: Some(Arc::new(move || {
                counter.fetch_add(1, Ordering::Relaxed);
                answer
            })),
            ..RunOptions::default()
        };
        Simulator::new(&sc, 1).run(&sc, &opts)
    };
    let full = run_with(false).expect("a poll answering false lets the run finish");
    let polls = asked.swap(0, Ordering::Relaxed);
    assert!(polls >= 2, "a run long enough to be asked twice");
    assert_eq!(
        polls,
        full.summary.events >> 16,
        "one poll per 65,536 events"
    );
    match run_with(true) {
        Err(RunError::Cancelled(t)) => assert!(t < Time::from_ms(50)),
        other => panic!(
            "expected a cancelled run, got {:?}",
            other.map(|r| r.summary.events)
        ),
    }
    assert_eq!(asked.load(Ordering::Relaxed), 1);
}

#[test]
fn a_run_is_given_the_threads_it_can_use_and_told_why_not_more() {
    let gb = 1_000_000_000;
    assert_eq!(thread_budget(1, gb, Some(gb / 2), None), (1, vec![]));
    assert_eq!(thread_budget(4, gb, None, None), (4, vec![]));
    assert_eq!(thread_budget(4, gb, Some(8 * gb), None), (4, vec![]));
    assert_eq!(
        thread_budget(4, 2 * gb, Some(5 * gb), None),
        (
            2,
            vec!["memory: the estimate (2.0 GB per partition) allows 2".to_string()]
        )
    );
    // A run that cannot be split says why, whatever the memory.
    let why = "no link between two switches with a delay";
    assert_eq!(
        thread_budget(4, 2 * gb, Some(5 * gb), Some(why)),
        (1, vec![why.to_string()])
    );
    assert_eq!(thread_budget(1, gb, None, Some(why)), (1, vec![]));
}

/// A source parked behind its full rate limiter, a connection's writer
/// parked while a full segment is unsent, and data frames delivered at
/// their last bit with DCQCN's CNPs sent by `Reply` events, change when
/// events happen, not what happens: DCQCN, BCN, TCP and RoCE runs with all
/// three switched off (every frame arrives by an event, every unit has its
/// event) give the same counters, series, PFC events and summary, with
/// more events.
#[test]
fn parked_sources_and_last_bit_deliveries_change_no_result() {
    let cases = [
        (
            "scenarios/dcqcn/convergence.toml",
            vec![("params.n", "4"), ("duration", "10ms")],
        ),
        (
            "scenarios/dcqcn/convergence.toml",
            vec![
                ("params.n", "2"),
                ("duration", "10ms"),
                ("dcqcn.variant", "\"mellanox\""),
            ],
        ),
        ("scenarios/baseline/bcn.toml", vec![("duration", "20ms")]),
        // Writers of TCP (DCTCP) and RoCE (DCQCN) connections at full load,
        // and TCP behind QCN and PAUSE.
        (
            "scenarios/dctcp/long_flows.toml",
            vec![("duration", "10ms")],
        ),
        (
            "scenarios/dcqcn/convergence.toml",
            vec![
                ("params.n", "4"),
                ("duration", "5ms"),
                ("defaults.source.transport", "\"roce\""),
            ],
        ),
        // Below the bottleneck's rate: connections catch up with their
        // writers, which park and wake again.
        (
            "scenarios/dctcp/long_flows.toml",
            vec![
                ("duration", "10ms"),
                ("params.n", "2"),
                ("sources[0].load", "0.45"),
            ],
        ),
        (
            "scenarios/dcqcn/convergence.toml",
            vec![
                ("params.n", "2"),
                ("duration", "5ms"),
                ("defaults.source.transport", "\"roce\""),
                ("sources[0].load", "0.45"),
            ],
        ),
        (
            "scenarios/qcn_tcp/pause_propagation.toml",
            vec![("duration", "30ms"), ("qcn.enabled", "true")],
        ),
        // Units on the slot grid: wake-ups at the very instant a unit is due.
        (
            "scenarios/dcqcn/convergence.toml",
            vec![
                ("params.n", "4"),
                ("duration", "10ms"),
                ("defaults.source.slot_offset", "\"0ns\""),
            ],
        ),
    ];
    for (file, sets) in cases {
        let sc = shipped(file, &sets);
        let run = |park: bool| {
            let mut s = Simulator::new(&sc, 1);
            if !park {
                s.udp_at_last_bit = false;
                s.conn_writer.clear();
                for role in &mut s.roles {
                    if let Role::Host(h) = role {
                        h.lone_source = None;
                    }
                }
            }
            s.run(&sc, &RunOptions::default())
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let (parked, not) = (run(true), run(false));
        assert!(
            parked.summary.events < not.summary.events,
            "{file}: nothing parked"
        );
        assert_eq!(parked.flows, not.flows, "{file}");
        assert_eq!(parked.queues, not.queues, "{file}");
        assert_eq!(parked.series, not.series, "{file}");
        assert_eq!(
            format!("{:?}", parked.pfc_events),
            format!("{:?}", not.pfc_events)
        );
        let summary = |r: &RunResult| summary_json(r, &["events", "fingerprint"]);
        assert_eq!(summary(&parked), summary(&not), "{file}");
    }
}

/// A workload flow's reaction point ends when its sender has every byte
/// acknowledged: its limiter is removed (its queue's buffer given back),
/// its timers lapse and later CNPs are ignored. Nothing it controlled is left to send, so every flow
/// finishes at the same time as when the reaction point outlives its flow;
/// only events (and limiter installs by late CNPs) are fewer.
#[test]
fn a_complete_flows_reaction_point_ends_and_no_flow_finishes_otherwise() {
    for variant in ["\"paper\"", "\"mellanox\""] {
        let sc = shipped(
            "scenarios/workloads/websearch_incast.toml",
            &[
                ("workloads[web].stop", "\"1ms\""),
                ("workloads[incast].stop", "\"1ms\""),
                ("dcqcn.variant", variant),
            ],
        );
        let run = |outlives: bool| {
            let mut s = Simulator::new(&sc, 1);
            s.rp_outlives_flow = outlives;
            let r = s
                .run(&sc, &RunOptions::default())
                .unwrap_or_else(|e| panic!("{e}"));
            // Again, stopped where the run's results are taken.
            let mut s = Simulator::new(&sc, 1);
            s.rp_outlives_flow = outlives;
            s.start_workloads();
            s.run_until(s.end, None).unwrap();
            let done: Vec<u32> = (s.workload.first..s.conn_sending.len() as u32)
                .filter(|&f| s.sender_done(f))
                .collect();
            // Limiter queues still holding their buffer.
            let buffers = done
                .iter()
                .filter(|&&f| s.limiters[f as usize].queue.capacity() > 0)
                .count();
            // A CNP reaching each complete flow now.
            for &flow in &done {
                let cnp = Frame {
                    created: s.now,
                    flow,
                    size: 64,
                    dst_host: s.flow_src_host[flow as usize],
                    tag: 0,
                    cpid: NO_CP,
                    aux: 0,
                    kind: FrameKind::Cnp,
                    qfb: 0,
                };
                s.reaction_point(cnp);
            }
            let live = done
                .iter()
                .filter(|&&f| s.limiters[f as usize].active)
                .count();
            (r, live, buffers)
        };
        let ((ended, live_ended, buffers_ended), (kept, live_kept, buffers_kept)) =
            (run(false), run(true));
        assert_eq!(live_ended, 0, "{variant}: a complete flow kept its limiter");
        assert_eq!(
            buffers_ended, 0,
            "{variant}: a complete flow's limiter kept its queue's buffer"
        );
        assert!(buffers_kept > 0, "{variant}: no limiter queue had a buffer");
        assert!(
            live_kept > 0,
            "{variant}: no complete flow had a limiter left"
        );
        assert!(
            ended.summary.events < kept.summary.events,
            "{variant}: no event saved"
        );
        assert_eq!(ended.queues, kept.queues, "{variant}");
        // Debug text: a workload row's levels are NaN, which `==` refuses.
        assert_eq!(
            format!("{:?}", ended.series),
            format!("{:?}", kept.series),
            "{variant}"
        );
        assert_eq!(ended.workload_flows.len(), kept.workload_flows.len());
        let mut installs = (0, 0);
        for (a, b) in ended.workload_flows.iter().zip(&kept.workload_flows) {
            assert_eq!(a.record, b.record, "{variant}: {}", a.name);
            let (mut ca, mut cb) = (a.counters, b.counters);
            assert!(ca.rl_installs <= cb.rl_installs, "{variant}: {}", a.name);
            installs = (installs.0 + ca.rl_installs, installs.1 + cb.rl_installs);
            (ca.rl_installs, cb.rl_installs) = (0, 0);
            assert_eq!(ca, cb, "{variant}: {}", a.name);
        }
        assert!(installs.0 > 0, "{variant}: no limiter installed");
    }
}

/// A workload flow's connection ends close when their part is over, keeping
/// only their finished forms, and that changes nothing: the same events
/// (fingerprint) and every result the same as with the ends kept open, on
/// lossless RoCE with DCQCN and on RoCE, DCTCP and NewReno (delayed ACKs)
/// that drop, where copies of segments and their ACKs reach finished ends.
/// Two threads give the same. A receiver with every byte has closed unless
/// it owes an ACK. (What a finished form answers is tested against the
/// full state machines in `transport`.)
#[test]
fn finished_connection_ends_close_and_change_no_result() {
    let tcp = [
        ("dcqcn.enabled", "false"),
        ("workloads[web].transport", "\"tcp\""),
        ("workloads[incast].transport", "\"tcp\""),
        ("tcp.initial_window", "10"),
    ];
    // The flows' class lossy in small buffers, and timers shorter than a
    // loaded round trip: retransmissions whose copies reach receivers that
    // have every byte, and ACKs of them senders that have every ACK.
    let lossy = [
        ("defaults.switch.pfc.classes", "[0]"),
        ("defaults.switch.buffer", "\"300KB\""),
        ("tcp.min_rto", "\"20us\""),
        ("tcp.initial_rto", "\"20us\""),
        ("roce.rto", "\"20us\""),
    ];
    let dctcp = [("tcp.ecn", "\"dctcp\""), ("tcp.delayed_ack", "false")];
    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("dcqcn", vec![]),
        ("roce, lossy", lossy.to_vec()),
        ("dctcp, lossy", [&lossy[..], &tcp, &dctcp].concat()),
        ("newreno, lossy", [&lossy[..], &tcp].concat()),
    ];
    for (name, extra) in cases {
        let stop = [
            ("workloads[web].stop", "\"1ms\""),
            ("workloads[incast].stop", "\"1ms\""),
        ];
        let sc = shipped(
            "scenarios/workloads/websearch_incast.toml",
            &[&stop[..], &extra].concat(),
        );
        let run = |keep: bool| {
            let mut s = Simulator::new(&sc, 1);
            s.keep_conn_ends = keep;
            s.run(&sc, &RunOptions::default())
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let (closed, open) = (run(false), run(true));
        assert_same_results(&closed, &open, name);
        // Split over two threads, each flow's ends in different partitions
        // (a late ACK crosses to a sender that is done).
        let split = super::run(
            &sc,
            &RunOptions {
                threads: 2,
                ..RunOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(split.summary.threads_used, 2, "{name}");
        assert_eq!(
            summary_json(
                &split,
                &["threads_requested", "threads_used", "threads_note"]
            ),
            summary_json(
                &closed,
                &["threads_requested", "threads_used", "threads_note"]
            ),
            "{name}"
        );
        assert_eq!(
            format!("{:?}", split.workload_flows),
            format!("{:?}", closed.workload_flows),
            "{name}"
        );

        // Again, stopped where the results are taken, to look inside.
        let mut s = Simulator::new(&sc, 1);
        s.start_workloads();
        s.run_until(s.end, None).unwrap();
        // A receiver with every byte has closed, unless it owes an ACK.
        let mut done = 0;
        for flow in s.workload.first..s.conn_receiving.len() as u32 {
            match s.conn_receiving[flow as usize] {
                End::Done(_) => done += 1,
                End::Open(i) => {
                    let rx = &s.receivers[i as usize].rx;
                    let complete = Some(rx.rcv_nxt()) == s.workload.size_of(flow);
                    assert!(
                        !complete || rx.ack_deadline().is_some(),
                        "{name}: flow {flow}"
                    );
                }
                End::Closed => {}
            }
        }
        assert!(
            done > 0 && done <= s.finished_flows(),
            "{name}: {done} receivers closed"
        );
        let senders_done = s
            .conn_sending
            .iter()
            .filter(|e| matches!(e, End::Done(_)))
            .count();
        assert!(senders_done > 0, "{name}: no sender closed");
        assert_eq!(
            senders_done + s.senders.len(),
            s.conn_sending.iter().filter(|e| **e != End::Closed).count(),
            "{name}: an end is open or done, never both"
        );
        if name != "dcqcn" {
            assert!(s.late_frames > 0, "{name}: nothing reached a finished end");
        }
    }
}

/// Prefetching flow records (`engine::prefetch`) is a hint to the caches:
/// forced on in runs too small to take it and off in one large enough,
/// each gives the results it gives the other way, table by table. The
/// runs cover a source's next flow drawn from a copy of its stream (many
/// flows per source, and QCN's limiters parking sources), UDP delivered at
/// the last bit, classes with PFC, and connections.
#[test]
fn prefetching_flow_records_changes_no_result() {
    let k4 = [
        ("params.k", "4"),
        ("params.half", "2"),
        ("duration", "\"2ms\""),
    ];
    let stop = [
        ("workloads[web].stop", "\"300us\""),
        ("workloads[incast].stop", "\"300us\""),
    ];
    let cases = [
        (
            "fat tree, PAUSE + QCN",
            shipped("bench/fat_tree_k8.toml", &k4),
        ),
        (
            "fat tree, lossless",
            shipped("bench/fat_tree_k8_lossless.toml", &k4),
        ),
        (
            "k = 8 fat tree, 200 us",
            shipped("bench/fat_tree_k8.toml", &[("duration", "\"200us\"")]),
        ),
        (
            "web search and incasts",
            shipped("scenarios/workloads/websearch_incast.toml", &stop),
        ),
    ];
    for (name, sc) in cases {
        let run = |prefetch: Option<bool>| {
            let mut s = Simulator::new(&sc, 1);
            if let Some(p) = prefetch {
                s.prefetch_flows = p;
            }
            (s.prefetch_flows, s.run(&sc, &RunOptions::default()))
        };
        let (default, plain) = run(None);
        let (other, flipped) = run(Some(!default));
        assert_ne!(default, other);
        let (plain, flipped) = (plain.unwrap(), flipped.unwrap());
        assert!(plain.summary.frame_hops > 0, "{name}");
        assert_same_results(&plain, &flipped, name);
    }
}

/// A switch counts the bytes each input holds only where something reads
/// them (a per-input buffer, per-input PAUSE): there the inputs hold
/// exactly what the output queues hold; elsewhere the counts stay zero
/// and a departure leaves the input port's lines alone.
#[test]
fn a_switch_counts_its_inputs_only_where_they_are_read() {
    use crate::net::port::Owner;
    for (model, counts) in [
        ("per_output", false),
        ("per_input", true),
        ("unlimited", false),
    ] {
        let text = star::overload("").replace(
            r#"buffer = "150KB""#,
            &format!("buffer = \"150KB\"\nbuffer_model = \"{model}\""),
        );
        let sc = load(&text, "inputs.toml", Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"));
        let mut s = Simulator::new(&sc, 1);
        s.start_sources();
        s.run_until(Time::from_us(500), None).unwrap();
        let sw = sc.nodes.iter().position(|n| n.name == "SW").unwrap();
        let ports: Vec<&Port> = s.ports.iter().filter(|p| p.node as usize == sw).collect();
        for p in &ports {
            assert!(
                matches!(p.owner, Owner::Switch { shared: false, counts_input } if counts_input == counts),
                "{model}: {:?}",
                p.owner
            );
        }
        let held: u64 = ports.iter().map(|p| p.occupancy).sum();
        let by_input: u64 = ports.iter().map(|p| p.input_occupancy).sum();
        assert!(held > 0, "{model}: the switch holds frames");
        assert_eq!(by_input, if counts { held } else { 0 }, "{model}");
    }
}

/// A shared buffer's short paths read the engine's copy of whether the
/// pool is calm (`Mmu::calm`) instead of the MMU. Lossy class 0 from H1
/// and H2 (1.6 times the line rate until 3 ms) fills the pool to about a
/// ninth free (`lossy_alpha` 8), where a lossless threshold of α =
/// 1/65536 is zero (below 64 KB free): not calm. Then the queue drains by
/// releases alone, while a lossless trickle of class 1 keeps taking the
/// short paths, each of which checks the copy against the MMU
/// (`reserve_changed`, in tests): without the refresh after an admission
/// into the pool, or after a release from it, the check fails.
#[test]
fn the_copy_of_a_pools_calm_follows_the_mmu() {
    let top = r#"
duration = "6ms"
[priorities]
classes = 2
[defaults.link]
rate = "10Gbps"
delay = "0.5us""#;
    let switch = r#"buffer = "120KB"
buffer_model = "shared"
pfc = { classes = [1] }
mmu = { alpha = 0.0000152587890625, lossy_alpha = 8 }"#;
    let rest = r#"
[[sources]]
host = "H1"
to = "H3"
load = 1.0
stop = "3ms"
[[sources]]
host = "H2"
to = "H3"
load = 0.6
stop = "3ms"
[[sources]]
host = "H2"
to = "H3"
load = 0.05
priority = 1
name = "H2 lossless""#;
    let text = star::two_to_one(top, switch, rest);
    let sc = load(&text, "calm.toml", Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"));
    let mut s = Simulator::new(&sc, 1);
    s.start_sources();
    let sw = sc.nodes.iter().position(|n| n.name == "SW").unwrap();
    s.run_until(Time::from_ms(2), None).unwrap();
    assert!(!s.pool_calm[sw], "the lossy class has filled the pool");
    let filled = s.calm_looks;
    s.run_until(Time::from_ms(6), None).unwrap();
    assert!(
        s.pool_calm[sw],
        "the pool drained after the lossy source stopped"
    );
    assert!(filled[0] > 0 && filled[1] > 0, "{filled:?}");
    assert!(s.calm_looks[1] > filled[1], "{:?}", s.calm_looks);
    assert!(s.violation.is_none(), "{:?}", s.violation);
}

/// PAUSE's per-frame test reads the watched port's crossings, not the
/// switch (`pause_check`). H1 and H2 at line rate through SW1 and H4 at
/// line rate, all into H3 behind SW2, with the switches in each mode and
/// in both: both switches send XOFF and XON, and at every frame in
/// between the tests' check finds that the crossings said yes whenever
/// the exact decision would have changed.
#[test]
fn pause_in_either_mode_is_tested_from_the_ports_crossings() {
    let pause = |mode: &str, xoff: &str, xon: &str| {
        format!(r#"pause = {{ mode = "{mode}", xoff = "{xoff}", xon = "{xon}" }}"#)
    };
    for (sw1, sw2) in [
        ("per_input", "global"),
        ("per_input", "per_input"),
        ("global", "global"),
    ] {
        let text = format!(
            r#"
duration = "3ms"
[defaults.link]
rate = "10Gbps"
delay = "0.5us"
[defaults.switch]
buffer = "150KB"
response_time = "1us"
[defaults.host]
response_time = "1us"
[[switches]]
name = "SW1"
{}
[[switches]]
name = "SW2"
{}
[[hosts]]
name = "H1"
[[hosts]]
name = "H2"
[[hosts]]
name = "H3"
[[hosts]]
name = "H4"
[[links]]
between = ["H1", "SW1"]
[[links]]
between = ["H2", "SW1"]
[[links]]
between = ["SW1", "SW2"]
[[links]]
between = ["H4", "SW2"]
[[links]]
between = ["SW2", "H3"]
[[sources]]
host = "H1"
to = "H3"
load = 1.0
[[sources]]
host = "H2"
to = "H3"
load = 1.0
[[sources]]
host = "H4"
to = "H3"
load = 1.0
"#,
            pause(sw1, "40KB", "30KB"),
            pause(sw2, "60KB", "50KB")
        );
        let sc = load(&text, "modes.toml", Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"));
        let mut s = Simulator::new(&sc, 1);
        s.start_sources();
        s.run_until(Time::from_ms(3), None).unwrap();
        for name in ["SW1", "SW2"] {
            let n = sc.nodes.iter().position(|n| n.name == name).unwrap();
            let (mut xoff, mut frames) = (0, 0);
            for p in s.ports.iter().filter(|p| p.node as usize == n) {
                xoff += p.pause.sender.xoff_sent;
                frames += p.pause.sender.frames_sent;
            }
            let case = format!("{sw1}/{sw2}: {name}: {xoff} XOFF of {frames}");
            assert!(xoff > 0 && frames > xoff, "{case}");
        }
    }
}
