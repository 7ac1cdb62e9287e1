//! QCN in the running network (PROTOCOLS.md §3): congestion points sample
//! the data frames arriving at switch output queues and send a CNM to the
//! sampled frame's source; there the flow's reaction point sets the rate
//! of its limiter (installed by the first CNM, released back at line rate).

use super::{Event, Simulator};
use crate::cm::qcn::QcnRp;
use crate::net::frame::{Frame, FrameKind};

impl Simulator {
    /// A data frame arrives at output `out` of switch `node` on input `inp`
    /// (before admission: sampling counts frames that are then dropped).
    pub(super) fn qcn_point(&mut self, node: usize, inp: u32, out: u32, frame: &Frame) {
        let (Some(p), Some(cp)) = (&self.qcn, &mut self.qcn_cps[out as usize]) else {
            return;
        };
        let queue = self.ports[out as usize].occupancy;
        let Some(cnm) = cp.arrive(p, frame.size as u32, queue) else {
            return;
        };
        self.queues[out as usize].cn_negative += 1;
        let message = Frame {
            created: self.now,
            flow: frame.flow,
            dst_host: self.flow_src_host[frame.flow as usize],
            in_port: inp,
            cpid: out,
            aux: Frame::pack_offsets(cnm.qoff, cnm.qdelta),
            size: p.message_bytes as u16,
            kind: FrameKind::Cnm,
            qfb: cnm.qfb,
        };
        self.send_notification(node, message);
    }

    /// A CNM reaches the reaction point of its flow's limiter.
    pub(super) fn qcn_react(&mut self, cnm: Frame) {
        let p = self.qcn.expect("CNMs need QCN");
        let flow = self.limiter_of(cnm.flow);
        let f = flow as usize;
        let line = self.line_rate(flow);
        let rl = &mut self.limiters[f];
        if !rl.active {
            rl.install(line, 128);
            // Keep the timer generation: events of an earlier install are stale.
            let generation = self.qcn_rps[f].timer_generation;
            self.qcn_rps[f] = QcnRp::new(line);
            self.qcn_rps[f].timer_generation = generation;
            self.flows[f].rl_installs += 1;
        }
        rl.cpid = cnm.cpid;
        rl.messages += 1;
        self.qcn_rps[f].on_cnm(&p, cnm.qfb, self.now, &mut self.rp_rng[f]);
        self.qcn_schedule_timer(flow);
        self.qcn_rates_changed(flow);
    }

    /// The flow's limiter released a data frame of `bytes`: the byte counter runs.
    pub(super) fn qcn_bytes_sent(&mut self, flow: u32, bytes: u16) {
        let p = self.qcn.expect("QCN is configured");
        let line = self.line_rate(flow);
        let f = flow as usize;
        if self.qcn_rps[f].on_bytes_sent(&p, bytes as u32, line, &mut self.rp_rng[f]) {
            self.qcn_rates_changed(flow);
        }
    }

    pub(super) fn qcn_timer(&mut self, flow: u32, generation: u32) {
        let f = flow as usize;
        if !self.limiters[f].active || self.qcn_rps[f].timer_generation != generation {
            return;
        }
        let p = self.qcn.expect("QCN is configured");
        let line = self.line_rate(flow);
        self.qcn_rps[f].on_timer(&p, self.now, line, &mut self.rp_rng[f]);
        self.qcn_schedule_timer(flow);
        self.qcn_rates_changed(flow);
    }

    fn qcn_schedule_timer(&mut self, flow: u32) {
        let rp = &self.qcn_rps[flow as usize];
        let generation = rp.timer_generation;
        self.events
            .schedule(rp.timer_deadline, Event::QcnTimer { flow, generation });
    }

    /// The limiter follows CR; back at line rate it is released.
    fn qcn_rates_changed(&mut self, flow: u32) {
        let p = self.qcn.expect("QCN is configured");
        let f = flow as usize;
        let line = self.line_rate(flow);
        let rp = &mut self.qcn_rps[f];
        rp.at_line_rate(&p, line);
        let (cr, tr) = (rp.cr, rp.tr);
        self.limiters[f].rate = cr;
        self.rl_rate.set(f, self.now, cr as u64);
        self.rl_target.set(f, self.now, tr as u64);
        self.maybe_release(flow);
    }
}
