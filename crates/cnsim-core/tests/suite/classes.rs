//! Traffic classes, PFC and ECN marking in the running network: 802.3x
//! PAUSE is PFC's one-class case, a paused class stops while the others
//! flow, a lossless class loses nothing, PFC frames take the wire and the
//! link's delay, the scheduler shares the port between classes, and ECN
//! marks only ECN-capable frames, by its rule, changing nothing else.

use crate::common::{assert_stops_at_its_window_end, flow, load_str, queue, run, two_to_one};
use cnsim_core::results::{ClassSummary, PfcDirection, RunResult};

const TOP: &str = r#"
duration = "10ms"
[defaults.link]
rate = "10Gbps"
delay = "1us"
[defaults.host]
response_time = "2us"
"#;

/// H1 and H2 into H3 at line rate each; SW's inputs have 150 KB each.
fn two_to_one_with(top_extra: &str, switch_fc: &str, sources: &str) -> String {
    let switch = format!(
        "buffer = \"150KB\"\nbuffer_model = \"per_input\"\nresponse_time = \"2us\"\n{switch_fc}"
    );
    two_to_one(&format!("{TOP}{top_extra}"), &switch, sources)
}

const LINE_RATE_PAIR: &str = r#"
[[sources]]
host = "H1"
to = "H3"
load = 1.0
[[sources]]
host = "H2"
to = "H3"
load = 1.0
"#;

fn class_row<'a>(r: &'a RunResult, queue: &str, class: u8) -> &'a ClassSummary {
    r.summary
        .classes
        .iter()
        .find(|c| c.queue == queue && c.class == class)
        .unwrap_or_else(|| panic!("no class row {queue} / {class}"))
}

#[test]
fn pause_is_pfc_on_one_class_counter_for_counter() {
    let thresholds = r#"xoff = "100KB", xon = "80KB""#;
    let pause = run(
        &load_str(&two_to_one_with(
            "",
            &format!("pause = {{ mode = \"per_input\", {thresholds} }}"),
            LINE_RATE_PAIR,
        )),
        None,
    );
    let pfc = run(
        &load_str(&two_to_one_with(
            "",
            &format!("pfc = {{ classes = [0], {thresholds} }}"),
            LINE_RATE_PAIR,
        )),
        None,
    );
    assert!(pause.summary.totals.pause_frames_sent > 10, "PAUSE acted");
    for name in ["H1", "H2"] {
        let (a, b) = (
            flow(&pause, &format!("{name}->H3")),
            flow(&pfc, &format!("{name}->H3")),
        );
        assert_eq!(a.counters, b.counters, "flow {name}");
    }
    for name in ["SW->H1", "SW->H2", "SW->H3", "H1->SW", "H2->SW"] {
        let (a, b) = (queue(&pause, name), queue(&pfc, name));
        assert_eq!(
            (a.drops_frames, a.max_occupancy_bytes, a.tx_bytes),
            (b.drops_frames, b.max_occupancy_bytes, b.tx_bytes),
            "queue {name}"
        );
        let c = class_row(&pfc, name, 0);
        assert_eq!(c.pfc_xoff_sent, a.xoff_sent, "XOFFs sent by {name}");
        assert_eq!(c.paused_time_s, a.paused_time_s, "paused time of {name}");
    }
    let (a, b) = (pause.summary.events, pfc.summary.events);
    assert_eq!(a, b, "the same events, of other kinds");
    assert_ne!(pause.summary.fingerprint, pfc.summary.fingerprint);
    assert_eq!(pause.summary.totals.volume.dropped_frames, 0);
}

/// H1 in class 3 and H2 in class 0, both at line rate into H3.
const CLASS_3_AND_0: &str = r#"
[[sources]]
host = "H1"
to = "H3"
load = 1.0
priority = 3
[[sources]]
host = "H2"
to = "H3"
load = 1.0
"#;

