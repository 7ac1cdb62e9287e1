//! The scenario file as written: serde structs that mirror the TOML.
//!
//! Unit-carrying values stay strings here and are converted (with their
//! location) by `build`. Unknown keys are rejected everywhere. The JSON
//! Schema of the format is derived from these types (`json_schema.rs`):
//! their doc comments are its descriptions, and each quantity says its
//! kind (`js::Time`, `js::Rate`, `js::Size`, ...).

use super::json_schema as js;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

pub use crate::flowctl::pause::PauseMode;
pub use crate::transport::Transport;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub name: Option<String>,
    pub description: Option<String>,
    #[schemars(with = "js::Time")]
    pub duration: String,
    pub seed: Option<u64>,
    /// Bytes in a "KB" for this file: 1000 (default) or 1024.
    pub kilobyte: Option<u64>,
    /// Width of a metrics bin, e.g. "100us".
    #[schemars(with = "Option<js::Time>")]
    pub bin: Option<String>,
    /// Integer parameters that `repeat` counts may name: `edges = 4`.
    #[schemars(with = "Option<BTreeMap<String, u64>>")]
    pub params: Option<std::collections::BTreeMap<String, serde_json::Value>>,
    pub defaults: Option<RawDefaults>,
    /// A generated topology (fat tree, leaf-spine, star); `[[switches]]`,
    /// `[[hosts]]` and `[[links]]` may add to it.
    pub topology: Option<RawTopology>,
    #[serde(default)]
    pub switches: Vec<RawSwitch>,
    #[serde(default)]
    pub hosts: Vec<RawHost>,
    #[serde(default)]
    pub links: Vec<RawLink>,
    #[serde(default)]
    pub sources: Vec<RawSource>,
    /// Finite flows: Poisson arrivals with sizes from a distribution,
    /// incasts, or a given list.
    #[serde(default)]
    pub workloads: Vec<RawWorkload>,
    /// "duration" (default) or "flows_finished": end once every workload
    /// flow has finished, `duration` being the limit.
    pub until: Option<RawUntil>,
    /// Threads one run may use: its switches are split into as many
    /// partitions (docs/parallel.md). The results do not depend on it.
    pub threads: Option<u64>,
    pub plot: Option<RawPlot>,
    pub sweep: Option<RawSweep>,
    /// Backward Congestion Notification: congestion points on switch output
    /// queues, rate limiters in the hosts.
    pub bcn: Option<RawBcn>,
    /// E2CM: per-flow probing on top of the `[bcn]` switch loop (ECM).
    pub e2cm: Option<RawE2cm>,
    /// QCN (802.1Qau): congestion points on switch output queues, reaction
    /// points (rate limiters) in the hosts.
    pub qcn: Option<RawQcn>,
    pub dcqcn: Option<RawDcqcn>,
    /// TCP NewReno parameters for sources with `transport = "tcp"`.
    pub tcp: Option<RawTcp>,
    pub roce: Option<RawRoce>,
    /// The PAUSE watchdog: long pauses and deadlocks.
    pub watchdog: Option<RawWatchdog>,
    /// Derived metrics to put in the summary.
    pub metrics: Option<RawMetrics>,
    /// Traffic classes on every port and how ports schedule them.
    pub priorities: Option<RawPriorities>,
}

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPriorities {
    /// Classes on every port, 1..=8; frames carry a class below this.
    pub classes: Option<u8>,
    /// "strict" (default) or "dwrr".
    pub scheduler: Option<SchedulerKind>,
    /// DWRR: one integer weight per class.
    pub weights: Option<Vec<u64>>,
    /// DWRR: classes served strictly before the weighted ones.
    pub strict: Option<Vec<u8>>,
    /// Class of TCP ACKs (default: the flow's).
    pub acks: Option<u8>,
    /// Class of congestion notifications (default: the flow's).
    pub notifications: Option<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKind {
    Strict,
    Dwrr,
}

#[derive(Debug, Default, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMmu {
    /// Guaranteed bytes per ingress (port, class).
    #[schemars(with = "Option<js::Size>")]
    pub reserve: Option<String>,
    /// Dynamic threshold factor of lossless classes (on the free pool).
    pub alpha: Option<f64>,
    /// XON this far below the XOFF threshold.
    #[schemars(with = "Option<js::Size>")]
    pub resume_offset: Option<String>,
    /// Dynamic egress threshold factor of lossy classes.
    pub lossy_alpha: Option<f64>,
    /// Headroom per (port, lossless class): "auto" (default) or a size.
    #[schemars(with = "Option<js::SizeOrAuto>")]
    pub headroom: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawEcn {
    /// "red" (Kmin, Kmax, Pmax) or "step" (K).
    pub rule: Option<EcnRuleKind>,
    #[schemars(with = "Option<js::Size>")]
    pub kmin: Option<String>,
    #[schemars(with = "Option<js::Size>")]
    pub kmax: Option<String>,
    pub pmax: Option<f64>,
    #[schemars(with = "Option<js::Size>")]
    pub k: Option<String>,
    /// "enqueue" (default) or "dequeue".
    #[schemars(with = "Option<js::MarkAt>")]
    pub at: Option<crate::net::ecn::MarkAt>,
    /// Classes whose queues mark (default: every class).
    pub classes: Option<Vec<u8>>,
    /// Other parameters of the rule on ports of some link rates.
    pub rates: Option<Vec<RawEcnRate>>,
}

/// `{ rate = "100Gbps", kmin = "400KB", kmax = "1600KB", pmax = 0.2 }`.
#[derive(Debug, Default, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawEcnRate {
    #[schemars(with = "Option<js::Rate>")]
    pub rate: Option<String>,
    #[schemars(with = "Option<js::Size>")]
    pub kmin: Option<String>,
    #[schemars(with = "Option<js::Size>")]
    pub kmax: Option<String>,
    pub pmax: Option<f64>,
    #[schemars(with = "Option<js::Size>")]
    pub k: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnRuleKind {
    Red,
    Step,
}

#[derive(Debug, Default, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPfc {
    /// Lossless classes: PFC acts on these.
    pub classes: Option<Vec<u8>>,
    /// Bytes of an ingress (port, class) at which XOFF is sent.
    #[schemars(with = "Option<js::Size>")]
    pub xoff: Option<String>,
    /// ... and at or below which XON is sent.
    #[schemars(with = "Option<js::Size>")]
    pub xon: Option<String>,
    /// Re-send XOFF at half the pause time while still over XON.
    pub refresh: Option<bool>,
}

