//! A port: one end of a full-duplex link, with the output queue that feeds
//! its transmitter. A frame stays at the head of the queue (and in the
//! buffer) until its last bit has left.

use super::ecn::PortMarking;
use super::frame::Frame;
use super::sched::{SchedSpec, Scheduler};
use crate::flowctl::pause::PortPause;
use crate::flowctl::pfc::{PfcFrame, PfcReceiver, PfcSender, PFC_CLASSES};
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
    /// Its index among its node's ports (a shared buffer's numbering).
    pub local: u32,
    /// In a split run: the peer is simulated by another partition, so what
    /// this port sends it is a message (docs/parallel.md).
    pub peer_remote: bool,
    pub rate: Rate,
    /// Picoseconds per byte at `rate` when that is a whole number (it is for
    /// every rate that divides 8 Tb/s, e.g. 10 Gb/s: 800 ps), else 0.
    ps_per_byte: u64,
    pub delay: Time,
    /// Reduced service-rate schedule (ports that feed a slow host); boxed,
    /// being rare, to keep the port small.
    pub service: Option<Box<ServiceSchedule>>,
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
    /// Traffic classes beyond the one `queue` holds, and PFC; `None` when
    /// the scenario has one class and no PFC (the studies' fast path).
    pub classes: Option<Box<PortClasses>>,
}

/// A port's traffic classes: an output queue per class (class 0 is the
/// port's `queue`), the scheduler choosing among them, the per-class
/// ingress accounting PFC decides on, and the port's PFC state.
///
/// Fields are laid out in the order a frame's enqueue, start and dequeue
/// read them, on cache-line boundaries (`repr(C)`): a port's classes are
/// touched a few times per frame, far apart in time, and each line they
/// spread over is a likely cache miss on a fabric.
#[repr(C, align(64))]
pub struct PortClasses {
    /// Bytes queued per class (the port's `occupancy` is their sum).
    pub occupancy: [u64; PFC_CLASSES],
    /// Bit c: class c has a frame queued.
    backlogged: u8,
    /// A PFC frame waiting to go out ahead of data (decisions taken while
    /// it waits join it).
    pub pfc_pending: Option<PfcFrame>,
    /// ECN marking on this port's queues (a switch's ports with `ecn`).
    pub ecn: Option<PortMarking>,
    /// Output queues of classes 1..8.
    upper: [VecDeque<Frame>; PFC_CLASSES - 1],
    pub sched: Scheduler,
    /// Per class: frames transmitted, bytes transmitted, frames dropped,
    /// bytes dropped, largest occupancy.
    pub stats: [ClassStats; PFC_CLASSES],
    /// PFC this port's transmitter has received, per class.
    pub pfc_receiver: PfcReceiver,
    /// PFC this port sends upstream, per class.
    pub pfc_sender: PfcSender,
    /// Bytes held by this switch that arrived on this port, per class.
    pub ingress: [u64; PFC_CLASSES],
    /// The PFC frame on the wire.
    pub pfc_on_wire: PfcFrame,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct ClassStats {
    pub tx_bytes: u64,
    pub drops_frames: u64,
    pub drops_bytes: u64,
    pub max_occupancy: u64,
    /// Frames this queue marked CE.
    pub ecn_marked: u64,
}

impl PortClasses {
    /// A frame of `class` and `bytes` was dropped on its way into this
    /// port's queue.
    #[inline(never)]
    pub fn dropped(&mut self, class: u8, bytes: u64) {
        let st = &mut self.stats[class as usize];
        st.drops_frames += 1;
        st.drops_bytes += bytes;
    }

