//! Bernoulli sources: in every slot at the host's line rate a unit (one
//! frame, or one transaction split into frames) is produced with probability
//! `load`. Gaps between units are drawn as geometric numbers of empty slots,
//! so the cost is one event per unit, not per slot.
//!
//! A unit is produced at a uniformly drawn offset within its slot unless the
//! scenario fixes the offset: perfectly periodic sources that share a
//! bottleneck otherwise lock their phases, and drop-tail then hands all the
//! drops to whichever source happens to arrive last in the cycle (the phase
//! effect of Floyd and Jacobson, 1992).
//!
//! A source whose host egress buffer is full keeps its unfinished unit and
//! stops; it resumes at the first slot after space frees up.

use crate::engine::rng::{Geometric, Stream};
use crate::transport::Transport;
use crate::units::Time;

pub struct Source {
    pub host_node: u32,
    /// UDP units become frames; TCP units are written to a connection.
    pub transport: Transport,
    pub host_port: u32,
    rng: Stream,
    /// Empty slots before the next unit.
    gaps: Geometric,
    slot: Time,
    slot_offset: Option<Time>,
    start: Time,
    stop: Time,
    frame: u32,
    unit_bytes: u64,
    /// First slot index not yet used.
    next_slot: u64,
    /// Flow id of each destination, and the destination's host number.
    flows: FlowList,
    /// The unit being handed to the egress queue.
    pending: Pending,
    /// The time of its next unit, when it has no event for it: it waits
    /// for room before that unit is due (`Simulator::park_source`), or
    /// writes to its connection ahead of its events
    /// (`Simulator::park_writer`).
    pub parked: Option<Time>,
}

/// A source's flows: (flow id, destination host number) by position.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowList {
    /// `n` flows numbered from `first`, toward hosts numbered from `host`
    /// in order with one left out (the source's own) at position `skip`:
    /// every other host, the common case, answered without a table that
    /// in a large fabric would cost a cache miss per unit.
    Range {
        first: u32,
        n: u32,
        host: u32,
        skip: u32,
    },
    List(Vec<(u32, u32)>),
}

impl FlowList {
    /// `flows` as a range if it is one.
    pub fn new(flows: Vec<(u32, u32)>) -> FlowList {
        let Some(&(first, host)) = flows.first() else {
            return FlowList::List(flows);
        };
        let n = flows.len() as u32;
        let skip = (0..n)
            .find(|&i| flows[i as usize].1 != host.wrapping_add(i))
            .unwrap_or(n);
        let range = FlowList::Range {
            first,
            n,
            host,
            skip,
        };
        if (0..n).all(|i| range.get(i as usize) == flows[i as usize]) {
            range
        } else {
            FlowList::List(flows)
        }
    }

