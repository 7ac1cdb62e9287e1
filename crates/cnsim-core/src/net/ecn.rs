//! ECN marking at a switch's egress queue: the codepoint a frame carries
//! (RFC 3168) and the rule that decides, from the queue's instantaneous
//! length, whether to mark it.

use crate::engine::rng::{unit_open0, Stream};
use crate::units::{Bytes, Rate};

/// The two ECN bits of the IP header, with their RFC 3168 values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// The transport does not understand ECN: never marked.
    #[default]
    NotEct = 0b00,
    Ect1 = 0b01,
    Ect0 = 0b10,
    /// Congestion experienced.
    Ce = 0b11,
}

impl Ecn {
    /// What a congested switch does to the frame: an ECN-capable codepoint
    /// becomes CE; Not-ECT is left alone (the switch would drop such a
    /// frame instead, if it drops at all).
    #[must_use]
    pub const fn mark(self) -> Ecn {
        match self {
            Ecn::NotEct => Ecn::NotEct,
            Ecn::Ect0 | Ecn::Ect1 | Ecn::Ce => Ecn::Ce,
        }
    }

    /// The codepoint of these two bits.
    #[inline]
    pub const fn from_bits(bits: u8) -> Ecn {
        match bits & 3 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    #[inline]
    pub const fn bits(self) -> u8 {
        self as u8
    }

    pub const fn is_ect(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }

    pub const fn is_ce(self) -> bool {
        matches!(self, Ecn::Ce)
    }
}

/// When a frame's queue is compared with the marking rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkAt {
    /// As the frame joins the queue, on the bytes ahead of it (the
    /// classic RED and DCTCP placement).
    Enqueue,
    /// As the frame leaves, on the bytes behind it: the mark reaches the
    /// receiver a queueing delay sooner (many ASICs do this).
    Dequeue,
}

/// The marking rule of an egress queue, on its instantaneous length.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnRule {
    /// RED-like, as DCQCN's switches: probability 0 up to `kmin`, rising
    /// linearly to `pmax` at `kmax`, 1 above `kmax`.
    Red { kmin: Bytes, kmax: Bytes, pmax: f64 },
    /// DCTCP: mark every frame while the queue exceeds `k` (strictly: a
    /// queue of exactly `k` bytes is not marked, as `q > K` in the DCTCP
    /// paper and RFC 8257).
    Step { k: Bytes },
}

/// An egress queue's ECN marking: the rule and where it is applied.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct EcnSpec {
    pub rule: EcnRule,
    pub at: MarkAt,
}

/// A switch's ECN marking (`ecn` of a switch): the rule, on the output
/// queues of these classes, with other parameters on ports of some link
/// rates (as DCQCN deployments set Kmin/Kmax per port speed).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SwitchEcn {
    pub spec: EcnSpec,
    /// Bit n: class n's queues mark.
    pub classes: u8,
    /// The rule of ports whose link has this rate, instead of `spec.rule`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_rate: Vec<(Rate, EcnRule)>,
}

impl SwitchEcn {
    /// The rule of a port whose link runs at `rate`.
    pub fn rule_at(&self, rate: Rate) -> EcnRule {
        self.by_rate
            .iter()
            .find(|(r, _)| *r == rate)
            .map_or(self.spec.rule, |&(_, rule)| rule)
    }
}

