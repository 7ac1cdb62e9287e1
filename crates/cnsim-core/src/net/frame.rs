//! Frames: small `Copy` values, never allocated on the heap.

use crate::units::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameKind {
    Data,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// When the source produced it.
    pub created: Time,
    pub flow: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// Host number of the destination (index into the routing table).
    pub dst_host: u32,
    /// Port the frame arrived on at the switch holding it (for per-input accounting).
    pub in_port: u32,
    pub kind: FrameKind,
}

/// A PAUSE frame is a minimum-size MAC control frame.
pub const PAUSE_FRAME_BYTES: u64 = 64;
/// One pause quantum is 512 bit times.
pub const PAUSE_QUANTUM_BITS: u64 = 512;
/// XOFF advertises the largest pause time.
pub const XOFF_QUANTA: u16 = 0xFFFF;
