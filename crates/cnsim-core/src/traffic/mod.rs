//! Traffic sources.

pub mod cdf;
pub mod source;
pub mod workload;
