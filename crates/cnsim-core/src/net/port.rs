//! A port: one end of a full-duplex link, with the output queue that feeds
//! its transmitter. A frame stays at the head of the queue (and in the
//! buffer) until its last bit has left.

use super::ecn::{MarkAt, PortMarking};
use super::frame::Frame;
use super::sched::{Classes, Dwrr, SchedSpec, Scheduler};
use crate::flowctl::pause::PortPause;
use crate::flowctl::pfc::{PfcEffects, PfcFrame, PfcReceiver, PfcSender, PFC_CLASSES};
use crate::units::{Rate, Time};
use std::collections::VecDeque;

/// The rate at which the link into a host is drained: the full link rate,
/// except while the schedule says "reduced".
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ServiceSchedule {
    pub rate: Rate,
    pub start: Time,
    pub end: Time,
    /// `Some((period, reduced))`: in each period from `start`, the first `reduced` is at `rate`.
    pub periodic: Option<(Time, Time)>,
}

impl ServiceSchedule {
    pub fn is_reduced(&self, t: Time) -> bool {
        if t < self.start || t >= self.end {
            return false;
        }
        match self.periodic {
            None => true,
            Some((period, reduced)) => (t.0 - self.start.0) % period.0 < reduced.0,
        }
    }
}

pub struct Port {
    pub node: u32,
    pub peer: u32,
    /// What the port's node does when a frame leaves the port.
    pub owner: Owner,
    /// In a split run: the peer is simulated by another partition, so what
    /// this port sends it is a message (docs/parallel.md).
    pub peer_remote: bool,
    pub rate: Rate,
    /// Picoseconds per byte at `rate` when that is a whole number (it is for
    /// every rate that divides 8 Tb/s, e.g. 10 Gb/s: 800 ps), else 0.
    ps_per_byte: u64,
    pub delay: Time,
    /// Reduced service-rate schedule (ports that feed a slow host); boxed,
    /// being rare, to keep the port small.
    pub service: Option<Box<ServiceSchedule>>,
    /// The output queue of a port without classes (with classes, each
    /// class has its own in `PortClasses`, and this one stays empty).
    pub queue: VecDeque<Frame>,
    /// Strict-priority class for small control frames (reflected probes):
    /// served before `queue`, outside the buffer accounting.
    pub expedited: VecDeque<Frame>,
    /// Bytes in `queue`, including the frame being transmitted.
    pub occupancy: u64,
    /// What the transmitter is doing.
    pub tx: TxState,
    /// Bytes held by this switch that arrived on this port (input partition).
    pub input_occupancy: u64,
    /// Link-level flow control: PAUSE sent upstream and received.
    pub pause: PortPause,
    /// Traffic classes beyond the one `queue` holds, and PFC; `None` when
    /// the scenario has one class and no PFC (the studies' fast path).
    /// Set with `set_classes`.
    pub classes: Option<Box<PortClasses>>,
    /// With classes: which have frames, which are paused, whose turn it
    /// is.
    turn: ClassTurn,
}

/// What the node a port belongs to does when a frame leaves the port,
/// fixed at set-up. A departure reads it with the port itself: the node's
/// own state is a line of its own, far from the port's at fabric scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Host,
    /// A switch. `shared`: its MMU releases the frame's bytes. `counts_input`:
    /// it keeps the bytes each input port holds (`Port::input_occupancy`),
    /// which a per-input buffer and per-input PAUSE read; other switches
    /// leave that count at zero.
    Switch {
        shared: bool,
        counts_input: bool,
    },
}

impl Owner {
    /// The node keeps `Port::input_occupancy` of its ports.
    #[inline(always)]
    pub fn counts_input(self) -> bool {
        matches!(
            self,
            Owner::Switch {
                counts_input: true,
                ..
            }
        )
    }
}

