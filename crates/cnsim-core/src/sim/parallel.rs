//! Split runs (docs/parallel.md): the switches, each with its hosts, are
//! divided into partitions, and each partition is simulated by its own
//! `Simulator` that handles only its nodes' events. The partitions advance
//! together window by window (`[kW, (k+1)W)`, `W` the run's window): what
//! one sends another (a frame on a link between two switches, a PAUSE or
//! PFC frame) takes effect at least `W` later, so it is handed over at the
//! window's end. The canonical tie order makes the events of every
//! partition happen in the order one simulator would give them, so a split
//! run's results are the same as one run's, bit for bit: counters are
//! added, and every other piece of state is taken from the partition that
//! owns it (a port from its node's, a flow's sender from its source's).
//!
//! Stops are decided at window ends over all partitions (the run's own
//! stops fall on window ends anyway), and so is the watchdog's cycle
//! search, which reads every partition's ports.

use super::event::Event;
use super::partition::{Message, Part, Partitioning};
use super::pause::NetView;
use super::switch::SwitchState;
use super::{Role, RunError, RunOptions, Simulator};
use crate::flowctl::watchdog::PausedPorts;
use crate::results::{RunCost, RunResult};
use crate::scenario::spec::Scenario;
use crate::units::Time;
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl Simulator {
    /// Hand `msg` to another partition at the window's end.
    #[cold]
    pub(super) fn send_to_partition(&mut self, msg: Message) {
        self.part
            .as_mut()
            .expect("only a split run has remote peers")
            .outbox
            .push(msg);
    }

    /// Schedule `ev` at the peer of `port`, in this partition or another.
    #[inline]
    pub(super) fn schedule_at_peer(&mut self, port: usize, at: Time, ev: Event) {
        if self.ports[port].peer_remote {
            self.send_to_partition(Message::Event { at, event: ev });
        } else {
            self.events.schedule(at, ev);
        }
    }

    /// Whether this simulator handles `node`'s events: always, unless the
    /// run is split.
    #[inline]
    pub(super) fn owns(&self, node: usize) -> bool {
        self.part
            .as_ref()
            .is_none_or(|p| p.node_part[node] == p.me)
    }

    /// A message from another partition takes effect here.
    fn receive(&mut self, msg: Message) {
        match msg {
            Message::Frame { port, at, frame } => {
                self.ports[port as usize].arriving.push_back(frame);
                self.events.schedule(at, Event::Arrive { port });
            }
            Message::Event { at, event } => self.events.schedule(at, event),
        }
    }

    /// Take in what partition `o` simulated: its counters added, the state
    /// of the nodes, ports and flows it owns taken. Both have `settle`d.
    fn absorb(&mut self, mut o: Simulator) {
        let me = o.part.as_ref().expect("a partition").me;
        let node_part = o.part.as_ref().expect("a partition").node_part.clone();
        let owns_node = |n: usize| node_part[n] == me;
        let owns_port = |ports: &[crate::net::port::Port], p: usize| owns_node(ports[p].node as usize);
        let port_owned: Vec<bool> = (0..self.ports.len())
            .map(|p| owns_port(&self.ports, p))
            .collect();
        let flow_src_owned: Vec<bool> = self
            .flow_src_node
            .iter()
            .map(|&n| owns_node(n as usize))
            .collect();

        // Counters written wherever their events happen: added.
        for (a, b) in self.flows.iter_mut().zip(&o.flows) {
            a.absorb(b);
        }
        for (a, b) in [
            (&mut self.flow_tx, &o.flow_tx),
            (&mut self.flow_rx, &o.flow_rx),
            (&mut self.queue_tx, &o.queue_tx),
            (&mut self.queue_drops, &o.queue_drops),
            (&mut self.queue_xoff, &o.queue_xoff),
            (&mut self.conn_retx, &o.conn_retx),
            (&mut self.conn_timeouts, &o.conn_timeouts),
        ] {
            a.absorb(b);
        }
        self.n_events += o.n_events;
        self.frame_hops += o.frame_hops;
        self.fingerprint = self.fingerprint.wrapping_add(o.fingerprint);
        self.pfc_events.append(&mut o.pfc_events);
        self.pfc_events_omitted += o.pfc_events_omitted;
        self.watchdog.long_pauses.append(&mut o.watchdog.long_pauses);

        // Per port and per node: the owner's.
        for p in (0..self.ports.len()).filter(|&p| port_owned[p]) {
            std::mem::swap(&mut self.ports[p], &mut o.ports[p]);
            self.queues[p] = o.queues[p];
            self.queue_occ.take_row(&o.queue_occ, p);
            let base = self.ingress_row.get(p).copied();
            if let Some(base) = base.filter(|&b| b != super::switch::NO_INGRESS_ROW) {
                for c in 0..self.n_classes as usize {
                    self.ingress_occ.take_row(&o.ingress_occ, base as usize + c);
                }
            }
            let per_port = if self.any_pfc { 8 } else { 1 };
            for e in p * per_port..(p + 1) * per_port {
                self.watchdog.take_reported(&o.watchdog, e);
            }
        }
        for n in (0..self.roles.len()).filter(|&n| owns_node(n)) {
            if let Role::Switch(SwitchState {
                shared: Some(b), ..
            }) = &o.roles[n]
            {
                self.buffer_shared.take_row(&o.buffer_shared, b.row);
                self.buffer_headroom.take_row(&o.buffer_headroom, b.row);
            }
            std::mem::swap(&mut self.roles[n], &mut o.roles[n]);
        }
        if let Some(w) = &o.stability {
            if port_owned[w.queue as usize] {
                self.stability = o.stability.take();
            }
        }

        // Per flow: the sender's state from the source's partition, the
        // receiver's from the destination's.
        for f in (0..self.flow_src_node.len()).filter(|&f| flow_src_owned[f]) {
            if let Some(rl) = self.limiters.get_mut(f) {
                std::mem::swap(rl, &mut o.limiters[f]);
            }
            if f < self.workload.first as usize {
                for (a, b) in [
                    (&mut self.rl_rate, &o.rl_rate),
                    (&mut self.rl_occ, &o.rl_occ),
                    (&mut self.rl_target, &o.rl_target),
                    (&mut self.flow_alpha, &o.flow_alpha),
                    (&mut self.tcp_cwnd, &o.tcp_cwnd),
                ] {
                    if f < a.rows() {
                        a.take_row(b, f);
                    }
                }
            }
        }
        self.workload.absorb(&o.workload);
        for s in 0..self.sources.len() {
            if owns_node(self.sources[s].host_node as usize) {
                std::mem::swap(&mut self.sources[s], &mut o.sources[s]);
            }
        }
    }
}

