//! The simulator: the network built from a `Scenario`, the event loop and
//! the handlers that move frames.
//!
//! Per frame and hop there are two events: `TxDone` when the last bit leaves
//! a port (the buffer is freed and the frame is handed to the link) and
//! `Arrive` after the propagation delay plus the receiving switch's latency
//! (admission into the next output queue, or delivery at a host).

use crate::engine::rng::{component_key, stream};
use crate::engine::{EventClass, EventQueue};
use crate::flowctl::pause::{pause_duration, PauseEffect};
use crate::metrics::series::{BinnedLevel, BinnedSum};
use crate::net::frame::{Frame, FrameKind, PAUSE_FRAME_BYTES, XOFF_QUANTA};
use crate::net::port::{Port, TxState};
use crate::net::routing::{adjacency, Routes, NO_ROUTE};
use crate::results::{FlowCounters, QueueCounters, RunResult, Series};
use crate::scenario::schema::{PauseMode, SourceKind};
use crate::scenario::spec::{BufferModel, NodeKind, PauseSpec, Scenario};
use crate::traffic::source::{Source, SourceParams};
use crate::units::Time;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

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
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("run cancelled at {0} of simulated time")]
    Cancelled(Time),
}

#[derive(Clone, Copy, Debug)]
enum Event {
    TxDone { port: u32 },
    Arrive { port: u32, frame: Frame },
    PauseRx { port: u32, quanta: u16 },
    PauseExpire { port: u32, generation: u32 },
    PauseRefresh { port: u32, generation: u32 },
    SourceFire { source: u32 },
}

