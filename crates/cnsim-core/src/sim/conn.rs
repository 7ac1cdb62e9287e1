//! Connections in the running network, one per TCP or RoCE flow,
//! established at time zero (no handshake). Segments enter the adapter like
//! any data frame (the flow's rate limiter, else the egress buffer); when
//! there is no room the sender waits in its host's line, nothing is dropped
//! at the host. ACKs are frames on the reverse path, queued in the
//! receiver's egress buffer without a room check (they are small and must
//! not deadlock the sender they release).
//!
//! Each end of a connection holds state only while it is open: from its
//! first byte written (or segment received) until, for a workload flow,
//! its part is over. A workload flow's sender is done when every byte is
//! acknowledged and it waits for nothing; its receiver, when it has just
//! acknowledged every byte. A done end gives its state back and keeps its
//! finished form, which answers the copies of segments and the ACKs that
//! may still arrive as the full state machine would (`SenderDone`,
//! `ReceiverDone`): a run's memory follows the flows in progress, not all
//! the flows it has seen.

use super::adapter::{ConnWait, Full, Sent};
use super::{Event, Role, Simulator, Waiter};
use crate::engine::lazy_timer;
use crate::metrics::series::{BinnedLevel, BinnedSum};
use crate::net::ecn::Ecn;
use crate::net::frame::{Frame, FrameKind, ROCE_NAK, TCP_CWR, TCP_ECE};
use crate::net::rate_limiter::NO_CP;
use crate::results::FlowCounters;
use crate::scenario::spec::{FlowSpec, Scenario};
use crate::transport::roce::RoceParams;
use crate::transport::tcp::TcpParams;
use crate::transport::{
    AckAction, AckFlags, ConnParams, ConnStats, Receiver, ReceiverDone, Sender, Transport,
};
use crate::units::Time;
use std::collections::BTreeMap;

/// One end of a flow's connection in this simulator: not opened yet,
/// open (its state at this index of `Simulator::senders` or
/// `receivers`), or done, reduced to its finished form `D`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum End<D> {
    Closed,
    Open(u32),
    Done(D),
}

/// An open sending end: the sender, the time of its pending `ConnRto`
/// event, and where it waits for room.
pub(super) struct SendEnd {
    pub(super) tx: Sender,
    rto_at: Option<Time>,
    pub(super) wait: ConnWait,
}

/// An open receiving end: the receiver and the time of its pending
/// `ConnAck` event.
pub(super) struct RecvEnd {
    pub(super) rx: Receiver,
    ack_at: Option<Time>,
}

/// `Simulator::conn_writer` of a flow without a single writing source.
pub(super) const NO_WRITER: u32 = u32::MAX;

impl Simulator {
    /// `flow`'s transport parameters.
    #[inline]
    pub(super) fn conn_params(&self, flow: usize) -> ConnParams {
        self.conn_param_sets[self.conn_param_of[flow] as usize]
    }

