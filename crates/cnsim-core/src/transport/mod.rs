//! Transport protocols run by end stations on top of the simulated Ethernet:
//! pure state machines that the engine drives with segments, ACKs and timer
//! events (docs/model.md, "TCP NewReno" and "RoCE transport"). The types
//! both transports share are here.

pub mod roce;
pub mod tcp;

use crate::units::Time;

/// How a source's units reach the network (`transport` in a scenario's
/// `[[source]]`).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// Frames go out as produced (only the adapter may hold them back).
    #[default]
    Udp,
    /// Units are appended to one TCP NewReno connection per destination.
    Tcp,
    /// Units are appended to one RoCE-style queue pair per destination
    /// (rate-paced, go-back-N).
    Roce,
}

impl Transport {
    /// A reliable transport with a sender and receiver per flow.
    pub fn is_connection(self) -> bool {
        matches!(self, Transport::Tcp | Transport::Roce)
    }
}

/// The u64 sequence number nearest `reference` whose low 32 bits are `wire`
/// (never below 0).
pub fn unwrap(reference: u64, wire: u32) -> u64 {
    let delta = wire.wrapping_sub(reference as u32) as i32;
    reference
        .checked_add_signed(delta as i64)
        .unwrap_or(wire as u64)
}

/// One segment the sender hands to the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    pub retransmission: bool,
    /// ECN-capable transport: the IP header carries ECT(0). RFC 3168
    /// leaves retransmissions Not-ECT; DCTCP marks every segment.
    pub ect: bool,
    /// The TCP header's CWR flag: the window was reduced for an ECE.
    pub cwr: bool,
}

/// What the receiver wants done about an ACK after a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckAction {
    /// Send an ACK now.
    Now,
    /// The delayed-ACK timer was armed for this time.
    At(Time),
    /// A delayed ACK is already armed.
    Pending,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// New in-order bytes handed to the application.
    pub delivered: u64,
    /// The segment carried no byte not already received.
    pub duplicate: bool,
    pub ack: AckAction,
    /// DCTCP: the segment's CE differs from the previous one's while an ACK
    /// was owed: that ACK (its number and ECE) goes first, at once, so that
    /// the sender sees each run of marks exactly (RFC 8257 §3.2).
    pub ack_before: Option<(u64, bool)>,
}

/// The flags an ACK carries back: TCP's ECE, RoCE's NAK.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckFlags {
    /// TCP: ECN echo. RoCE: the ACK carries a CNP (same flag on the wire).
    pub ece: bool,
    pub nak: bool,
}

/// A flow's transport parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConnParams {
    Tcp(tcp::TcpParams),
    Roce(roce::RoceParams),
}

impl ConnParams {
    /// Header bytes on the wire per segment.
    pub fn header(&self) -> u32 {
        match self {
            ConnParams::Tcp(p) => p.header,
            ConnParams::Roce(p) => p.header,
        }
    }

    /// Payload bytes of a full segment (TCP's MSS, RoCE's MTU).
    pub fn payload(&self) -> u32 {
        match self {
            ConnParams::Tcp(p) => p.mss,
            ConnParams::Roce(p) => p.mtu,
        }
    }

    /// Wire size of an ACK.
    pub fn ack_bytes(&self) -> u32 {
        match self {
            ConnParams::Tcp(p) => p.ack_bytes,
            ConnParams::Roce(p) => p.ack_bytes,
        }
    }
}

/// The sending half of a flow's connection: each operation matched once,
/// here, on the transport.
#[derive(Debug)]
pub enum Sender {
    Tcp(tcp::TcpSender),
    Roce(roce::RoceSender),
}

/// The receiving half of a flow's connection.
#[derive(Debug)]
pub enum Receiver {
    Tcp(tcp::TcpReceiver),
    Roce(roce::RoceReceiver),
}

/// Counters of a connection, in the flow table's terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnStats {
    pub segments_sent: u64,
    pub retransmissions: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub ecn_reductions: u64,
    /// RoCE: NAKs that sent the sender back.
    pub go_backs: u64,
}

impl Sender {
    pub fn new(p: &ConnParams) -> Sender {
        match p {
            ConnParams::Tcp(p) => Sender::Tcp(tcp::TcpSender::new(p)),
            ConnParams::Roce(_) => Sender::Roce(roce::RoceSender::new()),
        }
    }

