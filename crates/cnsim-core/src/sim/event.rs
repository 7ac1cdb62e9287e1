//! Events and the fingerprint of the event trace.

use crate::cm::CmTimer;
use crate::engine::{EventKey, SEQ_BITS};
use crate::units::Time;

/// Events are small (12 bytes) because the heap moves them: a frame on a
/// link waits in its receiving port's `arriving` line, and the few frames
/// that travel otherwise (notifications, frames between a host's queues and
/// its egress buffer) wait in `Simulator::parked`, under a slot number.
#[derive(Clone, Copy, Debug)]
pub(super) enum Event {
    TxDone {
        port: u32,
    },
    /// The frame on the link under `slot` (`Simulator::on_links`; the
    /// front of `Simulator::lane_frames` for `ON_LANE`) has been
    /// received at `port`.
    Arrive {
        port: u32,
        slot: u32,
    },
    /// A destination's answer to a data frame delivered at its last bit
    /// (DCQCN's CNP, parked under `slot`) enters the egress buffer of the
    /// host of `port` when the frame arrives. It stands for that arrival:
    /// it has its place in the order of events and in the fingerprint.
    Reply {
        port: u32,
        slot: u32,
    },
    /// A switch-generated message enters the switch as if received on `port`.
    Inject {
        port: u32,
        slot: u32,
    },
    PauseRx {
        port: u32,
        quanta: u16,
    },
    PauseExpire {
        port: u32,
        generation: u32,
    },
    PauseRefresh {
        port: u32,
        generation: u32,
    },
    SourceFire {
        source: u32,
    },
    /// A congestion notification takes effect at its flow's source.
    Notify {
        flow: u32,
        slot: u32,
    },
    /// A rate limiter may release its next frame.
    RlRelease {
        flow: u32,
    },
    /// A congestion-management scheme's timer for the limiter of `flow`
    /// (its row); `generation` tells a superseded timer.
    CmTimer {
        flow: u32,
        generation: u32,
        timer: CmTimer,
    },
    /// A frame released by a host's per-flow queues reaches its egress
    /// buffer after the loop delay.
    EgressArrive {
        node: u32,
        slot: u32,
    },
    /// A host's per-flow queue arbiter is free again.
    ArbiterFree {
        node: u32,
    },
    /// A TCP sender's retransmission timer may have expired.
    ConnRto {
        flow: u32,
    },
    /// A TCP receiver's delayed-ACK timer may have expired.
    ConnAck {
        flow: u32,
    },
    /// The workload flows of `node` due now start (`sim::workload`).
    FlowStart {
        node: u32,
    },
    /// A PFC frame's entry for `class` takes effect at `port`'s transmitter.
    PfcRx {
        port: u32,
        class: u8,
        quanta: u16,
    },
    /// The PFC pause timer of `class` at `port` set with `generation` runs out.
    PfcExpire {
        port: u32,
        class: u8,
        generation: u32,
    },
    /// PFC XOFFs sent on `port` may be due again.
    PfcRefresh {
        port: u32,
    },
}

/// `Event::Arrive`'s slot when its frame waits in `Simulator::lane_frames`.
pub(super) const ON_LANE: u32 = u32::MAX;

// The heap moves events: keep them at 12 bytes.
const _: () = assert!(std::mem::size_of::<Event>() == 12);

impl Event {
    /// What the event is and where it happens: its kind and the element it
    /// happens at (port, node, flow or source; a PFC event's port and class
    /// as port × 8 + class). The fingerprint records these, and they order
    /// simultaneous events of one class (`EventKey`).
    #[inline(always)]
    pub(super) fn place(&self) -> (u64, u32) {
        // Each arm below is a constant kind and the variant's first field,
        // which the compiler turns into a table lookup: no branch on the
        // event kind (a jump here mispredicts on most events, as the kinds
        // interleave). The timer's kind and the PFC class come apart, by
        // selects.
        let (kind, element) = match *self {
            Event::TxDone { port } => (1, port),
            Event::Arrive { port, .. } | Event::Reply { port, .. } => (2, port),
            Event::Inject { port, .. } => (23, port),
            Event::PauseRx { port, .. } => (3, port),
            Event::PauseExpire { port, .. } => (4, port),
            Event::PauseRefresh { port, .. } => (5, port),
            Event::SourceFire { source } => (6, source),
            Event::Notify { flow, .. } => (7, flow),
            Event::RlRelease { flow } => (8, flow),
            Event::CmTimer { flow, .. } => (0, flow),
            Event::EgressArrive { node, .. } => (10, node),
            Event::ArbiterFree { node } => (11, node),
            Event::ConnRto { flow } => (14, flow),
            Event::ConnAck { flow } => (15, flow),
            Event::PfcRx { port, .. } => (16, port),
            Event::PfcExpire { port, .. } => (17, port),
            Event::PfcRefresh { port } => (18, port),
            Event::FlowStart { node } => (22, node),
        };
        match *self {
            // The kinds of the three timer events this one replaced.
            Event::CmTimer { timer, .. } => (timer.trace_kind(), element),
            Event::PfcRx { class, .. } | Event::PfcExpire { class, .. } => {
                (kind, (element << 3) | u32::from(class))
            }
            _ => (kind, element),
        }
    }

