//! Partition statistics (cargo feature `partition-stats`): what a run
//! would give a conservatively synchronised parallel engine.
//!
//! The nodes are split into partitions (`Partitioning`). The lookahead `L`
//! is the smallest delay with which an event at one partition can cause
//! one at another: over the ports whose peer is in another partition, the
//! least of `to_peer` (link delay plus the receiving switch's latency) and
//! `pause_to_peer` (link delay plus the receiver's PAUSE response time).
//! The run is cut into windows `[kL, (k+1)L)`; per window and partition the
//! recorder counts the events executed and the events caused by another
//! partition. Each event belongs to a node: a port's event to the port's
//! node, a source's to its host, a flow's to the host that handles that
//! kind (a connection's delayed ACK to the receiving host, every other
//! flow event to the sending host), a host's to the host.
//!
//! The cause of an event is the event whose handler scheduled it: the
//! queue records what each handler schedules (`RecordingQueue`), and an
//! event scheduled for another partition is a crossing, counted by kind
//! with the least delay seen, so that a crossing shorter than `L` (which a
//! conservative engine could not allow) shows in the report. A handler
//! that changes another partition's state without an event (a UDP frame
//! delivered at its last bit, `send_on_link`) is counted apart.
//!
//! The default build has none of this: the queue is the plain
//! `EventQueue` and the run loop has no extra step.

use super::event::Event;
use super::Simulator;
use crate::engine::EventQueue;
use crate::results::RunResult;
use crate::scenario::spec::Scenario;
use crate::units::Time;
use std::sync::{Arc, Mutex};

/// The event queue that can note what is scheduled while a handler runs.
pub(super) struct RecordingQueue {
    inner: EventQueue<Event>,
    recording: bool,
    recorded: Vec<(Time, Event)>,
}

impl RecordingQueue {
    pub(super) fn with_capacity(cap: usize) -> Self {
        RecordingQueue {
            inner: EventQueue::with_capacity(cap),
            recording: false,
            recorded: Vec::new(),
        }
    }

    pub(super) fn open_all_lanes(&mut self) {
        self.inner.open_all_lanes();
    }

    pub(super) fn offer_placement_by_delay(&mut self) {
        self.inner.offer_placement_by_delay();
    }

    pub(super) fn switch_placement(&mut self) -> bool {
        self.inner.switch_placement()
    }

    #[inline]
    pub(super) fn schedule(&mut self, time: Time, event: Event) {
        self.schedule_or(time, event, |_| {});
    }

    #[inline]
    pub(super) fn schedule_or(
        &mut self,
        time: Time,
        event: Event,
        on_heap: impl FnOnce(&mut Event),
    ) -> bool {
        let mut event = event;
        let laned = self.inner.schedule_or(time, event, |ev| {
            on_heap(ev);
            event = *ev;
        });
        if self.recording {
            self.recorded.push((time, event));
        }
        laned
    }

    #[inline]
    pub(super) fn schedule_after(&mut self, now: Time, delay: Time, event: Event) {
        self.inner.schedule_after(now, delay, event);
        if self.recording {
            self.recorded.push((now + delay, event));
        }
    }

    #[inline]
    pub(super) fn pop_before_in<const BY_DELAY: bool>(
        &mut self,
        end: Time,
    ) -> Option<(Time, Event)> {
        self.inner.pop_before_in::<BY_DELAY>(end)
    }

    pub(super) fn placed_by_delay(&self) -> bool {
        self.inner.placed_by_delay()
    }
}

pub use super::partition::{FatTreeRule, Partitioning};

/// Crossings of one event kind: how many, and the least delay from the
/// causing event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crossing {
    pub kind: &'static str,
    pub count: u64,
    pub min_delay: Time,
}

