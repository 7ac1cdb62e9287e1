//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015): QCN's reaction point driven by ECN marks.
//! Switches mark CE (`net::ecn`, a switch's `ecn` table); the notification
//! point at the receiving host answers a flow's CE-marked frame with a CNP
//! at most once per `cnp_interval`; the reaction point at the sender cuts
//! its rate by α/2 on a CNP and keeps α, the estimate of how congested the
//! path is, raised by each CNP and decayed every `alpha_interval` without
//! one. Increases are QCN's (`QcnRp`: byte counter and timer, fast
//! recovery, additive and hyper-additive increase), parameterised by
//! `rp`; docs/model.md, "DCQCN".

use super::qcn::{QcnParams, QcnRp};
use super::{CmTimer, Message, Reaction, Rp, TimerRequest};
use crate::engine::rng::Stream;
use crate::net::frame::{Frame, FrameKind};
use crate::units::{RateF64, Time};
use serde::Serialize;

/// Every DCQCN parameter, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DcqcnParams {
    /// The reaction point's increase and floor, in QCN's terms: byte
    /// counter B (`byte_limit`), timer T (`timer_period`), F
    /// (`fast_recovery_threshold`), R_AI, R_HAI (`hai_scaled` false: one
    /// R_HAI per event), `min_rate`, `rl_queue`; no jitter. Its congestion
    /// point fields are unused.
    pub rp: QcnParams,
    /// Gain g of α's moving average.
    pub g: f64,
    /// α when a limiter is installed.
    pub initial_alpha: f64,
    /// α decays by (1 − g) every this long without a CNP (K).
    pub alpha_interval: Time,
    /// The notification point sends a flow at most one CNP this often (N).
    pub cnp_interval: Time,
    /// Wire size of a CNP.
    pub cnp_bytes: u32,
    /// TR ← CR at every CNP (the paper's rule); otherwise only when an
    /// increase cycle completed since the last one, as QCN.
    pub clamp_target_rate: bool,
}

impl DcqcnParams {
    /// The paper's values where it gives them (g = 1/256, B = 10 MB,
    /// T = 55 µs, K = 55 µs, N = 50 µs, F = 5, R_AI = 40 Mb/s, α = 1,
    /// TR ← CR at every CNP); R_HAI = 10·R_AI and a 100 Mb/s floor, as
    /// common ns-3 settings have them.
    pub fn paper() -> DcqcnParams {
        let mut rp = QcnParams::with_kilobyte(1000);
        rp.byte_limit = crate::units::Bytes(10_000_000);
        rp.timer_period = Time::from_us(55);
        rp.fast_recovery_threshold = 5;
        rp.r_ai = RateF64(40e6);
        rp.r_hai = RateF64(400e6);
        rp.min_rate = RateF64(100e6);
        rp.rp_jitter = 0.0;
        rp.hai_scaled = false;
        DcqcnParams {
            rp,
            g: 1.0 / 256.0,
            initial_alpha: 1.0,
            alpha_interval: Time::from_us(55),
            cnp_interval: Time::from_us(50),
            cnp_bytes: 64,
            clamp_target_rate: true,
        }
    }
}

/// One flow's reaction point: QCN's rates and stages, and α.
#[derive(Debug, Clone)]
pub struct DcqcnRp {
    pub qcn: QcnRp,
    pub alpha: f64,
    /// Bumped at each CNP: a pending decay timer of an earlier generation
    /// is stale.
    pub alpha_generation: u32,
}

impl DcqcnRp {
    pub fn new(p: &DcqcnParams, line: f64) -> DcqcnRp {
        DcqcnRp {
            qcn: QcnRp::new(line),
            alpha: p.initial_alpha,
            alpha_generation: 0,
        }
    }

    /// A CNP: CR ← CR·(1 − α/2) with the α before it, then
    /// α ← (1 − g)·α + g; TR, stages, byte counter and timer as
    /// `QcnRp::decrease`.
    pub fn on_cnp(&mut self, p: &DcqcnParams, now: Time, rng: &mut Stream) {
        let factor = 1.0 - self.alpha / 2.0;
        self.qcn
            .decrease(&p.rp, factor, p.clamp_target_rate, now, rng);
        self.alpha = (1.0 - p.g) * self.alpha + p.g;
        self.alpha_generation = self.alpha_generation.wrapping_add(1);
    }

    /// `alpha_interval` passed without a CNP: α ← (1 − g)·α.
    pub fn decay(&mut self, p: &DcqcnParams) {
        self.alpha *= 1.0 - p.g;
    }
}

/// DCQCN in a running network: per limiter row its reaction point and
/// random stream (QCN's reaction point takes one; without jitter it draws
/// nothing), per flow the time of its last CNP at the notification point.
pub struct Dcqcn {
    pub params: DcqcnParams,
    rps: Vec<DcqcnRp>,
    rng: Vec<Stream>,
    last_cnp: Vec<Option<Time>>,
    /// CNPs the notification points sent, per flow.
    pub cnps: Vec<u64>,
}

