//! Link-level flow control.

pub mod headroom;
pub mod pause;
pub mod pfc;
pub mod watchdog;
