//! The simulator: the network built from a `Scenario`, the event loop and
//! the handlers that move frames.
//!
//! Per frame and hop there are two events: `TxDone` when the last bit leaves
//! a port (the buffer is freed and the frame is handed to the link) and
//! `Arrive` after the propagation delay plus the receiving switch's latency
//! (admission into the next output queue, or delivery at a host). A UDP
//! frame's last hop has no `Arrive`: see `send_on_link`.
//!
//! This file holds the `Simulator`'s state, the run loop and the dispatch
//! of events; the handlers live beside it by concern: `event` (the event
//! enum and the fingerprint), `setup` (building from a scenario),
//! `transmit` (ports and links), `switch` (reception and admission),
//! `adapter` (hosts: sources, rate limiters, egress), `cm` (the calls
//! into the congestion-management scheme), `pause` (PAUSE and the watchdog),
//! `tcp`, `invariants` and `finish` (result assembly).

use crate::cm::Scheme;
use crate::flowctl::watchdog::{Watchdog, WatchdogSpec};
use crate::metrics::series::{BinnedLevel, BinnedSum, PortSums, RowsOnDemand};
use crate::net::ecn::PortMarking;
use crate::net::frame::Frame;
use crate::net::mmu::IngressCells;
use crate::net::port::Port;
use crate::net::rate_limiter::RateLimiter;
use crate::net::routing::Routes;
use crate::results::{
    resident_memory, FlowCounters, QueueCounters, RunCost, RunResult, StabilityWatch,
};
use crate::scenario::budget;
use crate::scenario::spec::Scenario;
use crate::traffic::source::Source;

use crate::transport::{ConnParams, ReceiverDone, SenderDone};
use crate::units::Time;
use fixedbitset::FixedBitSet;
use slab::Slab;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

mod adapter;
mod cm;
mod conn;
mod event;
mod finish;
mod invariants;
mod parallel;
pub mod partition;
#[cfg(feature = "partition-stats")]
pub mod partstats;
mod pause;
mod pfc;
mod setup;
mod switch;
#[cfg(test)]
mod tests;
mod transmit;
mod workload;

use adapter::{HostState, Waiter};
use event::{fingerprint_step, Event};
use switch::SwitchState;

/// The event queue; with partition statistics, one that can note what
/// each handler schedules (`partstats`).
#[cfg(not(feature = "partition-stats"))]
type Events = crate::engine::EventQueue<Event>;
#[cfg(feature = "partition-stats")]
type Events = partstats::RecordingQueue;

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
    /// Split the run over this many threads (docs/parallel.md), in place
    /// of the scenario's `threads`; 0: the scenario's. The results are the
    /// same however many; the summary says how many were used and why
    /// fewer (`threads_used`, `threads_note`).
    pub threads: usize,
    /// Asked between events, about every 65,536 of them, whether to stop:
    /// `true` cancels the run (`RunError::Cancelled`). This is how a caller
    /// that runs the engine on its own thread still hears of a signal.
    pub poll: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
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

/// A node's state. Its tag and the start of its state share the first
/// cache line of the entry (`SwitchState`'s admission fields).
#[repr(C, u8, align(64))]
enum Role {
    Switch(SwitchState),
    Host(HostState),
}

const _: () = assert!(std::mem::align_of::<Role>() == 64);

