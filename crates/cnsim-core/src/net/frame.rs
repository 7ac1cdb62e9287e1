//! Frames: small `Copy` values, never allocated on the heap.

use super::ecn::Ecn;
use crate::units::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameKind {
    Data,
    /// A BCN message: feedback `fb` (pages) from congestion point `cpid`
    /// about `flow`, addressed to the flow's source.
    Bcn,
    /// BCN(0,0): stop, then restart at the restart rate.
    BcnStop,
    /// An E2CM probe on its way to the flow's destination; `cpid` holds
    /// the index of its record (`cm::e2cm::ProbeRecord`).
    Probe,
    /// The probe reflected by the destination, back to the flow's source.
    ProbeReply,
    /// A QCN congestion notification message from congestion point `cpid`
    /// about `flow`: `qfb` and, in `aux`, the CNM's Qoff and Qdelta.
    Cnm,
    /// A TCP acknowledgment of `flow`, back to its source; `aux` is the ACK number.
    Ack,
    /// A DCQCN congestion notification packet from `flow`'s destination,
    /// which received a CE-marked frame of it, to its source.
    Cnp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// When the source produced it.
    pub created: Time,
    pub flow: u32,
    /// Host number of the destination (index into the routing table).
    pub dst_host: u32,
    /// The port the frame arrived on at the switch holding it (per-input
    /// accounting), its traffic class and its ECN codepoint, packed (see
    /// `Frame::tag`); read through `in_port`, `class` and `ecn`.
    pub tag: u32,
    /// Data: the congestion point whose rate limiter released it (`NO_CP`
    /// if none). Notifications: the congestion point that sent it.
    pub cpid: u32,
    /// A word whose meaning depends on the kind: a UDP data frame's
    /// sequence number in its flow (for the in-order check); a BCN message's feedback
    /// (pages, an `i32`); a CNM's Qoff and Qdelta (two `i16`, 64-byte
    /// units); a TCP segment's sequence number or an ACK's acknowledgment
    /// number (the low 32 bits, as on the wire). Read it through the
    /// accessor of the meaning (`udp_seq`, `wire_seq`, `fb`,
    /// `cnm_offsets`) and write it with the matching `pack_*`.
    pub aux: u32,
    /// Bytes on the wire (at most a jumbo frame).
    pub size: u16,
    pub kind: FrameKind,
    /// A CNM's quantized feedback (1..=63).
    pub qfb: u8,
}

/// `Frame::tag`: the port in the low 24 bits, then 3 bits of traffic class,
/// then 2 bits of ECN codepoint, then TCP's CWR and ECE flags and RoCE's NAK
/// flag. Packing keeps a frame at 32 bytes.
const PORT_BITS: u32 = 24;
pub const MAX_PORTS: usize = 1 << PORT_BITS;
const PORT_MASK: u32 = (1 << PORT_BITS) - 1;
const CLASS_SHIFT: u32 = PORT_BITS;
const ECN_SHIFT: u32 = PORT_BITS + 3;
/// A TCP segment's CWR flag (the sender reduced its window for an ECE).
pub const TCP_CWR: u32 = 1 << (ECN_SHIFT + 2);
/// A TCP ACK's ECE flag (the receiver echoes congestion experienced).
pub const TCP_ECE: u32 = 1 << (ECN_SHIFT + 3);
/// A RoCE ACK that is a NAK (the receiver found a gap).
pub const ROCE_NAK: u32 = 1 << (ECN_SHIFT + 4);

impl Frame {
    /// Every field zero: what a slot that holds no frame yet holds.
    pub const ZERO: Frame = Frame {
        created: Time::ZERO,
        flow: 0,
        dst_host: 0,
        tag: 0,
        cpid: 0,
        aux: 0,
        size: 0,
        kind: FrameKind::Data,
        qfb: 0,
    };

    /// A frame of `kind` and `size` with every other field zero, for tests
    /// to start from.
    #[cfg(test)]
    pub(crate) const fn blank(kind: FrameKind, size: u16) -> Frame {
        Frame {
            size,
            kind,
            ..Frame::ZERO
        }
    }

    /// The tag of a frame of traffic `class` (0..8) entering at `port`,
    /// not ECN-capable.
    #[inline]
    pub const fn tag(port: u32, class: u8) -> u32 {
        debug_assert!(port <= PORT_MASK && class < 8);
        port | (class as u32) << CLASS_SHIFT
    }

    /// `tag` with the ECN codepoint `ecn`.
    #[inline]
    pub const fn tag_ecn(port: u32, class: u8, ecn: Ecn) -> u32 {
        Self::tag(port, class) | (ecn as u32) << ECN_SHIFT
    }

    /// The port the frame arrived on at the switch holding it.
    #[inline]
    pub fn in_port(&self) -> u32 {
        self.tag & PORT_MASK
    }

