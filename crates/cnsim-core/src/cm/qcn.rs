//! Quantized Congestion Notification (QCN, IEEE 802.1Qau): the congestion
//! point's sampler and quantized feedback and the reaction point's rate
//! state machine (docs/model.md, "QCN congestion point" and "QCN reaction
//! point"), as pure arithmetic; `Qcn`, the scheme's state in a running
//! network.
//!
//! Jitter: a reload of nominal length `x` with jitter `j` (total width) is
//! `x · (1 − j/2 + j·u)`, `u` uniform in (0, 1] (`unit_open0`), so uniform in
//! (1 − j/2, 1 + j/2]·x. With `j = 0` the factor is exactly 1 and no number
//! is drawn.

use super::{Arrival, CmTimer, Notice, Reaction, Rp, Sign, TimerRequest};
use crate::engine::rng::{unit_open0, Stream};
use crate::net::frame::{Frame, FrameKind};
use crate::units::{Bytes, RateF64, Time};
use serde::Serialize;

/// How |Fb| is reduced to the 6-bit qFb.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Quantize {
    Floor,
    Round,
}

/// Every QCN parameter, resolved (units converted, defaults applied).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QcnParams {
    /// Equilibrium queue length Qeq.
    pub qeq: Bytes,
    /// Weight w of the queue's change in the feedback.
    pub w: f64,
    /// Sampling interval (bytes of arrivals) when qFb[5:3] = 0; the interval
    /// table scales with it.
    pub sample_base: Bytes,
    /// Total width of the jitter on each sampling reload (0.3: × U(0.85, 1.15)).
    pub sample_jitter: f64,
    pub quantize: Quantize,
    /// Size of a CNM on the wire.
    pub message_bytes: u32,
    /// CNMs travel in the strict-priority expedited class.
    pub expedite: bool,
    /// Decrease gain Gd per unit of qFb.
    pub gd: f64,
    /// Floor of a limiter's rate.
    pub min_rate: RateF64,
    /// Largest fraction of CR one CNM takes off (rpgMinDecFac).
    pub max_decrease: f64,
    /// BC_LIMIT: bytes of one byte-counter cycle in fast recovery.
    pub byte_limit: Bytes,
    /// Length of one timer cycle in fast recovery.
    pub timer_period: Time,
    /// FAST_RECOVERY_TH: cycles of a counter before it leaves fast recovery.
    pub fast_recovery_threshold: u32,
    /// Active-increase step R_AI of the target rate.
    pub r_ai: RateF64,
    /// Hyper-active-increase step R_HAI.
    pub r_hai: RateF64,
    /// Total width of the jitter on byte-counter and timer reloads.
    pub rp_jitter: f64,
    /// HAI adds i·R_HAI, i = min(ByteStage, TimeStage) − FR_TH + 1; else R_HAI.
    pub hai_scaled: bool,
    /// What a rate limiter's queue holds before its source must wait.
    pub rl_queue: Bytes,
    /// One limiter per destination of a host, shared by the host's flows
    /// to it, instead of one per flow (source, destination).
    pub per_destination: bool,
}

impl Default for QcnParams {
    /// The S2 values with 1000-byte kilobytes.
    fn default() -> Self {
        QcnParams::with_kilobyte(1000)
    }
}

impl QcnParams {
    /// The 802.1Qau defaults (docs/model.md, "QCN"). Their sizes are given in
    /// kilobytes (Qeq 26 KB, 150 KB intervals) and so follow the scenario's
    /// `kilobyte`, as every size written in the file does.
    pub fn with_kilobyte(kilobyte: u64) -> Self {
        QcnParams {
            qeq: Bytes(26 * kilobyte),
            w: 2.0,
            sample_base: Bytes(150 * kilobyte),
            sample_jitter: 0.3,
            quantize: Quantize::Floor,
            message_bytes: 128,
            expedite: false,
            gd: 1.0 / 128.0,
            min_rate: RateF64(10e6),
            max_decrease: 0.5,
            byte_limit: Bytes(150 * kilobyte),
            timer_period: Time::from_ms(15),
            fast_recovery_threshold: 5,
            r_ai: RateF64(5e6),
            r_hai: RateF64(50e6),
            rp_jitter: 0.3,
            hai_scaled: true,
            rl_queue: Bytes(150 * kilobyte),
            per_destination: false,
        }
    }
}

impl QcnParams {
    /// Saturation of |Fb|: (1 + 2w)·Qeq bytes.
    pub fn fb_max(&self) -> f64 {
        (1.0 + 2.0 * self.w) * self.qeq.0 as f64
    }
}

