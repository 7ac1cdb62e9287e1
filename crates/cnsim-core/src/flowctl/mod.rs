//! Link-level flow control.

pub mod pause;