    /// Per flow: its transport's parameters (the payload per segment from
    /// the source's frame), sender and receiver. A UDP flow gets TCP's
    /// (or RoCE's) and never uses them, so every vector is indexed by flow.
    pub(super) fn init_conns(
        &mut self,
        sc: &Scenario,
        flows: &[FlowSpec],
        tcp: Option<TcpParams>,
        roce_params: Option<RoceParams>,
        n_bins: usize,
        n_rows: usize,
    ) {
        let n = flows.len();
        self.flow_conn = flows.iter().map(|f| f.transport.is_connection()).collect();
        // A flow's parameters follow from its transport and frame size:
        // one set for each pair the flows have.
        let mut set_of: BTreeMap<(bool, u32), u32> = BTreeMap::new();
        let mut sets = Vec::new();
        self.conn_param_of = flows
            .iter()
            .map(|f| {
                let frame = f.frame;
                let roce =
                    roce_params.is_some() && (f.transport == Transport::Roce || tcp.is_none());
                *set_of.entry((roce, frame)).or_insert_with(|| {
                    sets.push(match (roce, tcp, roce_params) {
                        (true, _, Some(rp)) => ConnParams::Roce(RoceParams {
                            mtu: frame.saturating_sub(rp.header).max(1),
                            ..rp
                        }),
                        (false, Some(tp), _) => ConnParams::Tcp(TcpParams {
                            mss: frame.saturating_sub(tp.header).max(1),
                            ..tp
                        }),
                        _ => unreachable!("called with a transport"),
                    });
                    sets.len() as u32 - 1
                })
            })
            .collect();
        self.conn_param_sets = sets;
        self.conn_sending = vec![End::Closed; n];
        self.conn_receiving = vec![End::Closed; n];
        self.conn_dst_node = flows.iter().map(|f| f.dst as u32).collect();
        self.tcp_cwnd = BinnedLevel::new(n_rows, n_bins, sc.bin);
        self.conn_retx = BinnedSum::new(n_rows, n_bins, sc.bin);
        self.conn_timeouts = BinnedSum::new(n_rows, n_bins, sc.bin);
        // A workload's row holds no level (see `finish`).
        for f in 0..(self.workload.first as usize).min(n) {
            if !self.flow_conn[f] {
                continue;
            }
            // A sender's levels before it opens: a new one's.
            let p = self.conn_params(f);
            let fresh = Sender::new(&p);
            if let Some(cwnd) = fresh.cwnd() {
                self.tcp_cwnd.set(f, Time::ZERO, cwnd);
            }
            if let Some(alpha) = fresh.dctcp_alpha(&p) {
                self.set_alpha(f, alpha);
            }
        }
    }

    /// `flow`'s open sending end, opened if it was not (a done one sends
    /// nothing more: callers take the late paths first).
    #[inline]
    pub(super) fn send_end(&mut self, flow: u32) -> &mut SendEnd {
        let i = self.send_index(flow);
        &mut self.senders[i]
    }

    /// Where `flow`'s open sending end is in `senders` (see `send_end`).
    #[inline]
    fn send_index(&mut self, flow: u32) -> usize {
        (match self.conn_sending[flow as usize] {
            End::Open(i) => i,
            End::Closed => self.open_send_end(flow),
            End::Done(_) => unreachable!("flow {flow}'s sender is done"),
        }) as usize
    }

    #[cold]
    fn open_send_end(&mut self, flow: u32) -> u32 {
        let tx = Sender::new(&self.conn_params(flow as usize));
        let i = self.senders.insert(SendEnd {
            tx,
            rto_at: None,
            wait: ConnWait::No,
        }) as u32;
        self.conn_sending[flow as usize] = End::Open(i);
        i
    }

    /// `flow`'s open receiving end, opened if it was not.
    #[inline]
    fn recv_end(&mut self, flow: u32) -> &mut RecvEnd {
        let i = self.recv_index(flow);
        &mut self.receivers[i]
    }

    /// Where `flow`'s open receiving end is in `receivers`.
    #[inline]
    fn recv_index(&mut self, flow: u32) -> usize {
        (match self.conn_receiving[flow as usize] {
            End::Open(i) => i,
            End::Closed => self.open_recv_end(flow),
            End::Done(_) => unreachable!("flow {flow}'s receiver is done"),
        }) as usize
    }

    #[cold]
    fn open_recv_end(&mut self, flow: u32) -> u32 {
        let rx = Receiver::new(&self.conn_params(flow as usize));
        let i = self.receivers.insert(RecvEnd { rx, ack_at: None }) as u32;
        self.conn_receiving[flow as usize] = End::Open(i);
        i
    }

    /// `flow`'s sender, if open.
    #[inline]
    fn sender(&self, flow: u32) -> Option<&Sender> {
        match self.conn_sending.get(flow as usize) {
            Some(&End::Open(i)) => Some(&self.senders[i as usize].tx),
            _ => None,
        }
    }

    /// `flow` has every byte it was given acknowledged at its sender.
    #[inline]
    pub(super) fn conn_all_acked(&self, flow: u32) -> bool {
        match self.conn_sending[flow as usize] {
            End::Done(_) => true,
            End::Open(i) => self.senders[i as usize].tx.all_acked(),
            End::Closed => false,
        }
    }

