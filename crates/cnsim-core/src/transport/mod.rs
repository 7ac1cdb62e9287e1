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

impl Receiver {
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
