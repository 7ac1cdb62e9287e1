//! Transport protocols run by end stations on top of the simulated Ethernet:
//! pure state machines that the engine drives with segments, ACKs and timer
//! events. PROTOCOLS.md section 5.

pub mod tcp;