    /// `flow` waits for room in its own limiter's queue.
    #[inline]
    pub(super) fn conn_waits_for_limiter(&self, flow: u32) -> bool {
        match self.conn_sending.get(flow as usize) {
            Some(&End::Open(i)) => self.senders[i as usize].wait == ConnWait::Limiter,
            _ => false,
        }
    }

    #[inline]
    pub(super) fn has_conn(&self, flow: u32) -> bool {
        self.flow_conn.get(flow as usize).copied().unwrap_or(false)
    }

    pub(super) fn source_transport(&self, s: u32) -> Transport {
        self.sources[s as usize].transport
    }

    /// The source's application wrote a unit: append it to the connection.
    pub(super) fn conn_write(&mut self, s: u32) {
        let (flow, bytes) = self.sources[s as usize].take_unit();
        self.conn_offer(flow, bytes);
    }

    /// The application of `flow` writes `bytes` to its connection.
    pub(super) fn conn_offer(&mut self, flow: u32, bytes: u64) {
        self.conn_append(flow, bytes, self.now);
        self.conn_send(flow);
    }

    /// `bytes` written to `flow`'s send buffer at `at`, and counted.
    #[inline(always)]
    fn conn_append(&mut self, flow: u32, bytes: u64, at: Time) {
        self.send_end(flow).tx.write(bytes);
        self.count_written(flow, bytes, at);
    }

    /// `bytes` offered by `flow`'s application at `at`, counted.
    #[inline(always)]
    fn count_written(&mut self, flow: u32, bytes: u64, at: Time) {
        let f = flow as usize;
        self.flows[f].volume.offer(bytes);
        let row = self.row(f);
        self.flow_tx.add(row, at, bytes);
    }

    /// Send what the window allows while the adapter has room, then make
    /// sure the retransmission timer has an event. A sender that waits for
    /// room sends when its wait ends (`retry_waiting`, or its limiter's
    /// release), not before.
    pub(super) fn conn_send(&mut self, flow: u32) {
        let i = self.send_index(flow);
        self.conn_send_at(flow, i);
    }

    /// `conn_send` of the sender at `i`.
    #[inline]
    fn conn_send_at(&mut self, flow: u32, i: usize) {
        if !self.conn_writer.is_empty() {
            self.catch_up_writer(flow, self.now);
        }
        if self.senders[i].wait == ConnWait::No {
            if let Sent::Full(full) = self.conn_push(flow, i, u32::MAX) {
                self.conn_wait_for(flow, full);
            }
        }
        self.conn_sent(flow, i);
    }

    /// `flow`'s turn in its host's line (`retry_waiting`): one segment.
    /// The caller places it again if it has to wait.
    pub(super) fn conn_turn(&mut self, flow: u32) -> Sent {
        let i = self.send_index(flow);
        self.senders[i].wait = ConnWait::No;
        if !self.conn_writer.is_empty() {
            self.catch_up_writer(flow, self.now);
        }
        let sent = self.conn_push(flow, i, 1);
        // Sending nothing changed nothing `conn_sent` looks at; but with
        // nothing to send, the ACK of every byte may have come while it
        // waited.
        if matches!(sent, Sent::Done | Sent::More) {
            self.conn_sent(flow, i);
        } else if sent == Sent::Idle {
            self.end_sender_if_done(flow);
        }
        sent
    }

    /// `flow` waits for room: in its own limiter's queue, which its
    /// releases free (`rl_release` wakes it), or else in its host's line.
    pub(super) fn conn_wait_for(&mut self, flow: u32, full: Full) {
        let f = flow as usize;
        if full == Full::Limiter && self.limiter_of(flow) == flow {
            self.send_end(flow).wait = ConnWait::Limiter;
            return;
        }
        self.send_end(flow).wait = ConnWait::Line;
        let node = self.flow_src_node[f] as usize;
        if let Role::Host(h) = &mut self.roles[node] {
            h.waiting.push_back(Waiter::Conn(flow));
        }
    }

