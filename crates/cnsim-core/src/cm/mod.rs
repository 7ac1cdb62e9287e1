//! Congestion management: one module per scheme. Each module holds the
//! scheme's parameters, its congestion-point half (on switch output queues),
//! its reaction-point arithmetic (on the adapter's rate limiters, see
//! `net::rate_limiter`) and the scheme's state in a running network.
//!
//! The engine knows schemes only through `Scheme` and its hooks, each
//! called from one place: a data frame's arrival at a switch output queue
//! (`congestion_point`), a notification's arrival at its flow's source
//! (`reaction_point`), a limiter's release of a frame (`released`), a
//! scheme timer (`timer`) and a frame's arrival at its destination host
//! (`at_destination`). Hooks change the flow's limiter in place and say in
//! a `Reaction` or a `Message` what else the engine has to do. The per-frame
//! hooks are a `match` on the enum: no dynamic dispatch.

pub mod bcn;
pub mod bcn_scheme;
pub mod dcqcn;
pub mod e2cm;
pub mod qcn;

use crate::net::frame::{Frame, FrameKind};
use crate::net::rate_limiter::RateLimiter;
use crate::units::{Bytes, Time};
use e2cm::ProbeRecord;

/// The congestion-management scheme of a run, with all its state.
// One per run, held in place: boxing the large variants would put an
// indirection on the per-frame path.
#[allow(clippy::large_enum_variant)]
pub enum Scheme {
    None,
    /// BCN and its variants; with a probe loop, E2CM.
    Bcn(bcn_scheme::Bcn),
    Qcn(qcn::Qcn),
    /// DCQCN: ECN marks at switches, CNPs from the receiving host.
    Dcqcn(dcqcn::Dcqcn),
}

impl Scheme {
    /// A RoCE flow's notifications ride on its ACKs as a flag, not as
    /// frames of their own (DCQCN's `cnp_on_ack`).
    pub fn answers_on_acks(&self) -> bool {
        matches!(self, Scheme::Dcqcn(d) if d.params.cnp_on_ack)
    }
}

/// A scheme timer, carried by the engine's `CmTimer` event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmTimer {
    /// BCN's self-increase of a limiter's rate.
    Drift,
    /// E2CM: a probing flow checks whether its longest probe interval has passed.
    Probe,
    /// The end of a QCN reaction point's timer cycle.
    Qcn,
    /// The end of a DCQCN reaction point's increase timer cycle.
    DcqcnIncrease,
    /// DCQCN's α decays: an interval passed without a CNP (Mellanox: α's
    /// periodic update).
    DcqcnAlpha,
    /// Mellanox DCQCN: a tick of the rate-decrease grid with a CNP latched.
    DcqcnDecrease,
}

impl CmTimer {
    /// The event kind the fingerprint records for this timer: the numbers
    /// of the three timer events `CmTimer` replaced, so that fingerprints
    /// stay as they were.
    #[inline]
    pub fn trace_kind(self) -> u64 {
        match self {
            CmTimer::Drift => 9,
            CmTimer::Probe => 12,
            CmTimer::Qcn => 13,
            CmTimer::DcqcnIncrease => 19,
            CmTimer::DcqcnAlpha => 20,
            CmTimer::DcqcnDecrease => 21,
        }
    }
}

/// A timer a hook asks for: `timer` of the flow's limiter at `at`; the
/// event carries `generation` so that a superseded timer is ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerRequest {
    pub timer: CmTimer,
    pub at: Time,
    pub generation: u32,
}

/// What the engine does after a reaction-point hook, in this order.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reaction {
    /// A limiter was installed (the flow counts it).
    pub installed: bool,
    /// The limiter's rate changed: the rate series records it, and a
    /// limiter back at its line rate may be released.
    pub rate_changed: bool,
    /// The reaction point's target rate changed to this (QCN's TR, bit/s).
    pub target: Option<f64>,
    /// DCQCN's α changed to this.
    pub alpha: Option<f64>,
    /// The limiter has a probe to send: make sure it has a release event.
    pub wake: bool,
    /// Timers to arm.
    pub timers: [Option<TimerRequest>; 2],
}

impl Reaction {
    /// Nothing to do (what most of a limiter's releases answer).
    #[inline]
    pub fn is_nothing(&self) -> bool {
        !(self.installed || self.rate_changed || self.wake)
            && self.target.is_none()
            && self.alpha.is_none()
            && self.timers == [None, None]
    }

    fn rate_changed() -> Reaction {
        Reaction {
            rate_changed: true,
            ..Reaction::default()
        }
    }
}

/// How a congestion point's message is counted at its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sign {
    Negative,
    Positive,
    Stop,
}

