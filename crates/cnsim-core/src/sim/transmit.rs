//! Transmitters and links: starting and ending transmissions, handing
//! frames to the link and to the receiving port.

use super::partition::Message;
use super::{event::Event, Simulator};
use crate::engine::prefetch::prefetch;
use crate::flowctl::pause::PAUSE_FRAME_BYTES;
use crate::flowctl::pfc::PFC_FRAME_BYTES;
use crate::net::ecn::MarkAt;
use crate::net::frame::{Frame, FrameKind};
use crate::net::port::{Owner, TxState};
use crate::units::Time;

impl Simulator {
    /// Start the next transmission if the port is idle.
    #[inline(always)]
    pub(super) fn try_start(&mut self, port: u32) {
        if self.ports[port as usize].tx == TxState::Idle {
            self.start_next(port);
        }
    }

    /// `start_idle` out of line, for the many callers of `try_start`.
    #[inline(never)]
    pub(super) fn start_next(&mut self, port: u32) {
        self.start_idle(port);
    }

    /// Start the next transmission on an idle port: PAUSE and PFC frames
    /// first (a paused transmitter may still send them), then expedited
    /// control frames and data unless paused: the whole port by PAUSE, a
    /// class by PFC. Inlined where a port has just become idle (`tx_done`).
    #[inline(always)]
    pub(super) fn start_idle(&mut self, port: u32) {
        let now = self.now;
        let p = &mut self.ports[port as usize];
        if let Some(q) = p.pause.pending.take() {
            p.tx = TxState::Pause(q);
            let wire = p.rate.tx_time(PAUSE_FRAME_BYTES);
            self.events
                .schedule_after(now, wire, Event::TxDone { port });
            return;
        }
        if let Some(f) = p.take_pfc() {
            p.classes
                .as_deref_mut()
                .expect("a PFC frame waited")
                .pfc_on_wire = f;
            p.tx = TxState::Pfc;
            let wire = p.rate.tx_time(PFC_FRAME_BYTES);
            self.events
                .schedule_after(now, wire, Event::TxDone { port });
            return;
        }
        #[allow(unused_mut)]
        let mut hold = p.pause.paused();
        #[cfg(test)]
        if self.fault == super::invariants::Fault::IgnorePause {
            hold = false;
        }
        if hold {
            return;
        }
        let class_paused = if let Some(f) = p.expedited.front() {
            p.tx = TxState::Expedited;
            let wire = p.tx_time(now, f.size as u64);
            self.events
                .schedule_after(now, wire, Event::TxDone { port });
            false
        } else if let Some((class, size)) = p.start_data() {
            let wire = p.tx_time(now, size as u64);
            self.events
                .schedule_after(now, wire, Event::TxDone { port });
            let paused = p.class_paused(class);
            if self.prefetch_flows && self.to_host[port as usize] {
                self.prefetch_delivery(port);
            }
            paused
        } else {
            return;
        };
        self.check_not_paused(port, class_paused);
    }

    pub(super) fn tx_done(&mut self, port: u32) {
        let now = self.now;
        let pi = port as usize;
        let tx = std::mem::replace(&mut self.ports[pi].tx, TxState::Idle);
        self.frame_hops += 1;
        match tx {
            TxState::Pause(quanta) => self.pause_sent(port, quanta),
            TxState::Pfc => self.pfc_sent(port),
            TxState::Data(class) => {
                #[allow(unused_mut)]
                let (mut frame, before) = self.ports[pi].dequeue(class);
                self.check_dequeue(port, frame.size as u64, before);
                let p = &self.ports[pi];
                let occ = p.occupancy;
                let node = p.node as usize;
                let owner = p.owner;
                let marks = self.ecn_at_dequeue
                    && p.marks_at_dequeue(class)
                    && self.may_mark_leaving(p, class);
                self.queue_tx.add(pi, now, frame.size as u64);
                self.occupancy_changed(pi, occ);
                if marks {
                    self.ecn_mark(port, class, MarkAt::Dequeue, Some(&mut frame));
                }
                self.send_on_link(port, frame);
                match owner {
                    Owner::Switch {
                        shared,
                        counts_input,
                    } => {
                        // The input port's lines are touched only by what
                        // reads them.
                        let inp = frame.in_port();
                        if shared {
                            self.shared_release(node, inp, class, frame.size as u32);
                        }
                        if counts_input {
                            let ip = &mut self.ports[inp as usize];
                            ip.input_occupancy =
                                ip.input_occupancy.saturating_sub(frame.size as u64);
                        }
                        if !shared && self.counts_ingress() && self.ports[pi].classes.is_some() {
                            self.ingress_changed(node, inp, class, -(frame.size as i64));
                        }
                        self.pause_check(node, port, inp);
                    }
                    Owner::Host => self.host_dequeued(node),
                }
            }
            TxState::Expedited => {
                let p = &mut self.ports[pi];
                let frame = p.expedited.pop_front().expect("a frame is on the wire");
                self.queue_tx.add(pi, now, frame.size as u64);
                self.send_on_link(port, frame);
            }
            TxState::Idle => unreachable!("TxDone on an idle port"),
        }
        // Usually still idle (a waiting source may have started it).
        if self.ports[pi].tx == TxState::Idle {
            self.start_idle(port);
        }
    }

