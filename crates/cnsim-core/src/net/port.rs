//! A port: one end of a full-duplex link, with the output queue that feeds
//! its transmitter. A frame stays at the head of the queue (and in the
//! buffer) until its last bit has left.

use super::frame::Frame;
use crate::flowctl::pause::{PauseReceiver, PauseSender};
use crate::scenario::spec::ServiceSchedule;
use crate::units::{Rate, Time};
use std::collections::VecDeque;

pub struct Port {
    pub node: u32,
    pub peer: u32,
    pub rate: Rate,
    pub delay: Time,
    /// Reduced service-rate schedule (ports that feed a slow host).
    pub service: Option<ServiceSchedule>,
    pub queue: VecDeque<Frame>,
    /// Bytes in `queue`, including the frame being transmitted.
    pub occupancy: u64,
    /// What the transmitter is doing.
    pub tx: TxState,
    /// PAUSE quanta waiting to go out ahead of data.
    pub ctrl_pending: Option<u16>,
    /// Bytes held by this switch that arrived on this port (input partition).
    pub input_occupancy: u64,
    /// PAUSE this port sends upstream.
    pub pause_out: PauseSender,
    /// PAUSE this port's transmitter has received.
    pub pause_in: PauseReceiver,
    /// This output is above XOFF (global PAUSE).
    pub congested: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxState {
    Idle,
    Data,
    Pause(u16),
}

impl Port {
    pub fn new(node: u32, peer: u32, rate: Rate, delay: Time) -> Port {
        Port {
            node,
            peer,
            rate,
            delay,
            service: None,
            queue: VecDeque::with_capacity(128),
            occupancy: 0,
            tx: TxState::Idle,
            ctrl_pending: None,
            input_occupancy: 0,
            pause_out: PauseSender::default(),
            pause_in: PauseReceiver::default(),
            congested: false,
        }
    }

    /// The rate frames are sent at now: the link rate, or the reduced
    /// service rate while the host's schedule says so.
    #[inline]
    pub fn rate_at(&self, now: Time) -> Rate {
        match &self.service {
            Some(s) if s.is_reduced(now) => s.rate,
            _ => self.rate,
        }
    }
}
