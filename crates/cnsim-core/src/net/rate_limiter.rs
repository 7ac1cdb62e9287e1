//! A rate limiter in an adapter: a queue of frames released no faster than
//! its rate into the adapter's egress queue. Installed by a congestion
//! notification, released when its rate is back at the line rate.

use super::frame::Frame;
use crate::units::Time;
use std::collections::VecDeque;

/// No congestion point: an untagged frame, or a limiter not yet associated.
pub const NO_CP: u32 = u32::MAX;

pub struct RateLimiter {
    pub active: bool,
    /// Rate in bit/s (a float: multiplicative decreases are not whole).
    pub rate: f64,
    /// The congestion point this limiter answers to; frames leaving it carry this tag.
    pub cpid: u32,
    pub queue: VecDeque<Frame>,
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
}

impl Default for RateLimiter {
    fn default() -> Self {
        RateLimiter {
            active: false,
            rate: 0.0,
            cpid: NO_CP,
            queue: VecDeque::new(),
            bytes: 0,
            next_allowed: Time::ZERO,
            scheduled: None,
            stalled: false,
            drift_generation: 0,
            messages: 0,
            probe_due: false,
        }
    }
}

impl RateLimiter {
    /// Install at `rate`. The queue's storage is kept across installs, so a
    /// limiter allocates at most once.
    pub fn install(&mut self, rate: f64, capacity: usize) {
        self.active = true;
        self.rate = rate;
        if self.queue.capacity() == 0 {
            self.queue.reserve(capacity);
        }
    }

    /// Spacing after releasing a frame of `bytes` at the current rate,
    /// rounded up to the picosecond.
    #[inline]
    pub fn gap(&self, bytes: u64) -> Time {
        Time((bytes as f64 * 8.0e12 / self.rate).ceil() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spacing_is_the_frame_time_at_the_limiter_rate() {
        let mut rl = RateLimiter::default();
        rl.install(10e9, 8);
        assert_eq!(rl.gap(1500), Time(1_200_000));
        rl.rate = 2.5e9;
        assert_eq!(rl.gap(1500), Time(4_800_000));
        rl.rate = 3e9; // 4 µs exactly: 1500 × 8 / 3e9 = 4e-6 s
        assert_eq!(rl.gap(1500), Time(4_000_000));
        rl.rate = 7e9; // 1.714285... µs, rounded up
        assert_eq!(rl.gap(1500), Time(1_714_286));
    }
}