/// H1 in class 3 and H2 in class 0 at line rate into H3, strict priority
/// on every port but those `switch` gives their own scheduler.
fn strict_except(switch: &str) -> RunResult {
    run(
        &load_str(&two_to_one_with(
            "[priorities]\nclasses = 4\n",
            switch,
            CLASS_3_AND_0,
        )),
        None,
    )
}

#[test]
fn a_port_with_its_own_scheduler_shares_by_its_weights() {
    let delivered = |r: &RunResult, f: &str| flow(r, f).counters.volume.delivered_bytes as f64;
    // Strict priority: class 3 takes SW->H3, class 0 gets nearly nothing.
    let strict = strict_except("");
    assert!(delivered(&strict, "H2->H3") < 0.01 * delivered(&strict, "H1->H3"));
    // DWRR 3:1 for classes 0 and 3 on SW->H3 alone.
    let own = strict_except(
        r#"schedulers = [{ ports = ["H3"], scheduler = "dwrr", weights = [3, 1, 1, 1] }]"#,
    );
    let ratio = delivered(&own, "H2->H3") / delivered(&own, "H1->H3");
    assert!(
        (ratio / 3.0 - 1.0).abs() < 0.01,
        "class 0 : class 3 = {ratio}"
    );
    // The same as the last, catch-all entry.
    let all = strict_except(
        r#"schedulers = [{ ports = ["H1"], scheduler = "strict" }, { scheduler = "dwrr", weights = [3, 1, 1, 1] }]"#,
    );
    assert_eq!(flow(&all, "H2->H3").counters, flow(&own, "H2->H3").counters);
    for (schedulers, message) in [
        (
            r#"[{ ports = ["H4"], scheduler = "strict" }]"#,
            "switches[0].schedulers[0].ports[0]: expected a node linked to 'SW' (H1, H2, H3), found 'H4'",
        ),
        (
            r#"[{ ports = ["H3"], scheduler = "strict" }, { ports = ["H3"], scheduler = "strict" }]"#,
            "switches[0].schedulers[1].ports[0]: the port toward 'H3' has a scheduler already",
        ),
        (
            r#"[{ scheduler = "strict" }, { ports = ["H3"], scheduler = "strict" }]"#,
            "switches[0].schedulers[0]: a scheduler without 'ports' applies to every other port: make it the last",
        ),
        (
            r#"[{ ports = ["H3"], scheduler = "dwrr", weights = [1, 1] }]"#,
            "switches[0].schedulers[0].weights: expected one weight per class (4), found 2",
        ),
        (
            r#"[{ ports = [], scheduler = "strict" }]"#,
            "switches[0].schedulers[0].ports: expected at least one neighbour",
        ),
    ] {
        let text = two_to_one_with(
            "[priorities]\nclasses = 4\n",
            &format!("schedulers = {schedulers}"),
            "",
        );
        let e = cnsim_core::scenario::load(&text, "t.toml", cnsim_core::scenario::Format::Toml, &[])
            .expect_err("refused")
            .to_string();
        assert!(e.contains(message), "{schedulers}: {e}");
    }
}

/// H1 sends in lossless class 3, H2 in lossy class 0, both at line rate
/// into H3, whose port serves the two classes by DWRR with equal weights.
fn lossless_beside_lossy() -> RunResult {
    let priorities = r#"
[priorities]
classes = 4
scheduler = "dwrr"
weights = [1, 1, 1, 1]
"#;
    run(
        &load_str(&two_to_one_with(
            priorities,
            r#"pfc = { classes = [3], xoff = "100KB", xon = "80KB" }"#,
            CLASS_3_AND_0,
        )),
        None,
    )
}