    pub fn write(&mut self, bytes: u64) {
        match self {
            Sender::Tcp(s) => s.write(bytes),
            Sender::Roce(s) => s.write(bytes),
        }
    }

    /// Bytes written and not yet sent.
    pub fn unsent(&self) -> u64 {
        match self {
            Sender::Tcp(s) => s.unsent(),
            Sender::Roce(s) => s.unsent(),
        }
    }

    /// Something was written and every byte of it is acknowledged.
    pub fn all_acked(&self) -> bool {
        match self {
            Sender::Tcp(s) => s.all_acked(),
            Sender::Roce(s) => s.all_acked(),
        }
    }

    pub fn peek(&self, p: &ConnParams) -> Option<u32> {
        match (self, p) {
            (Sender::Tcp(s), ConnParams::Tcp(p)) => s.peek(p),
            (Sender::Roce(s), ConnParams::Roce(p)) => s.peek(p),
            _ => unreachable!("a sender has its transport's parameters"),
        }
    }

    pub fn next_segment(&mut self, p: &ConnParams, now: Time) -> Option<Segment> {
        match (self, p) {
            (Sender::Tcp(s), ConnParams::Tcp(p)) => s.next_segment(p, now),
            (Sender::Roce(s), ConnParams::Roce(p)) => s.next_segment(p, now),
            _ => unreachable!("a sender has its transport's parameters"),
        }
    }

    /// An ACK of `ack` (already unwrapped) with its flags.
    pub fn on_ack(&mut self, p: &ConnParams, now: Time, ack: u64, flags: AckFlags) {
        match (self, p) {
            (Sender::Tcp(s), ConnParams::Tcp(p)) => s.on_ack(p, now, ack, flags.ece),
            (Sender::Roce(s), ConnParams::Roce(p)) => s.on_ack(p, now, ack, flags.nak),
            _ => unreachable!("a sender has its transport's parameters"),
        }
    }

    pub fn rto_deadline(&self) -> Option<Time> {
        match self {
            Sender::Tcp(s) => s.rto_deadline(),
            Sender::Roce(s) => s.rto_deadline(),
        }
    }

    /// The retransmission timer's event at `now`: true if it timed out.
    pub fn on_timer(&mut self, p: &ConnParams, now: Time) -> bool {
        match (self, p) {
            (Sender::Tcp(s), ConnParams::Tcp(p)) => s.on_timer(p, now),
            (Sender::Roce(s), ConnParams::Roce(p)) => s.on_timer(p, now),
            _ => unreachable!("a sender has its transport's parameters"),
        }
    }

    pub fn unwrap_ack(&self, wire: u32) -> u64 {
        match self {
            Sender::Tcp(s) => s.unwrap_ack(wire),
            Sender::Roce(s) => s.unwrap_ack(wire),
        }
    }

    /// DCTCP's α (other transports and TCP modes have none).
    pub fn dctcp_alpha(&self, p: &ConnParams) -> Option<f64> {
        match (self, p) {
            (Sender::Tcp(s), ConnParams::Tcp(tp))
                if matches!(tp.ecn, tcp::TcpEcn::Dctcp { .. }) =>
            {
                Some(s.alpha())
            }
            _ => None,
        }
    }

    /// TCP's congestion window (RoCE has none).
    pub fn cwnd(&self) -> Option<u64> {
        match self {
            Sender::Tcp(s) => Some(s.cwnd()),
            Sender::Roce(_) => None,
        }
    }

    pub fn stats(&self) -> ConnStats {
        match self {
            Sender::Tcp(s) => ConnStats {
                segments_sent: s.stats.segments_sent,
                retransmissions: s.stats.retransmissions,
                fast_retransmits: s.stats.fast_retransmits,
                timeouts: s.stats.timeouts,
                ecn_reductions: s.stats.ecn_reductions,
                go_backs: 0,
            },
            Sender::Roce(s) => ConnStats {
                segments_sent: s.stats.segments_sent,
                retransmissions: s.stats.retransmissions,
                fast_retransmits: 0,
                timeouts: s.stats.timeouts,
                ecn_reductions: 0,
                go_backs: s.stats.go_backs,
            },
        }
    }
}