/// What a port's classes change or read at every frame besides their own
/// queues: which classes have frames, which PFC has paused, whether a PFC
/// frame waits, its ECN marking and which classes mark as they leave, and
/// the scheduler's turn. Nine bytes, kept in the port itself (where its layout has
/// padding), so that an enqueue and a pick read no line of `PortClasses`
/// but those of the classes they touch.
#[derive(Debug, Clone, Copy)]
struct ClassTurn {
    /// Bit c: class c has a frame queued.
    backlogged: u8,
    /// Bit c: PFC has paused class c (the `pfc_receiver`'s mask, copied
    /// where it changes: `pfc_received`, `pfc_expired`).
    paused: u8,
    /// `PortClasses::pfc_pending` holds a frame.
    pfc_waiting: bool,
    /// The port's ECN marking: its index in the run's table of markings
    /// (`NO_MARKING`: none), set by `set_marking`.
    marking: u16,
    /// Bit c: class c's queue marks ECN at dequeue: a departure that marks
    /// nothing reads no more than this.
    dequeue_marks: u8,
    sched: Scheduler,
}

/// `ClassTurn::marking` of a port that does not mark.
pub const NO_MARKING: u16 = u16::MAX;

// The port's turn takes what was padding and 8 bytes more (232 before
// the ECN marking and the waiting PFC frame joined it, 240 while the
// frames on its link waited in the port); PAUSE's crossings 8 more (208
// before).
const _: () = assert!(std::mem::size_of::<Port>() == 216);

/// A port's traffic classes: an output queue per class, the scheduler
/// choosing among them, the per-class ingress accounting PFC decides on,
/// and the port's PFC state.
///
/// Laid out for a fabric, where a port's classes are touched a few times
/// per frame, far apart in time, and each cache line they spread over is a
/// likely miss (`repr(C)`): the first line holds a PFC frame waiting to
/// go out; then one line per class, its queue with its counters and DWRR
/// state; then what PFC and the results read. What every frame reads or
/// changes besides is in the port itself (`ClassTurn`): a transmission
/// reads the first line only when a PFC frame waits.
#[repr(C, align(64))]
pub struct PortClasses {
    /// A PFC frame waiting to go out ahead of data, empty when none waits
    /// (decisions taken while it waits join it): `Port::queue_pfc`.
    pfc_pending: PfcFrame,
    class: [ClassQueue; PFC_CLASSES],
    /// PFC this port's transmitter has received, per class.
    pfc_receiver: PfcReceiver,
    /// PFC this port sends upstream, per class.
    pub pfc_sender: PfcSender,
    /// Frames and bytes dropped, per class.
    drops: [(u64, u64); PFC_CLASSES],
    /// Frames each class's queue marked CE.
    ecn_marked: [u64; PFC_CLASSES],
    /// Bytes held by this switch that arrived on this port, per class.
    pub ingress: [u64; PFC_CLASSES],
    /// The PFC frame on the wire.
    pub pfc_on_wire: PfcFrame,
}

// What a transmission reads before the classes fits one line.
const _: () = assert!(std::mem::offset_of!(PortClasses, class) == 64);

/// One class of a port: its queue, the counters a frame's enqueue and
/// dequeue update, and its DWRR state, in one cache line.
#[derive(Default)]
#[repr(C, align(64))]
struct ClassQueue {
    frames: VecDeque<Frame>,
    /// Bytes queued (the port's `occupancy` is the sum over classes).
    occupancy: u64,
    max_occupancy: u64,
    tx_bytes: u64,
    dwrr: Dwrr,
}

const _: () = assert!(std::mem::size_of::<ClassQueue>() == 64);

impl Classes for [ClassQueue; PFC_CLASSES] {
    #[inline(always)]
    fn head(&self, class: u8) -> Option<u32> {
        self[class as usize].frames.front().map(|f| f.size as u32)
    }

    #[inline(always)]
    fn dwrr(&mut self, class: u8) -> &mut Dwrr {
        &mut self[class as usize].dwrr
    }
}

/// What the results report of one class of a port.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClassStats {
    pub tx_bytes: u64,
    pub drops_frames: u64,
    pub drops_bytes: u64,
    pub max_occupancy: u64,
    /// Frames this queue marked CE.
    pub ecn_marked: u64,
}

