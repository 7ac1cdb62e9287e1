//! Switches and sinks: a received frame is delivered at its host or
//! admitted into its output queue (or dropped).

use super::{Role, Simulator};
use crate::engine::rng::{unit_open0, Stream};
use crate::flowctl::pause::PauseSpec;
use crate::flowctl::pfc::PfcSpec;
use crate::metrics::series::BinnedLevel;
use crate::net::ecn::{Ecn, MarkAt};
use crate::net::frame::{Frame, FrameKind};
use crate::net::mmu::{Admission, Mmu};
use crate::net::port::Port;
use crate::net::routing::NO_ROUTE;
use crate::net::topology::BufferModel;
use crate::units::{Bytes, Time};

/// What a frame's admission reads comes first, in one cache line with the
/// role's tag (`Role` is `repr(C, u8)`): the buffer, its limit and the
/// shared buffer's MMU.
#[repr(C)]
pub(super) struct SwitchState {
    pub(super) buffer: BufferModel,
    /// The shared buffer's MMU (`BufferModel::Shared`).
    pub(super) shared: Option<Box<SharedBuffer>>,
    pub(super) queue_limit: Option<u64>,
    pub(super) pause: Option<PauseSpec>,
    pub(super) pfc: Option<PfcSpec>,
    /// The stream of the switch's RED marking draws (`ecn`); the rule of
    /// each port is in its `PortClasses`.
    pub(super) ecn_rng: Option<Box<Stream>>,
}

// After `Role`'s one-byte tag (its payload starts at 8), the admission
// fields end within the entry's first line.
const _: () = assert!(
    8 + std::mem::offset_of!(SwitchState, queue_limit) + std::mem::size_of::<Option<u64>>() <= 64
);

/// A shared-buffer switch's MMU and what the results report of it.
pub(super) struct SharedBuffer {
    pub(super) mmu: Mmu,
    /// Its row in the buffer series.
    pub(super) row: usize,
    pub(super) max_shared: u64,
    /// The peak of the headroom in use over the switch's ingress queues.
    pub(super) max_headroom: u64,
    /// Lossless frames that found their headroom full (PFC too late).
    pub(super) headroom_overflows: u64,
}

/// The shared buffer of switch `node`.
#[inline]
fn shared_buffer(roles: &mut [Role], node: usize) -> &mut SharedBuffer {
    match &mut roles[node] {
        Role::Switch(SwitchState {
            shared: Some(b), ..
        }) => b,
        _ => unreachable!("node {node} has a shared buffer"),
    }
}

impl SharedBuffer {
    /// Bytes of the shared pool and of headroom in use.
    fn levels(&self) -> (u64, u64) {
        (self.mmu.shared_used().0, self.mmu.headroom_used().0)
    }
}

/// A port without rows in the ingress series.
pub(super) const NO_INGRESS_ROW: u32 = u32::MAX;

/// Switch ingress `port` holds `held` bytes of `class` from `now` on: its
/// row of the ingress series. (Callers skip it when the run does not
/// record them, `rows` being empty.)
#[inline]
pub(super) fn record_ingress(
    rows: &[u32],
    series: &mut BinnedLevel,
    port: u32,
    class: u8,
    now: Time,
    held: u64,
) {
    if let Some(&base) = rows.get(port as usize) {
        if base != NO_INGRESS_ROW {
            series.set((base + class as u32) as usize, now, held);
        }
    }
}

/// A draw of switch `node`'s RED stream, uniform in (0, 1]: out of line,
/// being taken only on RED's ramp, so that `ecn_mark` stays small.
#[cold]
#[inline(never)]
fn red_draw(roles: &mut [Role], node: usize) -> f64 {
    match &mut roles[node] {
        Role::Switch(SwitchState {
            ecn_rng: Some(rng), ..
        }) => unit_open0(rng),
        _ => unreachable!("a marking port's switch has its stream"),
    }
}