#[test]
fn a_paused_class_stops_while_the_other_flows_and_loses_nothing() {
    let r = lossless_beside_lossy();
    let (lossless, lossy) = (flow(&r, "H1->H3"), flow(&r, "H2->H3"));
    assert_eq!(
        lossless.counters.volume.dropped_frames, 0,
        "PFC class 3 is lossless"
    );
    assert!(
        lossy.counters.volume.dropped_frames > 1000,
        "class 0 overflows its input"
    );
    // DWRR with equal weights: each class gets half of SW->H3.
    let (a, b) = (
        lossless.counters.volume.delivered_bytes as f64,
        lossy.counters.volume.delivered_bytes as f64,
    );
    assert!((a / b - 1.0).abs() < 0.01, "delivered {a} and {b} bytes");
    // SW held H1's class 3, and only that: H1's transmitter paused class 3
    // about half the time (it offers twice its share); class 0 never.
    let held = class_row(&r, "H1->SW", 3);
    assert!(
        (0.3..0.7).contains(&held.paused_fraction),
        "class 3 paused {}",
        held.paused_fraction
    );
    assert_eq!(class_row(&r, "H2->SW", 0).paused_time_s, 0.0);
    assert!(class_row(&r, "SW->H1", 3).pfc_xoff_sent > 0);
    assert_eq!(class_row(&r, "SW->H2", 0).pfc_xoff_sent, 0);
    // The per-class rows add up to the queue's.
    let q = queue(&r, "SW->H3");
    let rows: Vec<_> = (0..4).map(|c| class_row(&r, "SW->H3", c)).collect();
    assert_eq!(rows.iter().map(|c| c.tx_bytes).sum::<u64>(), q.tx_bytes);
    assert_eq!(
        rows.iter().map(|c| c.drops_frames).sum::<u64>(),
        q.drops_frames
    );
}

#[test]
fn a_pfc_frame_takes_effect_a_link_delay_and_a_response_time_after_it_left() {
    let r = lossless_beside_lossy();
    let events = &r.pfc_events;
    assert!(!events.is_empty());
    // Link 0 is H1--SW: port 0 is H1's end, port 1 the switch's.
    let sw_to_h1 = 1;
    let sent: Vec<_> = events
        .iter()
        .filter(|e| e.direction == PfcDirection::Sent && e.port == sw_to_h1)
        .collect();
    let received: Vec<_> = events
        .iter()
        .filter(|e| e.direction == PfcDirection::Received)
        .collect();
    assert_eq!(sent.len(), received.len(), "every frame sent arrived");
    for (s, rcv) in sent.iter().zip(&received) {
        assert_eq!(rcv.port, 0, "H1's transmitter");
        assert_eq!((rcv.class, rcv.quanta), (s.class, s.quanta));
        // 1 us of cable and H1's 2 us response time.
        assert_eq!((rcv.time - s.time).0, 3_000_000, "ps");
    }
    assert_eq!(sent[0].quanta, 0xFFFF, "the first is an XOFF");
    assert!(sent.iter().any(|e| e.quanta == 0), "and an XON follows");
    assert_eq!(
        r.summary.pfc.as_ref().expect("PFC totals").events,
        events.len() as u64
    );
}

#[test]
fn strict_priority_serves_the_high_class_first() {
    let priorities = "[priorities]\nclasses = 2\n";
    let sources = r#"
[[sources]]
host = "H1"
to = "H3"
load = 0.6
priority = 1
[[sources]]
host = "H2"
to = "H3"
load = 0.6
"#;
    let r = run(&load_str(&two_to_one_with(priorities, "", sources)), None);
    let (high, low) = (flow(&r, "H1->H3"), flow(&r, "H2->H3"));
    assert_eq!(
        high.counters.volume.dropped_frames, 0,
        "class 1 never waits for long"
    );
    let high_rate = high.counters.volume.delivered_bytes as f64 * 8.0 / 0.01;
    let low_rate = low.counters.volume.delivered_bytes as f64 * 8.0 / 0.01;
    assert!(
        (5.7e9..6.1e9).contains(&high_rate),
        "class 1 at {high_rate}"
    );
    assert!(
        (3.8e9..4.2e9).contains(&low_rate),
        "class 0 takes the rest: {low_rate}"
    );
    assert!(class_row(&r, "SW->H3", 1).max_occupancy_bytes < 10_000);
}