/// What a run with a recorder found.
#[derive(Debug, Clone)]
pub struct PartitionReport {
    pub rule: String,
    pub names: Vec<String>,
    /// The window length (lookahead).
    pub lookahead: Time,
    /// Windows up to the run's end (the scenario's duration, or where the
    /// run stopped or its flows finished).
    pub windows: usize,
    /// Events executed, per window and partition (`w * P + p`).
    pub events: Vec<u32>,
    /// Events another partition caused, the same way (counted when they
    /// are scheduled, before the scenario's end: in a run that stopped
    /// early, a few in its last window may not have run).
    pub crossed: Vec<u32>,
    /// Crossings by kind (every scheduled one, whether it ran before the
    /// end or not), in order of first appearance.
    pub crossings: Vec<Crossing>,
    /// Crossings from partition a to b (`a * P + b`), scheduled.
    pub pairs: Vec<u64>,
    /// Changes of another partition's state made without an event (UDP
    /// frames delivered at their last bit to a host of another partition).
    pub direct: u64,
    /// Crossings scheduled less than `lookahead` ahead.
    pub short: u64,
}

/// Statistics over a partition's windows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub total: u64,
    pub mean: f64,
    pub median: f64,
    pub p99: f64,
}

impl Spread {
    /// Over `v` (sorted here); quantiles by nearest rank.
    pub fn of(mut v: Vec<u32>) -> Spread {
        v.sort_unstable();
        let total: u64 = v.iter().map(|&x| x as u64).sum();
        let n = v.len();
        let rank = |q: f64| -> f64 {
            if n == 0 {
                return 0.0;
            }
            let r = ((q * n as f64).ceil() as usize).clamp(1, n);
            v[r - 1] as f64
        };
        Spread {
            total,
            mean: if n == 0 { 0.0 } else { total as f64 / n as f64 },
            median: rank(0.5),
            p99: rank(0.99),
        }
    }
}

impl PartitionReport {
    pub fn parts(&self) -> usize {
        self.names.len()
    }

    pub fn total_events(&self) -> u64 {
        self.events.iter().map(|&e| e as u64).sum()
    }

    pub fn total_crossed(&self) -> u64 {
        self.crossed.iter().map(|&e| e as u64).sum()
    }

    /// Events per window of partition `p`.
    pub fn partition_windows(&self, p: usize) -> Vec<u32> {
        let n = self.parts();
        (0..self.windows).map(|w| self.events[w * n + p]).collect()
    }

    /// The mean over windows with events of (the busiest partition's
    /// events / the mean over partitions).
    pub fn imbalance(&self) -> f64 {
        let n = self.parts();
        let (mut sum, mut count) = (0.0, 0usize);
        for w in self.events.chunks(n) {
            let total: u64 = w.iter().map(|&e| e as u64).sum();
            if total == 0 {
                continue;
            }
            let max = *w.iter().max().expect("partitions") as f64;
            sum += max / (total as f64 / n as f64);
            count += 1;
        }
        if count == 0 {
            1.0
        } else {
            sum / count as f64
        }
    }

    /// The thread of partition `p` with `threads` threads: round robin.
    pub fn thread_of(p: usize, threads: usize) -> usize {
        p % threads
    }

    /// The predicted speed-up on `threads` threads with a cost of `sync`
    /// events per window: all events over Σ_w (max over threads of the
    /// thread's events in w + sync). Partitions go to threads round robin.
    pub fn speedup(&self, threads: usize, sync: f64) -> f64 {
        let n = self.parts();
        let mut per_thread = vec![0u64; threads];
        let mut span = 0.0;
        for w in self.events.chunks(n) {
            per_thread.iter_mut().for_each(|x| *x = 0);
            for (p, &e) in w.iter().enumerate() {
                per_thread[Self::thread_of(p, threads)] += e as u64;
            }
            span += *per_thread.iter().max().expect("threads") as f64 + sync;
        }
        if span == 0.0 {
            return 1.0;
        }
        self.total_events() as f64 / span
    }
}

/// The recorder a run with partition statistics carries.
pub(super) struct Recorder {
    node_part: Vec<u32>,
    parts: usize,
    lookahead: u64,
    end: Time,
    report: PartitionReport,
    /// The partition of the event being handled (`NONE` outside).
    current: u32,
    now: Time,
    sink: Arc<Mutex<Option<PartitionReport>>>,
}

