//! IEEE 802.3x PAUSE: the state a port keeps as a sender of PAUSE (toward
//! its upstream neighbour) and as a receiver of PAUSE (its own transmitter),
//! and the threshold decisions of the generation modes.

use crate::units::{Rate, Time};

/// When a switch sends PAUSE (`mode` in a scenario's `[switch.pause]`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PauseMode {
    Off,
    /// An output buffer at XOFF pauses every other port of the switch.
    Global,
    /// Each input is paused on its own occupancy (input-partitioned memory).
    PerInput,
}

/// A switch's PAUSE configuration, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PauseSpec {
    pub mode: PauseMode,
    /// Occupancy (bytes) at or above which XOFF is sent.
    pub xoff: u64,
    /// Occupancy (bytes) at or below which XON is sent.
    pub xon: u64,
    pub refresh: bool,
}

/// A PAUSE frame is a minimum-size MAC control frame.
pub const PAUSE_FRAME_BYTES: u64 = 64;
/// One pause quantum is 512 bit times.
pub const PAUSE_QUANTUM_BITS: u64 = 512;
/// XOFF advertises the largest pause time.
pub const XOFF_QUANTA: u16 = 0xFFFF;

/// A port's link-level flow control: what it has told its upstream
/// neighbour, what its own transmitter has been told, and the PAUSE frame
/// waiting to go out. PAUSE has one class; PFC will give each priority its
/// own sender and receiver here, and a pending frame a class-enable vector.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortPause {
    /// PAUSE this port sends upstream.
    pub sender: PauseSender,
    /// PAUSE this port's transmitter has received.
    pub receiver: PauseReceiver,
    /// Quanta of a PAUSE frame waiting to go out ahead of data; a newer
    /// decision replaces one not yet sent.
    pub pending: Option<u16>,
    /// Global mode: this output is above XOFF.
    pub congested: bool,
    /// The occupancies at which this port's PAUSE decision can change,
    /// kept beside its state (`watch`, `output_crossing`, `input_crossing`).
    pub crossings: Crossings,
}

/// Where a watched occupancy (an output's bytes in global mode, an input's
/// in per-input mode) must be at for its PAUSE decision to change: at or
/// above XOFF while not holding, at or below XON while holding. A frame's
/// check then reads the port alone, and the switch's mode and thresholds
/// only at a crossing. In 32 bits, rounded so that the test may say yes
/// where the exact decision then says no (thresholds beyond 4 GB), never
/// the other way. `NEVER` on ports that nothing watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crossings {
    /// A crossing below this (XON + 1 while holding, else 0).
    below: u32,
    /// A crossing at or above this (XOFF while not holding, else never).
    at_or_above: u32,
}

impl Crossings {
    pub const NEVER: Crossings = Crossings {
        below: 0,
        at_or_above: u32::MAX,
    };

    /// Where the decision changes next, holding or not.
    pub fn of(holding: bool, xoff: u64, xon: u64) -> Crossings {
        if holding {
            Crossings {
                below: u32::try_from(xon.saturating_add(1)).unwrap_or(u32::MAX),
                at_or_above: u32::MAX,
            }
        } else {
            Crossings {
                below: 0,
                at_or_above: u32::try_from(xoff).unwrap_or(u32::MAX),
            }
        }
    }

    /// The decision may change at `occupancy`.
    #[inline(always)]
    pub fn crossed(self, occupancy: u64) -> bool {
        occupancy < self.below as u64 || occupancy >= self.at_or_above as u64
    }
}

impl Default for Crossings {
    fn default() -> Crossings {
        Crossings::NEVER
    }
}

impl PortPause {
    /// The transmitter may not start data frames.
    #[inline]
    pub fn paused(&self) -> bool {
        self.receiver.paused
    }

    /// Global mode: this output now holds `occupancy` bytes. `Some(true)`
    /// when it reaches XOFF (the upstream of every other port is held),
    /// `Some(false)` when it falls back to XON (they are released).
    #[inline]
    pub fn output_crossing(&mut self, occupancy: u64, xoff: u64, xon: u64) -> Option<bool> {
        let hold = if !self.congested && occupancy >= xoff {
            true
        } else if self.congested && occupancy <= xon {
            false
        } else {
            return None;
        };
        self.congested = hold;
        self.crossings = Crossings::of(hold, xoff, xon);
        Some(hold)
    }