#[test]
fn classes_that_do_not_exist_are_refused_with_their_location() {
    let err = |top: &str, switch: &str, sources: &str| {
        cnsim_core::scenario::load(
            &two_to_one_with(top, switch, sources),
            "t.toml",
            cnsim_core::scenario::Format::Toml,
            &[],
        )
        .expect_err("refused")
        .to_string()
    };
    let one = "[[sources]]\nhost = \"H1\"\nto = \"H3\"\nload = 0.5\npriority = 2\n";
    let e = err("", "", one);
    assert!(
        e.contains("sources[0].priority") && e.contains("found 2"),
        "{e}"
    );
    assert!(e.contains("[priorities] classes"), "{e}");
    let e = err(
        "[priorities]\nclasses = 2\n",
        r#"pfc = { classes = [3], xoff = "100KB", xon = "80KB" }"#,
        LINE_RATE_PAIR,
    );
    assert!(
        e.contains("switches[0].pfc.classes") && e.contains("found 3"),
        "{e}"
    );
    let e = err(
        "",
        "pause = { xoff = \"100KB\", xon = \"80KB\", mode = \"per_input\" }\npfc = { classes = [0], xoff = \"100KB\", xon = \"80KB\" }",
        LINE_RATE_PAIR,
    );
    assert!(e.contains("PAUSE or PFC, not both"), "{e}");
    let e = err("[priorities]\nclasses = 9\n", "", LINE_RATE_PAIR);
    assert!(
        e.contains("priorities.classes") && e.contains("1 to 8"),
        "{e}"
    );
    let e = err(
        "[priorities]\nclasses = 2\nscheduler = \"dwrr\"\nweights = [1]\n",
        "",
        LINE_RATE_PAIR,
    );
    assert!(e.contains("one weight per class (2), found 1"), "{e}");
    // DWRR keeps its deficits in 32 bits: a quantum of weight x 1,500 B
    // (the largest frame here) stays below 4 GiB.
    let e = err(
        "[priorities]\nclasses = 2\nscheduler = \"dwrr\"\nweights = [1, 3000000]\n",
        "",
        LINE_RATE_PAIR,
    );
    assert!(
        e.contains("priorities.weights[1]")
            && e.contains("at most 2863267")
            && e.contains("found 3000000"),
        "{e}"
    );
}

/// H1 (ECN-capable or not) and H2 (never) into H3, SW->H3 marking with
/// `ecn`; `load` each.
fn marking(ecn: &str, h1_ect: bool, load: f64) -> RunResult {
    let sources = format!(
        "[[sources]]\nhost = \"H1\"\nto = \"H3\"\nload = {load}\necn = {h1_ect}\n\
         [[sources]]\nhost = \"H2\"\nto = \"H3\"\nload = {load}\n"
    );
    let switch = if ecn.is_empty() {
        String::new()
    } else {
        format!("ecn = {{ {ecn} }}")
    };
    let text = two_to_one(TOP, &format!("buffer = \"150KB\"\n{switch}"), &sources);
    run(&load_str(&text), None)
}

const STEP: &str = r#"rule = "step", k = "30KB""#;

#[test]
fn marking_alone_changes_nothing_else_and_leaves_not_ect_frames_alone() {
    let plain = marking("", true, 0.8);
    let marked = marking(STEP, true, 0.8);
    let untouched = marking(STEP, false, 0.8);
    for r in [&marked, &untouched] {
        for name in ["H1->H3", "H2->H3"] {
            assert_eq!(
                flow(r, name).counters,
                flow(&plain, name).counters,
                "{name}"
            );
        }
        assert_eq!(
            queue(r, "SW->H3").drops_frames,
            queue(&plain, "SW->H3").drops_frames
        );
    }
    assert!(
        queue(&plain, "SW->H3").max_occupancy_bytes > 100_000,
        "the queue fills"
    );
    assert_eq!(
        class_row(&untouched, "SW->H3", 0).ecn_marked,
        0,
        "no ECT frame"
    );
    let marks = class_row(&marked, "SW->H3", 0).ecn_marked;
    // The queue sits near the 150 KB buffer, above K, for most of the run:
    // nearly every one of H1's frames that got in is marked.
    let h1_frames = flow(&marked, "H1->H3").counters.volume.delivered_frames;
    assert!(
        marks as f64 > 0.9 * h1_frames as f64 && marks <= h1_frames + 200,
        "{marks} marks, {h1_frames} frames of H1 delivered"
    );
}

