//! The simulator: the network built from a `Scenario`, the event loop and
//! the handlers that move frames.
//!
//! Per frame and hop there are two events: `TxDone` when the last bit leaves
//! a port (the buffer is freed and the frame is handed to the link) and
//! `Arrive` after the propagation delay plus the receiving switch's latency
//! (admission into the next output queue, or delivery at a host). A UDP
//! frame's last hop has no `Arrive`: see `send_on_link`.

use crate::cm::bcn::{self, BcnParams, CongestionPoint, Feedback};
use crate::cm::e2cm::{E2cmParams, Measure, ProbePool, ProbeRecord, ProbeSink, ProbeSource};
use crate::cm::qcn::{QcnCp, QcnParams, QcnRp};
use crate::engine::rng::{component_key, stream, unit_open0, Geometric, Stream};
use crate::engine::{EventClass, EventQueue};
use crate::flowctl::pause::{pause_duration, PauseEffect};
use crate::flowctl::watchdog::{PausedPorts, Watchdog, WatchdogSpec};
use crate::metrics::series::{BinnedLevel, BinnedSum};
use crate::net::frame::{Frame, FrameKind, PAUSE_FRAME_BYTES, XOFF_QUANTA};
use crate::net::port::{Port, TxState};
use crate::net::rate_limiter::{RateLimiter, NO_CP};
use crate::net::routing::{adjacency, Routes, NO_ROUTE};
use crate::results::{FlowCounters, QueueCounters, RunResult, Series, StabilityWatch};
use crate::scenario::schema::{PauseMode, SourceKind, Transport};
use crate::scenario::spec::{BufferModel, NodeKind, PauseSpec, Scenario};
use crate::traffic::source::{Source, SourceParams};
use crate::transport::tcp::{TcpParams, TcpReceiver, TcpSender};
use crate::units::Time;
use slab::Slab;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

pub mod budget;
mod invariants;
mod qcn;
mod tcp;

/// Shared with another thread to watch a run and to cancel it.
#[derive(Debug, Default)]
pub struct Progress {
    pub sim_time_ps: AtomicU64,
    pub duration_ps: AtomicU64,
    pub events: AtomicU64,
    pub cancel: AtomicBool,
}

#[derive(Default, Clone)]
pub struct RunOptions {
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    pub progress: Option<Arc<Progress>>,
    /// Stop (with a result marked partial) after this many events...
    pub max_events: Option<u64>,
    /// ... or this much wall time.
    pub max_wall: Option<std::time::Duration>,
    /// Skip the invariant checks (see `sim::invariants`).
    pub no_checks: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("run cancelled at {0} of simulated time")]
    Cancelled(Time),
    #[error(
        "the run would need about {} of memory for its series, state and result tables ({flows} flows, {ports} ports, \
         {bins} bins), more than the {} available; use a wider 'bin', a shorter 'duration' or fewer flows",
        budget::human_bytes(*estimate),
        budget::human_bytes(*available)
    )]
    TooLarge {
        estimate: u64,
        available: u64,
        flows: u64,
        ports: u64,
        bins: u64,
    },
    #[error("{0}")]
    Invariant(String),
}

/// Events are small (12 bytes) because the heap moves them: a frame on a
/// link waits in its receiving port's `arriving` line, and the few frames
/// that travel otherwise (notifications, frames between a host's queues and
/// its egress buffer) wait in `Simulator::parked`, under a slot number.
#[derive(Clone, Copy, Debug)]
enum Event {
    TxDone {
        port: u32,
    },
    /// The first frame of `ports[port].arriving` has been received.
    Arrive {
        port: u32,
    },
    /// A switch-generated message enters the switch as if received on `port`.
    Inject {
        port: u32,
        slot: u32,
    },
    PauseRx {
        port: u32,
        quanta: u16,
    },
    PauseExpire {
        port: u32,
        generation: u32,
    },
    PauseRefresh {
        port: u32,
        generation: u32,
    },
    SourceFire {
        source: u32,
    },
    /// A congestion notification takes effect at its flow's source.
    Notify {
        flow: u32,
        slot: u32,
    },
    /// A rate limiter may release its next frame.
    RlRelease {
        flow: u32,
    },
    /// Self-increase tick of a rate limiter.
    Drift {
        flow: u32,
        generation: u32,
    },
    /// A frame released by a host's per-flow queues reaches its egress
    /// buffer after the loop delay.
    EgressArrive {
        node: u32,
        slot: u32,
    },
    /// A host's per-flow queue arbiter is free again.
    ArbiterFree {
        node: u32,
    },
    /// A probing flow checks whether its longest probe interval has passed.
    ProbeTimer {
        flow: u32,
        generation: u32,
    },
    /// The timer of a flow's QCN reaction point ends a cycle.
    QcnTimer {
        flow: u32,
        generation: u32,
    },
    /// A TCP sender's retransmission timer may have expired.
    TcpRto {
        flow: u32,
    },
    /// A TCP receiver's delayed-ACK timer may have expired.
    TcpDelAck {
        flow: u32,
    },
}

impl Event {
    /// What the fingerprint records of an event besides its time: its
    /// kind and the element it happens at (port, node, flow or source).
    #[inline]
    fn trace(&self) -> (u64, u32) {
        match *self {
            Event::TxDone { port } => (1, port),
            Event::Arrive { port } | Event::Inject { port, .. } => (2, port),
            Event::PauseRx { port, .. } => (3, port),
            Event::PauseExpire { port, .. } => (4, port),
            Event::PauseRefresh { port, .. } => (5, port),
            Event::SourceFire { source } => (6, source),
            Event::Notify { flow, .. } => (7, flow),
            Event::RlRelease { flow } => (8, flow),
            Event::Drift { flow, .. } => (9, flow),
            Event::EgressArrive { node, .. } => (10, node),
            Event::ArbiterFree { node } => (11, node),
            Event::ProbeTimer { flow, .. } => (12, flow),
            Event::QcnTimer { flow, .. } => (13, flow),
            Event::TcpRto { flow } => (14, flow),
            Event::TcpDelAck { flow } => (15, flow),
        }
    }
}

/// Fold one event into the running fingerprint (OMNeT++'s idea: any change
/// in what happens, when, or where, changes the final value).
#[inline]
fn fingerprint_step(fp: u64, t: Time, kind: u64, element: u32) -> u64 {
    let word = t.0 ^ (kind << 56) ^ ((element as u64) << 20).rotate_left(7);
    (fp ^ word)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29)
}

impl EventClass for Event {
    /// On ties: departures free space first, then PAUSE takes effect, then
    /// arrivals are admitted, then sources produce.
    fn class(&self) -> u8 {
        match self {
            Event::TxDone { .. } => 0,
            Event::PauseRx { .. }
            | Event::PauseExpire { .. }
            | Event::PauseRefresh { .. }
            | Event::Notify { .. }
            | Event::RlRelease { .. }
            | Event::Drift { .. }
            | Event::ArbiterFree { .. }
            | Event::ProbeTimer { .. }
            | Event::QcnTimer { .. }
            | Event::TcpRto { .. }
            | Event::TcpDelAck { .. } => 1,
            Event::Arrive { .. } | Event::Inject { .. } | Event::EgressArrive { .. } => 2,
            Event::SourceFire { .. } => 3,
        }
    }

    /// Completions come one frame time after a start and arrivals one
    /// link delay after a departure: each in time order when frame sizes
    /// and link delays are alike, so each has a FIFO lane.
    #[inline]
    fn lane(&self) -> Option<usize> {
        match self {
            Event::TxDone { .. } => Some(0),
            Event::Arrive { .. } => Some(1),
            _ => None,
        }
    }
}

struct SwitchState {
    buffer: BufferModel,
    queue_limit: Option<u64>,
    pause: Option<PauseSpec>,
}

struct HostState {
    host_number: u32,
    port: u32,
    egress: Option<u64>,
    high: Option<u64>,
    low: u64,
    /// Sources stop until occupancy is at or below `low`.
    stopped: bool,
    /// Sources and TCP senders waiting for egress or rate-limiter space, in
    /// the order they blocked.
    waiting: VecDeque<Waiter>,
    /// Rate limiters (by flow) waiting for egress space.
    stalled: VecDeque<u32>,
    /// Delay before a received notification takes effect.
    response_time: Time,
    /// Every flow goes through its own queue (`limiters`), served
    /// round-robin at the line rate; sources never wait.
    voq: bool,
    /// Delay from the per-flow queues to the egress buffer.
    loop_delay: Time,
    /// Bytes released by the per-flow queues, not yet in the egress buffer.
    in_delay: u64,
    /// When the per-flow queue arbiter may release its next frame.
    arbiter_free: Time,
    /// An `ArbiterFree` event is pending.
    arbiter_wake: bool,
}

/// The ports as the PAUSE watchdog sees them.
struct NetView<'a> {
    ports: &'a [Port],
    node_ports: &'a [Vec<u32>],
}

impl PausedPorts for NetView<'_> {
    fn paused_since(&self, port: u32) -> Option<Time> {
        self.ports[port as usize].pause_in.paused_since()
    }
    fn peer_ports(&self, port: u32) -> &[u32] {
        let peer = self.ports[port as usize].peer as usize;
        &self.node_ports[self.ports[peer].node as usize]
    }
}

/// Who waits for room in a host's adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waiter {
    Source(u32),
    /// A TCP connection, by flow.
    Tcp(u32),
}

enum Role {
    Switch(SwitchState),
    Host(HostState),
}

