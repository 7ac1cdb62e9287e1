//! Invariants checked in every run (unless `RunOptions::no_checks`): a
//! violated one stops the run with an error naming it, the time, the node
//! and port, and the seed. The checks sit where the state changes and cost
//! a comparison each; the whole-run ones run at the end.

use super::{Role, Simulator};
#[cfg(debug_assertions)]
use crate::net::port::TxState;
use crate::net::topology::BufferModel;
use crate::scenario::spec::Scenario;
use crate::units::Time;

/// A broken invariant, as found.
#[derive(Debug, Clone)]
pub struct Violation {
    pub invariant: &'static str,
    pub time: Time,
    pub node: Option<u32>,
    pub port: Option<u32>,
    pub detail: String,
}

impl Violation {
    /// The message of the run's error, with names resolved.
    pub fn describe(&self, sc: &Scenario, seed: u64) -> String {
        let queues = sc.queue_names();
        let mut at = format!("at {}", self.time);
        if let Some(n) = self.node {
            at += &format!(", node {}", sc.nodes[n as usize].name);
        }
        if let Some(p) = self.port {
            at += &format!(", port {}", queues[p as usize]);
        }
        format!(
            "invariant violated: {} ({at}, seed {seed}): {}",
            self.invariant, self.detail
        )
    }
}

/// Test-only ways to break the model on purpose, one per invariant, so the
/// tests can see each check fire.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fault {
    #[default]
    None,
    /// Forget the bytes of every frame admitted to this port's queue.
    LoseOccupancy(u32),
    /// Admit frames to this port's queue beyond its buffer.
    IgnoreBuffer(u32),
    /// Transmit even when paused.
    IgnorePause,
    /// Deliver every data frame twice.
    DeliverTwice,
    /// Set installed rate limiters above the line rate.
    RateAboveLine,
    /// Count a dropped frame twice.
    DoubleDrop,
    /// Count one byte too many for the first frame admitted to this port.
    ExtraByte(u32),
    /// Hand a TCP receiver's new data to the application twice.
    TcpDeliverTwice,
}

impl Simulator {
    #[cold]
    pub(super) fn violated(
        &mut self,
        invariant: &'static str,
        node: Option<usize>,
        port: Option<u32>,
        detail: String,
    ) {
        self.attention = true;
        if self.violation.is_none() {
            self.violation = Some(Violation {
                invariant,
                time: self.now,
                node: node.map(|n| n as u32),
                port,
                detail,
            });
        }
    }

    /// A frame of `size` leaves queue `port`, which held `occ` bytes.
    #[inline]
    pub(super) fn check_dequeue(&mut self, port: u32, size: u64, occ: u64) {
        let p = &self.ports[port as usize];
        if self.checks && occ < size {
            let node = p.node as usize;
            self.violated(
                "no negative occupancy",
                Some(node),
                Some(port),
                format!("a {size} B frame leaves a queue holding {occ} B"),
            );
        }
    }

    /// A frame was admitted to output `out` of switch `node` on input `inp`.
    #[inline]
    pub(super) fn check_admitted(&mut self, node: usize, inp: u32, out: u32) {
        if !self.checks {
            return;
        }
        let Role::Switch(sw) = &self.roles[node] else {
            return;
        };
        let occ = self.ports[out as usize].occupancy;
        let input = self.ports[inp as usize].input_occupancy;
        let over = match sw.buffer {
            BufferModel::PerOutput { bytes } if occ > bytes => Some((out, occ, bytes)),
            BufferModel::PerInput { bytes } if input > bytes => Some((inp, input, bytes)),
            _ => sw.queue_limit.filter(|&l| occ > l).map(|l| (out, occ, l)),
        };
        if let Some((port, held, cap)) = over {
            self.violated(
                "no over-capacity occupancy",
                Some(node),
                Some(port),
                format!("{held} B held in a buffer of {cap} B"),
            );
        }
    }

    /// A transmission starts on `port`: PAUSE does not hold it, nor PFC
    /// its frame's class (`class_paused`, false for an expedited frame).
    /// One test, not a branch per condition: whether a port has classes
    /// follows the ports' turns, which the predictor does not learn.
    #[inline(always)]
    pub(super) fn check_not_paused(&mut self, port: u32, class_paused: bool) {
        let p = &self.ports[port as usize];
        #[cfg(debug_assertions)]
        if let (TxState::Data(c), Some(pc)) = (p.tx, p.classes.as_deref()) {
            debug_assert_eq!(class_paused, pc.pfc_receiver().paused(c));
        }
        if self.checks && (p.pause.paused() | class_paused) {
            self.started_while_paused(port);
        }
    }

    #[cold]
    fn started_while_paused(&mut self, port: u32) {
        let p = &self.ports[port as usize];
        {
            let node = p.node as usize;
            self.violated(
                "paused ports send nothing",
                Some(node),
                Some(port),
                "a frame started while the port was paused".into(),
            );
        }
    }