impl EcnRule {
    /// Why the parameters make no sense, if they do not.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            EcnRule::Red { kmin, kmax, pmax } => {
                if kmin > kmax {
                    return Err(format!("kmin ({kmin}) is above kmax ({kmax})"));
                }
                if !(0.0..=1.0).contains(&pmax) {
                    return Err(format!("pmax ({pmax}) is not a probability in [0, 1]"));
                }
                Ok(())
            }
            EcnRule::Step { .. } => Ok(()),
        }
    }

    /// The largest queue at which the rule never marks (RED's Kmin, the
    /// step's K): a queue this short settles the decision with no draw.
    #[inline]
    pub fn quiet_up_to(&self) -> Bytes {
        match *self {
            EcnRule::Red { kmin, .. } => kmin,
            EcnRule::Step { k } => k,
        }
    }

    /// The probability of marking a frame when the queue holds `queue`
    /// bytes.
    #[inline]
    pub fn mark_probability(&self, queue: Bytes) -> f64 {
        match *self {
            EcnRule::Red { kmin, kmax, pmax } => {
                if queue <= kmin {
                    0.0
                } else if queue <= kmax {
                    // The ratio first, so that Kmax gives exactly pmax.
                    pmax * ((queue.0 - kmin.0) as f64 / (kmax.0 - kmin.0) as f64)
                } else {
                    1.0
                }
            }
            EcnRule::Step { k } => {
                if queue > k {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }

    /// Whether to mark a frame when the queue holds `queue` bytes. A draw
    /// is taken from `rng` only for a probability strictly between 0 and 1
    /// (the ramp of RED), so a step rule never moves its stream.
    pub fn should_mark(&self, queue: Bytes, rng: &mut Stream) -> bool {
        self.should_mark_drawing(queue, || unit_open0(rng))
    }

    /// `should_mark` with the draw left to `uniform` (uniform in (0, 1]),
    /// called only on RED's ramp: the engine reaches its switch's stream
    /// only then.
    #[inline]
    pub fn should_mark_drawing(&self, queue: Bytes, uniform: impl FnOnce() -> f64) -> bool {
        let p = self.mark_probability(queue);
        if p <= 0.0 {
            false
        } else if p >= 1.0 {
            true
        } else {
            // u is uniform in (0, 1]: P(u <= p) = p, to 2^-53.
            uniform() <= p
        }
    }
}

/// One egress port's marking, resolved from its switch's `SwitchEcn`: the
/// classes whose queues mark (bit n: class n), where, and the rule for the
/// port's link rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PortMarking {
    pub classes: u8,
    pub at: MarkAt,
    pub rule: EcnRule,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;
    use rand::RngExt;

    fn red(kmin: u64, kmax: u64, pmax: f64) -> EcnRule {
        EcnRule::Red {
            kmin: Bytes(kmin),
            kmax: Bytes(kmax),
            pmax,
        }
    }

    #[test]
    fn red_is_zero_to_kmin_linear_to_pmax_at_kmax_and_one_above() {
        // DCQCN's 5 KB / 200 KB / 1 %, with Kmax moved to 205 KB so that
        // the middle is a round number.
        let e = red(5000, 205_000, 0.01);
        assert!(e.validate().is_ok());
        for q in [0, 1, 4999, 5000] {
            assert_eq!(e.mark_probability(Bytes(q)), 0.0, "{q}");
        }
        assert_eq!(e.mark_probability(Bytes(105_000)), 0.005);
        assert_eq!(e.mark_probability(Bytes(55_000)), 0.0025);
        assert_eq!(e.mark_probability(Bytes(205_000)), 0.01);
        assert_eq!(e.mark_probability(Bytes(205_001)), 1.0);
        assert_eq!(e.mark_probability(Bytes(10_000_000)), 1.0);
        // Monotone along the ramp.
        let mut last = 0.0;
        for q in (5000..=205_000).step_by(1000) {
            let p = e.mark_probability(Bytes(q));
            assert!(p >= last, "{q}");
            last = p;
        }
    }

    #[test]
    fn red_with_equal_thresholds_is_a_step_and_bad_parameters_are_refused() {
        let e = red(10_000, 10_000, 0.5);
        assert_eq!(e.mark_probability(Bytes(10_000)), 0.0);
        assert_eq!(e.mark_probability(Bytes(10_001)), 1.0);
        assert!(red(2, 1, 0.5).validate().is_err());
        assert!(red(1, 2, 1.5).validate().is_err());
        assert!(red(1, 2, f64::NAN).validate().is_err());
    }

    #[test]
    fn the_step_marks_strictly_above_k_and_draws_nothing() {
        let e = EcnRule::Step { k: Bytes(97_500) };
        let mut rng = stream(5, 0);
        let untouched = rng.clone();
        assert!(!e.should_mark(Bytes(0), &mut rng));
        assert!(!e.should_mark(Bytes(97_500), &mut rng));
        assert!(e.should_mark(Bytes(97_501), &mut rng));
        assert_eq!(rng.random::<u64>(), untouched.clone().random::<u64>());
    }

    /// The quiet level is the largest queue the rule never marks at, so a
    /// port may skip the rule below it without changing a mark or a draw.
    #[test]
    fn no_rule_marks_at_or_below_its_quiet_level_and_each_can_just_above() {
        for e in [
            red(5000, 200_000, 0.01),
            red(10_000, 10_000, 0.5),
            red(0, 1, 1.0),
            EcnRule::Step { k: Bytes(97_500) },
            EcnRule::Step { k: Bytes(0) },
        ] {
            let quiet = e.quiet_up_to().0;
            for q in [0, quiet / 2, quiet] {
                assert_eq!(e.mark_probability(Bytes(q)), 0.0, "{e:?} at {q}");
            }
            assert!(e.mark_probability(Bytes(quiet + 1)) > 0.0, "{e:?}");
        }
    }

    #[test]
    fn marking_turns_ect_into_ce_and_leaves_not_ect_alone() {
        assert_eq!(Ecn::NotEct.mark(), Ecn::NotEct);
        assert_eq!(Ecn::Ect0.mark(), Ecn::Ce);
        assert_eq!(Ecn::Ect1.mark(), Ecn::Ce);
        assert_eq!(Ecn::Ce.mark(), Ecn::Ce);
        assert_eq!(
            [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce].map(|e| e as u8),
            [0, 1, 2, 3]
        );
        assert!(!Ecn::NotEct.is_ect() && Ecn::Ect0.is_ect() && Ecn::Ce.is_ce());
    }

    #[test]
    fn the_marked_fraction_matches_the_probability() {
        let e = red(0, 100_000, 1.0);
        let mut rng = stream(42, 7);
        let n = 400_000;
        for q in [10_000, 25_000, 50_000, 90_000] {
            let p = e.mark_probability(Bytes(q));
            let marked = (0..n).filter(|_| e.should_mark(Bytes(q), &mut rng)).count();
            let f = marked as f64 / n as f64;
            // Four standard deviations of a binomial fraction.
            let sd = (p * (1.0 - p) / n as f64).sqrt();
            assert!((f - p).abs() < 4.0 * sd, "q {q}: {f} vs {p} (sd {sd})");
        }
    }
}