pub struct Simulator {
    now: Time,
    end: Time,
    seed: u64,
    events: Events,
    roles: Vec<Role>,
    /// Some switch sends PAUSE in global mode (it watches its outputs) /
    /// in per-input mode (its inputs): without, the per-frame PAUSE checks
    /// of that kind are skipped.
    pause_outputs: bool,
    pause_inputs: bool,
    /// Some switch sends PFC: without, the per-frame PFC checks are skipped.
    any_pfc: bool,
    /// Some switch marks ECN as frames join a queue / as they leave.
    ecn_at_enqueue: bool,
    ecn_at_dequeue: bool,
    /// The distinct ECN markings of the run's ports, which name theirs by
    /// index (`Port::marking`).
    ecn_marks: Vec<PortMarking>,
    /// Per flow: its data frames are ECN-capable.
    flow_ect: Vec<bool>,
    /// Traffic classes on every port (1 without `[priorities]`).
    n_classes: u8,
    /// Per flow: the class of its data frames.
    flow_class: Vec<u8>,
    /// The class of TCP ACKs and of notifications, if not the flow's.
    ack_class: Option<u8>,
    notification_class: Option<u8>,
    /// The PFC event table, up to `pfc_events_limit` rows.
    pfc_events: Vec<crate::results::PfcRecord>,
    pfc_events_limit: usize,
    pfc_events_omitted: u64,
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
    /// Frames on the links whose `Arrive` event the arrivals' lane took,
    /// in that lane's order (`ON_LANE`): most of them, as a frame arrives a
    /// fixed delay after it left. Written and read in order, its lines
    /// stream through the caches.
    lane_frames: crate::engine::Fifo<Frame>,
    /// The other frames on the links, each under the slot its `Arrive`
    /// event names.
    on_links: Slab<Frame>,
    sources: Vec<Source>,
    flows: Vec<FlowCounters>,
    queues: Vec<QueueCounters>,
    flow_tx: BinnedSum,
    flow_rx: BinnedSum,
    queue_tx: PortSums,
    queue_drops: PortSums,
    /// XOFF frames sent per port and bin.
    queue_xoff: PortSums,
    queue_occ: BinnedLevel,
    /// Per shared-buffer switch: shared pool and headroom in use.
    buffer_shared: BinnedLevel,
    buffer_headroom: BinnedLevel,
    /// With `[metrics] ingress_occupancy`: bytes held per switch ingress
    /// (port, class), and per port its first row (`NO_INGRESS_ROW` for
    /// ports without one); both empty otherwise.
    ingress_occ: BinnedLevel,
    ingress_row: Vec<u32>,
    /// The shared-buffer switches' ingress (port, class) counters, by the
    /// port's number (empty without shared buffers): a frame's admission
    /// and release within its queue's reserve read its cell alone.
    ingress_cells: IngressCells,
    /// Per node: its shared buffer's pool is calm (`Mmu::calm`), copied
    /// from the MMU wherever the pool's use changes (true for the others).
    pool_calm: Vec<bool>,
    n_events: u64,
    frame_hops: u64,
    /// Running hash of the event trace (time, kind, element).
    fingerprint: u64,
    watchdog_spec: Option<WatchdogSpec>,
    watchdog: Watchdog,
    /// Why and when the run stopped before its end, if it did.
    stop: Option<(Time, String)>,
    /// The run's window: the least delay with which an event at one switch
    /// can cause one at another (`to_peer` or `pause_to_peer` over the
    /// links between two switches), `None` without such links. A stop the
    /// run decides itself takes effect at the end of the window in which
    /// it is reached (`window_end`), so that a run split into partitions
    /// synchronised once per window stops at the same place.
    window: Option<Time>,
    /// The watchdog's long pauses whose cycle search is due at the end of
    /// their window, `watch_at` (`Time::MAX` with none): the search reads
    /// other switches' ports, which a partitioned run sees only at window
    /// ends.
    watch_pending: Vec<(u32, Time)>,
    watch_at: Time,
    /// Something the run loop must look at after this event: a violation,
    /// a stop, the last workload flow's finish or a cycle search due.
    /// (One flag tested per event instead of four.)
    attention: bool,
    /// Where the results end when the run stopped before `end`: the end of
    /// the stop's window (or the instant a wall-time limit was hit).
    halt: Option<Time>,
    /// Invariant checks on (`RunOptions::no_checks` turns them off), and
    /// the first violation found.
    checks: bool,
    violation: Option<invariants::Violation>,
    /// The lowest rate an installed limiter may have (the checks' bound).
    rate_floor: f64,
    /// Per flow: the number of the last UDP frame delivered (a frame's
    /// `aux`, its count of frames offered before it; the once-and-in-order
    /// check).
    last_seq: Vec<u32>,
    #[cfg(test)]
    fault: invariants::Fault,
    /// Tests: a complete flow keeps its reaction point (`rp_ended`).
    #[cfg(test)]
    rp_outlives_flow: bool,
    /// Tests: a workload flow's connection ends stay open after their
    /// part is over; `late_frames` counts what reached done ones.
    #[cfg(test)]
    keep_conn_ends: bool,
    #[cfg(test)]
    late_frames: u64,
    /// Tests: queues within their reserve that took or returned a frame
    /// while their switch's pool was not calm, and while it was.
    #[cfg(test)]
    calm_looks: [u64; 2],
    /// Limits of this run (from `RunOptions`).
    max_events: u64,
    max_wall: Option<(std::time::Instant, std::time::Duration)>,
    poll: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
    /// The congestion-management scheme and its state.
    scheme: Scheme,
    /// UDP frames are delivered at their last bit (see `send_on_link`):
    /// false when the scheme watches what reaches destinations.
    udp_at_last_bit: bool,
    /// The flows' tables outgrow a core's second-level cache (at least
    /// `PREFETCH_FLOWS` flows): a source asks for its next unit's flow
    /// record, and a transmission toward a host for its frame's, ahead of
    /// use (`engine::prefetch`). Smaller runs skip it: their tables stay
    /// cached and the hints would only cost.
    prefetch_flows: bool,
    /// By flow: the connection source that alone writes it, which may
    /// write ahead of its events (`Simulator::park_writer`); `NO_WRITER`
    /// for the others. Empty when no source qualifies.
    conn_writer: Vec<u32>,
    /// Per flow: its rate limiter (empty without a scheme or per-flow
    /// queues). A flow whose limiter is shared uses the row of `flow_rl`.
    limiters: Vec<RateLimiter>,
    /// By limiter row: installed (`RateLimiter::active`). Every frame a
    /// source sends asks; this answers from a few bits per flow, where the
    /// limiters of a large fabric's million flows would cost a miss.
    rl_active: FixedBitSet,
    /// Per flow: the row of its limiter (itself, or with QCN's
    /// per-destination limiters the first flow of its host to the same
    /// destination). Empty when every flow has its own.
    flow_rl: Vec<u32>,
    /// Per flow: host number and node of its source.
    flow_src_host: Vec<u32>,
    flow_src_node: Vec<u32>,
    /// Per node: switch latency (zero for hosts).
    switch_latency: Vec<Time>,
    /// A rate limiter's levels, with rows for the flows in `rl_rows`:
    /// its rate (bit/s; the line rate before it is installed and after it
    /// is removed) and its queue (bytes).
    rl_rate: BinnedLevel,
    rl_occ: BinnedLevel,
    /// Per source flow with rate limiters: its row of `rl_rate`, `rl_occ`
    /// and `rl_target`, made when its reaction point installs a limiter or
    /// the limiter first changes a level (`limiter_row`). At fabric scale
    /// few flows ever have a limiter (566 of a million on a k = 16 fat
    /// tree with QCN), and the others' rows would repeat their line rate.
    rl_rows: RowsOnDemand,
    stability: Option<StabilityWatch>,
    /// Per flow: host number of its destination.
    flow_dst_host: Vec<u32>,
    /// The reaction point's target rate TR, rows as `rl_rate` (QCN only).
    rl_target: Option<BinnedLevel>,
    /// Per flow: DCQCN's or DCTCP's α, in units of 2^-32 (empty without
    /// either).
    flow_alpha: BinnedLevel,
    /// Per flow, with TCP or RoCE flows (empty without): whether the flow
    /// has a connection, its parameters (payload per segment from the
    /// source's frame), sender, receiver, and pending timer events.
    flow_conn: Vec<bool>,
    /// The parameters are one of a few sets (one per transport and frame
    /// size), each flow naming its own: 4 bytes a flow instead of 120,
    /// and one small table for every segment's lookup
    /// (`Simulator::conn_params`).
    conn_param_sets: Vec<ConnParams>,
    conn_param_of: Vec<u32>,
    /// Per flow: its connection's sending and receiving ends here
    /// (`conn::End`), the open ones' state in `senders` and `receivers`,
    /// whose slots the ends of finished workload flows give back.
    conn_sending: Vec<conn::End<SenderDone>>,
    conn_receiving: Vec<conn::End<ReceiverDone>>,
    senders: Slab<conn::SendEnd>,
    receivers: Slab<conn::RecvEnd>,
    /// Per flow: the receiving host's node.
    conn_dst_node: Vec<u32>,
    tcp_cwnd: BinnedLevel,
    conn_retx: BinnedSum,
    conn_timeouts: BinnedSum,
    /// Per flow: its row in the flow series (see `workload.rs`); empty
    /// when every flow has its own.
    flow_row: Vec<u32>,
    /// The workloads' flows: sizes, starts, finishes.
    workload: workload::WorkloadFlows,
    /// The process's resident memory when the set-up began.
    rss_at_start: Option<u64>,
    /// In a split run: this partition and its outbox (`parallel`).
    part: Option<Box<partition::Part>>,
    /// Partition statistics, when recorded (`partstats`).
    #[cfg(feature = "partition-stats")]
    pstats: Option<Box<partstats::Recorder>>,
}