impl Simulator {
    pub(super) fn arrive(&mut self, port: u32, mut frame: Frame) {
        let now = self.now;
        let node = self.ports[port as usize].node as usize;
        let sw = match &self.roles[node] {
            Role::Host(h) => {
                debug_assert_eq!(h.host_number, frame.dst_host, "hosts do not forward");
                match frame.kind {
                    FrameKind::Data if self.has_conn(frame.flow) => self.conn_segment(node, frame),
                    FrameKind::Ack => self.conn_ack(frame),
                    FrameKind::Data => self.deliver_udp(node, frame, now),
                    _ => self.control_at_host(node, frame),
                }
                return;
            }
            Role::Switch(sw) => sw,
        };
        let out = self.routes.next_port(node, frame.dst_host, frame.flow);
        debug_assert_ne!(out, NO_ROUTE, "validated: every destination is reachable");
        if !frame.is_data() && self.is_expedited(frame.kind) {
            frame.set_in_port(port);
            self.ports[out as usize].expedited.push_back(frame);
            self.try_start(out);
            return;
        }
        let size = frame.size as u64;
        let o = &self.ports[out as usize];
        let fits = match sw.buffer {
            BufferModel::PerOutput { bytes } => o.occupancy + size <= bytes,
            BufferModel::PerInput { bytes } => {
                self.ports[port as usize].input_occupancy + size <= bytes
            }
            // Decided by the MMU below, once the other limits pass.
            BufferModel::Unlimited | BufferModel::Shared { .. } => true,
        } && sw.queue_limit.is_none_or(|l| o.occupancy + size <= l);
        // A shared buffer's MMU admits (and decides PFC) in one call.
        let shared = matches!(sw.buffer, BufferModel::Shared { .. });
        let fits = fits && (!shared || self.shared_admit(node, port, out, &frame));
        #[cfg(test)]
        let fits = fits || self.fault == super::invariants::Fault::IgnoreBuffer(out);
        let sampled = frame.is_data() && self.scheme.has_congestion_points();
        if sampled && self.scheme.samples_dropped_frames() {
            let found = self.ports[out as usize].occupancy;
            self.congestion_point(node, port, out, &frame, found);
        }
        if !fits {
            let q = &mut self.queues[out as usize];
            if matches!(frame.kind, FrameKind::Data | FrameKind::Ack) {
                q.drops_frames += 1;
                q.drops_bytes += size;
                if let Some(pc) = self.ports[out as usize].classes.as_deref_mut() {
                    pc.dropped(frame.class(), size);
                }
                self.queue_drops.add(out as usize, now, 1);
                self.frame_lost(&frame);
                #[cfg(test)]
                if self.fault == super::invariants::Fault::DoubleDrop {
                    self.frame_lost(&frame);
                }
            } else {
                q.cn_dropped += 1;
                self.scheme.message_dropped(&frame);
            }
            return;
        }
        frame.set_in_port(port);
        let o = &mut self.ports[out as usize];
        let found = o.occupancy;
        o.enqueue(frame);
        #[cfg(test)]
        match self.fault {
            super::invariants::Fault::LoseOccupancy(p) if p == out => o.occupancy -= size,
            super::invariants::Fault::ExtraByte(p) if p == out => {
                o.occupancy += 1;
                self.fault = super::invariants::Fault::None;
            }
            _ => {}
        }
        let occ = o.occupancy;
        // BCN's and ECM's congestion points sample the frames the queue
        // takes in, never one the buffer dropped (docs/model.md).
        if sampled && !self.scheme.samples_dropped_frames() {
            self.congestion_point(node, port, out, &frame, found);
        }
        let ip = &mut self.ports[port as usize];
        if ip.owner.counts_input() {
            ip.input_occupancy += size;
        }
        if ip.classes.is_some() && !shared && self.counts_ingress() {
            self.ingress_changed(node, port, frame.class(), size as i64);
        }
        self.check_admitted(node, port, out);
        self.occupancy_changed(out as usize, occ);
        self.pause_check(node, out, port);
        if self.ecn_at_enqueue {
            self.ecn_mark_enqueued(out, frame.class());
        }
        self.try_start(out);
    }

    /// The MMU of shared-buffer switch `node` admits `frame` from `inp` to
    /// `out` (and counts it, and PFC may hold the class upstream) or
    /// refuses it. A frame that fits its queue's reserve changes neither
    /// the pool nor headroom, and usually nothing else: it takes the short
    /// path, inline, through its ingress cell alone.
    #[inline(always)]
    fn shared_admit(&mut self, node: usize, inp: u32, out: u32, frame: &Frame) -> bool {
        let class = frame.class();
        if !self
            .ingress_cells
            .admit_to_reserve(inp, class, frame.size as u32)
        {
            return self.shared_admit_to_pool(node, inp, out, frame);
        }
        self.reserve_changed(node, inp, class);
        true
    }