/// A sweep over this scenario: named variants (sets of overrides) crossed
/// with axes (lists of values for one override key) and seeds. The engine
/// runs one point at a time; the sweep is expanded by the Python package.
#[derive(Debug, Default, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSweep {
    /// Run seeds 1..=N.
    pub seeds: Option<u64>,
    /// Or exactly these seeds.
    pub seed_list: Option<Vec<u64>>,
    /// Variant name -> { override key -> value }.
    #[serde(default)]
    pub variants:
        std::collections::BTreeMap<String, std::collections::BTreeMap<String, serde_json::Value>>,
    /// Override key -> values.
    #[serde(default)]
    pub axes: std::collections::BTreeMap<String, Vec<serde_json::Value>>,
    /// Summary column -> an expression over the point's result, e.g.
    /// `'flows["C1->S1"].delivered_gbps'` (evaluated by the Python package).
    #[serde(default)]
    pub metrics: std::collections::BTreeMap<String, String>,
}

/// `repeat = { e = "edges", j = 2 }`: one copy of the entry per combination
/// of the variables, each counting from 1 to a parameter or a literal count.
/// Values stay untyped here so that a bad count gets a located message of
/// our own (see `repeat.rs`). A sorted map: tables have no order in TOML
/// (nor once a dict has been through an override), so the variables nest in
/// the order of their names.
pub type RawRepeat = std::collections::BTreeMap<String, serde_json::Value>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    /// k pods of k/2 edge and k/2 aggregation switches, (k/2)² cores, k³/4 hosts.
    FatTree,
    /// `leaves` leaves with `hosts_per_leaf` hosts each, every leaf linked to
    /// every one of `spines` spines.
    LeafSpine,
    /// One switch and `n` hosts.
    Star,
}

