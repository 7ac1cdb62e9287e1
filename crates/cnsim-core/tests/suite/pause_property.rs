//! Property: with PAUSE thresholds that leave room for the round trip, no
//! frame is ever dropped, whatever the topology and the load.

use crate::common::*;
use proptest::prelude::*;

const MTU: u64 = 1500;
const RATE_BPS: u64 = 10_000_000_000;
const BUFFER: u64 = 200_000;

#[derive(Debug, Clone)]
struct Case {
    n_switches: usize,
    /// (switch the host hangs off, destination host index, load)
    hosts: Vec<(usize, usize, f64)>,
    delay_ns: u64,
    latency_ns: u64,
    response_ns: u64,
    per_input: bool,
}

fn bytes_in(ns: u64) -> u64 {
    (ns * RATE_BPS).div_ceil(8 * 1_000_000_000)
}

impl Case {
    /// Bytes that may still arrive on one input after XOFF is decided: the
    /// PAUSE frame waits behind one frame, crosses the link, the upstream
    /// reacts and finishes its frame, and what is on the wire and in the
    /// switch pipeline lands.
    fn per_input_headroom(&self) -> u64 {
        bytes_in(2 * self.delay_ns + self.response_ns + self.latency_ns) + 2 * MTU + 64
    }

    fn toml(&self) -> String {
        let max_ports = (0..self.n_switches)
            .map(|s| self.hosts.iter().filter(|h| h.0 == s).count() + 2)
            .max()
            .unwrap() as u64;
        let (model, mode, headroom) = if self.per_input {
            ("per_input", "per_input", MTU + self.per_input_headroom())
        } else {
            // Every other input may keep feeding the congested output.
            (
                "per_output",
                "global",
                MTU + (max_ports - 1) * self.per_input_headroom(),
            )
        };
        let xoff = BUFFER - headroom;
        let mut t = format!(
            "duration = \"3ms\"\nbin = \"1ms\"\n[defaults.link]\ndelay = \"{}ns\"\n[defaults.switch]\nlatency = \"{}ns\"\nresponse_time = \"{}ns\"\n\
             buffer_model = \"{model}\"\nbuffer = \"{BUFFER}B\"\npause = {{ mode = \"{mode}\", xoff = \"{xoff}B\", xon = \"{}B\" }}\n\
             [defaults.host]\negress = \"150KB\"\nresponse_time = \"{}ns\"\n",
            self.delay_ns,
            self.latency_ns,
            self.response_ns,
            xoff - 2 * MTU,
            self.response_ns
        );
        for s in 0..self.n_switches {
            t += &format!("[[switches]]\nname = \"SW{s}\"\n");
        }
        for s in 1..self.n_switches {
            // A chain: the worst case for congestion spreading.
            t += &format!("[[links]]\nbetween = [\"SW{}\", \"SW{s}\"]\n", s - 1);
        }
        for (i, &(sw, dst, load)) in self.hosts.iter().enumerate() {
            t += &format!(
                "[[hosts]]\nname = \"H{i}\"\n[[links]]\nbetween = [\"H{i}\", \"SW{sw}\"]\n"
            );
            let dst = if dst == i {
                (dst + 1) % self.hosts.len()
            } else {
                dst
            };
            t += &format!("[[sources]]\nhost = \"H{i}\"\nto = \"H{dst}\"\nload = {load}\n");
        }
        t
    }
}

fn cases() -> impl Strategy<Value = Case> {
    (
        1usize..=3,
        0u64..2000,
        0u64..2000,
        0u64..3000,
        any::<bool>(),
    )
        .prop_flat_map(|(n_sw, d, l, r, per_input)| {
            prop::collection::vec((0..n_sw, 0usize..6, 0.3f64..1.0), 3..=6).prop_map(move |hosts| {
                let n = hosts.len();
                Case {
                    n_switches: n_sw,
                    hosts: hosts
                        .into_iter()
                        .map(|(s, dst, load)| (s, dst % n, (load * 100.0).round() / 100.0))
                        .collect(),
                    delay_ns: d,
                    latency_ns: l,
                    response_ns: r,
                    per_input,
                }
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn pause_with_headroom_never_drops(case in cases()) {
        let text = case.toml();
        let sc = load_str(&text);
        let r = run(&sc, Some(11));
        assert_conservation(&r);
        prop_assert_eq!(r.summary.totals.volume.dropped_frames, 0, "scenario:\n{}", text);
        for q in &r.summary.queues {
            if q.node_kind == "switch" && !case.per_input {
                prop_assert!(q.max_occupancy_bytes <= BUFFER);
            }
        }
    }
}

#[test]
fn the_generator_makes_congested_cases() {
    // Guard against a property that holds trivially: a hot chain case must
    // send PAUSE frames.
    let case = Case {
        n_switches: 3,
        hosts: vec![(0, 3, 0.9), (0, 3, 0.9), (1, 3, 0.9), (2, 0, 0.5)],
        delay_ns: 500,
        latency_ns: 1000,
        response_ns: 2000,
        per_input: false,
    };
    let r = run(&load_str(&case.toml()), Some(1));
    assert!(r.summary.totals.pause_frames_sent > 0);
    assert_eq!(r.summary.totals.volume.dropped_frames, 0);
    let tight = Case {
        per_input: true,
        ..case
    };
    let r = run(&load_str(&tight.toml()), Some(1));
    assert!(r.summary.totals.pause_frames_sent > 0);
    assert_eq!(r.summary.totals.volume.dropped_frames, 0);
}
