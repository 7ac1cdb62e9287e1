//! IEEE 802.1Qbb priority-based flow control (PFC): the frame, the pause
//! timers of a transmitter's eight classes, and the XOFF/XON state a port
//! keeps toward its upstream neighbour, one class at a time.
//!
//! PFC is 802.3x PAUSE (IEEE Std 802.3, Annex 31B) with a pause timer per
//! priority instead of one per port: a frame carries a class-enable vector
//! and eight pause times, and only the enabled classes' timers change.
//!
//! **802.3x PAUSE is the one-class case.** A port with a single class puts
//! all its traffic in class 0; a PAUSE frame with `pause_time` q is then the
//! PFC frame `enable = 1, quanta[0] = q` ([`PfcFrame::from_pause`]), and the
//! port's transmitter is paused when class 0 is (`paused_mask() & 1`). Each
//! class's timer is a [`PauseReceiver`], so a class behaves exactly as a
//! PAUSE port does; on the wire only the opcode (0x0001 against 0x0101) and
//! the layout differ, and cnsim models neither (see docs/model.md, PAUSE).
//!
//! These are pure state machines: the engine schedules the expiries and
//! refreshes they ask for and sends the frames they return.

use super::pause::{
    PauseEffect, PauseReceiver, PAUSE_FRAME_BYTES, PAUSE_QUANTUM_BITS, XOFF_QUANTA,
};
use crate::units::{Rate, Time};

/// The MAC Control opcode of a PFC frame (PAUSE's is 0x0001).
pub const PFC_OPCODE: u16 = 0x0101;
/// A PFC frame is a minimum-size MAC control frame, like PAUSE.
pub const PFC_FRAME_BYTES: u64 = PAUSE_FRAME_BYTES;
/// Priorities (traffic classes) a PFC frame can address.
pub const PFC_CLASSES: usize = 8;
/// One pause quantum is 512 bit times of the link, as for PAUSE.
pub const PFC_QUANTUM_BITS: u64 = PAUSE_QUANTUM_BITS;

/// A switch's PFC configuration (`[switch.pfc]`), resolved: which classes
/// are lossless, and the thresholds on each ingress (port, class)'s bytes
/// held in the switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PfcSpec {
    /// Bit n: class n is lossless (PFC-enabled).
    pub classes: u8,
    /// Bytes of an ingress (port, class) at or above which XOFF is sent,
    /// and at or below which XON is sent. `None` on a shared-buffer switch
    /// whose MMU decides (dynamic thresholds).
    pub thresholds: Option<(u64, u64)>,
    /// XOFF again at half the pause time while the class stays held.
    pub refresh: bool,
}

/// The classes whose bit is set in `mask`, lowest first.
pub fn classes(mask: u8) -> impl Iterator<Item = u8> {
    (0..PFC_CLASSES as u8).filter(move |c| mask & (1 << c) != 0)
}

/// Duration of `quanta` pause quanta at `rate`, in whole picoseconds
/// rounded up (as [`Rate::bit_times`] rounds).
pub fn pause_time(quanta: u16, rate: Rate) -> Time {
    rate.bit_times(quanta as u64 * PFC_QUANTUM_BITS)
}

/// The payload of a PFC frame: which classes it speaks for and the pause
/// time of each. A field whose class is not enabled means nothing; the
/// constructors leave it 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PfcFrame {
    /// Class-enable vector: bit n set means `quanta[n]` is valid.
    pub enable: u8,
    /// Pause time per class, in quanta; 0 means resume now (XON).
    pub quanta: [u16; PFC_CLASSES],
}

impl PfcFrame {
    /// XOFF (the largest pause time) for every class in `classes`.
    pub fn xoff(classes: u8) -> PfcFrame {
        Self::all(classes, XOFF_QUANTA)
    }

    /// XON (pause time 0) for every class in `classes`.
    pub fn xon(classes: u8) -> PfcFrame {
        Self::all(classes, 0)
    }

    /// `quanta` for `class` alone.
    pub fn one(class: u8, quanta: u16) -> PfcFrame {
        PfcFrame::default().with(class, quanta)
    }

    /// The 802.3x PAUSE frame with `quanta`, as PFC sees it: class 0 alone.
    pub fn from_pause(quanta: u16) -> PfcFrame {
        Self::one(0, quanta)
    }