pub struct Simulator {
    now: Time,
    end: Time,
    seed: u64,
    events: EventQueue<Event>,
    roles: Vec<Role>,
    /// Some switch sends PAUSE: without, the per-frame PAUSE checks are skipped.
    any_pause: bool,
    node_ports: Vec<Vec<u32>>,
    ports: Vec<Port>,
    /// Link delay plus the receiving node's latency, per port.
    to_peer: Vec<Time>,
    /// Link delay plus the receiving node's PAUSE response time, per port.
    pause_to_peer: Vec<Time>,
    /// Per port: its peer is a host.
    to_host: Vec<bool>,
    routes: Routes,
    /// Frames travelling outside a link, referred to by events.
    parked: Slab<Frame>,
    sources: Vec<Source>,
    flows: Vec<FlowCounters>,
    queues: Vec<QueueCounters>,
    flow_tx: BinnedSum,
    flow_rx: BinnedSum,
    queue_tx: BinnedSum,
    queue_drops: BinnedSum,
    /// XOFF frames sent per port and bin.
    queue_xoff: BinnedSum,
    queue_occ: BinnedLevel,
    n_events: u64,
    frame_hops: u64,
    /// Running hash of the event trace (time, kind, element).
    fingerprint: u64,
    watchdog_spec: Option<WatchdogSpec>,
    watchdog: Watchdog,
    /// Why and when the run stopped before its end, if it did.
    stop: Option<(Time, String)>,
    /// Invariant checks on (`RunOptions::no_checks` turns them off), and
    /// the first violation found.
    checks: bool,
    violation: Option<invariants::Violation>,
    /// The lowest rate an installed limiter may have (the checks' bound).
    rate_floor: f64,
    /// Per flow: sequence number of the next UDP frame, and of the last
    /// delivered (a frame's `aux`; the once-and-in-order check).
    next_seq: Vec<u32>,
    last_seq: Vec<u32>,
    #[cfg(test)]
    fault: invariants::Fault,
    /// Limits of this run (from `RunOptions`).
    max_events: u64,
    max_wall: Option<(std::time::Instant, std::time::Duration)>,
    /// Congestion-notification parameters, if a scheme is configured.
    bcn: Option<BcnParams>,
    /// Per port: its congestion point (empty without a scheme).
    cps: Vec<Option<CongestionPoint>>,
    /// Per flow: its rate limiter (empty without a scheme). A flow whose
    /// limiter is shared uses the row of `flow_rl`.
    limiters: Vec<RateLimiter>,
    /// Per flow: the row of its limiter (itself, or with QCN's
    /// per-destination limiters the first flow of its host to the same
    /// destination). Empty when every flow has its own.
    flow_rl: Vec<u32>,
    /// Per flow: the random stream of its reaction point (BCN(0,0) stop times).
    rp_rng: Vec<Stream>,
    /// Per flow: host number and node of its source.
    flow_src_host: Vec<u32>,
    flow_src_node: Vec<u32>,
    /// Per node: switch latency (zero for hosts).
    switch_latency: Vec<Time>,
    rl_rate: BinnedLevel,
    rl_occ: BinnedLevel,
    stability: Option<StabilityWatch>,
    /// E2CM's per-flow probe loop, if configured.
    e2cm: Option<E2cmParams>,
    probe_src: Vec<ProbeSource>,
    /// Per flow, destination-based measurement only.
    probe_sink: Vec<ProbeSink>,
    probes: ProbePool,
    /// Per flow: the stream deciding which released frames a probe follows.
    probe_rng: Vec<Stream>,
    /// Per flow: host number of its destination.
    flow_dst_host: Vec<u32>,
    /// QCN, if configured: congestion points per port, reaction points per flow.
    qcn: Option<QcnParams>,
    qcn_cps: Vec<Option<QcnCp>>,
    qcn_rps: Vec<QcnRp>,
    /// Per flow: the reaction point's target rate TR (QCN only).
    rl_target: BinnedLevel,
    /// Per flow, TCP flows only (empty without TCP): parameters (MSS from
    /// the source's frame), sender, receiver, and pending timer events.
    flow_tcp: Vec<bool>,
    tcp_params: Vec<TcpParams>,
    tcp_tx: Vec<TcpSender>,
    tcp_rx: Vec<TcpReceiver>,
    /// Per flow: the receiving host's node.
    tcp_dst_node: Vec<u32>,
    /// Time of the earliest pending `TcpRto` and `TcpDelAck` event.
    tcp_rto_at: Vec<Option<Time>>,
    tcp_delack_at: Vec<Option<Time>>,
    /// The sender waits in its host's `waiting` line.
    tcp_blocked: Vec<bool>,
    tcp_cwnd: BinnedLevel,
    tcp_retx: BinnedSum,
    tcp_timeouts: BinnedSum,
}

impl Simulator {
    pub fn new(sc: &Scenario, seed: u64) -> Simulator {
        let routes = Routes::compute(&sc.nodes, &sc.links);
        let adj = adjacency(sc.nodes.len(), &sc.links);
        let mut ports = Vec::with_capacity(sc.links.len() * 2);
        for l in &sc.links {
            ports.push(Port::new(l.a as u32, 0, l.rate, l.delay));
            ports.push(Port::new(l.b as u32, 0, l.rate, l.delay));
        }
        for i in 0..sc.links.len() {
            ports[2 * i].peer = 2 * i as u32 + 1;
            ports[2 * i + 1].peer = 2 * i as u32;
        }
        let mut roles = Vec::with_capacity(sc.nodes.len());
        for (n, node) in sc.nodes.iter().enumerate() {
            roles.push(match &node.kind {
                NodeKind::Switch(s) => Role::Switch(SwitchState {
                    buffer: s.buffer,
                    queue_limit: s.queue_limit,
                    pause: s.pause,
                }),
                NodeKind::Host(h) => {
                    let port = adj[n][0].0;
                    Role::Host(HostState {
                        host_number: routes.host_number(n).expect("hosts are numbered"),
                        port,
                        egress: h.egress,
                        high: h.egress_high,
                        low: h.egress_low.unwrap_or(0),
                        stopped: false,
                        waiting: VecDeque::new(),
                        stalled: VecDeque::new(),
                        response_time: h.response_time,
                        voq: h.voq,
                        loop_delay: h.loop_delay,
                        in_delay: 0,
                        arbiter_free: Time::ZERO,
                        arbiter_wake: false,
                    })
                }
            });
        }
        let mut to_peer = Vec::with_capacity(ports.len());
        let mut pause_to_peer = Vec::with_capacity(ports.len());
        let mut to_host = Vec::with_capacity(ports.len());
        for p in 0..ports.len() {
            let peer_node = &sc.nodes[ports[ports[p].peer as usize].node as usize];
            let latency = match &peer_node.kind {
                NodeKind::Switch(s) => s.latency,
                NodeKind::Host(_) => Time::ZERO,
            };
            to_peer.push(ports[p].delay + latency);
            pause_to_peer.push(ports[p].delay + peer_node.response_time());
            to_host.push(peer_node.is_host());
            if let NodeKind::Host(h) = &peer_node.kind {
                ports[p].service = h.service;
            }
        }
        let flow_specs = sc.flows();
        let mut sources = Vec::with_capacity(sc.sources.len());
        // Each source's flows (flow index, destination host), in flow order.
        let mut source_flows: Vec<Vec<(u32, u32)>> = vec![Vec::new(); sc.sources.len()];
        for (fi, f) in flow_specs.iter().enumerate() {
            let dst = routes.host_number(f.dst).expect("destinations are hosts");
            source_flows[f.source].push((fi as u32, dst));
        }
        // Sources with equal loads share their gap generator's table.
        let mut gaps: std::collections::HashMap<u64, Geometric> = Default::default();
        for (si, s) in sc.sources.iter().enumerate() {
            let Role::Host(h) = &roles[s.host] else {
                unreachable!("validated: sources sit on hosts")
            };
            let unit_bytes = if s.kind == SourceKind::Transactions {
                s.transaction
            } else {
                s.frame as u64
            };
            let flows = std::mem::take(&mut source_flows[si]);
            let gap = gaps
                .entry(s.load.to_bits())
                .or_insert_with(|| Geometric::new(s.load))
                .clone();
            let slot = ports[h.port as usize].rate.tx_time(unit_bytes);
            sources.push(Source::new(SourceParams {
                host_node: s.host as u32,
                transport: s.transport,
                host_port: h.port,
                rng: stream(seed, component_key("source", &s.name)),
                gaps: gap,
                slot,
                slot_offset: s.slot_offset,
                start: s.start,
                stop: s.stop,
                frame: s.frame,
                unit_bytes,
                flows,
            }));
        }
        let n_bins = sc.duration.0.div_ceil(sc.bin.0) as usize;
        let n_ports = ports.len();
        let n_flows = flow_specs.len();
        let queue_names = sc.queue_names();
        let cps = match &sc.bcn {
            None => Vec::new(),
            Some(p) => (0..n_ports)
                .map(|i| match &sc.nodes[ports[i].node as usize].kind {
                    NodeKind::Switch(s) if s.congestion_point => Some(CongestionPoint::new(
                        p,
                        stream(seed, component_key("cp", &queue_names[i])),
                    )),
                    _ => None,
                })
                .collect(),
        };
        let any_voq = sc
            .nodes
            .iter()
            .any(|n| matches!(&n.kind, NodeKind::Host(h) if h.voq));
        let rl_rows = if sc.bcn.is_some() || sc.qcn.is_some() || any_voq {
            n_flows
        } else {
            0
        };
        let flow_src_node: Vec<u32> = flow_specs.iter().map(|f| f.src as u32).collect();
        let flow_dst_host: Vec<u32> = flow_specs
            .iter()
            .map(|f| routes.host_number(f.dst).expect("destinations are hosts"))
            .collect();
        let flow_src_host: Vec<u32> = flow_specs
            .iter()
            .map(|f| routes.host_number(f.src).expect("sources are hosts"))
            .collect();
        let mut sim = Simulator {
            now: Time::ZERO,
            end: sc.duration,
            seed,
            events: EventQueue::with_capacity(4096),
            any_pause: sc
                .nodes
                .iter()
                .any(|n| matches!(&n.kind, NodeKind::Switch(s) if s.pause.is_some())),
            roles,
            node_ports: adj
                .iter()
                .map(|ps| ps.iter().map(|&(p, _)| p).collect())
                .collect(),
            ports,
            to_peer,
            pause_to_peer,
            to_host,
            routes,
            parked: Slab::with_capacity(64),
            sources,
            flows: vec![FlowCounters::default(); n_flows],
            queues: vec![QueueCounters::default(); n_ports],
            flow_tx: BinnedSum::new(n_flows, n_bins, sc.bin),
            flow_rx: BinnedSum::new(n_flows, n_bins, sc.bin),
            queue_tx: BinnedSum::new(n_ports, n_bins, sc.bin),
            queue_drops: BinnedSum::new(n_ports, n_bins, sc.bin),
            queue_xoff: BinnedSum::new(n_ports, n_bins, sc.bin),
            queue_occ: BinnedLevel::new(n_ports, n_bins, sc.bin),
            n_events: 0,
            frame_hops: 0,
            fingerprint: 0,
            watchdog_spec: sc.watchdog,
            watchdog: Watchdog::new(if sc.watchdog.is_some() { n_ports } else { 0 }),
            stop: None,
            checks: true,
            violation: None,
            rate_floor: invariants::rate_floor(sc),
            next_seq: vec![0; n_flows],
            last_seq: vec![0; n_flows],
            #[cfg(test)]
            fault: invariants::Fault::None,
            max_events: u64::MAX,
            max_wall: None,
            bcn: sc.bcn,
            cps,
            limiters: (0..rl_rows).map(|_| RateLimiter::default()).collect(),
            flow_rl: match sc.qcn {
                Some(q) if q.per_destination => (0..n_flows)
                    .map(|f| {
                        let (s, d) = (flow_specs[f].src, flow_specs[f].dst);
                        (0..f)
                            .find(|&g| flow_specs[g].src == s && flow_specs[g].dst == d)
                            .unwrap_or(f) as u32
                    })
                    .collect(),
                _ => Vec::new(),
            },
            rp_rng: match (sc.bcn.and_then(|p| p.stop), sc.qcn) {
                (Some(_), _) | (_, Some(_)) => flow_specs
                    .iter()
                    .map(|f| stream(seed, component_key("rp", &f.name)))
                    .collect(),
                (None, None) => Vec::new(),
            },
            flow_src_host,
            flow_src_node,
            switch_latency: sc
                .nodes
                .iter()
                .map(|n| match &n.kind {
                    NodeKind::Switch(s) => s.latency,
                    NodeKind::Host(_) => Time::ZERO,
                })
                .collect(),
            rl_rate: BinnedLevel::new(rl_rows, n_bins, sc.bin),
            rl_occ: BinnedLevel::new(rl_rows, n_bins, sc.bin),
            stability: sc
                .metrics
                .stability
                .as_ref()
                .map(|s| StabilityWatch::new(s.queue as u32, s.threshold, s.onset)),
            e2cm: sc.e2cm,
            probe_src: match sc.e2cm {
                Some(_) => vec![ProbeSource::default(); n_flows],
                None => Vec::new(),
            },
            probe_sink: match sc.e2cm {
                Some(e) if e.measure == Measure::Destination => {
                    vec![ProbeSink::default(); n_flows]
                }
                _ => Vec::new(),
            },
            probes: ProbePool::default(),
            probe_rng: match sc.e2cm {
                Some(_) => flow_specs
                    .iter()
                    .map(|f| stream(seed, component_key("probe", &f.name)))
                    .collect(),
                None => Vec::new(),
            },
            flow_dst_host,
            qcn: sc.qcn,
            qcn_cps: Vec::new(),
            qcn_rps: Vec::new(),
            rl_target: BinnedLevel::new(if sc.qcn.is_some() { n_flows } else { 0 }, n_bins, sc.bin),
            flow_tcp: Vec::new(),
            tcp_params: Vec::new(),
            tcp_tx: Vec::new(),
            tcp_rx: Vec::new(),
            tcp_dst_node: Vec::new(),
            tcp_rto_at: Vec::new(),
            tcp_delack_at: Vec::new(),
            tcp_blocked: Vec::new(),
            tcp_cwnd: BinnedLevel::new(0, n_bins, sc.bin),
            tcp_retx: BinnedSum::new(0, n_bins, sc.bin),
            tcp_timeouts: BinnedSum::new(0, n_bins, sc.bin),
        };
        if let Some(p) = sc.qcn {
            for f in 0..n_flows {
                let line = sim.line_rate(f as u32);
                sim.rl_target.set(f, Time::ZERO, line as u64);
            }
            sim.qcn_cps = (0..n_ports)
                .map(|i| match &sc.nodes[sim.ports[i].node as usize].kind {
                    NodeKind::Switch(s) if s.congestion_point => Some(QcnCp::new(
                        &p,
                        stream(seed, component_key("cp", &queue_names[i])),
                    )),
                    _ => None,
                })
                .collect();
            sim.qcn_rps = (0..n_flows)
                .map(|f| QcnRp::new(sim.line_rate(f as u32)))
                .collect();
        }
        if let Some(tp) = sc.tcp {
            sim.init_tcp(sc, &flow_specs, tp, n_bins);
        }
        // Without a limiter a flow may send at its line rate.
        for f in 0..rl_rows {
            let line = sim.line_rate(f as u32);
            sim.rl_rate.set(f, Time::ZERO, line as u64);
        }
        sim
    }