/// Fb in bytes (negative = congestion): −((q − qeq) + w·(q − q_old)).
pub fn feedback(p: &QcnParams, q: u64, q_old: u64) -> f64 {
    let q_off = q as f64 - p.qeq.0 as f64;
    let q_delta = q as f64 - q_old as f64;
    -(q_off + p.w * q_delta)
}

/// 6-bit quantization of |Fb| (Fb < 0): floor or round of
/// 63·min(|Fb|, Fbmax)/Fbmax, clamped to 1..=63. Returns 0 for Fb >= 0.
pub fn quantize(p: &QcnParams, fb: f64) -> u8 {
    if fb >= 0.0 {
        return 0;
    }
    let fb_max = p.fb_max();
    let x = 63.0 * (-fb).min(fb_max) / fb_max;
    let q = match p.quantize {
        Quantize::Floor => x.floor(),
        Quantize::Round => x.round(),
    };
    q.clamp(1.0, 63.0) as u8
}

/// Sampling intervals (bytes) indexed by qFb[5:3], for a 150 KB base.
const MARK_TABLE: [u64; 8] = [
    150_000, 75_000, 50_000, 37_500, 30_000, 25_000, 21_500, 18_500,
];

/// Nominal next sampling interval (bytes, before jitter) after a sample whose
/// quantized feedback was `qfb` (0 when Fb >= 0): the table
/// {150, 75, 50, 37.5, 30, 25, 21.5, 18.5} KB indexed by qfb >> 3, scaled by
/// sample_base / 150_000 (rounded down to whole bytes).
pub fn sample_interval(p: &QcnParams, qfb: u8) -> u64 {
    let nominal = MARK_TABLE[(qfb >> 3).min(7) as usize];
    (nominal as u128 * p.sample_base.0 as u128 / 150_000) as u64
}

/// Reload factor for jitter of total width `j` (see the module doc).
fn jitter_factor(j: f64, rng: &mut Stream) -> f64 {
    if j == 0.0 {
        1.0
    } else {
        1.0 - j / 2.0 + j * unit_open0(rng)
    }
}

/// A counter's nominal next cycle: `full` while its stage is below FR_TH, half after.
fn cycle(p: &QcnParams, stage: u32, full: u64) -> u64 {
    if stage < p.fast_recovery_threshold {
        full
    } else {
        full / 2
    }
}

fn jittered(nominal: u64, j: f64, rng: &mut Stream) -> u64 {
    (nominal as f64 * jitter_factor(j, rng)).round() as u64
}

/// What a CP puts in a congestion notification message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cnm {
    /// Quantized |Fb|, 1..=63.
    pub qfb: u8,
    /// q − Qeq and q − q_old in 64-byte units (truncated toward zero),
    /// saturated to i16.
    pub qoff: i16,
    pub qdelta: i16,
}

fn units64(bytes: f64) -> i16 {
    ((bytes as i64) / 64).clamp(i16::MIN as i64, i16::MAX as i64) as i16
}

/// The sampler and feedback state of one switch output queue.
#[derive(Debug, Clone)]
pub struct QcnCp {
    /// Queue length at the previous sample, bytes.
    q_old: u64,
    /// Bytes of arrivals still to come before the next sample.
    left: i64,
    samples: u64,
    rng: Stream,
}

impl QcnCp {
    /// The first interval is sample_base, jittered.
    pub fn new(p: &QcnParams, mut rng: Stream) -> QcnCp {
        let left = jittered(p.sample_base.0, p.sample_jitter, &mut rng) as i64;
        QcnCp {
            q_old: 0,
            left,
            samples: 0,
            rng,
        }
    }

    /// A frame of `bytes` arrives at the queue, which holds `q` bytes before
    /// this frame is added. Arrivals count whether or not the frame is later
    /// admitted. When the count reaches the interval the frame is sampled:
    /// Fb from q and q_old, q_old ← q, the interval reloaded from the new qFb
    /// (jittered; any excess of the count is discarded), and a CNM if Fb < 0.
    #[inline]
    pub fn arrive(&mut self, p: &QcnParams, bytes: u32, q: u64) -> Option<Cnm> {
        self.left -= bytes as i64;
        if self.left > 0 {
            return None;
        }
        self.samples += 1;
        let fb = feedback(p, q, self.q_old);
        let cnm = Cnm {
            qfb: quantize(p, fb),
            qoff: units64(q as f64 - p.qeq.0 as f64),
            qdelta: units64(q as f64 - self.q_old as f64),
        };
        self.q_old = q;
        let next = sample_interval(p, cnm.qfb);
        self.left = jittered(next, p.sample_jitter, &mut self.rng) as i64;
        (cnm.qfb > 0).then_some(cnm)
    }