impl Sender {
    /// The finished form of a sender whose every byte is acknowledged
    /// (`all_acked`): what it still needs to answer a late ACK.
    pub fn done(&self, p: &ConnParams) -> SenderDone {
        match (self, p) {
            (Sender::Tcp(s), ConnParams::Tcp(p)) => SenderDone::Tcp(s.done(p)),
            (Sender::Roce(_), ConnParams::Roce(_)) => SenderDone::Roce,
            _ => unreachable!("a sender has its transport's parameters"),
        }
    }
}

/// A sender with every byte of its flow acknowledged, reduced to what a
/// late ACK (one that answers a copy of a segment) can still change: a
/// count. Its window, timers and send buffer are gone; the run keeps
/// this instead of the sender (`Sender::done`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderDone {
    Tcp(tcp::TcpSenderDone),
    /// RoCE: a NAK of the last byte counts a go-back that resends nothing.
    Roce,
}

impl SenderDone {
    /// A late ACK whose number's low 32 bits are `wire`, with `flags`, to
    /// a sender that had `end` bytes acknowledged: what it adds to the
    /// sender's counters, as the sender itself would have (an ACK below
    /// `end` changes nothing).
    pub fn on_ack(&mut self, end: u64, wire: u32, flags: AckFlags) -> ConnStats {
        let ack = unwrap(end, wire);
        match self {
            SenderDone::Tcp(s) => ConnStats {
                ecn_reductions: s.on_ack(end, ack, flags.ece),
                ..ConnStats::default()
            },
            SenderDone::Roce => ConnStats {
                go_backs: u64::from(ack == end && flags.nak),
                ..ConnStats::default()
            },
        }
    }
}

/// A receiver with every byte of its flow, all acknowledged, reduced to
/// what it still needs to answer a late segment (a copy of data it has):
/// an ACK at once with the same number (`Receiver::done`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiverDone {
    Tcp(tcp::TcpReceiverDone),
    Roce,
}

impl ReceiverDone {
    /// A late segment, marked CE or not and carrying CWR or not: the flags
    /// of the ACK it gets at once (`cnp`: RoCE's ACK echoes a CNP), and the
    /// CE segments it counts (TCP's count).
    pub fn on_segment(
        &mut self,
        p: &ConnParams,
        ce: bool,
        cwr: bool,
        cnp: bool,
    ) -> (AckFlags, u64) {
        match (self, p) {
            (ReceiverDone::Tcp(r), ConnParams::Tcp(p)) => (
                AckFlags {
                    ece: r.on_segment(p, ce, cwr),
                    nak: false,
                },
                u64::from(ce),
            ),
            (ReceiverDone::Roce, ConnParams::Roce(_)) => (
                AckFlags {
                    ece: cnp,
                    nak: false,
                },
                0,
            ),
            _ => unreachable!("a receiver has its transport's parameters"),
        }
    }
}

impl Receiver {
    /// The finished form of a receiver that has every byte of its flow
    /// and owes no ACK (it has just acknowledged them all).
    pub fn done(&self) -> ReceiverDone {
        match self {
            Receiver::Tcp(r) => ReceiverDone::Tcp(r.done()),
            Receiver::Roce(_) => ReceiverDone::Roce,
        }
    }

    pub fn new(p: &ConnParams) -> Receiver {
        match p {
            ConnParams::Tcp(_) => Receiver::Tcp(tcp::TcpReceiver::new()),
            ConnParams::Roce(_) => Receiver::Roce(roce::RoceReceiver::new()),
        }
    }

    /// A segment [seq, seq + len) arrived at `now`, marked CE or not,
    /// carrying CWR or not.
    pub fn on_segment(
        &mut self,
        p: &ConnParams,
        now: Time,
        seq: u64,
        len: u32,
        ce: bool,
        cwr: bool,
    ) -> Received {
        match (self, p) {
            (Receiver::Tcp(r), ConnParams::Tcp(p)) => r.on_segment(p, now, seq, len, ce, cwr),
            (Receiver::Roce(r), ConnParams::Roce(p)) => r.on_segment(p, now, seq, len),
            _ => unreachable!("a receiver has its transport's parameters"),
        }
    }