impl TopologyKind {
    /// As written in a file.
    pub fn name(self) -> &'static str {
        match self {
            TopologyKind::FatTree => "fat_tree",
            TopologyKind::LeafSpine => "leaf_spine",
            TopologyKind::Star => "star",
        }
    }
}

/// `[topology]`: switches, hosts and links made by a generator. The sizes
/// are integers or names of integers in `[params]`, kept untyped here
/// (like `repeat` counts) so that a bad one gets a located message of our
/// own (see `topology.rs`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(
    description = "Switches, hosts and links made by a generator: a fat tree, a leaf-spine or a star."
)]
#[serde(deny_unknown_fields)]
pub struct RawTopology {
    pub kind: TopologyKind,
    /// fat_tree: pods, ports per switch (even, >= 2).
    #[schemars(with = "Option<js::Count>")]
    pub k: Option<serde_json::Value>,
    /// leaf_spine.
    #[schemars(with = "Option<js::Count>")]
    pub leaves: Option<serde_json::Value>,
    #[schemars(with = "Option<js::Count>")]
    pub spines: Option<serde_json::Value>,
    #[schemars(with = "Option<js::Count>")]
    pub hosts_per_leaf: Option<serde_json::Value>,
    /// star: hosts.
    #[schemars(with = "Option<js::Count>")]
    pub n: Option<serde_json::Value>,
}

/// Defaults for every entry of a kind. The tables take the same fields as the
/// entries themselves (without names, endpoints or destinations).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawDefaults {
    pub link: Option<RawLink>,
    pub switch: Option<RawSwitch>,
    pub host: Option<RawHost>,
    pub source: Option<RawSource>,
}

#[derive(Debug, Default, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawLink {
    pub between: Option<Vec<String>>,
    #[schemars(with = "Option<js::Rate>")]
    pub rate: Option<String>,
    #[schemars(with = "Option<js::Time>")]
    pub delay: Option<String>,
    #[schemars(with = "Option<BTreeMap<String, js::Count>>")]
    pub repeat: Option<RawRepeat>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BufferModelKind {
    /// Dedicated bytes per output port.
    PerOutput,
    /// Shared memory partitioned per input: each input holds at most `buffer` bytes over all outputs.
    PerInput,
    Unlimited,
    /// One buffer for the whole switch with reserves, a shared pool and
    /// headroom (an ASIC's MMU); `buffer` is its size, `mmu` its settings.
    Shared,
}

#[derive(Debug, Default, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPause {
    pub mode: Option<PauseMode>,
    #[schemars(with = "Option<js::Size>")]
    pub xoff: Option<String>,
    #[schemars(with = "Option<js::Size>")]
    pub xon: Option<String>,
    /// Re-send XOFF at half the advertised pause time while still congested.
    pub refresh: Option<bool>,
}

#[derive(Debug, Default, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSwitch {
    pub name: Option<String>,
    #[schemars(with = "Option<BTreeMap<String, js::Count>>")]
    pub repeat: Option<RawRepeat>,
    #[schemars(with = "Option<js::Time>")]
    pub latency: Option<String>,
    #[schemars(with = "Option<js::Time>")]
    pub response_time: Option<String>,
    #[schemars(with = "Option<js::Size>")]
    pub buffer: Option<String>,
    pub buffer_model: Option<BufferModelKind>,
    #[schemars(with = "Option<js::Size>")]
    pub queue_limit: Option<String>,
    pub pause: Option<RawPause>,
    /// Priority-based flow control (802.1Qbb) per ingress (port, class).
    pub pfc: Option<RawPfc>,
    /// ECN marking on the output queues.
    pub ecn: Option<RawEcn>,
    /// The shared buffer's settings (`buffer_model = "shared"`).
    pub mmu: Option<RawMmu>,
    /// Whether this switch's output queues act as congestion points when a
    /// congestion-notification scheme is configured (default true).
    pub congestion_point: Option<bool>,
    /// Routes that replace the shortest paths toward some hosts.
    pub routes: Option<Vec<RawRoute>>,
    /// Schedulers of some output ports instead of `[priorities]`'s.
    pub schedulers: Option<Vec<RawPortScheduler>>,
}

