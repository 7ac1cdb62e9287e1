//! Hosts: sources hand frames to the adapter, which holds them in rate
//! limiters or per-flow queues and an egress buffer, and wakes waiting
//! sources when room frees up.

use super::{event::Event, Role, Simulator};
use crate::engine::prefetch::prefetch;
use crate::net::frame::{Frame, FrameKind};
use crate::net::rate_limiter::NO_CP;
use crate::units::Time;
use std::collections::VecDeque;

pub(super) struct HostState {
    pub(super) host_number: u32,
    pub(super) port: u32,
    pub(super) egress: Option<u64>,
    pub(super) high: Option<u64>,
    pub(super) low: u64,
    /// Sources stop until occupancy is at or below `low`.
    pub(super) stopped: bool,
    /// Sources and connections waiting for room, in turn: sources for
    /// egress or rate-limiter space, connections for egress space (one
    /// waiting for its own limiter's queue waits there, `ConnWait`).
    pub(super) waiting: VecDeque<Waiter>,
    /// Connections that sent in their turn and have more, during a round
    /// of `retry_waiting` (kept to reuse its memory).
    pub(super) turned: Vec<u32>,
    /// Rate limiters (by flow) waiting for egress space.
    pub(super) stalled: VecDeque<u32>,
    /// Delay before a received notification takes effect.
    pub(super) response_time: Time,
    /// Every flow goes through its own queue (`limiters`), served
    /// round-robin at the line rate; sources never wait.
    pub(super) voq: bool,
    /// Delay from the per-flow queues to the egress buffer.
    pub(super) loop_delay: Time,
    /// Bytes released by the per-flow queues, not yet in the egress buffer.
    pub(super) in_delay: u64,
    /// When the per-flow queue arbiter may release its next frame.
    pub(super) arbiter_free: Time,
    /// An `ArbiterFree` event is pending.
    pub(super) arbiter_wake: bool,
    /// The host's only source, if its one flow is the host's only flow: it
    /// alone may wait here, so it may wait before its unit is due
    /// (`Simulator::park_source`).
    pub(super) lone_source: Option<u32>,
    /// The lone source, alone in `waiting`, waits for its installed rate
    /// limiter's queue, which only a release (that wakes the host) or the
    /// limiter's removal (`note_active`) can drain: a frame leaving the
    /// egress buffer gives it no room, so it need not be woken.
    pub(super) waits_for_limiter: bool,
}

/// The queue a host's data frame enters before the egress buffer.
#[derive(Clone, Copy)]
pub(super) enum LimiterQueue {
    /// The flow's own queue of a host with per-flow queues (unlimited).
    PerFlow,
    /// The queue of the installed rate limiter of this row.
    Limiter(u32),
    /// None: the frame goes straight to the egress buffer.
    None,
}

/// Why a host's adapter has no room for a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Full {
    /// The queue of the flow's installed rate limiter is full.
    Limiter,
    /// The egress buffer is full, or the host has stopped its sources.
    Egress,
}

/// Who waits for room in a host's adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Waiter {
    Source(u32),
    /// A flow's connection (TCP or RoCE), by flow.
    Conn(u32),
}

/// Where a connection waits for room in its host's adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ConnWait {
    No,
    /// In its host's line (`HostState::waiting`), for its turn.
    Line,
    /// For room in its own rate limiter's queue: the limiter's next
    /// release wakes it.
    Limiter,
}

/// What a connection's segments met (`conn_push`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sent {
    /// Nothing to send: no data, or the window is closed.
    Idle,
    /// It sent, and has nothing more to send now.
    Done,
    /// It sent as many as it was allowed and has another ready.
    More,
    /// Its next segment found no room (after sending some, perhaps).
    Full(Full),
}

