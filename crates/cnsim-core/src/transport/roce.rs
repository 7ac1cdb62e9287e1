//! A RoCE-style reliable transport, as RDMA NICs run it over a lossless
//! fabric: the sender puts segments on the wire as fast as its rate limiter
//! lets it (no congestion window: DCQCN sets the rate), the receiver
//! accepts only the next expected segment and acknowledges in-order data
//! (coalesced), and answers a gap with one NAK, upon which the sender goes
//! back to the first missing byte and sends everything again (go-back-N).
//! A retransmission timer covers a lost NAK or tail. docs/model.md, "RoCE
//! transport".
//!
//! Sequence numbers are byte offsets from 0, like `tcp`'s (RoCE counts
//! packets; bytes keep one arithmetic for both transports). The engine owns
//! time, timer events and frames in flight.

use super::{unwrap, AckAction, Received, Segment};
use crate::units::Time;
use serde::Serialize;

/// Every RoCE parameter, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RoceParams {
    /// Payload bytes per full segment.
    pub mtu: u32,
    /// Header bytes on the wire per segment (Ethernet, IP, UDP, BTH, ICRC).
    pub header: u32,
    /// Wire size of an ACK or NAK.
    pub ack_bytes: u32,
    /// The receiver acknowledges every this many in-order segments...
    pub ack_every: u32,
    /// ...or this long after the first unacknowledged one.
    pub ack_timeout: Time,
    /// Retransmission timeout: go back to the first unacknowledged byte
    /// when nothing was acknowledged for this long.
    pub rto: Time,
    /// The receiver NAKs the same gap again after this long (a lost
    /// retransmission), as ns-3's RDMA model does.
    pub nak_interval: Time,
    /// Most bytes in flight (unacknowledged); `u64::MAX` is unlimited.
    pub window: u64,
}