impl Simulator {
    /// Put the PFC event table and the watchdog's reports in an order that
    /// does not depend on how the run was split: by time, then port. (The
    /// table's cap applies after: a split run's partitions each log up to
    /// it.)
    pub(super) fn sort_logs(&mut self) {
        self.pfc_events
            .sort_by_key(|r| (r.time, r.port, r.class, r.direction as u8));
        if self.pfc_events.len() > self.pfc_events_limit {
            self.pfc_events_omitted += (self.pfc_events.len() - self.pfc_events_limit) as u64;
            self.pfc_events.truncate(self.pfc_events_limit);
        }
        self.watchdog.sort();
    }
}

/// The network as the watchdog sees it across partitions: each port as
/// its owner simulated it.
struct SplitView<'a> {
    views: Vec<NetView<'a>>,
    node_part: &'a [u32],
}

impl PausedPorts for SplitView<'_> {
    fn paused_since(&self, e: u32) -> Option<Time> {
        let v = &self.views[0];
        let port = if v.per_class { e / 8 } else { e };
        let owner = self.node_part[v.ports[port as usize].node as usize];
        self.views[owner as usize].paused_since(e)
    }
    fn peer_port(&self, e: u32, i: usize) -> Option<u32> {
        self.views[0].peer_port(e, i)
    }
}

impl Simulator {
    /// Why this run cannot be split, if it cannot.
    pub(super) fn split_refusal(&self) -> Option<&'static str> {
        if self.window.is_none_or(|w| w.0 == 0) {
            return Some("no link between two switches with a delay");
        }
        if self.scheme.probes() {
            // The probe records are one pool for all hosts (docs/parallel.md).
            return Some("E2CM's probes share one pool of records");
        }
        None
    }
}

