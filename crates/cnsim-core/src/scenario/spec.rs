//! The resolved scenario: every default applied, every unit converted, every
//! name turned into an index. This is what the simulator is built from.

use crate::scenario::schema::{SourceKind, Transport};
use crate::units::{Rate, Time};
use serde::Serialize;

pub use crate::flowctl::pause::PauseSpec;
pub use crate::net::port::ServiceSchedule;
pub use crate::net::topology::{
    BufferModel, HostSpec, LinkSpec, NodeKind, NodeSpec, PortSched, StaticRoute, SwitchSpec,
};

#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    pub name: String,
    pub duration: Time,
    pub seed: u64,
    /// Threads the run may use (`threads`); not part of the model, so not
    /// in the resolved scenario either.
    #[serde(skip)]
    pub threads: usize,
    pub bin: Time,
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    pub sources: Vec<SourceSpec>,
    /// Finite flows drawn when a run starts (`[[workloads]]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<crate::traffic::workload::WorkloadSpec>,
    /// End the run once every workload flow has finished (`until =
    /// "flows_finished"`), `duration` being the limit.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub until_flows_finished: bool,
    pub plot: PlotSpec,
    pub bcn: Option<crate::cm::bcn::BcnParams>,
    pub e2cm: Option<crate::cm::e2cm::E2cmParams>,
    pub qcn: Option<crate::cm::qcn::QcnParams>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dcqcn: Option<crate::cm::dcqcn::DcqcnParams>,
    /// TCP parameters (MSS from each source's frame size), if the file has
    /// a `[tcp]` section or a TCP source.
    pub tcp: Option<crate::transport::tcp::TcpParams>,
    /// RoCE parameters (payload from each source's frame), if the file has
    /// a `[roce]` section or a RoCE source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roce: Option<crate::transport::roce::RoceParams>,
    /// The PAUSE watchdog (on unless `[watchdog] enabled = false`).
    pub watchdog: Option<crate::flowctl::watchdog::WatchdogSpec>,
    pub metrics: MetricsSpec,
    /// Traffic classes; absent: one class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priorities: Option<PrioritySpec>,
    /// The file's `[sweep]` section, checked for shape only; its keys and
    /// values are checked by loading each point. Not part of the scenario
    /// hash: it does not change what one run simulates.
    #[serde(skip_serializing)]
    pub sweep: Option<crate::scenario::schema::RawSweep>,
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
    /// Traffic class of its frames.
    #[serde(skip_serializing_if = "is_zero")]
    pub priority: u8,
    /// Its frames are ECN-capable.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ecn: bool,
}

fn is_zero(v: &u8) -> bool {
    *v == 0
}

/// Traffic classes on every port (`[priorities]`).
#[derive(Debug, Clone, Serialize)]
pub struct PrioritySpec {
    /// Classes 0..classes exist (1..=8).
    pub classes: u8,
    pub sched: crate::net::sched::SchedSpec,
    /// Class of TCP ACKs; `None`: the flow's.
    pub acks: Option<u8>,
    /// Class of congestion notifications; `None`: the flow's.
    pub notifications: Option<u8>,
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
    /// Binned series of the bytes held per switch ingress (port, class).
    pub ingress_occupancy: bool,
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

/// A flow: one (source, destination) pair of a source, or one finite flow
/// of a workload.
#[derive(Debug, Clone, Serialize)]
pub struct FlowSpec {
    pub name: String,
    pub origin: FlowOrigin,
    pub src: usize,
    pub dst: usize,
    pub transport: Transport,
    /// Largest frame on the wire.
    pub frame: u32,
    pub priority: u8,
    /// Its data frames are ECN-capable (sources' `ecn`; connections decide
    /// their own).
    pub ecn: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FlowOrigin {
    /// The source of that index.
    Source(usize),
    /// Flow `index` (in start order) of workload `workload`: `size`
    /// bytes from `start`.
    Workload {
        workload: usize,
        index: usize,
        size: u64,
        start: Time,
    },
}

impl Scenario {
    /// A congestion-notification scheme runs: flows have rate limiters.
    pub fn has_rate_limiters(&self) -> bool {
        self.bcn.is_some() || self.qcn.is_some() || self.dcqcn.is_some()
    }

    /// Some flow keeps an α: DCQCN's reaction points or DCTCP senders.
    pub fn has_alpha(&self) -> bool {
        self.dcqcn.is_some()
            || self
                .tcp
                .is_some_and(|t| matches!(t.ecn, crate::transport::tcp::TcpEcn::Dctcp { .. }))
    }

    /// The scheme's reaction points keep a target rate (QCN's TR).
    pub fn has_target_rate(&self) -> bool {
        self.qcn.is_some() || self.dcqcn.is_some()
    }

    /// The flows of the sources in a stable order: by source, then by its
    /// destination list. (A run adds its workloads' flows after these, see
    /// `run_flows`.)
    pub fn flows(&self) -> Vec<FlowSpec> {
        let mut out = Vec::new();
        for (si, s) in self.sources.iter().enumerate() {
            for &d in &s.dsts {
                out.push(FlowSpec {
                    name: s.flow_name(&self.nodes[d].name),
                    origin: FlowOrigin::Source(si),
                    src: s.host,
                    dst: d,
                    transport: s.transport,
                    frame: s.frame,
                    priority: s.priority,
                    ecn: s.ecn,
                });
            }
        }
        out
    }

    /// The rate of a host's link (a scenario's hosts have one each).
    pub fn host_rate(&self, host: usize) -> Rate {
        crate::net::topology::link_rate_of(&self.links, host).expect("every host has a link")
    }

    /// Every flow of a run with `seed`: the sources' flows, then each
    /// workload's flows in order of start time, named `WORKLOAD#K`.
    pub fn run_flows(&self, seed: u64) -> Vec<FlowSpec> {
        let mut out = self.flows();
        let line = |h: usize| self.host_rate(h);
        let drawn: Vec<(usize, Vec<crate::traffic::workload::FlowArrival>)> = self
            .workloads
            .iter()
            .enumerate()
            .map(|(w, spec)| (w, spec.flows(seed, &line)))
            .collect();
        // All workloads' flows merged by start time (ties: workload order).
        let mut merged: Vec<(Time, usize, usize)> = drawn
            .iter()
            .flat_map(|(w, fs)| fs.iter().enumerate().map(move |(k, f)| (f.start, *w, k)))
            .collect();
        merged.sort_unstable();
        out.reserve(merged.len());
        for (_, w, k) in merged {
            let spec = &self.workloads[w];
            let f = drawn[w].1[k];
            out.push(FlowSpec {
                name: format!("{}#{k}", spec.name),
                origin: FlowOrigin::Workload {
                    workload: w,
                    index: k,
                    size: f.size,
                    start: f.start,
                },
                src: f.src,
                dst: f.dst,
                transport: spec.transport,
                frame: spec.frame,
                priority: f.priority,
                ecn: false,
            });
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