    /// Ingress (`inp`, `class`) of switch `node`, holding reserve only,
    /// has taken or returned a frame: its series and a PFC decision, out
    /// of line, where there may be something to record or change.
    #[inline(always)]
    fn reserve_changed(&mut self, node: usize, inp: u32, class: u8) {
        // The copy is what the MMU says (tests: the pool paths refresh it).
        #[cfg(test)]
        {
            let calm = shared_buffer(&mut self.roles, node).mmu.calm();
            assert_eq!(self.pool_calm[node], calm, "switch {node}'s copy of calm");
            self.calm_looks[usize::from(calm)] += 1;
        }
        if !self.ingress_row.is_empty()
            || self
                .ingress_cells
                .may_change_pfc(inp, class, self.pool_calm[node])
        {
            self.shared_changed_out_of_line(node, inp, class);
        }
    }

    /// `shared_admit` of a frame beyond its queue's reserve: into the
    /// shared pool or headroom, or refused.
    #[inline(never)]
    fn shared_admit_to_pool(&mut self, node: usize, inp: u32, out: u32, frame: &Frame) -> bool {
        let queued = self.ports[out as usize].class_occupancy(frame.class());
        let b = shared_buffer(&mut self.roles, node);
        let before = b.levels();
        let cells = &mut self.ingress_cells;
        match b
            .mmu
            .admit(cells, inp, frame.class(), frame.size as u32, queued)
        {
            Admission::Admitted => {
                self.pool_calm[node] = b.mmu.calm();
                let (shared, headroom) = b.levels();
                b.max_shared = b.max_shared.max(shared);
                b.max_headroom = b.max_headroom.max(headroom);
                self.buffer_levels_changed(node, before);
                self.shared_changed(node, inp, frame.class());
                true
            }
            Admission::Dropped => false,
            Admission::HeadroomOverflow => {
                b.headroom_overflows += 1;
                false
            }
        }
    }

    /// A frame of `class` and `bytes` admitted from `inp` at switch
    /// `node` has left: the MMU returns its bytes, and PFC may release the
    /// class upstream. Inline for a queue within its reserve, as in
    /// `shared_admit`.
    #[inline(always)]
    pub(super) fn shared_release(&mut self, node: usize, inp: u32, class: u8, bytes: u32) {
        if self.ingress_cells.release_from_reserve(inp, class, bytes) {
            self.reserve_changed(node, inp, class);
        } else {
            self.shared_release_from_pool(node, inp, class, bytes);
        }
    }

    /// `shared_release` for a queue holding shared room or headroom.
    #[inline(never)]
    fn shared_release_from_pool(&mut self, node: usize, inp: u32, class: u8, bytes: u32) {
        let b = shared_buffer(&mut self.roles, node);
        let before = b.levels();
        b.mmu.release(&mut self.ingress_cells, inp, class, bytes);
        self.pool_calm[node] = b.mmu.calm();
        self.buffer_levels_changed(node, before);
        self.shared_changed(node, inp, class);
    }

    /// The shared pool or headroom in use at `node` may have changed from
    /// `before` (their levels): the series of those that did.
    #[inline(always)]
    fn buffer_levels_changed(&mut self, node: usize, before: (u64, u64)) {
        let now = self.now;
        let b = shared_buffer(&mut self.roles, node);
        let (row, (shared, headroom)) = (b.row, b.levels());
        if shared != before.0 {
            self.buffer_shared.set(row, now, shared);
        }
        if headroom != before.1 {
            self.buffer_headroom.set(row, now, headroom);
        }
    }

    /// `shared_changed` for the paths of a queue within its reserve, where
    /// it is rare: out of line, so that it does not weigh on them.
    #[inline(never)]
    fn shared_changed_out_of_line(&mut self, node: usize, inp: u32, class: u8) {
        self.shared_changed(node, inp, class);
    }

