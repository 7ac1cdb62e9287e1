//! A rate limiter in an adapter: a queue of frames released no faster than
//! its rate into the adapter's egress queue. Installed by a congestion
//! notification, released when its rate is back at the line rate.

use super::frame::Frame;
use crate::engine::rng::{unit_open0, Stream};
use crate::engine::Fifo;
use crate::units::Time;

/// No congestion point: an untagged frame, or a limiter not yet associated.
pub const NO_CP: u32 = u32::MAX;

pub struct RateLimiter {
    pub active: bool,
    /// Rate in bit/s (a float: multiplicative decreases are not whole).
    pub rate: f64,
    /// The line rate of the flow's host, bit/s: the most `rate` may be.
    pub line: f64,
    /// The congestion point this limiter answers to; frames leaving it carry this tag.
    pub cpid: u32,
    pub queue: Fifo<Frame>,
    /// Bytes in `queue`.
    pub bytes: u64,
    /// Earliest time the next frame may leave.
    pub next_allowed: Time,
    /// Time of the release event in the event queue, if one is pending.
    pub scheduled: Option<Time>,
    /// Waiting for room in the egress queue.
    pub stalled: bool,
    /// Invalidates pending drift ticks when the limiter is released or re-armed.
    pub drift_generation: u32,
    /// Notifications received while installed (for the summary).
    pub messages: u64,
    /// An E2CM probe goes out before the next frame.
    pub probe_due: bool,
    /// How frames are spaced.
    pub pacing: Pacing,
}

/// How a limiter spaces its frames: the gap after a frame of L bytes at
/// rate R is g = 8·L/R, or, jittered, g·(1 + w·(2u − 1)) with u uniform in
/// (0, 1] from the limiter's own stream: uniform within ±w·g, the mean
/// rate still exactly R. Exact spacing makes several limiters at the same
/// rate a perfectly periodic, phase-locked pattern; a limiter clocked by
/// an adapter's timers and arbitration does not keep such a grid.
#[derive(Clone, Default)]
pub enum Pacing {
    #[default]
    Exact,
    Jittered {
        width: f64,
        rng: Stream,
    },
}

impl Default for RateLimiter {
    fn default() -> Self {
        RateLimiter {
            active: false,
            rate: 0.0,
            line: 0.0,
            cpid: NO_CP,
            queue: Fifo::new(),
            bytes: 0,
            next_allowed: Time::ZERO,
            scheduled: None,
            stalled: false,
            drift_generation: 0,
            messages: 0,
            probe_due: false,
            pacing: Pacing::Exact,
        }
    }
}

impl RateLimiter {
    /// Install at `rate`. The queue's ring is kept across installs: it
    /// grows to the longest queue the limiter has held, and no further.
    pub fn install(&mut self, rate: f64) {
        self.active = true;
        self.rate = rate;
    }

    /// Spacing after releasing a frame of `bytes` at the current rate,
    /// rounded up to the picosecond: exact, or drawn by the pacing.
    #[inline]
    pub fn gap(&mut self, bytes: u64) -> Time {
        let g = bytes as f64 * 8.0e12 / self.rate;
        let g = match &mut self.pacing {
            Pacing::Exact => g,
            Pacing::Jittered { width, rng } => g * (1.0 + *width * (2.0 * unit_open0(rng) - 1.0)),
        };
        Time(ceil_to_u64(g))
    }
}

/// `x.ceil() as u64` for `x >= 0` (saturating, as the cast is), without
/// `ceil`: on x86-64 without SSE4.1 that is a library call, and a paced
/// frame's gap takes it once per frame.
#[inline]
fn ceil_to_u64(x: f64) -> u64 {
    let t = x as u64;
    t.saturating_add(((t as f64) < x) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn ceil_to_u64_is_the_cast_ceiling(bits in any::<u64>(), small in 0u64..1 << 40, frac in 0.0f64..1.0) {
            let x = f64::from_bits(bits).abs();
            prop_assert_eq!(ceil_to_u64(x), x.ceil() as u64);
            let y = small as f64 + frac;
            prop_assert_eq!(ceil_to_u64(y), y.ceil() as u64);
        }
    }

    #[test]
    fn ceil_to_u64_at_the_edges() {
        for x in [
            0.0,
            0.5,
            1.0,
            1.0 + f64::EPSILON,
            2f64.powi(53) + 2.0,
            2f64.powi(63),
            2f64.powi(64),
            1e300,
            f64::INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(ceil_to_u64(x), x.ceil() as u64, "{x}");
        }
    }

    #[test]
    fn spacing_is_the_frame_time_at_the_limiter_rate() {
        let mut rl = RateLimiter::default();
        rl.install(10e9);
        assert_eq!(rl.gap(1500), Time(1_200_000));
        rl.rate = 2.5e9;
        assert_eq!(rl.gap(1500), Time(4_800_000));
        rl.rate = 3e9; // 4 µs exactly: 1500 × 8 / 3e9 = 4e-6 s
        assert_eq!(rl.gap(1500), Time(4_000_000));
        rl.rate = 7e9; // 1.714285... µs, rounded up
        assert_eq!(rl.gap(1500), Time(1_714_286));
    }

    /// Jittered pacing: every gap within ±w of 8·L/R, uniform over that
    /// range, and the mean gap (so the mean rate) exact.
    #[test]
    fn jittered_gaps_are_uniform_around_the_exact_gap_with_its_mean() {
        let mut rl = RateLimiter {
            pacing: Pacing::Jittered {
                width: 0.5,
                rng: crate::engine::rng::stream(7, 1),
            },
            ..RateLimiter::default()
        };
        rl.install(2.5e9);
        let g = 4_800_000.0; // 1500 B at 2.5 Gb/s, ps
        let n = 100_000;
        let mut bins = [0u32; 10];
        let mut sum = 0.0;
        for _ in 0..n {
            let x = rl.gap(1500).0 as f64;
            assert!((0.5 * g..=1.5 * g + 1.0).contains(&x), "{x}");
            sum += x;
            bins[(((x - 0.5 * g) / g * 10.0) as usize).min(9)] += 1;
        }
        // The mean's standard error is g·0.5/√3/√n ≈ 0.09% of g.
        let mean = sum / n as f64;
        assert!(
            (mean / g - 1.0).abs() < 0.005,
            "mean gap {mean} ps against {g}"
        );
        // Each tenth of the range holds a tenth of the gaps (± 0.5% of n, about 5 standard errors).
        for b in bins {
            assert!((b as f64 / n as f64 - 0.1).abs() < 0.005, "{bins:?}");
        }
    }
}