impl Simulator {
    /// Run to the scenario's end time.
    pub fn run(mut self, sc: &Scenario, opts: &RunOptions) -> Result<RunResult, RunError> {
        let started = std::time::Instant::now();
        if let Some(p) = &opts.progress {
            p.duration_ps.store(self.end.0, Ordering::Relaxed);
        }
        self.max_events = opts.max_events.unwrap_or(u64::MAX);
        self.checks = !opts.no_checks;
        self.max_wall = opts.max_wall.map(|d| (started, d));
        self.poll = opts.poll.clone();
        self.start_sources();
        self.start_workloads();
        self.run_until(self.end, opts.progress.as_deref())?;
        if let Some(v) = &self.violation {
            return Err(RunError::Invariant(v.describe(sc, self.seed)));
        }
        if let Some(t) = self.halt {
            // Results cover the simulated time up to the stop's window end.
            self.end = t;
        }
        self.now = self.end;
        if let Some(p) = &opts.progress {
            p.sim_time_ps.store(self.end.0, Ordering::Relaxed);
            p.events.store(self.n_events, Ordering::Relaxed);
        }
        let cost = RunCost {
            wall: started.elapsed(),
            rss_growth_bytes: resident_memory()
                .zip(self.rss_at_start)
                .map(|(now, start)| now.saturating_sub(start)),
        };
        #[cfg(feature = "partition-stats")]
        self.pstats_finish();
        self.settle();
        self.finish(sc, cost)
    }

