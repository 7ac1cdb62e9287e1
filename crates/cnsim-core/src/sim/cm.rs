//! The engine's side of congestion management: where the hooks of
//! `cm::Scheme` are called and what they ask for is done. Nothing here
//! knows which scheme runs.

use super::{event::Event, Role, Simulator};
use crate::cm::{Arrival, CmTimer, Message, Notice, Reaction, Rp, Scheme, Sign};
use crate::net::frame::{Frame, FrameKind};
use crate::net::rate_limiter::NO_CP;

/// α's series holds α × 2^32 as an integer level.
pub(super) const ALPHA_UNIT: f64 = 4_294_967_296.0;

impl Simulator {
    /// A data frame received on input `inp` arrived at output `out` of
    /// switch `node`, which held `queue` bytes before it (admitted, or for
    /// QCN also dropped): the congestion point may notify the frame's
    /// source. Out of line: the caller tests `has_congestion_points` first.
    pub(super) fn congestion_point(
        &mut self,
        node: usize,
        inp: u32,
        out: u32,
        frame: &Frame,
        queue: u64,
    ) {
        let arrival = Arrival { out, frame, queue };
        let Some(Notice { sign, message: m }) = self.scheme.congestion_point(arrival) else {
            return;
        };
        let q = &mut self.queues[out as usize];
        match sign {
            Sign::Negative => q.cn_negative += 1,
            Sign::Positive => q.cn_positive += 1,
            Sign::Stop => q.cn_stop += 1,
        }
        let dst_host = self.flow_src_host[frame.flow as usize];
        let message = self.control_frame(frame.flow, dst_host, inp, m);
        self.send_notification(node, message);
    }

    /// A scheme's message as a frame of `flow` toward `dst_host`.
    fn control_frame(&self, flow: u32, dst_host: u32, in_port: u32, m: Message) -> Frame {
        Frame {
            created: self.now,
            flow,
            dst_host,
            tag: Frame::tag(
                in_port,
                self.notification_class
                    .unwrap_or(self.flow_class[flow as usize]),
            ),
            cpid: m.cpid,
            aux: m.aux,
            size: m.bytes,
            kind: m.kind,
            qfb: m.qfb,
        }
    }

    /// A congestion point's message is built and queued like a frame
    /// received on the sampled frame's input, after the switch latency.
    pub(super) fn send_notification(&mut self, node: usize, message: Frame) {
        let at = self.now + self.switch_latency[node];
        let port = message.in_port();
        let slot = self.parked.insert(message) as u32;
        self.events.schedule(at, Event::Inject { port, slot });
    }