    pub fn new(sched: &SchedSpec) -> PortClasses {
        PortClasses {
            upper: Default::default(),
            occupancy: [0; PFC_CLASSES],
            backlogged: 0,
            sched: Scheduler::new(sched),
            ingress: [0; PFC_CLASSES],
            pfc_sender: PfcSender::default(),
            pfc_receiver: PfcReceiver::default(),
            pfc_pending: None,
            pfc_on_wire: PfcFrame::default(),
            stats: [ClassStats::default(); PFC_CLASSES],
            ecn: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxState {
    Idle,
    /// A data frame of this class.
    Data(u8),
    Expedited,
    Pause(u16),
    /// The port's `pfc_on_wire` frame.
    Pfc,
}

impl Port {
    pub fn new(node: u32, peer: u32, rate: Rate, delay: Time) -> Port {
        Port {
            node,
            peer,
            local: 0,
            peer_remote: false,
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
            classes: None,
        }
    }

    /// The output queue of `class`.
    #[inline]
    pub fn class_queue(&mut self, class: u8) -> &mut VecDeque<Frame> {
        match (class, self.classes.as_deref_mut()) {
            (0, _) | (_, None) => &mut self.queue,
            (c, Some(pc)) => &mut pc.upper[c as usize - 1],
        }
    }

    /// Every frame in the output queues, class by class.
    pub fn queued(&self) -> impl Iterator<Item = &Frame> {
        let upper = self.classes.iter().flat_map(|pc| pc.upper.iter().flatten());
        self.queue.iter().chain(upper)
    }

    /// Put `frame` at the tail of its class's queue.
    #[inline(always)]
    pub fn enqueue(&mut self, frame: Frame) {
        self.occupancy += frame.size as u64;
        match self.classes {
            None => self.queue.push_back(frame),
            Some(_) => self.enqueue_class(frame),
        }
    }

    #[inline(never)]
    fn enqueue_class(&mut self, frame: Frame) {
        let pc = self.classes.as_deref_mut().expect("called with classes");
        let c = frame.class() as usize;
        pc.occupancy[c] += frame.size as u64;
        pc.backlogged |= 1 << c;
        let st = &mut pc.stats[c];
        st.max_occupancy = st.max_occupancy.max(pc.occupancy[c]);
        match c {
            0 => self.queue.push_back(frame),
            c => pc.upper[c - 1].push_back(frame),
        }
    }

    /// Take the head frame of `class` (the one whose last bit just left),
    /// with the port's occupancy before it left.
    #[inline(always)]
    pub fn dequeue(&mut self, class: u8) -> (Frame, u64) {
        let frame = match self.classes {
            None => self.queue.pop_front(),
            Some(_) => self.dequeue_class(class),
        }
        .expect("a frame is on the wire");
        let before = self.occupancy;
        self.occupancy = before.saturating_sub(frame.size as u64);
        (frame, before)
    }

    #[inline(never)]
    fn dequeue_class(&mut self, class: u8) -> Option<Frame> {
        let queue = self.class_queue(class);
        let frame = queue.pop_front()?;
        let emptied = queue.is_empty();
        let pc = self.classes.as_deref_mut().expect("called with classes");
        let size = frame.size as u64;
        pc.occupancy[class as usize] -= size;
        pc.stats[class as usize].tx_bytes += size;
        if emptied {
            pc.backlogged &= !(1 << class);
            pc.sched.emptied(class);
        }
        Some(frame)
    }

    /// The class whose head frame goes next, if any may go: the one queue
    /// without classes; else the scheduler's choice among the classes PFC
    /// has not paused.
    #[inline(always)]
    pub fn next_class(&mut self) -> Option<(u8, u16)> {
        match self.classes {
            None => self.queue.front().map(|f| (0, f.size)),
            Some(_) => self.scheduled_class(),
        }
    }

    /// `next_class` with classes, out of line: the single queue's path
    /// stays a few instructions.
    #[inline(never)]
    fn scheduled_class(&mut self) -> Option<(u8, u16)> {
        let pc = self.classes.as_deref_mut().expect("called with classes");
        let (queue, upper) = (&self.queue, &pc.upper);
        let head = |c: u8| {
            match c {
                0 => queue.front(),
                c => upper[c as usize - 1].front(),
            }
            .map_or(0, |f| f.size as u32)
        };
        let blocked = pc.pfc_receiver.paused_mask();
        let class = pc.sched.pick_ready(pc.backlogged, blocked, head)?;
        Some((class, head(class) as u16))
    }

    /// Wire time of `bytes` starting now: a multiplication on the common
    /// path, the exact 128-bit division otherwise.
    #[inline(always)]
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