    /// What ingress (`inp`, `class`) of shared-buffer switch `node` holds
    /// has changed: its ingress series, and PFC may change what it holds
    /// upstream. Inline in the pool's paths, which always take it.
    #[inline(always)]
    fn shared_changed(&mut self, node: usize, inp: u32, class: u8) {
        let now = self.now;
        if !self.ingress_row.is_empty() {
            let held = self.ingress_cells.used(inp, class).total().0;
            record_ingress(
                &self.ingress_row,
                &mut self.ingress_occ,
                inp,
                class,
                now,
                held,
            );
        }
        // The MMU's thresholds (static or dynamic) on shared use and
        // headroom; none for a lossy class.
        let b = shared_buffer(&mut self.roles, node);
        if let Some(hold) = b.mmu.pfc_change(&self.ingress_cells, inp, class) {
            self.pfc_change(inp, class, hold);
        }
    }

    /// `ecn_mark` for the frame just queued, out of line: marking at
    /// enqueue is the rarer placement, and inlined it would weigh on every
    /// arrival.
    #[inline(never)]
    fn ecn_mark_enqueued(&mut self, out: u32, class: u8) {
        self.ecn_mark(out, class, MarkAt::Enqueue, None);
    }

    /// Whether a frame leaving `class` at port `p`, which marks at
    /// dequeue, may be marked: not while the queue behind it is at or below
    /// the level where the port's rule never marks (most departures), which
    /// the queue's own count settles without `ecn_mark`.
    #[inline(always)]
    pub(super) fn may_mark_leaving(&self, p: &Port, class: u8) -> bool {
        let Some(i) = p.marking() else {
            return false;
        };
        // The port's bytes bound its class's: most departures leave the
        // class's line alone.
        let quiet = self.ecn_marks[i].rule.quiet_up_to().0;
        p.occupancy > quiet && p.class_occupancy(class) > quiet
    }

    /// ECN at output `out` for a frame of `class`: at enqueue the frame is
    /// the class queue's tail and the queue ahead of it is what it found;
    /// at dequeue it is `leaving`, and the queue is what stays behind it.
    /// An ECN-capable frame the port's rule picks becomes CE.
    #[inline]
    pub(super) fn ecn_mark(
        &mut self,
        out: u32,
        class: u8,
        at: MarkAt,
        leaving: Option<&mut Frame>,
    ) {
        let p = &mut self.ports[out as usize];
        let node = p.node as usize;
        let Some(i) = p.marking() else {
            return;
        };
        let m = self.ecn_marks[i];
        if m.at != at || m.classes & (1 << class) == 0 {
            return;
        }
        let queued = p.class_occupancy(class);
        let (frame, queue) = match leaving {
            Some(f) => (f, queued),
            None => {
                let f = p.last_queued(class).expect("the frame just queued");
                let size = f.size as u64;
                (f, queued - size)
            }
        };
        if !frame.ecn().is_ect() {
            return;
        }
        let roles = &mut self.roles;
        if m.rule
            .should_mark_drawing(Bytes(queue), || red_draw(roles, node))
        {
            frame.set_ecn(frame.ecn().mark());
            let pc = self.ports[out as usize]
                .classes
                .as_deref_mut()
                .expect("ECN ports have classes");
            pc.marked(class);
        }
    }

    /// A data frame or an ACK was dropped in the network: a UDP frame
    /// counts against its flow's volume, a TCP segment or ACK as a loss
    /// (TCP sends it again).
    pub(super) fn frame_lost(&mut self, frame: &Frame) {
        let f = frame.flow as usize;
        match frame.kind {
            FrameKind::Ack => self.flows[f].acks_dropped += 1,
            _ if self.has_conn(frame.flow) => self.flows[f].segments_dropped += 1,
            _ => self.flows[f].volume.drop_frame(frame.size as u64),
        }
    }

    /// The tag of a data frame of `flow` leaving its source on `port`: the
    /// flow's class, ECT(0) if the flow is ECN-capable.
    #[inline]
    pub(super) fn data_tag(&self, port: u32, flow: u32) -> u32 {
        let f = flow as usize;
        let ecn = if self.flow_ect[f] {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        };
        Frame::tag_ecn(port, self.flow_class[f], ecn)
    }

    /// Control frames of this kind travel in the expedited class.
    pub(super) fn is_expedited(&self, kind: FrameKind) -> bool {
        self.scheme.expedites(kind)
    }

    /// Record a queue's new occupancy (series and time to stability).
    #[inline]
    pub(super) fn occupancy_changed(&mut self, port: usize, occ: u64) {
        self.queue_occ.set(port, self.now, occ);
        if let Some(w) = &mut self.stability {
            if w.queue as usize == port {
                w.observe(self.now, occ);
            }
        }
    }
}