    /// Hand at most `most` of `flow`'s segments to the adapter, while it
    /// has room and the window allows (`i`: its sender's index).
    fn conn_push(&mut self, flow: u32, i: usize, most: u32) -> Sent {
        let now = self.now;
        let f = flow as usize;
        let p = self.conn_params(f);
        let node = self.flow_src_node[f] as usize;
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("flows start at hosts")
        };
        let port = h.port;
        let mut sent = Sent::Idle;
        for _ in 0..most {
            let Some(len) = self.senders[i].tx.peek(&p) else {
                return sent;
            };
            let size = len + p.header();
            let place = match self.adapter_room(node, flow, size) {
                Ok(place) => place,
                Err(full) => return Sent::Full(full),
            };
            let seg = self.senders[i]
                .tx
                .next_segment(&p, now)
                .expect("the sender offered a segment");
            if seg.retransmission {
                let row = self.row(f);
                self.conn_retx.add(row, now, 1);
            }
            let ecn = if seg.ect { Ecn::Ect0 } else { Ecn::NotEct };
            let cwr = if seg.cwr { TCP_CWR } else { 0 };
            let frame = Frame {
                created: now,
                flow,
                dst_host: self.flow_dst_host[f],
                tag: Frame::tag_ecn(port, self.flow_class[f], ecn) | cwr,
                cpid: NO_CP,
                aux: Frame::pack_wire_seq(seg.seq),
                size: size as u16,
                kind: FrameKind::Data,
                qfb: 0,
            };
            self.adapter_enqueue(node, frame, place);
            sent = Sent::Done;
        }
        if self.senders[i].tx.peek(&p).is_some() {
            Sent::More
        } else {
            sent
        }
    }

    /// After `flow` sent (or tried): start an idle transmitter, arm the
    /// retransmission timer, let a parked writer write again.
    fn conn_sent(&mut self, flow: u32, i: usize) {
        let node = self.flow_src_node[flow as usize] as usize;
        if let Role::Host(h) = &self.roles[node] {
            let port = h.port;
            self.try_start(port);
        }
        self.conn_arm_rto(flow, i);
        if !self.conn_writer.is_empty() {
            self.wake_writer(flow);
        }
    }

    /// Whether a write to `flow` now would change nothing its connection
    /// does: a full segment is unsent already, so the segment it offers
    /// next is the same with more data behind it.
    #[inline]
    fn write_is_inert(&self, f: usize) -> bool {
        self.sender(f as u32)
            .is_some_and(|tx| tx.unsent() >= self.conn_params(f).payload() as u64)
    }

    /// The only writer `s` of a connection that holds a full unsent
    /// segment, its unit written, waits for its next unit (due at `t`)
    /// without an event; true if so. Its event would only write: the
    /// write is inert (`write_is_inert`), and the `conn_send` after it
    /// finds what the last one left (every change that lets a connection
    /// send calls `conn_send`). The units come due in `catch_up_writer`,
    /// before the connection next sends; it takes its events again once
    /// less than a segment is unsent (`wake_writer`).
    pub(super) fn park_writer(&mut self, s: u32, t: Time) -> bool {
        let Some((flow, _)) = self.sources[s as usize].next_first_frame() else {
            return false;
        };
        if self.conn_writer[flow as usize] != s || !self.write_is_inert(flow as usize) {
            return false;
        }
        self.sources[s as usize].parked = Some(t);
        true
    }

    /// Write the units of `flow`'s parked writer that came due before
    /// `horizon`, each counted at its own time, as its events would have
    /// (nothing was sent since it parked, so each was inert).
    #[inline]
    fn catch_up_writer(&mut self, flow: u32, horizon: Time) {
        let s = self.conn_writer[flow as usize];
        if s == NO_WRITER {
            return;
        }
        // Nothing reads the send buffer in between: one write of them all.
        let mut written = 0;
        while let Some(t) = self.sources[s as usize].parked.filter(|&t| t < horizon) {
            let src = &mut self.sources[s as usize];
            src.produce();
            let (_, bytes) = src.take_unit();
            src.parked = src.next_time(t);
            self.count_written(flow, bytes, t);
            written += bytes;
        }
        if written > 0 {
            self.send_end(flow).tx.write(written);
        }
    }

    /// After `flow` sent: its parked writer takes its next event again
    /// once the connection has less than a segment unsent (its unit is
    /// due now or later: the catch-up wrote those due before now).
    #[inline]
    fn wake_writer(&mut self, flow: u32) {
        let s = self.conn_writer[flow as usize];
        if s == NO_WRITER || self.write_is_inert(flow as usize) {
            return;
        }
        if let Some(t) = self.sources[s as usize].parked.take() {
            self.events.schedule(t, Event::SourceFire { source: s });
        }
    }

    /// Units of parked writers due before the end are written at the end.
    pub(super) fn catch_up_writers(&mut self) {
        if self.conn_writer.is_empty() {
            return;
        }
        let horizon = self.halt.map_or(self.end, |h| h.min(self.end));
        for flow in 0..self.conn_writer.len() as u32 {
            self.catch_up_writer(flow, horizon);
        }
    }

    fn conn_arm_rto(&mut self, flow: u32, i: usize) {
        let e = &mut self.senders[i];
        if let Some(t) = lazy_timer(&mut e.rto_at, e.tx.rto_deadline()) {
            self.events.schedule(t, Event::ConnRto { flow });
        }
    }

    fn conn_arm_ack(&mut self, flow: u32) {
        let e = self.recv_end(flow);
        if let Some(t) = lazy_timer(&mut e.ack_at, e.rx.ack_deadline()) {
            self.events.schedule(t, Event::ConnAck { flow });
        }
    }

    pub(super) fn conn_rto(&mut self, flow: u32) {
        let f = flow as usize;
        // A done sender's timer has nothing to do.
        let End::Open(i) = self.conn_sending[f] else {
            return;
        };
        let now = self.now;
        let p = self.conn_params(f);
        let e = &mut self.senders[i as usize];
        if e.rto_at != Some(now) {
            return; // superseded by an earlier event
        }
        e.rto_at = None;
        if e.tx.on_timer(&p, now) {
            let cwnd = e.tx.cwnd();
            let row = self.row(f);
            self.conn_timeouts.add(row, now, 1);
            if let (Some(row), Some(cwnd)) = (self.level_row(f), cwnd) {
                self.tcp_cwnd.set(row, now, cwnd);
            }
        }
        self.conn_send(flow);
    }

    /// A segment reaches the receiving host.
    pub(super) fn conn_segment(&mut self, node: usize, frame: Frame) {
        let now = self.now;
        let f = frame.flow as usize;
        if let End::Done(done) = self.conn_receiving[f] {
            return self.late_segment(node, frame, done);
        }
        let p = self.conn_params(f);
        let i = self.recv_index(frame.flow);
        let rx = &mut self.receivers[i].rx;
        let seq = rx.unwrap_seq(frame.wire_seq());
        let got = rx.on_segment(
            &p,
            now,
            seq,
            frame.size as u32 - p.header(),
            frame.ecn().is_ce(),
            frame.tcp_cwr(),
        );
        if let Some((ack, ece)) = got.ack_before {
            self.conn_send_ack(node, frame.flow, (ack, AckFlags { ece, nak: false }));
        }
        // RoCE's congestion control (DCQCN) answers marks at the receiver.
        if matches!(p, ConnParams::Roce(_)) && self.conn_scheme_delivered(node, &frame) {
            self.receivers[i].rx.echo_cnp();
        }
        let mut complete = false;
        if got.delivered > 0 {
            self.flows[f].deliver(now, frame.created, got.delivered);
            #[cfg(test)]
            if self.fault == super::invariants::Fault::TcpDeliverTwice {
                self.flows[f].deliver(now, frame.created, got.delivered);
            }
            let rcv_nxt = self.receivers[i].rx.rcv_nxt();
            self.check_conn_delivery(node, frame.flow, rcv_nxt);
            let row = self.row(f);
            self.flow_rx.add(row, now, got.delivered);
            complete = self.workload_delivered(frame.flow, rcv_nxt);
        }
        match got.ack {
            AckAction::Now => {
                let ack = self.receivers[i].rx.ack_sent();
                self.conn_send_ack(node, frame.flow, ack);
                // Its last byte, or a copy after its last byte's ACK was
                // put off, may have made the receiver done.
                if complete || got.duplicate {
                    self.end_receiver_if_done(frame.flow);
                }
            }
            AckAction::At(_) => self.conn_arm_ack(frame.flow),
            AckAction::Pending => {}
        }
    }

    /// A copy of a segment reaches a done receiver: it is acknowledged at
    /// once, as the receiver would have (`ReceiverDone`).
    #[cold]
    #[inline(never)]
    fn late_segment(&mut self, node: usize, frame: Frame, mut done: ReceiverDone) {
        #[cfg(test)]
        {
            self.late_frames += 1;
        }
        let f = frame.flow as usize;
        let p = self.conn_params(f);
        let cnp = matches!(p, ConnParams::Roce(_)) && self.conn_scheme_delivered(node, &frame);
        let (flags, ce) = done.on_segment(&p, frame.ecn().is_ce(), frame.tcp_cwr(), cnp);
        self.flows[f].ce_received += ce;
        self.conn_receiving[f] = End::Done(done);
        let end = self.workload.size_of(frame.flow).expect("a workload flow");
        self.conn_send_ack(node, frame.flow, (end, flags));
    }

    pub(super) fn conn_ack_timer(&mut self, flow: u32) {
        let f = flow as usize;
        // A done receiver owes no ACK.
        let End::Open(i) = self.conn_receiving[f] else {
            return;
        };
        let now = self.now;
        let e = &mut self.receivers[i as usize];
        if e.ack_at != Some(now) {
            return; // superseded by an earlier event
        }
        e.ack_at = None;
        if e.rx.on_ack_timer(now) {
            let ack = e.rx.ack_sent();
            let node = self.conn_dst_node[f] as usize;
            self.conn_send_ack(node, flow, ack);
            self.end_receiver_if_done(flow);
            if self.conn_receiving[f] != End::Open(i) {
                return;
            }
        }
        self.conn_arm_ack(flow);
    }

    /// A workload flow's sender with every byte acknowledged, waiting for
    /// nothing, is done: its counts go to the flow's, its state back to
    /// the slab.
    #[inline]
    fn end_sender_if_done(&mut self, flow: u32) {
        #[cfg(test)]
        if self.keep_conn_ends {
            return;
        }
        let End::Open(i) = self.conn_sending[flow as usize] else {
            return;
        };
        let e = &self.senders[i as usize];
        if flow >= self.workload.first && e.wait == ConnWait::No && e.tx.all_acked() {
            self.end_sender(flow, i);
        }
    }

    #[cold]
    #[inline(never)]
    fn end_sender(&mut self, flow: u32, i: u32) {
        let f = flow as usize;
        let e = self.senders.remove(i as usize);
        add_sender_counts(&mut self.flows[f], e.tx.stats());
        self.conn_sending[f] = End::Done(e.tx.done(&self.conn_params(f)));
    }

    /// A workload flow's receiver that has every byte and has just
    /// acknowledged them all is done.
    #[inline]
    fn end_receiver_if_done(&mut self, flow: u32) {
        #[cfg(test)]
        if self.keep_conn_ends {
            return;
        }
        let End::Open(i) = self.conn_receiving[flow as usize] else {
            return;
        };
        let rx = &self.receivers[i as usize].rx;
        if self.workload.size_of(flow) == Some(rx.rcv_nxt()) && rx.ack_deadline().is_none() {
            self.end_receiver(flow, i);
        }
    }

    #[cold]
    #[inline(never)]
    fn end_receiver(&mut self, flow: u32, i: u32) {
        let f = flow as usize;
        let e = self.receivers.remove(i as usize);
        add_receiver_counts(&mut self.flows[f], &e.rx);
        self.conn_receiving[f] = End::Done(e.rx.done());
    }

    /// Send the ACK `(number, flags)` the receiver of `flow` gave.
    fn conn_send_ack(&mut self, node: usize, flow: u32, (ack, flags): (u64, AckFlags)) {
        let f = flow as usize;
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("connections end at hosts")
        };
        let frame = Frame {
            created: self.now,
            flow,
            dst_host: self.flow_src_host[f],
            tag: Frame::tag(h.port, self.ack_class.unwrap_or(self.flow_class[f]))
                | if flags.ece { TCP_ECE } else { 0 }
                | if flags.nak { ROCE_NAK } else { 0 },
            cpid: NO_CP,
            aux: Frame::pack_wire_seq(ack),
            size: self.conn_params(f).ack_bytes() as u16,
            kind: FrameKind::Ack,
            qfb: 0,
        };
        self.egress_enqueue(node, frame);
    }

    /// An ACK reaches the sending host.
    pub(super) fn conn_ack(&mut self, frame: Frame) {
        let f = frame.flow as usize;
        let p = self.conn_params(f);
        let flags = AckFlags {
            ece: frame.tcp_ece(),
            nak: frame.roce_nak(),
        };
        if flags.nak {
            self.check_nak(frame.flow);
        }
        if flags.ece && matches!(p, ConnParams::Roce(_)) {
            self.cnp_from_ack(&frame);
        }
        if let End::Done(mut done) = self.conn_sending[f] {
            // An ACK of a copy of a segment, after the last byte's.
            #[cfg(test)]
            {
                self.late_frames += 1;
            }
            let end = self.workload.size_of(frame.flow).expect("a workload flow");
            let added = done.on_ack(end, frame.wire_seq(), flags);
            add_sender_counts(&mut self.flows[f], added);
            self.conn_sending[f] = End::Done(done);
        } else {
            let now = self.now;
            let i = self.send_index(frame.flow);
            let tx = &mut self.senders[i].tx;
            let ack = tx.unwrap_ack(frame.wire_seq());
            tx.on_ack(&p, now, ack, flags);
            // Nothing sent after an ACK of every byte changes that.
            let all_acked = tx.all_acked();
            let (cwnd, alpha) = (tx.cwnd(), tx.dctcp_alpha(&p));
            if let Some(row) = self.level_row(f) {
                if let Some(cwnd) = cwnd {
                    self.tcp_cwnd.set(row, now, cwnd);
                }
                if let Some(alpha) = alpha {
                    self.set_alpha(f, alpha);
                }
            }
            self.conn_send_at(frame.flow, i);
            if !all_acked {
                return; // the flow's reaction point goes on too
            }
            self.end_sender_if_done(frame.flow);
        }
        self.end_reaction_point(frame.flow);
    }

    /// Add the counters of the connections still open to their flows'
    /// (a done end added its own as it closed; see `Volume` for what a
    /// TCP flow's volume counts).
    pub(super) fn finish_conns(&mut self) {
        for f in 0..self.flow_conn.len() {
            if let End::Open(i) = self.conn_sending[f] {
                add_sender_counts(&mut self.flows[f], self.senders[i as usize].tx.stats());
            }
            if let End::Open(i) = self.conn_receiving[f] {
                add_receiver_counts(&mut self.flows[f], &self.receivers[i as usize].rx);
            }
        }
    }
}

/// Add a sender's counts to its flow's.
fn add_sender_counts(c: &mut FlowCounters, st: ConnStats) {
    c.segments_sent += st.segments_sent;
    c.retransmissions += st.retransmissions;
    c.fast_retransmits += st.fast_retransmits;
    c.ecn_reductions += st.ecn_reductions;
    c.go_backs += st.go_backs;
    c.timeouts += st.timeouts;
}

/// Add a receiver's counts to its flow's.
fn add_receiver_counts(c: &mut FlowCounters, rx: &Receiver) {
    c.naks_sent += rx.naks_sent();
    c.ce_received += rx.ce_segments();
}