    /// The end of the window that holds `t`: windows are `[kW, (k+1)W)`
    /// for the run's window `W`; without one (or with `W` = 0) the instant
    /// `t` is its own window.
    fn window_end(&self, t: Time) -> Time {
        match self.window {
            Some(w) if w.0 > 0 => Time((t.0 / w.0 + 1) * w.0),
            _ => Time(t.0 + 1),
        }
    }

    fn start_sources(&mut self) {
        for s in 0..self.sources.len() {
            if !self.owns(self.sources[s].host_node as usize) {
                continue;
            }
            if let Some(t) = self.sources[s].next_time(Time::ZERO) {
                self.events
                    .schedule(t, Event::SourceFire { source: s as u32 });
            }
        }
    }

    /// Handle every event before `end` (before the end of a stop's window
    /// if one is reached first), and the watchdog's cycle searches due by
    /// then.
    fn run_until(&mut self, end: Time, progress: Option<&Progress>) -> Result<(), RunError> {
        // One loop per placement: only runs that place completions by their
        // delay pop with a look at the fifth lane. A run may start placing
        // so on the way (`EventQueue::switch_placement`).
        while !self.events.placed_by_delay() {
            if !self.run_until_in::<false>(end, progress)? {
                return Ok(());
            }
        }
        self.run_until_in::<true>(end, progress).map(|_| ())
    }

