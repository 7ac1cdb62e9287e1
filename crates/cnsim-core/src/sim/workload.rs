//! Workload flows in the running network: each starts at its time by
//! writing its bytes to its connection, and finishes when its last byte
//! reaches the receiving host's application. Their binned series add up
//! per workload (one row each, after the sources' flows), so a run with
//! 10⁵ flows keeps 10⁵ result records, not 10⁵ series.

use super::{Event, Simulator};
use crate::results::WorkloadFlowRecord;
use crate::scenario::spec::{FlowOrigin, FlowSpec, Scenario};
use crate::units::Time;

pub(super) struct WorkloadFlows {
    /// Flow id of the first workload flow: the sources' flows come first,
    /// then the workloads' in order of start time.
    pub(super) first: u32,
    /// Per workload flow (by id − `first`).
    size: Vec<u64>,
    start: Vec<Time>,
    finish: Vec<Option<Time>>,
    workload: Vec<u32>,
    /// Its number within its workload.
    index: Vec<u32>,
    /// Per sending node, its flows (ids) in start order: those of node n
    /// are `chain[chain_start[n]..chain_start[n + 1]]`, and `chain_next[n]`
    /// is the position of its next to start. Each node starts its own flows
    /// (one `FlowStart` chain per node, not one for the run): a node's
    /// events then stay its own, as a run divided between threads needs
    /// (docs/parallel.md).
    chain: Vec<u32>,
    chain_start: Vec<u32>,
    chain_next: Vec<u32>,
    /// Flows started or still to start that have not finished.
    unfinished: u64,
    /// End the run when the last flow finishes (`until = "flows_finished"`).
    until_finished: bool,
    /// When the last flow finished, with `until_finished`.
    pub(super) all_finished: Option<Time>,
}

impl WorkloadFlows {
    /// The size of workload flow `flow`, `None` for the sources' flows.
    #[inline]
    pub(super) fn size_of(&self, flow: u32) -> Option<u64> {
        let k = flow.checked_sub(self.first)?;
        Some(self.size[k as usize])
    }

    /// Flows in all, and whether the run ends when they have finished.
    pub(super) fn total(&self) -> usize {
        self.size.len()
    }

    pub(super) fn until_finished(&self) -> bool {
        self.until_finished
    }

    /// The latest finish, if any flow finished.
    pub(super) fn last_finish(&self) -> Option<Time> {
        self.finish.iter().flatten().max().copied()
    }

    /// Take the finishes another partition of a split run saw (at its
    /// receivers).
    pub(super) fn absorb(&mut self, o: &WorkloadFlows) {
        for (a, b) in self.finish.iter_mut().zip(&o.finish) {
            if b.is_some() {
                *a = *b;
            }
        }
        self.unfinished = self.finish.iter().filter(|f| f.is_none()).count() as u64;
    }

    pub(super) fn new(sc: &Scenario, flows: &[FlowSpec]) -> WorkloadFlows {
        let first = flows
            .iter()
            .position(|f| matches!(f.origin, FlowOrigin::Workload { .. }))
            .unwrap_or(flows.len());
        let mut w = WorkloadFlows {
            first: first as u32,
            size: Vec::new(),
            start: Vec::new(),
            finish: vec![None; flows.len() - first],
            workload: Vec::new(),
            index: Vec::new(),
            chain: Vec::new(),
            chain_start: Vec::new(),
            chain_next: Vec::new(),
            unfinished: (flows.len() - first) as u64,
            until_finished: sc.until_flows_finished,
            all_finished: None,
        };
        for f in &flows[first..] {
            let FlowOrigin::Workload {
                workload,
                index,
                size,
                start,
            } = f.origin
            else {
                unreachable!("workload flows come last")
            };
            w.size.push(size);
            w.start.push(start);
            w.workload.push(workload as u32);
            w.index.push(index as u32);
        }
        // Group the flows by sending node (a counting sort keeps each
        // node's in id order, which is start order).
        let mut count = vec![0u32; sc.nodes.len() + 1];
        for f in &flows[first..] {
            count[f.src + 1] += 1;
        }
        for n in 0..sc.nodes.len() {
            count[n + 1] += count[n];
        }
        w.chain_next = count[..sc.nodes.len()].to_vec();
        w.chain = vec![0; flows.len() - first];
        let mut fill = w.chain_next.clone();
        for (k, f) in flows[first..].iter().enumerate() {
            w.chain[fill[f.src] as usize] = (first + k) as u32;
            fill[f.src] += 1;
        }
        w.chain_start = count;
        w
    }

    /// The next flow node `node` starts, if any.
    fn next_of(&self, node: usize) -> Option<u32> {
        (self.chain_next[node] < self.chain_start[node + 1])
            .then(|| self.chain[self.chain_next[node] as usize])
    }

    /// Per flow: its row in the flow series (its workload's for a workload
    /// flow). Empty when there are no workload flows: every row is the
    /// flow's own.
    pub(super) fn rows(&self, flows: &[FlowSpec]) -> Vec<u32> {
        if self.size.is_empty() {
            return Vec::new();
        }
        (0..flows.len() as u32)
            .map(|f| match f.checked_sub(self.first) {
                None => f,
                Some(k) => self.first + self.workload[k as usize],
            })
            .collect()
    }
}

impl Simulator {
    /// The row of `flow` in the flow series.
    #[inline]
    pub(super) fn row(&self, flow: usize) -> usize {
        self.flow_row.get(flow).map_or(flow, |&r| r as usize)
    }