    /// A UDP data frame of `flow` with sequence number `seq` was delivered
    /// (numbers count the flow's frames at its source; drops leave gaps).
    #[inline]
    pub(super) fn check_delivery(&mut self, node: usize, flow: u32, seq: u32) {
        let f = flow as usize;
        let last = std::mem::replace(&mut self.last_seq[f], seq);
        let first = self.flows[f].volume.delivered_frames == 1;
        if self.checks && !first && (seq.wrapping_sub(last) as i32) <= 0 {
            let detail = format!("flow {f}: frame {seq} delivered after frame {last}");
            self.violated(
                "frames of a UDP flow arrive once and in order",
                Some(node),
                None,
                detail,
            );
        }
    }

    /// A TCP receiver handed data to its application: every byte once
    /// (what the application got is the receiver's next expected byte,
    /// `rcv_nxt`) and nothing that was not written.
    #[inline]
    pub(super) fn check_conn_delivery(&mut self, node: usize, flow: u32, rcv_nxt: u64) {
        let v = &self.flows[flow as usize].volume;
        // A split run's receiver does not see the bytes written at the
        // sender: the end-of-run conservation check covers them.
        let over = v.delivered_bytes > v.offered_bytes && self.part.is_none();
        if self.checks && (v.delivered_bytes != rcv_nxt || over) {
            let detail = format!(
                "flow {flow}: {} B delivered, {rcv_nxt} B received in order, {} B written",
                v.delivered_bytes, v.offered_bytes
            );
            self.violated("TCP delivers every byte once", Some(node), None, detail);
        }
    }

    /// A RoCE NAK reaches the sender of `flow`: a gap means a lost segment
    /// (a flow keeps one path, so nothing overtakes), so in a lossless run
    /// the transport never goes back.
    #[inline]
    pub(super) fn check_nak(&mut self, flow: u32) {
        let c = &self.flows[flow as usize];
        // The drops are counted where they happen: a split run's sender
        // does not see them.
        if self.checks && c.segments_dropped == 0 && self.part.is_none() {
            let node = self.flow_src_node[flow as usize] as usize;
            let detail = format!("flow {flow}: a NAK, and none of its segments was lost");
            self.violated("RoCE goes back only after a loss", Some(node), None, detail);
        }
    }

    /// An installed limiter of `flow` releases a frame at its rate.
    #[inline]
    pub(super) fn check_rate(&mut self, flow: u32) {
        if !self.checks {
            return;
        }
        let rl = &self.limiters[flow as usize];
        let (rate, line) = (rl.rate, rl.line);
        let floor = self.rate_floor;
        if !(rate <= line * (1.0 + 1e-9) && rate >= floor * (1.0 - 1e-9)) {
            let node = self.flow_src_node[flow as usize] as usize;
            self.violated(
                "rate limiters within [min rate, line rate]",
                Some(node),
                None,
                format!("flow {flow}: {rate:.0} b/s outside [{floor:.0}, {line:.0}]"),
            );
        }
    }
}

/// The lowest rate any configured scheme lets a limiter fall to (0 without one).
pub(super) fn rate_floor(sc: &Scenario) -> f64 {
    let bcn = sc.bcn.map(|p| p.min_rate.0 as f64);
    let e2cm = sc.e2cm.map(|e| e.control.min_rate.0 as f64);
    let qcn = sc.qcn.map(|q| q.min_rate.0);
    let dcqcn = sc.dcqcn.map(|d| d.rp.min_rate.0);
    let floor = [bcn, e2cm, qcn, dcqcn]
        .into_iter()
        .flatten()
        .fold(f64::INFINITY, f64::min);
    if floor.is_finite() {
        floor
    } else {
        0.0
    }
}

impl Simulator {
    /// At the end: bytes and frames of every UDP flow are conserved, and
    /// every queue holds exactly the bytes of its frames.
    pub(super) fn check_conservation(&mut self) {
        if !self.checks {
            return;
        }
        for f in 0..self.flows.len() {
            if self.has_conn(f as u32) {
                continue;
            }
            let v = self.flows[f].volume;
            let bytes = v.delivered_bytes + v.dropped_bytes + v.in_flight_bytes;
            let frames = v.delivered_frames + v.dropped_frames + v.in_flight_frames;
            if v.offered_bytes != bytes || v.offered_frames != frames {
                let node = self.flow_src_node[f] as usize;
                let detail = format!(
                    "flow {f}: offered {} B / {} frames, accounted {bytes} B / {frames} frames",
                    v.offered_bytes, v.offered_frames
                );
                self.violated(
                    "conservation of bytes and frames per flow",
                    Some(node),
                    None,
                    detail,
                );
            }
        }
        for port in 0..self.ports.len() {
            let p = &self.ports[port];
            let held: u64 = p.queued().map(|f| f.size as u64).sum();
            if held != p.occupancy {
                let (node, occ) = (p.node as usize, p.occupancy);
                self.violated(
                    "conservation of bytes per queue",
                    Some(node),
                    Some(port as u32),
                    format!("the queue counts {occ} B but holds frames of {held} B"),
                );
            }
        }
    }
}