    /// The port's occupancy is watched against `xoff` and `xon` from now
    /// (set-up: neither congested nor holding yet).
    pub fn watch(&mut self, xoff: u64, xon: u64) {
        self.crossings = Crossings::of(false, xoff, xon);
    }

    /// Global mode: one reason more (`hold`) or fewer to hold this port's
    /// upstream; the PAUSE to send, if that changes what it was told.
    pub fn hold_upstream(&mut self, hold: bool) -> Option<PauseCommand> {
        if hold {
            self.sender.hold()
        } else {
            self.sender.release()
        }
    }

    /// Per-input mode: this input's partition now holds `occupancy` bytes;
    /// the PAUSE to send upstream, if any.
    #[inline]
    pub fn input_crossing(&mut self, occupancy: u64, xoff: u64, xon: u64) -> Option<PauseCommand> {
        let s = &mut self.sender;
        let command = if !s.holding() && occupancy >= xoff {
            s.hold()
        } else if s.holding() && occupancy <= xon {
            s.release()
        } else {
            None
        };
        self.crossings = Crossings::of(s.holding(), xoff, xon);
        command
    }
}

/// What a port has told its upstream neighbour.
#[derive(Clone, Copy, Debug, Default)]
pub struct PauseSender {
    /// Reasons to hold the neighbour: congested outputs (global mode) or
    /// this input's own partition (per-input mode). XOFF while > 0.
    pub holds: u32,
    /// Bumped on every PAUSE decision so stale refresh timers are ignored.
    pub generation: u32,
    pub frames_sent: u64,
    pub xoff_sent: u64,
}

/// A change in what should be sent upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseCommand {
    Xoff,
    Xon,
}

impl PauseCommand {
    pub fn quanta(self) -> u16 {
        match self {
            PauseCommand::Xoff => XOFF_QUANTA,
            PauseCommand::Xon => 0,
        }
    }
}

impl PauseSender {
    /// One more reason to hold; XOFF on the first.
    pub fn hold(&mut self) -> Option<PauseCommand> {
        self.holds += 1;
        (self.holds == 1).then(|| self.decided(PauseCommand::Xoff))
    }

    /// One reason fewer; XON on the last.
    pub fn release(&mut self) -> Option<PauseCommand> {
        debug_assert!(self.holds > 0, "PAUSE release without hold");
        self.holds -= 1;
        (self.holds == 0).then(|| self.decided(PauseCommand::Xon))
    }

    pub fn holding(&self) -> bool {
        self.holds > 0
    }

    fn decided(&mut self, c: PauseCommand) -> PauseCommand {
        self.generation = self.generation.wrapping_add(1);
        c
    }
}

/// The pause timer of a transmitter.
#[derive(Clone, Copy, Debug, Default)]
pub struct PauseReceiver {
    pub paused: bool,
    /// Bumped on every received PAUSE; an expiry event carries the value it was scheduled with.
    pub generation: u32,
    since: Time,
    pub paused_total: Time,
}

/// What the transmitter must do after a PAUSE frame took effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseEffect {
    /// Hold until this time (schedule an expiry with `generation`).
    HoldUntil(Time, u32),
    /// Transmission may resume now.
    Resume,
}

/// Duration of `quanta` pause quanta at `rate`.
pub fn pause_duration(quanta: u16, rate: Rate) -> Time {
    rate.bit_times(quanta as u64 * PAUSE_QUANTUM_BITS)
}

impl PauseReceiver {
    /// A PAUSE frame with `quanta` takes effect now. A new frame replaces the running timer.
    pub fn receive(&mut self, now: Time, quanta: u16, rate: Rate) -> PauseEffect {
        self.generation = self.generation.wrapping_add(1);
        if quanta == 0 {
            self.resume(now);
            return PauseEffect::Resume;
        }
        if !self.paused {
            self.paused = true;
            self.since = now;
        }
        PauseEffect::HoldUntil(now + pause_duration(quanta, rate), self.generation)
    }

    /// The timer scheduled with `generation` ran out. True if this resumes the port.
    pub fn expire(&mut self, now: Time, generation: u32) -> bool {
        if generation != self.generation || !self.paused {
            return false;
        }
        self.resume(now);
        true
    }

    fn resume(&mut self, now: Time) {
        if self.paused {
            self.paused = false;
            self.paused_total = self.paused_total + (now - self.since);
        }
    }

    /// When the current pause began, if paused.
    pub fn paused_since(&self) -> Option<Time> {
        self.paused.then_some(self.since)
    }