impl Simulator {
    /// Line rate of a flow's source, bit/s.
    pub(super) fn line_rate(&self, flow: u32) -> f64 {
        let node = self.flow_src_node[flow as usize] as usize;
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("flows start at hosts")
        };
        self.ports[h.port as usize].rate.0 as f64
    }

    /// A limiter back at the line rate is removed once its queue is empty;
    /// the flow's frames then go out untagged.
    #[inline]
    pub(super) fn maybe_release(&mut self, flow: u32) {
        let rl = &self.limiters[flow as usize];
        if rl.active && rl.rate >= rl.line {
            self.release_limiter(flow);
        }
    }

    /// `maybe_release` for a limiter installed at its line rate.
    #[inline(never)]
    fn release_limiter(&mut self, flow: u32) {
        let node = self.flow_src_node[flow as usize] as usize;
        // A per-flow queue stays whatever becomes of its limiter.
        let voq = matches!(&self.roles[node], Role::Host(h) if h.voq);
        if voq || self.limiters[flow as usize].queue.is_empty() {
            self.remove_limiter(flow);
        }
    }

    /// Remove the limiter of `row`: its flow's frames go out untagged, and
    /// the scheme's timers for it lapse (they find it removed).
    pub(super) fn remove_limiter(&mut self, row: u32) {
        let rl = &mut self.limiters[row as usize];
        rl.active = false;
        rl.cpid = NO_CP;
        self.scheme.limiter_removed(row, rl);
        self.note_active(row);
    }

    /// Copy the limiter of `row`'s installed flag into `rl_active`, after
    /// anything that may have changed it. An install or a removal changes
    /// where the flow's frames find room: a parked source looks again.
    #[inline(always)]
    pub(super) fn note_active(&mut self, row: u32) {
        if self.rl_active.contains(row as usize) != self.limiters[row as usize].active {
            self.active_changed(row);
        }
    }

    /// `note_active` when the flag changed.
    #[inline(never)]
    fn active_changed(&mut self, row: u32) {
        let active = self.limiters[row as usize].active;
        self.rl_active.set(row as usize, active);
        let node = self.flow_src_node[row as usize] as usize;
        self.recheck_parked(node);
    }

    /// Whether the limiter of `row` is installed (false for a row without one).
    #[inline]
    fn rl_installed(&self, row: u32) -> bool {
        self.rl_active.contains(row as usize)
    }

    /// Make sure a release event is pending if the limiter has frames to send.
    #[inline]
    pub(super) fn rl_schedule(&mut self, flow: u32) {
        let rl = &self.limiters[flow as usize];
        if rl.scheduled.is_some() || rl.stalled || (rl.queue.is_empty() && !rl.probe_due) {
            return;
        }
        self.rl_schedule_release(flow);
    }

    /// `rl_schedule` when an event is due.
    #[inline(never)]
    fn rl_schedule_release(&mut self, flow: u32) {
        let rl = &mut self.limiters[flow as usize];
        let t = rl.next_allowed.max(self.now);
        rl.scheduled = Some(t);
        self.events.schedule(t, Event::RlRelease { flow });
    }

    /// Release the limiter's head frame into its host's egress queue, if
    /// its time has come and the egress queue has room.
    pub(super) fn rl_release(&mut self, flow: u32) {
        let now = self.now;
        let f = flow as usize;
        let rl = &mut self.limiters[f];
        rl.scheduled = None;
        if now < rl.next_allowed {
            // A BCN(0,0) pushed the next release later.
            self.rl_schedule(flow);
            return;
        }
        let size = match (rl.probe_due, rl.queue.front()) {
            (true, _) => self.scheme.probe_bytes(),
            (false, Some(head)) => head.size as u32,
            (false, None) => return,
        };
        let node = self.flow_src_node[f] as usize;
        let arbiter_busy = matches!(&self.roles[node], Role::Host(h) if h.arbiter_free > now);
        if arbiter_busy || !self.egress_has_room(node, size) {
            self.limiters[f].stalled = true;
            if let Role::Host(h) = &mut self.roles[node] {
                h.stalled.push_back(flow);
            }
            self.wake_arbiter(node);
            return;
        }
        #[cfg(test)]
        if self.fault == super::invariants::Fault::RateAboveLine && self.limiters[f].active {
            self.limiters[f].rate = 2.0 * self.line_rate(flow);
        }
        if self.limiters[f].active {
            self.check_rate(flow);
            let rl = &mut self.limiters[f];
            rl.next_allowed = now + rl.gap(size as u64);
        }
        let rl = &mut self.limiters[f];
        if rl.probe_due {
            rl.probe_due = false;
            self.send_probe(node, flow);
        } else {
            let mut frame = rl.queue.pop_front_rewound().expect("a head frame");
            rl.bytes -= frame.size as u64;
            frame.cpid = rl.cpid;
            let bytes = rl.bytes;
            if let Some(row) = self.limiter_row(f) {
                self.rl_occ.set(row, now, bytes);
            }
            self.release_to_egress(node, frame);
            self.cm_released(flow, frame.size);
        }
        self.rl_schedule(flow);
        self.maybe_release(flow);
        if self.conn_waits_for_limiter(flow) {
            self.send_end(flow).wait = ConnWait::No;
            self.conn_send(flow);
        }
        self.wake_sources(node);
    }

    /// Hand the source's pending unit to its host: into the flow's rate
    /// limiter if it has one, else into the egress queue. False if there is
    /// no room and the source now waits.
    pub(super) fn source_push(&mut self, s: u32) -> bool {
        let now = self.now;
        let node = self.sources[s as usize].host_node as usize;
        let port = self.sources[s as usize].host_port;
        while let Some((flow, dst_host, size)) = self.sources[s as usize].peek_frame() {
            let place = match self.adapter_room(node, flow, size) {
                Ok(place) => place,
                Err(full) => {
                    let for_limiter = full == Full::Limiter;
                    if let Role::Host(h) = &mut self.roles[node] {
                        h.waiting.push_back(Waiter::Source(s));
                        h.waits_for_limiter =
                            for_limiter && h.lone_source == Some(s) && h.waiting.len() == 1;
                    }
                    // Frames handed over before the stop may sit on an idle link.
                    self.try_start(port);
                    return false;
                }
            };
            // The frame's number in its flow is the count of frames offered
            // before it, in 32 bits (it wraps; the count itself does not).
            let offered = self.flows[flow as usize].volume.offered_frames;
            if offered == 0 && self.scheme.probes_at_flow_start() {
                self.probe_at_flow_start(flow);
            }
            let tag = self.data_tag(port, flow);
            let frame = Frame {
                created: now,
                flow,
                dst_host,
                tag,
                cpid: NO_CP,
                aux: offered as u32,
                size: size as u16,
                kind: FrameKind::Data,
                qfb: 0,
            };
            self.sources[s as usize].consume(size);
            self.flows[flow as usize].volume.offer(size as u64);
            let row = self.row(flow as usize);
            self.flow_tx.add(row, now, size as u64);
            self.adapter_enqueue(node, frame, place);
        }
        self.try_start(port);
        true
    }

    /// A probe leaves with the flow's first frame, through the flow's rate
    /// limiter (installed or not), which sends a due probe first as soon
    /// as its host's adapter has room.
    fn probe_at_flow_start(&mut self, flow: u32) {
        let row = self.limiter_of(flow);
        self.limiters[row as usize].probe_due = true;
        self.rl_schedule(row);
    }

    /// Does a frame of `flow` fit in its host's adapter: in the flow's
    /// queue (per-flow queues are unlimited; a rate limiter's is not), or
    /// else in the egress buffer? Where it goes if it does, for
    /// `adapter_enqueue`, else what is full.
    #[inline]
    pub(super) fn adapter_room(
        &self,
        node: usize,
        flow: u32,
        size: u32,
    ) -> Result<LimiterQueue, Full> {
        let egress = |sim: &Simulator| {
            if sim.egress_has_room(node, size) {
                Ok(LimiterQueue::None)
            } else {
                Err(Full::Egress)
            }
        };
        if self.limiters.is_empty() {
            return egress(self);
        }
        match self.limiter_queue_of(node, flow) {
            LimiterQueue::PerFlow => Ok(LimiterQueue::PerFlow),
            LimiterQueue::Limiter(row) if !self.limiter_fits(row, size) => Err(Full::Limiter),
            LimiterQueue::Limiter(_) if self.host_stopped(node) => Err(Full::Egress),
            place @ LimiterQueue::Limiter(_) => Ok(place),
            LimiterQueue::None => egress(self),
        }
    }

    /// `adapter_room` as a yes or no.
    #[inline]
    pub(super) fn adapter_has_room(&self, node: usize, flow: u32, size: u32) -> bool {
        self.adapter_room(node, flow, size).is_ok()
    }

    /// Is `flow`'s frame of `size` held back by its installed rate
    /// limiter's full queue (so that `adapter_has_room` is false)?
    fn limiter_full(&self, node: usize, flow: u32, size: u32) -> bool {
        matches!(self.adapter_room(node, flow, size), Err(Full::Limiter))
    }

    /// Which of its host's queues a frame of `flow` enters before the
    /// egress buffer (the run has limiters).
    #[inline]
    fn limiter_queue_of(&self, node: usize, flow: u32) -> LimiterQueue {
        if matches!(&self.roles[node], Role::Host(h) if h.voq) {
            return LimiterQueue::PerFlow;
        }
        let row = self.limiter_of(flow);
        if self.rl_installed(row) {
            LimiterQueue::Limiter(row)
        } else {
            LimiterQueue::None
        }
    }

    /// Does a frame of `size` fit in the queue of the limiter of `row`?
    #[inline]
    fn limiter_fits(&self, row: u32, size: u32) -> bool {
        self.limiters[row as usize].bytes + size as u64 <= self.scheme.limiter_queue().0
    }

    /// Hand a data frame to the queue `adapter_room` found room in: its
    /// flow's queue if it has one, else the egress buffer.
    pub(super) fn adapter_enqueue(&mut self, node: usize, frame: Frame, place: LimiterQueue) {
        if let LimiterQueue::None = place {
            self.egress_enqueue(node, frame);
        } else {
            let l = self.limiter_of(frame.flow);
            let f = l as usize;
            let rl = &mut self.limiters[f];
            rl.queue.push_back(frame);
            rl.bytes += frame.size as u64;
            let bytes = rl.bytes;
            if let Some(row) = self.limiter_row(f) {
                self.rl_occ.set(row, self.now, bytes);
            }
            self.rl_schedule(l);
        }
    }

    /// The limiter row a flow's frames go through.
    #[inline]
    pub(super) fn limiter_of(&self, flow: u32) -> u32 {
        self.flow_rl.get(flow as usize).copied().unwrap_or(flow)
    }

    pub(super) fn host_stopped(&self, node: usize) -> bool {
        matches!(&self.roles[node], Role::Host(h) if h.stopped)
    }

    /// Can the host's egress queue take a frame of `size` bytes?
    #[inline]
    pub(super) fn egress_has_room(&self, node: usize, size: u32) -> bool {
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("egress queues belong to hosts")
        };
        let p = &self.ports[h.port as usize];
        !h.stopped
            && h.egress
                .is_none_or(|cap| p.occupancy + h.in_delay + size as u64 <= cap)
    }

    /// Hand a frame released by a flow's queue to the egress buffer, after
    /// the host's loop delay; the arbiter is busy for its wire time.
    pub(super) fn release_to_egress(&mut self, node: usize, frame: Frame) {
        let Role::Host(h) = &mut self.roles[node] else {
            unreachable!("egress queues belong to hosts")
        };
        if h.voq {
            h.arbiter_free = self.now + self.ports[h.port as usize].rate.tx_time(frame.size as u64);
        }
        if h.loop_delay == Time::ZERO {
            self.egress_enqueue(node, frame);
        } else {
            h.in_delay += frame.size as u64;
            let at = self.now + h.loop_delay;
            let node = node as u32;
            let slot = self.parked.insert(frame) as u32;
            self.events.schedule(at, Event::EgressArrive { node, slot });
        }
    }

    /// Put a frame in the host's egress queue (room was checked) and start
    /// the transmitter if it is idle.
    pub(super) fn egress_enqueue(&mut self, node: usize, frame: Frame) {
        let Role::Host(h) = &mut self.roles[node] else {
            unreachable!("egress queues belong to hosts")
        };
        let port = h.port;
        let p = &mut self.ports[port as usize];
        p.enqueue(frame);
        if h.high.is_some_and(|hi| p.occupancy >= hi) {
            h.stopped = true;
        }
        let occ = p.occupancy;
        self.occupancy_changed(port as usize, occ);
        self.try_start(port);
    }

    pub(super) fn schedule_next_unit(&mut self, s: u32) {
        if let Some(t) = self.sources[s as usize].next_time(self.now) {
            if !self.conn_writer.is_empty() && self.park_writer(s, t) {
                return;
            }
            // Only a rate limiter's queue parks a UDP source.
            if self.limiters.is_empty() || !self.park_source(s, t) {
                self.events.schedule(t, Event::SourceFire { source: s });
            }
            if self.prefetch_flows {
                self.prefetch_next_unit(s);
            }
        }
    }

    /// Ask the caches for what source `s`'s next unit will update of its
    /// flow (`Simulator::prefetch_flows`): the flow's counters and its
    /// cell of bytes sent, read when the unit is pushed, one gap from now.
    /// Out of line, as `prefetch_delivery`.
    #[inline(never)]
    fn prefetch_next_unit(&self, s: u32) {
        let f = self.sources[s as usize].next_flow() as usize;
        prefetch(&self.flows[f].volume.offered_frames);
        prefetch(self.flow_tx.current_cell(self.row(f)));
    }

    /// A host's lone source whose next unit, due at `t`, finds its rate
    /// limiter's queue full now waits at once, without the event that
    /// would most likely find it full still (the limiter is slower than
    /// the source; a full egress buffer, which drains at the source's
    /// line rate, is not worth it):
    /// nothing can make room without waking it (`retry_waiting`) or
    /// changing its limiter (`note_active`), and then it takes that event
    /// after all (`recheck_parked`) or, when its unit came due meanwhile,
    /// sends it as a source that had been waiting since `t`. A source
    /// held back by its rate limiter costs one event per unit, not two.
    /// False (nothing done) for any other source or when there is room.
    fn park_source(&mut self, s: u32, t: Time) -> bool {
        let src = &self.sources[s as usize];
        let node = src.host_node as usize;
        if !matches!(&self.roles[node], Role::Host(h) if h.lone_source == Some(s)) {
            return false;
        }
        let Some((flow, size)) = src.next_first_frame() else {
            return false;
        };
        if !self.limiter_full(node, flow, size) {
            return false;
        }
        self.sources[s as usize].parked = Some(t);
        if let Role::Host(h) = &mut self.roles[node] {
            h.waiting.push_back(Waiter::Source(s));
            h.waits_for_limiter = h.waiting.len() == 1;
        }
        true
    }

    /// Room may have appeared for the parked source of host `node` (its
    /// limiter was installed or removed).
    fn recheck_parked(&mut self, node: usize) {
        let Role::Host(h) = &mut self.roles[node] else {
            return;
        };
        h.waits_for_limiter = false;
        let Some(s) = h.lone_source else {
            return;
        };
        let Some(t) = self.sources[s as usize].parked else {
            return;
        };
        if self.try_unpark(node, s, t) {
            if let Role::Host(h) = &mut self.roles[node] {
                h.waiting.retain(|&w| w != Waiter::Source(s));
            }
        }
    }

    /// A parked source `s` whose unit is due at `t`, not before now, with
    /// room now takes the event it would have had (sources produce after
    /// every other event of an instant, so a unit due now still has its
    /// event ahead); true if so. The caller takes it out of the waiting
    /// line. A unit due earlier found no room then: its source waits to be
    /// woken, as it would have.
    fn try_unpark(&mut self, node: usize, s: u32, t: Time) -> bool {
        let Some((flow, size)) = self.sources[s as usize].next_first_frame() else {
            return false;
        };
        if t < self.now || !self.adapter_has_room(node, flow, size) {
            return false;
        }
        self.sources[s as usize].parked = None;
        self.events.schedule(t, Event::SourceFire { source: s });
        true
    }

    /// Space freed in a host's egress queue: stalled rate limiters go
    /// first (their frames were produced earlier), then waiting sources.
    pub(super) fn host_dequeued(&mut self, node: usize) {
        let Role::Host(h) = &mut self.roles[node] else {
            return;
        };
        if h.stopped && self.ports[h.port as usize].occupancy <= h.low {
            h.stopped = false;
        }
        // Only rate limiters stall (and a busy arbiter needs its wake).
        if !self.limiters.is_empty() && (!h.stalled.is_empty() || h.arbiter_free > self.now) {
            self.serve_stalled(node);
        }
        if !matches!(&self.roles[node], Role::Host(h) if h.waits_for_limiter) {
            self.wake_sources(node);
        }
    }

    /// Release frames of stalled flows in the order they stalled, while the
    /// egress buffer has room and the arbiter is free.
    pub(super) fn serve_stalled(&mut self, node: usize) {
        while let Role::Host(h) = &mut self.roles[node] {
            if h.arbiter_free > self.now {
                self.wake_arbiter(node);
                return;
            }
            let Some(flow) = h.stalled.pop_front() else {
                return;
            };
            self.limiters[flow as usize].stalled = false;
            self.rl_release(flow);
            if self.limiters[flow as usize].stalled {
                // Still no room; it went back to the end of the line.
                return;
            }
        }
    }

    /// Make sure the stalled flows are served when the arbiter is free.
    pub(super) fn wake_arbiter(&mut self, node: usize) {
        let Role::Host(h) = &mut self.roles[node] else {
            return;
        };
        if !h.arbiter_wake && h.arbiter_free > self.now {
            h.arbiter_wake = true;
            let t = h.arbiter_free;
            self.events
                .schedule(t, Event::ArbiterFree { node: node as u32 });
        }
    }

    /// Let every waiting source and TCP sender of the host try again, in
    /// the order they blocked; those that still find no room wait again in
    /// the same order.
    #[inline(always)]
    pub(super) fn wake_sources(&mut self, node: usize) {
        if matches!(&self.roles[node], Role::Host(h) if !h.waiting.is_empty()) {
            self.retry_waiting(node);
        }
    }

    /// `wake_sources` when someone waits. Room is served in turn, as a
    /// NIC's transmit scheduler serves its queue pairs round-robin: each
    /// waiter in the line's order gets one try; a connection sends one
    /// segment and, if it has another, waits again behind the others. A
    /// connection whose segment finds no room in the egress buffer ends
    /// the round and keeps its turn (those behind it would wait for the
    /// same room). Rounds repeat while connections send and the egress
    /// buffer has room.
    pub(super) fn retry_waiting(&mut self, node: usize) {
        let Role::Host(h) = &mut self.roles[node] else {
            return;
        };
        h.waits_for_limiter = false;
        let mut turned = std::mem::take(&mut h.turned);
        loop {
            let (ended, sent) = self.retry_round(node, &mut turned);
            let room = sent && !ended && self.egress_has_room(node, 1);
            let Role::Host(h) = &mut self.roles[node] else {
                return;
            };
            h.waiting.extend(turned.drain(..).map(Waiter::Conn));
            if !room || h.waiting.is_empty() {
                h.turned = turned;
                return;
            }
        }
    }

    /// One round of `retry_waiting` over the line as it stands: whether a
    /// connection ended it, and whether a connection sent.
    fn retry_round(&mut self, node: usize, turned: &mut Vec<u32>) -> (bool, bool) {
        let Role::Host(h) = &self.roles[node] else {
            return (true, false);
        };
        let n = h.waiting.len();
        let mut sent = false;
        for i in 0..n {
            let Role::Host(h) = &mut self.roles[node] else {
                return (true, sent);
            };
            match h.waiting.pop_front() {
                None => break,
                Some(Waiter::Source(s)) => {
                    if let Some(t) = self.sources[s as usize].parked {
                        if t >= self.now {
                            // Its unit is not due yet: it takes its event
                            // if there is room now, else waits on.
                            if !self.try_unpark(node, s, t) {
                                if let Role::Host(h) = &mut self.roles[node] {
                                    h.waiting.push_back(Waiter::Source(s));
                                }
                            }
                            continue;
                        }
                        // Due at `t` with no room then: produced then.
                        let src = &mut self.sources[s as usize];
                        src.parked = None;
                        src.produce();
                    }
                    if self.source_push(s) {
                        self.schedule_next_unit(s);
                    }
                }
                Some(Waiter::Conn(flow)) => match self.conn_turn(flow) {
                    Sent::Idle => {}
                    Sent::Done => sent = true,
                    Sent::More => {
                        sent = true;
                        self.send_end(flow).wait = ConnWait::Line;
                        turned.push(flow);
                    }
                    Sent::Full(Full::Limiter) => self.conn_wait_for(flow, Full::Limiter),
                    Sent::Full(Full::Egress) => {
                        // Back in its place: behind the waiters that went
                        // round (they were ahead of it), before the rest.
                        self.send_end(flow).wait = ConnWait::Line;
                        if let Role::Host(h) = &mut self.roles[node] {
                            let went_round = h.waiting.len() - (n - 1 - i);
                            if went_round > 0 {
                                h.waiting.rotate_right(went_round);
                            }
                            h.waiting.insert(went_round, Waiter::Conn(flow));
                        }
                        return (true, sent);
                    }
                },
            }
        }
        (false, sent)
    }
}