impl Dcqcn {
    /// `lines`: the line rate of each limiter row's source, bit/s;
    /// `flows`: the number of flows.
    pub fn new(params: DcqcnParams, lines: &[f64], flows: usize, rng: Vec<Stream>) -> Dcqcn {
        Dcqcn {
            params,
            rps: lines.iter().map(|&l| DcqcnRp::new(&params, l)).collect(),
            rng,
            last_cnp: vec![None; flows],
            cnps: vec![0; flows],
        }
    }

    /// A data frame reached its destination at `now`: the notification
    /// point answers a CE-marked one with a CNP, unless it sent the flow
    /// one less than `cnp_interval` ago.
    pub(super) fn delivered(&mut self, frame: &Frame, now: Time) -> Option<Message> {
        if !frame.ecn().is_ce() {
            return None;
        }
        let f = frame.flow as usize;
        if self.last_cnp[f].is_some_and(|t| now < t + self.params.cnp_interval) {
            return None;
        }
        self.last_cnp[f] = Some(now);
        self.cnps[f] += 1;
        Some(Message {
            kind: FrameKind::Cnp,
            bytes: self.params.cnp_bytes as u16,
            cpid: crate::net::rate_limiter::NO_CP,
            aux: 0,
            qfb: 0,
        })
    }

    /// A CNP reaches the reaction point of its flow's limiter (installed
    /// at the line rate by the first).
    pub(super) fn react(&mut self, cnp: &Frame, rp: Rp) -> Reaction {
        debug_assert_eq!(cnp.kind, FrameKind::Cnp);
        let f = rp.row as usize;
        let mut r = Reaction {
            rate_changed: true,
            ..Reaction::default()
        };
        if !rp.limiter.active {
            rp.limiter.install(rp.line, 128);
            // Keep the generations: events of an earlier install are stale.
            let old = &self.rps[f];
            let (timer, alpha) = (old.qcn.timer_generation, old.alpha_generation);
            self.rps[f] = DcqcnRp::new(&self.params, rp.line);
            self.rps[f].qcn.timer_generation = timer;
            self.rps[f].alpha_generation = alpha;
            r.installed = true;
        }
        rp.limiter.messages += 1;
        self.rps[f].on_cnp(&self.params, rp.now, &mut self.rng[f]);
        r.timers[1] = Some(self.alpha_timer(f, rp.now));
        self.follow(rp, r)
    }

    /// The limiter released a data frame of `bytes`: the byte counter runs.
    #[inline]
    pub(super) fn released(&mut self, bytes: u16, rp: Rp) -> Reaction {
        let f = rp.row as usize;
        let p = &self.params.rp;
        if !rp.limiter.active
            || !self.rps[f]
                .qcn
                .on_bytes_sent(p, bytes as u32, rp.line, &mut self.rng[f])
        {
            return Reaction::default();
        }
        self.follow_rate(
            rp,
            Reaction {
                rate_changed: true,
                ..Reaction::default()
            },
        )
    }

    /// The increase timer ends a cycle, or α's decay interval passed.
    pub(super) fn timer(&mut self, timer: CmTimer, generation: u32, rp: Rp) -> Reaction {
        let f = rp.row as usize;
        if !rp.limiter.active {
            return Reaction::default();
        }
        match timer {
            CmTimer::DcqcnIncrease => {
                if self.rps[f].qcn.timer_generation != generation {
                    return Reaction::default();
                }
                let p = &self.params.rp;
                self.rps[f]
                    .qcn
                    .on_timer(p, rp.now, rp.line, &mut self.rng[f]);
                self.follow(
                    rp,
                    Reaction {
                        rate_changed: true,
                        ..Reaction::default()
                    },
                )
            }
            CmTimer::DcqcnAlpha => {
                if self.rps[f].alpha_generation != generation {
                    return Reaction::default();
                }
                self.rps[f].decay(&self.params);
                Reaction {
                    timers: [Some(self.alpha_timer(f, rp.now)), None],
                    ..Reaction::default()
                }
            }
            _ => unreachable!("DCQCN arms only its own timers"),
        }
    }

    fn alpha_timer(&self, f: usize, now: Time) -> TimerRequest {
        TimerRequest {
            timer: CmTimer::DcqcnAlpha,
            at: now + self.params.alpha_interval,
            generation: self.rps[f].alpha_generation,
        }
    }

    /// The increase timer is rearmed and the limiter follows CR.
    fn follow(&mut self, rp: Rp, mut r: Reaction) -> Reaction {
        let q = &self.rps[rp.row as usize].qcn;
        r.timers[0] = Some(TimerRequest {
            timer: CmTimer::DcqcnIncrease,
            at: q.timer_deadline,
            generation: q.timer_generation,
        });
        self.follow_rate(rp, r)
    }