    /// The data frame starting on `port`, toward a host: a UDP data
    /// frame is delivered when its last bit leaves (`send_on_link`), so ask
    /// the caches now for what the delivery reads of its flow (a flow's
    /// record, its last frame number and its row of bytes delivered are
    /// lines of tables indexed by flow, which at fabric scale are out of
    /// the caches by then). Only a hint: nothing changes. Other frames
    /// (a connection's segments and ACKs, notifications) ask for nothing:
    /// what they read is elsewhere, and a needless line costs where memory
    /// is what a run waits on. Out of line: inlined, it weighed on the
    /// runs that skip it.
    #[inline(never)]
    fn prefetch_delivery(&self, port: u32) {
        let Some(frame) = self.ports[port as usize].data_on_wire() else {
            return;
        };
        if frame.kind != FrameKind::Data || !self.udp_at_last_bit || self.has_conn(frame.flow) {
            return;
        }
        let f = frame.flow as usize;
        let record = &self.flows[f];
        prefetch(&record.volume.delivered_frames);
        prefetch(&record.latency_sum_ps);
        if let Some(seq) = self.last_seq.get(f) {
            prefetch(seq);
        }
        prefetch(self.flow_rx.current_cell(self.row(f)));
    }

    /// The last bit of `frame` left `port`: it is received at the peer
    /// after the link delay and the receiving node's latency. Arrivals on a
    /// link keep their order (the delay is constant), so the frame waits in
    /// the peer's `arriving` line and the event names only the port.
    ///
    /// A UDP frame toward its destination host is delivered at once, with
    /// its arrival time: nothing at a host reacts to it but DCQCN's
    /// notification point, whose CNP waits for that time in an event of
    /// its own, so the event would only cost time. (E2CM's destination
    /// measurement counts bytes when a probe arrives, so with it frames
    /// take the event.) A frame that would arrive after the end stays on
    /// the link.
    #[inline(always)]
    pub(super) fn send_on_link(&mut self, port: u32, frame: Frame) {
        let pi = port as usize;
        let peer = self.ports[pi].peer;
        let at = self.now + self.to_peer[pi];
        if self.to_host[pi]
            && frame.kind == FrameKind::Data
            && at < self.end
            && self.udp_at_last_bit
            && !self.has_conn(frame.flow)
        {
            let node = self.ports[peer as usize].node as usize;
            #[cfg(feature = "partition-stats")]
            self.pstats_direct(node);
            self.deliver_udp(node, frame, at);
            return;
        }
        if self.ports[pi].peer_remote {
            if matches!(frame.kind, FrameKind::Probe | FrameKind::ProbeReply) {
                self.send_probe_record(peer, &frame);
            }
            self.send_to_partition(Message::Frame {
                port: peer,
                at,
                frame,
            });
            return;
        }
        self.put_on_link(at, peer, frame);
    }

    /// `frame` is on the link into `port` until `at`: beside its arrival's
    /// lane if the lane takes the event (frames then leave `lane_frames` in
    /// the order they joined it, the lane's), else in a slot of
    /// `on_links`.
    #[inline(always)]
    pub(super) fn put_on_link(&mut self, at: Time, port: u32, frame: Frame) {
        let on_links = &mut self.on_links;
        let arrive = Event::Arrive {
            port,
            slot: super::event::ON_LANE,
        };
        let laned = self.events.schedule_or(at, arrive, |ev| {
            let slot = on_links.insert(frame) as u32;
            *ev = Event::Arrive { port, slot };
        });
        if laned {
            self.lane_frames.push_back(frame);
        }
    }

    /// An E2CM probe crosses to another partition at `port`: its record
    /// goes with it (`Message::Probe`).
    #[cold]
    #[inline(never)]
    fn send_probe_record(&mut self, port: u32, frame: &Frame) {
        if let Some(record) = self.scheme.probe_record(frame) {
            self.send_to_partition(Message::Probe {
                port,
                flow: frame.flow,
                index: frame.cpid,
                record: Box::new(record),
            });
        }
    }

    /// A UDP data frame reaches its destination host at `at`.
    pub(super) fn deliver_udp(&mut self, node: usize, frame: Frame, at: Time) {
        let f = frame.flow as usize;
        self.flows[f].deliver(at, frame.created, frame.size as u64);
        #[cfg(test)]
        if self.fault == super::invariants::Fault::DeliverTwice {
            self.flows[f].deliver(at, frame.created, frame.size as u64);
        }
        self.check_delivery(node, frame.flow, frame.udp_seq());
        let row = self.row(f);
        self.flow_rx.add(row, at, frame.size as u64);
        self.scheme_delivered(node, &frame, at);
    }

    /// `frame` takes effect at its flow's source at `at`.
    pub(super) fn schedule_notify(&mut self, at: Time, frame: Frame) {
        let flow = frame.flow;
        let slot = self.parked.insert(frame) as u32;
        self.events.schedule(at, Event::Notify { flow, slot });
    }
}
