//! The network model: frames, ports (output queues on links), routing.

pub mod ecn;
pub mod frame;
pub mod mmu;
pub mod port;
pub mod rate_limiter;
pub mod routing;
pub mod sched;
pub mod topology;
