//! The network as the simulator is built from it: nodes (switches and
//! hosts, with their buffers and PAUSE configuration) and the links between
//! them. The scenario layer resolves a file into these.

use super::port::ServiceSchedule;
use crate::flowctl::pause::PauseSpec;
use crate::units::{Rate, Time};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
}

#[derive(Debug, Clone, Serialize)]
pub enum NodeKind {
    Switch(SwitchSpec),
    Host(HostSpec),
}

impl NodeSpec {
    pub fn is_host(&self) -> bool {
        matches!(self.kind, NodeKind::Host(_))
    }
    pub fn response_time(&self) -> Time {
        match &self.kind {
            NodeKind::Switch(s) => s.response_time,
            NodeKind::Host(h) => h.response_time,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BufferModel {
    PerOutput {
        bytes: u64,
    },
    PerInput {
        bytes: u64,
    },
    Unlimited,
    /// One buffer of `bytes` for the whole switch, managed as an ASIC's MMU
    /// does (`SwitchSpec::shared`).
    Shared {
        bytes: u64,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct SwitchSpec {
    /// Store-and-forward latency from full reception to the output queue.
    pub latency: Time,
    /// Delay before a received PAUSE frame takes effect.
    pub response_time: Time,
    pub buffer: BufferModel,
    pub queue_limit: Option<u64>,
    pub pause: Option<PauseSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc: Option<crate::flowctl::pfc::PfcSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn: Option<crate::net::ecn::SwitchEcn>,
    /// With `BufferModel::Shared`: reserves, thresholds and headroom.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared: Option<crate::net::mmu::SharedBufferSpec>,
    /// Output queues are congestion points (when a scheme is configured).
    pub congestion_point: bool,
    /// Routes that replace the shortest paths toward some hosts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<StaticRoute>,
    /// Schedulers of some output ports, instead of the scenario's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schedulers: Vec<PortSched>,
}

/// The output ports toward `peers` (node indices; every port of the
/// switch when empty) schedule their classes by `sched`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortSched {
    pub peers: Vec<usize>,
    pub sched: crate::net::sched::SchedSpec,
}

impl SwitchSpec {
    /// The scheduler of this switch's port toward `peer`, if it has its own.
    pub fn sched_toward(&self, peer: usize) -> Option<&crate::net::sched::SchedSpec> {
        self.schedulers
            .iter()
            .find(|s| s.peers.is_empty() || s.peers.contains(&peer))
            .map(|s| &s.sched)
    }
}

/// Frames toward `hosts` (node indices) leave through the link to the
/// neighbouring switch `via`, whatever the shortest paths are: a stale
/// route after a link failure, or a path a study wants to force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StaticRoute {
    pub hosts: Vec<usize>,
    pub via: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct HostSpec {
    /// Egress buffer; `None` is unlimited.
    pub egress: Option<u64>,
    /// Sources stop producing when the next frame would take occupancy above this.
    pub egress_high: Option<u64>,
    /// Stopped sources resume once occupancy is at or below this.
    pub egress_low: Option<u64>,
    pub response_time: Time,
    /// Service-rate schedule of the link into this host.
    pub service: Option<ServiceSchedule>,
    /// Per-flow queues in front of the egress buffer (see `RawHost::voq`).
    pub voq: bool,
    /// Delay from the per-flow queues to the egress buffer.
    pub loop_delay: Time,
    /// Width of the uniform jitter on the gaps of this host's rate
    /// limiters, a fraction of the gap (0: exact spacing).
    #[serde(skip_serializing_if = "is_zero")]
    pub limiter_jitter: f64,
}

/// Fields at their default are left out of a scenario's serialised form,
/// so that adding one leaves the hash of every scenario without it as it was.
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkSpec {
    pub a: usize,
    pub b: usize,
    pub rate: Rate,
    pub delay: Time,
}

/// The rate of the first link of `node` (a host's only link), if it has one.
pub fn link_rate_of(links: &[LinkSpec], node: usize) -> Option<crate::units::Rate> {
    links
        .iter()
        .find(|l| l.a == node || l.b == node)
        .map(|l| l.rate)
}

/// The nodes linked to `node`, in link order (once per link).
pub fn neighbours(links: &[LinkSpec], node: usize) -> impl Iterator<Item = usize> + '_ {
    links.iter().filter_map(move |l| {
        if l.a == node {
            Some(l.b)
        } else if l.b == node {
            Some(l.a)
        } else {
            None
        }
    })
}