#[test]
fn a_port_takes_the_parameters_of_its_link_rate() {
    // SW->H3 runs at 10 Gb/s: K of 1 MB there, above what the 150 KB
    // buffer can hold, marks nothing; parameters for another rate leave
    // the port on the base K of 30 KB, which marks as without them.
    let of_10g = marking(
        r#"rule = "step", k = "30KB", rates = [{ rate = "10Gbps", k = "1MB" }]"#,
        true,
        0.8,
    );
    assert_eq!(class_row(&of_10g, "SW->H3", 0).ecn_marked, 0);
    let of_40g = marking(
        r#"rule = "step", k = "30KB", rates = [{ rate = "40Gbps", k = "1MB" }]"#,
        true,
        0.8,
    );
    let base = marking(STEP, true, 0.8);
    assert!(class_row(&base, "SW->H3", 0).ecn_marked > 0);
    assert_eq!(
        class_row(&of_40g, "SW->H3", 0).ecn_marked,
        class_row(&base, "SW->H3", 0).ecn_marked
    );
    for (ecn, message) in [
        (
            r#"rule = "step", k = "30KB", rates = [{ rate = "10Gbps", kmin = "1KB" }]"#,
            "switches[0].ecn.rates[0].kmin: not a parameter of this rule",
        ),
        (
            r#"rule = "step", k = "30KB", rates = [{ k = "1KB" }]"#,
            "switches[0].ecn.rates[0]: missing field 'rate'",
        ),
        (
            r#"rule = "step", k = "3KB", rates = [{ rate = "10Gbps", k = "1KB" }, { rate = "10Gbps", k = "2KB" }]"#,
            "switches[0].ecn.rates[1].rate: 10Gbps is listed twice",
        ),
    ] {
        let e = cnsim_core::scenario::load(
            &two_to_one(TOP, &format!("ecn = {{ {ecn} }}"), ""),
            "t.toml",
            cnsim_core::scenario::Format::Toml,
            &[],
        )
        .expect_err("refused")
        .to_string();
        assert!(e.contains(message), "{ecn}: {e}");
    }
}

#[test]
fn a_queue_below_the_threshold_marks_nothing() {
    let r = marking(STEP, true, 0.3);
    assert!(queue(&r, "SW->H3").max_occupancy_bytes <= 30_000);
    assert_eq!(class_row(&r, "SW->H3", 0).ecn_marked, 0);
}

#[test]
fn red_above_kmax_marks_everything_and_its_draws_are_the_switch_s_own() {
    // The queue stays above Kmax once full: every ECT frame at dequeue.
    let red = r#"rule = "red", kmin = "5KB", kmax = "20KB", pmax = 0.2, at = "dequeue""#;
    let a = marking(red, true, 0.8);
    let b = marking(red, true, 0.8);
    assert_eq!(a.summary.fingerprint, b.summary.fingerprint);
    let marks = class_row(&a, "SW->H3", 0).ecn_marked;
    let h1 = flow(&a, "H1->H3").counters.volume.delivered_frames;
    assert!(marks as f64 > 0.9 * h1 as f64, "{marks} of {h1}");
    let e = cnsim_core::scenario::load(
        &two_to_one(
            TOP,
            "ecn = { rule = \"red\", kmin = \"50KB\", kmax = \"20KB\", pmax = 0.1 }",
            "",
        ),
        "t.toml",
        cnsim_core::scenario::Format::Toml,
        &[],
    )
    .expect_err("refused")
    .to_string();
    assert!(
        e.contains("switches[0].ecn.kmax") && e.contains("at least kmin"),
        "{e}"
    );
}