    /// This frame, with `class` enabled at `quanta`.
    pub fn with(mut self, class: u8, quanta: u16) -> PfcFrame {
        self.enable |= 1 << class;
        self.quanta[class as usize] = quanta;
        self
    }

    /// One frame saying what this one and `newer` say, `newer` winning
    /// where both speak for a class. A decision taken while a frame waits
    /// to go out joins it: replacing it would drop its other classes.
    pub fn merge(self, newer: PfcFrame) -> PfcFrame {
        classes(newer.enable).fold(self, |f, c| f.with(c, newer.quanta[c as usize]))
    }

    /// The frame speaks for `class`.
    pub fn enabled(&self, class: u8) -> bool {
        self.enable & (1 << class) != 0
    }

    /// The pause time for `class`, if the frame speaks for it.
    pub fn quanta(&self, class: u8) -> Option<u16> {
        self.enabled(class).then(|| self.quanta[class as usize])
    }

    /// The frame speaks for no class (there is nothing to send).
    pub fn is_empty(&self) -> bool {
        self.enable == 0
    }

    fn all(classes: u8, quanta: u16) -> PfcFrame {
        self::classes(classes).fold(PfcFrame::default(), |f, c| f.with(c, quanta))
    }
}

/// What a received PFC frame asks of each class of the transmitter: for a
/// class it changed, an expiry to schedule (`HoldUntil(t, generation)`) or
/// `Resume`; `None` for a class it left alone (not enabled, or an XON for
/// a class that was not paused).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PfcEffects(pub [Option<PauseEffect>; PFC_CLASSES]);

impl PfcEffects {
    pub fn get(&self, class: u8) -> Option<PauseEffect> {
        self.0[class as usize]
    }

    /// The classes that changed, lowest first, with what each needs.
    pub fn iter(&self) -> impl Iterator<Item = (u8, PauseEffect)> + '_ {
        (0..PFC_CLASSES as u8).filter_map(|c| self.get(c).map(|e| (c, e)))
    }
}

/// The pause timers of a transmitter, one per class.
///
/// A paused class starts no new frame; the frame already on the wire is
/// finished (802.3 never cuts a frame), which is the transmitter's concern,
/// not this type's. MAC control frames (PFC itself) are never paused.
///
/// In memory the mask comes first, then the timers (lowest classes first):
/// the transmitter reads them at every frame.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub struct PfcReceiver {
    /// Bit n: class n is paused (the timers' state, kept for the
    /// transmitter's test at every frame).
    mask: u8,
    /// Each class's timer: PAUSE's receiver, with its own generation.
    timers: [PauseReceiver; PFC_CLASSES],
    /// When each paused class's timer runs out; stale while it runs.
    until: [Time; PFC_CLASSES],
}

impl PfcReceiver {
    /// A PFC frame takes effect now (the caller has already waited the
    /// receiver's response time). For each enabled class a pause time of 0
    /// resumes the class at once; any other time pauses it for that long
    /// from now, replacing (not adding to) a running timer. Every enabled
    /// class's generation moves on, so an expiry scheduled earlier is stale.
    pub fn on_frame(&mut self, now: Time, f: &PfcFrame, rate: Rate) -> PfcEffects {
        let mut effects = PfcEffects::default();
        for c in classes(f.enable) {
            let i = c as usize;
            let was_paused = self.timers[i].paused;
            let effect = self.timers[i].receive(now, f.quanta[i], rate);
            self.set_mask(c);
            effects.0[i] = match effect {
                PauseEffect::HoldUntil(t, generation) => {
                    self.until[i] = t;
                    Some(PauseEffect::HoldUntil(t, generation))
                }
                PauseEffect::Resume => was_paused.then_some(PauseEffect::Resume),
            };
        }
        effects
    }

    /// The expiry of `class` scheduled with `generation` is due. True if it
    /// resumed the class; false for a superseded one.
    pub fn expire(&mut self, class: u8, generation: u32, now: Time) -> bool {
        let resumed = self.timers[class as usize].expire(now, generation);
        self.set_mask(class);
        resumed
    }