const NONE: u32 = u32::MAX;

fn kind_name(ev: &Event) -> &'static str {
    match ev {
        Event::TxDone { .. } => "TxDone",
        Event::Arrive { .. } => "Arrive",
        Event::Reply { .. } => "Reply",
        Event::Inject { .. } => "Inject",
        Event::PauseRx { .. } => "PauseRx",
        Event::PauseExpire { .. } => "PauseExpire",
        Event::PauseRefresh { .. } => "PauseRefresh",
        Event::SourceFire { .. } => "SourceFire",
        Event::Notify { .. } => "Notify",
        Event::RlRelease { .. } => "RlRelease",
        Event::CmTimer { .. } => "CmTimer",
        Event::EgressArrive { .. } => "EgressArrive",
        Event::ArbiterFree { .. } => "ArbiterFree",
        Event::ConnRto { .. } => "ConnRto",
        Event::ConnAck { .. } => "ConnAck",
        Event::FlowStart { .. } => "FlowStart",
        Event::PfcRx { .. } => "PfcRx",
        Event::PfcExpire { .. } => "PfcExpire",
        Event::PfcRefresh { .. } => "PfcRefresh",
    }
}

impl Simulator {
    /// The node whose handler runs `ev`.
    fn event_node(&self, ev: &Event) -> usize {
        let port_node = |port: u32| self.ports[port as usize].node as usize;
        match *ev {
            Event::TxDone { port }
            | Event::Arrive { port, .. }
            | Event::Reply { port, .. }
            | Event::Inject { port, .. }
            | Event::PauseRx { port, .. }
            | Event::PauseExpire { port, .. }
            | Event::PauseRefresh { port, .. }
            | Event::PfcRx { port, .. }
            | Event::PfcExpire { port, .. }
            | Event::PfcRefresh { port } => port_node(port),
            Event::SourceFire { source } => self.sources[source as usize].host_node as usize,
            Event::EgressArrive { node, .. }
            | Event::ArbiterFree { node }
            | Event::FlowStart { node } => node as usize,
            Event::ConnAck { flow } => self.conn_dst_node[flow as usize] as usize,
            Event::Notify { flow, .. }
            | Event::RlRelease { flow }
            | Event::CmTimer { flow, .. }
            | Event::ConnRto { flow } => self.flow_src_node[flow as usize] as usize,
        }
    }

    /// Record partition statistics for `part`; the report goes to `sink`
    /// when the run finishes. `window` replaces the computed lookahead.
    pub(super) fn record_partitions(
        &mut self,
        part: &Partitioning,
        window: Option<Time>,
        sink: Arc<Mutex<Option<PartitionReport>>>,
    ) -> Result<(), String> {
        if part.node_part.len() != self.roles.len() {
            return Err(format!(
                "the partitioning has {} nodes, the scenario {}",
                part.node_part.len(),
                self.roles.len()
            ));
        }
        let parts = part.len();
        let mut lookahead = self.end.0.max(1);
        for (p, port) in self.ports.iter().enumerate() {
            let peer = &self.ports[port.peer as usize];
            if part.node_part[port.node as usize] != part.node_part[peer.node as usize] {
                lookahead = lookahead
                    .min(self.to_peer[p].0)
                    .min(self.pause_to_peer[p].0);
            }
        }
        if let Some(w) = window {
            lookahead = w.0;
        }
        if lookahead == 0 {
            return Err("a link between partitions has no delay: no lookahead".into());
        }
        let windows = self.end.0.div_ceil(lookahead) as usize;
        self.pstats = Some(Box::new(Recorder {
            node_part: part.node_part.clone(),
            parts,
            lookahead,
            end: self.end,
            report: PartitionReport {
                rule: part.rule.clone(),
                names: part.names.clone(),
                lookahead: Time(lookahead),
                windows,
                events: vec![0; windows * parts],
                crossed: vec![0; windows * parts],
                crossings: Vec::new(),
                pairs: vec![0; parts * parts],
                direct: 0,
                short: 0,
            },
            current: NONE,
            now: Time::ZERO,
            sink,
        }));
        self.events.recording = true;
        Ok(())
    }

