//! TCP NewReno as pure sender and receiver state machines that count bytes:
//! slow start and congestion avoidance (RFC 5681), fast retransmit and
//! NewReno fast recovery (RFC 6582 §3.2), the retransmission timer (RFC 6298)
//! and delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2), with ECN as RFC 3168
//! has it or as DCTCP uses it (RFC 8257); docs/model.md, "TCP NewReno" and
//! "ECN in TCP: classic and DCTCP".
//!
//! Deliberate simplifications:
//! - The connection is established at time 0: no handshake and no FIN.
//!   Sequence numbers are u64 byte offsets from 0. The wire carries their low
//!   32 bits, and [`unwrap`] takes back the value nearest a reference, as TCP's
//!   modular comparison does.
//! - No Nagle: a partial segment goes out as soon as it is all the buffer
//!   holds and the window allows it.
//! - No SACK, timestamps, limited transmit or window updates: the receiver
//!   window is the constant `rwnd`.
//! - Karn's rule is applied as in BSD: any retransmission cancels the RTT
//!   measurement in progress, so an ambiguous ACK never gives a sample.
//!
//! The engine owns time, timer events and segments in flight. These types
//! only say what to send and when their timers are due. Nothing allocates on
//! the per-segment path except the receiver's out-of-order list, which reuses
//! its capacity.

pub use super::{unwrap, AckAction, Received, Segment};
use crate::units::Time;
use serde::Serialize;

/// Delayed-ACK policy of a receiver.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DelayedAck {
    /// ACK at once on every `segments`-th full-sized in-order segment...
    pub segments: u32,
    /// ...and otherwise at most this long after the first unacknowledged one.
    pub timeout: Time,
}

/// How a connection uses ECN.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum TcpEcn {
    /// Segments are not ECN-capable.
    #[default]
    Off,
    /// RFC 3168: the receiver echoes CE as ECE until the sender's CWR; the
    /// sender halves its window at most once per window of data.
    Classic,
    /// DCTCP (RFC 8257): the receiver echoes each segment's CE exactly; the
    /// sender keeps α, the fraction of marked bytes smoothed by `g` once
    /// per window, and cuts cwnd by α/2 at most once per window.
    Dctcp { g: f64, initial_alpha: f64 },
}

impl TcpEcn {
    /// DCTCP's defaults: g = 1/16 and α = 1 at the start (RFC 8257 §4.2).
    pub const DCTCP: TcpEcn = TcpEcn::Dctcp {
        g: 1.0 / 16.0,
        initial_alpha: 1.0,
    };

    pub fn is_off(&self) -> bool {
        *self == TcpEcn::Off
    }
}

/// Every TCP parameter, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TcpParams {
    /// Payload bytes per full segment (1460 for 1500-byte frames).
    pub mss: u32,
    /// IP + TCP header bytes on the wire per segment.
    pub header: u32,
    /// Wire size of a pure ACK.
    pub ack_bytes: u32,
    /// Initial congestion window, segments (RFC 3390 gives 3 for MSS 1460).
    pub initial_window: u32,
    /// Initial slow-start threshold, bytes; `u64::MAX` is unlimited.
    pub initial_ssthresh: u64,
    /// Receiver window, bytes (constant).
    pub rwnd: u64,
    pub min_rto: Time,
    pub max_rto: Time,
    /// RTO before the first RTT sample (RFC 6298: 1 s).
    pub initial_rto: Time,
    /// Clock granularity G in RTO = SRTT + max(G, 4·RTTVAR).
    pub granularity: Time,
    /// `None`: every segment is ACKed at once.
    pub delayed_ack: Option<DelayedAck>,
    /// Duplicate ACKs that trigger a fast retransmit.
    pub dupack_threshold: u32,
    #[serde(skip_serializing_if = "TcpEcn::is_off")]
    pub ecn: TcpEcn,
}

impl Default for TcpParams {
    fn default() -> TcpParams {
        TcpParams {
            mss: 1460,
            header: 40,
            ack_bytes: 64,
            initial_window: 3,
            initial_ssthresh: u64::MAX,
            rwnd: 1_000_000,
            min_rto: Time::from_ms(200),
            max_rto: Time::from_ms(60_000),
            initial_rto: Time::from_ms(1_000),
            granularity: Time::from_ms(1),
            delayed_ack: Some(DelayedAck {
                segments: 2,
                timeout: Time::from_ms(40),
            }),
            dupack_threshold: 3,
            ecn: TcpEcn::Off,
        }
    }
}

