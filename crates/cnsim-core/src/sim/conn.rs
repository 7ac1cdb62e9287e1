//! Connections in the running network, one per TCP or RoCE flow,
//! established at time zero (no handshake). Segments enter the adapter like
//! any data frame (the flow's rate limiter, else the egress buffer); when
//! there is no room the sender waits in its host's line, nothing is dropped
//! at the host. ACKs are frames on the reverse path, queued in the
//! receiver's egress buffer without a room check (they are small and must
//! not deadlock the sender they release).

use super::adapter::{ConnWait, Full, Sent};
use super::{Event, Role, Simulator, Waiter};
use crate::metrics::series::{BinnedLevel, BinnedSum};
use crate::net::ecn::Ecn;
use crate::net::frame::{Frame, FrameKind, ROCE_NAK, TCP_CWR, TCP_ECE};
use crate::net::rate_limiter::NO_CP;
use crate::scenario::spec::{FlowSpec, Scenario};
use crate::transport::roce::RoceParams;
use crate::transport::tcp::TcpParams;
use crate::transport::{AckAction, AckFlags, ConnParams, Receiver, Sender, Transport};
use crate::units::Time;
use std::collections::BTreeMap;

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
        self.conn_tx = (0..n).map(|f| Sender::new(&self.conn_params(f))).collect();
        self.conn_rx = (0..n)
            .map(|f| Receiver::new(&self.conn_params(f)))
            .collect();
        self.conn_dst_node = flows.iter().map(|f| f.dst as u32).collect();
        self.conn_rto_at = vec![None; n];
        self.conn_ack_at = vec![None; n];
        self.conn_wait = vec![ConnWait::No; n];
        self.tcp_cwnd = BinnedLevel::new(n_rows, n_bins, sc.bin);
        self.conn_retx = BinnedSum::new(n_rows, n_bins, sc.bin);
        self.conn_timeouts = BinnedSum::new(n_rows, n_bins, sc.bin);
        // A workload's row holds no level (see `finish`).
        for f in 0..(self.workload.first as usize).min(n) {
            if let (true, Some(cwnd)) = (self.flow_conn[f], self.conn_tx[f].cwnd()) {
                self.tcp_cwnd.set(f, Time::ZERO, cwnd);
            }
            if let (true, Some(alpha)) = (
                self.flow_conn[f],
                self.conn_tx[f].dctcp_alpha(&self.conn_params(f)),
            ) {
                self.set_alpha(f, alpha);
            }
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
        let f = flow as usize;
        self.conn_tx[f].write(bytes);
        self.flows[f].volume.offer(bytes);
        let row = self.row(f);
        self.flow_tx.add(row, at, bytes);
    }

    /// Send what the window allows while the adapter has room, then make
    /// sure the retransmission timer has an event. A sender that waits for
    /// room sends when its wait ends (`retry_waiting`, or its limiter's
    /// release), not before.
    pub(super) fn conn_send(&mut self, flow: u32) {
        if !self.conn_writer.is_empty() {
            self.catch_up_writer(flow, self.now);
        }
        if self.conn_wait[flow as usize] == ConnWait::No {
            if let Sent::Full(full) = self.conn_push(flow, u32::MAX) {
                self.conn_wait_for(flow, full);
            }
        }
        self.conn_sent(flow);
    }

    /// `flow`'s turn in its host's line (`retry_waiting`): one segment.
    /// The caller places it again if it has to wait.
    pub(super) fn conn_turn(&mut self, flow: u32) -> Sent {
        self.conn_wait[flow as usize] = ConnWait::No;
        if !self.conn_writer.is_empty() {
            self.catch_up_writer(flow, self.now);
        }
        let sent = self.conn_push(flow, 1);
        // Sending nothing changed nothing `conn_sent` looks at.
        if matches!(sent, Sent::Done | Sent::More) {
            self.conn_sent(flow);
        }
        sent
    }

    /// `flow` waits for room: in its own limiter's queue, which its
    /// releases free (`rl_release` wakes it), or else in its host's line.
    pub(super) fn conn_wait_for(&mut self, flow: u32, full: Full) {
        let f = flow as usize;
        if full == Full::Limiter && self.limiter_of(flow) == flow {
            self.conn_wait[f] = ConnWait::Limiter;
            return;
        }
        self.conn_wait[f] = ConnWait::Line;
        let node = self.flow_src_node[f] as usize;
        if let Role::Host(h) = &mut self.roles[node] {
            h.waiting.push_back(Waiter::Conn(flow));
        }
    }

    /// Hand at most `most` of `flow`'s segments to the adapter, while it
    /// has room and the window allows.
    fn conn_push(&mut self, flow: u32, most: u32) -> Sent {
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
            let Some(len) = self.conn_tx[f].peek(&p) else {
                return sent;
            };
            let size = len + p.header();
            let place = match self.adapter_room(node, flow, size) {
                Ok(place) => place,
                Err(full) => return Sent::Full(full),
            };
            let seg = self.conn_tx[f]
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
        if self.conn_tx[f].peek(&p).is_some() {
            Sent::More
        } else {
            sent
        }
    }

    /// After `flow` sent (or tried): start an idle transmitter, arm the
    /// retransmission timer, let a parked writer write again.
    fn conn_sent(&mut self, flow: u32) {
        let node = self.flow_src_node[flow as usize] as usize;
        if let Role::Host(h) = &self.roles[node] {
            let port = h.port;
            self.try_start(port);
        }
        self.conn_arm_rto(flow);
        if !self.conn_writer.is_empty() {
            self.wake_writer(flow);
        }
    }

    /// Whether a write to `flow` now would change nothing its connection
    /// does: a full segment is unsent already, so the segment it offers
    /// next is the same with more data behind it.
    #[inline]
    fn write_is_inert(&self, f: usize) -> bool {
        self.conn_tx[f].unsent() >= self.conn_params(f).payload() as u64
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
        while let Some(t) = self.sources[s as usize].parked.filter(|&t| t < horizon) {
            let src = &mut self.sources[s as usize];
            src.produce();
            let (_, bytes) = src.take_unit();
            src.parked = src.next_time(t);
            self.conn_append(flow, bytes, t);
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

    fn conn_arm_rto(&mut self, flow: u32) {
        let f = flow as usize;
        if let Some(t) = lazy_timer(&mut self.conn_rto_at[f], self.conn_tx[f].rto_deadline()) {
            self.events.schedule(t, Event::ConnRto { flow });
        }
    }

    fn conn_arm_ack(&mut self, flow: u32) {
        let f = flow as usize;
        if let Some(t) = lazy_timer(&mut self.conn_ack_at[f], self.conn_rx[f].ack_deadline()) {
            self.events.schedule(t, Event::ConnAck { flow });
        }
    }

    pub(super) fn conn_rto(&mut self, flow: u32) {
        let f = flow as usize;
        if self.conn_rto_at[f] != Some(self.now) {
            return; // superseded by an earlier event
        }
        self.conn_rto_at[f] = None;
        let p = self.conn_params(f);
        if self.conn_tx[f].on_timer(&p, self.now) {
            let row = self.row(f);
            self.conn_timeouts.add(row, self.now, 1);
            if let (Some(row), Some(cwnd)) = (self.level_row(f), self.conn_tx[f].cwnd()) {
                self.tcp_cwnd.set(row, self.now, cwnd);
            }
        }
        self.conn_send(flow);
    }

    /// A segment reaches the receiving host.
    pub(super) fn conn_segment(&mut self, node: usize, frame: Frame) {
        let now = self.now;
        let f = frame.flow as usize;
        let p = self.conn_params(f);
        let rx = &mut self.conn_rx[f];
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
        if matches!(p, ConnParams::Roce(_)) {
            self.conn_scheme_delivered(node, &frame);
        }
        if got.delivered > 0 {
            self.flows[f].deliver(now, frame.created, got.delivered);
            #[cfg(test)]
            if self.fault == super::invariants::Fault::TcpDeliverTwice {
                self.flows[f].deliver(now, frame.created, got.delivered);
            }
            self.check_conn_delivery(node, frame.flow);
            let row = self.row(f);
            self.flow_rx.add(row, now, got.delivered);
            let rcv_nxt = self.conn_rx[f].rcv_nxt();
            self.workload_delivered(frame.flow, rcv_nxt);
        }
        match got.ack {
            AckAction::Now => {
                let ack = self.conn_rx[f].ack_sent();
                self.conn_send_ack(node, frame.flow, ack);
            }
            AckAction::At(_) => self.conn_arm_ack(frame.flow),
            AckAction::Pending => {}
        }
    }

    pub(super) fn conn_ack_timer(&mut self, flow: u32) {
        let f = flow as usize;
        if self.conn_ack_at[f] != Some(self.now) {
            return; // superseded by an earlier event
        }
        self.conn_ack_at[f] = None;
        if self.conn_rx[f].on_ack_timer(self.now) {
            let node = self.conn_dst_node[f] as usize;
            let ack = self.conn_rx[f].ack_sent();
            self.conn_send_ack(node, flow, ack);
        }
        self.conn_arm_ack(flow);
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
        let tx = &mut self.conn_tx[f];
        let ack = tx.unwrap_ack(frame.wire_seq());
        tx.on_ack(&p, self.now, ack, flags);
        if let Some(row) = self.level_row(f) {
            if let Some(cwnd) = self.conn_tx[f].cwnd() {
                self.tcp_cwnd.set(row, self.now, cwnd);
            }
            if let Some(alpha) = self.conn_tx[f].dctcp_alpha(&p) {
                self.set_alpha(f, alpha);
            }
        }
        self.conn_send(frame.flow);
        self.end_reaction_point(frame.flow);
    }

    /// Copy the connections' counters into the flows' (see `Volume` for
    /// what a TCP flow's volume counts).
    pub(super) fn finish_conns(&mut self) {
        for f in 0..self.flow_conn.len() {
            if !self.flow_conn[f] {
                continue;
            }
            let st = self.conn_tx[f].stats();
            let c = &mut self.flows[f];
            c.segments_sent = st.segments_sent;
            c.retransmissions = st.retransmissions;
            c.fast_retransmits = st.fast_retransmits;
            c.ecn_reductions = st.ecn_reductions;
            c.go_backs = st.go_backs;
            c.naks_sent = self.conn_rx[f].naks_sent();
            c.ce_received = self.conn_rx[f].ce_segments();
            c.timeouts = st.timeouts;
        }
    }
}

/// TCP restarts its timers on almost every segment. Rather than one event
/// per restart, a flow keeps one event at or before its deadline (`pending`
/// holds its time); a deadline that moved later is found when that event
/// fires. Returns the time of a new event to schedule, if one is needed.
fn lazy_timer(pending: &mut Option<Time>, deadline: Option<Time>) -> Option<Time> {
    let t = deadline?;
    if pending.is_none_or(|at| t < at) {
        *pending = Some(t);
        return Some(t);
    }
    None
}
