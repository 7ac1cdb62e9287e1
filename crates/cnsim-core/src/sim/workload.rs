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
    /// The next flow to start, by id.
    next: u32,
    /// Flows started or still to start that have not finished.
    unfinished: u64,
    /// End the run when the last flow finishes (`until = "flows_finished"`).
    until_finished: bool,
    /// When the last flow finished, with `until_finished`.
    pub(super) all_finished: Option<Time>,
}

impl WorkloadFlows {
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
            next: first as u32,
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
        w
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

    /// Time of the first flow's start, if any.
    pub(super) fn first_start(&self) -> Option<Time> {
        self.start.first().copied()
    }
}

impl Simulator {
    /// The row of `flow` in the flow series.
    #[inline]
    pub(super) fn row(&self, flow: usize) -> usize {
        self.flow_row.get(flow).map_or(flow, |&r| r as usize)
    }

    /// Schedule the first workload flow's start.
    pub(super) fn start_workloads(&mut self) {
        if let Some(t) = self.workload.first_start() {
            let flow = self.workload.first;
            self.events.schedule(t, Event::FlowStart { flow });
        } else if self.workload.until_finished {
            self.workload.all_finished = Some(Time::ZERO);
        }
    }

    /// Start every workload flow due now, then schedule the next start.
    pub(super) fn start_flows(&mut self) {
        let first = self.workload.first;
        while let Some(&t) = self
            .workload
            .start
            .get((self.workload.next - first) as usize)
        {
            if t > self.now {
                self.events.schedule(
                    t,
                    Event::FlowStart {
                        flow: self.workload.next,
                    },
                );
                return;
            }
            let flow = self.workload.next;
            self.workload.next += 1;
            let size = self.workload.size[(flow - first) as usize];
            self.conn_offer(flow, size);
        }
    }

    /// `got` more bytes of `flow` reached its receiver's application,
    /// `rcv_nxt` in all: a workload flow finishes with its last byte.
    #[inline]
    pub(super) fn workload_delivered(&mut self, flow: u32, rcv_nxt: u64) {
        let Some(k) = flow.checked_sub(self.workload.first) else {
            return;
        };
        let w = &mut self.workload;
        if rcv_nxt == w.size[k as usize] {
            w.finish[k as usize] = Some(self.now);
            w.unfinished -= 1;
            if w.unfinished == 0 && w.until_finished {
                w.all_finished = Some(self.now);
            }
        }
    }

    /// The completion time of `flow` alone on an idle network: its frames
    /// leave back to back and cross the path's store-and-forward hops
    /// (docs/model.md, "Flow workloads and completion times").
    fn ideal_fct(&self, flow: u32, size: u64) -> Time {
        let f = flow as usize;
        let payload = self.conn_params[f].payload() as u64;
        let header = self.conn_params[f].header() as u64;
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
