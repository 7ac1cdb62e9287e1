//! Traffic sources.

pub mod source;
