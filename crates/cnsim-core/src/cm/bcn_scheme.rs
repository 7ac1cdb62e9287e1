//! The BCN family in a running network: BCN and its variants, and with a
//! probe loop E2CM. Apart from `bcn.rs` because it holds E2CM's state and
//! E2CM uses BCN's arithmetic.

use super::bcn::*;
use super::e2cm::E2cm;
use super::{Arrival, CmTimer, Message, Notice, Reaction, Rp, Sign, TimerRequest};
use crate::engine::rng::Stream;
use crate::net::frame::{Frame, FrameKind};
use crate::net::rate_limiter::RateLimiter;
use crate::units::Time;

/// BCN in a running network: a congestion point per switch output queue
/// (`None` where the switch has none), the reaction points' random streams
/// (BCN(0,0) stop times; empty without BCN(0,0)) and, for E2CM, the flows'
/// probe loop.
pub struct Bcn {
    pub params: BcnParams,
    cps: Vec<Option<CongestionPoint>>,
    rp_rng: Vec<Stream>,
    e2cm: Option<E2cm>,
}

impl Bcn {
    pub fn new(
        params: BcnParams,
        cps: Vec<Option<CongestionPoint>>,
        rp_rng: Vec<Stream>,
        e2cm: Option<E2cm>,
    ) -> Bcn {
        Bcn {
            params,
            cps,
            rp_rng,
            e2cm,
        }
    }

    #[inline]
    pub(super) fn congestion_point(&mut self, a: Arrival) -> Option<Notice> {
        let p = &self.params;
        let cp = self.cps[a.out as usize].as_mut()?;
        if !cp.sample(p, a.frame.size as u32) {
            return None;
        }
        let (sign, kind, fb) = match cp.feedback(p, a.queue, a.frame.cpid == a.out)? {
            Feedback::Stop => (Sign::Stop, FrameKind::BcnStop, 0),
            Feedback::Rate(v) if v < 0 => (Sign::Negative, FrameKind::Bcn, v),
            Feedback::Rate(v) => (Sign::Positive, FrameKind::Bcn, v),
        };
        let aux = Frame::pack_fb(fb);
        Some(Notice::new(sign, kind, p.message_bytes, a.out, aux, 0))
    }

    /// A BCN message (or, with E2CM, a reflected probe) reaches the flow's
    /// reaction point.
    pub(super) fn react(&mut self, message: &Frame, rp: Rp) -> Reaction {
        if message.kind == FrameKind::ProbeReply {
            let e = self.e2cm.as_mut().expect("probes need E2CM");
            return e.react(message, rp);
        }
        let p = &self.params;
        let Rp {
            row,
            now,
            line,
            limiter: rl,
        } = rp;
        let installed = !rl.active;
        let mut r = Reaction {
            installed,
            rate_changed: true,
            ..Reaction::default()
        };
        match message.kind {
            FrameKind::BcnStop => {
                let stop = p.stop.expect("BCN(0,0) is configured");
                if installed {
                    rl.install(line);
                }
                rl.cpid = message.cpid;
                rl.rate = bound(p, stop.restart_rate.0 as f64, line);
                let pause = stop_time(&stop, &mut self.rp_rng[row as usize]);
                rl.next_allowed = rl.next_allowed.max(now + pause);
            }
            FrameKind::Bcn if message.fb() < 0 => {
                if installed {
                    let initial = p.initial_rate.map_or(line, |r| bound(p, r.0 as f64, line));
                    rl.install(initial);
                }
                rl.cpid = message.cpid;
                rl.rate = react(p, rl.rate, message.fb(), line);
            }
            FrameKind::Bcn => {
                // Positive feedback only adjusts a limiter this CP controls.
                if !rl.active || rl.cpid != message.cpid {
                    return Reaction::default();
                }
                rl.rate = react(p, rl.rate, message.fb(), line);
                if p.drift.is_some() {
                    rl.drift_generation += 1;
                    r.timers[0] = self.drift_timer(now, rl);
                }
            }
            FrameKind::Data
            | FrameKind::Probe
            | FrameKind::ProbeReply
            | FrameKind::Cnm
            | FrameKind::Cnp
            | FrameKind::Ack => {
                unreachable!("only BCN messages reach the BCN reaction point")
            }
        }
        rl.messages += 1;
        if installed {
            r.timers[0] = self.drift_timer(now, rl);
            if let Some(e) = &mut self.e2cm {
                r.timers[1] = Some(e.start_probing(row, now));
            }
        }
        r
    }