    /// `run_until` with the event loop of a placement: `Ok(true)` when the
    /// queue switched to placement by delay on the way, and the rest is
    /// for the other loop.
    #[inline(never)]
    fn run_until_in<const BY_DELAY: bool>(
        &mut self,
        end: Time,
        progress: Option<&Progress>,
    ) -> Result<bool, RunError> {
        #[cfg(feature = "partition-stats")]
        self.pstats_start();
        // Lowered to the end of the window once a stop is reached.
        let mut bound = self.halt.map_or(end, |h| h.min(end));
        // Lowered further to the next window end with cycle searches due.
        let mut limit = bound.min(self.watch_at);
        // The event count at which the loop next looks at its limits and
        // polls (`next_look`): one comparison per event for both.
        let mut look_at = self.next_look();
        loop {
            while let Some((t, ev)) = self.events.pop_before_in::<BY_DELAY>(limit) {
                self.now = t;
                self.n_events += 1;
                let (kind, element) = ev.place();
                self.fingerprint = fingerprint_step(self.fingerprint, t, kind, element);
                #[cfg(feature = "partition-stats")]
                self.pstats_before(t, &ev);
                self.dispatch(ev);
                #[cfg(feature = "partition-stats")]
                self.pstats_after();
                let look = self.n_events >= look_at;
                if look {
                    if self.n_events >= self.max_events && self.stop.is_none() {
                        // Reached, as a split run sees it, at the window's end.
                        let reason = format!(
                            "stopped at the end of the window of event {} (max_events)",
                            self.max_events
                        );
                        let at = self.window_end(t).min(self.end);
                        self.stop = Some((at, reason));
                        self.attention = true;
                    }
                    look_at = self.next_look();
                }
                if self.attention {
                    if self.violation.is_some() {
                        return Ok(false);
                    }
                    if self.stop.is_some() || self.workload.all_finished.is_some() {
                        bound = bound.min(self.window_end(t));
                        self.halt = Some(bound);
                    } else {
                        self.attention = false;
                    }
                    limit = bound.min(self.watch_at);
                }
                if look && self.n_events & 0xFFFF == 0 {
                    if !BY_DELAY && self.events.switch_placement() {
                        return Ok(true);
                    }
                    if let Some((started, limit)) = self.max_wall {
                        if started.elapsed() >= limit {
                            let reason = format!(
                                "stopped after {:.1} s of wall time (max_wall)",
                                limit.as_secs_f64()
                            );
                            self.stop = Some((t, reason));
                            self.halt = Some(t);
                            return Ok(false);
                        }
                    }
                    if let Some(p) = progress {
                        p.sim_time_ps.store(t.0, Ordering::Relaxed);
                        p.events.store(self.n_events, Ordering::Relaxed);
                        if p.cancel.load(Ordering::Relaxed) {
                            return Err(RunError::Cancelled(t));
                        }
                    }
                    if self.poll.as_ref().is_some_and(|poll| poll()) {
                        return Err(RunError::Cancelled(t));
                    }
                }
            }
            if self.watch_at > bound {
                return Ok(false);
            }
            // Every event of the window is done: search for the cycles.
            self.now = self.watch_at;
            if let Some(noticed) = self.search_cycles(self.now) {
                self.stop_if_deadlocked(noticed);
            }
            if self.stop.is_some() {
                self.halt = Some(self.now);
                return Ok(false);
            }
            limit = bound.min(self.watch_at);
        }
    }

    /// The next event count at which the event loop must look: a multiple
    /// of 2^16 (its polls), or `max_events` while that may still stop the
    /// run (the next event's count, if the count is already past it).
    fn next_look(&self) -> u64 {
        let poll = (self.n_events | 0xFFFF) + 1;
        if self.stop.is_some() {
            return poll;
        }
        poll.min(self.max_events.max(self.n_events + 1))
    }

