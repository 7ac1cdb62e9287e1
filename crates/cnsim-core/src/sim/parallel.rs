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
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

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
        self.part.as_ref().is_none_or(|p| p.node_part[node] == p.me)
    }

    /// A message from another partition takes effect here.
    fn receive(&mut self, msg: Message) {
        match msg {
            Message::Frame { port, at, frame } => self.put_on_link(at, port, frame),
            Message::Event { at, event } => self.events.schedule(at, event),
            Message::Probe {
                flow,
                index,
                record,
                ..
            } => self.scheme.put_probe_record(flow, index, *record),
        }
    }

    /// Take in what partition `o` simulated: its counters added, the state
    /// of the nodes, ports and flows it owns taken. Both have `settle`d.
    fn absorb(&mut self, mut o: Simulator) {
        let me = o.part.as_ref().expect("a partition").me;
        let node_part = o.part.as_ref().expect("a partition").node_part.clone();
        let owns_node = |n: usize| node_part[n] == me;
        let port_owned: Vec<bool> = self
            .ports
            .iter()
            .map(|p| owns_node(p.node as usize))
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
            (&mut self.conn_retx, &o.conn_retx),
            (&mut self.conn_timeouts, &o.conn_timeouts),
        ] {
            a.absorb(b);
        }
        for (a, b) in [
            (&mut self.queue_tx, &o.queue_tx),
            (&mut self.queue_drops, &o.queue_drops),
            (&mut self.queue_xoff, &o.queue_xoff),
        ] {
            a.absorb(b);
        }
        self.n_events += o.n_events;
        self.frame_hops += o.frame_hops;
        self.fingerprint = self.fingerprint.wrapping_add(o.fingerprint);
        self.pfc_events.append(&mut o.pfc_events);
        self.pfc_events_omitted += o.pfc_events_omitted;
        self.watchdog
            .long_pauses
            .append(&mut o.watchdog.long_pauses);

        // Per port and per node: the owner's.
        for p in (0..self.ports.len()).filter(|&p| port_owned[p]) {
            std::mem::swap(&mut self.ports[p], &mut o.ports[p]);
            self.ingress_cells.take_port(&o.ingress_cells, p);
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
            self.pool_calm[n] = o.pool_calm[n];
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
                self.note_active(f as u32);
            }
            if f < self.workload.first as usize {
                if let Some(from) = o.rl_rows.get(f) {
                    let to = self.limiter_row(f).expect("a source flow");
                    self.rl_rate.take_row_as(&o.rl_rate, from, to);
                    self.rl_occ.take_row_as(&o.rl_occ, from, to);
                    if let (Some(a), Some(b)) = (self.rl_target.as_mut(), o.rl_target.as_ref()) {
                        a.take_row_as(b, from, to);
                    }
                }
                for (a, b) in [
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
        None
    }
}

/// A barrier that spins (a sleeping one costs about 14 µs a window here,
/// a spinning one under 1 µs), and yields once it has waited long, so that
/// more partitions than cores still progress.
struct SpinBarrier {
    n: usize,
    count: AtomicUsize,
    generation: AtomicUsize,
    /// Spins before yielding: none when the threads outnumber the cores.
    spins: u32,
    /// A thread panicked: the others must not wait for it forever.
    broken: AtomicBool,
}

/// Marks the barrier broken if its thread unwinds (`SpinBarrier::wait`
/// then panics in the others, and the run's panic surfaces instead of a
/// hang).
struct BreakOnPanic<'a>(&'a SpinBarrier);

impl Drop for BreakOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.broken.store(true, Ordering::Release);
        }
    }
}