    /// The delayed or coalescing ACK timer fired: true if an ACK is owed.
    pub fn on_ack_timer(&mut self, now: Time) -> bool {
        match self {
            Receiver::Tcp(r) => r.on_delack_timer(now),
            Receiver::Roce(r) => r.on_ack_timer(now),
        }
    }

    pub fn ack_deadline(&self) -> Option<Time> {
        match self {
            Receiver::Tcp(r) => r.delack_deadline(),
            Receiver::Roce(r) => r.ack_deadline(),
        }
    }

    /// RoCE: the next ACK carries a CNP (its ECE flag).
    pub fn echo_cnp(&mut self) {
        if let Receiver::Roce(r) = self {
            r.echo_cnp();
        }
    }

    /// An ACK is sent now: its number and flags.
    pub fn ack_sent(&mut self) -> (u64, AckFlags) {
        match self {
            Receiver::Tcp(r) => {
                let (ack, ece) = r.ack_sent();
                (ack, AckFlags { ece, nak: false })
            }
            Receiver::Roce(r) => {
                let (ack, nak, cnp) = r.ack_sent();
                (ack, AckFlags { ece: cnp, nak })
            }
        }
    }

    pub fn unwrap_seq(&self, wire: u32) -> u64 {
        match self {
            Receiver::Tcp(r) => r.unwrap_seq(wire),
            Receiver::Roce(r) => r.unwrap_seq(wire),
        }
    }

    /// The first byte not yet received in order.
    pub fn rcv_nxt(&self) -> u64 {
        match self {
            Receiver::Tcp(r) => r.rcv_nxt(),
            Receiver::Roce(r) => r.rcv_nxt(),
        }
    }

    /// NAKs sent (RoCE's count).
    pub fn naks_sent(&self) -> u64 {
        match self {
            Receiver::Tcp(_) => 0,
            Receiver::Roce(r) => r.naks,
        }
    }