    #[inline(always)]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone { port } => self.tx_done(port),
            Event::Arrive { port, slot } => {
                let frame = if slot == event::ON_LANE {
                    self.lane_frames
                        .pop_front()
                        .expect("a frame per laned arrival")
                } else {
                    self.on_links.remove(slot as usize)
                };
                self.arrive(port, frame)
            }
            Event::Inject { port, slot } => {
                let frame = self.parked.remove(slot as usize);
                self.arrive(port, frame)
            }
            Event::Reply { port, slot } => {
                let frame = self.parked.remove(slot as usize);
                let node = self.ports[port as usize].node as usize;
                self.egress_enqueue(node, frame);
            }
            Event::PauseRx { port, quanta } => self.pause_rx(port, quanta),
            Event::PauseExpire { port, generation } => self.pause_expire(port, generation),
            Event::PauseRefresh { port, generation } => self.pause_refresh(port, generation),
            Event::PfcRx {
                port,
                class,
                quanta,
            } => self.pfc_rx(port, class, quanta),
            Event::PfcExpire {
                port,
                class,
                generation,
            } => self.pfc_expire(port, class, generation),
            Event::PfcRefresh { port } => self.pfc_refresh(port),
            Event::SourceFire { source } => {
                self.sources[source as usize].produce();
                if self.source_transport(source).is_connection() {
                    self.conn_write(source);
                    self.schedule_next_unit(source);
                } else if self.source_push(source) {
                    self.schedule_next_unit(source);
                }
            }
            Event::Notify { slot, .. } => {
                let frame = self.parked.remove(slot as usize);
                self.reaction_point(frame)
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
            Event::CmTimer {
                flow,
                generation,
                timer,
            } => self.cm_timer(flow, timer, generation),
            Event::ConnRto { flow } => self.conn_rto(flow),
            Event::ConnAck { flow } => self.conn_ack_timer(flow),
            Event::RlRelease { flow } => self.rl_release(flow),
            Event::FlowStart { node } => self.start_flows(node),
        }
    }
}

/// Build and run a scenario.
pub fn run(sc: &Scenario, opts: &RunOptions) -> Result<RunResult, RunError> {
    let estimate = budget::memory_estimate(sc);
    let available = budget::available_memory();
    if let Some(available) = available {
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
    let sim = Simulator::new(sc, seed);
    let requested = if opts.threads > 0 {
        opts.threads
    } else {
        sc.threads
    }
    .max(1);
    let (threads, mut notes) = thread_budget(requested, estimate, available, sim.split_refusal());
    let mut used = 1;
    let mut result = if threads > 1 {
        let part = partition::Partitioning::automatic(sc, threads);
        if part.len() < threads {
            notes.push(format!(
                "the topology gives only {} partition{}",
                part.len(),
                if part.len() == 1 { "" } else { "s" }
            ));
        }
        if part.len() > 1 {
            used = part.len();
            parallel::run_split(sc, opts, &part, sim)?
        } else {
            sim.run(sc, opts)?
        }
    } else {
        sim.run(sc, opts)?
    };
    let s = &mut result.summary;
    s.threads_requested = requested;
    s.threads_used = used;
    s.threads_note = (used < requested).then(|| notes.join("; "));
    Ok(result)
}

/// How many of the `requested` threads a run may try, and why fewer:
/// none past one if it cannot be split (`refusal`, from
/// `Simulator::split_refusal`); else as many copies of its state, of
/// `estimate` bytes each, as fit in the `available` memory.
fn thread_budget(
    requested: usize,
    estimate: u64,
    available: Option<u64>,
    refusal: Option<&str>,
) -> (usize, Vec<String>) {
    if requested <= 1 {
        return (1, Vec::new());
    }
    if let Some(why) = refusal {
        return (1, vec![why.to_string()]);
    }
    // Each partition holds the whole run's state: as many as fit.
    let fit = available.map_or(usize::MAX, |a| {
        usize::try_from(a / estimate.max(1))
            .unwrap_or(usize::MAX)
            .max(1)
    });
    if fit < requested {
        let note = format!(
            "memory: the estimate ({} per partition) allows {fit}",
            budget::human_bytes(estimate)
        );
        return (fit, vec![note]);
    }
    (requested, Vec::new())
}
