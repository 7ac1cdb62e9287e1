//! Backward Congestion Notification (BCN) and its variants BCN-MAX,
//! BCN(0,0) and drift: the congestion point's sampler and feedback, and the
//! reaction point's rate arithmetic (docs/model.md, "BCN"). The scheme's
//! state in a running network is `bcn_scheme::Bcn`.
//!
//! Feedback is computed in 64-byte pages because the gains are defined per
//! page: with Qeq = 375 pages and W = 2 the largest |Fb| is 1875 pages, and
//! Gd = 2.6e-4 then halves a rate, Gi = 0.53 adds about C/10.

use crate::engine::rng::{unit_open0, Stream};
use crate::units::{Bytes, Rate, Time};
use serde::Serialize;

/// Bytes per feedback page.
pub const PAGE_BYTES: u64 = 64;

/// How a congestion point picks the frames it samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Sampling {
    /// One frame every `mean` bytes received, the interval drawn uniformly
    /// in `mean ± jitter` after each sample.
    Interval { mean: Bytes, jitter: Bytes },
    /// Each frame independently with this probability.
    Probability(f64),
}

/// BCN(0,0): the "stop" message sent above the severe-congestion threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StopParams {
    /// Queue length at or above which a sample yields BCN(0,0).
    pub threshold: Bytes,
    /// The reaction point stops for a time drawn uniformly in [0, tmax].
    pub tmax: Time,
    /// ... and then restarts at this rate.
    pub restart_rate: Rate,
}

/// Self-increase of an installed rate limiter: `rate` every `interval`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DriftParams {
    pub rate: Rate,
    pub interval: Time,
}

/// Every BCN parameter, resolved (units converted, defaults applied).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BcnParams {
    /// Equilibrium queue length, pages.
    pub qeq_pages: i64,
    /// Weight of the queue's change in the feedback.
    pub w: f64,
    /// Additive-increase gain (rate units per page of positive feedback).
    pub gi: f64,
    /// Multiplicative-decrease gain (per page of negative feedback).
    pub gd: f64,
    /// Rate unit Ru of the additive increase.
    pub rate_unit: Rate,
    pub sampling: Sampling,
    /// Floor of the rate limiter's rate.
    pub min_rate: Rate,
    /// Largest fraction one message may take off a rate.
    pub max_decrease: f64,
    /// Rate of a newly installed limiter; `None` is the line rate.
    pub initial_rate: Option<Rate>,
    /// What a rate limiter's queue holds before its source must wait.
    pub rl_queue: Bytes,
    /// Size of a notification frame on the wire.
    pub message_bytes: u32,
    /// Notifications travel in the strict-priority expedited class, outside
    /// the buffer accounting (else they queue and may be dropped like data).
    pub expedite: bool,
    /// BCN-MAX: at or above this queue length the feedback is the maximal negative.
    pub bcn_max: Option<Bytes>,
    pub stop: Option<StopParams>,
    pub drift: Option<DriftParams>,
}

impl BcnParams {
    /// Saturation of |Fb|: (1 + 2W)·Qeq pages.
    pub fn fb_max(&self) -> i64 {
        ((1.0 + 2.0 * self.w) * self.qeq_pages as f64).round() as i64
    }
}

/// What a sample tells the source of the sampled frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feedback {
    /// Fb in pages: negative slows the source down, positive speeds it up.
    Rate(i32),
    /// BCN(0,0): stop for a random time, then restart at the restart rate.
    Stop,
}

/// The sampler and feedback state of one switch output queue.
pub struct CongestionPoint {
    /// Bytes still to arrive before the next sample (interval sampling).
    countdown: i64,
    /// Queue length at the previous sample, pages.
    q_prev: i64,
    rng: Stream,
}

impl CongestionPoint {
    pub fn new(p: &BcnParams, mut rng: Stream) -> CongestionPoint {
        let countdown = next_interval(&p.sampling, &mut rng);
        CongestionPoint {
            countdown,
            q_prev: 0,
            rng,
        }
    }

    /// A frame of `bytes` arrives at the queue: is it sampled?
    #[inline]
    pub fn sample(&mut self, p: &BcnParams, bytes: u32) -> bool {
        match p.sampling {
            Sampling::Interval { .. } => {
                self.countdown -= bytes as i64;
                if self.countdown > 0 {
                    return false;
                }
                self.countdown = next_interval(&p.sampling, &mut self.rng);
                true
            }
            Sampling::Probability(prob) => unit_open0(&mut self.rng) <= prob,
        }
    }

    /// Feedback for a sampled frame, the queue holding `queue_bytes`.
    /// `tagged_here`: the frame carries this CP's id (its source is rate
    /// limited by this CP), the only case in which positive feedback is sent.
    pub fn feedback(
        &mut self,
        p: &BcnParams,
        queue_bytes: u64,
        tagged_here: bool,
    ) -> Option<Feedback> {
        let q_prev = self.q_prev;
        self.q_prev = pages(queue_bytes);
        if p.stop.is_some_and(|s| queue_bytes >= s.threshold.0) {
            return Some(Feedback::Stop);
        }
        match feedback_value(p, queue_bytes, q_prev) {
            f if f < 0 => Some(Feedback::Rate(f)),
            f if f > 0 && tagged_here => Some(Feedback::Rate(f)),
            _ => None,
        }
    }
}