impl TcpParams {
    /// Defaults with the MSS that fills IP packets of `frame` bytes.
    pub fn for_frame(frame: u32) -> TcpParams {
        let d = TcpParams::default();
        TcpParams {
            mss: frame - d.header,
            ..d
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TcpStats {
    /// Every segment sent, retransmissions included.
    pub segments_sent: u64,
    pub retransmissions: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub partial_acks: u64,
    /// Window reductions for ECN echoes (at most one per window of data).
    pub ecn_reductions: u64,
}

/// The sending half of a connection.
#[derive(Debug)]
pub struct TcpSender {
    /// End of the send buffer: bytes the application has written.
    written: u64,
    snd_una: u64,
    snd_nxt: u64,
    /// One past the highest byte ever sent; snd_nxt falls back after a timeout.
    snd_max: u64,
    cwnd: u64,
    ssthresh: u64,
    dupacks: u32,
    in_recovery: bool,
    /// RFC 6582 `recover` as an end offset: an ACK at or beyond it covers it.
    recover: u64,
    /// This recovery has had its first partial ACK (the timer reset).
    partial_seen: bool,
    /// The segment at snd_una is to be retransmitted before anything else.
    rtx_pending: bool,
    /// The RTT measurement in progress: end of the timed segment, send time.
    timed: Option<(u64, Time)>,
    srtt: Option<Time>,
    rttvar: Time,
    /// Current RTO, backoff included.
    rto: Time,
    deadline: Option<Time>,
    /// No reduction for an ECE until an ACK covers this (one per window).
    ecn_recover: u64,
    /// The next new segment carries CWR.
    cwr_pending: bool,
    /// DCTCP: α, and the bytes ACKed and ACKed with ECE since the window
    /// that ends at `alpha_window_end` began.
    alpha: f64,
    acked_bytes: u64,
    marked_bytes: u64,
    alpha_window_end: u64,
    pub stats: TcpStats,
}

impl TcpSender {
    pub fn new(p: &TcpParams) -> TcpSender {
        TcpSender {
            written: 0,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: p.initial_window as u64 * p.mss as u64,
            ssthresh: p.initial_ssthresh,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            partial_seen: false,
            rtx_pending: false,
            timed: None,
            srtt: None,
            rttvar: Time::ZERO,
            rto: p.initial_rto,
            deadline: None,
            ecn_recover: 0,
            cwr_pending: false,
            alpha: match p.ecn {
                TcpEcn::Dctcp { initial_alpha, .. } => initial_alpha,
                _ => 0.0,
            },
            acked_bytes: 0,
            marked_bytes: 0,
            alpha_window_end: 0,
            stats: TcpStats::default(),
        }
    }

    /// The application appends `bytes` to the (unlimited) send buffer.
    pub fn write(&mut self, bytes: u64) {
        self.written += bytes;
    }

    /// Bytes written and not yet sent (from `snd_nxt`).
    pub fn unsent(&self) -> u64 {
        self.written - self.snd_nxt
    }

    /// Something was written and every byte of it is acknowledged.
    pub fn all_acked(&self) -> bool {
        self.written > 0 && self.snd_una == self.written
    }

    /// Length of the segment `next_segment` would return now.
    pub fn peek(&self, p: &TcpParams) -> Option<u32> {
        self.candidate(p).map(|s| s.len)
    }

    /// Take the next segment allowed now: a pending retransmission of
    /// snd_una first, else the data at snd_nxt (new, or resent after a
    /// timeout) if it fits in min(cwnd, rwnd) − flight.
    pub fn next_segment(&mut self, p: &TcpParams, now: Time) -> Option<Segment> {
        let mut s = self.candidate(p)?;
        s.cwr = !s.retransmission && std::mem::take(&mut self.cwr_pending);
        if std::mem::take(&mut self.rtx_pending) {
            // Fast retransmit or partial ACK: snd_nxt stays where it is.
        } else {
            self.snd_nxt = s.seq + s.len as u64;
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
        self.stats.segments_sent += 1;
        if s.retransmission {
            self.stats.retransmissions += 1;
            self.timed = None;
        } else if self.timed.is_none() {
            self.timed = Some((s.seq + s.len as u64, now));
        }
        if self.deadline.is_none() {
            self.deadline = Some(now + self.rto);
        }
        Some(s)
    }

    fn candidate(&self, p: &TcpParams) -> Option<Segment> {
        let mss = p.mss as u64;
        if self.rtx_pending {
            let len = (self.snd_max - self.snd_una).min(mss) as u32;
            return Some(Segment {
                seq: self.snd_una,
                len,
                retransmission: true,
                ect: matches!(p.ecn, TcpEcn::Dctcp { .. }),
                cwr: false,
            });
        }
        let len = (self.written - self.snd_nxt).min(mss);
        if len == 0 || self.flight() + len > self.cwnd.min(p.rwnd) {
            return None;
        }
        let retransmission = self.snd_nxt < self.snd_max;
        Some(Segment {
            seq: self.snd_nxt,
            len: len as u32,
            retransmission,
            ect: match p.ecn {
                TcpEcn::Off => false,
                TcpEcn::Classic => !retransmission,
                TcpEcn::Dctcp { .. } => true,
            },
            cwr: false,
        })
    }

    /// A cumulative ACK arrived (already unwrapped), with the ECE flag
    /// `ece`. ACKs below snd_una or beyond snd_max are ignored.
    pub fn on_ack(&mut self, p: &TcpParams, now: Time, ack: u64, ece: bool) {
        if ack < self.snd_una || ack > self.snd_max {
            return;
        }
        // The ACK that cuts the window does not also grow it (Linux's CWR
        // state).
        let reduced = !p.ecn.is_off() && self.on_ecn_echo(p, ack, ece);
        if ack == self.snd_una {
            if self.snd_max > self.snd_una {
                self.on_dupack(p);
            }
            return;
        }
        let mss = p.mss as u64;
        let acked = ack - self.snd_una;
        // Grow the window only if it was what limited the sender (within one
        // segment) and it is below the receiver's: a sender held back by
        // the application or the adapter learns nothing about the path
        // (cwnd validation, RFC 7661; Linux's tcp_is_cwnd_limited).
        let cwnd_limited = self.flight() + mss > self.cwnd && self.cwnd < p.rwnd;
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        if let Some((end, sent)) = self.timed {
            if ack >= end {
                self.timed = None;
                self.sample_rtt(p, now - sent);
            }
        }
        let restart_timer = if !self.in_recovery {
            self.dupacks = 0;
            if cwnd_limited && !reduced {
                self.cwnd += if self.cwnd < self.ssthresh {
                    acked.min(mss)
                } else {
                    (mss * mss / self.cwnd).max(1)
                };
            }
            true
        } else if ack >= self.recover {
            // Full ACK: leave fast recovery.
            self.in_recovery = false;
            self.rtx_pending = false;
            self.dupacks = 0;
            self.cwnd = self.ssthresh.min(self.flight() + mss);
            true
        } else {
            // Partial ACK: resend the next hole, deflate by what left the
            // network, add back one MSS for the segment that did.
            self.stats.partial_acks += 1;
            self.rtx_pending = true;
            self.cwnd = self.cwnd.saturating_sub(acked) + if acked >= mss { mss } else { 0 };
            !std::mem::replace(&mut self.partial_seen, true)
        };
        if self.snd_una == self.snd_max {
            self.deadline = None;
        } else if restart_timer {
            self.deadline = Some(now + self.rto);
        }
    }

    /// ECN's part of an ACK, before the window moves (RFC 3168 §6.1.2, RFC
    /// 8257 §3.3): DCTCP counts the bytes it acknowledges, marked or not,
    /// and updates α once the window it measures has been acknowledged;
    /// an ECE then cuts the window unless one did within this window of
    /// data or a loss recovery already has. Returns whether it cut.
    fn on_ecn_echo(&mut self, p: &TcpParams, ack: u64, ece: bool) -> bool {
        if let TcpEcn::Dctcp { g, .. } = p.ecn {
            let acked = ack - self.snd_una;
            self.acked_bytes += acked;
            if ece {
                self.marked_bytes += acked;
            }
            if ack > self.alpha_window_end {
                if self.acked_bytes > 0 {
                    let f = self.marked_bytes as f64 / self.acked_bytes as f64;
                    self.alpha = (1.0 - g) * self.alpha + g * f;
                }
                self.acked_bytes = 0;
                self.marked_bytes = 0;
                self.alpha_window_end = self.snd_nxt;
            }
        }
        if !ece || self.in_recovery || ack < self.ecn_recover {
            return false;
        }
        let mss = p.mss as u64;
        self.ssthresh = match p.ecn {
            TcpEcn::Dctcp { .. } => {
                ((self.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64).max(2 * mss)
            }
            _ => self.loss_ssthresh(p),
        };
        self.cwnd = self.ssthresh;
        self.ecn_recover = self.snd_max.max(ack + 1);
        self.cwr_pending = true;
        self.stats.ecn_reductions += 1;
        true
    }

    fn on_dupack(&mut self, p: &TcpParams) {
        let mss = p.mss as u64;
        self.dupacks += 1;
        if self.in_recovery {
            self.cwnd += mss;
        } else if self.dupacks == p.dupack_threshold && self.snd_una >= self.recover {
            self.in_recovery = true;
            self.partial_seen = false;
            self.recover = self.snd_max;
            self.ssthresh = self.loss_ssthresh(p);
            self.cwnd = self.ssthresh + p.dupack_threshold as u64 * mss;
            self.rtx_pending = true;
            self.stats.fast_retransmits += 1;
        }
    }

    /// max(FlightSize/2, 2·MSS) (RFC 5681 equation 4).
    fn loss_ssthresh(&self, p: &TcpParams) -> u64 {
        (self.flight() / 2).max(2 * p.mss as u64)
    }

    /// RFC 6298 §2: update SRTT and RTTVAR with the sample `r`, recompute the
    /// RTO (which ends any backoff).
    fn sample_rtt(&mut self, p: &TcpParams, r: Time) {
        let r = r.0;
        let (srtt, rttvar) = match self.srtt {
            None => (r, r / 2),
            Some(Time(s)) => ((7 * s + r) / 8, (3 * self.rttvar.0 + s.abs_diff(r)) / 4),
        };
        self.srtt = Some(Time(srtt));
        self.rttvar = Time(rttvar);
        let rto = Time(srtt + p.granularity.0.max(4 * rttvar));
        self.rto = rto.clamp(p.min_rto, p.max_rto);
    }

    /// When the retransmission timer fires, if it is running.
    pub fn rto_deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// The engine's timer event at `now`. If the deadline has passed, time
    /// out (RFC 5681 §3.1, RFC 6298 §5.5–5.6, RFC 6582 §3.2 step 4) and
    /// return true; otherwise (the deadline moved later or the timer
    /// stopped) return false.
    pub fn on_timer(&mut self, p: &TcpParams, now: Time) -> bool {
        match self.deadline {
            Some(d) if now >= d => {}
            _ => return false,
        }
        self.stats.timeouts += 1;
        self.ssthresh = self.loss_ssthresh(p);
        self.cwnd = p.mss as u64;
        self.recover = self.snd_max;
        self.in_recovery = false;
        self.rtx_pending = false;
        self.dupacks = 0;
        self.snd_nxt = self.snd_una;
        self.timed = None;
        self.rto = Time(self.rto.0.saturating_mul(2)).min(p.max_rto);
        self.deadline = Some(now + self.rto);
        true
    }

    /// Nearest u64 sequence to the 32-bit wire value, relative to snd_una.
    pub fn unwrap_ack(&self, wire: u32) -> u64 {
        unwrap(self.snd_una, wire)
    }

    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// Bytes sent and counted in the network: snd_nxt − snd_una.
    pub fn flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    pub fn rto(&self) -> Time {
        self.rto
    }
    pub fn srtt(&self) -> Option<Time> {
        self.srtt
    }
    /// DCTCP's α (0 for other modes).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// Bytes written and not yet acknowledged.
    pub fn backlog(&self) -> u64 {
        self.written - self.snd_una
    }

    /// The finished form of a sender whose every byte is acknowledged
    /// (`all_acked`), for the ACKs that may still come.
    pub fn done(&self, p: &TcpParams) -> TcpSenderDone {
        debug_assert!(self.all_acked() && !self.in_recovery);
        TcpSenderDone {
            ece_cuts: !p.ecn.is_off() && self.snd_una >= self.ecn_recover,
        }
    }
}

/// What a sender with every byte acknowledged still does: an ACK can only
/// repeat the last one (it answers a duplicate segment), so the window,
/// the timer and α no longer matter to anything but one count. An ECE on
/// such an ACK cuts the window, and counts, if no earlier cut covers it
/// (`on_ecn_echo`'s rule); a cut then covers every later one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSenderDone {
    ece_cuts: bool,
}

impl TcpSenderDone {
    /// A late ACK of `ack` (unwrapped against `end`, the bytes
    /// acknowledged) with ECE `ece`: the ECN reductions it counts, 0 or 1,
    /// as `TcpSender::on_ack` would.
    pub fn on_ack(&mut self, end: u64, ack: u64, ece: bool) -> u64 {
        let cuts = ack == end && ece && self.ece_cuts;
        self.ece_cuts &= !cuts;
        u64::from(cuts)
    }
}

/// The receiving half of a connection.
#[derive(Debug, Default)]
pub struct TcpReceiver {
    rcv_nxt: u64,
    /// Data above rcv_nxt: sorted, disjoint, non-adjacent [start, end).
    ooo: Vec<(u64, u64)>,
    /// Full-sized in-order segments since the last ACK.
    unacked: u32,
    delack: Option<Time>,
    /// Bytes received again (already delivered or buffered).
    pub duplicate_bytes: u64,
    /// The ECE flag of the next ACK: RFC 3168 latches CE until a CWR,
    /// DCTCP echoes the last segment's CE.
    ece: bool,
    /// Segments that arrived marked CE.
    pub ce_segments: u64,
}

impl TcpReceiver {
    pub fn new() -> TcpReceiver {
        TcpReceiver::default()
    }

    /// A segment [seq, seq + len) arrived at `now`. In-order data advances
    /// rcv_nxt and pulls buffered ranges in; out-of-order data is buffered.
    /// ACKed at once: out-of-order and duplicate segments, a segment that
    /// fills (part of) a hole, every `segments`-th full in-order segment, and
    /// every segment without delayed ACKs; otherwise the delayed-ACK timer.
    /// `ce` and `cwr`: the segment arrived marked CE, and carries CWR.
    pub fn on_segment(
        &mut self,
        p: &TcpParams,
        now: Time,
        seq: u64,
        len: u32,
        ce: bool,
        cwr: bool,
    ) -> Received {
        self.ce_segments += u64::from(ce);
        let mut ack_before = None;
        if matches!(p.ecn, TcpEcn::Dctcp { .. })
            && ce != self.ece
            && (self.unacked > 0 || self.delack.is_some())
        {
            ack_before = Some(self.ack_sent());
        }
        self.ece = next_ece(p, self.ece, ce, cwr);
        let end = seq + len as u64;
        let dup =
            self.rcv_nxt.min(end).saturating_sub(seq) + self.buffered(seq.max(self.rcv_nxt), end);
        self.duplicate_bytes += dup;
        let duplicate = dup == len as u64;
        if seq > self.rcv_nxt {
            self.buffer(seq, end);
            return Received {
                delivered: 0,
                duplicate,
                ack: AckAction::Now,
                ack_before,
            };
        }
        let start = self.rcv_nxt;
        let fills_hole = !self.ooo.is_empty();
        if end > self.rcv_nxt {
            self.rcv_nxt = end;
            let k = self.ooo.iter().take_while(|r| r.0 <= end).count();
            if k > 0 {
                self.rcv_nxt = end.max(self.ooo[k - 1].1);
                self.ooo.drain(..k);
            }
        }
        let ack = if duplicate || fills_hole {
            AckAction::Now
        } else {
            self.delay(p, now, len)
        };
        Received {
            delivered: self.rcv_nxt - start,
            duplicate,
            ack,
            ack_before,
        }
    }

    /// Bytes of [s, e) already in the out-of-order list.
    fn buffered(&self, s: u64, e: u64) -> u64 {
        self.ooo
            .iter()
            .map(|&(a, b)| b.min(e).saturating_sub(a.max(s)))
            .sum()
    }

    /// Add [s, e) to the out-of-order list, merging what it touches.
    fn buffer(&mut self, s: u64, e: u64) {
        let i = self.ooo.partition_point(|r| r.1 < s);
        let j = i + self.ooo[i..].iter().take_while(|r| r.0 <= e).count();
        if i == j {
            self.ooo.insert(i, (s, e));
        } else {
            self.ooo[i] = (s.min(self.ooo[i].0), e.max(self.ooo[j - 1].1));
            self.ooo.drain(i + 1..j);
        }
    }

    fn delay(&mut self, p: &TcpParams, now: Time, len: u32) -> AckAction {
        let Some(d) = p.delayed_ack else {
            return AckAction::Now;
        };
        if len >= p.mss {
            self.unacked += 1;
            if self.unacked >= d.segments {
                return AckAction::Now;
            }
        }
        match self.delack {
            Some(_) => AckAction::Pending,
            None => {
                let t = now + d.timeout;
                self.delack = Some(t);
                AckAction::At(t)
            }
        }
    }

    /// The delayed-ACK timer fired at `now`: true if an ACK is still owed
    /// (the engine then sends `ack_sent()`), and the timer is cleared.
    pub fn on_delack_timer(&mut self, now: Time) -> bool {
        match self.delack {
            Some(t) if now >= t => {
                self.delack = None;
                self.unacked = 0;
                true
            }
            _ => false,
        }
    }

    pub fn delack_deadline(&self) -> Option<Time> {
        self.delack
    }

    /// An ACK is being sent now: its cumulative ACK number (rcv_nxt) and
    /// ECE flag. Clears the owed count and the delayed-ACK timer.
    pub fn ack_sent(&mut self) -> (u64, bool) {
        self.unacked = 0;
        self.delack = None;
        (self.rcv_nxt, self.ece)
    }

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Nearest u64 sequence to the 32-bit wire value, relative to rcv_nxt.
    pub fn unwrap_seq(&self, wire: u32) -> u64 {
        unwrap(self.rcv_nxt, wire)
    }

    /// The finished form of a receiver that has every byte of its flow and
    /// has just acknowledged them all (no ACK owed), for the copies of
    /// segments that may still come.
    pub fn done(&self) -> TcpReceiverDone {
        debug_assert!(self.unacked == 0 && self.delack.is_none() && self.ooo.is_empty());
        TcpReceiverDone { ece: self.ece }
    }
}

/// The ECE flag of the next ACK after a segment marked CE or not and
/// carrying CWR or not: RFC 3168 latches CE until a CWR, DCTCP echoes the
/// last segment's CE.
fn next_ece(p: &TcpParams, ece: bool, ce: bool, cwr: bool) -> bool {
    match p.ecn {
        TcpEcn::Off => ece,
        TcpEcn::Classic => ce || (ece && !cwr),
        TcpEcn::Dctcp { .. } => ce,
    }
}

/// What a receiver with every byte of its flow, all acknowledged, still
/// does: a segment can only be a copy of data it has, which it
/// acknowledges at once with the same number, and with ECE as its ECN
/// rule says. (DCTCP's early ACK on a change of CE needs an ACK owed,
/// and none is.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpReceiverDone {
    ece: bool,
}

impl TcpReceiverDone {
    /// A late segment, marked CE or not and carrying CWR or not: the ECE
    /// flag of the ACK it gets at once.
    pub fn on_segment(&mut self, p: &TcpParams, ce: bool, cwr: bool) -> bool {
        self.ece = next_ece(p, self.ece, ce, cwr);
        self.ece
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    const MSS: u64 = 1460;

    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Ev {
        Write(u64),
        /// Wire sequence number (low 32 bits) and length.
        Data(u32, u32),
        Ack(u32),
        Rto,
        DelAck,
    }

    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Snap {
        una: u64,
        cwnd: u64,
        ssthresh: u64,
        recovery: bool,
        deadline: Option<Time>,
    }

    /// A sender and a receiver joined by a pipe: a fixed one-way delay both
    /// ways and a bottleneck that takes `ser` per data segment.
    struct Pipe {
        p: TcpParams,
        tx: TcpSender,
        rx: TcpReceiver,
        delay: Time,
        ser: Time,
        now: Time,
        heap: BinaryHeap<Reverse<(Time, u64, Ev)>>,
        events: u64,
        link_free: Time,
        rto_at: Option<Time>,
        /// First transmissions of these sequence numbers are lost.
        drops: Vec<u64>,
        /// Every data segment sent in [start, end) is lost.
        blackout: (Time, Time),
        written: u64,
        delivered: u64,
        duplicates: u64,
        /// (time, RTO that expired, cwnd after).
        timeouts: Vec<(Time, Time, u64)>,
        /// ACKs the receiver sent: (time, ack).
        acks: Vec<(Time, u64)>,
        /// The sender after each ACK.
        trace: Vec<Snap>,
    }

    impl Pipe {
        fn new(p: TcpParams) -> Pipe {
            Pipe {
                tx: TcpSender::new(&p),
                rx: TcpReceiver::new(),
                p,
                delay: Time::from_us(100),
                ser: Time::from_ns(1200), // 1500 B at 10 Gb/s
                now: Time::ZERO,
                heap: BinaryHeap::new(),
                events: 0,
                link_free: Time::ZERO,
                rto_at: None,
                drops: Vec::new(),
                blackout: (Time::ZERO, Time::ZERO),
                written: 0,
                delivered: 0,
                duplicates: 0,
                timeouts: Vec::new(),
                acks: Vec::new(),
                trace: Vec::new(),
            }
        }

        fn at(&mut self, t: Time, ev: Ev) {
            self.events += 1;
            self.heap.push(Reverse((t, self.events, ev)));
        }

        /// Process every event up to `until`.
        fn run_until(&mut self, until: Time) {
            while let Some(&Reverse((t, _, ev))) = self.heap.peek() {
                if t > until {
                    break;
                }
                self.heap.pop();
                self.now = t;
                self.handle(ev);
                assert!(self.events < 10_000_000, "runaway");
            }
        }

        fn run(&mut self) {
            self.run_until(Time::MAX);
        }

        fn handle(&mut self, ev: Ev) {
            let (p, now) = (self.p, self.now);
            match ev {
                Ev::Write(b) => {
                    self.tx.write(b);
                    self.written += b;
                }
                Ev::Data(wire, len) => {
                    let seq = self.rx.unwrap_seq(wire);
                    let r = self.rx.on_segment(&p, now, seq, len, false, false);
                    self.delivered += r.delivered;
                    self.duplicates += r.duplicate as u64;
                    match r.ack {
                        AckAction::Now => self.send_ack(),
                        AckAction::At(t) => self.at(t, Ev::DelAck),
                        AckAction::Pending => {}
                    }
                }
                Ev::Ack(wire) => {
                    let ack = self.tx.unwrap_ack(wire);
                    self.tx.on_ack(&p, now, ack, false);
                    let tx = &self.tx;
                    self.trace.push(Snap {
                        una: tx.snd_una(),
                        cwnd: tx.cwnd(),
                        ssthresh: tx.ssthresh(),
                        recovery: tx.in_recovery(),
                        deadline: tx.rto_deadline(),
                    });
                }
                Ev::Rto => {
                    if self.rto_at == Some(now) {
                        self.rto_at = None;
                    }
                    let rto = self.tx.rto();
                    if self.tx.on_timer(&p, now) {
                        self.timeouts.push((now, rto, self.tx.cwnd()));
                    }
                }
                Ev::DelAck => {
                    if self.rx.on_delack_timer(now) {
                        self.send_ack();
                    }
                }
            }
            self.pump();
        }

        fn send_ack(&mut self) {
            let (a, _) = self.rx.ack_sent();
            self.acks.push((self.now, a));
            self.at(self.now + self.delay, Ev::Ack(a as u32));
        }

        /// Send what the sender allows and keep one timer event at or
        /// before its deadline.
        fn pump(&mut self) {
            while let Some(s) = self.tx.next_segment(&self.p, self.now) {
                let depart = self.now.max(self.link_free) + self.ser;
                self.link_free = depart;
                let (b0, b1) = self.blackout;
                let lost = (b0..b1).contains(&self.now)
                    || (!s.retransmission && self.drops.contains(&s.seq));
                if !lost {
                    self.at(depart + self.delay, Ev::Data(s.seq as u32, s.len));
                }
            }
            if let Some(d) = self.tx.rto_deadline() {
                if self.rto_at.is_none_or(|e| d < e) {
                    self.rto_at = Some(d);
                    self.at(d, Ev::Rto);
                }
            }
        }

        fn assert_complete(&self) {
            assert_eq!(self.delivered, self.written);
            assert_eq!(self.rx.rcv_nxt(), self.written);
            assert_eq!(self.tx.backlog(), 0);
            assert_eq!(self.tx.rto_deadline(), None);
        }
    }

    fn no_delack() -> TcpParams {
        TcpParams {
            delayed_ack: None,
            ..TcpParams::default()
        }
    }

    /// A pipe with `bytes` written at time 0.
    fn bulk(p: TcpParams, bytes: u64) -> Pipe {
        let mut pipe = Pipe::new(p);
        pipe.at(Time::ZERO, Ev::Write(bytes));
        pipe
    }

    /// cwnd at the middle of each of the first `rounds` round trips.
    fn cwnd_per_round(pipe: &mut Pipe, rounds: u64) -> Vec<u64> {
        (0..rounds)
            .map(|k| {
                pipe.run_until(Time(pipe.delay.0 * (2 * k + 1)));
                pipe.tx.cwnd()
            })
            .collect()
    }

    #[test]
    fn slow_start_doubles_cwnd_every_round_trip() {
        let mut pipe = bulk(no_delack(), 10_000_000);
        let cwnds = cwnd_per_round(&mut pipe, 6);
        assert_eq!(cwnds, [3, 6, 12, 24, 48, 96].map(|s| s * MSS));
        pipe.run();
        pipe.assert_complete();
    }

    #[test]
    fn congestion_avoidance_adds_about_one_mss_per_round_trip() {
        let p = TcpParams {
            initial_ssthresh: 12 * MSS,
            ..no_delack()
        };
        let mut pipe = bulk(p, 10_000_000);
        let cwnds = cwnd_per_round(&mut pipe, 14);
        assert_eq!(&cwnds[..3], [3 * MSS, 6 * MSS, 12 * MSS]);
        // A round's ACKs number about the previous round's cwnd in segments,
        // so the growth is MSS·cwnd_(k-1)/cwnd_k, a little under one MSS.
        for w in cwnds[3..].windows(2) {
            let growth = (w[1] - w[0]) as f64 / MSS as f64;
            assert!((0.85..=1.0).contains(&growth), "{cwnds:?}");
        }
    }

    /// Index of the ACK that started the (single) recovery and of the one that ended it.
    fn recovery_span(trace: &[Snap]) -> (usize, usize) {
        let entry = trace.iter().position(|t| t.recovery).unwrap();
        let exit = entry + trace[entry..].iter().position(|t| !t.recovery).unwrap();
        assert!(trace[exit..].iter().all(|t| !t.recovery));
        (entry, exit)
    }

    #[test]
    fn one_loss_is_repaired_by_one_fast_retransmit() {
        // IW 10: round 2 carries segments 10..30 with cwnd = 20 MSS. Losing
        // segment 10 gives 19 duplicate ACKs: ssthresh = 10 MSS, cwnd = 13
        // MSS inflated to 29 MSS (9 new segments). The retransmission's ACK
        // covers recover = 30 MSS, leaving flight 9 MSS: cwnd = 10 MSS.
        let p = TcpParams {
            initial_window: 10,
            ..no_delack()
        };
        let mut pipe = bulk(p, 200 * MSS);
        pipe.drops.push(10 * MSS);
        pipe.run();
        let s = pipe.tx.stats;
        assert_eq!(
            (s.fast_retransmits, s.retransmissions, s.timeouts),
            (1, 1, 0)
        );
        assert_eq!(s.partial_acks, 0);
        let (entry, exit) = recovery_span(&pipe.trace);
        let w = |i: usize| (pipe.trace[i].cwnd, pipe.trace[i].ssthresh);
        assert_eq!(w(entry), (13 * MSS, 10 * MSS));
        assert_eq!(w(exit - 1), (29 * MSS, 10 * MSS));
        assert_eq!(
            (pipe.trace[exit].una, w(exit)),
            (30 * MSS, (10 * MSS, 10 * MSS))
        );
        pipe.assert_complete();
        assert_eq!(pipe.rx.duplicate_bytes, 0);
    }

    #[test]
    fn several_losses_in_a_window_are_repaired_by_partial_acks() {
        let p = TcpParams {
            initial_window: 10,
            ..no_delack()
        };
        let mut pipe = bulk(p, 200 * MSS);
        pipe.drops.extend([10 * MSS, 12 * MSS, 14 * MSS]);
        pipe.run();
        let s = pipe.tx.stats;
        assert_eq!((s.fast_retransmits, s.partial_acks, s.timeouts), (1, 2, 0));
        assert_eq!(s.retransmissions, 3);
        // Entry as with one loss; 14 more duplicates inflate cwnd to 27 MSS.
        // Each partial ACK acks 2 MSS: cwnd − 2 + 1 MSS, then inflation by
        // the duplicates for the new data sent meanwhile.
        let (entry, exit) = recovery_span(&pipe.trace);
        let tr = &pipe.trace;
        let partial: Vec<usize> = (entry + 1..exit)
            .filter(|&i| tr[i].una > tr[i - 1].una)
            .collect();
        assert_eq!(partial.len(), 2);
        let (a, b) = (partial[0], partial[1]);
        assert_eq!(
            (tr[a - 1].cwnd, tr[a].una, tr[a].cwnd),
            (27 * MSS, 12 * MSS, 26 * MSS)
        );
        assert_eq!(
            (tr[b - 1].cwnd, tr[b].una, tr[b].cwnd),
            (33 * MSS, 14 * MSS, 32 * MSS)
        );
        // Only the first partial ACK restarts the timer.
        assert_ne!(tr[a].deadline, tr[a - 1].deadline);
        assert_eq!(tr[b].deadline, tr[b - 1].deadline);
        assert_eq!((tr[exit].cwnd, tr[exit].ssthresh), (10 * MSS, 10 * MSS));
        pipe.assert_complete();
        assert_eq!((pipe.rx.duplicate_bytes, pipe.duplicates), (0, 0));
    }

    #[test]
    fn a_blackout_times_out_with_backoff_and_then_completes() {
        let mut pipe = bulk(TcpParams::default(), 20_000_000);
        pipe.blackout = (Time::from_ms(5), Time::from_ms(300));
        pipe.run();
        let t = &pipe.timeouts;
        assert_eq!(pipe.tx.stats.timeouts, t.len() as u64);
        assert!(t.len() >= 2, "{t:?}");
        let (t1, rto1, cwnd1) = t[0];
        assert_eq!(rto1, Time::from_ms(200)); // min_rto: the RTT is ~0.2 ms
        assert_eq!(cwnd1, MSS);
        assert_eq!((t[1].0 - t1, t[1].1), (rto1 + rto1, rto1 + rto1));
        assert!(t.iter().all(|&(_, _, cwnd)| cwnd == MSS));
        pipe.assert_complete();
        assert_eq!(pipe.tx.stats.fast_retransmits, 0);
    }

    #[test]
    fn a_lossless_transfer_delivers_every_byte_once_in_order() {
        let mut pipe = Pipe::new(TcpParams::default());
        let (mut t, mut x, mut total) = (Time::ZERO, 12345u64, 0);
        while total < 10_000_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let chunk = (x >> 33) % 60_000 + 1;
            let chunk = chunk.min(10_000_000 - total);
            pipe.at(t, Ev::Write(chunk));
            total += chunk;
            t = t + Time::from_ns((x >> 20) % 50_000);
        }
        pipe.run();
        pipe.assert_complete();
        assert_eq!(pipe.written, 10_000_000);
        assert_eq!((pipe.rx.duplicate_bytes, pipe.duplicates), (0, 0));
        assert_eq!(pipe.tx.stats.retransmissions, 0);
        assert_eq!(pipe.tx.stats.timeouts, 0);
        // Every ACK advances: nothing was reordered or resent.
        assert!(pipe.acks.windows(2).all(|w| w[0].1 < w[1].1));
    }

    #[test]
    fn delayed_acks_every_second_segment_timer_and_out_of_order() {
        let p = TcpParams::default();
        let mss = p.mss;
        let mut rx = TcpReceiver::new();
        let t0 = Time::from_us(10);
        let timeout = Time::from_ms(40);
        let r = rx.on_segment(&p, t0, 0, mss, false, false);
        assert_eq!((r.delivered, r.ack), (MSS, AckAction::At(t0 + timeout)));
        let r = rx.on_segment(&p, t0, MSS, mss, false, false);
        assert_eq!(r.ack, AckAction::Now);
        assert_eq!(rx.ack_sent().0, 2 * MSS);
        assert_eq!(rx.delack_deadline(), None);
        // An odd last segment (and a short one after it) wait for the timer.
        let r = rx.on_segment(&p, t0, 2 * MSS, mss, false, false);
        assert_eq!(r.ack, AckAction::At(t0 + timeout));
        let r = rx.on_segment(&p, t0, 3 * MSS, 100, false, false);
        assert_eq!((r.delivered, r.ack), (100, AckAction::Pending));
        assert!(!rx.on_delack_timer(t0 + Time::from_ms(39)));
        assert!(rx.on_delack_timer(t0 + timeout));
        assert_eq!(rx.ack_sent().0, 3 * MSS + 100);
        // Out of order: ACKed at once, delivered when the hole fills (also at once).
        let base = 3 * MSS + 100;
        let r = rx.on_segment(&p, t0, base + MSS, mss, false, false);
        assert_eq!(
            (r.delivered, r.duplicate, r.ack),
            (0, false, AckAction::Now)
        );
        assert_eq!(rx.ack_sent().0, base);
        let r = rx.on_segment(&p, t0, base, mss, false, false);
        assert_eq!((r.delivered, r.ack), (2 * MSS, AckAction::Now));
        assert_eq!(rx.ack_sent().0, base + 2 * MSS);

        // Through the pipe: 11 full segments and a short one, one ACK per
        // two full segments, the last ACK at the delayed-ACK timeout.
        let mut pipe = bulk(p, 11 * MSS + 500);
        pipe.run();
        pipe.assert_complete();
        let acks: Vec<u64> = pipe.acks.iter().map(|a| a.1).collect();
        let mut want: Vec<u64> = (1..=5).map(|k| 2 * k * MSS).collect();
        want.push(11 * MSS + 500);
        assert_eq!(acks, want);
        // The 11th segment arrives just after the ACK for 10 MSS and arms
        // the timer; the short one finds it armed.
        let wait = pipe.acks[5].0 - pipe.acks[4].0;
        assert!(
            wait >= timeout && wait < timeout + Time::from_us(10),
            "{wait}"
        );
    }

    #[test]
    fn receiver_merges_out_of_order_ranges_and_counts_duplicates() {
        let p = no_delack();
        let mut rx = TcpReceiver::new();
        for seq in [30, 10, 50, 20, 40] {
            let r = rx.on_segment(&p, Time::ZERO, seq, 10, false, false);
            assert_eq!(r.delivered, 0);
        }
        assert_eq!(rx.ooo, [(10, 60)]);
        let r = rx.on_segment(&p, Time::ZERO, 25, 10, false, false);
        assert!(r.duplicate);
        let r = rx.on_segment(&p, Time::ZERO, 0, 15, false, false);
        assert_eq!((r.delivered, r.duplicate), (60, false));
        assert_eq!(rx.duplicate_bytes, 15);
        assert!(rx.ooo.is_empty());
        assert!(rx.on_segment(&p, Time::ZERO, 0, 60, false, false).duplicate);
        assert_eq!(rx.duplicate_bytes, 75);
    }

    #[test]
    fn rto_follows_rfc6298_and_karn_ignores_retransmitted_segments() {
        let p = TcpParams {
            min_rto: Time::from_ms(1),
            ..TcpParams::default()
        };
        let mut tx = TcpSender::new(&p);
        tx.write(10 * MSS);
        let s = tx.next_segment(&p, Time::ZERO).unwrap();
        assert_eq!(tx.rto_deadline(), Some(p.initial_rto));
        // First sample R = 10 ms: SRTT = R, RTTVAR = R/2, RTO = R + 4·R/2.
        tx.on_ack(&p, Time::from_ms(10), s.len as u64, false);
        assert_eq!(tx.srtt(), Some(Time::from_ms(10)));
        assert_eq!(tx.rto(), Time::from_ms(30));
        // Second sample 20 ms: RTTVAR = 3/4·5 + 1/4·10 = 6.25 ms,
        // SRTT = 7/8·10 + 1/8·20 = 11.25 ms, RTO = 11.25 + 25 ms.
        let t = Time::from_ms(10);
        while tx.next_segment(&p, t).is_some() {}
        tx.on_ack(&p, Time::from_ms(30), 2 * MSS, false);
        assert_eq!(tx.srtt(), Some(Time::from_us(11_250)));
        assert_eq!(tx.rto(), Time::from_us(36_250));
        assert_eq!(tx.rto_deadline(), Some(Time::from_us(66_250)));
        // With the default 200 ms floor the same samples give 200 ms.
        let d = TcpParams::default();
        let mut tx2 = TcpSender::new(&d);
        tx2.write(MSS);
        tx2.next_segment(&d, Time::ZERO);
        tx2.on_ack(&d, Time::from_ms(10), MSS, false);
        assert_eq!(tx2.rto(), d.min_rto);
        assert_eq!(tx2.rto_deadline(), None);

        // Karn: a segment resent after a timeout gives no sample, and the
        // backed-off RTO stays until a valid one.
        let mut tx = TcpSender::new(&p);
        tx.write(3 * MSS);
        tx.next_segment(&p, Time::ZERO);
        assert!(!tx.on_timer(&p, Time::from_ms(999)));
        assert!(tx.on_timer(&p, Time::from_ms(1_000)));
        assert_eq!(tx.rto(), Time::from_ms(2_000));
        let r = tx.next_segment(&p, Time::from_ms(1_000)).unwrap();
        assert!(r.retransmission && r.seq == 0);
        tx.on_ack(&p, Time::from_ms(1_001), MSS, false);
        assert_eq!((tx.srtt(), tx.rto()), (None, Time::from_ms(2_000)));
        // New data is timed again.
        tx.next_segment(&p, Time::from_ms(1_001)).unwrap();
        tx.on_ack(&p, Time::from_ms(1_005), 2 * MSS, false);
        assert_eq!(tx.srtt(), Some(Time::from_ms(4)));
        assert_eq!(tx.rto(), Time::from_ms(12));
    }

    #[test]
    fn sequence_numbers_unwrap_across_the_32_bit_boundary() {
        const B: u64 = 1 << 32;
        assert_eq!(unwrap(B - 100, 50), B + 50);
        assert_eq!(unwrap(B + 50, (B - 100) as u32), B - 100);
        assert_eq!(unwrap(5 * B + 7, 7), 5 * B + 7);
        assert_eq!(unwrap(5, u32::MAX - 15), (u32::MAX - 15) as u64);

        let p = TcpParams::default();
        let mut tx = TcpSender::new(&p);
        (tx.snd_una, tx.snd_nxt, tx.snd_max, tx.written) = (B - 1000, B - 1000, B - 1000, B + MSS);
        let s = tx.next_segment(&p, Time::ZERO).unwrap();
        assert_eq!(s.seq, B - 1000);
        assert_eq!(tx.unwrap_ack((B + 460) as u32), B + 460);
        assert_eq!(tx.unwrap_ack((B - 1000) as u32), B - 1000);

        let mut rx = TcpReceiver::new();
        rx.rcv_nxt = B - 1000;
        let seq = rx.unwrap_seq((B - 1000) as u32);
        assert_eq!(
            rx.on_segment(&p, Time::ZERO, seq, 1460, false, false)
                .delivered,
            MSS
        );
        assert_eq!(rx.rcv_nxt(), B + 460);
        assert_eq!(rx.unwrap_seq(460), B + 460);
        assert_eq!(rx.unwrap_seq((B - 1000) as u32), B - 1000);
    }

    #[test]
    fn for_frame_derives_the_mss() {
        assert_eq!(TcpParams::for_frame(1500).mss, 1460);
        assert_eq!(TcpParams::for_frame(9000).mss, 8960);
    }

    #[test]
    fn an_application_limited_sender_does_not_grow_its_window() {
        // One segment at a time, each ACKed before the next is written: the
        // window (3 segments) never limits, so it learns nothing and stays.
        let p = TcpParams {
            delayed_ack: None,
            ..TcpParams::default()
        };
        let mut s = TcpSender::new(&p);
        let iw = s.cwnd();
        let mut t = Time::ZERO;
        for _ in 0..20 {
            s.write(p.mss as u64);
            let seg = s.next_segment(&p, t).expect("a segment");
            t = t + Time::from_us(10);
            s.on_ack(&p, t, seg.seq + seg.len as u64, false);
        }
        assert_eq!(s.cwnd(), iw);
    }

    const M: u64 = 1460;

    /// Send every segment the window allows; their CWR flags.
    fn send_all(tx: &mut TcpSender, p: &TcpParams) -> Vec<bool> {
        std::iter::from_fn(|| tx.next_segment(p, Time::ZERO).map(|s| s.cwr)).collect()
    }

    #[test]
    fn dctcp_keeps_alpha_per_window_and_cuts_by_half_of_it_once_per_window() {
        let p = TcpParams {
            initial_window: 4,
            initial_ssthresh: 4 * M,
            delayed_ack: None,
            ecn: TcpEcn::DCTCP,
            ..TcpParams::default()
        };
        let mut tx = TcpSender::new(&p);
        tx.write(1000 * M);
        assert_eq!(send_all(&mut tx, &p), [false; 4]);
        let t = Time::from_us(10);
        // The first ACK ends the first window (it began at 0): F = 0, so
        // alpha = 15/16 * 1. Congestion avoidance: 5,840 + 1,460^2/5,840.
        tx.on_ack(&p, t, M, false);
        assert_eq!(tx.alpha(), 0.9375);
        assert_eq!(tx.cwnd(), 6205);
        // ECE: cwnd * (1 - alpha/2) = 6,205 * 0.53125 = 3,296.4, and no growth.
        tx.on_ack(&p, t, 2 * M, true);
        assert_eq!((tx.cwnd(), tx.ssthresh()), (3296, 3296));
        assert_eq!(tx.stats.ecn_reductions, 1);
        assert!(
            send_all(&mut tx, &p).is_empty(),
            "flight 2,920 + 1,460 > 3,296"
        );
        // Another ECE in the same window cuts nothing; the window grows by
        // 1,460^2/3,296 = 646, and the next new segment carries CWR.
        tx.on_ack(&p, t, 3 * M, true);
        assert_eq!(tx.cwnd(), 3942);
        assert_eq!(tx.stats.ecn_reductions, 1);
        assert_eq!(send_all(&mut tx, &p), [true]);
        tx.on_ack(&p, t, 4 * M, false);
        assert_eq!(tx.cwnd(), 3942 + 2_131_600 / 3942);
        assert_eq!(send_all(&mut tx, &p), [false, false]);
        // This ACK passes the window's end (5,840): 2,920 of its 5,840 bytes
        // were marked, F = 0.5: alpha = 15/16 * 0.9375 + 0.5/16.
        tx.on_ack(&p, t, 5 * M, false);
        assert_eq!(tx.alpha(), 0.91015625);
        // Past the data in flight at the cut, an ECE cuts again.
        tx.on_ack(&p, t, 6 * M, true);
        assert_eq!(tx.stats.ecn_reductions, 2);
    }

    #[test]
    fn classic_ecn_halves_once_per_window_and_the_receiver_echoes_until_cwr() {
        let p = TcpParams {
            initial_window: 10,
            delayed_ack: None,
            ecn: TcpEcn::Classic,
            ..TcpParams::default()
        };
        let mut tx = TcpSender::new(&p);
        tx.write(100 * M);
        send_all(&mut tx, &p);
        let t = Time::from_us(10);
        // ECE on the first ACK, 10 segments outstanding when it came:
        // ssthresh = max(10 x 1,460 / 2, 2 MSS) = 7,300, as for a loss.
        tx.on_ack(&p, t, M, true);
        assert_eq!((tx.cwnd(), tx.ssthresh()), (7300, 7300));
        tx.on_ack(&p, t, 2 * M, true);
        assert_eq!(tx.stats.ecn_reductions, 1, "once per window");
        let mut rx = TcpReceiver::new();
        let mut seg = |seq: u64, ce: bool, cwr: bool| {
            rx.on_segment(&p, t, seq * M, M as u32, ce, cwr);
            rx.ack_sent()
        };
        assert_eq!(seg(0, false, false), (M, false));
        assert_eq!(seg(1, true, false), (2 * M, true));
        assert_eq!(seg(2, false, false), (3 * M, true), "latched");
        assert_eq!(seg(3, false, true), (4 * M, false), "until CWR");
        assert_eq!(seg(4, true, true), (5 * M, true), "CE after CWR counts");
        // Retransmissions are not ECN-capable (RFC 3168 6.1.5); new data is.
        let mut fresh = TcpSender::new(&p);
        fresh.write(10 * M);
        let first = fresh.next_segment(&p, Time::ZERO).unwrap();
        assert!(first.ect && !first.retransmission);
        let d = fresh.rto_deadline().unwrap();
        assert!(fresh.on_timer(&p, d));
        let again = fresh.next_segment(&p, d).unwrap();
        assert!(again.retransmission && !again.ect);
    }

    #[test]
    fn dctcp_receiver_acks_at_once_when_ce_changes_with_an_ack_owed() {
        let p = TcpParams {
            ecn: TcpEcn::DCTCP,
            ..TcpParams::default()
        };
        let t = Time::from_us(1);
        let mut rx = TcpReceiver::new();
        let seg = |rx: &mut TcpReceiver, n: u64, ce: bool| {
            rx.on_segment(&p, t, n * M, M as u32, ce, false)
        };
        assert!(matches!(seg(&mut rx, 0, false).ack, AckAction::At(_)));
        let r = seg(&mut rx, 1, false);
        assert_eq!((r.ack, r.ack_before), (AckAction::Now, None));
        assert_eq!(rx.ack_sent(), (2 * M, false));
        // CE with nothing owed: no extra ACK; delayed as usual.
        let r = seg(&mut rx, 2, true);
        assert!(r.ack_before.is_none() && matches!(r.ack, AckAction::At(_)));
        // CE ends with segment 2 unacknowledged: its ACK (with ECE) first.
        let r = seg(&mut rx, 3, false);
        assert_eq!(r.ack_before, Some((3 * M, true)));
        assert!(
            matches!(r.ack, AckAction::At(_)),
            "segment 3 starts a new delay"
        );
        let r = seg(&mut rx, 4, false);
        assert_eq!((r.ack, r.ack_before), (AckAction::Now, None));
        assert_eq!(rx.ack_sent(), (5 * M, false));
        assert_eq!(rx.ce_segments, 1);
    }
}