impl EventClass for Event {
    /// On ties: departures free space first, then PAUSE takes effect, then
    /// arrivals are admitted, then sources produce.
    fn class(&self) -> u8 {
        match self {
            Event::TxDone { .. } => 0,
            Event::PauseRx { .. } | Event::PauseExpire { .. } | Event::PauseRefresh { .. } => 1,
            Event::Arrive { .. } => 2,
            Event::SourceFire { .. } => 3,
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
    /// Sources waiting for egress space, in the order they blocked.
    waiting: VecDeque<u32>,
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
    node_ports: Vec<Vec<u32>>,
    ports: Vec<Port>,
    /// Link delay plus the receiving node's latency, per port.
    to_peer: Vec<Time>,
    /// Link delay plus the receiving node's PAUSE response time, per port.
    pause_to_peer: Vec<Time>,
    routes: Routes,
    sources: Vec<Source>,
    flows: Vec<FlowCounters>,
    queues: Vec<QueueCounters>,
    flow_tx: BinnedSum,
    flow_rx: BinnedSum,
    queue_tx: BinnedSum,
    queue_drops: BinnedSum,
    queue_occ: BinnedLevel,
    n_events: u64,
    frame_hops: u64,
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
                    })
                }
            });
        }
        let mut to_peer = Vec::with_capacity(ports.len());
        let mut pause_to_peer = Vec::with_capacity(ports.len());
        for p in 0..ports.len() {
            let peer_node = &sc.nodes[ports[ports[p].peer as usize].node as usize];
            let latency = match &peer_node.kind {
                NodeKind::Switch(s) => s.latency,
                NodeKind::Host(_) => Time::ZERO,
            };
            to_peer.push(ports[p].delay + latency);
            pause_to_peer.push(ports[p].delay + peer_node.response_time());
            if let NodeKind::Host(h) = &peer_node.kind {
                ports[p].service = h.service;
            }
        }
        let flow_specs = sc.flows();
        let mut sources = Vec::with_capacity(sc.sources.len());
        for (si, s) in sc.sources.iter().enumerate() {
            let Role::Host(h) = &roles[s.host] else {
                unreachable!("validated: sources sit on hosts")
            };
            let unit_bytes = if s.kind == SourceKind::Transactions {
                s.transaction
            } else {
                s.frame as u64
            };
            let flows = flow_specs
                .iter()
                .enumerate()
                .filter(|(_, f)| f.source == si)
                .map(|(fi, f)| {
                    (
                        fi as u32,
                        routes.host_number(f.dst).expect("destinations are hosts"),
                    )
                })
                .collect();
            let slot = ports[h.port as usize].rate.tx_time(unit_bytes);
            sources.push(Source::new(SourceParams {
                host_node: s.host as u32,
                host_port: h.port,
                rng: stream(seed, component_key("source", &s.name)),
                load: s.load,
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
        Simulator {
            now: Time::ZERO,
            end: sc.duration,
            seed,
            events: EventQueue::with_capacity(4096),
            roles,
            node_ports: adj
                .iter()
                .map(|ps| ps.iter().map(|&(p, _)| p).collect())
                .collect(),
            ports,
            to_peer,
            pause_to_peer,
            routes,
            sources,
            flows: vec![FlowCounters::default(); n_flows],
            queues: vec![QueueCounters::default(); n_ports],
            flow_tx: BinnedSum::new(n_flows, n_bins, sc.bin),
            flow_rx: BinnedSum::new(n_flows, n_bins, sc.bin),
            queue_tx: BinnedSum::new(n_ports, n_bins, sc.bin),
            queue_drops: BinnedSum::new(n_ports, n_bins, sc.bin),
            queue_occ: BinnedLevel::new(n_ports, n_bins, sc.bin),
            n_events: 0,
            frame_hops: 0,
        }
    }

    /// Run to the scenario's end time.
    pub fn run(mut self, sc: &Scenario, opts: &RunOptions) -> Result<RunResult, RunError> {
        let started = std::time::Instant::now();
        if let Some(p) = &opts.progress {
            p.duration_ps.store(self.end.0, Ordering::Relaxed);
        }
        for s in 0..self.sources.len() {
            if let Some(t) = self.sources[s].next_time(Time::ZERO) {
                self.events
                    .schedule(t, Event::SourceFire { source: s as u32 });
            }
        }
        while let Some(t) = self.events.peek_time() {
            if t >= self.end {
                break;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.n_events += 1;
            self.dispatch(ev);
            if self.n_events & 0xFFFF == 0 {
                if let Some(p) = &opts.progress {
                    p.sim_time_ps.store(t.0, Ordering::Relaxed);
                    p.events.store(self.n_events, Ordering::Relaxed);
                    if p.cancel.load(Ordering::Relaxed) {
                        return Err(RunError::Cancelled(t));
                    }
                }
            }
        }
        self.now = self.end;
        if let Some(p) = &opts.progress {
            p.sim_time_ps.store(self.end.0, Ordering::Relaxed);
            p.events.store(self.n_events, Ordering::Relaxed);
        }
        let wall = started.elapsed();
        Ok(self.finish(sc, wall))
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone { port } => self.tx_done(port),
            Event::Arrive { port, frame } => self.arrive(port, frame),
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
                if self.source_push(source) {
                    self.schedule_next_unit(source);
                }
            }
        }
    }

    // ---- transmitters -------------------------------------------------

    /// Start the next transmission on an idle port: PAUSE frames first (a
    /// paused transmitter may still send them), then data unless paused.
    #[inline]
    fn try_start(&mut self, port: u32) {
        let now = self.now;
        let p = &mut self.ports[port as usize];
        if p.tx != TxState::Idle {
            return;
        }
        if let Some(q) = p.ctrl_pending.take() {
            p.tx = TxState::Pause(q);
            let done = now + p.rate.tx_time(PAUSE_FRAME_BYTES);
            self.events.schedule(done, Event::TxDone { port });
            return;
        }
        if p.pause_in.paused {
            return;
        }
        if let Some(f) = p.queue.front() {
            p.tx = TxState::Data;
            let done = now + p.tx_time(now, f.size as u64);
            self.events.schedule(done, Event::TxDone { port });
        }
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
                p.occupancy -= frame.size as u64;
                let occ = p.occupancy;
                let node = p.node as usize;
                let peer = p.peer;
                self.queue_tx.add(pi, now, frame.size as u64);
                self.queues[pi].tx_bytes += frame.size as u64;
                self.queue_occ.set(pi, now, occ);
                self.events
                    .schedule(now + self.to_peer[pi], Event::Arrive { port: peer, frame });
                match &self.roles[node] {
                    Role::Switch(_) => {
                        let inp = frame.in_port as usize;
                        self.ports[inp].input_occupancy -= frame.size as u64;
                        self.output_pause_check(node, port);
                        self.input_pause_check(node, frame.in_port);
                    }
                    Role::Host(_) => self.host_dequeued(node),
                }
            }
            TxState::Idle => unreachable!("TxDone on an idle port"),
        }
        self.try_start(port);
    }

    // ---- switches and sinks -------------------------------------------

    fn arrive(&mut self, port: u32, mut frame: Frame) {
        let now = self.now;
        let node = self.ports[port as usize].node as usize;
        let sw = match &self.roles[node] {
            Role::Host(h) => {
                debug_assert_eq!(h.host_number, frame.dst_host, "hosts do not forward");
                self.flows[frame.flow as usize].deliver(now, frame.created, frame.size as u64);
                self.flow_rx
                    .add(frame.flow as usize, now, frame.size as u64);
                return;
            }
            Role::Switch(sw) => sw,
        };
        let out = self.routes.next_port(node, frame.dst_host);
        debug_assert_ne!(out, NO_ROUTE, "validated: every destination is reachable");
        let size = frame.size as u64;
        let o = &self.ports[out as usize];
        let fits = match sw.buffer {
            BufferModel::PerOutput { bytes } => o.occupancy + size <= bytes,
            BufferModel::PerInput { bytes } => {
                self.ports[port as usize].input_occupancy + size <= bytes
            }
            BufferModel::Unlimited => true,
        } && sw.queue_limit.is_none_or(|l| o.occupancy + size <= l);
        if !fits {
            let f = &mut self.flows[frame.flow as usize];
            f.volume.drop_frame(size);
            let q = &mut self.queues[out as usize];
            q.drops_frames += 1;
            q.drops_bytes += size;
            self.queue_drops.add(out as usize, now, 1);
            return;
        }
        frame.in_port = port;
        let o = &mut self.ports[out as usize];
        o.queue.push_back(frame);
        o.occupancy += size;
        let occ = o.occupancy;
        self.ports[port as usize].input_occupancy += size;
        let q = &mut self.queues[out as usize];
        q.max_occupancy = q.max_occupancy.max(occ);
        self.queue_occ.set(out as usize, now, occ);
        self.output_pause_check(node, out);
        self.input_pause_check(node, port);
        self.try_start(out);
    }

    // ---- PAUSE ----------------------------------------------------------

    /// Global mode: an output at XOFF holds every other port's upstream.
    fn output_pause_check(&mut self, node: usize, out: u32) {
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

    /// Per-input mode: an input's partition at XOFF holds that input's upstream.
    fn input_pause_check(&mut self, node: usize, inp: u32) {
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
            PauseEffect::HoldUntil(t, generation) => self
                .events
                .schedule(t, Event::PauseExpire { port, generation }),
            PauseEffect::Resume => self.try_start(port),
        }
    }

    // ---- hosts and sources ----------------------------------------------

    /// Hand the source's pending unit to its host's egress queue. False if
    /// the queue is full and the source now waits.
    fn source_push(&mut self, s: u32) -> bool {
        let now = self.now;
        let src = &self.sources[s as usize];
        let node = src.host_node as usize;
        let port = src.host_port;
        let Role::Host(h) = &mut self.roles[node] else {
            unreachable!("sources sit on hosts")
        };
        while let Some((flow, dst_host, size)) = self.sources[s as usize].peek_frame() {
            let p = &mut self.ports[port as usize];
            let room = !h.stopped && h.egress.is_none_or(|cap| p.occupancy + size as u64 <= cap);
            if !room {
                self.sources[s as usize].blocked = true;
                h.waiting.push_back(s);
                // Frames handed over before the stop may sit on an idle link.
                self.try_start(port);
                return false;
            }
            p.queue.push_back(Frame {
                created: now,
                flow,
                size,
                dst_host,
                in_port: port,
                kind: FrameKind::Data,
            });
            p.occupancy += size as u64;
            if h.high.is_some_and(|hi| p.occupancy >= hi) {
                h.stopped = true;
            }
            let occ = p.occupancy;
            self.sources[s as usize].consume(size);
            let f = &mut self.flows[flow as usize];
            f.volume.offer(size as u64);
            self.flow_tx.add(flow as usize, now, size as u64);
            let q = &mut self.queues[port as usize];
            q.max_occupancy = q.max_occupancy.max(occ);
            self.queue_occ.set(port as usize, now, occ);
        }
        self.try_start(port);
        true
    }

    fn schedule_next_unit(&mut self, s: u32) {
        if let Some(t) = self.sources[s as usize].next_time(self.now) {
            self.events.schedule(t, Event::SourceFire { source: s });
        }
    }

    /// Space freed in a host's egress queue: let waiting sources continue.
    fn host_dequeued(&mut self, node: usize) {
        let Role::Host(h) = &mut self.roles[node] else {
            return;
        };
        if h.stopped && self.ports[h.port as usize].occupancy <= h.low {
            h.stopped = false;
        }
        while let Role::Host(h) = &mut self.roles[node] {
            let Some(s) = h.waiting.pop_front() else {
                break;
            };
            self.sources[s as usize].blocked = false;
            if self.source_push(s) {
                self.schedule_next_unit(s);
            } else {
                // Still no room: `source_push` queued it again at the back; restore its place.
                if let Role::Host(h) = &mut self.roles[node] {
                    let back = h.waiting.pop_back();
                    debug_assert_eq!(back, Some(s));
                    h.waiting.push_front(s);
                }
                break;
            }
        }
    }

    // ---- results ----------------------------------------------------------

    fn finish(mut self, sc: &Scenario, wall: std::time::Duration) -> RunResult {
        let end = self.end;
        // Frames still buffered or on their way at the end.
        for p in &self.ports {
            for f in &p.queue {
                self.flows[f.flow as usize].volume.in_flight(f.size as u64);
            }
        }
        for ev in self.events.iter() {
            if let Event::Arrive { frame, .. } = ev {
                self.flows[frame.flow as usize]
                    .volume
                    .in_flight(frame.size as u64);
            }
        }
        for (i, p) in self.ports.iter().enumerate() {
            let q = &mut self.queues[i];
            q.pause_frames_sent = p.pause_out.frames_sent;
            q.xoff_sent = p.pause_out.xoff_sent;
            q.paused_time = p.pause_in.paused_time(end);
        }
        let occ_mean = self.queue_occ.finish(end);
        let series = Series {
            bin: sc.bin,
            n_bins: self.flow_tx.n_bins,
            flow_tx_bytes: std::mem::take(&mut self.flow_tx.data),
            flow_rx_bytes: std::mem::take(&mut self.flow_rx.data),
            queue_tx_bytes: std::mem::take(&mut self.queue_tx.data),
            queue_drops: std::mem::take(&mut self.queue_drops.data),
            queue_occ_mean: occ_mean,
            queue_occ_max: std::mem::take(&mut self.queue_occ.max),
        };
        RunResult::assemble(
            sc,
            self.seed,
            wall,
            self.n_events,
            self.frame_hops,
            self.flows,
            self.queues,
            series,
        )
    }
}

/// Build and run a scenario.
pub fn run(sc: &Scenario, opts: &RunOptions) -> Result<RunResult, RunError> {
    let seed = opts.seed.unwrap_or(sc.seed);
    Simulator::new(sc, seed).run(sc, opts)
}