    /// A control frame reaches a host: the scheme may answer it at the
    /// destination (E2CM reflects probes); else it is a notification for
    /// the host's reaction point, effective after the response time.
    pub(super) fn control_at_host(&mut self, node: usize, frame: Frame) {
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("control frames end at hosts")
        };
        let (port, response_time) = (h.port, h.response_time);
        let Some((m, expedite)) = self.scheme.at_destination(&frame, self.now) else {
            self.schedule_notify(self.now + response_time, frame);
            return;
        };
        if expedite {
            let dst_host = self.flow_src_host[frame.flow as usize];
            let reply = self.control_frame(frame.flow, dst_host, port, m);
            self.ports[port as usize].expedited.push_back(reply);
            self.try_start(port);
        } else {
            self.reply_to_source(node, frame.flow, m);
        }
    }

    /// A data frame reached its destination host `node` at `at`: the
    /// scheme may answer it toward the flow's source (DCQCN's CNP).
    #[inline]
    pub(super) fn scheme_delivered(&mut self, node: usize, frame: &Frame, at: crate::units::Time) {
        if let Some(m) = self.scheme.delivered(frame, at) {
            if at == self.now {
                self.reply_to_source(node, frame.flow, m);
            } else {
                self.reply_when_arrived(node, frame.flow, m, at);
            }
        }
    }

    /// A RoCE segment reached its receiver `node`: the scheme's answer
    /// (DCQCN's CNP) is a frame to the source, or a flag on the receiver's
    /// next ACK (`Scheme::answers_on_acks`): true if the ACK is to carry
    /// one.
    #[inline]
    pub(super) fn conn_scheme_delivered(&mut self, node: usize, frame: &Frame) -> bool {
        if !self.scheme.answers_on_acks() {
            self.scheme_delivered(node, frame, self.now);
            return false;
        }
        self.scheme.delivered(frame, self.now).is_some()
    }

    /// An ACK that carries a CNP reached the flow's source: the CNP takes
    /// effect after the host's response time, as one that came as a frame
    /// (and after the ACK, which may have completed the flow).
    pub(super) fn cnp_from_ack(&mut self, ack: &Frame) {
        let node = self.flow_src_node[ack.flow as usize] as usize;
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("flows start at hosts")
        };
        let at = self.now + h.response_time;
        let m = Message {
            kind: FrameKind::Cnp,
            bytes: ack.size,
            cpid: NO_CP,
            aux: 0,
            qfb: 0,
        };
        let cnp = self.control_frame(ack.flow, ack.dst_host, ack.in_port(), m);
        self.schedule_notify(at, cnp);
    }

    /// `reply_to_source` for a frame delivered at its last bit, which
    /// arrives at `at`: the answer leaves then.
    #[inline(never)]
    fn reply_when_arrived(&mut self, node: usize, flow: u32, m: Message, at: crate::units::Time) {
        let (port, mut reply) = self.reply_frame(node, flow, m);
        reply.created = at;
        let slot = self.parked.insert(reply) as u32;
        self.events.schedule(at, Event::Reply { port, slot });
    }

    /// Host `node`, a destination of `flow`, sends the scheme's message `m`
    /// to the flow's source through its egress buffer.
    pub(super) fn reply_to_source(&mut self, node: usize, flow: u32, m: Message) {
        let (_, reply) = self.reply_frame(node, flow, m);
        self.egress_enqueue(node, reply);
    }

    /// The frame carrying `m` from host `node`, a destination of `flow`,
    /// to the flow's source, and the host's port it leaves by.
    fn reply_frame(&self, node: usize, flow: u32, m: Message) -> (u32, Frame) {
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("destinations are hosts")
        };
        let dst_host = self.flow_src_host[flow as usize];
        (h.port, self.control_frame(flow, dst_host, h.port, m))
    }

    /// A notification reaches the reaction point of its flow's limiter
    /// (none once the flow is complete: `end_reaction_point`).
    pub(super) fn reaction_point(&mut self, message: Frame) {
        if self.rp_ended(message.flow) {
            return;
        }
        let row = self.limiter_of(message.flow);
        let r = self.with_rp(row, |s, rp| s.reaction_point(&message, rp));
        self.apply(row, r);
    }

    /// A complete workload flow's own limiter is removed: the scheme's
    /// timers for it lapse (they find it removed), and notifications that
    /// still reach it are ignored (`reaction_point`). Nothing it controlled
    /// is left to send.
    pub(super) fn end_reaction_point(&mut self, flow: u32) {
        if self.rp_ended(flow) && self.limiters.get(flow as usize).is_some_and(|l| l.active) {
            self.remove_limiter(flow);
            // Every byte acknowledged has left the queue: its ring goes
            // back too.
            let queue = &mut self.limiters[flow as usize].queue;
            if queue.is_empty() {
                *queue = crate::engine::Fifo::new();
            }
        }
    }

    /// Whether `flow` is complete (`sender_done`) and the limiter row it
    /// would use is its own (a shared one serves other flows).
    #[inline]
    fn rp_ended(&self, flow: u32) -> bool {
        #[cfg(test)]
        if self.rp_outlives_flow {
            return false;
        }
        self.sender_done(flow) && self.limiter_of(flow) == flow
    }

    /// A scheme timer of the limiter of `row` ran out.
    pub(super) fn cm_timer(&mut self, row: u32, timer: CmTimer, generation: u32) {
        let r = self.with_rp(row, |s, rp| s.timer(timer, generation, rp));
        self.apply(row, r);
    }

    /// The limiter of `row` released a data frame of `bytes`.
    #[inline]
    pub(super) fn cm_released(&mut self, row: u32, bytes: u16) {
        if !self.scheme.watches_releases() {
            return;
        }
        let r = self.with_rp(row, |s, rp| s.released(bytes, rp));
        self.apply(row, r);
    }

    /// Send the probe due at the limiter of `flow`, into the egress path like data.
    pub(super) fn send_probe(&mut self, node: usize, flow: u32) {
        let m = self.scheme.probe(flow, self.now);
        let Role::Host(h) = &self.roles[node] else {
            unreachable!("flows start at hosts")
        };
        let dst_host = self.flow_dst_host[flow as usize];
        let probe = self.control_frame(flow, dst_host, h.port, m);
        self.release_to_egress(node, probe);
    }

    /// Call a reaction-point hook on the limiter of `row`.
    #[inline]
    fn with_rp(&mut self, row: u32, hook: impl FnOnce(&mut Scheme, Rp) -> Reaction) -> Reaction {
        let limiter = &mut self.limiters[row as usize];
        let rp = Rp {
            row,
            now: self.now,
            line: limiter.line,
            limiter,
        };
        let r = hook(&mut self.scheme, rp);
        self.note_active(row);
        r
    }

    /// The row of flow `f`'s limiter levels (`rl_rate`, `rl_occ`,
    /// `rl_target`), made the first time it is asked for, or None for a
    /// workload flow (see `level_row`).
    #[inline]
    pub(super) fn limiter_row(&mut self, f: usize) -> Option<usize> {
        self.level_row(f)?;
        Some(match self.rl_rows.get(f) {
            Some(row) => row,
            None => self.new_limiter_row(f),
        })
    }

    /// A row for flow `f`'s limiter levels, holding what they were since
    /// the start: the line rate and an empty queue.
    #[cold]
    #[inline(never)]
    fn new_limiter_row(&mut self, f: usize) -> usize {
        let line = self.limiters[f].line as u64;
        let row = self.rl_rows.add(f);
        let rate = self.rl_rate.push_row(line);
        let occ = self.rl_occ.push_row(0);
        debug_assert!(row == rate && row == occ, "the limiter series share rows");
        if let Some(target) = self.rl_target.as_mut() {
            target.push_row(line);
        }
        row
    }

    /// Record flow `f`'s α (in [0, 1]) in its series, in units of 2^-32.
    pub(super) fn set_alpha(&mut self, f: usize, alpha: f64) {
        if let Some(row) = self.level_row(f) {
            self.flow_alpha
                .set(row, self.now, (alpha * ALPHA_UNIT) as u64);
        }
    }

    /// Do what a hook asked for (most of a limiter's releases ask nothing).
    #[inline]
    fn apply(&mut self, row: u32, r: Reaction) {
        if !r.is_nothing() {
            self.apply_reaction(row, r);
        }
    }

    /// `apply` when there is something to do, in a fixed order: series and
    /// counters, the limiter's release event, timers, then removal of a
    /// limiter back at its line rate.
    #[inline(never)]
    fn apply_reaction(&mut self, row: u32, r: Reaction) {
        let (f, now) = (row as usize, self.now);
        if r.installed || r.rate_changed || r.target.is_some() {
            if let Some(row) = self.limiter_row(f) {
                if r.rate_changed {
                    self.rl_rate.set(row, now, self.limiters[f].rate as u64);
                }
                if let (Some(target), Some(series)) = (r.target, self.rl_target.as_mut()) {
                    series.set(row, now, target as u64);
                }
            }
        }
        if let Some(alpha) = r.alpha {
            self.set_alpha(f, alpha);
        }
        if r.installed {
            self.flows[f].rl_installs += 1;
        }
        if r.wake {
            self.rl_schedule(row);
        }
        for t in r.timers.into_iter().flatten() {
            let (timer, generation) = (t.timer, t.generation);
            let ev = Event::CmTimer {
                flow: row,
                generation,
                timer,
            };
            self.events.schedule(t.at, ev);
        }
        if r.rate_changed {
            self.maybe_release(row);
        }
    }
}