/// Whole 64-byte pages in `bytes`.
#[inline]
pub fn pages(bytes: u64) -> i64 {
    (bytes / PAGE_BYTES) as i64
}

/// The feedback law shared by every BCN-style loop (BCN, ECM and E2CM's
/// per-flow controller): Fb = round(Qoff − W·Qdelta) in pages for a queue
/// of `queue_bytes` whose previous sample was `q_prev` pages, saturated at
/// ±(1 + 2W)·Qeq; the maximal negative value at or above the BCN-MAX threshold.
pub fn feedback_value(p: &BcnParams, queue_bytes: u64, q_prev: i64) -> i32 {
    let fb_max = p.fb_max();
    if p.bcn_max.is_some_and(|t| queue_bytes >= t.0) {
        return -fb_max as i32;
    }
    let q = pages(queue_bytes);
    let q_off = p.qeq_pages - q;
    let fb = (q_off as f64 - p.w * (q - q_prev) as f64).round() as i64;
    fb.clamp(-fb_max, fb_max) as i32
}

fn next_interval(s: &Sampling, rng: &mut Stream) -> i64 {
    match *s {
        Sampling::Interval {
            mean: Bytes(mean),
            jitter: Bytes(jitter),
        } if jitter > 0 => {
            use rand::RngExt;
            rng.random_range(mean - jitter..=mean + jitter) as i64
        }
        Sampling::Interval { mean, .. } => mean.0 as i64,
        Sampling::Probability(_) => 0,
    }
}

/// The reaction point's rate after one message of feedback `fb` (pages),
/// bounded by the minimum rate and the line rate `line` (bit/s).
pub fn react(p: &BcnParams, rate: f64, fb: i32, line: f64) -> f64 {
    let r = if fb > 0 {
        rate + p.gi * fb as f64 * p.rate_unit.0 as f64
    } else {
        let cut = (p.gd * (-fb) as f64).min(p.max_decrease);
        rate * (1.0 - cut)
    };
    bound(p, r, line)
}

/// Keep a rate within [min rate, line rate]; the line rate wins if a
/// scenario sets the minimum above a host's link.
pub fn bound(p: &BcnParams, rate: f64, line: f64) -> f64 {
    rate.max(p.min_rate.0 as f64).min(line)
}