    /// Run to the scenario's end time.
    pub fn run(mut self, sc: &Scenario, opts: &RunOptions) -> Result<RunResult, RunError> {
        let started = std::time::Instant::now();
        if let Some(p) = &opts.progress {
            p.duration_ps.store(self.end.0, Ordering::Relaxed);
        }
        self.max_events = opts.max_events.unwrap_or(u64::MAX);
        self.checks = !opts.no_checks;
        self.max_wall = opts.max_wall.map(|d| (started, d));
        self.start_sources();
        self.run_until(self.end, opts.progress.as_deref())?;
        if let Some(v) = &self.violation {
            return Err(RunError::Invariant(v.describe(sc, self.seed)));
        }
        if let Some((t, _)) = &self.stop {
            // Results cover the simulated time up to the stop.
            self.end = *t;
        }
        self.now = self.end;
        if let Some(p) = &opts.progress {
            p.sim_time_ps.store(self.end.0, Ordering::Relaxed);
            p.events.store(self.n_events, Ordering::Relaxed);
        }
        let wall = started.elapsed();
        self.finish(sc, wall)
    }

    fn start_sources(&mut self) {
        for s in 0..self.sources.len() {
            if let Some(t) = self.sources[s].next_time(Time::ZERO) {
                self.events
                    .schedule(t, Event::SourceFire { source: s as u32 });
            }
        }
    }

