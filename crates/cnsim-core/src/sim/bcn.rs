//! BCN in the running network (PROTOCOLS.md §2): congestion points on
//! switch output queues, the reaction point at the flow's limiter, drift.

use super::{event::Event, Simulator};
use crate::cm::bcn::{self, Feedback};
use crate::net::frame::{Frame, FrameKind};

impl Simulator {
    /// A data frame arrives at output `out` of switch `node` on input `inp`:
    /// its congestion point may sample it and notify the frame's source.
    pub(super) fn congestion_point(&mut self, node: usize, inp: u32, out: u32, frame: &Frame) {
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
    pub(super) fn send_notification(&mut self, node: usize, message: Frame) {
        let at = self.now + self.switch_latency[node];
        let port = message.in_port;
        let slot = self.parked.insert(message) as u32;
        self.events.schedule(at, Event::Inject { port, slot });
    }

    /// A notification reaches its flow's reaction point.
    pub(super) fn bcn_react(&mut self, frame: Frame) {
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

    pub(super) fn schedule_drift(&mut self, flow: u32) {
        let d = self.bcn.and_then(|p| p.drift).expect("drift is configured");
        let generation = self.limiters[flow as usize].drift_generation;
        self.events
            .schedule(self.now + d.interval, Event::Drift { flow, generation });
    }

    pub(super) fn drift_tick(&mut self, flow: u32, generation: u32) {
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
}
