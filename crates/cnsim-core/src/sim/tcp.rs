//! TCP NewReno connections in the running network, one per TCP flow,
//! established at time zero (no handshake). Segments enter the adapter like
//! any data frame (the flow's rate limiter, else the egress buffer); when
//! there is no room the sender waits in its host's line, nothing is dropped
//! at the host. ACKs are frames on the reverse path, queued in the
//! receiver's egress buffer without a room check (they are small and must
//! not deadlock the sender they release).

use super::{Event, Role, Simulator, Waiter};
use crate::metrics::series::{BinnedLevel, BinnedSum};
use crate::net::ecn::Ecn;
use crate::net::frame::{Frame, FrameKind, TCP_CWR, TCP_ECE};
use crate::net::rate_limiter::NO_CP;
use crate::scenario::spec::{FlowSpec, Scenario};
use crate::transport::tcp::{AckAction, TcpParams, TcpReceiver, TcpSender};
use crate::transport::Transport;
use crate::units::Time;

impl Simulator {
    pub(super) fn init_tcp(
        &mut self,
        sc: &Scenario,
        flows: &[FlowSpec],
        tp: TcpParams,
        n_bins: usize,
    ) {
        let n = flows.len();
        self.flow_tcp = flows
            .iter()
            .map(|f| sc.sources[f.source].transport == Transport::Tcp)
            .collect();
        self.tcp_params = flows
            .iter()
            .map(|f| TcpParams {
                mss: sc.sources[f.source].frame.saturating_sub(tp.header).max(1),
                ..tp
            })
            .collect();
        self.tcp_tx = self.tcp_params.iter().map(TcpSender::new).collect();
        self.tcp_rx = (0..n).map(|_| TcpReceiver::new()).collect();
        self.tcp_dst_node = flows.iter().map(|f| f.dst as u32).collect();
        self.tcp_rto_at = vec![None; n];
        self.tcp_delack_at = vec![None; n];
        self.tcp_blocked = vec![false; n];
        self.tcp_cwnd = BinnedLevel::new(n, n_bins, sc.bin);
        self.tcp_retx = BinnedSum::new(n, n_bins, sc.bin);
        self.tcp_timeouts = BinnedSum::new(n, n_bins, sc.bin);
        for f in 0..n {
            if self.flow_tcp[f] {
                self.tcp_cwnd.set(f, Time::ZERO, self.tcp_tx[f].cwnd());
            }
        }
    }

    #[inline]
    pub(super) fn is_tcp(&self, flow: u32) -> bool {
        self.flow_tcp.get(flow as usize).copied().unwrap_or(false)
    }

    pub(super) fn source_transport(&self, s: u32) -> Transport {
        self.sources[s as usize].transport
    }

    /// The source's application wrote a unit: append it to the connection.
    pub(super) fn tcp_write(&mut self, s: u32) {
        let (flow, bytes) = self.sources[s as usize].take_unit();
        let f = flow as usize;
        self.tcp_tx[f].write(bytes);
        self.flows[f].volume.offer(bytes);
        self.flow_tx.add(f, self.now, bytes);
        self.tcp_send(flow);
    }

    /// Send what the window allows while the adapter has room, then make
    /// sure the retransmission timer has an event.
    pub(super) fn tcp_send(&mut self, flow: u32) {
        let now = self.now;
        let f = flow as usize;
        let p = self.tcp_params[f];
        let node = self.flow_src_node[f] as usize;
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("flows start at hosts")
        };
        let port = h.port;
        while !self.tcp_blocked[f] {
            let Some(len) = self.tcp_tx[f].peek(&p) else {
                break;
            };
            let size = len + p.header;
            if !self.adapter_has_room(node, flow, size) {
                self.tcp_blocked[f] = true;
                if let Role::Host(h) = &mut self.roles[node] {
                    h.waiting.push_back(Waiter::Tcp(flow));
                }
                break;
            }
            let seg = self.tcp_tx[f]
                .next_segment(&p, now)
                .expect("the sender offered a segment");
            if seg.retransmission {
                self.tcp_retx.add(f, now, 1);
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
            self.adapter_enqueue(node, frame);
        }
        self.try_start(port);
        self.tcp_arm_rto(flow);
    }

    fn tcp_arm_rto(&mut self, flow: u32) {
        let f = flow as usize;
        if let Some(t) = lazy_timer(&mut self.tcp_rto_at[f], self.tcp_tx[f].rto_deadline()) {
            self.events.schedule(t, Event::TcpRto { flow });
        }
    }

    fn tcp_arm_delack(&mut self, flow: u32) {
        let f = flow as usize;
        if let Some(t) = lazy_timer(&mut self.tcp_delack_at[f], self.tcp_rx[f].delack_deadline()) {
            self.events.schedule(t, Event::TcpDelAck { flow });
        }
    }