    /// Handle every event before `end`.
    fn run_until(&mut self, end: Time, progress: Option<&Progress>) -> Result<(), RunError> {
        while let Some((t, ev)) = self.events.pop_before(end) {
            self.now = t;
            self.n_events += 1;
            let (kind, element) = ev.trace();
            self.fingerprint = fingerprint_step(self.fingerprint, t, kind, element);
            self.dispatch(ev);
            if self.n_events >= self.max_events {
                let reason = format!("stopped after {} events (max_events)", self.n_events);
                self.stop.get_or_insert((t, reason));
            }
            if self.stop.is_some() || self.violation.is_some() {
                break;
            }
            if self.n_events & 0xFFFF == 0 {
                if let Some((started, limit)) = self.max_wall {
                    if started.elapsed() >= limit {
                        let reason = format!(
                            "stopped after {:.1} s of wall time (max_wall)",
                            limit.as_secs_f64()
                        );
                        self.stop = Some((t, reason));
                        break;
                    }
                }
                if let Some(p) = progress {
                    p.sim_time_ps.store(t.0, Ordering::Relaxed);
                    p.events.store(self.n_events, Ordering::Relaxed);
                    if p.cancel.load(Ordering::Relaxed) {
                        return Err(RunError::Cancelled(t));
                    }
                }
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone { port } => self.tx_done(port),
            Event::Arrive { port } => {
                let frame = self.ports[port as usize]
                    .arriving
                    .pop_front()
                    .expect("an Arrive event per frame on the link");
                self.arrive(port, frame)
            }
            Event::Inject { port, slot } => {
                let frame = self.parked.remove(slot as usize);
                self.arrive(port, frame)
            }
            Event::PauseRx { port, quanta } => self.pause_rx(port, quanta),
            Event::PauseExpire { port, generation } => {
                if self.ports[port as usize]
                    .pause_in
                    .expire(self.now, generation)
                {
                    self.try_start(port);
                }
            }
            Event::PauseRefresh { port, generation } => {
                let p = &self.ports[port as usize];
                if p.pause_out.generation == generation && p.pause_out.holding() {
                    self.send_pause(port, XOFF_QUANTA);
                }
            }
            Event::SourceFire { source } => {
                self.sources[source as usize].produce();
                if self.source_transport(source) == Transport::Tcp {
                    self.tcp_write(source);
                    self.schedule_next_unit(source);
                } else if self.source_push(source) {
                    self.schedule_next_unit(source);
                }
            }
            Event::Notify { slot, .. } => {
                let frame = self.parked.remove(slot as usize);
                match frame.kind {
                    FrameKind::ProbeReply => self.e2cm_react(frame),
                    FrameKind::Cnm => self.qcn_react(frame),
                    _ => self.bcn_react(frame),
                }
            }
            Event::EgressArrive { node, slot } => {
                let frame = self.parked.remove(slot as usize);
                if let Role::Host(h) = &mut self.roles[node as usize] {
                    h.in_delay -= frame.size as u64;
                }
                self.egress_enqueue(node as usize, frame);
            }
            Event::ArbiterFree { node } => {
                if let Role::Host(h) = &mut self.roles[node as usize] {
                    h.arbiter_wake = false;
                }
                self.serve_stalled(node as usize);
            }
            Event::ProbeTimer { flow, generation } => self.probe_timer(flow, generation),
            Event::QcnTimer { flow, generation } => self.qcn_timer(flow, generation),
            Event::TcpRto { flow } => self.tcp_rto(flow),
            Event::TcpDelAck { flow } => self.tcp_delack(flow),
            Event::RlRelease { flow } => self.rl_release(flow),
            Event::Drift { flow, generation } => self.drift_tick(flow, generation),
        }
    }

    // ---- transmitters -------------------------------------------------

    /// Start the next transmission if the port is idle.
    #[inline(always)]
    fn try_start(&mut self, port: u32) {
        if self.ports[port as usize].tx == TxState::Idle {
            self.start_next(port);
        }
    }

    /// `start_idle` out of line, for the many callers of `try_start`.
    #[inline(never)]
    fn start_next(&mut self, port: u32) {
        self.start_idle(port);
    }

    /// Start the next transmission on an idle port: PAUSE frames first (a
    /// paused transmitter may still send them), then data unless paused.
    /// Inlined where a port has just become idle (`tx_done`).
    #[inline(always)]
    fn start_idle(&mut self, port: u32) {
        let now = self.now;
        let p = &mut self.ports[port as usize];
        if let Some(q) = p.ctrl_pending.take() {
            p.tx = TxState::Pause(q);
            let done = now + p.rate.tx_time(PAUSE_FRAME_BYTES);
            self.events.schedule(done, Event::TxDone { port });
            return;
        }
        #[allow(unused_mut)]
        let mut hold = p.pause_in.paused;
        #[cfg(test)]
        if self.fault == invariants::Fault::IgnorePause {
            hold = false;
        }
        if hold {
            return;
        }
        if let Some(f) = p.expedited.front() {
            p.tx = TxState::Expedited;
            let done = now + p.tx_time(now, f.size as u64);
            self.events.schedule(done, Event::TxDone { port });
        } else if let Some(f) = p.queue.front() {
            p.tx = TxState::Data;
            let done = now + p.tx_time(now, f.size as u64);
            self.events.schedule(done, Event::TxDone { port });
        } else {
            return;
        }
        self.check_not_paused(port);
    }

    fn tx_done(&mut self, port: u32) {
        let now = self.now;
        let pi = port as usize;
        let tx = std::mem::replace(&mut self.ports[pi].tx, TxState::Idle);
        self.frame_hops += 1;
        match tx {
            TxState::Pause(quanta) => {
                let peer = self.ports[pi].peer;
                self.events.schedule(
                    now + self.pause_to_peer[pi],
                    Event::PauseRx { port: peer, quanta },
                );
                let p = &mut self.ports[pi];
                p.pause_out.frames_sent += 1;
                if quanta > 0 {
                    p.pause_out.xoff_sent += 1;
                    self.queue_xoff.add(pi, now, 1);
                    let node = p.node as usize;
                    if let Role::Switch(SwitchState {
                        pause: Some(ps), ..
                    }) = &self.roles[node]
                    {
                        if ps.refresh {
                            let half = Time(pause_duration(quanta, p.rate).0 / 2);
                            let generation = p.pause_out.generation;
                            self.events
                                .schedule(now + half, Event::PauseRefresh { port, generation });
                        }
                    }
                }
            }
            TxState::Data => {
                let p = &mut self.ports[pi];
                let frame = p.queue.pop_front().expect("a frame is on the wire");
                self.check_dequeue(port, frame.size as u64);
                let p = &mut self.ports[pi];
                p.occupancy = p.occupancy.saturating_sub(frame.size as u64);
                let occ = p.occupancy;
                let node = p.node as usize;
                self.queue_tx.add(pi, now, frame.size as u64);
                self.queues[pi].tx_bytes += frame.size as u64;
                self.occupancy_changed(pi, occ);
                self.send_on_link(port, frame);
                match &self.roles[node] {
                    Role::Switch(_) => {
                        let inp = &mut self.ports[frame.in_port as usize].input_occupancy;
                        *inp = inp.saturating_sub(frame.size as u64);
                        self.output_pause_check(node, port);
                        self.input_pause_check(node, frame.in_port);
                    }
                    Role::Host(_) => self.host_dequeued(node),
                }
            }
            TxState::Expedited => {
                let p = &mut self.ports[pi];
                let frame = p.expedited.pop_front().expect("a frame is on the wire");
                self.queue_tx.add(pi, now, frame.size as u64);
                self.queues[pi].tx_bytes += frame.size as u64;
                self.send_on_link(port, frame);
            }
            TxState::Idle => unreachable!("TxDone on an idle port"),
        }
        // Usually still idle (a waiting source may have started it).
        if self.ports[pi].tx == TxState::Idle {
            self.start_idle(port);
        }
    }

    /// The last bit of `frame` left `port`: it is received at the peer
    /// after the link delay and the receiving node's latency. Arrivals on a
    /// link keep their order (the delay is constant), so the frame waits in
    /// the peer's `arriving` line and the event names only the port.
    ///
    /// A UDP frame toward its destination host is delivered at once, with
    /// its arrival time: nothing at a host reacts to it, so the event would
    /// only cost time. (E2CM's destination measurement counts bytes when a
    /// probe arrives, so with it frames take the event.) A frame that would
    /// arrive after the end stays on the link.
    #[inline]
    fn send_on_link(&mut self, port: u32, frame: Frame) {
        let pi = port as usize;
        let peer = self.ports[pi].peer;
        let at = self.now + self.to_peer[pi];
        if self.to_host[pi]
            && frame.kind == FrameKind::Data
            && at < self.end
            && self.probe_sink.is_empty()
            && !self.is_tcp(frame.flow)
        {
            let node = self.ports[peer as usize].node as usize;
            self.deliver_udp(node, frame, at);
            return;
        }
        self.ports[peer as usize].arriving.push_back(frame);
        self.events.schedule(at, Event::Arrive { port: peer });
    }

    /// A UDP data frame reaches its destination host at `at`.
    fn deliver_udp(&mut self, node: usize, frame: Frame, at: Time) {
        let f = frame.flow as usize;
        self.flows[f].deliver(at, frame.created, frame.size as u64);
        #[cfg(test)]
        if self.fault == invariants::Fault::DeliverTwice {
            self.flows[f].deliver(at, frame.created, frame.size as u64);
        }
        self.check_delivery(node, frame.flow, frame.aux);
        self.flow_rx.add(f, at, frame.size as u64);
        if !self.probe_sink.is_empty() {
            self.probe_sink[f].rx_bytes += frame.size as u64;
        }
    }

    /// `frame` takes effect at its flow's source at `at`.
    fn schedule_notify(&mut self, at: Time, frame: Frame) {
        let flow = frame.flow;
        let slot = self.parked.insert(frame) as u32;
        self.events.schedule(at, Event::Notify { flow, slot });
    }

    // ---- switches and sinks -------------------------------------------

    fn arrive(&mut self, port: u32, mut frame: Frame) {
        let now = self.now;
        let node = self.ports[port as usize].node as usize;
        let sw = match &self.roles[node] {
            Role::Host(h) => {
                debug_assert_eq!(h.host_number, frame.dst_host, "hosts do not forward");
                match frame.kind {
                    FrameKind::Data if self.is_tcp(frame.flow) => self.tcp_segment(node, frame),
                    FrameKind::Ack => self.tcp_ack(frame),
                    FrameKind::Data => self.deliver_udp(node, frame, now),
                    FrameKind::Probe => self.reflect_probe(node, frame),
                    _ => {
                        let at = now + h.response_time;
                        self.schedule_notify(at, frame);
                    }
                }
                return;
            }
            Role::Switch(sw) => sw,
        };
        let out = self.routes.next_port(node, frame.dst_host, frame.flow);
        debug_assert_ne!(out, NO_ROUTE, "validated: every destination is reachable");
        if !frame.is_data() && self.is_expedited(frame.kind) {
            frame.in_port = port;
            self.ports[out as usize].expedited.push_back(frame);
            self.try_start(out);
            return;
        }
        let size = frame.size as u64;
        let o = &self.ports[out as usize];
        let fits = match sw.buffer {
            BufferModel::PerOutput { bytes } => o.occupancy + size <= bytes,
            BufferModel::PerInput { bytes } => {
                self.ports[port as usize].input_occupancy + size <= bytes
            }
            BufferModel::Unlimited => true,
        } && sw.queue_limit.is_none_or(|l| o.occupancy + size <= l);
        #[cfg(test)]
        let fits = fits || self.fault == invariants::Fault::IgnoreBuffer(out);
        if frame.is_data() {
            if !self.cps.is_empty() {
                self.congestion_point(node, port, out, &frame);
            } else if !self.qcn_cps.is_empty() {
                self.qcn_point(node, port, out, &frame);
            }
        }
        if !fits {
            let q = &mut self.queues[out as usize];
            if matches!(frame.kind, FrameKind::Data | FrameKind::Ack) {
                q.drops_frames += 1;
                q.drops_bytes += size;
                self.queue_drops.add(out as usize, now, 1);
                self.frame_lost(&frame);
                #[cfg(test)]
                if self.fault == invariants::Fault::DoubleDrop {
                    self.frame_lost(&frame);
                }
            } else {
                q.cn_dropped += 1;
                if frame.kind == FrameKind::Probe {
                    self.probes.give_back(frame.cpid);
                }
            }
            return;
        }
        frame.in_port = port;
        let o = &mut self.ports[out as usize];
        o.queue.push_back(frame);
        o.occupancy += size;
        #[cfg(test)]
        match self.fault {
            invariants::Fault::LoseOccupancy(p) if p == out => o.occupancy -= size,
            invariants::Fault::ExtraByte(p) if p == out => {
                o.occupancy += 1;
                self.fault = invariants::Fault::None;
            }
            _ => {}
        }
        let occ = o.occupancy;
        self.ports[port as usize].input_occupancy += size;
        self.check_admitted(node, port, out);
        let q = &mut self.queues[out as usize];
        q.max_occupancy = q.max_occupancy.max(occ);
        self.occupancy_changed(out as usize, occ);
        self.output_pause_check(node, out);
        self.input_pause_check(node, port);
        self.try_start(out);
    }

    /// A data frame or an ACK was dropped in the network: a UDP frame
    /// counts against its flow's volume, a TCP segment or ACK as a loss
    /// (TCP sends it again).
    pub(super) fn frame_lost(&mut self, frame: &Frame) {
        let f = frame.flow as usize;
        match frame.kind {
            FrameKind::Ack => self.flows[f].acks_dropped += 1,
            _ if self.is_tcp(frame.flow) => self.flows[f].segments_dropped += 1,
            _ => self.flows[f].volume.drop_frame(frame.size as u64),
        }
    }

    /// Control frames of this kind travel in the expedited class.
    fn is_expedited(&self, kind: FrameKind) -> bool {
        match kind {
            FrameKind::Bcn | FrameKind::BcnStop => self.bcn.is_some_and(|p| p.expedite),
            FrameKind::ProbeReply => self.e2cm.is_some_and(|e| e.expedite),
            FrameKind::Cnm => self.qcn.is_some_and(|q| q.expedite),
            FrameKind::Data | FrameKind::Probe | FrameKind::Ack => false,
        }
    }

    /// Record a queue's new occupancy (series and time to stability).
    #[inline]
    fn occupancy_changed(&mut self, port: usize, occ: u64) {
        self.queue_occ.set(port, self.now, occ);
        if let Some(w) = &mut self.stability {
            if w.queue as usize == port {
                w.observe(self.now, occ);
            }
        }
    }

    // ---- congestion notification ---------------------------------------

    /// A data frame arrives at output `out` of switch `node` on input `inp`:
    /// its congestion point may sample it and notify the frame's source.
    fn congestion_point(&mut self, node: usize, inp: u32, out: u32, frame: &Frame) {
        let (Some(p), Some(cp)) = (&self.bcn, &mut self.cps[out as usize]) else {
            return;
        };
        if !cp.sample(p, frame.size as u32) {
            return;
        }
        let queue = self.ports[out as usize].occupancy;
        let Some(fb) = cp.feedback(p, queue, frame.cpid == out) else {
            return;
        };
        let q = &mut self.queues[out as usize];
        let (kind, fb) = match fb {
            Feedback::Stop => {
                q.cn_stop += 1;
                (FrameKind::BcnStop, 0)
            }
            Feedback::Rate(v) => {
                if v < 0 {
                    q.cn_negative += 1;
                } else {
                    q.cn_positive += 1;
                }
                (FrameKind::Bcn, v as u32)
            }
        };
        let message = Frame {
            created: self.now,
            flow: frame.flow,
            size: p.message_bytes as u16,
            dst_host: self.flow_src_host[frame.flow as usize],
            in_port: inp,
            cpid: out,
            aux: fb,
            kind,
            qfb: 0,
        };
        self.send_notification(node, message);
    }

    /// A congestion point's message is built and queued like a frame
    /// received on the sampled frame's input, after the switch latency.
    fn send_notification(&mut self, node: usize, message: Frame) {
        let at = self.now + self.switch_latency[node];
        let port = message.in_port;
        let slot = self.parked.insert(message) as u32;
        self.events.schedule(at, Event::Inject { port, slot });
    }

    /// Line rate of a flow's source, bit/s.
    fn line_rate(&self, flow: u32) -> f64 {
        let node = self.flow_src_node[flow as usize] as usize;
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("flows start at hosts")
        };
        self.ports[h.port as usize].rate.0 as f64
    }