    /// The row of `flow` in the series of levels (a rate, a window, α, a
    /// limiter's queue), or None for a workload flow: a level of many
    /// flows in one row means nothing, `finish` reports the workload's
    /// row as NaN, and so nothing is recorded there.
    #[inline]
    pub(super) fn level_row(&self, flow: usize) -> Option<usize> {
        (flow < self.workload.first as usize).then_some(flow)
    }

    /// Workload flows that have finished (in a split run: at this
    /// partition's receivers).
    pub(super) fn finished_flows(&self) -> u64 {
        self.workload.size.len() as u64 - self.workload.unfinished
    }

    /// Schedule each sending node's first workload flow start.
    pub(super) fn start_workloads(&mut self) {
        if self.workload.size.is_empty() {
            if self.workload.until_finished {
                self.workload.all_finished = Some(Time::ZERO);
                self.attention = true;
            }
            return;
        }
        let first = self.workload.first;
        for node in 0..self.workload.chain_next.len() {
            if !self.owns(node) {
                continue;
            }
            if let Some(flow) = self.workload.next_of(node) {
                let t = self.workload.start[(flow - first) as usize];
                let node = node as u32;
                self.events.schedule(t, Event::FlowStart { node });
            }
        }
    }

    /// Start every workload flow of `node` due now, then schedule its next.
    pub(super) fn start_flows(&mut self, node: u32) {
        let first = self.workload.first;
        while let Some(flow) = self.workload.next_of(node as usize) {
            let k = (flow - first) as usize;
            let t = self.workload.start[k];
            if t > self.now {
                self.events.schedule(t, Event::FlowStart { node });
                return;
            }
            self.workload.chain_next[node as usize] += 1;
            let size = self.workload.size[k];
            self.conn_offer(flow, size);
        }
    }

    /// `got` more bytes of `flow` reached its receiver's application,
    /// `rcv_nxt` in all: a workload flow finishes with its last byte.
    /// True if it just did.
    #[inline]
    pub(super) fn workload_delivered(&mut self, flow: u32, rcv_nxt: u64) -> bool {
        let Some(k) = flow.checked_sub(self.workload.first) else {
            return false;
        };
        let w = &mut self.workload;
        if rcv_nxt != w.size[k as usize] {
            return false;
        }
        w.finish[k as usize] = Some(self.now);
        w.unfinished -= 1;
        if w.unfinished == 0 && w.until_finished {
            w.all_finished = Some(self.now);
            self.attention = true;
        }
        true
    }

    /// Workload flow `flow` is complete at its sender: every byte is
    /// acknowledged. Its reaction point ends with it, as a NIC's congestion
    /// control ends with the queue pair it destroys when the last byte is
    /// acknowledged (`end_reaction_point`).
    #[inline]
    pub(super) fn sender_done(&self, flow: u32) -> bool {
        flow >= self.workload.first && self.conn_all_acked(flow)
    }

    /// The completion time of `flow` alone on an idle network: its frames
    /// leave back to back and cross the path's store-and-forward hops
    /// (docs/model.md, "Flow workloads and completion times").
    fn ideal_fct(&self, flow: u32, size: u64) -> Time {
        let f = flow as usize;
        let p = self.conn_params(f);
        let (payload, header) = (p.payload() as u64, p.header() as u64);
        // The path: the ports the flow's frames leave through.
        let mut hops: Vec<u32> = Vec::new();
        let dst_host = self.flow_dst_host[f];
        let mut port = match &self.roles[self.flow_src_node[f] as usize] {
            super::Role::Host(h) => h.port,
            super::Role::Switch(_) => unreachable!("flows start at hosts"),
        };
        loop {
            hops.push(port);
            let node = self.ports[self.ports[port as usize].peer as usize].node as usize;
            if matches!(self.roles[node], super::Role::Host(_)) {
                break;
            }
            port = self.routes.next_port(node, dst_host, flow);
        }
        let n = size.div_ceil(payload);
        let full = payload + header;
        let last = size - (n - 1) * payload + header;
        let tx = |h: u32, bytes: u64| self.ports[h as usize].rate.tx_time(bytes).0;
        let delays: u64 = hops.iter().map(|&h| self.to_peer[h as usize].0).sum();
        if n == 1 {
            return Time(delays + hops.iter().map(|&h| tx(h, last)).sum::<u64>());
        }
        // The longest path through the (frame, hop) lattice: frames 1..n-1
        // cross hops 1..m, the n - 2 frames after the first wait at the
        // slowest of them, and the last frame crosses hops m..H.
        let mut best = 0u64;
        let (mut head, mut slowest) = (0u64, 0u64);
        for m in 0..hops.len() {
            head += tx(hops[m], full);
            slowest = slowest.max(tx(hops[m], full));
            let tail: u64 = hops[m..].iter().map(|&h| tx(h, last)).sum();
            best = best.max(head + (n - 2) * slowest + tail);
        }
        Time(delays + best)
    }

    /// One record per workload flow, for the results.
    pub(super) fn workload_records(&self) -> Vec<WorkloadFlowRecord> {
        let w = &self.workload;
        (0..w.size.len())
            .map(|k| {
                let flow = w.first + k as u32;
                let f = flow as usize;
                WorkloadFlowRecord {
                    workload: w.workload[k],
                    index: w.index[k],
                    src: self.flow_src_node[f],
                    dst: self.conn_dst_node[f],
                    priority: self.flow_class[f],
                    size: w.size[k],
                    start: w.start[k],
                    finish: w.finish[k],
                    ideal: self.ideal_fct(flow, w.size[k]),
                }
            })
            .collect()
    }
}