    fn set_mask(&mut self, class: u8) {
        let bit = 1 << class;
        self.mask = (self.mask & !bit) | (u8::from(self.timers[class as usize].paused) << class);
    }

    /// `class` may not start a frame.
    #[inline]
    pub fn paused(&self, class: u8) -> bool {
        self.timers[class as usize].paused
    }

    /// The classes that may not start a frame, bit n for class n.
    #[inline]
    pub fn paused_mask(&self) -> u8 {
        self.mask
    }

    /// When `class` resumes unless another frame comes first, if paused.
    pub fn paused_until(&self, class: u8) -> Option<Time> {
        self.paused(class).then(|| self.until[class as usize])
    }

    /// When the current pause of `class` began, if paused.
    pub fn paused_since(&self, class: u8) -> Option<Time> {
        self.timers[class as usize].paused_since()
    }

    /// Time `class` has been paused up to `now`, counting an open interval.
    pub fn paused_time(&self, class: u8, now: Time) -> Time {
        self.timers[class as usize].paused_time(now)
    }
}

/// What a port has told its upstream neighbour, class by class, and when
/// each class's XOFF is due again.
///
/// The caller decides which classes should be paused (an ingress
/// (port, priority) at or above its XOFF threshold; [`Self::should_pause`]
/// applies the hysteresis); `decide` turns a change into one frame, several
/// classes at once. An XOFF only lasts its pause time at the upstream, so
/// while a class stays held its XOFF is sent again once half that time has
/// passed since it left, as ns-3's RDMA model re-checks at half the pause
/// time. The engine schedules `refresh` at the time `sent` returns, if the
/// switch refreshes; a refresh that finds nothing due (the class was
/// released, or sent again since) does nothing, so no generation is needed.
///
/// `held` comes first in memory: admissions and releases read it.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct PfcSender {
    /// Classes held: XOFF decided and no XON since.
    held: u8,
    /// Per held class, when its last XOFF's half pause time has passed;
    /// `None` while its XOFF waits to go out.
    refresh_at: [Option<Time>; PFC_CLASSES],
    /// Frames sent, whatever they carried.
    pub frames_sent: u64,
    /// Frames sent carrying XOFF (quanta > 0), per class.
    pub xoff_sent: [u64; PFC_CLASSES],
    /// Frames sent carrying XON (quanta 0), per class.
    pub xon_sent: [u64; PFC_CLASSES],
}

impl PfcSender {
    /// The upstream is held for `class`.
    pub fn holding(&self, class: u8) -> bool {
        self.held & (1 << class) != 0
    }

    /// The classes the upstream is held for, bit n for class n.
    pub fn holding_mask(&self) -> u8 {
        self.held
    }

    /// Whether `class` should be held with `occupancy` bytes against its
    /// thresholds: from XOFF (inclusive) until it falls to XON (inclusive).
    pub fn should_pause(&self, class: u8, occupancy: u64, xoff: u64, xon: u64) -> bool {
        if self.holding(class) {
            occupancy > xon
        } else {
            occupancy >= xoff
        }
    }

    /// The classes in `want` should be held and the others not: XOFF for
    /// those newly held, XON for those released, in one frame; `None` if
    /// nothing changed.
    pub fn decide(&mut self, want: u8) -> Option<PfcFrame> {
        let (hold, release) = (want & !self.held, self.held & !want);
        for c in classes(hold | release) {
            self.refresh_at[c as usize] = None;
        }
        self.held = want;
        let f = PfcFrame::xoff(hold).merge(PfcFrame::xon(release));
        (!f.is_empty()).then_some(f)
    }

    /// XOFF again for the held classes whose refresh is due at `now`.
    pub fn refresh(&mut self, now: Time) -> Option<PfcFrame> {
        let due = classes(self.held)
            .filter(|&c| self.refresh_at[c as usize].is_some_and(|t| t <= now))
            .fold(0u8, |m, c| m | (1 << c));
        for c in classes(due) {
            self.refresh_at[c as usize] = None;
        }
        (due != 0).then(|| PfcFrame::xoff(due))
    }

