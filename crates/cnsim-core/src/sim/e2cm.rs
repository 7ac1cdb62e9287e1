//! E2CM's probe loop in the running network: probes sent behind a
//! limited flow's frames, reflected by the destination, and the source's
//! reaction to the reply.

use super::{event::Event, Role, Simulator};
use crate::cm::bcn::{self};
use crate::cm::e2cm::ProbeRecord;
use crate::net::frame::{Frame, FrameKind};

impl Simulator {
    /// A rate limiter was just installed: the flow starts probing its path.
    pub(super) fn start_probing(&mut self, flow: u32) {
        let Some(e) = self.e2cm else {
            return;
        };
        let s = &mut self.probe_src[flow as usize];
        s.probing = true;
        s.bytes_since = 0;
        s.last_probe = self.now;
        s.last_t_dst = None;
        s.q_prev = 0;
        s.generation = s.generation.wrapping_add(1);
        let generation = s.generation;
        self.events.schedule(
            self.now + e.probe_max_interval,
            Event::ProbeTimer { flow, generation },
        );
    }

    /// Send a probe behind the flow's frames: into the egress path like data.
    pub(super) fn send_probe(&mut self, node: usize, flow: u32) {
        let now = self.now;
        let e = self.e2cm.expect("probes need E2CM");
        let f = flow as usize;
        let s = &mut self.probe_src[f];
        let record = self.probes.take(ProbeRecord {
            flow,
            t_src: now,
            bytes: s.bytes_since,
            ..Default::default()
        });
        s.bytes_since = 0;
        s.last_probe = now;
        self.flows[f].probes_sent += 1;
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("flows start at hosts")
        };
        let probe = Frame {
            created: now,
            flow,
            size: e.probe_bytes as u16,
            dst_host: self.flow_dst_host[f],
            in_port: h.port,
            cpid: record,
            aux: 0,
            qfb: 0,
            kind: FrameKind::Probe,
        };
        self.release_to_egress(node, probe);
    }

    pub(super) fn probe_timer(&mut self, flow: u32, generation: u32) {
        let e = self.e2cm.expect("probes need E2CM");
        let s = &self.probe_src[flow as usize];
        if !s.probing || s.generation != generation {
            return;
        }
        let due = s.last_probe + e.probe_max_interval;
        let next = if self.now >= due {
            self.limiters[flow as usize].probe_due = true;
            self.rl_schedule(flow);
            self.now + e.probe_max_interval
        } else {
            due
        };
        self.events
            .schedule(next, Event::ProbeTimer { flow, generation });
    }

    /// The destination stamps the probe (and measures, in destination
    /// mode) and returns it to the source.
    pub(super) fn reflect_probe(&mut self, node: usize, probe: Frame) {
        let now = self.now;
        let e = self.e2cm.expect("probes need E2CM");
        let rec = self.probes.get_mut(probe.cpid);
        rec.t_dst = now;
        if let Some(sink) = self.probe_sink.get_mut(probe.flow as usize) {
            let (rate, excess) = sink.on_probe(now, rec.t_src);
            rec.rx_rate = rate;
            rec.fwd_excess = excess;
        }
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("probes end at hosts")
        };
        let port = h.port;
        let reply = Frame {
            created: now,
            flow: probe.flow,
            size: e.probe_bytes as u16,
            dst_host: self.flow_src_host[probe.flow as usize],
            in_port: port,
            cpid: probe.cpid,
            aux: 0,
            qfb: 0,
            kind: FrameKind::ProbeReply,
        };
        if e.expedite {
            self.ports[port as usize].expedited.push_back(reply);
            self.try_start(port);
        } else {
            self.egress_enqueue(node, reply);
        }
    }

    /// A reflected probe is back: the flow's own loop adjusts its limiter.
    pub(super) fn e2cm_react(&mut self, reply: Frame) {
        let now = self.now;
        let e = self.e2cm.expect("probes need E2CM");
        let f = reply.flow as usize;
        let record = *self.probes.get(reply.cpid);
        self.probes.give_back(reply.cpid);
        self.flows[f].probe_replies += 1;
        let s = &mut self.probe_src[f];
        if !s.probing {
            // The limiter was released while this probe was out.
            return;
        }
        let Some(q) = s.on_reply(e.measure, now, &record) else {
            return;
        };
        let fb = s.feedback(&e.control, q);
        let rl = &self.limiters[f];
        if fb == 0 || !rl.active {
            return;
        }
        let line = self.line_rate(reply.flow);
        let rl = &mut self.limiters[f];
        rl.rate = bcn::react(&e.control, rl.rate, fb, line);
        let rate = rl.rate;
        self.rl_rate.set(f, now, rate as u64);
        self.maybe_release(reply.flow);
    }
}