    /// The loop is about to start: what was scheduled before has no cause.
    pub(super) fn pstats_start(&mut self) {
        self.events.recorded.clear();
    }

    /// Before handling `ev` at `t`: count it.
    #[inline]
    pub(super) fn pstats_before(&mut self, t: Time, ev: &Event) {
        if self.pstats.is_none() {
            return;
        }
        let node = self.event_node(ev);
        let r = self.pstats.as_deref_mut().expect("checked");
        let p = r.node_part[node];
        let w = (t.0 / r.lookahead) as usize;
        r.report.events[w * r.parts + p as usize] += 1;
        r.current = p;
        r.now = t;
    }

    /// After the handler: the events it scheduled for other partitions.
    #[inline]
    pub(super) fn pstats_after(&mut self) {
        let Some(mut r) = self.pstats.take() else {
            return;
        };
        let mut recorded = std::mem::take(&mut self.events.recorded);
        for (at, ev) in recorded.drain(..) {
            let to = r.node_part[self.event_node(&ev)];
            if to == r.current {
                continue;
            }
            let delay = Time(at.0 - r.now.0);
            let kind = kind_name(&ev);
            let rep = &mut r.report;
            match rep.crossings.iter_mut().find(|c| c.kind == kind) {
                Some(c) => {
                    c.count += 1;
                    c.min_delay = c.min_delay.min(delay);
                }
                None => rep.crossings.push(Crossing {
                    kind,
                    count: 1,
                    min_delay: delay,
                }),
            }
            if delay.0 < r.lookahead {
                rep.short += 1;
            }
            rep.pairs[r.current as usize * r.parts + to as usize] += 1;
            if at < r.end {
                let w = (at.0 / r.lookahead) as usize;
                rep.crossed[w * r.parts + to as usize] += 1;
            }
        }
        self.events.recorded = recorded;
        self.pstats = Some(r);
    }

    /// The handler changes state at `node` directly (a UDP frame delivered
    /// at its last bit).
    #[inline]
    pub(super) fn pstats_direct(&mut self, node: usize) {
        if let Some(r) = self.pstats.as_deref_mut() {
            if r.current != NONE && r.node_part[node] != r.current {
                r.report.direct += 1;
            }
        }
    }

    /// The run is over (at `self.end`, which is earlier than the
    /// scenario's when it stopped or its flows finished): keep the windows
    /// up to the end and hand the report to its sink.
    pub(super) fn pstats_finish(&mut self) {
        if let Some(mut r) = self.pstats.take() {
            self.events.recording = false;
            let rep = &mut r.report;
            rep.windows = rep.windows.min((self.end.0 / r.lookahead) as usize + 1);
            rep.events.truncate(rep.windows * r.parts);
            rep.crossed.truncate(rep.windows * r.parts);
            *r.sink.lock().expect("not poisoned") = Some(r.report);
        }
    }
}

/// Build and run a scenario, recording partition statistics for `part`
/// (windows of `window`, else the lookahead the partitioning allows).
pub fn run_partitioned(
    sc: &Scenario,
    opts: &super::RunOptions,
    part: &Partitioning,
    window: Option<Time>,
) -> Result<(RunResult, PartitionReport), String> {
    let seed = opts.seed.unwrap_or(sc.seed);
    let mut sim = Simulator::new(sc, seed);
    let sink = Arc::new(Mutex::new(None));
    sim.record_partitions(part, window, sink.clone())?;
    let result = sim.run(sc, opts).map_err(|e| e.to_string())?;
    let report = sink
        .lock()
        .expect("not poisoned")
        .take()
        .expect("the run recorded");
    Ok((result, report))
}
