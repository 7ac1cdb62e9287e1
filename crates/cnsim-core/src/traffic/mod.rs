//! Traffic sources.

pub mod source;
pub mod cdf;
pub mod workload;