    /// Samples taken so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpStage {
    FastRecovery,
    ActiveIncrease,
    HyperActiveIncrease,
}

/// One reaction point (rate limiter state). The engine owns the frame queue
/// and the pacing; this owns the rates.
///
/// ByteStage and TimeStage count completed cycles of each counter since the
/// last CNM. A cycle runs in the phase given by the stages at its start, and
/// its expiry performs that phase's increase: with FR_TH = 5, cycles 1..=5 of
/// a counter are fast recovery (five halvings of CR − TR, docs/model.md) and
/// the 6th is the first active one (half length, R_AI or R_HAI).
#[derive(Debug, Clone, Default)]
pub struct QcnRp {
    /// Current rate CR, bit/s.
    pub cr: f64,
    /// Target rate TR, bit/s.
    pub tr: f64,
    pub byte_stage: u32,
    pub timer_stage: u32,
    /// Bytes left in the current byte-counter cycle.
    pub bytes_left: i64,
    /// End of the current timer cycle.
    pub timer_deadline: Time,
    /// Bumped whenever the timer is restarted, so the engine can ignore
    /// stale timer events.
    pub timer_generation: u32,
    /// CNMs received.
    pub cnms: u64,
    /// Increase events.
    pub increases: u64,
}

impl QcnRp {
    /// A new limiter at line rate (CR = TR = line), stages 0; the engine
    /// calls `on_cnm` right after.
    pub fn new(line: f64) -> QcnRp {
        QcnRp {
            cr: line,
            tr: line,
            ..QcnRp::default()
        }
    }

    /// Rate decrease (docs/model.md, QCN reaction point): TR ← CR if an
    /// increase cycle completed since the last CNM;
    /// CR ← CR·max(1 − Gd·qFb, 1 − max_decrease), floored at min_rate (a
    /// decrease never raises CR, which matters only if min_rate exceeds a
    /// host's line rate); stages ← 0; the byte counter reloaded and the
    /// timer restarted at `now`.
    pub fn on_cnm(&mut self, p: &QcnParams, qfb: u8, now: Time, rng: &mut Stream) {
        let factor = (1.0 - p.gd * qfb as f64).max(1.0 - p.max_decrease);
        self.decrease(p, factor, false, now, rng);
    }

    /// A notification's decrease, QCN's or DCQCN's: TR ← CR if `clamp`
    /// or an increase cycle completed since the last notification;
    /// CR ← CR·`factor`, floored at min_rate (never raised by it); stages
    /// ← 0; the byte counter reloaded and the timer restarted at `now`.
    pub fn decrease(
        &mut self,
        p: &QcnParams,
        factor: f64,
        clamp: bool,
        now: Time,
        rng: &mut Stream,
    ) {
        self.cnms += 1;
        if clamp || self.byte_stage != 0 || self.timer_stage != 0 {
            self.tr = self.cr;
        }
        self.cr = (self.cr * factor).max(p.min_rate.0.min(self.cr));
        self.byte_stage = 0;
        self.timer_stage = 0;
        self.bytes_left = jittered(p.byte_limit.0, p.rp_jitter, rng) as i64;
        self.restart_timer(p.timer_period.0, p.rp_jitter, now, rng);
    }

    /// The limiter transmitted a frame of `bytes`. When the byte counter runs
    /// out: one increase event, ByteStage += 1, reload with byte_limit (while
    /// ByteStage < FR_TH) or byte_limit/2, jittered; the excess is discarded.
    /// Returns true if an increase happened.
    pub fn on_bytes_sent(
        &mut self,
        p: &QcnParams,
        bytes: u32,
        line: f64,
        rng: &mut Stream,
    ) -> bool {
        self.bytes_left -= bytes as i64;
        if self.bytes_left > 0 {
            return false;
        }
        self.increase(p, line);
        self.byte_stage += 1;
        let nominal = cycle(p, self.byte_stage, p.byte_limit.0);
        self.bytes_left = jittered(nominal, p.rp_jitter, rng) as i64;
        true
    }

    /// The timer cycle ended at `now` (the engine calls this at
    /// timer_deadline with the current generation): one increase event,
    /// TimeStage += 1, restart with timer_period (while TimeStage < FR_TH) or
    /// timer_period/2, jittered.
    pub fn on_timer(&mut self, p: &QcnParams, now: Time, line: f64, rng: &mut Stream) {
        self.increase(p, line);
        self.timer_stage += 1;
        self.restart_timer(
            cycle(p, self.timer_stage, p.timer_period.0),
            p.rp_jitter,
            now,
            rng,
        );
    }

