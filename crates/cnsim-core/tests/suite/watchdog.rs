//! The PAUSE watchdog and stopping a run early: the shipped ring deadlocks
//! and is caught; a congested tree under PAUSE is not a deadlock; limits
//! stop a run with its result marked partial.

use crate::common::*;
use cnsim_core::RunOptions;

const RING: &str = "scenarios/deadlock/ring.toml";

#[test]
fn the_ring_deadlock_is_detected_with_its_cycle() {
    let r = run(&load_file(RING, &[]), None);
    let w = r
        .summary
        .watchdog
        .as_ref()
        .expect("the watchdog is on by default");
    assert_eq!(w.threshold_s, 0.010);
    assert_eq!(w.deadlocks.len(), 1, "{:?}", w.deadlocks);
    let d = &w.deadlocks[0];
    assert_eq!(d.queues, ["R1->R2", "R2->R3", "R3->R4", "R4->R5", "R5->R1"]);
    // Noticed at the first refresh of a pause older than 10 ms.
    assert!((0.010..0.0145).contains(&d.noticed_s), "{}", d.noticed_s);
    // Nothing crosses the ring after the first milliseconds: deadlocked.
    let n = r.series.n_bins;
    let ring = r
        .summary
        .queues
        .iter()
        .position(|q| q.name == "R1->R2")
        .unwrap();
    let late: u64 = r.series.queue_tx_bytes[ring * n + 2..(ring + 1) * n]
        .iter()
        .sum();
    assert_eq!(late, 0);
    // The run went on to its end.
    assert!(r.summary.partial.is_none());
}

#[test]
fn a_deadlock_can_stop_the_run_with_a_partial_result() {
    let sc = load_file(RING, &[("watchdog.stop_on_deadlock", "true")]);
    let r = run(&sc, None);
    let p = r.summary.partial.as_ref().expect("stopped early");
    assert!(p.reason.contains("PAUSE deadlock"), "{}", p.reason);
    let d = &r.summary.watchdog.as_ref().unwrap().deadlocks[0];
    assert_eq!(p.reached_s, d.noticed_s);
    assert!(r.summary.window_s.is_some());
    assert_stops_at_its_window_end(&r);
}

#[test]
fn congestion_under_pause_is_not_a_deadlock() {
    // Study A with PAUSE: the hot downlink holds its inputs on and off.
    let r = run(&load_file("scenarios/baseline/pause.toml", &[]), None);
    let w = r.summary.watchdog.as_ref().unwrap();
    assert!(w.deadlocks.is_empty(), "{:?}", w.deadlocks);
    assert!(r.summary.partial.is_none());
}

#[test]
fn an_event_limit_stops_the_run_at_the_end_of_that_window() {
    let sc = load_file("scenarios/baseline/no_cm.toml", &[]);
    let opts = RunOptions {
        max_events: Some(50_000),
        ..RunOptions::default()
    };
    let r = cnsim_core::run(&sc, &opts).unwrap();
    let p = r.summary.partial.as_ref().expect("partial");
    assert!(p.reason.contains("max_events"));
    assert!(p.at_s > 0.0 && p.at_s < 0.1);
    // The run finishes the window of its 50,000th event (1.5 µs: the
    // 0.5 µs links between study A's switches plus the 1 µs latency, and
    // PAUSE response, of the switch at their far end): the limit counts
    // as reached at that window's end, where a split run sees it.
    assert_eq!(r.summary.window_s, Some(1.5e-6));
    assert_eq!(p.reached_s, p.at_s);
    let ps = (p.at_s * 1e12).round() as u64;
    assert_eq!(ps % 1_500_000, 0, "{p:?}");
    assert!(r.summary.events >= 50_000, "{}", r.summary.events);
    // The same prefix of the same run: the same result, twice, and with
    // the limit at the last event of that window.
    let again = cnsim_core::run(&sc, &opts).unwrap();
    assert_eq!(again.summary.fingerprint, r.summary.fingerprint);
    let last = RunOptions {
        max_events: Some(r.summary.events),
        ..RunOptions::default()
    };
    let at_last = cnsim_core::run(&sc, &last).unwrap();
    assert_eq!(at_last.summary.fingerprint, r.summary.fingerprint);
    assert_eq!(at_last.summary.events, r.summary.events);
    let full = run(&sc, None);
    assert_ne!(full.summary.fingerprint, r.summary.fingerprint);
    assert!(full.summary.partial.is_none());
}

#[test]
fn a_run_too_large_for_the_machine_is_refused_up_front() {
    // 400 hosts all-to-all (159,600 flows) with 1 µs bins over 1 s: some
    // 2.6 TB of per-flow series.
    let sc = load_str(
        r#"
duration = "1s"
bin = "1us"
[params]
n = 400
[[switches]]
name = "SW"
[[hosts]]
name = "H{i}"
repeat = { i = "n" }
[[links]]
between = ["H{i}", "SW"]
rate = "10Gbps"
repeat = { i = "n" }
[[sources]]
host = "H{i}"
to = "*"
load = 0.1
repeat = { i = "n" }
"#,
    );
    let estimate = cnsim_core::scenario::budget::memory_estimate(&sc);
    assert!(estimate > 2_000_000_000_000, "{estimate}");
    if cnsim_core::scenario::budget::available_memory().is_none() {
        return; // not Linux: nothing to compare with (and the run would try)
    }
    let started = std::time::Instant::now();
    let err = cnsim_core::run(&sc, &RunOptions::default()).expect_err("refused");
    let msg = err.to_string();
    assert!(msg.contains("159600 flows") && msg.contains("TB"), "{msg}");
    assert!(msg.contains("wider 'bin'"), "{msg}");
    assert!(started.elapsed().as_secs() < 5, "refused before allocating");
    // The estimate is also what `cnsim validate --json` shows.
    assert_eq!(sc.describe()["memory_estimate_bytes"], estimate);
}