    /// A notification reaches its flow's reaction point.
    fn bcn_react(&mut self, frame: Frame) {
        let now = self.now;
        let p = self.bcn.expect("notifications need a scheme");
        let f = frame.flow as usize;
        let line = self.line_rate(frame.flow);
        let rl = &mut self.limiters[f];
        let installed = !rl.active;
        match frame.kind {
            FrameKind::BcnStop => {
                let stop = p.stop.expect("BCN(0,0) is configured");
                if installed {
                    rl.install(line, 128);
                }
                rl.cpid = frame.cpid;
                rl.rate = bcn::bound(&p, stop.restart_rate.0 as f64, line);
                let pause = bcn::stop_time(&stop, &mut self.rp_rng[f]);
                rl.next_allowed = rl.next_allowed.max(now + pause);
            }
            FrameKind::Bcn if frame.fb() < 0 => {
                if installed {
                    let initial = p
                        .initial_rate
                        .map_or(line, |r| bcn::bound(&p, r.0 as f64, line));
                    rl.install(initial, 128);
                }
                rl.cpid = frame.cpid;
                rl.rate = bcn::react(&p, rl.rate, frame.fb(), line);
            }
            FrameKind::Bcn => {
                // Positive feedback only adjusts a limiter this CP controls.
                if !rl.active || rl.cpid != frame.cpid {
                    return;
                }
                rl.rate = bcn::react(&p, rl.rate, frame.fb(), line);
                if p.drift.is_some() {
                    rl.drift_generation += 1;
                    self.schedule_drift(frame.flow);
                }
            }
            FrameKind::Data
            | FrameKind::Probe
            | FrameKind::ProbeReply
            | FrameKind::Cnm
            | FrameKind::Ack => {
                unreachable!("only BCN messages reach the BCN reaction point")
            }
        }
        let rl = &mut self.limiters[f];
        rl.messages += 1;
        let rate = rl.rate;
        self.rl_rate.set(f, now, rate as u64);
        if installed {
            self.flows[f].rl_installs += 1;
            if p.drift.is_some() {
                self.schedule_drift(frame.flow);
            }
            self.start_probing(frame.flow);
        }
        self.maybe_release(frame.flow);
    }

    fn schedule_drift(&mut self, flow: u32) {
        let d = self.bcn.and_then(|p| p.drift).expect("drift is configured");
        let generation = self.limiters[flow as usize].drift_generation;
        self.events
            .schedule(self.now + d.interval, Event::Drift { flow, generation });
    }

    fn drift_tick(&mut self, flow: u32, generation: u32) {
        let f = flow as usize;
        let rl = &self.limiters[f];
        if !rl.active || rl.drift_generation != generation {
            return;
        }
        let d = self.bcn.and_then(|p| p.drift).expect("drift is configured");
        let line = self.line_rate(flow);
        let rl = &mut self.limiters[f];
        rl.rate = (rl.rate + d.rate.0 as f64).min(line);
        let rate = rl.rate;
        self.rl_rate.set(f, self.now, rate as u64);
        if rate < line {
            self.schedule_drift(flow);
        }
        self.maybe_release(flow);
    }

    /// A limiter back at the line rate is removed once its queue is empty;
    /// the flow's frames then go out untagged.
    fn maybe_release(&mut self, flow: u32) {
        let line = self.line_rate(flow);
        let node = self.flow_src_node[flow as usize] as usize;
        // A per-flow queue stays whatever becomes of its limiter.
        let voq = matches!(&self.roles[node], Role::Host(h) if h.voq);
        let rl = &mut self.limiters[flow as usize];
        if rl.active && rl.rate >= line && (voq || rl.queue.is_empty()) {
            rl.active = false;
            rl.cpid = NO_CP;
            rl.drift_generation += 1;
            if let Some(s) = self.probe_src.get_mut(flow as usize) {
                s.probing = false;
                s.generation = s.generation.wrapping_add(1);
                rl.probe_due = false;
            }
        }
    }

    /// Make sure a release event is pending if the limiter has frames to send.
    fn rl_schedule(&mut self, flow: u32) {
        let rl = &mut self.limiters[flow as usize];
        if rl.scheduled.is_some() || rl.stalled || (rl.queue.is_empty() && !rl.probe_due) {
            return;
        }
        let t = rl.next_allowed.max(self.now);
        rl.scheduled = Some(t);
        self.events.schedule(t, Event::RlRelease { flow });
    }

    /// Release the limiter's head frame into its host's egress queue, if
    /// its time has come and the egress queue has room.
    fn rl_release(&mut self, flow: u32) {
        let now = self.now;
        let f = flow as usize;
        self.limiters[f].scheduled = None;
        if now < self.limiters[f].next_allowed {
            // A BCN(0,0) pushed the next release later.
            self.rl_schedule(flow);
            return;
        }
        let node = self.flow_src_node[f] as usize;
        let rl = &self.limiters[f];
        let size = match (rl.probe_due, rl.queue.front()) {
            (true, _) => self.e2cm.expect("probes need E2CM").probe_bytes,
            (false, Some(head)) => head.size as u32,
            (false, None) => return,
        };
        let arbiter_busy = matches!(&self.roles[node], Role::Host(h) if h.arbiter_free > now);
        if arbiter_busy || !self.egress_has_room(node, size) {
            let rl = &mut self.limiters[f];
            rl.stalled = true;
            if let Role::Host(h) = &mut self.roles[node] {
                h.stalled.push_back(flow);
            }
            self.wake_arbiter(node);
            return;
        }
        #[cfg(test)]
        if self.fault == invariants::Fault::RateAboveLine && self.limiters[f].active {
            self.limiters[f].rate = 2.0 * self.line_rate(flow);
        }
        if self.limiters[f].active {
            self.check_rate(flow);
        }
        let rl = &mut self.limiters[f];
        if rl.active {
            rl.next_allowed = now + rl.gap(size as u64);
        }
        if rl.probe_due {
            rl.probe_due = false;
            self.send_probe(node, flow);
        } else {
            let mut frame = rl.queue.pop_front().expect("a head frame");
            rl.bytes -= frame.size as u64;
            frame.cpid = rl.cpid;
            let bytes = rl.bytes;
            let active = rl.active;
            self.rl_occ.set(f, now, bytes);
            self.release_to_egress(node, frame);
            if active && self.qcn.is_some() {
                self.qcn_bytes_sent(flow, frame.size);
            }
            if !self.probe_src.is_empty() && self.probe_src[f].probing {
                self.probe_src[f].bytes_since += frame.size as u64;
                let p = self.e2cm.expect("probes need E2CM").probe_probability;
                if unit_open0(&mut self.probe_rng[f]) <= p {
                    self.limiters[f].probe_due = true;
                }
            }
        }
        self.rl_schedule(flow);
        self.maybe_release(flow);
        self.wake_sources(node);
    }

    // ---- E2CM probes ----------------------------------------------------

    /// A rate limiter was just installed: the flow starts probing its path.
    fn start_probing(&mut self, flow: u32) {
        let Some(e) = self.e2cm else {
            return;
        };
        let s = &mut self.probe_src[flow as usize];
        s.probing = true;
        s.bytes_since = 0;
        s.last_probe = self.now;
        s.last_t_dst = None;
        s.q_prev = 0;
        s.generation = s.generation.wrapping_add(1);
        let generation = s.generation;
        self.events.schedule(
            self.now + e.probe_max_interval,
            Event::ProbeTimer { flow, generation },
        );
    }