/// A control frame a scheme sends: the engine addresses it (to the
/// flow's source, or for a probe to its destination) and sends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    pub kind: FrameKind,
    pub bytes: u16,
    /// The frame's `cpid`: the sending congestion point, or the probe's record.
    pub cpid: u32,
    pub aux: u32,
    pub qfb: u8,
}

/// A data frame admitted into switch output `out`, which held `queue`
/// bytes before it (the occupancy the frame found).
#[derive(Clone, Copy)]
pub struct Arrival<'a> {
    pub out: u32,
    pub frame: &'a Frame,
    pub queue: u64,
}

/// A congestion point's message to the source of the frame it sampled,
/// and how its queue counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notice {
    pub sign: Sign,
    pub message: Message,
}

impl Notice {
    /// A message of `kind` and `bytes` from the congestion point `cpid`.
    fn new(sign: Sign, kind: FrameKind, bytes: u32, cpid: u32, aux: u32, qfb: u8) -> Notice {
        let bytes = bytes as u16;
        let message = Message {
            kind,
            bytes,
            cpid,
            aux,
            qfb,
        };
        Notice { sign, message }
    }
}

/// Where a reaction-point hook acts: the flow's limiter (row `row`), the
/// time and the line rate of the flow's source in bit/s.
pub struct Rp<'a> {
    pub row: u32,
    pub now: Time,
    pub line: f64,
    pub limiter: &'a mut RateLimiter,
}

impl Scheme {
    /// The scheme has congestion points (`congestion_point` may answer).
    #[inline]
    pub fn has_congestion_points(&self) -> bool {
        !matches!(self, Scheme::None | Scheme::Dcqcn(_))
    }

    /// Which data frames its congestion points count and sample: every
    /// frame arriving at the queue, admitted or dropped (QCN: 802.1Qau's
    /// congestion point as switch hardware implements it, counting
    /// "enqueued or discarded" bytes), or only the frames the queue takes
    /// in (BCN and ECM, whose proposals count enqueued frames).
    #[inline]
    pub fn samples_dropped_frames(&self) -> bool {
        matches!(self, Scheme::Qcn(_))
    }

    /// A data frame arrived at a switch output queue, which holds
    /// `a.queue` bytes before it (see `samples_dropped_frames` for which
    /// frames come here): the congestion point's message to the frame's
    /// source, if any.
    #[inline]
    pub fn congestion_point(&mut self, a: Arrival) -> Option<Notice> {
        match self {
            Scheme::None | Scheme::Dcqcn(_) => None,
            Scheme::Bcn(s) => s.congestion_point(a),
            Scheme::Qcn(s) => s.congestion_point(a),
        }
    }

    /// A notification reaches the reaction point of its flow's limiter.
    pub fn reaction_point(&mut self, message: &Frame, rp: Rp) -> Reaction {
        match self {
            Scheme::None => unreachable!("notifications need a scheme"),
            Scheme::Bcn(s) => s.react(message, rp),
            Scheme::Qcn(s) => s.react(message, rp),
            Scheme::Dcqcn(s) => s.react(message, rp),
        }
    }

    /// `released` has work to do (QCN's byte counter, E2CM's probes): the
    /// engine skips the call, and the line rate it needs, otherwise.
    #[inline]
    pub fn watches_releases(&self) -> bool {
        match self {
            Scheme::None => false,
            Scheme::Bcn(s) => s.watches_releases(),
            Scheme::Qcn(_) | Scheme::Dcqcn(_) => true,
        }
    }

    /// A flow's first frame enters its adapter: a probe should leave with
    /// it (E2CM learning its baseline latency, `e2cm::Baseline`).
    #[inline]
    pub fn probes_at_flow_start(&self) -> bool {
        match self {
            Scheme::Bcn(s) => s.probes_at_flow_start(),
            Scheme::None | Scheme::Qcn(_) | Scheme::Dcqcn(_) => false,
        }
    }

    /// The limiter released a data frame of `bytes`.
    #[inline]
    pub fn released(&mut self, bytes: u16, rp: Rp) -> Reaction {
        match self {
            Scheme::None => Reaction::default(),
            Scheme::Bcn(s) => s.released(bytes, rp),
            Scheme::Qcn(s) => s.released(bytes, rp),
            Scheme::Dcqcn(s) => s.released(bytes, rp),
        }
    }

    /// A timer armed by a `Reaction` ran out.
    pub fn timer(&mut self, timer: CmTimer, generation: u32, rp: Rp) -> Reaction {
        match self {
            Scheme::None => unreachable!("timers need a scheme"),
            Scheme::Bcn(s) => s.timer(timer, generation, rp),
            Scheme::Qcn(s) => {
                debug_assert_eq!(timer, CmTimer::Qcn);
                s.timer(generation, rp)
            }
            Scheme::Dcqcn(s) => s.timer(timer, generation, rp),
        }
    }

