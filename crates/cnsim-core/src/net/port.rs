//! A port: one end of a full-duplex link, with the output queue that feeds
//! its transmitter. A frame stays at the head of the queue (and in the
//! buffer) until its last bit has left.

use super::frame::Frame;
use crate::flowctl::pause::PortPause;
use crate::units::{Rate, Time};
use std::collections::VecDeque;

/// The rate at which the link into a host is drained: the full link rate,
/// except while the schedule says "reduced".
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ServiceSchedule {
    pub rate: Rate,
    pub start: Time,
    pub end: Time,
    /// `Some((period, reduced))`: in each period from `start`, the first `reduced` is at `rate`.
    pub periodic: Option<(Time, Time)>,
}

impl ServiceSchedule {
    pub fn is_reduced(&self, t: Time) -> bool {
        if t < self.start || t >= self.end {
            return false;
        }
        match self.periodic {
            None => true,
            Some((period, reduced)) => (t.0 - self.start.0) % period.0 < reduced.0,
        }
    }
}

pub struct Port {
    pub node: u32,
    pub peer: u32,
    pub rate: Rate,
    /// Picoseconds per byte at `rate` when that is a whole number (it is for
    /// every rate that divides 8 Tb/s, e.g. 10 Gb/s: 800 ps), else 0.
    ps_per_byte: u64,
    pub delay: Time,
    /// Reduced service-rate schedule (ports that feed a slow host).
    pub service: Option<ServiceSchedule>,
    pub queue: VecDeque<Frame>,
    /// Strict-priority class for small control frames (reflected probes):
    /// served before `queue`, outside the buffer accounting.
    pub expedited: VecDeque<Frame>,
    /// Frames on the link toward this port, in arrival order (the `Arrive`
    /// events carry only the port).
    pub arriving: VecDeque<Frame>,
    /// Bytes in `queue`, including the frame being transmitted.
    pub occupancy: u64,
    /// What the transmitter is doing.
    pub tx: TxState,
    /// Bytes held by this switch that arrived on this port (input partition).
    pub input_occupancy: u64,
    /// Link-level flow control: PAUSE sent upstream and received.
    pub pause: PortPause,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxState {
    Idle,
    Data,
    Expedited,
    Pause(u16),
}

impl Port {
    pub fn new(node: u32, peer: u32, rate: Rate, delay: Time) -> Port {
        Port {
            node,
            peer,
            rate,
            ps_per_byte: if (8 * Time::PS_PER_S) % rate.0 == 0 {
                8 * Time::PS_PER_S / rate.0
            } else {
                0
            },
            delay,
            service: None,
            queue: VecDeque::new(),
            expedited: VecDeque::new(),
            arriving: VecDeque::new(),
            occupancy: 0,
            tx: TxState::Idle,
            input_occupancy: 0,
            pause: PortPause::default(),
        }
    }

    /// Wire time of `bytes` starting now: a multiplication on the common
    /// path, the exact 128-bit division otherwise.
    #[inline]
    pub fn tx_time(&self, now: Time, bytes: u64) -> Time {
        match &self.service {
            Some(s) if s.is_reduced(now) => s.rate.tx_time(bytes),
            _ if self.ps_per_byte != 0 => Time(bytes * self.ps_per_byte),
            _ => self.rate.tx_time(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_path_agrees_with_the_exact_division() {
        for rate in [
            Rate::gbps(10),
            Rate::gbps(1),
            Rate::mbps(500),
            Rate(3_000_000_007),
            Rate::gbps(40),
        ] {
            let p = Port::new(0, 1, rate, Time::ZERO);
            for bytes in [64, 1500, 9000] {
                assert_eq!(
                    p.tx_time(Time::ZERO, bytes),
                    rate.tx_time(bytes),
                    "{rate} {bytes}"
                );
            }
        }
    }
}