    /// The phase of the cycles now running.
    pub fn stage(&self, p: &QcnParams) -> RpStage {
        let th = p.fast_recovery_threshold;
        match (self.byte_stage >= th, self.timer_stage >= th) {
            (false, false) => RpStage::FastRecovery,
            (true, true) => RpStage::HyperActiveIncrease,
            _ => RpStage::ActiveIncrease,
        }
    }

    /// The limiter may be removed: TR is at the line rate and CR is within
    /// r_ai of it; CR is then set to the line rate exactly. The snap is needed
    /// because CR ← (CR + TR)/2 only approaches the line rate, never reaches it.
    pub fn at_line_rate(&mut self, p: &QcnParams, line: f64) -> bool {
        let done = self.tr >= line && self.cr >= line - p.r_ai.0;
        if done {
            self.cr = line;
        }
        done
    }

    /// Increase event (docs/model.md, QCN reaction point), the phase taken
    /// from the stages before the expiring counter's is bumped.
    fn increase(&mut self, p: &QcnParams, line: f64) {
        self.increases += 1;
        match self.stage(p) {
            RpStage::FastRecovery => {}
            RpStage::ActiveIncrease => self.tr += p.r_ai.0,
            RpStage::HyperActiveIncrease => {
                let i = if p.hai_scaled {
                    self.byte_stage.min(self.timer_stage) - p.fast_recovery_threshold + 1
                } else {
                    1
                };
                self.tr += i as f64 * p.r_hai.0;
            }
        }
        self.tr = self.tr.min(line);
        self.cr = ((self.cr + self.tr) / 2.0).min(line);
    }

    /// Restarts the timer for `period` picoseconds, jittered.
    fn restart_timer(&mut self, period: u64, j: f64, now: Time, rng: &mut Stream) {
        self.timer_deadline = now + Time(jittered(period, j, rng));
        self.timer_generation = self.timer_generation.wrapping_add(1);
    }
}

/// QCN in a running network: a congestion point per switch output queue
/// (`None` where the switch has none), and per limiter row its reaction
/// point and the reaction point's random stream.
pub struct Qcn {
    pub params: QcnParams,
    cps: Vec<Option<QcnCp>>,
    rps: Vec<QcnRp>,
    rng: Vec<Stream>,
}

impl Qcn {
    /// `lines`: the line rate of each row's source, bit/s.
    pub fn new(params: QcnParams, cps: Vec<Option<QcnCp>>, lines: &[f64], rng: Vec<Stream>) -> Qcn {
        Qcn {
            params,
            cps,
            rps: lines.iter().map(|&line| QcnRp::new(line)).collect(),
            rng,
        }
    }

    #[inline]
    pub(super) fn congestion_point(&mut self, a: Arrival) -> Option<Notice> {
        let p = &self.params;
        let cp = self.cps[a.out as usize].as_mut()?;
        let cnm = cp.arrive(p, a.frame.size as u32, a.queue)?;
        let offsets = Frame::pack_offsets(cnm.qoff, cnm.qdelta);
        let (kind, bytes) = (FrameKind::Cnm, p.message_bytes);
        Some(Notice::new(
            Sign::Negative,
            kind,
            bytes,
            a.out,
            offsets,
            cnm.qfb,
        ))
    }

    /// A CNM reaches the reaction point of its flow's limiter (installed
    /// by the first CNM).
    pub(super) fn react(&mut self, cnm: &Frame, rp: Rp) -> Reaction {
        let f = rp.row as usize;
        let mut r = Reaction::rate_changed();
        if !rp.limiter.active {
            rp.limiter.install(rp.line);
            // Keep the timer generation: events of an earlier install are stale.
            let generation = self.rps[f].timer_generation;
            self.rps[f] = QcnRp::new(rp.line);
            self.rps[f].timer_generation = generation;
            r.installed = true;
        }
        rp.limiter.cpid = cnm.cpid;
        rp.limiter.messages += 1;
        self.rps[f].on_cnm(&self.params, cnm.qfb, rp.now, &mut self.rng[f]);
        self.follow(rp, r)
    }

    /// The limiter released a data frame of `bytes`: the byte counter runs.
    #[inline]
    pub(super) fn released(&mut self, bytes: u16, rp: Rp) -> Reaction {
        let f = rp.row as usize;
        if !rp.limiter.active
            || !self.rps[f].on_bytes_sent(&self.params, bytes as u32, rp.line, &mut self.rng[f])
        {
            return Reaction::default();
        }
        self.follow_rate(rp, Reaction::rate_changed())
    }

