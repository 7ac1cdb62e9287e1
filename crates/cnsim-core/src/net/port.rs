//! A port: one end of a full-duplex link, with the output queue that feeds
//! its transmitter. A frame stays in the buffer until its last bit has
//! left: it leaves its queue when its transmission starts, and the port
//! keeps it (`Port::on_wire`) while it is on the wire.

use super::ecn::{MarkAt, PortMarking};
use super::frame::Frame;
use super::sched::{Classes, Dwrr, SchedSpec, Scheduler};
use crate::engine::Fifo;
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
    /// class has its own in `PortClasses`, and this one stays empty): its
    /// frames but the one on the wire and the one waiting in the port
    /// (`staged`).
    pub queue: Fifo<Frame>,
    /// Strict-priority class for small control frames (reflected probes):
    /// served before `queue`, outside the buffer accounting.
    pub expedited: VecDeque<Frame>,
    /// Bytes in the port's queues, including the data frame being
    /// transmitted.
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
    /// The data frame on the wire (`tx` is `Data`), taken from its queue
    /// when its transmission started and still counted in the buffer's
    /// bytes until its last bit has left. Its departure reads it here,
    /// beside the port's other state, rather than in its queue (and its
    /// class's line), which on a fabric have left the caches in the frame
    /// time between.
    on_wire: Frame,
    /// `on_wire` holds the port's next data frame, not yet started. A frame
    /// that finds the port without frames (no data frame being sent; the
    /// transmitter idle, held by PAUSE or PFC, or sending a control frame)
    /// waits there instead of in its queue's ring: on a fabric the ring's
    /// line has left the caches since the port's last frame, and the
    /// port's own lines are in hand. Without classes, frames that arrive
    /// meanwhile queue in the ring behind it; with classes, the first of
    /// them moves it to its class's ring (`unstage`), so that a staged
    /// frame is always the only frame the port holds.
    staged: bool,
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
    /// Bit c: class c has a frame queued, counting the one on the wire.
    backlogged: u8,
    /// Bit c: class c's ring holds frames (not counting one on the wire
    /// or staged).
    ringed: u8,
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
// before); the frame on the wire 32 more.
const _: () = assert!(std::mem::size_of::<Port>() == 248);

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

/// One class of a port: its queue, the counters a frame's enqueue and the
/// start of its transmission update, and its DWRR state, in one cache
/// line. A frame's departure does not touch it (`Port::on_wire`).
#[derive(Default)]
#[repr(C, align(64))]
struct ClassQueue {
    /// The frames queued but the one on the wire and a staged one
    /// (`Port::staged`).
    frames: Fifo<Frame>,
    /// Bytes in `frames` (with the frame on the wire, if of this class,
    /// the class's bytes in the buffer: `Port::class_occupancy`).
    occupancy: u64,
    max_occupancy: u64,
    /// Bytes sent, counting the frame on the wire (`Port::class_stats`
    /// leaves it out).
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

/// A port's classes with its staged frame as the head of its class (whose
/// ring is empty): what the scheduler reads to choose it.
struct Staged<'a> {
    classes: &'a mut [ClassQueue; PFC_CLASSES],
    class: u8,
    size: u32,
}