    pub fn len(&self) -> usize {
        match self {
            FlowList::Range { n, .. } => *n as usize,
            FlowList::List(l) => l.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn get(&self, i: usize) -> (u32, u32) {
        match self {
            FlowList::Range {
                first, host, skip, ..
            } => {
                let i = i as u32;
                (
                    first.wrapping_add(i),
                    host.wrapping_add(i + u32::from(i >= *skip)),
                )
            }
            FlowList::List(l) => l[i],
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Pending {
    flow: u32,
    dst_host: u32,
    remaining: u64,
}

pub struct SourceParams {
    pub host_node: u32,
    pub transport: Transport,
    pub host_port: u32,
    pub rng: Stream,
    /// Empty slots before each unit: Bernoulli trials at the source's load.
    pub gaps: Geometric,
    /// Wire time of one unit at the host's link rate.
    pub slot: Time,
    /// Fixed offset of every unit within its slot; `None` draws one per unit.
    pub slot_offset: Option<Time>,
    pub start: Time,
    pub stop: Time,
    pub frame: u32,
    pub unit_bytes: u64,
    pub flows: Vec<(u32, u32)>,
}

/// Which of a source's `n` flows a unit goes to: uniform, drawn from the
/// source's stream unless it has one flow.
#[inline]
fn unit_flow(rng: &mut Stream, n: usize) -> usize {
    use rand::RngExt;
    if n == 1 {
        0
    } else {
        rng.random_range(0..n)
    }
}

impl Source {
    pub fn new(p: SourceParams) -> Source {
        Source {
            host_node: p.host_node,
            transport: p.transport,
            host_port: p.host_port,
            rng: p.rng,
            gaps: p.gaps,
            slot: p.slot,
            slot_offset: p.slot_offset,
            start: p.start,
            stop: p.stop,
            frame: p.frame,
            unit_bytes: p.unit_bytes,
            next_slot: 0,
            flows: FlowList::new(p.flows),
            pending: Pending::default(),
            parked: None,
        }
    }

    /// Time of the next unit at or after `now`, if before the stop time.
    pub fn next_time(&mut self, now: Time) -> Option<Time> {
        if now > self.start {
            // The first whole slot from `now`. Right after a unit, `now` is
            // within the slot before `next_slot`, and the division is skipped.
            let since = (now - self.start).0;
            if since > self.next_slot.saturating_mul(self.slot.0) {
                self.next_slot = since.div_ceil(self.slot.0);
            }
        }
        let k = self.gaps.sample(&mut self.rng);
        let slot = self.next_slot.checked_add(k)?;
        let offset = match self.slot_offset {
            Some(o) => o.0,
            None => {
                use rand::RngExt;
                self.rng.random_range(0..self.slot.0)
            }
        };
        let t = self
            .start
            .0
            .checked_add(slot.checked_mul(self.slot.0)?)?
            .checked_add(offset)?;
        self.next_slot = slot;
        (t < self.stop.0).then_some(Time(t))
    }

    /// The flow of the next unit, as `produce` will draw it once
    /// `next_time` has drawn the unit's time (a copy of the stream draws
    /// it; the source itself is unchanged).
    #[inline]
    pub fn next_flow(&self) -> u32 {
        let i = unit_flow(&mut self.rng.clone(), self.flows.len());
        self.flows.get(i).0
    }

    /// A unit is produced now (in slot `next_slot`).
    pub fn produce(&mut self) {
        let i = unit_flow(&mut self.rng, self.flows.len());
        let (flow, dst_host) = self.flows.get(i);
        self.pending = Pending {
            flow,
            dst_host,
            remaining: self.unit_bytes,
        };
        self.next_slot += 1;
    }

    /// The next frame of the pending unit: (flow, destination host, bytes).
    #[inline]
    pub fn peek_frame(&self) -> Option<(u32, u32, u32)> {
        let p = &self.pending;
        (p.remaining > 0).then(|| {
            (
                p.flow,
                p.dst_host,
                p.remaining.min(self.frame as u64) as u32,
            )
        })
    }

    /// The first frame of its next unit, for a source of one flow: (flow,
    /// bytes).
    pub fn next_first_frame(&self) -> Option<(u32, u32)> {
        (self.flows.len() == 1).then(|| {
            (
                self.flows.get(0).0,
                self.unit_bytes.min(self.frame as u64) as u32,
            )
        })
    }

    /// The whole pending unit at once (for a TCP connection's send buffer):
    /// (flow, bytes).
    pub fn take_unit(&mut self) -> (u32, u64) {
        let p = std::mem::take(&mut self.pending);
        (p.flow, p.remaining)
    }

    #[inline]
    pub fn consume(&mut self, bytes: u32) {
        self.pending.remaining -= bytes as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;

    fn source(load: f64) -> Source {
        Source::new(params(load))
    }

    fn params(load: f64) -> SourceParams {
        SourceParams {
            host_node: 0,
            host_port: 0,
            transport: Transport::Udp,
            rng: stream(1, 1),
            gaps: Geometric::new(load),
            slot: Time(1_200_000),
            slot_offset: Some(Time::ZERO),
            start: Time::from_ms(5),
            stop: Time::from_ms(85),
            frame: 1500,
            unit_bytes: 1500,
            flows: vec![(0, 0)],
        }
    }

    #[test]
    fn units_fall_on_slot_boundaries_within_start_and_stop() {
        let mut s = source(0.48);
        let mut t = s.next_time(Time::ZERO).unwrap();
        let mut n = 0u64;
        loop {
            assert!(t >= Time::from_ms(5) && t < Time::from_ms(85));
            assert_eq!((t.0 - Time::from_ms(5).0) % 1_200_000, 0);
            s.produce();
            n += 1;
            match s.next_time(t) {
                Some(next) => {
                    assert!(next > t);
                    t = next;
                }
                None => break,
            }
        }
        // 80 ms / 1.2 us = 66,666 slots at p = 0.48: mean 32,000, sd ~129.
        assert!((n as i64 - 32_000).abs() < 700, "{n}");
    }

    #[test]
    fn flows_to_every_other_host_in_order_are_a_range() {
        // Host 2 of 0..=4 sends to the others, flows 10..14.
        let every_other = vec![(10, 0), (11, 1), (12, 3), (13, 4)];
        let range = FlowList::new(every_other.clone());
        assert_eq!(
            range,
            FlowList::Range {
                first: 10,
                n: 4,
                host: 0,
                skip: 2
            }
        );
        let got: Vec<_> = (0..4).map(|i| range.get(i)).collect();
        assert_eq!(got, every_other);
        // The last host sends to all before it; a host to one other.
        assert!(matches!(
            FlowList::new(vec![(0, 0), (1, 1)]),
            FlowList::Range { skip: 2, .. }
        ));
        assert!(matches!(
            FlowList::new(vec![(7, 3)]),
            FlowList::Range { n: 1, .. }
        ));
        // Anything else stays a list, read back as given.
        for list in [
            vec![(10, 0), (11, 1), (12, 3), (13, 5)],
            vec![(10, 0), (12, 1)],
            vec![(10, 1), (11, 0)],
            vec![(10, 0), (11, 2), (12, 4)],
        ] {
            let l = FlowList::new(list.clone());
            assert_eq!(l, FlowList::List(list.clone()));
            assert_eq!((0..list.len()).map(|i| l.get(i)).collect::<Vec<_>>(), list);
        }
    }

    /// `next_flow`, asked once a unit's time is drawn, names the flow
    /// `produce` then draws, unit after unit, and leaves the source's
    /// stream as it was: a source that asks before every unit draws the
    /// same units at the same times as one that never asks.
    #[test]
    fn the_next_flow_is_the_one_produced_and_asking_changes_nothing() {
        // A drawn offset in each slot: the stream serves three draws a unit.
        let many = |rng| {
            Source::new(SourceParams {
                flows: (0..40).map(|i| (100 + 3 * i, i)).collect(),
                rng,
                slot_offset: None,
                ..params(0.3)
            })
        };
        let (mut asked, mut plain) = (many(stream(7, 3)), many(stream(7, 3)));
        let (mut t, mut u) = (Time::ZERO, Time::ZERO);
        let mut flows_seen = std::collections::BTreeSet::new();
        for _ in 0..2_000 {
            // As the engine asks: once the unit's time is drawn.
            t = asked.next_time(t).expect("before the stop");
            u = plain.next_time(u).expect("before the stop");
            assert_eq!(t, u);
            let predicted = asked.next_flow();
            asked.produce();
            plain.produce();
            let (flow, dst, _) = asked.peek_frame().expect("a unit");
            assert_eq!(flow, predicted);
            assert_eq!(plain.peek_frame(), Some((flow, dst, 1500)));
            flows_seen.insert(flow);
        }
        assert_eq!(flows_seen.len(), 40, "the draws cover every flow");
    }

    #[test]
    fn a_resumed_source_never_uses_a_past_slot() {
        let mut s = source(1.0);
        let t0 = s.next_time(Time::ZERO).unwrap();
        assert_eq!(t0, Time::from_ms(5));
        s.produce();
        // Blocked until 5 ms + 3.5 slots: resumes at the next whole slot.
        let t1 = s.next_time(Time(Time::from_ms(5).0 + 4_200_000)).unwrap();
        assert_eq!(t1, Time(Time::from_ms(5).0 + 4 * 1_200_000));
    }
}