    /// Send a probe behind the flow's frames: into the egress path like data.
    fn send_probe(&mut self, node: usize, flow: u32) {
        let now = self.now;
        let e = self.e2cm.expect("probes need E2CM");
        let f = flow as usize;
        let s = &mut self.probe_src[f];
        let record = self.probes.take(ProbeRecord {
            flow,
            t_src: now,
            bytes: s.bytes_since,
            ..Default::default()
        });
        s.bytes_since = 0;
        s.last_probe = now;
        self.flows[f].probes_sent += 1;
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("flows start at hosts")
        };
        let probe = Frame {
            created: now,
            flow,
            size: e.probe_bytes as u16,
            dst_host: self.flow_dst_host[f],
            in_port: h.port,
            cpid: record,
            aux: 0,
            qfb: 0,
            kind: FrameKind::Probe,
        };
        self.release_to_egress(node, probe);
    }

    fn probe_timer(&mut self, flow: u32, generation: u32) {
        let e = self.e2cm.expect("probes need E2CM");
        let s = &self.probe_src[flow as usize];
        if !s.probing || s.generation != generation {
            return;
        }
        let due = s.last_probe + e.probe_max_interval;
        let next = if self.now >= due {
            self.limiters[flow as usize].probe_due = true;
            self.rl_schedule(flow);
            self.now + e.probe_max_interval
        } else {
            due
        };
        self.events
            .schedule(next, Event::ProbeTimer { flow, generation });
    }

    /// The destination stamps the probe (and measures, in destination
    /// mode) and returns it to the source.
    fn reflect_probe(&mut self, node: usize, probe: Frame) {
        let now = self.now;
        let e = self.e2cm.expect("probes need E2CM");
        let rec = self.probes.get_mut(probe.cpid);
        rec.t_dst = now;
        if let Some(sink) = self.probe_sink.get_mut(probe.flow as usize) {
            let (rate, excess) = sink.on_probe(now, rec.t_src);
            rec.rx_rate = rate;
            rec.fwd_excess = excess;
        }
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("probes end at hosts")
        };
        let port = h.port;
        let reply = Frame {
            created: now,
            flow: probe.flow,
            size: e.probe_bytes as u16,
            dst_host: self.flow_src_host[probe.flow as usize],
            in_port: port,
            cpid: probe.cpid,
            aux: 0,
            qfb: 0,
            kind: FrameKind::ProbeReply,
        };
        if e.expedite {
            self.ports[port as usize].expedited.push_back(reply);
            self.try_start(port);
        } else {
            self.egress_enqueue(node, reply);
        }
    }

    /// A reflected probe is back: the flow's own loop adjusts its limiter.
    fn e2cm_react(&mut self, reply: Frame) {
        let now = self.now;
        let e = self.e2cm.expect("probes need E2CM");
        let f = reply.flow as usize;
        let record = *self.probes.get(reply.cpid);
        self.probes.give_back(reply.cpid);
        self.flows[f].probe_replies += 1;
        let s = &mut self.probe_src[f];
        if !s.probing {
            // The limiter was released while this probe was out.
            return;
        }
        let Some(q) = s.on_reply(e.measure, now, &record) else {
            return;
        };
        let fb = s.feedback(&e.control, q);
        let rl = &self.limiters[f];
        if fb == 0 || !rl.active {
            return;
        }
        let line = self.line_rate(reply.flow);
        let rl = &mut self.limiters[f];
        rl.rate = bcn::react(&e.control, rl.rate, fb, line);
        let rate = rl.rate;
        self.rl_rate.set(f, now, rate as u64);
        self.maybe_release(reply.flow);
    }

    // ---- PAUSE ----------------------------------------------------------

    /// An output's occupancy changed: PAUSE may hold or release upstream.
    #[inline(always)]
    fn output_pause_check(&mut self, node: usize, out: u32) {
        if self.any_pause {
            self.global_pause_check(node, out);
        }
    }

    /// Global mode: an output at XOFF holds every other port's upstream.
    fn global_pause_check(&mut self, node: usize, out: u32) {
        let Role::Switch(SwitchState {
            pause: Some(ps), ..
        }) = &self.roles[node]
        else {
            return;
        };
        if ps.mode != PauseMode::Global {
            return;
        }
        let (xoff, xon) = (ps.xoff, ps.xon);
        let o = &self.ports[out as usize];
        let hold = if !o.congested && o.occupancy >= xoff {
            true
        } else if o.congested && o.occupancy <= xon {
            false
        } else {
            return;
        };
        self.ports[out as usize].congested = hold;
        for i in 0..self.node_ports[node].len() {
            let p = self.node_ports[node][i];
            if p == out {
                continue;
            }
            let s = &mut self.ports[p as usize].pause_out;
            if let Some(cmd) = if hold { s.hold() } else { s.release() } {
                self.send_pause(p, cmd.quanta());
            }
        }
    }

    /// An input partition's occupancy changed: PAUSE may hold or release its upstream.
    #[inline(always)]
    fn input_pause_check(&mut self, node: usize, inp: u32) {
        if self.any_pause {
            self.per_input_pause_check(node, inp);
        }
    }

    /// Per-input mode: an input's partition at XOFF holds that input's upstream.
    fn per_input_pause_check(&mut self, node: usize, inp: u32) {
        let Role::Switch(SwitchState {
            pause: Some(ps), ..
        }) = &self.roles[node]
        else {
            return;
        };
        if ps.mode != PauseMode::PerInput {
            return;
        }
        let (xoff, xon) = (ps.xoff, ps.xon);
        let p = &mut self.ports[inp as usize];
        let cmd = if !p.pause_out.holding() && p.input_occupancy >= xoff {
            p.pause_out.hold()
        } else if p.pause_out.holding() && p.input_occupancy <= xon {
            p.pause_out.release()
        } else {
            None
        };
        if let Some(cmd) = cmd {
            self.send_pause(inp, cmd.quanta());
        }
    }

    /// Queue a PAUSE frame on `port`; a newer decision replaces one not yet sent.
    fn send_pause(&mut self, port: u32, quanta: u16) {
        self.ports[port as usize].ctrl_pending = Some(quanta);
        self.try_start(port);
    }

    fn pause_rx(&mut self, port: u32, quanta: u16) {
        let p = &mut self.ports[port as usize];
        match p.pause_in.receive(self.now, quanta, p.rate) {
            PauseEffect::HoldUntil(t, generation) => {
                self.events
                    .schedule(t, Event::PauseExpire { port, generation });
                if self.watch(port) && self.watchdog_spec.is_some_and(|w| w.stop_on_deadlock) {
                    let d = self.watchdog.deadlocks.last().expect("just found");
                    let reason =
                        format!("PAUSE deadlock: a cycle of {} paused ports", d.ports.len());
                    self.stop.get_or_insert((self.now, reason));
                }
            }
            PauseEffect::Resume => self.try_start(port),
        }
    }

    /// The watchdog looks at a paused port. True if it found a new deadlock.
    fn watch(&mut self, port: u32) -> bool {
        let Some(spec) = self.watchdog_spec else {
            return false;
        };
        let net = NetView {
            ports: &self.ports,
            node_ports: &self.node_ports,
        };
        self.watchdog.check(&spec, &net, port, self.now)
    }

    // ---- hosts and sources ----------------------------------------------

    /// Hand the source's pending unit to its host: into the flow's rate
    /// limiter if it has one, else into the egress queue. False if there is
    /// no room and the source now waits.
    fn source_push(&mut self, s: u32) -> bool {
        let now = self.now;
        let node = self.sources[s as usize].host_node as usize;
        let port = self.sources[s as usize].host_port;
        while let Some((flow, dst_host, size)) = self.sources[s as usize].peek_frame() {
            if !self.adapter_has_room(node, flow, size) {
                self.sources[s as usize].blocked = true;
                if let Role::Host(h) = &mut self.roles[node] {
                    h.waiting.push_back(Waiter::Source(s));
                }
                // Frames handed over before the stop may sit on an idle link.
                self.try_start(port);
                return false;
            }
            let seq = &mut self.next_seq[flow as usize];
            let frame = Frame {
                created: now,
                flow,
                dst_host,
                in_port: port,
                cpid: NO_CP,
                aux: *seq,
                size: size as u16,
                kind: FrameKind::Data,
                qfb: 0,
            };
            *seq = seq.wrapping_add(1);
            self.sources[s as usize].consume(size);
            self.flows[flow as usize].volume.offer(size as u64);
            self.flow_tx.add(flow as usize, now, size as u64);
            self.adapter_enqueue(node, frame);
        }
        self.try_start(port);
        true
    }

    /// Does a frame of `flow` fit in its host's adapter: in the flow's
    /// queue (per-flow queues are unlimited; a rate limiter's is not), or
    /// else in the egress buffer?
    #[inline]
    fn adapter_has_room(&self, node: usize, flow: u32, size: u32) -> bool {
        if self.limiters.is_empty() {
            return self.egress_has_room(node, size);
        }
        let voq = matches!(&self.roles[node], Role::Host(h) if h.voq);
        if voq {
            return true;
        }
        match self.limiters.get(self.limiter_of(flow) as usize) {
            Some(rl) if rl.active => {
                let cap = match (&self.bcn, &self.qcn) {
                    (Some(p), _) => p.rl_queue,
                    (_, Some(q)) => q.rl_queue,
                    (None, None) => 0,
                };
                !self.host_stopped(node) && rl.bytes + size as u64 <= cap
            }
            _ => self.egress_has_room(node, size),
        }
    }

    /// Hand a data frame (room was checked) to its flow's queue if it has
    /// one, else to the egress buffer.
    fn adapter_enqueue(&mut self, node: usize, frame: Frame) {
        if self.limiters.is_empty() {
            return self.egress_enqueue(node, frame);
        }
        let voq = matches!(&self.roles[node], Role::Host(h) if h.voq);
        let l = self.limiter_of(frame.flow);
        let f = l as usize;
        if voq || self.limiters.get(f).is_some_and(|rl| rl.active) {
            let rl = &mut self.limiters[f];
            rl.queue.push_back(frame);
            rl.bytes += frame.size as u64;
            let bytes = rl.bytes;
            self.rl_occ.set(f, self.now, bytes);
            self.rl_schedule(l);
        } else {
            self.egress_enqueue(node, frame);
        }
    }

    /// The limiter row a flow's frames go through.
    #[inline]
    fn limiter_of(&self, flow: u32) -> u32 {
        self.flow_rl.get(flow as usize).copied().unwrap_or(flow)
    }

    fn host_stopped(&self, node: usize) -> bool {
        matches!(&self.roles[node], Role::Host(h) if h.stopped)
    }

    /// Can the host's egress queue take a frame of `size` bytes?
    #[inline]
    fn egress_has_room(&self, node: usize, size: u32) -> bool {
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("egress queues belong to hosts")
        };
        let p = &self.ports[h.port as usize];
        !h.stopped
            && h.egress
                .is_none_or(|cap| p.occupancy + h.in_delay + size as u64 <= cap)
    }

    /// Hand a frame released by a flow's queue to the egress buffer, after
    /// the host's loop delay; the arbiter is busy for its wire time.
    fn release_to_egress(&mut self, node: usize, frame: Frame) {
        let Role::Host(h) = &mut self.roles[node] else {
            unreachable!("egress queues belong to hosts")
        };
        if h.voq {
            h.arbiter_free = self.now + self.ports[h.port as usize].rate.tx_time(frame.size as u64);
        }
        if h.loop_delay == Time::ZERO {
            self.egress_enqueue(node, frame);
        } else {
            h.in_delay += frame.size as u64;
            let at = self.now + h.loop_delay;
            let node = node as u32;
            let slot = self.parked.insert(frame) as u32;
            self.events.schedule(at, Event::EgressArrive { node, slot });
        }
    }

    /// Put a frame in the host's egress queue (room was checked) and start
    /// the transmitter if it is idle.
    fn egress_enqueue(&mut self, node: usize, frame: Frame) {
        let Role::Host(h) = &mut self.roles[node] else {
            unreachable!("egress queues belong to hosts")
        };
        let port = h.port;
        let p = &mut self.ports[port as usize];
        p.queue.push_back(frame);
        p.occupancy += frame.size as u64;
        if h.high.is_some_and(|hi| p.occupancy >= hi) {
            h.stopped = true;
        }
        let occ = p.occupancy;
        let q = &mut self.queues[port as usize];
        q.max_occupancy = q.max_occupancy.max(occ);
        self.occupancy_changed(port as usize, occ);
        self.try_start(port);
    }

    fn schedule_next_unit(&mut self, s: u32) {
        if let Some(t) = self.sources[s as usize].next_time(self.now) {
            self.events.schedule(t, Event::SourceFire { source: s });
        }
    }

    /// Space freed in a host's egress queue: stalled rate limiters go
    /// first (their frames were produced earlier), then waiting sources.
    fn host_dequeued(&mut self, node: usize) {
        let Role::Host(h) = &mut self.roles[node] else {
            return;
        };
        if h.stopped && self.ports[h.port as usize].occupancy <= h.low {
            h.stopped = false;
        }
        // Only rate limiters stall.
        if !self.limiters.is_empty() {
            self.serve_stalled(node);
        }
        self.wake_sources(node);
    }

    /// Release frames of stalled flows in the order they stalled, while the
    /// egress buffer has room and the arbiter is free.
    fn serve_stalled(&mut self, node: usize) {
        while let Role::Host(h) = &mut self.roles[node] {
            if h.arbiter_free > self.now {
                self.wake_arbiter(node);
                return;
            }
            let Some(flow) = h.stalled.pop_front() else {
                return;
            };
            self.limiters[flow as usize].stalled = false;
            self.rl_release(flow);
            if self.limiters[flow as usize].stalled {
                // Still no room; it went back to the end of the line.
                return;
            }
        }
    }

    /// Make sure the stalled flows are served when the arbiter is free.
    fn wake_arbiter(&mut self, node: usize) {
        let Role::Host(h) = &mut self.roles[node] else {
            return;
        };
        if !h.arbiter_wake && h.arbiter_free > self.now {
            h.arbiter_wake = true;
            let t = h.arbiter_free;
            self.events
                .schedule(t, Event::ArbiterFree { node: node as u32 });
        }
    }

    /// Let every waiting source and TCP sender of the host try again, in
    /// the order they blocked; those that still find no room wait again in
    /// the same order.
    #[inline(always)]
    fn wake_sources(&mut self, node: usize) {
        if matches!(&self.roles[node], Role::Host(h) if !h.waiting.is_empty()) {
            self.retry_waiting(node);
        }
    }

    /// `wake_sources` when someone waits.
    fn retry_waiting(&mut self, node: usize) {
        let Role::Host(h) = &self.roles[node] else {
            return;
        };
        for _ in 0..h.waiting.len() {
            let Role::Host(h) = &mut self.roles[node] else {
                return;
            };
            match h.waiting.pop_front() {
                None => return,
                Some(Waiter::Source(s)) => {
                    self.sources[s as usize].blocked = false;
                    if self.source_push(s) {
                        self.schedule_next_unit(s);
                    }
                }
                Some(Waiter::Tcp(flow)) => {
                    self.tcp_blocked[flow as usize] = false;
                    self.tcp_send(flow);
                }
            }
        }
    }

    // ---- results ----------------------------------------------------------

    fn finish(mut self, sc: &Scenario, wall: std::time::Duration) -> Result<RunResult, RunError> {
        let end = self.end;
        // Frames still buffered or on their way at the end.
        let queued = self.ports.iter().flat_map(|p| p.queue.iter());
        let limited = self.limiters.iter().flat_map(|rl| rl.queue.iter());
        let on_links = self.ports.iter().flat_map(|p| p.arriving.iter());
        let travelling = on_links.chain(self.parked.iter().map(|(_, f)| f));
        for f in queued.chain(limited).chain(travelling) {
            if f.is_data() && !self.flow_tcp.get(f.flow as usize).copied().unwrap_or(false) {
                self.flows[f.flow as usize].volume.in_flight(f.size as u64);
            }
        }
        self.finish_tcp();
        self.check_conservation();
        if let Some(v) = &self.violation {
            return Err(RunError::Invariant(v.describe(sc, self.seed)));
        }
        if self.watchdog_spec.is_some() {
            // Pauses still running at the end are checked once more.
            for port in 0..self.ports.len() as u32 {
                self.watch(port);
            }
        }
        for (i, p) in self.ports.iter().enumerate() {
            let q = &mut self.queues[i];
            q.pause_frames_sent = p.pause_out.frames_sent;
            q.xoff_sent = p.pause_out.xoff_sent;
            q.paused_time = p.pause_in.paused_time(end);
        }
        let occ_mean = self.queue_occ.finish(end);
        let rl_rate_mean = self.rl_rate.finish(end);
        let rl_occ_mean = self.rl_occ.finish(end);
        let rl_target_mean = self.rl_target.finish(end);
        let tcp_cwnd_mean = self.tcp_cwnd.finish(end);
        let series = Series {
            bin: sc.bin,
            n_bins: self.flow_tx.n_bins,
            flow_tx_bytes: std::mem::take(&mut self.flow_tx.data),
            flow_rx_bytes: std::mem::take(&mut self.flow_rx.data),
            queue_tx_bytes: std::mem::take(&mut self.queue_tx.data),
            queue_drops: std::mem::take(&mut self.queue_drops.data),
            queue_xoff: std::mem::take(&mut self.queue_xoff.data),
            queue_occ_mean: occ_mean,
            queue_occ_max: std::mem::take(&mut self.queue_occ.max),
            flow_rl_rate_mean: rl_rate_mean,
            flow_rl_occ_mean: rl_occ_mean,
            flow_rl_occ_max: std::mem::take(&mut self.rl_occ.max),
            flow_rl_target_mean: rl_target_mean,
            flow_cwnd_mean: tcp_cwnd_mean,
            flow_retransmissions: std::mem::take(&mut self.tcp_retx.data),
            flow_timeouts: std::mem::take(&mut self.tcp_timeouts.data),
        };
        let watchdog = self
            .watchdog_spec
            .take()
            .map(|spec| (spec, std::mem::take(&mut self.watchdog)));
        let (stop, stability) = (self.stop.take(), self.stability.take());
        let flows = std::mem::take(&mut self.flows);
        let queues = std::mem::take(&mut self.queues);
        let (seed, n_events, frame_hops) = (self.seed, self.n_events, self.frame_hops);
        let fingerprint = self.fingerprint;
        // The engine's state goes before the result tables are built, so a
        // run's peak memory is the larger of the two, not their sum.
        drop(self);
        Ok(RunResult::assemble(
            sc,
            seed,
            wall,
            n_events,
            frame_hops,
            fingerprint,
            watchdog,
            stop,
            flows,
            queues,
            series,
            stability,
        ))
    }
}