    /// Record the port the frame arrives on, keeping class and ECN.
    #[inline]
    pub fn set_in_port(&mut self, port: u32) {
        debug_assert!(port <= PORT_MASK);
        self.tag = (self.tag & !PORT_MASK) | port;
    }

    /// The traffic class (priority, 0..8) the frame travels in.
    #[inline]
    pub fn class(&self) -> u8 {
        ((self.tag >> CLASS_SHIFT) & 7) as u8
    }

    /// The frame's ECN codepoint.
    #[inline]
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits(((self.tag >> ECN_SHIFT) & 3) as u8)
    }

    #[inline]
    pub fn set_ecn(&mut self, ecn: Ecn) {
        self.tag = (self.tag & !(3 << ECN_SHIFT)) | (ecn.bits() as u32) << ECN_SHIFT;
    }

    /// A TCP segment's CWR flag.
    #[inline]
    pub fn tcp_cwr(&self) -> bool {
        self.tag & TCP_CWR != 0
    }

    /// A TCP ACK's ECE flag; on a RoCE ACK, that it carries a CNP
    /// (`[dcqcn] cnp_on_ack`), the same echo of a mark.
    #[inline]
    pub fn tcp_ece(&self) -> bool {
        self.tag & TCP_ECE != 0
    }

    /// A RoCE ACK's NAK flag.
    #[inline]
    pub fn roce_nak(&self) -> bool {
        self.tag & ROCE_NAK != 0
    }

    #[inline]
    pub fn is_data(&self) -> bool {
        self.kind == FrameKind::Data
    }

    /// A UDP data frame's sequence number in its flow.
    #[inline]
    pub fn udp_seq(&self) -> u32 {
        self.aux
    }

    /// A TCP segment's sequence number or an ACK's acknowledgment number:
    /// the low 32 bits, as on the wire.
    #[inline]
    pub fn wire_seq(&self) -> u32 {
        self.aux
    }

    /// A TCP sequence or acknowledgment number as the wire carries it.
    #[inline]
    pub fn pack_wire_seq(seq: u64) -> u32 {
        seq as u32
    }

    /// Feedback of a BCN message, pages.
    #[inline]
    pub fn fb(&self) -> i32 {
        self.aux as i32
    }

    /// Pack a BCN message's feedback (pages) into `aux`.
    #[inline]
    pub fn pack_fb(fb: i32) -> u32 {
        fb as u32
    }

    /// A CNM's (Qoff, Qdelta), 64-byte units.
    #[inline]
    pub fn cnm_offsets(&self) -> (i16, i16) {
        ((self.aux >> 16) as u16 as i16, self.aux as u16 as i16)
    }

    /// Pack a CNM's (Qoff, Qdelta) into `aux`.
    #[inline]
    pub fn pack_offsets(qoff: i16, qdelta: i16) -> u32 {
        ((qoff as u16 as u32) << 16) | qdelta as u16 as u32
    }
}

// Frames ride inside events: keep them within half a cache line.
const _: () = assert!(std::mem::size_of::<Frame>() == 32);

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: Frame = Frame {
        qfb: 26,
        ..Frame::blank(FrameKind::Cnm, 128)
    };

    #[test]
    fn a_cnm_carries_signed_qoff_and_qdelta_in_one_word() {
        for (qoff, qdelta) in [(0, 0), (406, -125), (-406, 312), (i16::MAX, i16::MIN)] {
            let f = Frame {
                aux: Frame::pack_offsets(qoff, qdelta),
                ..BASE
            };
            assert_eq!(f.cnm_offsets(), (qoff, qdelta));
        }
    }

    #[test]
    fn port_class_and_ecn_share_the_tag_without_disturbing_each_other() {
        let mut f = Frame {
            tag: Frame::tag(MAX_PORTS as u32 - 1, 7),
            ..BASE
        };
        assert_eq!(
            (f.in_port(), f.class(), f.ecn()),
            (MAX_PORTS as u32 - 1, 7, Ecn::NotEct)
        );
        f.set_ecn(Ecn::Ce);
        f.set_in_port(5);
        assert_eq!((f.in_port(), f.class(), f.ecn()), (5, 7, Ecn::Ce));
        f.set_ecn(Ecn::Ect0);
        assert_eq!((f.in_port(), f.class(), f.ecn()), (5, 7, Ecn::Ect0));
        let g = Frame {
            tag: Frame::tag(12, 0),
            ..BASE
        };
        assert_eq!((g.in_port(), g.class(), g.ecn()), (12, 0, Ecn::NotEct));
    }

    #[test]
    fn a_bcn_message_reads_its_word_as_signed_pages() {
        let f = Frame {
            aux: Frame::pack_fb(-1875),
            kind: FrameKind::Bcn,
            ..BASE
        };
        assert_eq!(f.fb(), -1875);
    }
}
