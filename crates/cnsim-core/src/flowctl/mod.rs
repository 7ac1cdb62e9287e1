//! Link-level flow control.

pub mod pause;
pub mod pfc;
pub mod watchdog;