/// SW with a shared buffer (`mmu` extra keys) between H1, H2 and H3 on
/// 100 Gb/s links of 100 m (0.5 us); hosts respond to PFC in 1 us.
fn shared_switch(buffer: &str, switch_extra: &str, sources: &str) -> String {
    let top = r#"
duration = "2ms"
[defaults.link]
rate = "100Gbps"
delay = "0.5us"
[defaults.host]
response_time = "1us"
"#;
    let switch = format!("buffer_model = \"shared\"\nbuffer = \"{buffer}\"\n{switch_extra}");
    two_to_one(top, &switch, sources)
}

const JUMBO: &str = "[[sources]]\nhost = \"H1\"\nto = \"H3\"\nload = 0.5\nframe = \"9000B\"\n";

#[test]
fn headroom_is_computed_per_port_from_the_link_and_a_short_one_is_refused() {
    let sc = load_str(&shared_switch("4MB", "pfc = { classes = [0] }", JUMBO));
    let cnsim_core::net::topology::NodeKind::Switch(sw) = &sc.nodes[0].kind else {
        panic!("SW first")
    };
    let shared = sw.shared.as_ref().expect("a shared buffer");
    // 2 × 0.5 us × 100 Gb/s = 12,500 B of cable, 2 × 9,000 B of frames,
    // the 64 B XOFF, 1 us × 100 Gb/s = 12,500 B of response, and the
    // 9,000 B frame admitted into headroom before XOFF is decided.
    let expected = 12_500 + 18_000 + 64 + 12_500 + 9_000;
    assert_eq!(
        shared.headroom.iter().map(|h| h.0).collect::<Vec<_>>(),
        vec![expected; 3]
    );
    assert_eq!(shared.reserve.0, 9_000, "one largest frame by default");
    let e = cnsim_core::scenario::load(
        &shared_switch(
            "4MB",
            "pfc = { classes = [0] }\nmmu = { headroom = \"40KB\" }",
            JUMBO,
        ),
        "t.toml",
        cnsim_core::scenario::Format::Toml,
        &[],
    )
    .expect_err("refused")
    .to_string();
    assert!(
        e.contains("switches[0].mmu.headroom")
            && e.contains("below the 52064 B")
            && e.contains("+ 9000 B (the frame that finds the threshold passed)")
            && e.contains("toward 'H1'"),
        "{e}"
    );
    let e = cnsim_core::scenario::load(
        &shared_switch("100KB", "pfc = { classes = [0] }", JUMBO),
        "t.toml",
        cnsim_core::scenario::Format::Toml,
        &[],
    )
    .expect_err("refused")
    .to_string();
    assert!(
        e.contains("switches[0].buffer") && e.contains("exceed the buffer"),
        "{e}"
    );
}

#[test]
fn a_lossy_queue_facing_a_dynamic_threshold_settles_at_half_the_pool() {
    // Lossy α = 1: a single congested queue may take α/(1+α) of the pool.
    let r = run(&load_str(&shared_switch("300KB", "", LINE_RATE_PAIR)), None);
    let b = &r.summary.buffers[0];
    assert_eq!(
        b.shared_pool_bytes,
        300_000 - 3 * 1500,
        "three reserves of one frame"
    );
    let q = queue(&r, "SW->H3");
    let half = b.shared_pool_bytes / 2;
    assert!(q.drops_frames > 1000);
    assert!(
        (half - 1500..=half + 3000).contains(&q.max_occupancy_bytes),
        "{} against half the pool, {half}",
        q.max_occupancy_bytes
    );
}

