//! Property: on shared-buffer switches with the headroom cnsim computes,
//! PFC's lossless class never loses a frame, whatever the topology, the
//! loads and the mix of classes, while a lossy class on the same ports may.

use crate::common::*;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Case {
    n_switches: usize,
    /// (switch the host hangs off, destination host index, load, lossless)
    hosts: Vec<(usize, usize, f64, bool)>,
    delay_ns: u64,
    latency_ns: u64,
    response_ns: u64,
    buffer_kb: u64,
    /// Dynamic threshold factor of the lossless class, 1/2^shift.
    alpha_shift: u32,
}

impl Case {
    fn toml(&self) -> String {
        let mut t = format!(
            "duration = \"3ms\"\nbin = \"1ms\"\n[priorities]\nclasses = 2\nscheduler = \"dwrr\"\nweights = [1, 1]\n\
             [defaults.link]\ndelay = \"{}ns\"\n[defaults.switch]\nlatency = \"{}ns\"\nresponse_time = \"{}ns\"\n\
             buffer_model = \"shared\"\nbuffer = \"{}KB\"\npfc = {{ classes = [1] }}\nmmu = {{ alpha = {} }}\n\
             [defaults.host]\negress = \"150KB\"\nresponse_time = \"{}ns\"\n",
            self.delay_ns,
            self.latency_ns,
            self.response_ns,
            self.buffer_kb,
            1.0 / (1u64 << self.alpha_shift) as f64,
            self.response_ns
        );
        for s in 0..self.n_switches {
            t += &format!("[[switches]]\nname = \"SW{s}\"\n");
        }
        for s in 1..self.n_switches {
            t += &format!("[[links]]\nbetween = [\"SW{}\", \"SW{s}\"]\n", s - 1);
        }
        for (i, &(sw, dst, load, lossless)) in self.hosts.iter().enumerate() {
            t += &format!(
                "[[hosts]]\nname = \"H{i}\"\n[[links]]\nbetween = [\"H{i}\", \"SW{sw}\"]\n"
            );
            let dst = if dst == i {
                (dst + 1) % self.hosts.len()
            } else {
                dst
            };
            let class = u8::from(lossless);
            t += &format!(
                "[[sources]]\nhost = \"H{i}\"\nto = \"H{dst}\"\nload = {load}\npriority = {class}\n"
            );
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
        300u64..1500,
        0u32..5,
    )
        .prop_flat_map(|(n_sw, d, l, r, buffer_kb, alpha_shift)| {
            prop::collection::vec((0..n_sw, 0usize..8, 0.3f64..1.0, any::<bool>()), 3..=8).prop_map(
                move |hosts| {
                    let n = hosts.len();
                    Case {
                        n_switches: n_sw,
                        hosts: hosts
                            .into_iter()
                            .map(|(s, dst, load, ll)| {
                                (s, dst % n, (load * 100.0).round() / 100.0, ll)
                            })
                            .collect(),
                        delay_ns: d,
                        latency_ns: l,
                        response_ns: r,
                        buffer_kb,
                        alpha_shift,
                    }
                },
            )
        })
}

fn lossless_drops(case: &Case, r: &cnsim_core::RunResult) -> u64 {
    r.summary
        .flows
        .iter()
        .zip(&case.hosts)
        .filter(|(_, h)| h.3)
        .map(|(f, _)| f.counters.volume.dropped_frames)
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_lossless_class_never_drops(case in cases()) {
        let text = case.toml();
        let r = run(&load_str(&text), Some(7));
        assert_conservation(&r);
        prop_assert_eq!(lossless_drops(&case, &r), 0, "scenario:\n{}", text);
        for b in &r.summary.buffers {
            prop_assert_eq!(b.headroom_overflows, 0, "scenario:\n{}", text);
        }
    }
}

#[test]
fn the_generator_makes_cases_where_pfc_acts_and_the_lossy_class_drops() {
    // Guard against a property that holds trivially.
    let case = Case {
        n_switches: 2,
        hosts: vec![
            (0, 3, 0.9, true),
            (0, 3, 0.9, true),
            (1, 3, 0.9, false),
            (1, 0, 0.5, false),
            (0, 3, 0.9, false),
        ],
        delay_ns: 500,
        latency_ns: 1000,
        response_ns: 2000,
        buffer_kb: 400,
        alpha_shift: 3,
    };
    let r = run(&load_str(&case.toml()), Some(1));
    assert_eq!(lossless_drops(&case, &r), 0);
    assert!(r.summary.pfc.as_ref().expect("PFC").frames_sent > 0);
    assert!(
        r.summary.totals.volume.dropped_frames > 0,
        "the lossy class drops"
    );
}
