//! What a run produces: counters, the summary (serialisable to
//! `summary.json`) and the binned series (row-major matrices).

use crate::flowctl::watchdog::{Watchdog, WatchdogSpec};
use crate::net::topology::NodeKind;
use crate::scenario::spec::{PlotSpec, Scenario};
use crate::units::Time;
use serde::Serialize;
use sha2::{Digest, Sha256};

pub mod thresholds;
pub use thresholds::{BufferThresholds, ClassThresholds, QueueThresholds};

/// Where the frames of a flow (or of all flows) went. Offered = delivered +
/// dropped + in flight at the end.
///
/// A TCP flow counts application bytes instead: offered is what the
/// application wrote (one "frame" per write), delivered is what reached the
/// receiving application in order (one "frame" per segment that advanced
/// it), nothing is dropped (lost segments are retransmitted; see
/// `FlowCounters::segments_dropped`), and in flight is the rest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Volume {
    pub offered_frames: u64,
    pub offered_bytes: u64,
    pub delivered_frames: u64,
    pub delivered_bytes: u64,
    pub dropped_frames: u64,
    pub dropped_bytes: u64,
    pub in_flight_frames: u64,
    pub in_flight_bytes: u64,
}

impl Volume {
    #[inline]
    pub fn offer(&mut self, bytes: u64) {
        self.offered_frames += 1;
        self.offered_bytes += bytes;
    }
    #[inline]
    pub fn drop_frame(&mut self, bytes: u64) {
        self.dropped_frames += 1;
        self.dropped_bytes += bytes;
    }
    pub fn in_flight(&mut self, bytes: u64) {
        self.in_flight_frames += 1;
        self.in_flight_bytes += bytes;
    }
    pub fn add(&mut self, o: &Volume) {
        self.offered_frames += o.offered_frames;
        self.offered_bytes += o.offered_bytes;
        self.delivered_frames += o.delivered_frames;
        self.delivered_bytes += o.delivered_bytes;
        self.dropped_frames += o.dropped_frames;
        self.dropped_bytes += o.dropped_bytes;
        self.in_flight_frames += o.in_flight_frames;
        self.in_flight_bytes += o.in_flight_bytes;
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FlowCounters {
    #[serde(flatten)]
    pub volume: Volume,
    /// Times of the first and last delivery, picoseconds (0 if none).
    pub first_delivery_ps: u64,
    pub last_delivery_ps: u64,
    /// One-way latency from production at the source to delivery, picoseconds.
    pub latency_min_ps: u64,
    pub latency_max_ps: u64,
    pub latency_sum_ps: u64,
    /// Times a congestion notification installed a rate limiter for this flow.
    pub rl_installs: u64,
    /// E2CM probes this flow's source sent, and reflected probes it received.
    pub probes_sent: u64,
    pub probe_replies: u64,
    /// TCP flows: segments sent (first transmissions and retransmissions),
    /// retransmissions among them, fast retransmits, retransmission
    /// timeouts, segments and ACKs lost in the network.
    pub segments_sent: u64,
    pub retransmissions: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub segments_dropped: u64,
    pub acks_dropped: u64,
    /// TCP flows with ECN: window reductions for ECN echoes (at most one
    /// per window of data), and segments that reached the receiver marked
    /// CE.
    pub ecn_reductions: u64,
    pub ce_received: u64,
    /// RoCE flows: NAKs that sent the sender back (go-back-N), and NAKs
    /// the receiver sent.
    pub go_backs: u64,
    pub naks_sent: u64,
    /// DCQCN: CNPs the flow's destination sent about it.
    pub cnps_sent: u64,
}

impl FlowCounters {
    /// Add the counts another partition of a split run kept of the same
    /// flow (deliveries happen in one of them, at the destination).
    pub(crate) fn absorb(&mut self, o: &FlowCounters) {
        if o.volume.delivered_frames > 0 {
            if self.volume.delivered_frames == 0 {
                self.first_delivery_ps = o.first_delivery_ps;
                self.latency_min_ps = o.latency_min_ps;
            }
            self.first_delivery_ps = self.first_delivery_ps.min(o.first_delivery_ps);
            self.last_delivery_ps = self.last_delivery_ps.max(o.last_delivery_ps);
            self.latency_min_ps = self.latency_min_ps.min(o.latency_min_ps);
            self.latency_max_ps = self.latency_max_ps.max(o.latency_max_ps);
        }
        self.volume.add(&o.volume);
        self.latency_sum_ps += o.latency_sum_ps;
        self.rl_installs += o.rl_installs;
        self.probes_sent += o.probes_sent;
        self.probe_replies += o.probe_replies;
        self.segments_sent += o.segments_sent;
        self.retransmissions += o.retransmissions;
        self.fast_retransmits += o.fast_retransmits;
        self.timeouts += o.timeouts;
        self.segments_dropped += o.segments_dropped;
        self.acks_dropped += o.acks_dropped;
        self.ecn_reductions += o.ecn_reductions;
        self.ce_received += o.ce_received;
        self.go_backs += o.go_backs;
        self.naks_sent += o.naks_sent;
        self.cnps_sent += o.cnps_sent;
    }

    #[inline]
    pub fn deliver(&mut self, now: Time, created: Time, bytes: u64) {
        let latency = (now - created).0;
        if self.volume.delivered_frames == 0 {
            self.first_delivery_ps = now.0;
            self.latency_min_ps = latency;
        }
        self.volume.delivered_frames += 1;
        self.volume.delivered_bytes += bytes;
        self.last_delivery_ps = now.0;
        self.latency_min_ps = self.latency_min_ps.min(latency);
        self.latency_max_ps = self.latency_max_ps.max(latency);
        self.latency_sum_ps += latency;
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounters {
    pub drops_frames: u64,
    pub drops_bytes: u64,
    /// Filled in at the end of a run from the occupancy series (its
    /// largest bin maximum), as `tx_bytes` from the bytes-sent series.
    pub max_occupancy: u64,
    pub tx_bytes: u64,
    pub pause_frames_sent: u64,
    pub xoff_sent: u64,
    /// Time this port's transmitter spent paused.
    pub paused_time: Time,
    /// Congestion notifications this queue's congestion point sent.
    pub cn_negative: u64,
    pub cn_positive: u64,
    pub cn_stop: u64,
    /// Notifications dropped at this queue (buffer full).
    pub cn_dropped: u64,
}

/// Row-major matrices: flows × bins and queues × bins.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub bin: Time,
    pub n_bins: usize,
    pub flow_tx_bytes: Vec<u64>,
    pub flow_rx_bytes: Vec<u64>,
    pub queue_tx_bytes: Vec<u64>,
    pub queue_drops: Vec<u64>,
    /// XOFF frames sent (a port pausing its upstream neighbour).
    pub queue_xoff: Vec<u64>,
    pub queue_occ_mean: Vec<f64>,
    pub queue_occ_max: Vec<u64>,
    /// The source flows whose reaction point installed a rate limiter
    /// during the run (or whose limiter held frames), ascending: the rows
    /// of the four `flow_rl_` series. Other flows kept their line rate
    /// and had no limiter queue throughout.
    pub flow_rl_flows: Vec<u32>,
    /// `flow_rl_flows` × bins (empty without a congestion-notification
    /// scheme): the rate limiter's rate (bit/s; the line rate while none is
    /// installed) and its queue (bytes).
    pub flow_rl_rate_mean: Vec<f64>,
    pub flow_rl_occ_mean: Vec<f64>,
    pub flow_rl_occ_max: Vec<u64>,
    /// `flow_rl_flows` × bins: the QCN reaction point's target rate TR,
    /// bit/s (empty without QCN).
    pub flow_rl_target_mean: Vec<f64>,
    /// Per flow: DCQCN's or DCTCP's α, time-averaged (rows only with
    /// DCQCN or DCTCP).
    pub flow_alpha_mean: Vec<f64>,
    /// Per flow and bin, TCP flows' rows meaningful (empty without TCP):
    /// congestion window (bytes, time-weighted mean), retransmitted
    /// segments, retransmission timeouts.
    pub flow_cwnd_mean: Vec<f64>,
    pub flow_retransmissions: Vec<u64>,
    pub flow_timeouts: Vec<u64>,
    /// Per shared-buffer switch (the summary's `buffers`, in order): bytes
    /// of the shared pool and of headroom in use, time-averaged and peak.
    pub buffer_shared_mean: Vec<f64>,
    pub buffer_shared_max: Vec<u64>,
    pub buffer_headroom_mean: Vec<f64>,
    pub buffer_headroom_max: Vec<u64>,
    /// With `[metrics] ingress_occupancy`, per row of the summary's
    /// `ingress`: bytes the switch holds from that ingress (port, class),
    /// time-averaged and peak; empty otherwise.
    pub ingress_occ_mean: Vec<f64>,
    pub ingress_occ_max: Vec<u64>,
}

/// Time to stability of one queue (docs/model.md, "Fairness and time to
/// stability"): congestion starts when the queue first exceeds the onset
/// level; stability is the first time after that it falls below the
/// threshold.
#[derive(Debug, Clone, Copy)]
pub struct StabilityWatch {
    pub queue: u32,
    pub threshold: u64,
    pub onset_level: u64,
    pub onset: Option<Time>,
    pub stable: Option<Time>,
}

impl StabilityWatch {
    pub fn new(queue: u32, threshold: u64, onset_level: u64) -> Self {
        StabilityWatch {
            queue,
            threshold,
            onset_level,
            onset: None,
            stable: None,
        }
    }

    #[inline]
    pub fn observe(&mut self, t: Time, occupancy: u64) {
        match (self.onset, self.stable) {
            (None, _) if occupancy > self.onset_level => self.onset = Some(t),
            (Some(_), None) if occupancy < self.threshold => self.stable = Some(t),
            _ => {}
        }
    }
}

/// What the engine records of a workload flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkloadFlowRecord {
    pub workload: u32,
    /// Its number within the workload (its name is `WORKLOAD#INDEX`).
    pub index: u32,
    pub src: u32,
    pub dst: u32,
    pub priority: u8,
    pub size: u64,
    pub start: Time,
    /// When its last byte reached the receiver's application.
    pub finish: Option<Time>,
    /// Its completion time alone on the idle network.
    pub ideal: Time,
}

/// A workload flow in the results: its record, counters and names.
#[derive(Debug, Clone)]
pub struct WorkloadFlow {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub record: WorkloadFlowRecord,
    pub counters: FlowCounters,
}

impl WorkloadFlow {
    /// Flow completion time, if it finished.
    pub fn fct(&self) -> Option<Time> {
        self.record.finish.map(|t| t - self.record.start)
    }
}

/// One workload over the run. Its row in the flow series follows the
/// sources' flows, in workload order.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadSummary {
    pub name: String,
    pub transport: crate::transport::Transport,
    pub flows: u64,
    pub finished: u64,
    pub unfinished: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlowSummary {
    pub name: String,
    pub source: String,
    pub src: String,
    pub dst: String,
    pub transport: crate::transport::Transport,
    #[serde(flatten)]
    pub counters: FlowCounters,
}

#[derive(Debug, Clone, Serialize)]
pub struct QueueSummary {
    pub name: String,
    pub node: String,
    pub peer: String,
    pub node_kind: &'static str,
    pub drops_frames: u64,
    pub drops_bytes: u64,
    pub max_occupancy_bytes: u64,
    pub tx_bytes: u64,
    pub pause_frames_sent: u64,
    pub xoff_sent: u64,
    pub paused_time_s: f64,
    pub cn_negative: u64,
    pub cn_positive: u64,
    pub cn_stop: u64,
    pub cn_dropped: u64,
    /// The rate of the port's link, Gb/s.
    pub rate_gbps: f64,
    /// ECN, PAUSE and congestion-point thresholds of this queue.
    #[serde(flatten)]
    pub thresholds: QueueThresholds,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    #[serde(flatten)]
    pub volume: Volume,
    pub pause_frames_sent: u64,
    /// Congestion notifications sent by all congestion points.
    pub notifications_sent: u64,
}

/// Fairness of flows' delivered rates R_i over a window against a target T
/// (docs/model.md, "Fairness and time to stability").
#[derive(Debug, Clone, Serialize)]
pub struct Fairness {
    pub flows: Vec<String>,
    pub start_s: f64,
    pub end_s: f64,
    pub target_bps: f64,
    pub rates_bps: Vec<f64>,
    /// max_i |R_i − T| / T
    pub dev_max: f64,
    /// min_i |R_i − T| / T
    pub dev_min: f64,
    /// mean_i |R_i − T| / T
    pub dev_mean: f64,
    /// sqrt(mean_i (R_i − T)²) / T
    pub dev_rms: f64,
    /// Jain's index (Σ R_i)² / (N Σ R_i²), in [1/N, 1].
    pub jain: f64,
}

impl Fairness {
    pub fn compute(
        flows: Vec<String>,
        rates_bps: Vec<f64>,
        target_bps: f64,
        start: Time,
        end: Time,
    ) -> Fairness {
        let n = rates_bps.len() as f64;
        let dev: Vec<f64> = rates_bps
            .iter()
            .map(|r| (r - target_bps).abs() / target_bps)
            .collect();
        let sum: f64 = rates_bps.iter().sum();
        let sum_sq: f64 = rates_bps.iter().map(|r| r * r).sum();
        Fairness {
            flows,
            start_s: start.as_secs_f64(),
            end_s: end.as_secs_f64(),
            target_bps,
            dev_max: dev.iter().copied().fold(0.0, f64::max),
            dev_min: dev.iter().copied().fold(f64::INFINITY, f64::min),
            dev_mean: dev.iter().sum::<f64>() / n,
            dev_rms: (dev.iter().map(|d| d * d).sum::<f64>() / n).sqrt(),
            jain: if sum_sq > 0.0 {
                sum * sum / (n * sum_sq)
            } else {
                0.0
            },
            rates_bps,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Stability {
    pub queue: String,
    pub threshold_bytes: u64,
    pub onset_bytes: u64,
    /// First time the queue exceeded the onset level (null: never).
    pub onset_s: Option<f64>,
    /// First time after the onset it fell below the threshold (null: never).
    pub stable_s: Option<f64>,
    /// stable_s − onset_s.
    pub time_to_stability_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub name: String,
    pub seed: u64,
    pub cnsim_version: &'static str,
    /// Hash of the engine's sources and dependency versions (see build.rs).
    pub engine_id: &'static str,
    pub scenario_hash: String,
    /// Running hash of the event trace: equal for equal runs, on any
    /// machine, build profile or thread count; any behavioural change
    /// changes it.
    pub fingerprint: String,
    pub duration_s: f64,
    pub bin_s: f64,
    pub wall_time_s: f64,
    pub events: u64,
    pub frame_hops: u64,
    pub events_per_s: f64,
    pub frame_hops_per_s: f64,
    /// Wall time per simulated time (how many times slower than real time).
    pub slowdown: f64,
    /// Peak resident memory of the whole process so far, whatever else it
    /// holds (a Python interpreter, earlier runs) (Linux; null elsewhere).
    pub peak_memory_bytes: Option<u64>,
    /// Resident memory the run itself added: the process's resident set at
    /// the end of the event loop less at the start of the set-up (Linux;
    /// null elsewhere). Freed memory the allocator keeps counts as resident.
    pub rss_growth_bytes: Option<u64>,
    pub totals: Totals,
    /// One record per flow and per output queue. Large runs have a million
    /// flows: Python takes these as the `flows` and `queues` tables' columns
    /// and leaves them out of `summary.json`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowSummary>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<QueueSummary>,
    pub plot: PlotSpec,
    pub fairness: Option<Fairness>,
    pub stability: Option<Stability>,
    /// Set if the run stopped before its end (a limit, or a deadlock with
    /// `stop_on_deadlock`): the results cover `[0, at_s)` only.
    pub partial: Option<Partial>,
    /// What the PAUSE watchdog saw (absent if it is off).
    pub watchdog: Option<WatchdogReport>,
    /// Per (queue, class), with several classes or PFC; else empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassSummary>,
    /// With PFC on some switch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcTotals>,
    /// One per shared-buffer switch.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub buffers: Vec<BufferSummary>,
    /// The rows of the ingress series (`[metrics] ingress_occupancy`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ingress: Vec<IngressRow>,
    /// One per workload.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadSummary>,
    /// With `until = "flows_finished"`: when the last workload flow
    /// finished, if every one did before `duration`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows_finished_s: Option<f64>,
    /// The run's window: a stop the run decides itself takes effect at the
    /// next multiple of it (none without links between switches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_s: Option<f64>,
    /// The threads the run was asked to split over (`threads`,
    /// `RunOptions::threads`; 1 when none).
    pub threads_requested: usize,
    /// The partitions it ran as, each on its own thread: fewer than asked
    /// when the run cannot be split, the memory allows fewer copies or the
    /// topology gives fewer partitions (docs/parallel.md).
    pub threads_used: usize,
    /// Why `threads_used` is less than `threads_requested`; null when
    /// they are equal.
    pub threads_note: Option<String>,
}

/// One (output queue, traffic class) of a run with several classes or PFC.
#[derive(Debug, Clone, Serialize)]
pub struct ClassSummary {
    /// The output queue, "NODE->PEER".
    pub queue: String,
    pub class: u8,
    pub tx_bytes: u64,
    pub drops_frames: u64,
    pub drops_bytes: u64,
    pub max_occupancy_bytes: u64,
    /// Time this class of the port's transmitter was paused by PFC.
    pub paused_time_s: f64,
    /// `paused_time_s` over the run's (simulated) length.
    pub paused_fraction: f64,
    /// PFC frames this port sent upstream with XOFF / XON for the class.
    pub pfc_xoff_sent: u64,
    pub pfc_xon_sent: u64,
    /// Frames of the class this queue marked CE (ECN).
    pub ecn_marked: u64,
    /// Static PFC thresholds of the class.
    #[serde(flatten)]
    pub thresholds: ClassThresholds,
}

/// One switch ingress (port, class): the frames of `class` that `switch`
/// received from `from`.
#[derive(Debug, Clone, Serialize)]
pub struct IngressRow {
    pub switch: String,
    pub from: String,
    pub class: u8,
}

/// A shared-buffer switch's MMU over the run.
#[derive(Debug, Clone, Serialize)]
pub struct BufferSummary {
    pub switch: String,
    pub buffer_bytes: u64,
    /// The shared pool: the buffer less every reserve and headroom.
    pub shared_pool_bytes: u64,
    /// Headroom set aside, over every (port, lossless class).
    pub headroom_bytes: u64,
    pub max_shared_used_bytes: u64,
    pub max_headroom_used_bytes: u64,
    /// Lossless frames dropped because their headroom was full (PFC acted
    /// too late; zero with the headroom cnsim computes).
    pub headroom_overflows: u64,
    /// The MMU's XOFF, resume and lossy egress thresholds.
    #[serde(flatten)]
    pub thresholds: BufferThresholds,
}

/// PFC over the whole run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PfcTotals {
    /// PFC frames sent (each may speak for several classes).
    pub frames_sent: u64,
    /// Rows of the PFC event table (one per class a frame spoke for, at
    /// each end).
    pub events: u64,
    /// Rows left out of the table once it reached its limit.
    pub events_omitted: u64,
}

/// Which end of the link a PFC event table row describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PfcDirection {
    /// The last bit left the sending port.
    Sent,
    /// It took effect at the receiving transmitter (after the link delay
    /// and the receiver's response time).
    Received,
}

/// A row of the PFC event table: one class of one PFC frame at one end.
#[derive(Debug, Clone, Copy)]
pub struct PfcRecord {
    pub time: Time,
    pub node: u32,
    /// The port that sent it or whose transmitter it reached.
    pub port: u32,
    pub class: u8,
    /// The pause time: 0 resumes (XON), anything else pauses (XOFF).
    pub quanta: u16,
    pub direction: PfcDirection,
}

#[derive(Debug, Clone, Serialize)]
pub struct Partial {
    pub reason: String,
    /// When the stop was reached.
    pub reached_s: f64,
    /// Where the results end: the end of the run's window that holds
    /// `reached_s` (docs/model.md, "Stops and the run's window"), or
    /// `reached_s` itself for a wall-time limit.
    pub at_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct WatchdogReport {
    pub threshold_s: f64,
    /// Transmitters paused without a break for longer than the threshold.
    pub long_pauses: Vec<LongPauseReport>,
    /// Cycles of such ports (cyclic buffer dependencies), in cycle order.
    pub deadlocks: Vec<DeadlockReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LongPauseReport {
    /// The paused transmitter's queue, "NODE->PEER".
    pub queue: String,
    /// With PFC: the paused class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
    pub since_s: f64,
    pub noticed_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct DeadlockReport {
    pub queues: Vec<String>,
    /// With PFC: the class of each queue of the cycle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<u8>>,
    pub noticed_s: f64,
}

#[derive(Debug, Clone)]
pub struct RunResult {
    pub summary: Summary,
    /// The sources' flows, in the order of `summary.flows`.
    pub flows: Vec<FlowCounters>,
    /// The workloads' flows, in order of start time.
    pub workload_flows: Vec<WorkloadFlow>,
    pub queues: Vec<QueueCounters>,
    pub series: Series,
    /// The PFC event table, in time order (empty without PFC).
    pub pfc_events: Vec<PfcRecord>,
}

/// What a run cost the machine: wall time of its event loop, and the
/// resident memory it added (see `Summary::rss_growth_bytes`).
#[derive(Debug, Clone, Copy)]
pub struct RunCost {
    pub wall: std::time::Duration,
    pub rss_growth_bytes: Option<u64>,
}

/// The process's peak resident set (VmHWM), where the system tells it.
fn peak_memory() -> Option<u64> {
    proc_status_bytes("VmHWM:")
}

/// The process's resident set now (VmRSS), where the system tells it.
pub fn resident_memory() -> Option<u64> {
    proc_status_bytes("VmRSS:")
}

fn proc_status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Identity of this engine build (see build.rs).
pub const ENGINE_ID: &str = env!("CNSIM_ENGINE_ID");

/// How this engine was compiled: "release", "release, PGO" (with a
/// profile from scripts/pgo_profile.sh) or "debug".
pub const BUILD: &str = env!("CNSIM_BUILD");

/// SHA-256 of the resolved scenario (defaults applied, units converted).
pub fn scenario_hash(sc: &Scenario) -> String {
    let json = serde_json::to_vec(sc).expect("a scenario serialises");
    let digest = Sha256::digest(&json);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl RunResult {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assemble(
        sc: &Scenario,
        seed: u64,
        cost: RunCost,
        events: u64,
        frame_hops: u64,
        fingerprint: u64,
        watchdog: Option<(WatchdogSpec, Watchdog, bool)>,
        stop: Option<(Time, Time, String)>,
        flows: Vec<FlowCounters>,
        queues: Vec<QueueCounters>,
        series: Series,
        stability: Option<StabilityWatch>,
        classes: Vec<ClassSummary>,
        pfc: Option<(PfcTotals, Vec<PfcRecord>)>,
        buffers: Vec<BufferSummary>,
        workload_records: Vec<WorkloadFlowRecord>,
        flows_finished: Option<Time>,
    ) -> RunResult {
        let names = sc.queue_names();
        let flow_specs = sc.flows();
        let wall_s = cost.wall.as_secs_f64();
        let rss_growth_bytes = cost.rss_growth_bytes;
        let mut totals = Totals::default();
        for f in &flows {
            totals.volume.add(&f.volume);
        }
        totals.pause_frames_sent = queues.iter().map(|q| q.pause_frames_sent).sum();
        totals.notifications_sent = queues
            .iter()
            .map(|q| q.cn_negative + q.cn_positive + q.cn_stop)
            .sum();
        let fairness = sc.metrics.fairness.as_ref().map(|fs| {
            let window_bins = (fs.start.0 / sc.bin.0) as usize..(fs.end.0 / sc.bin.0) as usize;
            let seconds = (fs.end - fs.start).as_secs_f64();
            let rates = fs
                .flows
                .iter()
                .map(|&f| {
                    let row = &series.flow_rx_bytes[f * series.n_bins..(f + 1) * series.n_bins];
                    row[window_bins.clone()].iter().sum::<u64>() as f64 * 8.0 / seconds
                })
                .collect();
            let names = fs
                .flows
                .iter()
                .map(|&f| flow_specs[f].name.clone())
                .collect();
            Fairness::compute(names, rates, fs.target.0 as f64, fs.start, fs.end)
        });
        let stability = stability.map(|w| {
            let onset = w.onset.map(|t| t.as_secs_f64());
            let stable = w.stable.map(|t| t.as_secs_f64());
            Stability {
                queue: names[w.queue as usize].clone(),
                threshold_bytes: w.threshold,
                onset_bytes: w.onset_level,
                onset_s: onset,
                stable_s: stable,
                time_to_stability_s: onset.zip(stable).map(|(a, b)| b - a),
            }
        });
        let flow_summaries = flow_specs
            .iter()
            .zip(&flows)
            .map(|(fs, c)| FlowSummary {
                name: fs.name.clone(),
                source: match fs.origin {
                    crate::scenario::spec::FlowOrigin::Source(s) => sc.sources[s].name.clone(),
                    crate::scenario::spec::FlowOrigin::Workload { .. } => {
                        unreachable!("the sources' flows")
                    }
                },
                src: sc.nodes[fs.src].name.clone(),
                dst: sc.nodes[fs.dst].name.clone(),
                transport: fs.transport,
                counters: *c,
            })
            .collect();
        // The sources' flows first, then the workloads', as the engine has them.
        let mut flows = flows;
        let workload_counters = flows.split_off(flow_specs.len());
        let mut workloads: Vec<WorkloadSummary> = sc
            .workloads
            .iter()
            .map(|w| WorkloadSummary {
                name: w.name.clone(),
                transport: w.transport,
                flows: 0,
                finished: 0,
                unfinished: 0,
                bytes: 0,
            })
            .collect();
        let workload_flows: Vec<WorkloadFlow> = workload_records
            .into_iter()
            .zip(workload_counters)
            .map(|(record, counters)| {
                let w = &mut workloads[record.workload as usize];
                w.flows += 1;
                w.bytes += record.size;
                match record.finish {
                    Some(_) => w.finished += 1,
                    None => w.unfinished += 1,
                }
                WorkloadFlow {
                    name: format!("{}#{}", w.name, record.index),
                    src: sc.nodes[record.src as usize].name.clone(),
                    dst: sc.nodes[record.dst as usize].name.clone(),
                    record,
                    counters,
                }
            })
            .collect();
        let queue_summaries = queues
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let link = &sc.links[i / 2];
                let (node, peer) = if i % 2 == 0 {
                    (link.a, link.b)
                } else {
                    (link.b, link.a)
                };
                QueueSummary {
                    name: names[i].clone(),
                    node: sc.nodes[node].name.clone(),
                    peer: sc.nodes[peer].name.clone(),
                    node_kind: match sc.nodes[node].kind {
                        NodeKind::Switch(_) => "switch",
                        NodeKind::Host(_) => "host",
                    },
                    drops_frames: q.drops_frames,
                    drops_bytes: q.drops_bytes,
                    max_occupancy_bytes: q.max_occupancy,
                    tx_bytes: q.tx_bytes,
                    pause_frames_sent: q.pause_frames_sent,
                    xoff_sent: q.xoff_sent,
                    paused_time_s: q.paused_time.as_secs_f64(),
                    cn_negative: q.cn_negative,
                    cn_positive: q.cn_positive,
                    cn_stop: q.cn_stop,
                    cn_dropped: q.cn_dropped,
                    rate_gbps: link.rate.0 as f64 / 1e9,
                    thresholds: QueueThresholds::of(sc, node, link.rate),
                }
            })
            .collect();
        let per_s = |n: u64| if wall_s > 0.0 { n as f64 / wall_s } else { 0.0 };
        let summary = Summary {
            name: sc.name.clone(),
            seed,
            cnsim_version: env!("CARGO_PKG_VERSION"),
            engine_id: ENGINE_ID,
            scenario_hash: scenario_hash(sc),
            fingerprint: format!("{fingerprint:016x}"),
            duration_s: sc.duration.as_secs_f64(),
            bin_s: sc.bin.as_secs_f64(),
            wall_time_s: wall_s,
            events,
            frame_hops,
            events_per_s: per_s(events),
            frame_hops_per_s: per_s(frame_hops),
            slowdown: wall_s / sc.duration.as_secs_f64(),
            peak_memory_bytes: peak_memory(),
            rss_growth_bytes,
            totals,
            flows: flow_summaries,
            queues: queue_summaries,
            plot: sc.plot.clone(),
            fairness,
            stability,
            partial: stop.map(|(reached, end, reason)| Partial {
                reason,
                reached_s: reached.as_secs_f64(),
                at_s: end.as_secs_f64(),
            }),
            watchdog: watchdog.map(|(spec, w, per_class)| {
                // With PFC the watchdog numbers each (port, class) as port × 8 + class.
                let split = |e: u32| {
                    if per_class {
                        (e as usize / 8, Some((e % 8) as u8))
                    } else {
                        (e as usize, None)
                    }
                };
                WatchdogReport {
                    threshold_s: spec.threshold.as_secs_f64(),
                    long_pauses: w
                        .long_pauses
                        .iter()
                        .map(|l| LongPauseReport {
                            queue: names[split(l.port).0].clone(),
                            class: split(l.port).1,
                            since_s: l.since.as_secs_f64(),
                            noticed_s: l.noticed.as_secs_f64(),
                        })
                        .collect(),
                    deadlocks: w
                        .deadlocks
                        .iter()
                        .map(|d| DeadlockReport {
                            queues: d.ports.iter().map(|&e| names[split(e).0].clone()).collect(),
                            classes: per_class.then(|| {
                                d.ports.iter().map(|&e| split(e).1.unwrap_or(0)).collect()
                            }),
                            noticed_s: d.noticed.as_secs_f64(),
                        })
                        .collect(),
                }
            }),
            classes,
            pfc: pfc.as_ref().map(|(t, _)| t.clone()),
            buffers,
            ingress: Vec::new(),
            workloads,
            flows_finished_s: flows_finished.map(|t| t.as_secs_f64()),
            window_s: None,
            threads_requested: 1,
            threads_used: 1,
            threads_note: None,
        };
        RunResult {
            summary,
            flows,
            workload_flows,
            queues,
            series,
            pfc_events: pfc.map(|(_, e)| e).unwrap_or_default(),
        }
    }
}