impl Classes for Staged<'_> {
    #[inline(always)]
    fn head(&self, class: u8) -> Option<u32> {
        if class == self.class {
            Some(self.size)
        } else {
            self.classes.head(class)
        }
    }

    #[inline(always)]
    fn dwrr(&mut self, class: u8) -> &mut Dwrr {
        self.classes.dwrr(class)
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

    /// What the results report of `class`, counting as sent the frame on
    /// the wire, if it is of `class` (`Port::class_stats` leaves it out).
    fn stats(&self, class: u8) -> ClassStats {
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
            queue: Fifo::new(),
            expedited: VecDeque::new(),
            occupancy: 0,
            tx: TxState::Idle,
            input_occupancy: 0,
            pause: PortPause::default(),
            classes: None,
            turn: ClassTurn {
                backlogged: 0,
                ringed: 0,
                paused: 0,
                pfc_waiting: false,
                marking: NO_MARKING,
                dequeue_marks: 0,
                sched: Scheduler::new(&SchedSpec::strict()),
            },
            on_wire: Frame::ZERO,
            staged: false,
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

    /// Bytes of the frame on the wire that `class` still holds in the
    /// buffer: its size while a data frame of `class` is being sent by a
    /// port with classes, else 0.
    #[inline(always)]
    fn wire_bytes(&self, class: u8) -> u64 {
        if self.tx == TxState::Data(class) {
            self.on_wire.size as u64
        } else {
            0
        }
    }

    /// Bytes of `class` in the buffer: its queue and, while it is being
    /// sent, its frame on the wire. A port with classes only.
    #[inline]
    pub fn class_occupancy(&self, class: u8) -> u64 {
        let pc = self.classes.as_deref().expect("called with classes");
        pc.class[class as usize].occupancy + self.wire_bytes(class)
    }

    /// What the results report of `class` (a port with classes): the frame
    /// on the wire has not been sent yet.
    pub fn class_stats(&self, class: u8) -> ClassStats {
        let pc = self.classes.as_deref().expect("called with classes");
        let mut st = pc.stats(class);
        st.tx_bytes -= self.wire_bytes(class);
        st
    }

    /// The frame last queued in the output queue of `class` (not the one on
    /// the wire), to change in place.
    #[inline]
    pub fn last_queued(&mut self, class: u8) -> Option<&mut Frame> {
        match self.classes.as_deref_mut() {
            None if self.queue.is_empty() => self.staged.then_some(&mut self.on_wire),
            None => self.queue.back_mut(),
            Some(_) if self.staged => (self.on_wire.class() == class).then_some(&mut self.on_wire),
            Some(pc) => pc.class[class as usize].frames.back_mut(),
        }
    }

    /// Every frame in the output queues, class by class, and the data
    /// frame on the wire.
    pub fn queued(&self) -> impl Iterator<Item = &Frame> {
        let classes = self
            .classes
            .iter()
            .flat_map(|pc| pc.class.iter().flat_map(|q| q.frames.iter()));
        let in_port = matches!(self.tx, TxState::Data(_)) || self.staged;
        self.queue
            .iter()
            .chain(classes)
            .chain(in_port.then_some(&self.on_wire))
    }

    /// Put `frame` at the tail of its class's queue.
    #[inline(always)]
    pub fn enqueue(&mut self, frame: Frame) {
        self.occupancy += frame.size as u64;
        match self.classes {
            None if self.queue.is_empty()
                && !self.staged
                && !matches!(self.tx, TxState::Data(_)) =>
            {
                self.on_wire = frame;
                self.staged = true;
            }
            None => self.queue.push_back(frame),
            Some(_) => self.enqueue_class(frame),
        }
    }

    /// With classes: a port without frames (none queued, none on the wire)
    /// stages the frame (`staged`), any other goes to its class's ring.
    /// Out of line: the one-queue path does not pay for it.
    #[inline(never)]
    fn enqueue_class(&mut self, frame: Frame) {
        if self.staged {
            self.unstage();
        }
        let c = frame.class();
        let wire = self.wire_bytes(c);
        let pc = self.classes.as_deref_mut().expect("called with classes");
        let t = &mut self.turn;
        let was_backlogged = t.backlogged >> c & 1;
        // `backlogged` counts the frame on the wire: with none set, the
        // port holds no frame.
        let stage = t.backlogged == 0;
        t.backlogged |= 1 << c;
        let q = &mut pc.class[c as usize];
        // DRR: a class whose queue emptied left the round with its deficit
        // (`dequeue_class`); it comes back without one. Without a branch:
        // whether a class was empty follows its traffic.
        q.dwrr.deficit &= (was_backlogged as u32).wrapping_neg();
        q.occupancy += frame.size as u64;
        q.max_occupancy = q.max_occupancy.max(q.occupancy + wire);
        if stage {
            self.on_wire = frame;
            self.staged = true;
        } else {
            t.ringed |= 1 << c;
            q.frames.push_back(frame);
        }
    }

    /// The staged frame of a port with classes joins its class's ring,
    /// which is empty (a staged frame is the port's only one): another
    /// frame is queued behind it, and the scheduler will choose among the
    /// classes' rings.
    #[cold]
    #[inline(never)]
    fn unstage(&mut self) {
        let c = self.on_wire.class();
        let pc = self.classes.as_deref_mut().expect("called with classes");
        let q = &mut pc.class[c as usize];
        debug_assert!(q.frames.is_empty(), "a staged frame is its class's head");
        q.frames.push_back(self.on_wire);
        self.turn.ringed |= 1 << c;
        self.staged = false;
    }

    /// The data frame of `class` on the wire, whose last bit just left,
    /// leaves the buffer; with the port's occupancy before it left. Its
    /// queue was done with when it started (`start_data`), so without
    /// classes this reads the port alone.
    #[inline(always)]
    pub fn dequeue(&mut self, class: u8) -> (Frame, u64) {
        let frame = match self.classes {
            None => self.on_wire,
            Some(_) => self.dequeue_class(class),
        };
        let before = self.occupancy;
        self.occupancy = before.saturating_sub(frame.size as u64);
        (frame, before)
    }

    /// The frame on the wire leaves the buffer: its class's queue and line
    /// were done with when it started (`start_class`), so this reads the
    /// port alone.
    #[inline(always)]
    fn dequeue_class(&mut self, class: u8) -> Frame {
        debug_assert!(self.turn.backlogged & 1 << class != 0);
        // DRR: a queue that empties leaves the round with its deficit (which
        // its next frame clears, `enqueue_class`). Without a branch: whether
        // a port's class empties follows its traffic, not a pattern the
        // predictor learns.
        let emptied = (!self.turn.ringed >> class) & 1;
        self.turn.backlogged &= !(emptied << class);
        self.on_wire
    }

    /// The data frame being sent (`start_data`'s), if one is.
    #[inline]
    pub fn data_on_wire(&self) -> Option<&Frame> {
        matches!(self.tx, TxState::Data(_)).then_some(&self.on_wire)
    }

    /// Start sending the next data frame, if one may go (`tx` becomes
    /// `Data` of its class): the head of the one queue without classes;
    /// else the head of the class the scheduler picks among those PFC has
    /// not paused. It is taken from its queue onto the wire. Its class and
    /// size.
    #[inline(always)]
    pub fn start_data(&mut self) -> Option<(u8, u16)> {
        let (class, size) = match self.classes.as_deref() {
            None if self.staged => {
                self.staged = false;
                (0, self.on_wire.size)
            }
            None => {
                let frame = self.queue.pop_front_rewound()?;
                self.on_wire = frame;
                (0, frame.size)
            }
            // An empty port (often, after a frame has left) needs no pick.
            Some(_) if self.turn.backlogged == 0 => return None,
            Some(_) => self.start_class()?,
        };
        self.tx = TxState::Data(class);
        Some((class, size))
    }

    /// `start_data` with classes (inline: with a profile, the single
    /// queue's path does not pay for it, docs/performance.md): the pick,
    /// and what the frame's departure would otherwise do in its class's
    /// line, which the pick has just read: it leaves the queue (its bytes
    /// stay in the buffer, `class_occupancy`) and counts as sent
    /// (`class_stats`).
    #[inline(always)]
    fn start_class(&mut self) -> Option<(u8, u16)> {
        let pc = self.classes.as_deref_mut().expect("called with classes");
        let t = &mut self.turn;
        let frame = if self.staged {
            // The port's only frame: the scheduler's choice if its class
            // may send, made with its size (`Staged`).
            let mut head = Staged {
                classes: &mut pc.class,
                class: self.on_wire.class(),
                size: self.on_wire.size as u32,
            };
            let (_class, _) = t.sched.pick_ready(t.backlogged, t.paused, &mut head)?;
            debug_assert_eq!(_class, self.on_wire.class(), "the one class with a frame");
            self.staged = false;
            self.on_wire
        } else {
            let (class, _) = t.sched.pick_ready(t.backlogged, t.paused, &mut pc.class)?;
            let q = &mut pc.class[class as usize];
            let frame = q
                .frames
                .pop_front_rewound()
                .expect("a backlogged class has a head");
            t.ringed &= !((q.frames.is_empty() as u8) << class);
            frame
        };
        let class = frame.class();
        let q = &mut pc.class[class as usize];
        let size = frame.size as u64;
        q.occupancy -= size;
        q.tx_bytes += size;
        self.on_wire = frame;
        Some((class, frame.size))
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

    /// A 10 Gb/s port with classes scheduled by `sched`.
    fn port_with_classes(sched: &SchedSpec) -> Port {
        let mut p = Port::new(0, 1, Rate::gbps(10), Time::ZERO);
        p.set_classes(PortClasses::new(sched), sched);
        p
    }

    /// A data frame's transmission ends (`tx_done`'s part of the port).
    fn finish(p: &mut Port, class: u8) -> Frame {
        assert_eq!(p.tx, TxState::Data(class));
        p.tx = TxState::Idle;
        p.dequeue(class).0
    }

    fn deficit(p: &Port, c: usize) -> u32 {
        p.classes.as_ref().unwrap().class[c].dwrr.deficit
    }

    /// DRR's rule, kept by the port itself: a class whose queue empties
    /// leaves the round with its deficit (and its backlog bit), and comes
    /// back with none; a class that still has frames keeps both.
    #[test]
    fn a_class_whose_queue_empties_leaves_the_round_with_its_deficit() {
        let sched = SchedSpec::dwrr([1500; PFC_CLASSES]);
        let mut p = port_with_classes(&sched);
        p.enqueue(frame(0, 500));
        p.enqueue(frame(1, 400));
        p.enqueue(frame(1, 400));
        assert_eq!(p.start_data(), Some((0, 500)));
        assert_eq!(deficit(&p, 0), 1000);
        finish(&mut p, 0);
        assert_eq!(p.turn.backlogged, 0b10);
        assert_eq!(p.start_data(), Some((1, 400)));
        finish(&mut p, 1);
        assert_eq!((deficit(&p, 1), p.turn.backlogged), (1100, 0b10));
        assert_eq!(p.start_data(), Some((1, 400)));
        finish(&mut p, 1);
        assert_eq!(p.turn.backlogged, 0);
        assert_eq!(p.start_data(), None);
        p.enqueue(frame(0, 500));
        p.enqueue(frame(1, 400));
        assert_eq!((deficit(&p, 0), deficit(&p, 1)), (0, 0));
    }

    /// A frame that joins its class while the class's last frame is on the
    /// wire keeps the class in the round: the departure leaves it
    /// backlogged, with its deficit.
    #[test]
    fn a_frame_queued_during_its_class_transmission_keeps_the_class_in_the_round() {
        let sched = SchedSpec::dwrr([1500; PFC_CLASSES]);
        let mut p = port_with_classes(&sched);
        p.enqueue(frame(0, 500));
        assert_eq!(p.start_data(), Some((0, 500)));
        p.enqueue(frame(0, 500));
        assert_eq!(deficit(&p, 0), 1000);
        finish(&mut p, 0);
        assert_eq!((deficit(&p, 0), p.turn.backlogged), (1000, 0b1));
        assert_eq!(p.start_data(), Some((0, 500)));
        assert_eq!(deficit(&p, 0), 500);
    }

    /// The frame on the wire has left its class's queue but not the buffer:
    /// it counts in the class's bytes and the port's frames until its last
    /// bit has left, and as sent only then.
    #[test]
    fn the_frame_on_the_wire_is_held_until_it_has_left() {
        let sched = SchedSpec::strict();
        let mut p = port_with_classes(&sched);
        let mut first = frame(2, 500);
        first.flow = 7;
        p.enqueue(first);
        p.enqueue(frame(2, 300));
        assert_eq!(p.start_data(), Some((2, 500)));
        assert_eq!(p.data_on_wire(), Some(&first));
        assert_eq!(p.last_queued(2).map(|f| f.size), Some(300));
        let held = |p: &Port| p.queued().map(|f| f.size as u64).sum::<u64>();
        assert_eq!(
            (p.class_occupancy(2), held(&p), p.occupancy),
            (800, 800, 800)
        );
        assert_eq!(p.class_stats(2).tx_bytes, 0);
        p.enqueue(frame(2, 200));
        assert_eq!(p.class_stats(2).max_occupancy, 1000);
        assert_eq!(finish(&mut p, 2), first);
        assert_eq!(p.data_on_wire(), None);
        assert_eq!(
            (p.class_occupancy(2), held(&p), p.occupancy),
            (500, 500, 500)
        );
        assert_eq!(p.class_stats(2).tx_bytes, 500);
        assert_eq!(p.class_occupancy(1), 0);
    }

    /// Without classes too, a frame leaves the queue when its transmission
    /// starts and stays in the buffer, on the wire, until its last bit has
    /// left; a queue that empties starts again at its ring's front.
    #[test]
    fn without_classes_the_frame_on_the_wire_is_held_until_it_has_left() {
        let mut p = Port::new(0, 1, Rate::gbps(10), Time::ZERO);
        let held = |p: &Port| p.queued().map(|f| f.size as u64).sum::<u64>();
        let mut first = frame(0, 500);
        first.flow = 7;
        // The first frame of an empty queue at an idle transmitter waits in
        // the port, not in the ring; later ones queue behind it.
        p.enqueue(first);
        assert!(p.queue.is_empty());
        assert_eq!(p.last_queued(0).copied(), Some(first));
        assert_eq!((held(&p), p.occupancy), (500, 500));
        p.enqueue(frame(0, 300));
        assert_eq!(p.start_data(), Some((0, 500)));
        assert_eq!(p.data_on_wire(), Some(&first));
        assert_eq!(p.queue.len(), 1);
        assert_eq!(p.last_queued(0).map(|f| f.size), Some(300));
        assert_eq!((held(&p), p.occupancy), (800, 800));
        assert_eq!(p.dequeue(0), (first, 800));
        p.tx = TxState::Idle;
        assert_eq!(p.data_on_wire(), None);
        assert_eq!((held(&p), p.occupancy), (300, 300));
        assert_eq!(p.start_data(), Some((0, 300)));
        assert!(p.queue.is_empty());
        assert_eq!(p.dequeue(0).0.size, 300);
        p.tx = TxState::Idle;
        assert_eq!((held(&p), p.occupancy), (0, 0));
        assert_eq!(p.start_data(), None);
        assert_eq!(p.tx, TxState::Idle);
        // While a control frame is sent, a data frame waits in the port too,
        // and is the next to start.
        p.tx = TxState::Expedited;
        p.enqueue(frame(0, 100));
        p.enqueue(frame(0, 200));
        assert_eq!(p.data_on_wire(), None);
        assert_eq!((held(&p), p.queue.len()), (300, 1));
        p.tx = TxState::Idle;
        assert_eq!(p.start_data(), Some((0, 100)));
        assert_eq!(p.dequeue(0).0.size, 100);
        p.tx = TxState::Idle;
        assert_eq!(p.start_data(), Some((0, 200)));
    }

    /// With classes, a frame that finds the port without frames waits in
    /// the port, not in its class's ring, and starts from there with the
    /// scheduler's state as if from the ring; the first frame queued
    /// behind it moves it to its ring (the scheduler then chooses among
    /// rings), and so does one queued while PFC holds its class.
    #[test]
    fn with_classes_a_frame_that_finds_the_port_empty_waits_in_the_port() {
        let sched = SchedSpec::dwrr([1500; PFC_CLASSES]);
        let mut p = port_with_classes(&sched);
        let ring = |p: &Port, c: usize| p.classes.as_ref().unwrap().class[c].frames.len();
        let held = |p: &Port| p.queued().map(|f| f.size as u64).sum::<u64>();
        let first = Frame {
            flow: 7,
            ..frame(1, 500)
        };
        p.enqueue(first);
        assert!(p.staged);
        assert_eq!(
            (ring(&p, 1), p.turn.ringed, p.turn.backlogged),
            (0, 0, 0b10)
        );
        assert_eq!(p.last_queued(1).copied(), Some(first));
        assert_eq!(p.last_queued(0), None);
        assert_eq!((p.class_occupancy(1), held(&p)), (500, 500));
        assert_eq!(p.start_data(), Some((1, 500)));
        assert!(!p.staged);
        assert_eq!(p.data_on_wire(), Some(&first));
        assert_eq!(deficit(&p, 1), 1000);
        assert_eq!(finish(&mut p, 1), first);
        assert_eq!((p.turn.backlogged, deficit(&p, 1)), (0, 1000));
        // Held by PFC: the frame waits; the next one moves it to its ring,
        // in order before a frame of its own class.
        p.turn.paused = 0b10;
        p.enqueue(frame(1, 400));
        assert!(p.staged);
        assert_eq!(p.start_data(), None);
        p.enqueue(frame(0, 300));
        assert!(!p.staged);
        assert_eq!((ring(&p, 1), ring(&p, 0), p.turn.ringed), (1, 1, 0b11));
        p.enqueue(frame(1, 200));
        assert_eq!((held(&p), p.occupancy), (900, 900));
        assert_eq!(p.start_data(), Some((0, 300)));
        finish(&mut p, 0);
        p.turn.paused = 0;
        assert_eq!(p.start_data(), Some((1, 400)));
        finish(&mut p, 1);
        assert_eq!(p.start_data(), Some((1, 200)));
        finish(&mut p, 1);
        assert_eq!((held(&p), p.occupancy, p.turn.backlogged), (0, 0, 0));
    }

    /// The classes of a port as they were before a frame left its class's
    /// queue for the wire: the frame stays at its queue's head until its
    /// last bit has left, when a queue it empties loses its deficit.
    struct Reference {
        queues: [VecDeque<Frame>; PFC_CLASSES],
        dwrr: [Dwrr; PFC_CLASSES],
        sched: Scheduler,
        sending: Option<u8>,
        sent: [u64; PFC_CLASSES],
        peak: [u64; PFC_CLASSES],
    }

    impl Classes for Reference {
        fn head(&self, class: u8) -> Option<u32> {
            self.queues[class as usize].front().map(|f| f.size as u32)
        }
        fn dwrr(&mut self, class: u8) -> &mut Dwrr {
            &mut self.dwrr[class as usize]
        }
    }

    impl Reference {
        fn bytes(&self, class: u8) -> u64 {
            self.queues[class as usize]
                .iter()
                .map(|f| f.size as u64)
                .sum()
        }
    }

    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Enqueue(u8, u16),
        /// Start a transmission if idle, with PFC pausing the classes of
        /// this mask.
        Start(u8),
        Finish,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u8..4, 64u16..=1500).prop_map(|(c, s)| Op::Enqueue(c, s)),
            2 => (0u8..16).prop_map(|m| Op::Start(m & 0b1010)),
            2 => Just(Op::Finish),
        ]
    }

    proptest! {
        /// Whatever the arrivals, pauses and scheduling (strict classes
        /// above DWRR ones of random quanta), a port that takes a frame
        /// onto the wire when it starts sends the frames of the reference,
        /// in its order, and reports the same bytes per class (held, peak
        /// and sent) at every step.
        #[test]
        fn the_frame_on_the_wire_changes_no_schedule(
            quanta in proptest::collection::vec(64u64..3000, PFC_CLASSES),
            strict in 0u8..16,
            ops in proptest::collection::vec(op(), 1..300),
        ) {
            let mut spec = SchedSpec::dwrr(quanta.try_into().unwrap());
            for c in 0..4 {
                if strict & (1 << c) != 0 {
                    spec.classes[c] = crate::net::sched::ClassSched::Strict;
                }
            }
            let mut p = port_with_classes(&spec);
            let mut r = Reference {
                queues: Default::default(),
                dwrr: spec.dwrr_state(),
                sched: Scheduler::new(&spec),
                sending: None,
                sent: [0; PFC_CLASSES],
                peak: [0; PFC_CLASSES],
            };
            for (i, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Enqueue(c, size) => {
                        let f = Frame { flow: i as u32, ..frame(c, size) };
                        p.enqueue(f);
                        r.queues[c as usize].push_back(f);
                        r.peak[c as usize] = r.peak[c as usize].max(r.bytes(c));
                    }
                    Op::Start(paused) if r.sending.is_none() => {
                        p.turn.paused = paused;
                        let mut sched = r.sched;
                        let backlogged = (0..PFC_CLASSES as u8)
                            .filter(|&c| !r.queues[c as usize].is_empty())
                            .fold(0, |m, c| m | 1 << c);
                        let want = sched
                            .pick_ready(backlogged, paused, &mut r)
                            .map(|(c, size)| (c, size as u16));
                        r.sched = sched;
                        r.sending = want.map(|(c, _)| c);
                        prop_assert_eq!(p.start_data(), want);
                    }
                    Op::Start(_) => {}
                    Op::Finish => {
                        if let Some(c) = r.sending.take() {
                            let want = r.queues[c as usize].pop_front().unwrap();
                            r.sent[c as usize] += want.size as u64;
                            if r.queues[c as usize].is_empty() {
                                r.dwrr[c as usize].deficit = 0;
                            }
                            prop_assert_eq!(finish(&mut p, c), want);
                        }
                    }
                }
                for c in 0..PFC_CLASSES as u8 {
                    let st = p.class_stats(c);
                    prop_assert_eq!(p.class_occupancy(c), r.bytes(c));
                    // The last frame queued behind the one on the wire.
                    let q = &r.queues[c as usize];
                    let waiting = q.len() - usize::from(r.sending == Some(c));
                    let last = if waiting > 0 { q.back().copied() } else { None };
                    prop_assert_eq!(p.last_queued(c).copied(), last);
                    prop_assert_eq!((st.tx_bytes, st.max_occupancy), (r.sent[c as usize], r.peak[c as usize]));
                }
                let held: u64 = p.queued().map(|f| f.size as u64).sum();
                prop_assert_eq!(held, p.occupancy);
            }
        }
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
            let mut p = port_with_classes(&sched);
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
        let mut p = port_with_classes(&sched);
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
