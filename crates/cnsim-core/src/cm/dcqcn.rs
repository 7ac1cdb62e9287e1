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
use crate::engine::lazy_timer;
use crate::engine::rng::Stream;
use crate::net::frame::{Frame, FrameKind};
use crate::units::{RateF64, Time};
use serde::Serialize;
use std::cmp::Ordering;

/// Which reaction point runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Variant {
    /// The paper's: each CNP cuts the rate and raises α at once.
    Paper,
    /// As Mellanox NICs (and ns-3's RDMA model) do: the first CNP sets CR
    /// and TR to `rate_on_first_cnp` × CR; a CNP is latched and the rate
    /// cut at the next tick of a `decrease_interval` grid; α is updated
    /// once per `alpha_interval` (raised if a CNP came in it, else
    /// decayed); increases by the timer only, fast recovery for F events,
    /// then one additive step, then hyper-additive steps.
    Mellanox {
        decrease_interval: Time,
        rate_on_first_cnp: f64,
    },
}

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
    /// A RoCE flow's CNP rides on the ACK its receiver sends next (a flag,
    /// as the HPCC simulator's NIC sets one) instead of travelling as a
    /// frame of its own. A UDP flow's CNPs are frames either way.
    pub cnp_on_ack: bool,
    /// TR ← CR at every CNP (the paper's rule); otherwise only when an
    /// increase cycle completed since the last one, as QCN.
    pub clamp_target_rate: bool,
    pub variant: Variant,
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
            cnp_on_ack: false,
            clamp_target_rate: true,
            variant: Variant::Paper,
        }
    }

    /// The Mellanox-style variant with the defaults of ns-3's RDMA model,
    /// where it comes from: a decrease at most every 4 µs, the first CNP
    /// keeping the rate (`rate_on_first_cnp` = 1), TR ← CR only after an
    /// increase, g = 1/16, an increase timer of 1.5 ms, R_AI 5 Mb/s and
    /// R_HAI 50 Mb/s.
    pub fn mellanox() -> DcqcnParams {
        let paper = DcqcnParams::paper();
        let mut rp = paper.rp;
        rp.timer_period = Time::from_us(1500);
        rp.r_ai = RateF64(5e6);
        rp.r_hai = RateF64(50e6);
        DcqcnParams {
            rp,
            g: 1.0 / 16.0,
            clamp_target_rate: false,
            variant: Variant::Mellanox {
                decrease_interval: Time::from_us(4),
                rate_on_first_cnp: 1.0,
            },
            ..paper
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
    /// Mellanox: a CNP came since α's last update, and since the last
    /// decrease tick; the decrease grid's origin (the first CNP).
    pub alpha_cnp: bool,
    pub decrease_pending: bool,
    pub grid_origin: Time,
    /// When the increase timer's event in the event queue is due, if one
    /// is. The timer restarts at every rate decrease (every few
    /// microseconds under congestion, against a period of hundreds): a
    /// restart to a later deadline asks for no event of its own, and this
    /// one, when it comes, re-arms for the deadline then current
    /// (`Dcqcn::timer`). The timer runs out at the same times as with an
    /// event per restart, with one event per reaction point pending.
    pub increase_armed: Option<Time>,
    /// The generation that event carries (another event of the timer can
    /// come at the same time: one left from before a restart to an earlier
    /// deadline).
    pub increase_armed_generation: u32,
}

impl DcqcnRp {
    pub fn new(p: &DcqcnParams, line: f64) -> DcqcnRp {
        DcqcnRp {
            qcn: QcnRp::new(line),
            alpha: p.initial_alpha,
            alpha_generation: 0,
            alpha_cnp: false,
            decrease_pending: false,
            grid_origin: Time::ZERO,
            increase_armed: None,
            increase_armed_generation: 0,
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

    /// Mellanox: α's periodic update, raised if a CNP came since the last.
    pub fn update_alpha(&mut self, p: &DcqcnParams) {
        let hit = if std::mem::take(&mut self.alpha_cnp) {
            p.g
        } else {
            0.0
        };
        self.alpha = (1.0 - p.g) * self.alpha + hit;
    }

    /// Mellanox: a decrease tick with a CNP latched. TR ← CR if clamped or
    /// an increase happened since; CR ← CR·(1 − α/2) floored; the increase
    /// timer restarts from stage 0.
    pub fn decrease_tick(&mut self, p: &DcqcnParams, now: Time) {
        self.decrease_pending = false;
        let q = &mut self.qcn;
        if p.clamp_target_rate || q.timer_stage != 0 {
            q.tr = q.cr;
        }
        q.cr = (q.cr * (1.0 - self.alpha / 2.0)).max(p.rp.min_rate.0.min(q.cr));
        q.cnms += 1;
        q.timer_stage = 0;
        q.timer_deadline = now + p.rp.timer_period;
        q.timer_generation = q.timer_generation.wrapping_add(1);
    }

    /// Mellanox: the increase timer's event: fast recovery while the stage
    /// is below F, one additive step at F, hyper-additive steps after; CR
    /// moves halfway to TR each time.
    pub fn timer_increase(&mut self, p: &DcqcnParams, now: Time, line: f64) {
        let q = &mut self.qcn;
        let f = p.rp.fast_recovery_threshold;
        if q.timer_stage == f {
            q.tr = (q.tr + p.rp.r_ai.0).min(line);
        } else if q.timer_stage > f {
            q.tr = (q.tr + p.rp.r_hai.0).min(line);
        }
        q.cr = ((q.cr + q.tr) / 2.0).min(line);
        q.increases += 1;
        q.timer_stage += 1;
        q.timer_deadline = now + p.rp.timer_period;
        q.timer_generation = q.timer_generation.wrapping_add(1);
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
        let first = !rp.limiter.active;
        if first {
            rp.limiter.install(rp.line);
            // Keep the generations (events of an earlier install are
            // stale) and what is still in the event queue.
            let old = std::mem::replace(&mut self.rps[f], DcqcnRp::new(&self.params, rp.line));
            let d = &mut self.rps[f];
            d.qcn.timer_generation = old.qcn.timer_generation;
            d.alpha_generation = old.alpha_generation.wrapping_add(1);
            d.increase_armed = old.increase_armed;
            d.increase_armed_generation = old.increase_armed_generation;
            r.installed = true;
        }
        rp.limiter.messages += 1;
        let Variant::Mellanox {
            decrease_interval,
            rate_on_first_cnp,
        } = self.params.variant
        else {
            self.rps[f].on_cnp(&self.params, rp.now, &mut self.rng[f]);
            r.timers[1] = Some(self.alpha_timer(f, rp.now));
            return self.follow(rp, r);
        };
        let (now, d) = (rp.now, &mut self.rps[f]);
        // The rate changes at the decrease tick, not at the CNP (except by
        // `rate_on_first_cnp`): a limiter at its line rate must stay
        // installed until then.
        r.rate_changed = first && rate_on_first_cnp < 1.0;
        if first {
            // α starts at 1 and its first update only decays it.
            d.alpha = 1.0;
            d.qcn.cr *= rate_on_first_cnp;
            d.qcn.tr = d.qcn.cr;
            d.grid_origin = now;
            r.timers[1] = Some(self.alpha_timer(f, now));
        } else {
            d.alpha_cnp = true;
        }
        let d = &mut self.rps[f];
        if !d.decrease_pending {
            d.decrease_pending = true;
            // The next tick of the flow's grid after now.
            let ticks = (now - d.grid_origin).0 / decrease_interval.0 + 1;
            r.timers[0] = Some(TimerRequest {
                timer: CmTimer::DcqcnDecrease,
                at: d.grid_origin + Time(ticks * decrease_interval.0),
                generation: d.alpha_generation,
            });
        }
        self.follow_rate(rp, r)
    }

    /// The limiter released a data frame of `bytes`: the byte counter runs.
    #[inline]
    pub(super) fn released(&mut self, bytes: u16, rp: Rp) -> Reaction {
        let f = rp.row as usize;
        // The Mellanox variant increases by its timer only.
        if matches!(self.params.variant, Variant::Mellanox { .. }) {
            return Reaction::default();
        }
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
    pub(super) fn timer(&mut self, timer: CmTimer, mut generation: u32, rp: Rp) -> Reaction {
        let f = rp.row as usize;
        let d = &mut self.rps[f];
        if timer == CmTimer::DcqcnIncrease
            && d.increase_armed == Some(rp.now)
            && d.increase_armed_generation == generation
        {
            // The event `increase_armed` tracks. If the timer restarted
            // since it was armed, it re-arms for the deadline, removed
            // limiter or not, as an event per restart would be there; only
            // the current generation runs the timer out.
            d.increase_armed = None;
            if d.qcn.timer_generation != generation {
                match d.qcn.timer_deadline.cmp(&rp.now) {
                    Ordering::Greater => {
                        return Reaction {
                            timers: [self.arm_increase(f), None],
                            ..Reaction::default()
                        }
                    }
                    // Restarted to run out now (twice at this time: by
                    // its last event and a decrease tick): the event the
                    // second restart did not ask for would be next.
                    Ordering::Equal => generation = d.qcn.timer_generation,
                    Ordering::Less => {}
                }
            }
        }
        if !rp.limiter.active {
            return Reaction::default();
        }
        let mellanox = matches!(self.params.variant, Variant::Mellanox { .. });
        let changed = Reaction {
            rate_changed: true,
            ..Reaction::default()
        };
        match timer {
            CmTimer::DcqcnIncrease => {
                if self.rps[f].qcn.timer_generation != generation {
                    return Reaction::default();
                }
                if mellanox {
                    self.rps[f].timer_increase(&self.params, rp.now, rp.line);
                } else {
                    let p = &self.params.rp;
                    self.rps[f]
                        .qcn
                        .on_timer(p, rp.now, rp.line, &mut self.rng[f]);
                }
                self.follow(rp, changed)
            }
            CmTimer::DcqcnAlpha => {
                if self.rps[f].alpha_generation != generation {
                    return Reaction::default();
                }
                if mellanox {
                    self.rps[f].update_alpha(&self.params);
                } else {
                    self.rps[f].decay(&self.params);
                }
                Reaction {
                    timers: [Some(self.alpha_timer(f, rp.now)), None],
                    alpha: Some(self.rps[f].alpha),
                    ..Reaction::default()
                }
            }
            CmTimer::DcqcnDecrease => {
                let d = &mut self.rps[f];
                if d.alpha_generation != generation || !d.decrease_pending {
                    return Reaction::default();
                }
                d.decrease_tick(&self.params, rp.now);
                self.follow(rp, changed)
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
        r.timers[0] = self.arm_increase(rp.row as usize);
        self.follow_rate(rp, r)
    }

    /// An event for the increase timer's deadline, unless one due by then
    /// is pending (`increase_armed`).
    fn arm_increase(&mut self, f: usize) -> Option<TimerRequest> {
        let d = &mut self.rps[f];
        let at = lazy_timer(&mut d.increase_armed, Some(d.qcn.timer_deadline))?;
        d.increase_armed_generation = d.qcn.timer_generation;
        Some(TimerRequest {
            timer: CmTimer::DcqcnIncrease,
            at,
            generation: d.qcn.timer_generation,
        })
    }

    /// The limiter follows CR (back at the line rate it may be removed);
    /// the target rate TR is recorded.
    fn follow_rate(&mut self, rp: Rp, mut r: Reaction) -> Reaction {
        let q = &mut self.rps[rp.row as usize].qcn;
        q.at_line_rate(&self.params.rp, rp.line);
        rp.limiter.rate = q.cr;
        r.target = Some(q.tr);
        r.alpha = Some(self.rps[rp.row as usize].alpha);
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

    /// A data frame of flow 0; tests set what they need.
    const DATA: Frame = Frame::blank(FrameKind::Data, 1000);

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
            tag: Frame::tag_ecn(0, 0, crate::net::ecn::Ecn::Ce),
            ..DATA
        };
        let at = |us: u64| Time::from_us(us);
        assert!(d.delivered(&frame, at(10)).is_some());
        assert!(d.delivered(&frame, at(59)).is_none(), "49 us later");
        assert!(d.delivered(&frame, at(60)).is_some(), "50 us later");
        frame.set_ecn(crate::net::ecn::Ecn::Ect0);
        assert!(d.delivered(&frame, at(200)).is_none(), "not marked");
        assert_eq!(d.cnps[0], 2);
    }

    #[test]
    fn mellanox_decreases_at_the_tick_and_increases_by_the_timer_only() {
        let p = DcqcnParams::mellanox();
        let mut rp = DcqcnRp::new(&p, LINE);
        rp.alpha = 1.0;
        // A tick with a CNP latched and no increase yet: CR halves, TR stays.
        rp.decrease_pending = true;
        rp.decrease_tick(&p, Time::from_us(4));
        assert_eq!((rp.qcn.cr, rp.qcn.tr), (LINE / 2.0, LINE));
        assert!(!rp.decrease_pending);
        assert_eq!(rp.qcn.timer_deadline, Time::from_us(4) + p.rp.timer_period);
        // Timer events: five of fast recovery (TR fixed), then one
        // additive step of R_AI, then hyper-additive steps of R_HAI.
        let mut cr = LINE / 2.0;
        let mut tr = LINE;
        let mut t = Time::from_us(4);
        for stage in 0..8 {
            t = t + p.rp.timer_period;
            rp.timer_increase(&p, t, 100e9);
            if stage == 5 {
                tr += 5e6;
            } else if stage > 5 {
                tr += 50e6;
            }
            cr = (cr + tr) / 2.0;
            assert_eq!((rp.qcn.cr, rp.qcn.tr), (cr, tr), "after stage {stage}");
        }
        // After an increase, a tick sets TR to CR before cutting.
        rp.decrease_tick(&p, t);
        assert_eq!((rp.qcn.tr, rp.qcn.cr), (cr, cr * 0.5));
        assert_eq!(rp.qcn.timer_stage, 0);
    }

    /// What a DCQCN reaction point's timers do when driven as the engine
    /// drives them, with CNPs at `cnps`, until `end`: the times its increase
    /// timer ran out, the most increase events pending at once, and how
    /// many increase events came.
    fn drive(cnps: &[Time], end: Time) -> (Vec<Time>, usize, usize) {
        use crate::net::rate_limiter::RateLimiter;
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let p = DcqcnParams::mellanox();
        let mut d = Dcqcn::new(p, &[LINE], 1, vec![stream(1, 0)]);
        let mut limiter = RateLimiter {
            line: LINE,
            ..RateLimiter::default()
        };
        let cnp = Frame {
            size: 64,
            kind: FrameKind::Cnp,
            ..DATA
        };
        // Pending timers as the engine orders them: time, kind, then order of scheduling.
        // (The timer by its place in `timers`.)
        let timers = [
            CmTimer::DcqcnIncrease,
            CmTimer::DcqcnAlpha,
            CmTimer::DcqcnDecrease,
        ];
        type Pending = Reverse<(Time, u64, u64, usize, u32)>;
        let mut queue: BinaryHeap<Pending> = BinaryHeap::new();
        let mut order = 0;
        let (mut fired, mut most, mut increase_events) = (Vec::new(), 0, 0);
        let mut cnps = cnps.iter().copied().peekable();
        loop {
            let next = queue.peek().map_or(end, |Reverse(e)| e.0);
            let cnp_now = cnps.peek().is_some_and(|&t| t <= next);
            let now = if cnp_now { cnps.next().unwrap() } else { next };
            if now >= end {
                break;
            }
            let rp = Rp {
                row: 0,
                now,
                line: LINE,
                limiter: &mut limiter,
            };
            let r = if cnp_now {
                d.react(&cnp, rp)
            } else {
                let Reverse((_, _, _, timer, generation)) = queue.pop().unwrap();
                let timer = timers[timer];
                increase_events += usize::from(timer == CmTimer::DcqcnIncrease);
                let increases = d.rp(0).qcn.increases;
                let r = d.timer(timer, generation, rp);
                if d.rp(0).qcn.increases > increases {
                    fired.push(now);
                }
                r
            };
            for t in r.timers.into_iter().flatten() {
                order += 1;
                let which = timers.iter().position(|&x| x == t.timer).unwrap();
                queue.push(Reverse((
                    t.at,
                    t.timer.trace_kind(),
                    order,
                    which,
                    t.generation,
                )));
            }
            let pending = queue.iter().filter(|Reverse(e)| e.3 == 0).count();
            most = most.max(pending);
        }
        (fired, most, increase_events)
    }

    /// Under a CNP at every decrease tick the increase timer restarts every
    /// 4 us for 200 us; the event queue holds one increase event for it at a
    /// time, not one per restart, and the timer runs out once, a period
    /// after the last tick, as it would with an event per restart.
    #[test]
    fn the_increase_timer_keeps_one_event_through_its_restarts() {
        let period = DcqcnParams::mellanox().rp.timer_period;
        let cnps: Vec<Time> = (0..=50).map(|i| Time::from_us(1 + 4 * i)).collect();
        let end = Time::from_us(210) + period;
        let (fired, most, increase_events) = drive(&cnps, end);
        // The first CNP sets the grid: ticks at 5, 9, ..., 205 us.
        assert_eq!(fired, vec![Time::from_us(205) + period]);
        assert_eq!(most, 1, "one increase event pending at a time");
        // The first, due a period after the first tick, re-armed once.
        assert_eq!(increase_events, 2);
    }

    /// The timer runs out at a decrease tick and restarts twice at that
    /// picosecond, by its own event and by the tick, to the same deadline:
    /// it runs out again at that deadline (the pending event, of the first
    /// restart's generation, stands for the second).
    #[test]
    fn two_restarts_at_one_time_run_out_at_their_deadline() {
        let period = DcqcnParams::mellanox().rp.timer_period;
        // Ticks at 5 us (the first CNP's) and at 5 us + period (the second's).
        let first = Time::from_us(5) + period;
        let cnps = [Time::from_us(1), first - Time::from_us(1)];
        let (fired, most, _) = drive(&cnps, first + period + Time::from_us(1));
        assert_eq!(fired, vec![first, first + period]);
        assert_eq!(most, 1);
    }

    #[test]
    fn mellanox_alpha_moves_once_per_interval() {
        let p = DcqcnParams::mellanox();
        let mut rp = DcqcnRp::new(&p, LINE);
        rp.alpha = 0.5;
        rp.alpha_cnp = true;
        rp.update_alpha(&p);
        assert_eq!(rp.alpha, 15.0 / 16.0 * 0.5 + 1.0 / 16.0);
        assert!(!rp.alpha_cnp, "the flag is cleared");
        let before = rp.alpha;
        rp.update_alpha(&p);
        assert_eq!(rp.alpha, before * 15.0 / 16.0);
    }
}