#[test]
fn a_1000_to_1_incast_into_a_shared_buffer_loses_nothing_and_spares_the_lossy_class() {
    let r = run(
        &crate::common::load_file("scenarios/pfc/incast_1000.toml", &[]),
        None,
    );
    let lossless_drops: u64 = r
        .summary
        .flows
        .iter()
        .filter(|f| f.name != "lossy")
        .map(|f| f.counters.volume.dropped_frames)
        .sum();
    assert_eq!(lossless_drops, 0);
    let b = &r.summary.buffers[0];
    assert_eq!(b.headroom_overflows, 0);
    assert!(
        b.max_headroom_used_bytes > 0,
        "the incast reached into headroom"
    );
    assert!(r.summary.pfc.as_ref().expect("PFC").frames_sent > 1000);
    // H1001's link stays busy, and the lossy flow, offering 4 Gb/s of its
    // 5 Gb/s DWRR share, loses nothing and is delayed by one queue at most.
    let port = queue(&r, "SW->R");
    let gbps = port.tx_bytes as f64 * 8.0 / 5e-3 / 1e9;
    assert!(gbps > 9.9, "{gbps} Gb/s");
    let lossy = flow(&r, "lossy").counters.volume;
    assert_eq!(lossy.dropped_frames, 0);
    assert!(
        lossy.offered_bytes - lossy.delivered_bytes <= 3000,
        "{lossy:?}"
    );
    assert!(class_row(&r, "SW->R", 0).max_occupancy_bytes <= 15_000);
}

#[test]
fn a_pfc_ring_deadlocks_in_its_lossless_class_and_not_in_a_lossy_one() {
    deadlocks_in_class_3_only(
        "scenarios/pfc/deadlock_ring.toml",
        &["R1->R2", "R2->R3", "R3->R4", "R4->R5", "R5->R1"],
    );
}

#[test]
fn a_clos_with_bounce_routes_deadlocks_in_its_lossless_class_and_not_in_a_lossy_one() {
    deadlocks_in_class_3_only(
        "scenarios/pfc/deadlock_clos_bounce.toml",
        &["L1->S1", "S1->L2", "L2->S2", "S2->L1"],
    );
}

/// The scenario in `file` deadlocks on the cycle `cycle`, all in class 3;
/// in class 0 (no PFC) it drops and flows; stop_on_deadlock stops it.
fn deadlocks_in_class_3_only(file: &str, cycle: &[&str]) {
    let r = run(&crate::common::load_file(file, &[]), None);
    let w = r.summary.watchdog.as_ref().expect("the watchdog is on");
    let [d] = &w.deadlocks[..] else {
        panic!("one deadlock, found {:?}", w.deadlocks)
    };
    assert_eq!(d.queues, cycle);
    assert_eq!(d.classes, Some(vec![3u8; cycle.len()]));
    assert!(w.long_pauses.iter().all(|l| l.class == Some(3)));
    assert_eq!(
        r.summary.totals.volume.dropped_frames, 0,
        "lossless, and stuck"
    );
    // The same traffic in class 0, which has no PFC: drops, no deadlock.
    let lossy = run(
        &crate::common::load_file(file, &[("defaults.source.priority", "0")]),
        None,
    );
    let w = lossy.summary.watchdog.as_ref().expect("the watchdog is on");
    assert!(w.deadlocks.is_empty() && w.long_pauses.is_empty());
    assert!(lossy.summary.totals.volume.dropped_frames > 0);
    // The deadlocked run delivers only before its deadlock, in the first
    // 2 ms of 50.
    assert!(
        lossy.summary.totals.volume.delivered_frames
            > 10 * r.summary.totals.volume.delivered_frames
    );
    // Stopping at the deadlock marks the result partial, with the reason.
    let stopped = run(
        &crate::common::load_file(file, &[("watchdog.stop_on_deadlock", "true")]),
        None,
    );
    let p = stopped.summary.partial.as_ref().expect("stopped early");
    assert_eq!(
        p.reason,
        format!(
            "PFC deadlock: a cycle of {} paused (port, class) pairs",
            cycle.len()
        )
    );
    // The stop is reached when the watchdog notices, as the full run's
    // report says, and takes effect at the end of that window.
    assert_eq!(p.reached_s, d.noticed_s);
    assert!(stopped.summary.window_s.is_some());
    assert_stops_at_its_window_end(&stopped);
}