/// Build and run a scenario.
pub fn run(sc: &Scenario, opts: &RunOptions) -> Result<RunResult, RunError> {
    let estimate = budget::memory_estimate(sc);
    if let Some(available) = budget::available_memory() {
        if estimate > available {
            return Err(RunError::TooLarge {
                estimate,
                available,
                flows: sc.sources.iter().map(|s| s.dsts.len() as u64).sum(),
                ports: 2 * sc.links.len() as u64,
                bins: sc.duration.0.div_ceil(sc.bin.0.max(1)),
            });
        }
    }
    let seed = opts.seed.unwrap_or(sc.seed);
    Simulator::new(sc, seed).run(sc, opts)
}

#[cfg(test)]
mod tests {
    //! The reaction point inside a running network: notifications are
    //! injected as events so their times and contents are exact.
    use super::*;
    use crate::scenario::{load, Format};

    /// H1 -- SW -- H2 at 10 Gb/s; H1 sends 1500 B frames at 90% of the line
    /// rate on the slot grid; the congestion point never samples on its own.
    fn sim(bcn_extra: &str) -> Simulator {
        sim_with("", bcn_extra)
    }

    /// The same, with extra keys for H2.
    fn sim_with(h2_extra: &str, bcn_extra: &str) -> Simulator {
        let text = format!(
            r#"
duration = "10ms"
[defaults.link]
rate = "10Gbps"
delay = "0.5us"
[[switches]]
name = "SW"
latency = "1us"
[[hosts]]
name = "H1"
response_time = "2us"
[[hosts]]
name = "H2"
{h2_extra}
[[links]]
between = ["H1", "SW"]
[[links]]
between = ["SW", "H2"]
[[sources]]
host = "H1"
to = "H2"
load = 0.9
slot_offset = "0ns"
[bcn]
sample_interval = "1000MB"
{bcn_extra}
"#
        );
        let sc = load(&text, "rp.toml", Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"));
        let mut s = Simulator::new(&sc, 1);
        s.start_sources();
        s
    }

    /// A notification handed to the switch at `t0`, addressed to H2 whose
    /// link drains at 1 Gb/s behind about 1 MB of queued data: the time at
    /// which it takes effect (the limiter of flow 0 counts it).
    fn notification_delay(expedite: bool) -> Time {
        let mut s = sim_with(
            r#"service = { rate = "1Gbps" }"#,
            &format!("expedite = {expedite}"),
        );
        let t0 = Time::from_ms(1);
        s.run_until(t0, None).unwrap();
        assert!(s.ports[2].occupancy > 900_000, "{}", s.ports[2].occupancy);
        let Role::Host(h2) = &s.roles[s.ports[3].node as usize] else {
            unreachable!()
        };
        let frame = Frame {
            created: t0,
            flow: 0,
            size: 64,
            dst_host: h2.host_number,
            in_port: 1,
            cpid: 2,
            aux: -100i32 as u32,
            kind: FrameKind::Bcn,
            qfb: 0,
        };
        let slot = s.parked.insert(frame) as u32;
        s.events.schedule(t0, Event::Inject { port: 1, slot });
        let mut t = t0;
        while s.limiters[0].messages == 0 {
            t = t + Time::from_us(1);
            s.run_until(t, None).unwrap();
        }
        t - t0
    }

    #[test]
    fn expedited_frames_overtake_queued_data() {
        // Behind the frame on the wire (at most 12 us at 1 Gb/s), then its
        // own 0.512 us and 0.5 us of link: effect within 14 us.
        let fast = notification_delay(true);
        assert!(fast <= Time::from_us(14), "{fast}");
        // Without the expedited class it waits its turn behind ~1 MB: > 7 ms.
        let slow = notification_delay(false);
        assert!(slow > Time::from_ms(7), "{slow}");
    }

    fn notify(s: &mut Simulator, at: Time, kind: FrameKind, fb: i16, cpid: u32) {
        let frame = Frame {
            created: at,
            flow: 0,
            size: 64,
            dst_host: 0,
            in_port: 0,
            cpid,
            aux: fb as i32 as u32,
            kind,
            qfb: 0,
        };
        s.schedule_notify(at, frame);
    }

    const CP: u32 = 2; // SW's port toward H2

    #[test]
    fn a_known_message_sequence_gives_the_hand_computed_rates() {
        let mut s = sim("");
        let t0 = Time::from_us(100);
        notify(&mut s, t0, FrameKind::Bcn, -1875, CP);
        notify(&mut s, t0 + Time::from_us(10), FrameKind::Bcn, -250, CP);
        notify(&mut s, t0 + Time::from_us(20), FrameKind::Bcn, 175, CP);
        // Positive feedback from another congestion point is ignored.
        notify(&mut s, t0 + Time::from_us(30), FrameKind::Bcn, 1875, CP + 1);
        s.run_until(t0 + Time::from_us(40), None).unwrap();
        let rl = &s.limiters[0];
        assert!(rl.active);
        assert_eq!(rl.cpid, CP);
        assert_eq!(rl.messages, 3);
        let expected = 10e9 * (1.0 - 2.6e-4 * 1875.0) * (1.0 - 2.6e-4 * 250.0) + 0.53 * 175.0 * 1e6;
        assert!(
            (rl.rate - expected).abs() < 1e-3,
            "{} vs {expected}",
            rl.rate
        );
        assert_eq!(s.flows[0].rl_installs, 1);
    }

    #[test]
    fn frames_leave_the_limiter_tagged_and_spaced_at_its_rate() {
        let mut s = sim("");
        let t0 = Time::from_us(100);
        notify(&mut s, t0, FrameKind::Bcn, -1875, CP); // 5.125 Gb/s
        s.run_until(Time::from_ms(1), None).unwrap();
        let before = s.flows[0].volume.delivered_bytes;
        s.run_until(Time::from_ms(9), None).unwrap();
        let after = s.flows[0].volume.delivered_bytes;
        // 8 ms at 5.125 Gb/s: 5,125,000 B, within one frame.
        let sent = (after - before) as i64;
        assert!((sent - 5_125_000).abs() <= 1500, "{sent}");
        // The source (9 Gb/s offered) now waits on a full limiter queue: no drops.
        assert_eq!(s.limiters[0].bytes, 150_000 / 1500 * 1500);
        assert_eq!(s.flows[0].volume.dropped_frames, 0);
        // Frames in flight to H2 carry the congestion point's id.
        let tagged = s.ports[CP as usize].queue.iter().all(|f| f.cpid == CP);
        assert!(tagged);
    }

    #[test]
    fn drift_adds_rd_every_td_from_installation_and_releases_at_line_rate() {
        let mut s = sim(r#"drift = { rate = "1Gbps", interval = "100us" }"#);
        let t0 = Time::from_us(100);
        notify(&mut s, t0, FrameKind::Bcn, -1875, CP); // 5.125 Gb/s
        s.run_until(t0 + Time::from_us(300), None).unwrap();
        // Ticks at t0 + 100 and t0 + 200 us; the one at t0 + 300 us is not yet handled.
        assert!(
            (s.limiters[0].rate - 7.125e9).abs() < 1e-3,
            "{}",
            s.limiters[0].rate
        );
        s.run_until(t0 + Time::from_us(300) + Time(1), None)
            .unwrap();
        assert!((s.limiters[0].rate - 8.125e9).abs() < 1e-3);
        // Two more ticks reach the line rate (capped). The limiter stays
        // until the backlog the source built up has drained (at 10 - 9 Gb/s
        // net), then is released and frames go out untagged.
        s.run_until(t0 + Time::from_us(600), None).unwrap();
        assert_eq!(s.limiters[0].rate, 10e9);
        assert!(s.limiters[0].active && !s.limiters[0].queue.is_empty());
        s.run_until(t0 + Time::from_ms(3), None).unwrap();
        assert!(!s.limiters[0].active);
        assert_eq!(s.limiters[0].cpid, NO_CP);
        s.run_until(t0 + Time::from_ms(3) + Time::from_us(10), None)
            .unwrap();
        assert!(s.ports[CP as usize].queue.iter().all(|f| f.cpid == NO_CP));
    }

    #[test]
    fn bcn00_stops_for_at_most_tmax_then_restarts_at_the_restart_rate() {
        let mut s = sim(
            r#"stop = { threshold = "100KB", tmax = "100us", restart_rate = "1Gbps" }
min_rate = "1Gbps""#,
        );
        let t0 = Time::from_us(100);
        notify(&mut s, t0, FrameKind::BcnStop, 0, CP);
        s.run_until(t0 + Time(1), None).unwrap();
        let rl = &s.limiters[0];
        assert_eq!(rl.rate, 1e9);
        assert_eq!(rl.cpid, CP);
        let resume = rl.next_allowed;
        assert!(
            resume >= t0 && resume <= t0 + Time::from_us(100),
            "{resume}"
        );
        // Nothing leaves the limiter before `resume`, then one frame per 12 us.
        let queued_at_stop = rl.queue.len();
        s.run_until(resume, None).unwrap();
        assert!(s.limiters[0].queue.len() >= queued_at_stop);
        let egress_before = s.queues[0].tx_bytes;
        s.run_until(resume + Time::from_us(120), None).unwrap();
        let sent = s.queues[0].tx_bytes - egress_before;
        // 120 us at 1 Gb/s is 10 frames (11 if the first leaves at `resume`).
        assert!((15_000..=16_500).contains(&sent), "{sent}");
    }

    /// H1 -- SW -- H2, H2 draining at 1 Gb/s, H1 offering 9 Gb/s, run for
    /// 5 ms with `fault` injected.
    fn faulty(
        switch_extra: &str,
        extra: &str,
        fault: invariants::Fault,
        no_checks: bool,
    ) -> Result<RunResult, RunError> {
        let text = format!(
            r#"
duration = "5ms"
[defaults.link]
rate = "10Gbps"
delay = "0.5us"
[[switches]]
name = "SW"
latency = "1us"
buffer = "150KB"
{switch_extra}
[[hosts]]
name = "H1"
[[hosts]]
name = "H2"
service = {{ rate = "1Gbps" }}
[[links]]
between = ["H1", "SW"]
[[links]]
between = ["SW", "H2"]
[[sources]]
host = "H1"
to = "H2"
load = 0.9
{extra}
"#
        );
        let sc = load(&text, "fault.toml", Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"));
        let mut s = Simulator::new(&sc, 1);
        s.fault = fault;
        let opts = RunOptions {
            no_checks,
            ..RunOptions::default()
        };
        s.run(&sc, &opts)
    }

    fn violation(switch_extra: &str, extra: &str, fault: invariants::Fault) -> String {
        match faulty(switch_extra, extra, fault, false) {
            Err(RunError::Invariant(msg)) => msg,
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("{fault:?} went unnoticed"),
        }
    }

    const PAUSE: &str = r#"pause = { mode = "global", xoff = "100KB", xon = "80KB" }"#;
    const BCN: &str = "[bcn]";
    use invariants::Fault;

    #[test]
    fn a_clean_run_passes_every_check() {
        for (sw, extra) in [("", ""), (PAUSE, ""), ("", BCN)] {
            faulty(sw, extra, Fault::None, false).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn each_broken_invariant_stops_the_run_and_is_named() {
        let cases = [
            (
                "",
                "",
                Fault::LoseOccupancy(2),
                "no negative occupancy",
                "port SW->H2",
            ),
            (
                "",
                "",
                Fault::IgnoreBuffer(2),
                "no over-capacity occupancy",
                "port SW->H2",
            ),
            (
                PAUSE,
                "",
                Fault::IgnorePause,
                "paused ports send nothing",
                "port H1->SW",
            ),
            (
                "",
                "",
                Fault::DeliverTwice,
                "frames of a UDP flow arrive once and in order",
                "node H2",
            ),
            (
                r#"buffer_model = "unlimited""#,
                "",
                Fault::ExtraByte(2),
                "conservation of bytes per queue",
                "port SW->H2",
            ),
            (
                "",
                r#"[defaults.source]
transport = "tcp""#,
                Fault::TcpDeliverTwice,
                "TCP delivers every byte once",
                "node H2",
            ),
            (
                "",
                BCN,
                Fault::RateAboveLine,
                "rate limiters within [min rate, line rate]",
                "node H1",
            ),
            (
                "",
                "",
                Fault::DoubleDrop,
                "conservation of bytes and frames per flow",
                "node H1",
            ),
        ];
        for (sw, extra, fault, invariant, place) in cases {
            let msg = violation(sw, extra, fault);
            assert!(
                msg.starts_with(&format!("invariant violated: {invariant} (at ")),
                "{fault:?}: {msg}"
            );
            assert!(
                msg.contains(place) && msg.contains("seed 1"),
                "{fault:?}: {msg}"
            );
        }
    }

    #[test]
    fn checks_can_be_turned_off() {
        assert!(faulty("", "", Fault::DeliverTwice, true).is_ok());
    }
}