    /// Segments that arrived marked CE (TCP's count).
    pub fn ce_segments(&self) -> u64 {
        match self {
            Receiver::Tcp(r) => r.ce_segments,
            Receiver::Roce(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What happens to one segment sent: lost (a first transmission only,
    /// so that every flow finishes), marked CE, and whether a copy of it
    /// arrives again after the flow has finished.
    #[derive(Debug, Clone, Copy)]
    struct Fate {
        lost: bool,
        ce: bool,
        copy: bool,
    }

    fn fate() -> impl Strategy<Value = Fate> {
        (
            prop::bool::weighted(0.1),
            any::<bool>(),
            prop::bool::weighted(0.3),
        )
            .prop_map(|(lost, ce, copy)| Fate { lost, ce, copy })
    }

    fn params(kind: u8, delayed: bool) -> ConnParams {
        let tcp = |ecn| {
            let mut p = tcp::TcpParams {
                ecn,
                ..tcp::TcpParams::for_frame(1040)
            };
            if !delayed {
                p.delayed_ack = None;
            }
            ConnParams::Tcp(p)
        };
        match kind {
            0 => tcp(tcp::TcpEcn::Off),
            1 => tcp(tcp::TcpEcn::Classic),
            2 => tcp(tcp::TcpEcn::DCTCP),
            _ => ConnParams::Roce(roce::RoceParams {
                ack_every: if delayed { 2 } else { 1 },
                ..roce::RoceParams::default()
            }),
        }
    }

    /// Run a flow of `bytes` over a path that delivers in order at once
    /// (losses, marks and copies as `fates` say, in turn) until every byte
    /// is acknowledged; the copies kept for later, with their CE and CWR.
    fn run_to_done(
        p: &ConnParams,
        bytes: u64,
        fates: &[Fate],
    ) -> (Sender, Receiver, Vec<(Segment, bool)>) {
        let (mut tx, mut rx) = (Sender::new(p), Receiver::new(p));
        let mut now = Time::ZERO;
        let mut copies = Vec::new();
        tx.write(bytes);
        let mut n = 0;
        let ack = |tx: &mut Sender, now, (a, flags)| tx.on_ack(p, now, a, flags);
        while !tx.all_acked() {
            now = now + Time::from_us(1);
            let mut sent = false;
            while let Some(seg) = tx.next_segment(p, now) {
                let f = fates[n % fates.len()];
                n += 1;
                sent = true;
                if f.copy {
                    copies.push((seg, f.ce));
                }
                if f.lost && !seg.retransmission {
                    continue;
                }
                let got = rx.on_segment(p, now, seg.seq, seg.len, f.ce, seg.cwr);
                if let Some((a, ece)) = got.ack_before {
                    ack(&mut tx, now, (a, AckFlags { ece, nak: false }));
                }
                if f.ce {
                    rx.echo_cnp();
                }
                if got.ack == AckAction::Now {
                    ack(&mut tx, now, rx.ack_sent());
                }
            }
            if sent {
                continue;
            }
            if let Some(t) = rx.ack_deadline() {
                now = now.max(t);
                if rx.on_ack_timer(now) {
                    ack(&mut tx, now, rx.ack_sent());
                }
            } else if let Some(t) = tx.rto_deadline() {
                now = now.max(t);
                tx.on_timer(p, now);
            }
            assert!(n < 100_000, "the flow finishes");
        }
        (tx, rx, copies)
    }

    fn sub(a: ConnStats, b: ConnStats) -> ConnStats {
        ConnStats {
            segments_sent: a.segments_sent - b.segments_sent,
            retransmissions: a.retransmissions - b.retransmissions,
            fast_retransmits: a.fast_retransmits - b.fast_retransmits,
            timeouts: a.timeouts - b.timeouts,
            ecn_reductions: a.ecn_reductions - b.ecn_reductions,
            go_backs: a.go_backs - b.go_backs,
        }
    }

    proptest! {
        /// A finished flow's sender and receiver, reduced to their finished
        /// forms, answer every late segment and late ACK as the full state
        /// machines do: the same ACK (number and flags), the same counts.
        #[test]
        fn finished_forms_answer_late_frames_as_the_full_machines(
            kind in 0u8..4,
            delayed in any::<bool>(),
            segments in 1u64..40,
            fates in prop::collection::vec(fate(), 1..64),
            late in prop::collection::vec((any::<bool>(), any::<bool>(), any::<bool>(), 0u64..3), 0..40),
        ) {
            let p = params(kind, delayed);
            let end = segments * p.payload() as u64 - 7;
            let (mut tx, mut rx, mut copies) = run_to_done(&p, end, &fates);
            prop_assert_eq!(rx.rcv_nxt(), end);
            prop_assert_eq!(rx.ack_deadline(), None);
            let (mut tx_done, mut rx_done) = (tx.done(&p), rx.done());
            // Every copy arrives, in turn with late ACKs below the end.
            if copies.is_empty() {
                let len = end.min(p.payload() as u64) as u32;
                copies.push((Segment { seq: 0, len, retransmission: true, ect: true, cwr: false }, false));
            }
            for (i, &(ce, cwr, cnp, below)) in late.iter().enumerate() {
                let (seg, seg_ce) = copies[i % copies.len()];
                let ce = ce ^ seg_ce;
                let (ce_before, naks_before) = (rx.ce_segments(), rx.naks_sent());
                let got = rx.on_segment(&p, Time::from_ms(1), seg.seq, seg.len, ce, cwr || seg.cwr);
                prop_assert_eq!((got.delivered, got.duplicate, got.ack, got.ack_before), (0, true, AckAction::Now, None));
                if cnp {
                    rx.echo_cnp();
                }
                let (a, flags) = rx.ack_sent();
                let (done_flags, ce_counted) = rx_done.on_segment(&p, ce, cwr || seg.cwr, cnp);
                prop_assert_eq!((a, flags), (end, done_flags));
                prop_assert_eq!((rx.ce_segments() - ce_before, rx.naks_sent() - naks_before), (ce_counted, 0));
                // The ACK it sends, and an older one, reach the sender.
                for (ack, nak) in [(a, flags.nak), (end - below.min(end), below % 2 == 1)] {
                    let flags = AckFlags { nak, ..flags };
                    let before = tx.stats();
                    tx.on_ack(&p, Time::from_ms(1), tx.unwrap_ack(ack as u32), flags);
                    let added = tx_done.on_ack(end, ack as u32, flags);
                    prop_assert_eq!(sub(tx.stats(), before), added);
                    prop_assert!(tx.all_acked() && tx.rto_deadline().is_none() && tx.unsent() == 0);
                }
            }
        }
    }
}