/// `{ ports = ["H3"], scheduler = "dwrr", weights = [4, 1], strict = [] }`:
/// the output ports toward these neighbours (all without `ports`) schedule
/// their classes so.
#[derive(Debug, Default, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPortScheduler {
    pub ports: Option<Vec<String>>,
    pub scheduler: Option<SchedulerKind>,
    pub weights: Option<Vec<u64>>,
    pub strict: Option<Vec<u8>>,
}

/// `{ to = ["H3", "H4"], via = "L2" }`: frames toward these hosts leave
/// through the link to this neighbouring switch.
#[derive(Debug, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRoute {
    pub to: Option<Destinations>,
    pub via: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawService {
    /// Reduced service rate of the link into this host.
    #[schemars(with = "Option<js::Rate>")]
    pub rate: Option<String>,
    #[schemars(with = "Option<js::Time>")]
    pub start: Option<String>,
    #[schemars(with = "Option<js::Time>")]
    pub end: Option<String>,
    /// Periodic schedule: each period begins with `reduced` time at `rate`.
    #[schemars(with = "Option<js::Time>")]
    pub period: Option<String>,
    #[schemars(with = "Option<js::Time>")]
    pub reduced: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawHost {
    pub name: Option<String>,
    #[schemars(with = "Option<BTreeMap<String, js::Count>>")]
    pub repeat: Option<RawRepeat>,
    /// Egress buffer size, or "unlimited".
    #[schemars(with = "Option<js::SizeOrUnlimited>")]
    pub egress: Option<String>,
    /// The source stops producing at this occupancy (default: when the next frame does not fit).
    #[schemars(with = "Option<js::Size>")]
    pub egress_high: Option<String>,
    /// ... and resumes at or below this one.
    #[schemars(with = "Option<js::Size>")]
    pub egress_low: Option<String>,
    #[schemars(with = "Option<js::Time>")]
    pub response_time: Option<String>,
    pub service: Option<RawService>,
    /// One queue per flow (per destination) between the sources and the
    /// egress buffer, unlimited, served round-robin at the line rate.
    pub voq: Option<bool>,
    /// Delay between the per-flow queues and the egress buffer (needs `voq`).
    #[schemars(with = "Option<js::Time>")]
    pub loop_delay: Option<String>,
    /// Rate limiters space frames 8·L/R apart on average, each gap drawn
    /// uniformly within ± this fraction (0: exactly; `net::rate_limiter`).
    pub limiter_jitter: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// One frame per frame slot with probability `load`.
    Bernoulli,
    /// One transaction per transaction slot with probability `load`, split into frames.
    Transactions,
}

#[derive(Debug, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Destinations {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Default, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSource {
    pub name: Option<String>,
    #[schemars(with = "Option<BTreeMap<String, js::Count>>")]
    pub repeat: Option<RawRepeat>,
    pub host: Option<String>,
    /// A host name, a list of host names, or "*" for every other host.
    pub to: Option<Destinations>,
    pub kind: Option<SourceKind>,
    /// "udp" (default) or "tcp".
    pub transport: Option<Transport>,
    #[schemars(with = "Option<js::Size>")]
    pub frame: Option<String>,
    #[schemars(with = "Option<js::Size>")]
    pub transaction: Option<String>,
    pub load: Option<f64>,
    #[schemars(with = "Option<js::Rate>")]
    pub rate: Option<String>,
    #[schemars(with = "Option<js::Time>")]
    pub start: Option<String>,
    #[schemars(with = "Option<js::Time>")]
    pub stop: Option<String>,
    /// Where in its slot a unit is produced: "random" (default: uniform in
    /// the slot, drawn per unit from the source's own stream) or a fixed
    /// time such as "0ns" (every unit on the slot grid).
    #[schemars(with = "Option<js::TimeOrRandom>")]
    pub slot_offset: Option<String>,
    /// Traffic class of the source's frames (default 0).
    pub priority: Option<u8>,
    /// The source's frames are ECN-capable (ECT(0)).
    pub ecn: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RawUntil {
    Duration,
    FlowsFinished,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    Poisson,
    Incast,
    List,
}

/// A size written as a number of bytes or with a unit ("500KB").
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RawBytes {
    Count(u64),
    Text(#[schemars(with = "js::Size")] String),
}

/// One time or a list of times.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RawTimes {
    One(#[schemars(with = "js::Time")] String),
    Many(#[schemars(with = "Vec<js::Time>")] Vec<String>),
}

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    pub name: Option<String>,
    /// false leaves the workload out (a variant without it).
    pub enabled: Option<bool>,
    pub kind: Option<WorkloadKind>,
    /// "roce" (default) or "tcp".
    pub transport: Option<Transport>,
    #[schemars(with = "Option<js::Size>")]
    pub frame: Option<String>,
    pub priority: Option<u8>,
    /// Sending hosts (poisson) or the hosts senders are drawn from (incast).
    pub hosts: Option<Destinations>,
    /// A shipped distribution's name or a CSV file.
    pub sizes: Option<String>,
    pub load: Option<f64>,
    /// Poisson: "*", "permutation" or a list of hosts; incast: the receiver.
    pub to: Option<Destinations>,
    #[schemars(with = "Option<js::Time>")]
    pub start: Option<String>,
    #[schemars(with = "Option<js::Time>")]
    pub stop: Option<String>,
    pub fan_in: Option<u64>,
    pub bytes: Option<RawBytes>,
    pub at: Option<RawTimes>,
    pub flows: Option<Vec<RawListFlow>>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawListFlow {
    pub from: String,
    pub to: String,
    pub size: RawBytes,
    #[schemars(with = "js::Time")]
    pub start: String,
    pub priority: Option<u8>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPlot {
    #[serde(default)]
    pub links: Vec<String>,
    #[serde(default)]
    pub flows: Vec<String>,
    #[serde(default)]
    pub queues: Vec<String>,
}

/// BCN parameters; every field has the CN-SIM baseline (study E) default.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawBcn {
    /// Equilibrium queue length, e.g. "375pages" (24,000 B).
    #[schemars(with = "Option<js::Size>")]
    pub qeq: Option<String>,
    pub w: Option<f64>,
    pub gi: Option<f64>,
    pub gd: Option<f64>,
    /// Instead of `gi`: the increase a maximal positive feedback gives, e.g. "50Mbps".
    #[schemars(with = "Option<js::Rate>")]
    pub increase_at_fbmax: Option<String>,
    /// Instead of `gd`: the decrease factor a maximal negative feedback gives
    /// (before the `max_decrease` cap), e.g. 0.5.
    pub decrease_at_fbmax: Option<f64>,
    /// Rate unit Ru of the additive increase, e.g. "1Mbps".
    #[schemars(with = "Option<js::Rate>")]
    pub rate_unit: Option<String>,
    /// Mean bytes between samples, e.g. "150KB".
    #[schemars(with = "Option<js::Size>")]
    pub sample_interval: Option<String>,
    /// Uniform jitter of the interval (plus or minus), e.g. "20KB".
    #[schemars(with = "Option<js::Size>")]
    pub sample_jitter: Option<String>,
    /// Sample each frame with this probability instead of by bytes.
    pub sample_probability: Option<f64>,
    #[schemars(with = "Option<js::Rate>")]
    pub min_rate: Option<String>,
    /// Largest fraction one message may take off a rate (0 < x <= 1).
    pub max_decrease: Option<f64>,
    /// Rate of a newly installed limiter (default: the line rate).
    #[schemars(with = "Option<js::Rate>")]
    pub initial_rate: Option<String>,
    /// Queue of each rate limiter, e.g. "150KB", or "unlimited".
    #[schemars(with = "Option<js::SizeOrUnlimited>")]
    pub rl_queue: Option<String>,
    /// Notification frame size, e.g. "64B".
    #[schemars(with = "Option<js::Size>")]
    pub message: Option<String>,
    /// Send notifications in the strict-priority expedited class (default false).
    pub expedite: Option<bool>,
    /// BCN-MAX threshold: maximal negative feedback at or above this queue length.
    #[schemars(with = "Option<js::Size>")]
    pub bcn_max: Option<String>,
    /// BCN(0,0), the severe-congestion stop message.
    pub stop: Option<RawBcnStop>,
    /// Self-increase of installed limiters.
    pub drift: Option<RawDrift>,
}

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawBcnStop {
    /// Qsc: queue length at or above which a sample yields BCN(0,0).
    #[schemars(with = "js::Size")]
    pub threshold: String,
    /// The source stops for a time uniform in [0, tmax].
    #[schemars(with = "js::Time")]
    pub tmax: String,
    /// ... then restarts at this rate.
    #[schemars(with = "js::Rate")]
    pub restart_rate: String,
}

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawDrift {
    /// Increase per interval, e.g. "1Mbps".
    #[schemars(with = "js::Rate")]
    pub rate: String,
    #[schemars(with = "js::Time")]
    pub interval: String,
}

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMetrics {
    pub fairness: Option<RawFairness>,
    pub stability: Option<RawStability>,
    /// Record the bytes each switch holds per ingress (port, class) as
    /// binned series (a cost on every frame; off by default).
    pub ingress_occupancy: Option<bool>,
}

/// Fairness of flows' delivered throughput over a window against a target rate.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFairness {
    /// Flow names (default: every flow).
    pub flows: Option<Vec<String>>,
    #[schemars(with = "js::Time")]
    pub start: String,
    #[schemars(with = "js::Time")]
    pub end: String,
    /// Fair-share rate T, e.g. "2.5Gbps".
    #[schemars(with = "js::Rate")]
    pub target: String,
}

/// Time to stability of one queue: the first time after it exceeds
/// `threshold` that it falls below it again.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawStability {
    /// "NODE->PEER".
    pub queue: String,
    #[schemars(with = "js::Size")]
    pub threshold: String,
    /// Congestion starts when the queue first exceeds this (default: twice
    /// the threshold, so that a burst crossing the threshold does not count).
    #[schemars(with = "Option<js::Size>")]
    pub onset: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawE2cm {
    /// false runs the `[bcn]` switch loop alone (ECM), keeping the section
    /// for sweeps that compare the two.
    pub enabled: Option<bool>,
    /// "source" (the study's source-based form) or "destination".
    pub measure: Option<String>,
    /// Probability that a released data frame is followed by a probe.
    pub probe_probability: Option<f64>,
    /// A probing flow sends a probe at least this often, e.g. "10ms".
    #[schemars(with = "Option<js::Time>")]
    pub probe_max_interval: Option<String>,
    /// Probe frame size, e.g. "64B".
    #[schemars(with = "Option<js::Size>")]
    pub probe: Option<String>,
    /// Reflected probes travel in the strict-priority expedited class.
    pub expedite: Option<bool>,
    /// Where L0 comes from: "flow_start" (a probe with the flow's first
    /// frame) or "while_probing" (only probes sent while throttled).
    pub baseline: Option<String>,
    /// The per-flow loop's law, with `[bcn]`'s keys for it (qeq, w, gains,
    /// min_rate, max_decrease, bcn_max).
    pub control: Option<RawBcn>,
}

/// QCN parameters; every field has the study C (802.1Qau, S2) default.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawQcn {
    /// false turns QCN off while keeping the section (for sweeps that compare).
    pub enabled: Option<bool>,
    /// Equilibrium queue length Q_EQ, e.g. "26KB".
    #[schemars(with = "Option<js::Size>")]
    pub qeq: Option<String>,
    pub w: Option<f64>,
    /// Base sampling interval (quantized feedback 0..7), e.g. "150KB".
    #[schemars(with = "Option<js::Size>")]
    pub sample_interval: Option<String>,
    /// Total width of the uniform jitter on each sampling interval, e.g. 0.3 (±15%).
    pub sample_jitter: Option<f64>,
    /// "floor" (default) or "round".
    pub quantize: Option<String>,
    /// CNM frame size, e.g. "128B".
    #[schemars(with = "Option<js::Size>")]
    pub message: Option<String>,
    /// Send CNMs in the strict-priority expedited class (default false).
    pub expedite: Option<bool>,
    pub gd: Option<f64>,
    #[schemars(with = "Option<js::Rate>")]
    pub min_rate: Option<String>,
    /// Largest fraction one CNM may take off the current rate.
    pub max_decrease: Option<f64>,
    /// BC_LIMIT, e.g. "150KB".
    #[schemars(with = "Option<js::Size>")]
    pub byte_limit: Option<String>,
    /// TIMER_PERIOD, e.g. "15ms".
    #[schemars(with = "Option<js::Time>")]
    pub timer: Option<String>,
    /// FAST_RECOVERY_TH: byte-counter or timer cycles before active increase.
    pub fast_recovery: Option<u32>,
    /// R_AI, e.g. "5Mbps".
    #[schemars(with = "Option<js::Rate>")]
    pub r_ai: Option<String>,
    /// R_HAI, e.g. "50Mbps".
    #[schemars(with = "Option<js::Rate>")]
    pub r_hai: Option<String>,
    /// Total width of the jitter on byte-counter and timer reloads.
    pub rp_jitter: Option<f64>,
    /// Hyper-active increase step: "scaled" (i·R_HAI, default) or "constant" (R_HAI).
    pub hai: Option<String>,
    /// Queue of each rate limiter, e.g. "150KB", or "unlimited".
    #[schemars(with = "Option<js::SizeOrUnlimited>")]
    pub rl_queue: Option<String>,
    /// "flow" (default: one limiter per source and destination) or
    /// "destination" (one per host and destination, shared by its sources).
    pub limiter: Option<String>,
}

/// TCP NewReno parameters, shared by every TCP source.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTcp {
    /// IP + TCP header bytes per segment: MSS = frame − header, e.g. "40B".
    #[schemars(with = "Option<js::Size>")]
    pub header: Option<String>,
    /// Wire size of a pure ACK, e.g. "64B".
    #[schemars(with = "Option<js::Size>")]
    pub ack: Option<String>,
    /// Initial window, segments.
    pub initial_window: Option<u32>,
    /// Initial slow-start threshold, e.g. "64KB", or "unlimited".
    #[schemars(with = "Option<js::SizeOrUnlimited>")]
    pub initial_ssthresh: Option<String>,
    /// Receiver window, e.g. "1MB".
    #[schemars(with = "Option<js::Size>")]
    pub rwnd: Option<String>,
    #[schemars(with = "Option<js::Time>")]
    pub min_rto: Option<String>,
    #[schemars(with = "Option<js::Time>")]
    pub max_rto: Option<String>,
    #[schemars(with = "Option<js::Time>")]
    pub initial_rto: Option<String>,
    /// Clock granularity G of the RTO computation.
    #[schemars(with = "Option<js::Time>")]
    pub granularity: Option<String>,
    /// Delayed ACKs (default true).
    pub delayed_ack: Option<bool>,
    /// With delayed ACKs: ACK every this many full segments (default 2).
    pub delayed_ack_segments: Option<u32>,
    /// With delayed ACKs: the longest an ACK is held, e.g. "40ms".
    #[schemars(with = "Option<js::Time>")]
    pub delayed_ack_timeout: Option<String>,
    /// Duplicate ACKs that trigger a fast retransmit (default 3).
    pub dupack_threshold: Option<u32>,
    /// "off" (default), "classic" (RFC 3168) or "dctcp" (RFC 8257).
    pub ecn: Option<TcpEcnKind>,
    /// DCTCP's gain g (default 1/16).
    pub dctcp_g: Option<f64>,
    /// DCTCP's α at the start (default 1).
    pub dctcp_alpha: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TcpEcnKind {
    Off,
    Classic,
    Dctcp,
}

/// `[roce]`: the RoCE transport of every source with `transport = "roce"`.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRoce {
    /// Header bytes per segment: payload = frame − header, e.g. "58B".
    #[schemars(with = "Option<js::Size>")]
    pub header: Option<String>,
    /// Wire size of an ACK or NAK, e.g. "64B".
    #[schemars(with = "Option<js::Size>")]
    pub ack: Option<String>,
    /// ACK every this many in-order segments (default 1).
    pub ack_every: Option<u32>,
    /// ...or this long after the first unacknowledged one, e.g. "10us".
    #[schemars(with = "Option<js::Time>")]
    pub ack_timeout: Option<String>,
    /// Retransmission timeout, e.g. "64ms".
    #[schemars(with = "Option<js::Time>")]
    pub rto: Option<String>,
    /// NAK the same gap again after this long, e.g. "500us".
    #[schemars(with = "Option<js::Time>")]
    pub nak_interval: Option<String>,
    /// Most bytes in flight, e.g. "1MB", or "unlimited" (default).
    #[schemars(with = "Option<js::SizeOrUnlimited>")]
    pub window: Option<String>,
}