impl SpinBarrier {
    fn new(n: usize) -> SpinBarrier {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        SpinBarrier {
            n,
            count: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            spins: if n <= cores { 1_000 } else { 0 },
            broken: AtomicBool::new(false),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            assert!(
                !self.broken.load(Ordering::Acquire),
                "another partition's thread panicked"
            );
            if spins < self.spins {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// What the partitions do after a window: go on to the next, or stop.
const GO_ON: u8 = 0;
const STOP: u8 = 1;

/// Run `sc` split into `partitioning`'s partitions, each on its own
/// thread (this one runs the first). The result is the one run's.
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
    let end = first.end;
    let w = first
        .window
        .expect("a split run has links between switches");
    let prepare = |mut s: Simulator, me: usize| {
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
        s.start_sources();
        s.start_workloads();
        Mutex::new(s)
    };
    // Each partition's simulator, locked by its thread for a window and by
    // the first thread between windows; and its inbox.
    let sims: Vec<OnceLock<Mutex<Simulator>>> = (0..n_parts).map(|_| OnceLock::new()).collect();
    let inboxes: Vec<Mutex<Vec<Message>>> = (0..n_parts).map(|_| Mutex::new(Vec::new())).collect();
    let barrier = SpinBarrier::new(n_parts);
    let decision = AtomicU8::new(GO_ON);
    let window_end = AtomicU64::new(Time(w.0).min(end).0);
    let failure: Mutex<Option<RunError>> = Mutex::new(None);
    let _ = sims[0].set(prepare(first, 0));

    // One partition's part of every window: its events, then its messages
    // to the others' inboxes; after the barrier (and the first thread's
    // decision), what others sent it.
    let work = |me: usize| {
        let _guard = BreakOnPanic(&barrier);
        let mut outgoing: Vec<Vec<Message>> = (0..n_parts).map(|_| Vec::new()).collect();
        loop {
            let wend = Time(window_end.load(Ordering::Acquire));
            {
                let mut s = sims[me].get().expect("built").lock().expect("not poisoned");
                if let Err(e) = s.run_until(wend, None) {
                    failure.lock().expect("not poisoned").get_or_insert(e);
                }
                let outbox = std::mem::take(&mut s.part.as_mut().expect("a partition").outbox);
                for msg in outbox {
                    let owner = node_part[s.ports[msg.port() as usize].node as usize];
                    outgoing[owner as usize].push(msg);
                }
            }
            for (to, msgs) in outgoing.iter_mut().enumerate() {
                if !msgs.is_empty() {
                    inboxes[to].lock().expect("not poisoned").append(msgs);
                }
            }
            barrier.wait();
            if me == 0 {
                let go_on = decide(
                    sc, opts, &sims, &node_part, wend, end, seed, started, &failure,
                );
                if go_on {
                    window_end.store(Time(wend.0 + w.0).min(end).0, Ordering::Release);
                }
                decision.store(if go_on { GO_ON } else { STOP }, Ordering::Release);
            }
            barrier.wait();
            if decision.load(Ordering::Acquire) == STOP {
                return;
            }
            let inbox = std::mem::take(&mut *inboxes[me].lock().expect("not poisoned"));
            let mut s = sims[me].get().expect("built").lock().expect("not poisoned");
            for msg in inbox {
                s.receive(msg);
            }
        }
    };
    std::thread::scope(|scope| {
        for me in 1..n_parts {
            let (sims, prepare, work) = (&sims, &prepare, &work);
            let barrier = &barrier;
            scope.spawn(move || {
                let _guard = BreakOnPanic(barrier);
                let _ = sims[me].set(prepare(Simulator::new(sc, seed), me));
                work(me);
            });
        }
        // The others build theirs while this one waits at the first barrier.
        work(0);
    });
    if let Some(e) = failure.into_inner().expect("not poisoned") {
        return Err(e);
    }
    // What crossed in the last window is still on its links.
    let mut sims: Vec<Simulator> = sims
        .into_iter()
        .map(|s| {
            s.into_inner()
                .expect("built")
                .into_inner()
                .expect("not poisoned")
        })
        .collect();
    for (s, inbox) in sims.iter_mut().zip(inboxes) {
        for msg in inbox.into_inner().expect("not poisoned") {
            s.receive(msg);
        }
    }
    let mut sims = sims.into_iter();
    let mut first = sims.next().expect("one partition at least");
    first.settle();
    for mut s in sims {
        s.settle();
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

/// Between two windows, with every partition waiting: the run's own stops
/// over all partitions, the watchdog's cycle searches, the caller's limits.
/// True to go on to the next window. A stop is written to the first
/// partition (`stop`, `halt`), an error to `failure`.
#[allow(clippy::too_many_arguments)]
fn decide(
    sc: &Scenario,
    opts: &RunOptions,
    sims: &[OnceLock<Mutex<Simulator>>],
    node_part: &[u32],
    wend: Time,
    end: Time,
    seed: u64,
    started: std::time::Instant,
    failure: &Mutex<Option<RunError>>,
) -> bool {
    let mut guards: Vec<_> = sims
        .iter()
        .map(|s| s.get().expect("built").lock().expect("not poisoned"))
        .collect();
    let mut sims: Vec<&mut Simulator> = guards.iter_mut().map(|g| &mut **g).collect();
    if failure.lock().expect("not poisoned").is_some() {
        return false;
    }
    if let Some(s) = sims.iter().find(|s| s.violation.is_some()) {
        let v = s.violation.as_ref().expect("found");
        let e = RunError::Invariant(v.describe(sc, seed));
        failure.lock().expect("not poisoned").get_or_insert(e);
        return false;
    }
    search_cycles(&mut sims, node_part);
    let events: u64 = sims.iter().map(|s| s.n_events).sum();
    if events >= opts.max_events.unwrap_or(u64::MAX) {
        let reason = format!(
            "stopped at the end of the window of event {} (max_events)",
            opts.max_events.unwrap_or(u64::MAX)
        );
        sims[0].stop.get_or_insert((wend, reason));
    }
    let total_flows = sims[0].workload.total();
    if sims[0].workload.until_finished() && total_flows > 0 {
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
    if let Some(limit) = opts.max_wall.filter(|&l| started.elapsed() >= l) {
        let reason = format!(
            "stopped after {:.1} s of wall time (max_wall)",
            limit.as_secs_f64()
        );
        sims[0].stop = Some((wend, reason));
    }
    // A stop or a finish that one partition found alone.
    for i in 1..sims.len() {
        if sims[0].stop.is_none() {
            sims[0].stop = sims[i].stop.take();
        }
    }
    if sims.iter().any(|s| s.halt.is_some() || s.stop.is_some())
        || sims[0].workload.all_finished.is_some()
    {
        sims[0].halt = Some(wend);
        return false;
    }
    if let Some(p) = &opts.progress {
        p.sim_time_ps.store(wend.0, Ordering::Relaxed);
        p.events.store(events, Ordering::Relaxed);
        if p.cancel.load(Ordering::Relaxed) {
            failure
                .lock()
                .expect("not poisoned")
                .get_or_insert(RunError::Cancelled(wend));
            return false;
        }
    }
    if opts.poll.as_ref().is_some_and(|poll| poll()) {
        failure
            .lock()
            .expect("not poisoned")
            .get_or_insert(RunError::Cancelled(wend));
        return false;
    }
    wend < end
}

/// The watchdog's cycle searches due at this window's end, in the order
/// one run makes them (by the time each long pause was noticed), over
/// every partition's ports; the deadlocks go to the first partition.
fn search_cycles(sims: &mut [&mut Simulator], node_part: &[u32]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_barrier_lets_its_threads_through_together_and_breaks_when_one_panics() {
        let barrier = SpinBarrier::new(2);
        let count = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for round in 1..=100 {
                        count.fetch_add(1, Ordering::AcqRel);
                        barrier.wait();
                        assert!(count.load(Ordering::Acquire) >= 2 * round);
                        barrier.wait();
                    }
                });
            }
        });
        assert_eq!(count.into_inner(), 200);
        // A thread that dies before the barrier: the other panics, not hangs.
        let barrier = SpinBarrier::new(2);
        let waited = std::thread::scope(|s| {
            let dies = s.spawn(|| {
                let _guard = BreakOnPanic(&barrier);
                panic!("a partition's bug");
            });
            let waited = s.spawn(|| barrier.wait()).join();
            assert!(dies.join().is_err());
            waited
        });
        let msg = waited.expect_err("the wait panics");
        assert_eq!(
            msg.downcast_ref::<&str>(),
            Some(&"another partition's thread panicked")
        );
    }
}