    /// On ties: departures free space first, then PAUSE takes effect, then
    /// arrivals are admitted, then sources produce.
    #[inline(always)]
    fn class(&self) -> u8 {
        match self {
            Event::TxDone { .. } => 0,
            Event::PauseRx { .. }
            | Event::PauseExpire { .. }
            | Event::PauseRefresh { .. }
            | Event::Notify { .. }
            | Event::RlRelease { .. }
            | Event::CmTimer { .. }
            | Event::ArbiterFree { .. }
            | Event::ConnRto { .. }
            | Event::ConnAck { .. }
            | Event::PfcRx { .. }
            | Event::PfcExpire { .. }
            | Event::PfcRefresh { .. } => 1,
            Event::Arrive { .. }
            | Event::Reply { .. }
            | Event::Inject { .. }
            | Event::EgressArrive { .. } => 2,
            Event::SourceFire { .. } | Event::FlowStart { .. } => 3,
        }
    }
}

/// Add one event to the fingerprint (OMNeT++'s idea: any change in what
/// happens, when, or where, changes the final value). A sum of the events'
/// hashes, so that it does not depend on the order in which events at the
/// same picosecond run, nor on how a run's work is divided
/// (`docs/parallel.md`): that order is fixed by the events' keys anyway.
#[inline]
pub(super) fn fingerprint_step(fp: u64, t: Time, kind: u64, element: u32) -> u64 {
    // Two multiply-xorshift rounds: every input bit moves every output bit,
    // so that a sum of such words still tells events apart.
    let z = t.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((kind << 32) | u64::from(element));
    let z = (z ^ (z >> 32)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    fp.wrapping_add(z ^ (z >> 29))
}

impl EventKey for Event {
    /// Class (2 bits), kind (6 bits) and element (32 bits), above the order
    /// of scheduling. Ports number below 2^29, so a PFC element fits.
    ///
    /// The element is XORed with a mask drawn from the time and kind: at each
    /// picosecond the elements' order is another permutation. Ordering by
    /// element number alone would let the lower-numbered of two symmetric
    /// flows, ports or hosts win every tie (its frame admitted first, its
    /// timer served first), a bias that shows in fairness (four DCQCN flows
    /// settled at a Jain index of 0.965 instead of 0.99). With the mask each
    /// of two elements comes first at half of the instants.
    #[inline(always)]
    fn tie(&self, time: Time) -> u64 {
        let (kind, element) = self.place();
        // Multiplicative hashing: the product's top bits depend on all of
        // the time's, which is all a per-instant permutation needs.
        let mask = ((time.0 ^ (kind << 58)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32;
        (u64::from(self.class()) << 62) | (kind << 56) | (u64::from(element ^ mask) << SEQ_BITS)
    }

    /// Completions come one frame time after a start and arrivals one
    /// link delay after a departure: each in time order when frame sizes
    /// and link delays are alike, so each has a FIFO lane. Lane 1 is the
    /// arrivals' alone, and their only one: it pops them in the order it
    /// took them, which is the order of `Simulator::lane_frames`.
    #[inline]
    fn lanes(&self) -> &'static [usize] {
        // Completions first try their own lane, then the two that open for
        // transmissions of several durations (where links have several
        // rates and that overflows, `schedule_after` places them by frame
        // time instead).
        match self {
            Event::TxDone { .. } => &[0, 2, 3],
            Event::Arrive { .. } => &[1],
            _ => &[],
        }
    }

    /// A connection's retransmission timeout (RoCE's 64 ms) waits out most
    /// flows it guards, then finds them done.
    #[inline]
    fn far(&self) -> bool {
        matches!(self, Event::ConnRto { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EventKey;

    /// `Simulator::lane_frames` gives out its frames in the order lane 1
    /// took their arrivals: that holds only if lane 1 takes arrivals
    /// alone and arrivals try no other lane.
    #[test]
    fn lane_1_is_the_arrivals_alone() {
        let timer = crate::cm::CmTimer::Drift;
        let events = [
            Event::TxDone { port: 0 },
            Event::Arrive { port: 0, slot: 0 },
            Event::Reply { port: 0, slot: 0 },
            Event::Inject { port: 0, slot: 0 },
            Event::PauseRx { port: 0, quanta: 0 },
            Event::PauseExpire {
                port: 0,
                generation: 0,
            },
            Event::PauseRefresh {
                port: 0,
                generation: 0,
            },
            Event::SourceFire { source: 0 },
            Event::Notify { flow: 0, slot: 0 },
            Event::RlRelease { flow: 0 },
            Event::CmTimer {
                flow: 0,
                generation: 0,
                timer,
            },
            Event::EgressArrive { node: 0, slot: 0 },
            Event::ArbiterFree { node: 0 },
            Event::ConnRto { flow: 0 },
            Event::ConnAck { flow: 0 },
            Event::FlowStart { node: 0 },
            Event::PfcRx {
                port: 0,
                class: 0,
                quanta: 0,
            },
            Event::PfcExpire {
                port: 0,
                class: 0,
                generation: 0,
            },
            Event::PfcRefresh { port: 0 },
        ];
        for ev in events {
            let arrival = matches!(ev, Event::Arrive { .. });
            assert_eq!(ev.lanes().contains(&1), arrival, "{ev:?}");
            if arrival {
                assert_eq!(ev.lanes(), [1], "{ev:?}");
            }
        }
    }
}