    /// Paused time up to `now`, counting an open interval.
    pub fn paused_time(&self, now: Time) -> Time {
        if self.paused {
            self.paused_total + now.saturating_sub(self.since)
        } else {
            self.paused_total
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoff_on_first_hold_xon_on_last_release() {
        let mut s = PauseSender::default();
        assert_eq!(s.hold(), Some(PauseCommand::Xoff));
        assert_eq!(s.hold(), None);
        assert_eq!(s.release(), None);
        assert_eq!(s.release(), Some(PauseCommand::Xon));
    }

    #[test]
    fn an_output_holds_at_xoff_and_releases_at_xon_once_each() {
        let mut p = PortPause::default();
        let (xoff, xon) = (100, 80);
        assert_eq!(p.output_crossing(99, xoff, xon), None);
        assert_eq!(p.output_crossing(100, xoff, xon), Some(true));
        assert_eq!(p.output_crossing(120, xoff, xon), None);
        assert_eq!(p.output_crossing(81, xoff, xon), None);
        assert_eq!(p.output_crossing(80, xoff, xon), Some(false));
        assert_eq!(p.output_crossing(0, xoff, xon), None);
    }

    /// A port's crossings say yes exactly where the exact decision changes
    /// (output and input mode, thresholds in 32 bits), and at least there
    /// beyond 32 bits.
    #[test]
    fn the_crossings_say_yes_where_the_decision_changes() {
        for (xoff, xon) in [(100, 80), (100, 0), (1 << 33, (1 << 33) - 4000)] {
            let exact = xoff < u32::MAX as u64;
            let (mut out, mut inp) = (PortPause::default(), PortPause::default());
            out.watch(xoff, xon);
            inp.watch(xoff, xon);
            let walk = (0..6).flat_map(|_| [0, xon, xon + 1, xoff - 1, xoff, xoff + 500]);
            for occ in walk.chain([xoff + 1, xon, xoff]) {
                let said = out.crossings.crossed(occ);
                let changed = out.output_crossing(occ, xoff, xon).is_some();
                assert!(
                    said || !changed,
                    "output at {occ}: a change the test missed"
                );
                assert!(!exact || said == changed, "output at {occ}");
                let said = inp.crossings.crossed(occ);
                let changed = inp.input_crossing(occ, xoff, xon).is_some();
                assert!(said || !changed, "input at {occ}: a change the test missed");
                assert!(!exact || said == changed, "input at {occ}");
            }
        }
        assert!(!PortPause::default().crossings.crossed(1 << 20));
    }

    #[test]
    fn an_input_sends_xoff_at_xoff_and_xon_at_xon() {
        let mut p = PortPause::default();
        let (xoff, xon) = (100, 80);
        assert_eq!(p.input_crossing(100, xoff, xon), Some(PauseCommand::Xoff));
        assert_eq!(p.input_crossing(90, xoff, xon), None);
        assert_eq!(p.input_crossing(80, xoff, xon), Some(PauseCommand::Xon));
        assert!(!p.sender.holding());
    }

    #[test]
    fn a_port_held_for_two_outputs_is_released_by_the_second() {
        let mut p = PortPause::default();
        assert_eq!(p.hold_upstream(true), Some(PauseCommand::Xoff));
        assert_eq!(p.hold_upstream(true), None);
        assert_eq!(p.hold_upstream(false), None);
        assert_eq!(p.hold_upstream(false), Some(PauseCommand::Xon));
    }

    #[test]
    fn new_pause_replaces_the_timer_and_stale_expiry_is_ignored() {
        let r10 = Rate::gbps(10);
        let mut r = PauseReceiver::default();
        let e1 = r.receive(Time(0), 0xFFFF, r10);
        assert_eq!(e1, PauseEffect::HoldUntil(Time(3_355_392_000), 1));
        let e2 = r.receive(Time(1_000_000), 100, r10);
        // 100 quanta = 51,200 bit times = 5.12 us at 10 Gb/s
        assert_eq!(e2, PauseEffect::HoldUntil(Time(1_000_000 + 5_120_000), 2));
        assert!(!r.expire(Time(3_355_392_000), 1));
        assert!(r.expire(Time(6_120_000), 2));
        assert_eq!(r.paused_time(Time(9_000_000)), Time(6_120_000));
        assert_eq!(r.receive(Time(10_000_000), 0, r10), PauseEffect::Resume);
    }
}