    pub(super) fn tcp_rto(&mut self, flow: u32) {
        let f = flow as usize;
        if self.tcp_rto_at[f] != Some(self.now) {
            return; // superseded by an earlier event
        }
        self.tcp_rto_at[f] = None;
        let p = self.tcp_params[f];
        if self.tcp_tx[f].on_timer(&p, self.now) {
            self.tcp_timeouts.add(f, self.now, 1);
            let cwnd = self.tcp_tx[f].cwnd();
            self.tcp_cwnd.set(f, self.now, cwnd);
        }
        self.tcp_send(flow);
    }

    /// A segment reaches the receiving host.
    pub(super) fn tcp_segment(&mut self, node: usize, frame: Frame) {
        let now = self.now;
        let f = frame.flow as usize;
        let p = self.tcp_params[f];
        let rx = &mut self.tcp_rx[f];
        let seq = rx.unwrap_seq(frame.wire_seq());
        let got = rx.on_segment(
            &p,
            now,
            seq,
            frame.size as u32 - p.header,
            frame.ecn().is_ce(),
            frame.tcp_cwr(),
        );
        if let Some(before) = got.ack_before {
            self.tcp_send_ack(node, frame.flow, before);
        }
        if got.delivered > 0 {
            self.flows[f].deliver(now, frame.created, got.delivered);
            #[cfg(test)]
            if self.fault == super::invariants::Fault::TcpDeliverTwice {
                self.flows[f].deliver(now, frame.created, got.delivered);
            }
            self.check_tcp_delivery(node, frame.flow);
            self.flow_rx.add(f, now, got.delivered);
        }
        match got.ack {
            AckAction::Now => {
                let ack = self.tcp_rx[f].ack_sent();
                self.tcp_send_ack(node, frame.flow, ack);
            }
            AckAction::At(_) => self.tcp_arm_delack(frame.flow),
            AckAction::Pending => {}
        }
    }

    pub(super) fn tcp_delack(&mut self, flow: u32) {
        let f = flow as usize;
        if self.tcp_delack_at[f] != Some(self.now) {
            return; // superseded by an earlier event
        }
        self.tcp_delack_at[f] = None;
        if self.tcp_rx[f].on_delack_timer(self.now) {
            let node = self.tcp_dst_node[f] as usize;
            let ack = self.tcp_rx[f].ack_sent();
            self.tcp_send_ack(node, flow, ack);
        }
        self.tcp_arm_delack(flow);
    }

    /// Send the ACK `(number, ECE)` the receiver of `flow` gave.
    fn tcp_send_ack(&mut self, node: usize, flow: u32, (ack, ece): (u64, bool)) {
        let f = flow as usize;
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("connections end at hosts")
        };
        let frame = Frame {
            created: self.now,
            flow,
            dst_host: self.flow_src_host[f],
            tag: Frame::tag(h.port, self.ack_class.unwrap_or(self.flow_class[f]))
                | if ece { TCP_ECE } else { 0 },
            cpid: NO_CP,
            aux: Frame::pack_wire_seq(ack),
            size: self.tcp_params[f].ack_bytes as u16,
            kind: FrameKind::Ack,
            qfb: 0,
        };
        self.egress_enqueue(node, frame);
    }

    /// An ACK reaches the sending host.
    pub(super) fn tcp_ack(&mut self, frame: Frame) {
        let f = frame.flow as usize;
        let p = self.tcp_params[f];
        let tx = &mut self.tcp_tx[f];
        let ack = tx.unwrap_ack(frame.wire_seq());
        tx.on_ack(&p, self.now, ack, frame.tcp_ece());
        let cwnd = tx.cwnd();
        self.tcp_cwnd.set(f, self.now, cwnd);
        self.tcp_send(frame.flow);
    }

    /// Copy the connections' counters into the flows' (see `Volume` for
    /// what a TCP flow's volume counts).
    pub(super) fn finish_tcp(&mut self) {
        for f in 0..self.flow_tcp.len() {
            if !self.flow_tcp[f] {
                continue;
            }
            let st = self.tcp_tx[f].stats;
            let c = &mut self.flows[f];
            c.segments_sent = st.segments_sent;
            c.retransmissions = st.retransmissions;
            c.fast_retransmits = st.fast_retransmits;
            c.ecn_reductions = st.ecn_reductions;
            c.ce_received = self.tcp_rx[f].ce_segments;
            c.timeouts = st.timeouts;
            c.volume.in_flight_bytes = c.volume.offered_bytes - c.volume.delivered_bytes;
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