impl PortClasses {
    /// A frame of `class` and `bytes` was dropped on its way into this
    /// port's queue.
    #[inline(never)]
    pub fn dropped(&mut self, class: u8, bytes: u64) {
        let d = &mut self.drops[class as usize];
        d.0 += 1;
        d.1 += bytes;
    }

    /// The frame leaving the queue of `class` was marked CE.
    pub fn marked(&mut self, class: u8) {
        self.ecn_marked[class as usize] += 1;
    }

    /// Bytes queued in `class`.
    #[inline]
    pub fn occupancy(&self, class: u8) -> u64 {
        self.class[class as usize].occupancy
    }

    pub fn stats(&self, class: u8) -> ClassStats {
        let q = &self.class[class as usize];
        let (drops_frames, drops_bytes) = self.drops[class as usize];
        ClassStats {
            tx_bytes: q.tx_bytes,
            drops_frames,
            drops_bytes,
            max_occupancy: q.max_occupancy,
            ecn_marked: self.ecn_marked[class as usize],
        }
    }

    /// The PFC this port's transmitter has received.
    pub fn pfc_receiver(&self) -> &PfcReceiver {
        &self.pfc_receiver
    }

    pub fn new(sched: &SchedSpec) -> PortClasses {
        let dwrr = sched.dwrr_state();
        PortClasses {
            pfc_pending: PfcFrame::default(),
            class: std::array::from_fn(|c| ClassQueue {
                dwrr: dwrr[c],
                ..Default::default()
            }),
            pfc_receiver: PfcReceiver::default(),
            pfc_sender: PfcSender::default(),
            drops: [(0, 0); PFC_CLASSES],
            ecn_marked: [0; PFC_CLASSES],
            ingress: [0; PFC_CLASSES],
            pfc_on_wire: PfcFrame::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxState {
    Idle,
    /// A data frame of this class.
    Data(u8),
    Expedited,
    Pause(u16),
    /// The port's `pfc_on_wire` frame.
    Pfc,
}

impl Port {
    pub fn new(node: u32, peer: u32, rate: Rate, delay: Time) -> Port {
        Port {
            node,
            peer,
            owner: Owner::Host,
            peer_remote: false,
            rate,
            ps_per_byte: if (8 * Time::PS_PER_S) % rate.0 == 0 {
                8 * Time::PS_PER_S / rate.0
            } else {
                0
            },
            delay,
            service: None,
            queue: VecDeque::new(),
            expedited: VecDeque::new(),
            occupancy: 0,
            tx: TxState::Idle,
            input_occupancy: 0,
            pause: PortPause::default(),
            classes: None,
            turn: ClassTurn {
                backlogged: 0,
                paused: 0,
                pfc_waiting: false,
                marking: NO_MARKING,
                dequeue_marks: 0,
                sched: Scheduler::new(&SchedSpec::strict()),
            },
        }
    }

    /// The port's classes and PFC state, scheduled by `sched`.
    pub fn set_classes(&mut self, classes: PortClasses, sched: &SchedSpec) {
        self.classes = Some(Box::new(classes));
        self.turn.sched = Scheduler::new(sched);
    }

    /// The port marks ECN with `m`, entry `index` of the run's table of
    /// markings (the engine keeps the few distinct ones in one place, read
    /// at every marking queue's departure).
    pub fn set_marking(&mut self, index: u16, m: &PortMarking) {
        assert_ne!(index, NO_MARKING, "fewer markings than ports");
        self.turn.marking = index;
        self.turn.dequeue_marks = if m.at == MarkAt::Dequeue {
            m.classes
        } else {
            0
        };
    }

    /// The index of the port's ECN marking in the run's table, if it
    /// marks.
    #[inline(always)]
    pub fn marking(&self) -> Option<usize> {
        (self.turn.marking != NO_MARKING).then_some(self.turn.marking as usize)
    }

    /// Queue a PFC frame to go out ahead of data: it joins one that has
    /// not left yet.
    pub fn queue_pfc(&mut self, f: PfcFrame) {
        let pc = self.classes.as_deref_mut().expect("PFC ports have classes");
        pc.pfc_pending = pc.pfc_pending.merge(f);
        self.turn.pfc_waiting = !pc.pfc_pending.is_empty();
    }

    /// The PFC frame waiting to go out, taken, if one waits.
    #[inline(always)]
    pub fn take_pfc(&mut self) -> Option<PfcFrame> {
        if !self.turn.pfc_waiting {
            return None;
        }
        self.turn.pfc_waiting = false;
        let pc = self.classes.as_deref_mut().expect("a PFC frame waits");
        Some(std::mem::take(&mut pc.pfc_pending))
    }

    /// A PFC frame takes effect at this port's transmitter
    /// (`PfcReceiver::on_frame`); the pick sees the classes it pauses.
    pub fn pfc_received(&mut self, now: Time, f: &PfcFrame, rate: Rate) -> PfcEffects {
        let pc = self.classes.as_deref_mut().expect("PFC ports have classes");
        let effects = pc.pfc_receiver.on_frame(now, f, rate);
        self.turn.paused = pc.pfc_receiver.paused_mask();
        effects
    }

    /// The pause timer of `class` set with `generation` may have run out
    /// (`PfcReceiver::expire`); the pick sees the class again if so.
    pub fn pfc_expired(&mut self, class: u8, generation: u32, now: Time) -> bool {
        let pc = self.classes.as_deref_mut().expect("PFC ports have classes");
        let resumed = pc.pfc_receiver.expire(class, generation, now);
        self.turn.paused = pc.pfc_receiver.paused_mask();
        resumed
    }

    /// The queue of `class` marks ECN as frames leave it.
    #[inline(always)]
    pub fn marks_at_dequeue(&self, class: u8) -> bool {
        self.turn.dequeue_marks & (1 << class) != 0
    }

    /// PFC has paused `class` at this port's transmitter.
    #[inline]
    pub fn class_paused(&self, class: u8) -> bool {
        self.turn.paused & (1 << class) != 0
    }

    /// The output queue of `class`.
    #[inline]
    pub fn class_queue(&mut self, class: u8) -> &mut VecDeque<Frame> {
        match self.classes.as_deref_mut() {
            None => &mut self.queue,
            Some(pc) => &mut pc.class[class as usize].frames,
        }
    }

    /// Every frame in the output queues, class by class.
    pub fn queued(&self) -> impl Iterator<Item = &Frame> {
        let classes = self
            .classes
            .iter()
            .flat_map(|pc| pc.class.iter().flat_map(|q| &q.frames));
        self.queue.iter().chain(classes)
    }

    /// Put `frame` at the tail of its class's queue.
    #[inline(always)]
    pub fn enqueue(&mut self, frame: Frame) {
        self.occupancy += frame.size as u64;
        match self.classes {
            None => self.queue.push_back(frame),
            Some(_) => self.enqueue_class(frame),
        }
    }

    #[inline(always)]
    fn enqueue_class(&mut self, frame: Frame) {
        let pc = self.classes.as_deref_mut().expect("called with classes");
        let c = frame.class() as usize;
        self.turn.backlogged |= 1 << c;
        let q = &mut pc.class[c];
        q.occupancy += frame.size as u64;
        q.max_occupancy = q.max_occupancy.max(q.occupancy);
        q.frames.push_back(frame);
    }

    /// Take the head frame of `class` (the one whose last bit just left),
    /// with the port's occupancy before it left.
    #[inline(always)]
    pub fn dequeue(&mut self, class: u8) -> (Frame, u64) {
        let frame = match self.classes {
            None => self.queue.pop_front(),
            Some(_) => self.dequeue_class(class),
        }
        .expect("a frame is on the wire");
        let before = self.occupancy;
        self.occupancy = before.saturating_sub(frame.size as u64);
        (frame, before)
    }

    #[inline(always)]
    fn dequeue_class(&mut self, class: u8) -> Option<Frame> {
        let pc = self.classes.as_deref_mut().expect("called with classes");
        let q = &mut pc.class[class as usize];
        let frame = pop_front_rewound(&mut q.frames)?;
        let emptied = q.frames.is_empty();
        let size = frame.size as u64;
        q.occupancy -= size;
        q.tx_bytes += size;
        // DRR: a queue that empties leaves the round with its deficit.
        // Without a branch: whether a port's class empties follows its
        // traffic, not a pattern the predictor learns.
        self.turn.backlogged &= !((emptied as u8) << class);
        q.dwrr.deficit &= (emptied as u32).wrapping_sub(1);
        Some(frame)
    }

    /// The head frame of `class` (the one `next_class` picked).
    #[inline]
    pub fn head_frame(&self, class: u8) -> Option<&Frame> {
        match self.classes.as_deref() {
            None => self.queue.front(),
            Some(pc) => pc.class[class as usize].frames.front(),
        }
    }

    /// The class whose head frame goes next, if any may go: the one queue
    /// without classes; else the scheduler's choice among the classes PFC
    /// has not paused.
    #[inline(always)]
    pub fn next_class(&mut self) -> Option<(u8, u16)> {
        match self.classes.as_deref() {
            None => self.queue.front().map(|f| (0, f.size)),
            // An empty port (often, after a frame has left) needs no pick.
            Some(_) if self.turn.backlogged == 0 => None,
            Some(_) => self.scheduled_class(),
        }
    }

    /// `next_class` with classes (inline: with a profile, the single
    /// queue's path does not pay for it, docs/performance.md).
    #[inline(always)]
    fn scheduled_class(&mut self) -> Option<(u8, u16)> {
        let pc = self.classes.as_deref_mut().expect("called with classes");
        let t = &mut self.turn;
        let (class, size) = t.sched.pick_ready(t.backlogged, t.paused, &mut pc.class)?;
        Some((class, size as u16))
    }

    /// Wire time of `bytes` starting now: a multiplication on the common
    /// path, the exact 128-bit division otherwise.
    #[inline(always)]
    pub fn tx_time(&self, now: Time, bytes: u64) -> Time {
        match &self.service {
            Some(s) if s.is_reduced(now) => s.rate.tx_time(bytes),
            _ if self.ps_per_byte != 0 => Time(bytes * self.ps_per_byte),
            _ => self.rate.tx_time(bytes),
        }
    }
}

/// `queue.pop_front()`, and a queue it empties starts again at the front of
/// its buffer. A ring buffer keeps the capacity of the longest queue it has
/// held, and a short queue walking that ring touches a line that has left
/// the caches every two frames; rewound when empty, it keeps to the first
/// lines of its buffer. For the class queues and the rate limiters' queues,
/// which an incast or a rate cut fills and which then run short; the one
/// queue of a port without classes keeps `pop_front` (docs/performance.md,
/// "Queues that start again at their buffer's front").
#[inline(always)]
pub(crate) fn pop_front_rewound(queue: &mut VecDeque<Frame>) -> Option<Frame> {
    let frame = queue.pop_front();
    if queue.is_empty() {
        // `clear` on an empty queue moves its start to the buffer's front.
        queue.clear();
    }
    frame
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::frame::FrameKind;
    use crate::net::rate_limiter::NO_CP;

    fn frame(class: u8, size: u16) -> Frame {
        Frame {
            tag: Frame::tag(0, class),
            cpid: NO_CP,
            ..Frame::blank(FrameKind::Data, size)
        }
    }

    /// A queue that empties starts again at its buffer's front, however far
    /// round the ring it had gone; one that still holds frames stays where
    /// it is.
    #[test]
    fn a_queue_that_empties_starts_again_at_its_buffers_front() {
        let mut q: VecDeque<Frame> = VecDeque::with_capacity(8);
        q.push_back(frame(0, 100));
        let front = q.as_slices().0.as_ptr();
        for _ in 0..5 {
            q.push_back(frame(0, 100));
        }
        for _ in 0..5 {
            pop_front_rewound(&mut q).expect("a frame");
        }
        assert_eq!(q.as_slices().0.as_ptr(), front.wrapping_add(5));
        pop_front_rewound(&mut q).expect("a frame");
        assert!(pop_front_rewound(&mut q).is_none());
        q.push_back(frame(0, 100));
        assert_eq!(q.as_slices().0.as_ptr(), front);
    }

    /// DRR's rule, kept by the port itself: a class whose queue empties
    /// leaves the round with its deficit (and its backlog bit); a class
    /// that still has frames keeps both.
    #[test]
    fn a_class_whose_queue_empties_leaves_the_round_with_its_deficit() {
        let sched = SchedSpec::dwrr([1500; PFC_CLASSES]);
        let mut p = Port::new(0, 1, Rate::gbps(10), Time::ZERO);
        p.set_classes(PortClasses::new(&sched), &sched);
        p.enqueue(frame(0, 500));
        p.enqueue(frame(1, 400));
        p.enqueue(frame(1, 400));
        let deficit = |p: &Port, c: usize| p.classes.as_ref().unwrap().class[c].dwrr.deficit;
        assert_eq!(p.next_class(), Some((0, 500)));
        assert_eq!(deficit(&p, 0), 1000);
        p.dequeue(0);
        assert_eq!((deficit(&p, 0), p.turn.backlogged), (0, 0b10));
        assert_eq!(p.next_class(), Some((1, 400)));
        p.dequeue(1);
        assert_eq!((deficit(&p, 1), p.turn.backlogged), (1100, 0b10));
        assert_eq!(p.next_class(), Some((1, 400)));
        p.dequeue(1);
        assert_eq!((deficit(&p, 1), p.turn.backlogged), (0, 0));
        assert_eq!(p.next_class(), None);
    }

    /// A departure reads whether its class marks from the port itself:
    /// the classes of a rule that marks at dequeue, none of one that marks
    /// at enqueue or of a port without marking.
    #[test]
    fn the_port_knows_which_classes_mark_as_they_leave() {
        use crate::net::ecn::EcnRule;
        use crate::units::Bytes;
        let sched = SchedSpec::strict();
        let with = |ecn: Option<PortMarking>| {
            let mut p = Port::new(0, 1, Rate::gbps(10), Time::ZERO);
            p.set_classes(PortClasses::new(&sched), &sched);
            if let Some(m) = ecn {
                p.set_marking(0, &m);
            }
            (0..PFC_CLASSES as u8)
                .filter(|&c| p.marks_at_dequeue(c))
                .collect::<Vec<_>>()
        };
        let rule = EcnRule::Step { k: Bytes(30_000) };
        let marking = |at| {
            Some(PortMarking {
                classes: 0b0110,
                at,
                rule,
            })
        };
        assert_eq!(with(marking(MarkAt::Dequeue)), [1, 2]);
        assert_eq!(with(marking(MarkAt::Enqueue)), [] as [u8; 0]);
        assert_eq!(with(None), [] as [u8; 0]);
    }

    /// A PFC frame waits, joined by later decisions, until a transmission
    /// takes it; then none waits.
    #[test]
    fn a_waiting_pfc_frame_is_taken_once_with_what_joined_it() {
        let sched = SchedSpec::strict();
        let mut p = Port::new(0, 1, Rate::gbps(10), Time::ZERO);
        p.set_classes(PortClasses::new(&sched), &sched);
        assert_eq!(p.take_pfc(), None);
        p.queue_pfc(PfcFrame::xoff(0b0010));
        p.queue_pfc(PfcFrame::xoff(0b1000));
        let f = p.take_pfc().expect("a frame waits");
        assert_eq!(f, PfcFrame::xoff(0b1010));
        assert_eq!(p.take_pfc(), None);
        p.queue_pfc(PfcFrame::default());
        assert_eq!(p.take_pfc(), None, "an empty frame does not wait");
    }

    #[test]
    fn the_fast_path_agrees_with_the_exact_division() {
        for rate in [
            Rate::gbps(10),
            Rate::gbps(1),
            Rate::mbps(500),
            Rate(3_000_000_007),
            Rate::gbps(40),
        ] {
            let p = Port::new(0, 1, rate, Time::ZERO);
            for bytes in [64, 1500, 9000] {
                assert_eq!(
                    p.tx_time(Time::ZERO, bytes),
                    rate.tx_time(bytes),
                    "{rate} {bytes}"
                );
            }
        }
    }
}