    /// The last bit of `f` left at `now` on a link of `rate`: count it, and
    /// return when its XOFFs for classes still held are due again (half
    /// their pause time from now), if it carries any.
    pub fn sent(&mut self, now: Time, f: &PfcFrame, rate: Rate) -> Option<Time> {
        self.frames_sent += 1;
        let mut next: Option<Time> = None;
        for c in classes(f.enable) {
            let (i, q) = (c as usize, f.quanta[c as usize]);
            if q == 0 {
                self.xon_sent[i] += 1;
                continue;
            }
            self.xoff_sent[i] += 1;
            if self.holding(c) {
                let t = now + Time(pause_time(q, rate).0 / 2);
                self.refresh_at[i] = Some(t);
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R10: Rate = Rate::gbps(10);
    /// 0xFFFF quanta at 10 Gb/s: 65,535 × 512 bits / 10^10 bit/s = 3.355392 ms.
    const XOFF_10G: Time = Time(3_355_392_000);

    fn bits(classes: &[u8]) -> u8 {
        classes.iter().fold(0, |m, c| m | (1 << c))
    }

    #[test]
    fn pause_times_are_exact_picoseconds() {
        assert_eq!(pause_time(0xFFFF, R10), XOFF_10G);
        // 512 bits / 10^11 bit/s = 5.12 ns.
        assert_eq!(pause_time(1, Rate::gbps(100)), Time(5_120));
        // 512 bits / 3 Gb/s = 170,666.67 ps, rounded up as bit_times does.
        assert_eq!(pause_time(1, Rate::gbps(3)), Time(170_667));
        assert_eq!(pause_time(0, R10), Time::ZERO);
    }

    #[test]
    fn frames_enable_the_classes_they_name() {
        let f = PfcFrame::xoff(bits(&[3, 5]));
        assert_eq!(f.enable, 0b0010_1000);
        assert_eq!(f.quanta(3), Some(0xFFFF));
        assert_eq!(f.quanta(4), None);
        assert_eq!(f.quanta, [0, 0, 0, 0xFFFF, 0, 0xFFFF, 0, 0]);
        assert_eq!(PfcFrame::xon(bits(&[1])).quanta(1), Some(0));
        assert_eq!(PfcFrame::one(6, 100), PfcFrame::default().with(6, 100));
        assert_eq!(PfcFrame::from_pause(7), PfcFrame::one(0, 7));
        // A newer decision for class 3 wins; class 5 is kept.
        let m = f.merge(PfcFrame::xon(bits(&[3, 1])));
        assert_eq!(m.enable, bits(&[1, 3, 5]));
        assert_eq!(
            (m.quanta(1), m.quanta(3), m.quanta(5)),
            (Some(0), Some(0), Some(0xFFFF))
        );
    }

    #[test]
    fn pausing_classes_3_and_5_leaves_the_others_free() {
        let mut r = PfcReceiver::default();
        let e = r.on_frame(Time(1_000), &PfcFrame::xoff(bits(&[3, 5])), R10);
        let until = Time(1_000) + XOFF_10G;
        assert_eq!(
            e.iter().collect::<Vec<_>>(),
            [
                (3, PauseEffect::HoldUntil(until, 1)),
                (5, PauseEffect::HoldUntil(until, 1))
            ]
        );
        assert_eq!(r.paused_mask(), bits(&[3, 5]));
        for c in 0..8 {
            assert_eq!(r.paused(c), c == 3 || c == 5, "class {c}");
        }
        assert_eq!(r.paused_until(3), Some(until));
        assert_eq!(r.paused_until(4), None);
    }

    #[test]
    fn a_later_frame_overrides_the_timer_shorter_or_longer() {
        let mut r = PfcReceiver::default();
        r.on_frame(Time(0), &PfcFrame::one(2, 1_000), R10);
        // 100 quanta = 51,200 bit times = 5.12 us at 10 Gb/s, from now.
        let e = r.on_frame(Time(1_000_000), &PfcFrame::one(2, 100), R10);
        assert_eq!(e.get(2), Some(PauseEffect::HoldUntil(Time(6_120_000), 2)));
        // 1,000 quanta = 51.2 us from now, not added to the 5.12 us.
        let e = r.on_frame(Time(2_000_000), &PfcFrame::one(2, 1_000), R10);
        assert_eq!(e.get(2), Some(PauseEffect::HoldUntil(Time(53_200_000), 3)));
        assert_eq!(r.paused_until(2), Some(Time(53_200_000)));
        // The two earlier expiries are stale; the last one resumes.
        assert!(!r.expire(2, 2, Time(6_120_000)));
        assert!(!r.expire(2, 1, Time(51_200_000)));
        assert!(r.paused(2));
        assert!(r.expire(2, 3, Time(53_200_000)));
        assert!(!r.paused(2));
        assert_eq!(r.paused_time(2, Time(60_000_000)), Time(53_200_000));
    }

    #[test]
    fn time_zero_resumes_only_the_classes_it_enables() {
        let mut r = PfcReceiver::default();
        r.on_frame(Time(0), &PfcFrame::xoff(bits(&[1, 3, 5])), R10);
        // XON for 3 (paused) and 6 (not paused): only 3 changes.
        let e = r.on_frame(Time(500), &PfcFrame::xon(bits(&[3, 6])), R10);
        assert_eq!(e.iter().collect::<Vec<_>>(), [(3, PauseEffect::Resume)]);
        assert_eq!(r.paused_mask(), bits(&[1, 5]));
        // A mixed frame: 1 resumes, 5 gets a new timer, the rest untouched.
        let f = PfcFrame::xon(bits(&[1])).with(5, 10);
        let e = r.on_frame(Time(1_000), &f, R10);
        assert_eq!(e.get(1), Some(PauseEffect::Resume));
        assert_eq!(
            e.get(5),
            Some(PauseEffect::HoldUntil(Time(1_000 + 512_000), 2))
        );
        assert_eq!(r.paused_mask(), bits(&[5]));
    }

    #[test]
    fn an_expiry_with_an_old_generation_does_nothing() {
        let mut r = PfcReceiver::default();
        r.on_frame(Time(0), &PfcFrame::one(4, 10), R10);
        r.on_frame(Time(100), &PfcFrame::one(4, 10), R10);
        assert!(!r.expire(4, 1, Time(512_000)));
        assert!(r.paused(4));
        // Generations are per class: class 0's first expiry is not stale.
        r.on_frame(Time(200), &PfcFrame::one(0, 10), R10);
        assert!(r.expire(4, 2, Time(512_100)));
        assert!(r.expire(0, 1, Time(512_200)));
        assert_eq!(r.paused_mask(), 0);
        // An expiry after an XON finds nothing to resume.
        r.on_frame(Time(600_000), &PfcFrame::one(4, 10), R10);
        r.on_frame(Time(601_000), &PfcFrame::xon(bits(&[4])), R10);
        assert!(!r.expire(4, 3, Time(1_112_000)));
    }

    /// The same frames, as 802.3x PAUSE to a `PauseReceiver` and as PFC
    /// class-0 frames, leave the two in the same state at every step.
    #[test]
    fn one_class_pfc_is_pause() {
        enum Step {
            Frame(u64, u16),
            Expire(u64),
        }
        use Step::*;
        let steps = [
            Frame(0, 0),           // XON while running
            Frame(1_000, 0xFFFF),  // XOFF, to 3,355,393,000
            Frame(2_000_000, 100), // a shorter timer: to 7,120,000
            Frame(4_000_000, 200), // a longer one: to 14,240,000
            Expire(7_120_000),     // stale
            Expire(14_240_000),    // resumes
            Frame(20_000_000, 0xFFFF),
            Frame(21_000_000, 0), // XON while paused
            Frame(30_000_000, 1),
            Expire(30_051_200),    // resumes
            Expire(3_355_393_000), // stale
            Expire(3_375_392_000), // stale (after the XON)
        ];
        let (mut pause, mut pfc) = (PauseReceiver::default(), PfcReceiver::default());
        let mut expiries = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            match *s {
                Frame(t, q) => {
                    let was_paused = pause.paused;
                    let a = pause.receive(Time(t), q, R10);
                    let b = pfc.on_frame(Time(t), &PfcFrame::from_pause(q), R10);
                    let a = match a {
                        PauseEffect::Resume if !was_paused => None,
                        e => Some(e),
                    };
                    assert_eq!(b.get(0), a, "step {i}");
                    assert_eq!(b.iter().count(), usize::from(a.is_some()), "step {i}");
                    if let Some(PauseEffect::HoldUntil(at, g)) = a {
                        expiries.push((at, g));
                    }
                }
                Expire(t) => {
                    let (at, g) = *expiries.iter().find(|e| e.0 == Time(t)).expect("scheduled");
                    assert_eq!(pause.expire(at, g), pfc.expire(0, g, at), "step {i}");
                }
            }
            assert_eq!(pfc.paused_mask(), u8::from(pause.paused), "step {i}");
            assert_eq!(pfc.paused_since(0), pause.paused_since(), "step {i}");
        }
        let end = Time(4_000_000_000);
        assert_eq!(pfc.paused_time(0, end), pause.paused_time(end));
        // 1 ns .. 14.24 us, 20 us .. 21 us, 30 us .. 30.0512 us.
        assert_eq!(
            pause.paused_time(end),
            Time(14_239_000 + 1_000_000 + 51_200)
        );
    }

    #[test]
    fn the_sender_holds_and_releases_several_classes_in_one_frame() {
        let mut s = PfcSender::default();
        assert_eq!(s.decide(0), None);
        assert_eq!(s.decide(bits(&[3, 5])), Some(PfcFrame::xoff(bits(&[3, 5]))));
        assert_eq!(s.decide(bits(&[3, 5])), None);
        // 5 released and 1 held, together.
        let f = s.decide(bits(&[1, 3])).unwrap();
        assert_eq!(
            f,
            PfcFrame::xoff(bits(&[1])).merge(PfcFrame::xon(bits(&[5])))
        );
        assert_eq!(s.holding_mask(), bits(&[1, 3]));
        assert!(s.holding(3) && !s.holding(5));
        s.sent(Time(0), &f, R10);
        assert_eq!(s.frames_sent, 1);
        assert_eq!(s.xoff_sent, [0, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(s.xon_sent, [0, 0, 0, 0, 0, 1, 0, 0]);
    }

    #[test]
    fn the_sender_holds_from_xoff_until_xon() {
        let mut s = PfcSender::default();
        let (xoff, xon) = (100, 80);
        assert!(!s.should_pause(2, 99, xoff, xon));
        assert!(s.should_pause(2, 100, xoff, xon));
        s.decide(bits(&[2]));
        assert!(s.should_pause(2, 81, xoff, xon));
        assert!(!s.should_pause(2, 80, xoff, xon));
        // Hysteresis is per class.
        assert!(!s.should_pause(3, 90, xoff, xon));
    }

    #[test]
    fn the_sender_refreshes_a_held_class_at_half_its_pause_time() {
        let mut s = PfcSender::default();
        let f = s.decide(bits(&[3])).unwrap();
        // Nothing is due before the XOFF has left.
        assert_eq!(s.refresh(Time(10_000_000_000)), None);
        let t0 = Time(1_000);
        let half = Time(XOFF_10G.0 / 2); // 1.677696 ms
        assert_eq!(s.sent(t0, &f, R10), Some(t0 + half));
        assert_eq!(s.refresh(t0 + half - Time(1)), None);
        // Class 5 held meanwhile: its XOFF is not yet sent, so not due.
        let g = s.decide(bits(&[3, 5])).unwrap();
        assert_eq!(g, PfcFrame::xoff(bits(&[5])));
        let r = s.refresh(t0 + half);
        assert_eq!(r, Some(PfcFrame::xoff(bits(&[3]))));
        // Due once: a second refresh event at the same time finds nothing.
        assert_eq!(s.refresh(t0 + half), None);
        let t1 = t0 + half + Time(100_000);
        assert_eq!(s.sent(t1, &r.unwrap().merge(g), R10), Some(t1 + half));
        assert_eq!(s.xoff_sent[3], 2);
        // Released: an old refresh event finds nothing due.
        let x = s.decide(0).unwrap();
        assert_eq!(x, PfcFrame::xon(bits(&[3, 5])));
        assert_eq!(s.refresh(t1 + half), None);
        // An XOFF that reaches the wire after its class was released sets no refresh.
        let mut s = PfcSender::default();
        let f = s.decide(bits(&[6])).unwrap();
        s.decide(0);
        assert_eq!(s.sent(t0, &f, R10), None);
        assert_eq!(s.refresh(t0 + half), None);
    }
}