/// `[dcqcn]`: DCQCN on every UDP flow (docs/model.md, "DCQCN").
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawDcqcn {
    /// false turns DCQCN off while keeping the section.
    pub enabled: Option<bool>,
    /// Gain g of alpha, e.g. 0.00390625 (1/256).
    pub g: Option<f64>,
    /// Alpha when a limiter is installed (default 1).
    pub alpha: Option<f64>,
    /// Alpha decays every this long without a CNP (K), e.g. "55us".
    #[schemars(with = "Option<js::Time>")]
    pub alpha_interval: Option<String>,
    /// At most one CNP per flow this often (N), e.g. "50us".
    #[schemars(with = "Option<js::Time>")]
    pub cnp_interval: Option<String>,
    /// Wire size of a CNP, e.g. "64B".
    #[schemars(with = "Option<js::Size>")]
    pub cnp: Option<String>,
    /// A RoCE flow's CNP rides on its receiver's next ACK as a flag
    /// (default false: a CNP is a frame of its own).
    pub cnp_on_ack: Option<bool>,
    /// Byte counter B, e.g. "10MB".
    #[schemars(with = "Option<js::Size>")]
    pub byte_counter: Option<String>,
    /// Increase timer T, e.g. "55us".
    #[schemars(with = "Option<js::Time>")]
    pub timer: Option<String>,
    /// F: byte-counter or timer cycles of fast recovery.
    pub fast_recovery: Option<u32>,
    #[schemars(with = "Option<js::Rate>")]
    pub r_ai: Option<String>,
    #[schemars(with = "Option<js::Rate>")]
    pub r_hai: Option<String>,
    #[schemars(with = "Option<js::Rate>")]
    pub min_rate: Option<String>,
    /// TR <- CR at every CNP (default true, the paper's rule; false for
    /// the Mellanox variant).
    pub clamp_target_rate: Option<bool>,
    /// "paper" (default) or "mellanox".
    pub variant: Option<String>,
    /// Mellanox: the rate-decrease grid, e.g. "4us".
    #[schemars(with = "Option<js::Time>")]
    pub decrease_interval: Option<String>,
    /// Mellanox: CR and TR at the first CNP, as a fraction of the rate.
    pub rate_on_first_cnp: Option<f64>,
    /// Queue of each rate limiter, e.g. "150KB", or "unlimited".
    #[schemars(with = "Option<js::SizeOrUnlimited>")]
    pub rl_queue: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawWatchdog {
    /// Default true.
    pub enabled: Option<bool>,
    /// A port paused without a break for longer than this is reported, e.g. "100ms".
    #[schemars(with = "Option<js::Time>")]
    pub pause: Option<String>,
    /// Stop the run (result marked partial) at the first PAUSE deadlock.
    pub stop_on_deadlock: Option<bool>,
}
