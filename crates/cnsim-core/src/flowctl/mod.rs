//! Link-level flow control.

pub mod pause;
pub mod watchdog;