    /// The limiter of `row` was removed (back at line rate, queue empty).
    pub fn limiter_removed(&mut self, row: u32, limiter: &mut RateLimiter) {
        if let Scheme::Bcn(s) = self {
            s.limiter_removed(row, limiter);
        }
    }

    /// A control frame of the scheme reaches its destination host: the
    /// answer to send back to the flow's source, if any, and whether it
    /// travels in the expedited class.
    pub fn at_destination(&mut self, frame: &Frame, now: Time) -> Option<(Message, bool)> {
        match self {
            Scheme::Bcn(s) => s.at_destination(frame, now),
            Scheme::None | Scheme::Qcn(_) | Scheme::Dcqcn(_) => None,
        }
    }

    /// Data frames must reach their destination through an event (the
    /// destination measures them), not be delivered at their last bit.
    /// (DCQCN's notification point answers single frames: a CNP is sent
    /// when its frame arrives, by an event of its own.)
    pub fn watches_destinations(&self) -> bool {
        match self {
            Scheme::Bcn(s) => s.watches_destinations(),
            Scheme::None | Scheme::Qcn(_) | Scheme::Dcqcn(_) => false,
        }
    }

    /// A data frame reached its destination at `now`: the message to send
    /// back to the flow's source, if any (DCQCN's CNP).
    #[inline]
    pub fn delivered(&mut self, frame: &Frame, now: Time) -> Option<Message> {
        match self {
            Scheme::Bcn(s) => {
                s.delivered(frame.flow, frame.size);
                None
            }
            Scheme::Dcqcn(s) => s.delivered(frame, now),
            Scheme::None | Scheme::Qcn(_) => None,
        }
    }

    /// The probe the flow's limiter sends now, before its next frame.
    pub fn probe(&mut self, flow: u32, now: Time) -> Message {
        match self {
            Scheme::Bcn(s) => s.probe(flow, now),
            Scheme::None | Scheme::Qcn(_) | Scheme::Dcqcn(_) => unreachable!("probes need E2CM"),
        }
    }

    /// Bytes of the probe a limiter is due to send.
    pub fn probe_bytes(&self) -> u32 {
        match self {
            Scheme::Bcn(s) => s.probe_bytes(),
            Scheme::None | Scheme::Qcn(_) | Scheme::Dcqcn(_) => unreachable!("probes need E2CM"),
        }
    }

    /// Probes sent and reflected probes back, of `flow` (zero without probes).
    pub fn probe_counts(&self, flow: u32) -> (u64, u64) {
        match self {
            Scheme::Bcn(s) => s.probe_counts(flow),
            Scheme::None | Scheme::Qcn(_) | Scheme::Dcqcn(_) => (0, 0),
        }
    }

    /// DCQCN's CNPs about `flow` (zero for other schemes).
    pub fn cnps_sent(&self, flow: u32) -> u64 {
        match self {
            Scheme::Dcqcn(s) => s.cnps[flow as usize],
            Scheme::None | Scheme::Bcn(_) | Scheme::Qcn(_) => 0,
        }
    }

    /// The record an E2CM probe or reflected probe carries (kept beside
    /// it, not in the frame): what goes with it into another partition of
    /// a split run. `None` for every other frame.
    pub fn probe_record(&self, frame: &Frame) -> Option<ProbeRecord> {
        match (self, frame.kind) {
            (Scheme::Bcn(b), FrameKind::Probe | FrameKind::ProbeReply) => {
                b.e2cm().map(|e| e.probe_record(frame))
            }
            _ => None,
        }
    }

    /// Record `index` of `flow`'s probes as another partition of a split
    /// run kept it, where its probe or reflected probe comes from.
    pub fn put_probe_record(&mut self, flow: u32, index: u32, record: ProbeRecord) {
        if let Scheme::Bcn(b) = self {
            b.e2cm_mut()
                .expect("probes come from E2CM")
                .put_probe_record(flow, index, record);
        }
    }

    /// A control frame of the scheme was dropped in the network.
    pub fn message_dropped(&mut self, frame: &Frame) {
        if let Scheme::Bcn(s) = self {
            s.message_dropped(frame);
        }
    }

    /// Control frames of this kind travel in the expedited class.
    pub fn expedites(&self, kind: FrameKind) -> bool {
        match self {
            Scheme::None | Scheme::Dcqcn(_) => false,
            Scheme::Bcn(s) => s.expedites(kind),
            Scheme::Qcn(s) => kind == FrameKind::Cnm && s.params.expedite,
        }
    }

    /// What an installed limiter's queue holds at most.
    pub fn limiter_queue(&self) -> Bytes {
        match self {
            Scheme::None => Bytes(0),
            Scheme::Bcn(s) => s.params.rl_queue,
            Scheme::Qcn(s) => s.params.rl_queue,
            Scheme::Dcqcn(s) => s.params.rp.rl_queue,
        }
    }
}