impl Default for RoceParams {
    fn default() -> RoceParams {
        RoceParams {
            mtu: 1000,
            header: 58,
            ack_bytes: 64,
            ack_every: 1,
            ack_timeout: Time::from_us(10),
            // RDMA NICs' local ACK timeout, 4.096 us x 2^14 (67 ms), rounded:
            // long enough that a segment waiting behind a slow limiter or
            // a PFC pause is not sent again.
            rto: Time::from_ms(64),
            nak_interval: Time::from_us(500),
            window: u64::MAX,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RoceStats {
    pub segments_sent: u64,
    pub retransmissions: u64,
    /// NAKs that made the sender go back.
    pub go_backs: u64,
    pub timeouts: u64,
}

/// The sending half of a queue pair.
#[derive(Debug, Default)]
pub struct RoceSender {
    written: u64,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    deadline: Option<Time>,
    pub stats: RoceStats,
}

impl RoceSender {
    pub fn new() -> RoceSender {
        RoceSender::default()
    }

    /// The application appends `bytes` (a message, or more of a stream).
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
    pub fn peek(&self, p: &RoceParams) -> Option<u32> {
        let len = (self.written - self.snd_nxt).min(p.mtu as u64);
        (len > 0 && self.snd_nxt - self.snd_una + len <= p.window).then_some(len as u32)
    }

    /// Take the next segment: the data at snd_nxt (new, or again after
    /// going back).
    pub fn next_segment(&mut self, p: &RoceParams, now: Time) -> Option<Segment> {
        let len = self.peek(p)?;
        let seq = self.snd_nxt;
        let retransmission = seq < self.snd_max;
        self.snd_nxt += len as u64;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        self.stats.segments_sent += 1;
        if retransmission {
            self.stats.retransmissions += 1;
        }
        if self.deadline.is_none() {
            self.deadline = Some(now + p.rto);
        }
        Some(Segment {
            seq,
            len,
            retransmission,
            ect: true,
            cwr: false,
        })
    }

    /// An ACK (`nak` false) or a NAK of `ack`, the first byte the receiver
    /// has not got. A NAK sends the sender back to it.
    pub fn on_ack(&mut self, p: &RoceParams, now: Time, ack: u64, nak: bool) {
        if ack < self.snd_una || ack > self.snd_max {
            return;
        }
        let progress = ack > self.snd_una;
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        if nak {
            self.snd_nxt = ack;
            self.stats.go_backs += 1;
        }
        if self.snd_una == self.snd_max {
            self.deadline = None;
        } else if progress || nak {
            self.deadline = Some(now + p.rto);
        }
    }

    /// When the retransmission timer fires, if it is running.
    pub fn rto_deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// The engine's timer event at `now`: if the deadline has passed, go
    /// back to snd_una and return true.
    pub fn on_timer(&mut self, p: &RoceParams, now: Time) -> bool {
        match self.deadline {
            Some(d) if now >= d => {}
            _ => return false,
        }
        self.stats.timeouts += 1;
        self.snd_nxt = self.snd_una;
        self.deadline = Some(now + p.rto);
        true
    }

    pub fn unwrap_ack(&self, wire: u32) -> u64 {
        unwrap(self.snd_una, wire)
    }

    pub fn flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
}

/// The receiving half of a queue pair.
#[derive(Debug, Default)]
pub struct RoceReceiver {
    rcv_nxt: u64,
    /// In-order segments since the last ACK.
    unacked: u32,
    ack_at: Option<Time>,
    /// The last NAK: the gap it named and when; the same gap is NAKed
    /// again only `nak_interval` later.
    last_nak: Option<(u64, Time)>,
    /// The next ACK is a NAK.
    nak: bool,
    /// The next ACK carries a CNP.
    cnp: bool,
    /// Bytes received again or out of order, and discarded.
    pub discarded_bytes: u64,
    pub naks: u64,
}

impl RoceReceiver {
    pub fn new() -> RoceReceiver {
        RoceReceiver::default()
    }

    /// A segment [seq, seq + len) arrived at `now`. The next expected one
    /// is delivered; one beyond it is discarded and NAKed at once, unless
    /// this gap was NAKed less than `nak_interval` ago; an old one (a
    /// duplicate after going back) is discarded and acknowledged at once,
    /// so the sender learns where the receiver is.
    pub fn on_segment(&mut self, p: &RoceParams, now: Time, seq: u64, len: u32) -> Received {
        let discard = |r: &mut RoceReceiver, ack| {
            r.discarded_bytes += len as u64;
            Received {
                delivered: 0,
                duplicate: true,
                ack,
                ack_before: None,
            }
        };
        if seq > self.rcv_nxt {
            let gap = self.rcv_nxt;
            if self
                .last_nak
                .is_some_and(|(at, t)| at == gap && now < t + p.nak_interval)
            {
                return discard(self, AckAction::Pending);
            }
            self.last_nak = Some((gap, now));
            self.nak = true;
            self.naks += 1;
            return discard(self, AckAction::Now);
        }
        if seq < self.rcv_nxt {
            return discard(self, AckAction::Now);
        }
        self.rcv_nxt += len as u64;
        self.unacked += 1;
        let ack = if self.unacked >= p.ack_every {
            AckAction::Now
        } else if self.ack_at.is_some() {
            AckAction::Pending
        } else {
            let t = now + p.ack_timeout;
            self.ack_at = Some(t);
            AckAction::At(t)
        };
        Received {
            delivered: len as u64,
            duplicate: false,
            ack,
            ack_before: None,
        }
    }

    /// The coalescing timer fired at `now`: true if an ACK is still owed.
    pub fn on_ack_timer(&mut self, now: Time) -> bool {
        match self.ack_at {
            Some(t) if now >= t => {
                self.ack_at = None;
                self.unacked > 0
            }
            _ => false,
        }
    }

    pub fn ack_deadline(&self) -> Option<Time> {
        self.ack_at
    }

    /// The next ACK (or NAK) carries a CNP.
    pub fn echo_cnp(&mut self) {
        self.cnp = true;
    }

    /// An ACK is sent now: its number (rcv_nxt), whether it is a NAK and
    /// whether it carries a CNP.
    pub fn ack_sent(&mut self) -> (u64, bool, bool) {
        self.unacked = 0;
        self.ack_at = None;
        (
            self.rcv_nxt,
            std::mem::take(&mut self.nak),
            std::mem::take(&mut self.cnp),
        )
    }

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    pub fn unwrap_seq(&self, wire: u32) -> u64 {
        unwrap(self.rcv_nxt, wire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1000;

    fn p() -> RoceParams {
        RoceParams::default()
    }

    #[test]
    fn the_sender_sends_everything_written_without_a_window() {
        let mut tx = RoceSender::new();
        tx.write(10 * M + 500);
        let segs: Vec<(u64, u32)> = std::iter::from_fn(|| tx.next_segment(&p(), Time::ZERO))
            .map(|s| (s.seq, s.len))
            .collect();
        assert_eq!(segs.len(), 11);
        assert_eq!(segs[10], (10 * M, 500));
        assert_eq!(tx.flight(), 10 * M + 500);
        let small = RoceParams {
            window: 3 * M,
            ..p()
        };
        let mut tx = RoceSender::new();
        tx.write(10 * M);
        assert_eq!(
            std::iter::from_fn(|| tx.next_segment(&small, Time::ZERO)).count(),
            3
        );
    }

    #[test]
    fn a_gap_is_naked_once_and_the_sender_goes_back_n() {
        let (p, t) = (p(), Time::from_us(1));
        let mut tx = RoceSender::new();
        tx.write(6 * M);
        let segs: Vec<Segment> = std::iter::from_fn(|| tx.next_segment(&p, t)).collect();
        let mut rx = RoceReceiver::new();
        // Segment 1 is lost: 0 is delivered, 2 is NAKed, 3..5 discarded quietly.
        assert_eq!(
            rx.on_segment(&p, t, segs[0].seq, M as u32).ack,
            AckAction::Now
        );
        assert_eq!(rx.ack_sent(), (M, false, false));
        let r = rx.on_segment(&p, t, segs[2].seq, M as u32);
        assert_eq!((r.delivered, r.ack), (0, AckAction::Now));
        assert_eq!(rx.ack_sent(), (M, true, false));
        for s in &segs[3..] {
            assert_eq!(
                rx.on_segment(&p, t, s.seq, M as u32).ack,
                AckAction::Pending
            );
        }
        assert_eq!((rx.naks, rx.discarded_bytes), (1, 4 * M));
        // The same gap is NAKed again once the interval has passed.
        let later = t + p.nak_interval;
        assert_eq!(
            rx.on_segment(&p, later, 5 * M, M as u32).ack,
            AckAction::Now
        );
        assert_eq!(rx.ack_sent(), (M, true, false));
        // The sender gets ACK 1000, then NAK 1000: everything from 1000 again.
        tx.on_ack(&p, t, M, false);
        tx.on_ack(&p, t, M, true);
        let again: Vec<Segment> = std::iter::from_fn(|| tx.next_segment(&p, t)).collect();
        assert_eq!(
            again.iter().map(|s| s.seq).collect::<Vec<_>>(),
            [M, 2 * M, 3 * M, 4 * M, 5 * M]
        );
        assert!(again.iter().all(|s| s.retransmission));
        assert_eq!((tx.stats.retransmissions, tx.stats.go_backs), (5, 1));
        assert_eq!(rx.naks, 2);
        for s in &again {
            assert_eq!(rx.on_segment(&p, t, s.seq, M as u32).delivered, M);
        }
        assert_eq!(rx.rcv_nxt(), 6 * M);
    }

    #[test]
    fn the_timer_goes_back_when_the_tail_is_lost() {
        let (p, t0) = (p(), Time::ZERO);
        let mut tx = RoceSender::new();
        tx.write(2 * M);
        while tx.next_segment(&p, t0).is_some() {}
        tx.on_ack(&p, Time::from_us(5), M, false);
        let d = tx.rto_deadline().unwrap();
        assert_eq!(d, Time::from_us(5) + p.rto, "restarted by progress");
        assert!(!tx.on_timer(&p, d - Time(1)));
        assert!(tx.on_timer(&p, d));
        let s = tx.next_segment(&p, d).unwrap();
        assert_eq!((s.seq, s.retransmission), (M, true));
        tx.on_ack(&p, d, 2 * M, false);
        assert_eq!(tx.rto_deadline(), None, "all acknowledged");
    }

    #[test]
    fn acks_are_coalesced_by_count_or_time() {
        let p = RoceParams {
            ack_every: 3,
            ..p()
        };
        let mut rx = RoceReceiver::new();
        let t = Time::from_us(1);
        assert_eq!(
            rx.on_segment(&p, t, 0, 1000).ack,
            AckAction::At(t + p.ack_timeout)
        );
        assert_eq!(rx.on_segment(&p, t, M, 1000).ack, AckAction::Pending);
        assert_eq!(rx.on_segment(&p, t, 2 * M, 1000).ack, AckAction::Now);
        assert_eq!(rx.ack_sent(), (3 * M, false, false));
        rx.on_segment(&p, t, 3 * M, 1000);
        assert!(rx.on_ack_timer(t + p.ack_timeout));
        assert_eq!(rx.ack_sent(), (4 * M, false, false));
    }

    #[test]
    fn a_cnp_rides_on_the_next_ack_only() {
        let mut rx = RoceReceiver::new();
        let p = RoceParams {
            ack_every: 2,
            ..p()
        };
        rx.on_segment(&p, Time::ZERO, 0, M as u32);
        rx.echo_cnp();
        rx.on_segment(&p, Time::ZERO, M, M as u32);
        assert_eq!(rx.ack_sent(), (2 * M, false, true));
        rx.on_segment(&p, Time::ZERO, 2 * M, M as u32);
        rx.on_segment(&p, Time::ZERO, 3 * M, M as u32);
        assert_eq!(rx.ack_sent(), (4 * M, false, false));
    }
}
