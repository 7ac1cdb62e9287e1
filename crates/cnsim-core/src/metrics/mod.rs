//! Counters and binned time series, recorded without allocation.

pub mod series;