    /// The limiter follows CR (back at the line rate it may be removed);
    /// the target rate TR is recorded.
    fn follow_rate(&mut self, rp: Rp, mut r: Reaction) -> Reaction {
        let q = &mut self.rps[rp.row as usize].qcn;
        q.at_line_rate(&self.params.rp, rp.line);
        rp.limiter.rate = q.cr;
        r.target = Some(q.tr);
        r
    }

    /// The reaction point of limiter row `row`.
    pub fn rp(&self, row: usize) -> &DcqcnRp {
        &self.rps[row]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;

    const LINE: f64 = 40e9;

    #[test]
    fn alpha_and_cr_after_one_to_five_cnps() {
        let p = DcqcnParams::paper();
        let mut rng = stream(1, 0);
        let mut rp = DcqcnRp::new(&p, LINE);
        let g = 1.0 / 256.0;
        // α starts at 1: the first CNP halves CR, then α stays 1.
        let (mut cr, mut alpha) = (LINE, 1.0f64);
        for n in 1..=5 {
            rp.on_cnp(&p, Time::from_us(n), &mut rng);
            // The paper's rule: TR takes CR before each cut.
            assert_eq!(rp.qcn.tr, cr, "TR after {n} CNPs");
            cr *= 1.0 - alpha / 2.0;
            alpha = (1.0 - g) * alpha + g;
            assert_eq!(rp.qcn.cr, cr, "CR after {n} CNPs");
            assert_eq!(rp.alpha, alpha, "alpha after {n} CNPs");
        }
        // α = 1 is the fixed point of α ← (1 − g)·α + g: five halvings.
        assert_eq!(rp.qcn.cr, 40e9 / 32.0);
        assert_eq!(rp.alpha, 1.0);
    }

    #[test]
    fn alpha_decays_by_one_minus_g_per_interval_and_cuts_follow_it() {
        let p = DcqcnParams::paper();
        let mut rng = stream(1, 0);
        let mut rp = DcqcnRp::new(&p, LINE);
        rp.on_cnp(&p, Time::ZERO, &mut rng);
        let k = 100;
        for _ in 0..k {
            rp.decay(&p);
        }
        let expected = (1.0f64 - 1.0 / 256.0).powi(k);
        assert!(
            (rp.alpha - expected).abs() < 1e-12,
            "{} vs {expected}",
            rp.alpha
        );
        let before = rp.qcn.cr;
        rp.on_cnp(&p, Time::from_us(5500), &mut rng);
        assert_eq!(rp.qcn.cr, before * (1.0 - expected / 2.0));
    }

    #[test]
    fn without_the_clamp_tr_moves_only_after_an_increase() {
        let p = DcqcnParams {
            clamp_target_rate: false,
            ..DcqcnParams::paper()
        };
        let mut rng = stream(1, 0);
        let mut rp = DcqcnRp::new(&p, LINE);
        rp.on_cnp(&p, Time::ZERO, &mut rng);
        rp.on_cnp(&p, Time::from_us(1), &mut rng);
        assert_eq!((rp.qcn.tr, rp.qcn.cr), (LINE, LINE / 4.0));
        // A timer cycle: fast recovery, CR ← (CR + TR)/2; the next CNP sets TR.
        rp.qcn.on_timer(&p.rp, Time::from_us(56), LINE, &mut rng);
        assert_eq!(rp.qcn.cr, (LINE / 4.0 + LINE) / 2.0);
        rp.on_cnp(&p, Time::from_us(57), &mut rng);
        assert_eq!(rp.qcn.tr, (LINE / 4.0 + LINE) / 2.0);
    }

    #[test]
    fn the_rate_never_falls_below_the_floor() {
        let p = DcqcnParams::paper();
        let mut rng = stream(1, 0);
        let mut rp = DcqcnRp::new(&p, LINE);
        for n in 0..40 {
            rp.on_cnp(&p, Time::from_us(n), &mut rng);
        }
        assert_eq!(rp.qcn.cr, 100e6);
    }

    #[test]
    fn the_notification_point_sends_at_most_one_cnp_per_interval() {
        let mut d = Dcqcn::new(DcqcnParams::paper(), &[LINE], 1, vec![stream(1, 0)]);
        let mut frame = Frame {
            created: Time::ZERO,
            flow: 0,
            dst_host: 0,
            tag: Frame::tag_ecn(0, 0, crate::net::ecn::Ecn::Ce),
            cpid: 0,
            aux: 0,
            size: 1000,
            kind: FrameKind::Data,
            qfb: 0,
        };
        let at = |us: u64| Time::from_us(us);
        assert!(d.delivered(&frame, at(10)).is_some());
        assert!(d.delivered(&frame, at(59)).is_none(), "49 us later");
        assert!(d.delivered(&frame, at(60)).is_some(), "50 us later");
        frame.set_ecn(crate::net::ecn::Ecn::Ect0);
        assert!(d.delivered(&frame, at(200)).is_none(), "not marked");
        assert_eq!(d.cnps[0], 2);
    }
}