    /// The reaction point's timer ends a cycle.
    pub(super) fn timer(&mut self, generation: u32, rp: Rp) -> Reaction {
        let f = rp.row as usize;
        if !rp.limiter.active || self.rps[f].timer_generation != generation {
            return Reaction::default();
        }
        self.rps[f].on_timer(&self.params, rp.now, rp.line, &mut self.rng[f]);
        self.follow(rp, Reaction::rate_changed())
    }

    /// The timer is rearmed and the limiter follows CR.
    fn follow(&mut self, rp: Rp, mut r: Reaction) -> Reaction {
        let p = &self.rps[rp.row as usize];
        r.timers[0] = Some(TimerRequest {
            timer: CmTimer::Qcn,
            at: p.timer_deadline,
            generation: p.timer_generation,
        });
        self.follow_rate(rp, r)
    }

    /// The limiter follows CR (back at the line rate it may be removed);
    /// the target rate TR is recorded.
    fn follow_rate(&mut self, rp: Rp, mut r: Reaction) -> Reaction {
        let p = &mut self.rps[rp.row as usize];
        p.at_line_rate(&self.params, rp.line);
        rp.limiter.rate = p.cr;
        r.target = Some(p.tr);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;

    const C: f64 = 10e9;
    /// CR after FR cycles 1..=5 from CR 6.5625, TR 8.75 Gb/s: the 2.1875 Gb/s gap halves each time.
    const FR: [f64; 5] = [
        7.65625e9,
        8.203125e9,
        8.4765625e9,
        8.61328125e9,
        8.681640625e9,
    ];

    /// S2 parameters without jitter, for exact sequences.
    fn exact() -> QcnParams {
        let mut p = QcnParams::default();
        (p.sample_jitter, p.rp_jitter) = (0.0, 0.0);
        p
    }

    /// Sends `n` frames of 1500 B; returns the number of increases.
    fn send(rp: &mut QcnRp, p: &QcnParams, n: usize, rng: &mut Stream) -> usize {
        (0..n).filter(|_| rp.on_bytes_sent(p, 1500, C, rng)).count()
    }

    /// CNM qFb 32 (× 0.75) at 0: CR 7.5, TR 10 Gb/s. One byte cycle (100 × 1500 B), FR:
    /// CR = (7.5 + 10)/2 = 8.75. CNM qFb 32 at 1 ms: a cycle completed, so TR ← CR = 8.75,
    /// CR = 8.75 × 0.75 = 6.5625 Gb/s, stages 0, timer deadline 16 ms.
    fn two_cnms(p: &QcnParams, rng: &mut Stream) -> QcnRp {
        let mut rp = QcnRp::new(C);
        rp.on_cnm(p, 32, Time::ZERO, rng);
        assert_eq!((rp.cr, rp.tr), (7.5e9, C));
        assert_eq!(send(&mut rp, p, 100, rng), 1);
        assert_eq!((rp.cr, rp.byte_stage), (8.75e9, 1));
        rp.on_cnm(p, 32, Time::from_ms(1), rng);
        assert_eq!((rp.cr, rp.tr, rp.byte_stage), (6.5625e9, 8.75e9, 0));
        rp
    }

    #[test]
    fn feedback_and_quantization_follow_the_queue_history() {
        let p = exact();
        let mut round = p;
        round.quantize = Quantize::Round;
        // Fbmax = (1 + 2·2) × 26 KB. q_old 20 KB, q 40 KB: Fb = −(14,000 + 2 × 20,000) = −54,000;
        // 63 × 54,000 / 130,000 = 26.17: 26 by floor and by round.
        assert_eq!(p.fb_max(), 130_000.0);
        assert_eq!(feedback(&p, 40_000, 20_000), -54_000.0);
        assert_eq!((quantize(&p, -54e3), quantize(&round, -54e3)), (26, 26));
        // Steady 81 KB: Fb = −55,000; 63 × 55,000 / 130,000 = 26.65: floor 26, round 27.
        assert_eq!(feedback(&p, 81_000, 81_000), -55_000.0);
        assert_eq!((quantize(&p, -55e3), quantize(&round, -55e3)), (26, 27));
        // Draining 30 KB → 20 KB: Fb = −(−6,000 − 20,000) = 26,000 > 0; steady at Qeq: 0.
        assert_eq!(feedback(&p, 20_000, 30_000), 26_000.0);
        assert_eq!(quantize(&p, 26_000.0), 0);
        assert_eq!(quantize(&p, feedback(&p, 26_000, 26_000)), 0);
        // 200 KB from empty: Fb = −(174,000 + 400,000), saturated at Fbmax: 63, as is Fbmax.
        assert_eq!(quantize(&p, feedback(&p, 200_000, 0)), 63);
        assert_eq!(quantize(&p, -130_000.0), 63);
        // One byte over Qeq: 63 / 130,000 = 0.0005 floors (and rounds) to 0, clamped to 1.
        assert_eq!(quantize(&p, feedback(&p, 26_001, 26_001)), 1);
        assert_eq!(quantize(&round, -1.0), 1);
    }

    #[test]
    fn sampling_interval_table_and_its_scaling() {
        let mut p = exact();
        let table = [
            150_000, 75_000, 50_000, 37_500, 30_000, 25_000, 21_500, 18_500,
        ];
        for (k, &bytes) in (0u8..).zip(table.iter()) {
            // qFb[5:3] = k for qFb in 8k..=8k + 7.
            assert_eq!(
                (sample_interval(&p, 8 * k), sample_interval(&p, 8 * k + 7)),
                (bytes, bytes)
            );
        }
        p.sample_base = Bytes(75_000); // half the base halves the table
        assert_eq!(
            [0, 24, 63].map(|q| sample_interval(&p, q)),
            [75_000, 18_750, 9_250]
        );
        p.sample_base = Bytes(100_000); // × 2/3: 37,500 → 25,000; 21,500 → 14,333.3, floored
        assert_eq!([31, 48].map(|q| sample_interval(&p, q)), [25_000, 14_333]);
    }

    #[test]
    fn cp_samples_every_150_kb_uncongested_and_every_37_5_kb_at_qfb_26() {
        let p = exact();
        let mut cp = QcnCp::new(&p, stream(1, 1));
        // Frames 1..=300 see a 5 KB queue. First sample: Fb = −(−21,000 + 2 × 5,000) = 11,000,
        // then −(−21,000) = 21,000: no CNM, and 150 KB (100 frames) between samples.
        for i in 1..=300 {
            assert_eq!(cp.arrive(&p, 1500, 5_000), None);
            assert_eq!(cp.samples(), i / 100);
        }
        // Then 80 KB. Frame 400: Fb = −(54,000 + 2 × 75,000) = −204,000, saturated: qFb 63,
        // Qoff = 54,000 / 64 = 843, Qdelta = 75,000 / 64 = 1171; next interval 18.5 KB, reached
        // by the 13th frame (19,500 B). Frame 413: Fb = −54,000, qFb 26 (in 24..=31): 37.5 KB =
        // 25 frames, the 1,000 B excess discarded, so samples at 438, 463, 488, qFb 26 each.
        let cnms: Vec<_> = (301..=488)
            .filter_map(|i| {
                cp.arrive(&p, 1500, 80_000)
                    .map(|c| (i, c.qfb, c.qoff, c.qdelta))
            })
            .collect();
        let steady = |i| (i, 26, 843, 0);
        let expect = vec![
            (400, 63, 843, 1171),
            steady(413),
            steady(438),
            steady(463),
            steady(488),
        ];
        assert_eq!((cnms, cp.samples()), (expect, 8));
        // Offsets beyond i16 in 64-byte units saturate: (3 MB − 26 KB) / 64 = 46,468.
        let mut cp = QcnCp::new(&p, stream(1, 1));
        let c = (0..100).find_map(|_| cp.arrive(&p, 1500, 3_000_000));
        assert_eq!(
            c.map(|c| (c.qfb, c.qoff, c.qdelta)),
            Some((63, i16::MAX, i16::MAX))
        );
    }

    #[test]
    fn jittered_reloads_stay_within_15_percent_of_nominal() {
        let p = QcnParams::default();
        let mut rng = stream(5, 5);
        let f: Vec<f64> = (0..100_000).map(|_| jitter_factor(0.3, &mut rng)).collect();
        assert!(f.iter().all(|&x| x > 0.85 && x <= 1.15));
        let mean = f.iter().sum::<f64>() / f.len() as f64;
        assert!((mean - 1.0).abs() < 0.002, "{mean}");
        // The CP's reloads: qFb 0 at a 5 KB queue (nominal 150 KB), qFb 26 at 80 KB (37.5 KB).
        for (q, nominal) in [(5_000, 150_000.0), (80_000, 37_500.0)] {
            let mut cp = QcnCp::new(&p, stream(7, q));
            let (mut lo, mut hi) = (f64::MAX, 0.0f64);
            for _ in 0..2_000_000 {
                let before = cp.samples();
                cp.arrive(&p, 1500, q);
                if cp.samples() > before.max(1) {
                    let r = cp.left as f64 / nominal;
                    (lo, hi) = (lo.min(r), hi.max(r));
                }
            }
            assert!(
                (0.85..0.86).contains(&lo) && hi > 1.14 && hi <= 1.15,
                "{lo} {hi}"
            );
        }
        // The RP's byte counter and timer reloads.
        let mut rp = QcnRp::new(C);
        for _ in 0..10_000 {
            rp.on_cnm(&p, 1, Time::ZERO, &mut rng);
            assert!((127_500..=172_500).contains(&rp.bytes_left));
            assert!((Time(12_750_000_001)..=Time(17_250_000_000)).contains(&rp.timer_deadline));
        }
    }

    #[test]
    fn cnm_cuts_cr_and_moves_tr_only_after_an_increase_cycle() {
        let p = exact();
        let mut rng = stream(1, 1);
        let mut rp = QcnRp::new(C);
        // qFb 63: CR = 10 Gb/s × (1 − 63/128) = 5.078125 Gb/s; stages 0, so TR stays.
        rp.on_cnm(&p, 63, Time::from_us(10), &mut rng);
        assert_eq!((rp.cr, rp.tr), (5.078125e9, C));
        assert_eq!(
            (rp.bytes_left, rp.cnms, rp.timer_generation),
            (150_000, 1, 1)
        );
        assert_eq!(rp.timer_deadline, Time::from_us(15_010));
        assert_eq!(rp.stage(&p), RpStage::FastRecovery);
        // Again at once: CR × 65/128 = 2,578,735,351.5625 b/s; TR still the line rate.
        rp.on_cnm(&p, 63, Time::from_us(20), &mut rng);
        assert_eq!((rp.cr, rp.tr), (2_578_735_351.562_5, C));
        assert_eq!(rp.timer_generation, 2);
        // After an increase cycle TR ← CR (checked inside two_cnms).
        two_cnms(&p, &mut rng);
    }

    #[test]
    fn byte_cycles_five_fast_recovery_then_active_increase_at_half_length() {
        let p = exact();
        let mut rng = stream(1, 1);
        let mut rp = two_cnms(&p, &mut rng);
        for (k, &cr) in (1..).zip(FR.iter()) {
            assert_eq!(rp.stage(&p), RpStage::FastRecovery);
            assert_eq!(send(&mut rp, &p, 99, &mut rng), 0);
            assert_eq!(send(&mut rp, &p, 1, &mut rng), 1);
            assert_eq!((rp.cr, rp.tr, rp.byte_stage), (cr, 8.75e9, k));
        }
        // Cycle 6 is AI and 75 KB = 50 frames: TR = 8.755, CR = (8.681640625 + 8.755)/2 Gb/s.
        assert_eq!(rp.stage(&p), RpStage::ActiveIncrease);
        assert_eq!(rp.bytes_left, 75_000);
        assert_eq!(send(&mut rp, &p, 49, &mut rng), 0);
        assert_eq!(send(&mut rp, &p, 1, &mut rng), 1);
        assert_eq!((rp.tr, rp.cr), (8.755e9, 8.718_320_312_5e9));
        assert_eq!((rp.bytes_left, rp.increases), (75_000, 7));
        // A CNM now: TR ← CR; CR × 0.75 = 6.538740234375 Gb/s.
        rp.on_cnm(&p, 32, Time::from_ms(2), &mut rng);
        assert_eq!((rp.tr, rp.cr), (8.718_320_312_5e9, 6.538_740_234_375e9));
    }

    #[test]
    fn timer_cycles_recover_without_traffic() {
        let p = exact();
        let mut rng = stream(1, 1);
        let mut rp = two_cnms(&p, &mut rng);
        // FR cycles end at 16, 31, 46, 61, 76 ms; after the 5th the period halves to 7.5 ms.
        let next_deadline_us = [31_000, 46_000, 61_000, 76_000, 83_500];
        for (k, (&cr, &us)) in (1..).zip(FR.iter().zip(&next_deadline_us)) {
            assert_eq!(rp.stage(&p), RpStage::FastRecovery);
            rp.on_timer(&p, rp.timer_deadline, C, &mut rng);
            assert_eq!((rp.cr, rp.tr), (cr, 8.75e9));
            assert_eq!((rp.timer_stage, rp.timer_generation), (k, 2 + k));
            assert_eq!(rp.timer_deadline, Time::from_us(us));
        }
        // AI (bytes still in FR): TR 8.755, CR 8.7183203125; then TR 8.76,
        // CR = (8.7183203125 + 8.76)/2 = 8.73916015625 Gb/s.
        assert_eq!((rp.stage(&p), rp.byte_stage), (RpStage::ActiveIncrease, 0));
        rp.on_timer(&p, rp.timer_deadline, C, &mut rng);
        assert_eq!((rp.tr, rp.cr), (8.755e9, 8.718_320_312_5e9));
        assert_eq!(rp.timer_deadline, Time::from_us(91_000));
        rp.on_timer(&p, rp.timer_deadline, C, &mut rng);
        assert_eq!((rp.tr, rp.cr), (8.76e9, 8.739_160_156_25e9));
        assert_eq!((rp.timer_stage, rp.increases), (7, 8));
    }

    #[test]
    fn hyper_active_increase_adds_i_times_r_hai() {
        for hai_scaled in [true, false] {
            let mut p = exact();
            p.hai_scaled = hai_scaled;
            let mut rng = stream(1, 1);
            let mut rp = two_cnms(&p, &mut rng);
            for _ in 0..5 {
                rp.on_timer(&p, rp.timer_deadline, C, &mut rng); // FR
            }
            assert_eq!(send(&mut rp, &p, 500, &mut rng), 5); // AI: the timer is past FR
            assert_eq!((rp.byte_stage, rp.timer_stage), (5, 5));
            assert_eq!(rp.stage(&p), RpStage::HyperActiveIncrease);
            // Round rates, to follow the steps: CR 1, TR 2 Gb/s.
            (rp.cr, rp.tr) = (1e9, 2e9);
            // Byte cycle (75 KB), stages (5, 5): i = 1. TR 2.05, CR 1.525.
            assert_eq!(send(&mut rp, &p, 50, &mut rng), 1);
            assert_eq!((rp.tr, rp.cr), (2.05e9, 1.525e9));
            // Timer, stages (6, 5): i = 1. TR 2.1, CR 1.8125.
            rp.on_timer(&p, rp.timer_deadline, C, &mut rng);
            assert_eq!((rp.tr, rp.cr), (2.1e9, 1.8125e9));
            // Byte cycle, stages (6, 6): scaled, i = 2: TR 2.2, CR = (1.8125 + 2.2)/2 = 2.00625;
            // unscaled: TR 2.15, CR 1.98125.
            assert_eq!(send(&mut rp, &p, 50, &mut rng), 1);
            let tr = if hai_scaled { 2.2e9 } else { 2.15e9 };
            assert_eq!((rp.tr, rp.cr), (tr, (1.8125e9 + tr) / 2.0));
        }
    }

    #[test]
    fn decrease_is_floored_at_min_rate_and_capped_at_max_decrease() {
        let mut p = exact();
        let mut rng = stream(1, 1);
        let mut rp = QcnRp::new(C);
        // Ten CNMs of qFb 63: 10 Gb/s × (65/128)^10 = 11.40 Mb/s; the 11th would give 5.79.
        for _ in 0..10 {
            rp.on_cnm(&p, 63, Time::ZERO, &mut rng);
        }
        let ten = 10e9 * (65.0f64 / 128.0).powi(10);
        assert!((rp.cr - ten).abs() <= 1e-9 * ten, "{}", rp.cr);
        for _ in 0..40 {
            rp.on_cnm(&p, 63, Time::ZERO, &mut rng);
            assert_eq!(rp.cr, 10e6);
        }
        // Gd = 1/32: qFb 63 would take 197% off, capped at 50%; qFb 8 takes 25%.
        p.gd = 1.0 / 32.0;
        let mut rp = QcnRp::new(C);
        rp.on_cnm(&p, 63, Time::ZERO, &mut rng);
        assert_eq!(rp.cr, 5e9);
        rp.on_cnm(&p, 8, Time::ZERO, &mut rng);
        assert_eq!(rp.cr, 3.75e9);
    }

    #[test]
    fn at_line_rate_snaps_cr_once_within_r_ai() {
        let p = exact();
        let mut rng = stream(1, 1);
        let mut rp = QcnRp::new(C);
        rp.on_cnm(&p, 32, Time::ZERO, &mut rng);
        // CR 7.5, TR 10 Gb/s. 5 FR and 3 AI cycles (TR + 5 Mb/s, clamped to the line) halve
        // the 2.5 Gb/s gap to 9.765625 Mb/s; one more AI cycle leaves 4.8828125 Mb/s, within R_AI.
        assert_eq!(send(&mut rp, &p, 500 + 3 * 50, &mut rng), 8);
        assert_eq!((rp.tr, rp.cr), (C, C - 9.765_625e6));
        assert!(!rp.at_line_rate(&p, C));
        assert_eq!(send(&mut rp, &p, 50, &mut rng), 1);
        assert_eq!(rp.cr, C - 4.882_812_5e6);
        assert!(rp.at_line_rate(&p, C));
        assert_eq!(rp.cr, C);
    }
}