/// BCN(0,0) at the reaction point: the pause before restarting, uniform in [0, tmax].
pub fn stop_time(s: &StopParams, rng: &mut Stream) -> Time {
    use rand::RngExt;
    Time(rng.random_range(0..=s.tmax.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;

    /// Study E's parameters (CN-SIM baseline).
    fn cn_sim() -> BcnParams {
        BcnParams {
            qeq_pages: 375,
            w: 2.0,
            gi: 0.53,
            gd: 2.6e-4,
            rate_unit: Rate::mbps(1),
            sampling: Sampling::Interval {
                mean: Bytes(150_000),
                jitter: Bytes(0),
            },
            min_rate: Rate::mbps(1),
            max_decrease: 0.5,
            initial_rate: None,
            rl_queue: Bytes(150_000),
            message_bytes: 64,
            expedite: false,
            bcn_max: None,
            stop: None,
            drift: None,
        }
    }

    const C: f64 = 10e9;

    #[test]
    fn interval_sampling_takes_every_hundredth_1500_byte_frame() {
        let p = cn_sim();
        let mut cp = CongestionPoint::new(&p, stream(1, 1));
        let sampled: Vec<usize> = (1..=300).filter(|_| cp.sample(&p, 1500)).collect();
        assert_eq!(sampled, vec![100, 200, 300]);
    }

    #[test]
    fn jittered_intervals_stay_within_their_bounds_and_average_the_mean() {
        let mut p = cn_sim();
        p.sampling = Sampling::Interval {
            mean: Bytes(150_000),
            jitter: Bytes(20_000),
        };
        let mut cp = CongestionPoint::new(&p, stream(7, 3));
        let (mut last, mut gaps) = (0u64, Vec::new());
        for i in 1..=200_000u64 {
            if cp.sample(&p, 64) {
                gaps.push((i - last) * 64);
                last = i;
            }
        }
        // An interval of I bytes is crossed by the frame that brings the count to >= I.
        assert!(
            gaps.iter().all(|&g| (130_000..=170_000 + 63).contains(&g)),
            "{gaps:?}"
        );
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        assert!((mean - 150_032.0).abs() < 1_500.0, "{mean}");
    }

    #[test]
    fn feedback_is_qoff_minus_w_qdelta_in_pages() {
        let p = cn_sim();
        let mut cp = CongestionPoint::new(&p, stream(1, 1));
        // First sample: q = 40,000 B = 625 pages, previous 0.
        // Qoff = 375 - 625 = -250; Qdelta = 625; Fb = -250 - 1250 = -1500.
        assert_eq!(cp.feedback(&p, 40_000, false), Some(Feedback::Rate(-1500)));
        // Second: q = 40,063 B is still 625 pages (pages are whole): Qdelta = 0, Fb = -250.
        assert_eq!(cp.feedback(&p, 40_063, false), Some(Feedback::Rate(-250)));
        // Third: q = 12,800 B = 200 pages: Qoff = 175, Qdelta = -425, Fb = 175 + 850 = 1025,
        // positive, so it is sent only to a frame tagged by this CP.
        assert_eq!(cp.feedback(&p, 12_800, false), None);
        // Fourth: same queue, tagged: Qoff = 175, Qdelta = 0.
        assert_eq!(cp.feedback(&p, 12_800, true), Some(Feedback::Rate(175)));
        // Exactly at Qeq with no change: Fb = 0, no message even when tagged.
        assert_eq!(
            cp.feedback(&p, 24_000, true),
            Some(Feedback::Rate(-2 * 175))
        );
        assert_eq!(cp.feedback(&p, 24_000, true), None);
    }

    #[test]
    fn feedback_saturates_at_plus_minus_five_qeq() {
        let p = cn_sim();
        assert_eq!(p.fb_max(), 1875);
        let mut cp = CongestionPoint::new(&p, stream(1, 1));
        // 150,000 B = 2343 pages: Qoff = -1968, Qdelta = 2343: far below -1875.
        assert_eq!(cp.feedback(&p, 150_000, false), Some(Feedback::Rate(-1875)));
        // Empty queue after that: Qoff = 375, Qdelta = -2343: 5061, capped.
        assert_eq!(cp.feedback(&p, 0, true), Some(Feedback::Rate(1875)));
    }

    #[test]
    fn bcn_max_and_bcn00_override_the_computed_feedback() {
        let mut p = cn_sim();
        p.bcn_max = Some(Bytes(100_000));
        p.stop = Some(StopParams {
            threshold: Bytes(112_500),
            tmax: Time::from_us(100),
            restart_rate: Rate::gbps(1),
        });
        let mut cp = CongestionPoint::new(&p, stream(1, 1));
        // Rising to 100,000 B (1562 pages) from 1550 pages: computed Fb would be
        // 375 - 1562 - 24 = -1211; BCN-MAX sends the maximal -1875.
        cp.feedback(&p, 1550 * 64, false);
        assert_eq!(cp.feedback(&p, 100_000, false), Some(Feedback::Rate(-1875)));
        assert_eq!(cp.feedback(&p, 112_499, false), Some(Feedback::Rate(-1875)));
        // At Qsc the sample yields BCN(0,0), tagged or not.
        assert_eq!(cp.feedback(&p, 112_500, false), Some(Feedback::Stop));
        assert_eq!(cp.feedback(&p, 140_000, true), Some(Feedback::Stop));
    }

    #[test]
    fn rates_follow_the_additive_increase_multiplicative_decrease_law() {
        let p = cn_sim();
        // Maximal negative feedback: 10 Gb/s × (1 - 2.6e-4 × 1875) = 10 Gb/s × 0.5125.
        let r1 = react(&p, C, -1875, C);
        assert!((r1 - 5.125e9).abs() < 1.0, "{r1}");
        // -250 pages: × (1 - 0.065).
        let r2 = react(&p, r1, -250, C);
        assert!((r2 - 5.125e9 * 0.935).abs() < 1.0, "{r2}");
        // +175 pages: + 0.53 × 175 × 1 Mb/s = 92.75 Mb/s.
        let r3 = react(&p, r2, 175, C);
        assert!((r3 - (5.125e9 * 0.935 + 92.75e6)).abs() < 1.0, "{r3}");
        // Never above the line rate, never below the minimum rate.
        assert_eq!(react(&p, 9.9e9, 1875, C), C);
        let mut r = C;
        for _ in 0..100 {
            r = react(&p, r, -1875, C);
        }
        assert_eq!(r, 1e6);
        // A minimum above the line rate (a slower host link) yields the line rate.
        let mut high = cn_sim();
        high.min_rate = Rate::gbps(20);
        assert_eq!(react(&high, C, -1875, C), C);
    }

    #[test]
    fn one_message_never_takes_more_than_the_maximal_decrease() {
        let mut p = cn_sim();
        p.gd = 2.5 / (5.0 * 375.0); // E2CM's gain: 2.5 at saturation
        p.max_decrease = 0.5;
        assert_eq!(react(&p, C, -1875, C), 5e9);
    }

    #[test]
    fn stop_times_cover_zero_to_tmax() {
        let s = StopParams {
            threshold: Bytes(0),
            tmax: Time::from_us(100),
            restart_rate: Rate::gbps(1),
        };
        let mut rng = stream(3, 9);
        let draws: Vec<Time> = (0..10_000).map(|_| stop_time(&s, &mut rng)).collect();
        assert!(draws.iter().all(|t| *t <= Time::from_us(100)));
        let mean = draws.iter().map(|t| t.0 as f64).sum::<f64>() / draws.len() as f64;
        assert!((mean - 50e6).abs() < 1.5e6, "{mean}");
    }
}
