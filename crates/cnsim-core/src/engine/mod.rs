//! Discrete-event machinery: the event queue and random streams.

pub mod fifo;
pub mod prefetch;
pub mod queue;
pub mod rng;

pub use fifo::Fifo;
pub use queue::{lazy_timer, EventKey, EventQueue, SEQ_BITS};