    /// The next drift tick of a limiter, if drift is configured.
    fn drift_timer(&self, now: Time, rl: &RateLimiter) -> Option<TimerRequest> {
        self.params.drift.map(|d| TimerRequest {
            timer: CmTimer::Drift,
            at: now + d.interval,
            generation: rl.drift_generation,
        })
    }

    pub(super) fn timer(&mut self, timer: CmTimer, generation: u32, rp: Rp) -> Reaction {
        match timer {
            CmTimer::Drift => self.drift(generation, rp),
            CmTimer::Probe => {
                let e = self.e2cm.as_mut().expect("probes need E2CM");
                e.timer(generation, rp)
            }
            CmTimer::Qcn
            | CmTimer::DcqcnIncrease
            | CmTimer::DcqcnAlpha
            | CmTimer::DcqcnDecrease => {
                unreachable!("BCN arms only its own timers")
            }
        }
    }

    /// Self-increase: the limiter's rate grows by the drift rate each
    /// interval until it reaches the line rate.
    fn drift(&mut self, generation: u32, rp: Rp) -> Reaction {
        let rl = rp.limiter;
        if !rl.active || rl.drift_generation != generation {
            return Reaction::default();
        }
        let d = self.params.drift.expect("drift is configured");
        rl.rate = (rl.rate + d.rate.0 as f64).min(rp.line);
        let mut r = Reaction::rate_changed();
        if rl.rate < rp.line {
            r.timers[0] = self.drift_timer(rp.now, rl);
        }
        r
    }

    /// Only E2CM's probe loop counts released frames.
    pub(super) fn watches_releases(&self) -> bool {
        self.e2cm.is_some()
    }

    #[inline]
    pub(super) fn released(&mut self, bytes: u16, rp: Rp) -> Reaction {
        if let Some(e) = &mut self.e2cm {
            e.released(bytes, rp);
        }
        Reaction::default()
    }

    pub(super) fn limiter_removed(&mut self, row: u32, rl: &mut RateLimiter) {
        rl.drift_generation += 1;
        if let Some(e) = &mut self.e2cm {
            e.stop_probing(row, rl);
        }
    }

    pub(super) fn probes_at_flow_start(&self) -> bool {
        self.e2cm.as_ref().is_some_and(|e| e.probes_at_flow_start())
    }

    /// E2CM's probe loop, if this BCN runs one.
    pub fn e2cm(&self) -> Option<&E2cm> {
        self.e2cm.as_ref()
    }

    pub(super) fn e2cm_mut(&mut self) -> Option<&mut E2cm> {
        self.e2cm.as_mut()
    }

    pub(super) fn at_destination(&mut self, frame: &Frame, now: Time) -> Option<(Message, bool)> {
        match (&mut self.e2cm, frame.kind) {
            (Some(e), FrameKind::Probe) => Some(e.reflect(frame, now)),
            _ => None,
        }
    }

    pub(super) fn watches_destinations(&self) -> bool {
        self.e2cm.as_ref().is_some_and(E2cm::watches_destinations)
    }

    #[inline]
    pub(super) fn delivered(&mut self, flow: u32, bytes: u16) {
        if let Some(e) = &mut self.e2cm {
            e.delivered(flow, bytes);
        }
    }

    pub(super) fn probe(&mut self, flow: u32, now: Time) -> Message {
        self.e2cm
            .as_mut()
            .expect("probes need E2CM")
            .probe(flow, now)
    }

    pub(super) fn probe_bytes(&self) -> u32 {
        self.e2cm
            .as_ref()
            .expect("probes need E2CM")
            .params
            .probe_bytes
    }

    /// Probes sent and reflected probes back, of `flow` (zero without E2CM).
    pub(super) fn probe_counts(&self, flow: u32) -> (u64, u64) {
        self.e2cm.as_ref().map_or((0, 0), |e| e.counts(flow))
    }

    pub(super) fn message_dropped(&mut self, frame: &Frame) {
        if let Some(e) = &mut self.e2cm {
            e.dropped(frame);
        }
    }

    pub(super) fn expedites(&self, kind: FrameKind) -> bool {
        match kind {
            FrameKind::Bcn | FrameKind::BcnStop => self.params.expedite,
            FrameKind::ProbeReply => self.e2cm.as_ref().is_some_and(|e| e.params.expedite),
            FrameKind::Data
            | FrameKind::Probe
            | FrameKind::Cnm
            | FrameKind::Cnp
            | FrameKind::Ack => false,
        }
    }
}
