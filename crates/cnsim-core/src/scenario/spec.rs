//! The resolved scenario: every default applied, every unit converted, every
//! name turned into an index. This is what the simulator is built from.

use crate::scenario::schema::{PauseMode, SourceKind, Transport};
use crate::units::{Rate, Time};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    pub name: String,
    pub duration: Time,
    pub seed: u64,
    pub bin: Time,
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    pub sources: Vec<SourceSpec>,
    pub plot: PlotSpec,
    pub bcn: Option<crate::cm::bcn::BcnParams>,
    pub e2cm: Option<crate::cm::e2cm::E2cmParams>,
    pub qcn: Option<crate::cm::qcn::QcnParams>,
    /// TCP parameters (MSS from each source's frame size), if the file has
    /// a `[tcp]` section or a TCP source.
    pub tcp: Option<crate::transport::tcp::TcpParams>,
    /// The PAUSE watchdog (on unless `[watchdog] enabled = false`).
    pub watchdog: Option<crate::flowctl::watchdog::WatchdogSpec>,
    pub metrics: MetricsSpec,
    /// The file's `[sweep]` section, checked for shape only; its keys and
    /// values are checked by loading each point. Not part of the scenario
    /// hash: it does not change what one run simulates.
    #[serde(skip_serializing)]
    pub sweep: Option<crate::scenario::schema::RawSweep>,
}

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
    PerOutput { bytes: u64 },
    PerInput { bytes: u64 },
    Unlimited,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PauseSpec {
    pub mode: PauseMode,
    /// Occupancy (bytes) at or above which XOFF is sent.
    pub xoff: u64,
    /// Occupancy (bytes) at or below which XON is sent.
    pub xon: u64,
    pub refresh: bool,
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
    /// Output queues are congestion points (when a scheme is configured).
    pub congestion_point: bool,
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
}

/// The rate at which the link into a host is drained: the full link rate,
/// except while the schedule says "reduced".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ServiceSchedule {
    pub rate: Rate,
    pub start: Time,
    pub end: Time,
    /// `Some((period, reduced))`: in each period from `start`, the first `reduced` is at `rate`.
    pub periodic: Option<(Time, Time)>,
}

impl ServiceSchedule {
    pub fn is_reduced(&self, t: Time) -> bool {
        if t < self.start || t >= self.end {
            return false;
        }
        match self.periodic {
            None => true,
            Some((period, reduced)) => (t.0 - self.start.0) % period.0 < reduced.0,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkSpec {
    pub a: usize,
    pub b: usize,
    pub rate: Rate,
    pub delay: Time,
}

#[derive(Debug, Clone, Serialize)]
pub struct SourceSpec {
    pub name: String,
    pub kind: SourceKind,
    pub transport: Transport,
    pub host: usize,
    /// Destination hosts (node indices); one is drawn uniformly per frame or transaction.
    pub dsts: Vec<usize>,
    /// Probability of a frame (or transaction) per slot.
    pub load: f64,
    pub frame: u32,
    /// Transaction size in bytes (transactions only).
    pub transaction: u64,
    pub start: Time,
    pub stop: Time,
    /// Offset of each unit within its slot; `None` draws it uniformly per
    /// unit so that sources are not phase-locked to each other.
    pub slot_offset: Option<Time>,
}

impl SourceSpec {
    /// The name of its flow to `dst`: the source's own name when it has
    /// one destination, "SOURCE->DST" otherwise.
    pub fn flow_name(&self, dst: &str) -> String {
        if self.dsts.len() == 1 {
            self.name.clone()
        } else {
            format!("{}->{dst}", self.name)
        }
    }
}

/// Derived metrics the summary reports.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MetricsSpec {
    pub fairness: Option<FairnessSpec>,
    pub stability: Option<StabilitySpec>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FairnessSpec {
    /// Flow indices.
    pub flows: Vec<usize>,
    /// Window, on bin edges.
    pub start: Time,
    pub end: Time,
    pub target: Rate,
}

#[derive(Debug, Clone, Serialize)]
pub struct StabilitySpec {
    /// Queue (port) index.
    pub queue: usize,
    pub threshold: u64,
    pub onset: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct PlotSpec {
    pub links: Vec<String>,
    pub flows: Vec<String>,
    pub queues: Vec<String>,
}

/// A flow is one (source, destination) pair.
#[derive(Debug, Clone, Serialize)]
pub struct FlowSpec {
    pub name: String,
    pub source: usize,
    pub src: usize,
    pub dst: usize,
}

impl Scenario {
    /// Flows in a stable order: by source, then by its destination list.
    pub fn flows(&self) -> Vec<FlowSpec> {
        let mut out = Vec::new();
        for (si, s) in self.sources.iter().enumerate() {
            for &d in &s.dsts {
                out.push(FlowSpec {
                    name: s.flow_name(&self.nodes[d].name),
                    source: si,
                    src: s.host,
                    dst: d,
                });
            }
        }
        out
    }

    /// Output queues, one per link end: "NODE->PEER".
    pub fn queue_names(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.links.len() * 2);
        for l in &self.links {
            out.push(format!(
                "{}->{}",
                self.nodes[l.a].name, self.nodes[l.b].name
            ));
            out.push(format!(
                "{}->{}",
                self.nodes[l.b].name, self.nodes[l.a].name
            ));
        }
        out
    }
}

impl Scenario {
    /// A short description with names resolved: what `cnsim validate` shows.
    pub fn describe(&self) -> serde_json::Value {
        let node_name = |i: usize| self.nodes[i].name.clone();
        serde_json::json!({
            "name": self.name,
            "duration_s": self.duration.as_secs_f64(),
            "seed": self.seed,
            "bin_s": self.bin.as_secs_f64(),
            "nodes": self.nodes.iter().map(|n| serde_json::json!({
                "name": n.name,
                "kind": if n.is_host() { "host" } else { "switch" },
            })).collect::<Vec<_>>(),
            "links": self.links.iter().map(|l| serde_json::json!({
                "a": node_name(l.a), "b": node_name(l.b),
                "rate_bps": l.rate.0, "delay_s": l.delay.as_secs_f64(),
            })).collect::<Vec<_>>(),
            "flows": self.flows().iter().map(|f| serde_json::json!({
                "name": f.name, "source": self.sources[f.source].name,
                "src": node_name(f.src), "dst": node_name(f.dst),
            })).collect::<Vec<_>>(),
            "queues": self.queue_names(),
            "plot": self.plot,
            "sweep": self.sweep,
            "memory_estimate_bytes": crate::sim::budget::memory_estimate(self),
        })
    }
}
