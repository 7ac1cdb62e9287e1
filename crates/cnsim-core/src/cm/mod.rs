//! Congestion management: one module per scheme. Each module holds the
//! scheme's parameters, its congestion-point half (on switch output queues)
//! and its reaction-point arithmetic (on the adapter's rate limiters, see
//! `net::rate_limiter`).

pub mod bcn;
pub mod e2cm;
pub mod qcn;