/// Run `sc` split into `partitioning`'s partitions, one after another in
/// each window. The result is the one run's.
pub(super) fn run_split(
    sc: &Scenario,
    opts: &RunOptions,
    partitioning: &Partitioning,
    first: Simulator,
) -> Result<RunResult, RunError> {
    let started = std::time::Instant::now();
    let seed = opts.seed.unwrap_or(sc.seed);
    let node_part: Arc<[u32]> = partitioning.node_part.clone().into();
    let n_parts = partitioning.len();
    let mut first = Some(first);
    let mut sims: Vec<Simulator> = (0..n_parts)
        .map(|me| {
            let mut s = first.take().unwrap_or_else(|| Simulator::new(sc, seed));
            for p in 0..s.ports.len() {
                let peer = s.ports[p].peer as usize;
                s.ports[p].peer_remote =
                    node_part[s.ports[p].node as usize] != node_part[s.ports[peer].node as usize];
            }
            s.part = Some(Box::new(Part {
                me: me as u32,
                node_part: node_part.clone(),
                outbox: Vec::new(),
            }));
            s.checks = !opts.no_checks;
            s
        })
        .collect();
    let end = sims[0].end;
    let w = sims[0].window.expect("a split run has links between switches");
    let total_flows = sims[0].workload.total();
    let until_finished = sims[0].workload.until_finished();
    for s in &mut sims {
        s.start_sources();
        s.start_workloads();
    }
    let max_events = opts.max_events.unwrap_or(u64::MAX);
    let mut t = Time::ZERO;
    loop {
        let wend = Time((t.0 / w.0 + 1) * w.0).min(end);
        for s in &mut sims {
            s.run_until(wend, None)?;
            if let Some(v) = &s.violation {
                return Err(RunError::Invariant(v.describe(sc, seed)));
            }
        }
        // Hand over what crossed.
        for i in 0..n_parts {
            let outbox = std::mem::take(&mut sims[i].part.as_mut().expect("a partition").outbox);
            for msg in outbox {
                let owner = node_part[sims[0].ports[msg.port() as usize].node as usize];
                sims[owner as usize].receive(msg);
            }
        }
        search_cycles(&mut sims, &node_part);
        // The run's own stops, over all partitions.
        let events: u64 = sims.iter().map(|s| s.n_events).sum();
        if events >= max_events {
            let reason = format!("stopped at the end of the window of event {max_events} (max_events)");
            sims[0].stop.get_or_insert((wend, reason));
        }
        if until_finished && total_flows > 0 {
            let finished: u64 = sims.iter().map(|s| s.finished_flows()).sum();
            if finished == total_flows as u64 {
                let last = sims
                    .iter()
                    .filter_map(|s| s.workload.last_finish())
                    .max()
                    .unwrap_or(Time::ZERO);
                sims[0].workload.all_finished = Some(last);
            }
        }
        if sims.iter().any(|s| s.halt.is_some() || s.stop.is_some())
            || sims[0].workload.all_finished.is_some()
        {
            sims[0].halt = Some(wend);
            break;
        }
        if let Some(p) = &opts.progress {
            p.sim_time_ps.store(wend.0, Ordering::Relaxed);
            p.events.store(events, Ordering::Relaxed);
            if p.cancel.load(Ordering::Relaxed) {
                return Err(RunError::Cancelled(wend));
            }
        }
        if opts.poll.as_ref().is_some_and(|poll| poll()) {
            return Err(RunError::Cancelled(wend));
        }
        if opts.max_wall.is_some_and(|limit| started.elapsed() >= limit) {
            let reason = format!(
                "stopped after {:.1} s of wall time (max_wall)",
                opts.max_wall.unwrap_or_default().as_secs_f64()
            );
            sims[0].stop = Some((wend, reason));
            sims[0].halt = Some(wend);
            break;
        }
        if wend >= end {
            break;
        }
        t = wend;
    }
    let mut sims = sims.into_iter();
    let mut first = sims.next().expect("one partition at least");
    first.settle();
    for mut s in sims {
        s.settle();
        // A stop or a finish found by another partition.
        if first.stop.is_none() {
            first.stop = s.stop.take();
        }
        first.absorb(s);
    }
    first.part = None;
    if let Some(h) = first.halt {
        first.end = h;
    }
    first.now = first.end;
    let cost = RunCost {
        wall: started.elapsed(),
        rss_growth_bytes: crate::results::resident_memory()
            .zip(first.rss_at_start)
            .map(|(now, start)| now.saturating_sub(start)),
    };
    first.finish(sc, cost)
}

/// The watchdog's cycle searches due at this window's end, in the order
/// one run makes them (by the time each long pause was noticed), over
/// every partition's ports; the deadlocks go to the first partition.
fn search_cycles(sims: &mut [Simulator], node_part: &[u32]) {
    let mut due: Vec<(Time, u32)> = Vec::new();
    for s in sims.iter_mut() {
        due.extend(s.watch_pending.drain(..).map(|(e, noticed)| (noticed, e)));
    }
    if due.is_empty() {
        return;
    }
    due.sort_unstable();
    let Some(spec) = sims[0].watchdog_spec else {
        return;
    };
    let mut watchdog = std::mem::take(&mut sims[0].watchdog);
    let mut found = None;
    {
        let view = SplitView {
            views: sims
                .iter()
                .map(|s| NetView {
                    ports: &s.ports,
                    node_ports: &s.node_ports,
                    per_class: s.any_pfc,
                })
                .collect(),
            node_part,
        };
        for (noticed, e) in due {
            if watchdog.search(&spec, &view, e, noticed) {
                found = found.or(Some(noticed));
            }
        }
    }
    sims[0].watchdog = watchdog;
    if let Some(noticed) = found {
        sims[0].stop_if_deadlocked(noticed);
    }
}
