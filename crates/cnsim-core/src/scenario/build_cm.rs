//! The `[bcn]` section: congestion-notification parameters with the CN-SIM
//! baseline (study E) as defaults.

use super::build::{Builder, FRAME_RANGE};
use super::error::{FieldPath, ScenarioError};
use super::schema::{RawBcn, RawBcnStop, RawDcqcn, RawDrift, RawE2cm, RawQcn};
use crate::cm::bcn::{BcnParams, DriftParams, Sampling, StopParams, PAGE_BYTES};
use crate::cm::dcqcn::{DcqcnParams, Variant};
use crate::cm::e2cm::{Baseline, E2cmParams, Measure};
use crate::cm::qcn::{QcnParams, Quantize};
use crate::units::{Bytes, Rate, RateF64, Time};

impl Builder<'_> {
    /// A BCN-style loop's parameters from the table at `bp`.
    pub(super) fn bcn(&self, raw: &RawBcn, bp: &FieldPath) -> Result<BcnParams, ScenarioError> {
        let bp = bp.clone();
        let qeq = match &raw.qeq {
            Some(s) => self.size(s, &bp.key("qeq"))?,
            None => 375 * PAGE_BYTES,
        };
        if qeq < PAGE_BYTES {
            return Err(self.err(
                &bp.key("qeq"),
                format!("expected at least one 64-byte page, found {qeq} B"),
            ));
        }
        let w = self.gain(raw.w, 2.0, &bp.key("w"))?;
        let rate_unit = self
            .opt_rate(&raw.rate_unit, &bp.key("rate_unit"))?
            .unwrap_or(Rate::mbps(1));
        // Gains may be given directly or by what a maximal feedback does
        // (docs/model.md, "ECM"): Gd = d / Fbmax, Gi = (ΔR / Ru) / Fbmax.
        let fb_max = ((1.0 + 2.0 * w) * (qeq / PAGE_BYTES) as f64).round();
        let gi = match (raw.gi, &raw.increase_at_fbmax) {
            (Some(_), Some(_)) => {
                return Err(self.err(
                    &bp.key("increase_at_fbmax"),
                    "give either gi or increase_at_fbmax, not both",
                ))
            }
            (None, Some(r)) => {
                let r = self.rate(r, &bp.key("increase_at_fbmax"))?;
                r.0 as f64 / rate_unit.0 as f64 / fb_max
            }
            (gi, None) => self.gain(gi, 0.53, &bp.key("gi"))?,
        };
        let gd = match (raw.gd, raw.decrease_at_fbmax) {
            (Some(_), Some(_)) => {
                return Err(self.err(
                    &bp.key("decrease_at_fbmax"),
                    "give either gd or decrease_at_fbmax, not both",
                ))
            }
            (None, Some(d)) => self.gain(Some(d), 0.0, &bp.key("decrease_at_fbmax"))? / fb_max,
            (gd, None) => self.gain(gd, 2.6e-4, &bp.key("gd"))?,
        };
        let sampling = match (raw.sample_probability, &raw.sample_interval) {
            (Some(_), Some(_)) => {
                return Err(self.err(
                    &bp.key("sample_probability"),
                    "give either sample_interval or sample_probability, not both",
                ))
            }
            (Some(pr), None) => {
                if !(pr > 0.0 && pr <= 1.0) {
                    return Err(self.err(
                        &bp.key("sample_probability"),
                        format!("expected a probability in (0, 1], found {pr}"),
                    ));
                }
                if raw.sample_jitter.is_some() {
                    return Err(self.err(
                        &bp.key("sample_jitter"),
                        "a jitter applies to sample_interval, not to sample_probability",
                    ));
                }
                Sampling::Probability(pr)
            }
            (None, interval) => {
                let mean = match interval {
                    Some(s) => self.size(s, &bp.key("sample_interval"))?,
                    None => 150 * self.kilobyte(),
                };
                if mean == 0 {
                    return Err(self.err(
                        &bp.key("sample_interval"),
                        "expected an interval above zero, found 0 B",
                    ));
                }
                let jitter = match &raw.sample_jitter {
                    Some(s) => self.size(s, &bp.key("sample_jitter"))?,
                    None => 0,
                };
                if jitter >= mean {
                    return Err(self.err(
                        &bp.key("sample_jitter"),
                        format!(
                            "expected a jitter below the interval ({mean} B), found {jitter} B"
                        ),
                    ));
                }
                Sampling::Interval {
                    mean: Bytes(mean),
                    jitter: Bytes(jitter),
                }
            }
        };
        let min_rate = self
            .opt_rate(&raw.min_rate, &bp.key("min_rate"))?
            .unwrap_or(rate_unit);
        let max_decrease = raw.max_decrease.unwrap_or(0.5);
        if !(max_decrease > 0.0 && max_decrease <= 1.0) {
            return Err(self.err(
                &bp.key("max_decrease"),
                format!("expected a fraction in (0, 1], found {max_decrease}"),
            ));
        }
        let initial_rate = self.opt_rate(&raw.initial_rate, &bp.key("initial_rate"))?;
        if let Some(r) = initial_rate {
            if r < min_rate {
                return Err(self.err(
                    &bp.key("initial_rate"),
                    format!("expected at least min_rate ({min_rate}), found {r}"),
                ));
            }
        }
        let rl_queue = self.rl_queue(
            &raw.rl_queue,
            &bp.key("rl_queue"),
            Bytes(150 * self.kilobyte()),
        )?;
        let message_bytes = match &raw.message {
            Some(s) => self.frame_size(s, &bp.key("message"))?,
            None => 64,
        };
        let bcn_max = match &raw.bcn_max {
            Some(s) => Some(Bytes(self.size(s, &bp.key("bcn_max"))?)),
            None => None,
        };
        let stop = raw
            .stop
            .as_ref()
            .map(|s| self.bcn_stop(s, &bp.key("stop")))
            .transpose()?;
        let drift = raw
            .drift
            .as_ref()
            .map(|d| self.drift(d, &bp.key("drift")))
            .transpose()?;
        let params = BcnParams {
            qeq_pages: (qeq / PAGE_BYTES) as i64,
            w,
            gi,
            gd,
            rate_unit,
            sampling,
            min_rate,
            max_decrease,
            initial_rate,
            rl_queue,
            message_bytes,
            expedite: raw.expedite.unwrap_or(false),
            bcn_max,
            stop,
            drift,
        };
        // Feedback rides in a 16-bit field of the notification frame.
        if params.fb_max() > i16::MAX as i64 {
            return Err(self.err(
                &bp.key("qeq"),
                format!(
                    "(1 + 2w)·qeq is {} pages; at most {} fit the feedback field",
                    params.fb_max(),
                    i16::MAX
                ),
            ));
        }
        Ok(params)
    }

    /// The `[e2cm]` section; its `control` table is a BCN loop without a
    /// sampler, BCN(0,0) or drift (the probes stand in for samples).
    pub(super) fn e2cm(&self, raw: &RawE2cm) -> Result<E2cmParams, ScenarioError> {
        let ep = FieldPath::root().key("e2cm");
        let measure = self.choice(
            &raw.measure,
            &ep.key("measure"),
            [
                ("source", Measure::Source),
                ("destination", Measure::Destination),
            ],
        )?;
        let baseline = self.choice(
            &raw.baseline,
            &ep.key("baseline"),
            [
                ("flow_start", Baseline::FlowStart),
                ("while_probing", Baseline::WhileProbing),
            ],
        )?;
        let probe_probability = raw.probe_probability.unwrap_or(0.02);
        if !(probe_probability > 0.0 && probe_probability <= 1.0) {
            return Err(self.err(
                &ep.key("probe_probability"),
                format!("expected a probability in (0, 1], found {probe_probability}"),
            ));
        }
        let probe_max_interval = match &raw.probe_max_interval {
            Some(s) => self.time(s, &ep.key("probe_max_interval"))?,
            None => Time::from_ms(10),
        };
        if probe_max_interval == Time::ZERO {
            return Err(self.err(
                &ep.key("probe_max_interval"),
                "expected an interval above zero, found 0",
            ));
        }
        let probe_bytes = match &raw.probe {
            Some(s) => self.frame_size(s, &ep.key("probe"))?,
            None => 64,
        };
        let cp = ep.key("control");
        let control_raw = raw.control.clone().unwrap_or_default();
        for (key, given) in [
            ("sample_interval", control_raw.sample_interval.is_some()),
            ("sample_jitter", control_raw.sample_jitter.is_some()),
            (
                "sample_probability",
                control_raw.sample_probability.is_some(),
            ),
            ("initial_rate", control_raw.initial_rate.is_some()),
            ("rl_queue", control_raw.rl_queue.is_some()),
            ("message", control_raw.message.is_some()),
            ("expedite", control_raw.expedite.is_some()),
            ("stop", control_raw.stop.is_some()),
            ("drift", control_raw.drift.is_some()),
        ] {
            if given {
                return Err(self.err(
                    &cp.key(key),
                    format!("'{key}' belongs to [bcn]; the per-flow loop samples with probes (probe_probability)"),
                ));
            }
        }
        Ok(E2cmParams {
            control: self.bcn(&control_raw, &cp)?,
            measure,
            baseline,
            probe_probability,
            probe_max_interval,
            probe_bytes,
            expedite: raw.expedite.unwrap_or(true),
        })
    }

    /// The `[qcn]` section, with study C's (802.1Qau) values as defaults.
    pub(super) fn qcn(&self, raw: &RawQcn) -> Result<QcnParams, ScenarioError> {
        let qp = FieldPath::root().key("qcn");
        let d = QcnParams::with_kilobyte(self.kilobyte());
        let positive_size = |v: &Option<String>, key: &str, default: Bytes| {
            let Some(s) = v else { return Ok(default) };
            let b = self.size(s, &qp.key(key))?;
            if b == 0 {
                return Err(self.err(&qp.key(key), "expected a size above zero, found 0 B"));
            }
            Ok(Bytes(b))
        };
        let fraction = |v: Option<f64>, key: &str, default: f64, upper: f64| {
            let v = v.unwrap_or(default);
            if !(v.is_finite() && (0.0..=upper).contains(&v)) {
                return Err(self.err(
                    &qp.key(key),
                    format!("expected a number in [0, {upper}], found {v}"),
                ));
            }
            Ok(v)
        };
        let rate = |v: &Option<String>, key: &str, default: RateF64| {
            Ok::<RateF64, ScenarioError>(match self.opt_rate(v, &qp.key(key))? {
                Some(r) => r.into(),
                None => default,
            })
        };
        let quantize = self.choice(
            &raw.quantize,
            &qp.key("quantize"),
            [("floor", Quantize::Floor), ("round", Quantize::Round)],
        )?;
        let hai_scaled = self.choice(
            &raw.hai,
            &qp.key("hai"),
            [("scaled", true), ("constant", false)],
        )?;
        let per_destination = self.choice(
            &raw.limiter,
            &qp.key("limiter"),
            [("flow", false), ("destination", true)],
        )?;
        let timer_period = match &raw.timer {
            Some(s) => self.time(s, &qp.key("timer"))?,
            None => d.timer_period,
        };
        if timer_period == Time::ZERO {
            return Err(self.err(&qp.key("timer"), "expected a period above zero, found 0"));
        }
        let fast_recovery_threshold = raw.fast_recovery.unwrap_or(d.fast_recovery_threshold);
        if fast_recovery_threshold == 0 {
            return Err(self.err(
                &qp.key("fast_recovery"),
                "expected at least one fast-recovery cycle, found 0",
            ));
        }
        let rl_queue = self.rl_queue(&raw.rl_queue, &qp.key("rl_queue"), d.rl_queue)?;
        let max_decrease = raw.max_decrease.unwrap_or(d.max_decrease);
        if !(max_decrease > 0.0 && max_decrease <= 1.0) {
            return Err(self.err(
                &qp.key("max_decrease"),
                format!("expected a fraction in (0, 1], found {max_decrease}"),
            ));
        }
        let min_rate = rate(&raw.min_rate, "min_rate", d.min_rate)?;
        if min_rate.0 <= 0.0 {
            return Err(self.err(&qp.key("min_rate"), "expected a rate above zero, found 0"));
        }
        Ok(QcnParams {
            qeq: positive_size(&raw.qeq, "qeq", d.qeq)?,
            w: self.gain(raw.w, d.w, &qp.key("w"))?,
            sample_base: positive_size(&raw.sample_interval, "sample_interval", d.sample_base)?,
            sample_jitter: fraction(raw.sample_jitter, "sample_jitter", d.sample_jitter, 1.0)?,
            quantize,
            message_bytes: match &raw.message {
                Some(s) => self.frame_size(s, &qp.key("message"))?,
                None => d.message_bytes,
            },
            expedite: raw.expedite.unwrap_or(false),
            gd: fraction(raw.gd, "gd", d.gd, 1.0)?,
            min_rate,
            max_decrease,
            byte_limit: positive_size(&raw.byte_limit, "byte_limit", d.byte_limit)?,
            timer_period,
            fast_recovery_threshold,
            r_ai: rate(&raw.r_ai, "r_ai", d.r_ai)?,
            r_hai: rate(&raw.r_hai, "r_hai", d.r_hai)?,
            rp_jitter: fraction(raw.rp_jitter, "rp_jitter", d.rp_jitter, 1.0)?,
            hai_scaled,
            rl_queue,
            per_destination,
        })
    }

    fn bcn_stop(&self, s: &RawBcnStop, p: &FieldPath) -> Result<StopParams, ScenarioError> {
        let threshold = self.size(&s.threshold, &p.key("threshold"))?;
        if threshold == 0 {
            return Err(self.err(
                &p.key("threshold"),
                "expected a threshold above zero, found 0 B",
            ));
        }
        Ok(StopParams {
            threshold: Bytes(threshold),
            tmax: self.time(&s.tmax, &p.key("tmax"))?,
            restart_rate: self.rate(&s.restart_rate, &p.key("restart_rate"))?,
        })
    }

    fn drift(&self, d: &RawDrift, p: &FieldPath) -> Result<DriftParams, ScenarioError> {
        let interval = self.time(&d.interval, &p.key("interval"))?;
        if interval == Time::ZERO {
            return Err(self.err(
                &p.key("interval"),
                "expected an interval above zero, found 0",
            ));
        }
        Ok(DriftParams {
            rate: self.rate(&d.rate, &p.key("rate"))?,
            interval,
        })
    }

    /// `[dcqcn]`: the paper's values for what it leaves out.
    pub(super) fn dcqcn(&self, raw: &RawDcqcn) -> Result<DcqcnParams, ScenarioError> {
        let dp = FieldPath::root().key("dcqcn");
        let mellanox = self.choice(
            &raw.variant,
            &dp.key("variant"),
            [("paper", false), ("mellanox", true)],
        )?;
        let d = if mellanox {
            DcqcnParams::mellanox()
        } else {
            DcqcnParams::paper()
        };
        let fraction = |v: Option<f64>, key: &str, default: f64, open_zero: bool| {
            let v = v.unwrap_or(default);
            let ok = v.is_finite() && v <= 1.0 && if open_zero { v > 0.0 } else { v >= 0.0 };
            if !ok {
                let range = if open_zero { "(0, 1]" } else { "[0, 1]" };
                return Err(self.err(
                    &dp.key(key),
                    format!("expected a number in {range}, found {v}"),
                ));
            }
            Ok(v)
        };
        let time = |v: &Option<String>, key: &str, default: Time| {
            let t = match v {
                Some(s) => self.time(s, &dp.key(key))?,
                None => default,
            };
            if t == Time::ZERO {
                return Err(self.err(&dp.key(key), "expected a time above zero, found 0"));
            }
            Ok(t)
        };
        let rate = |v: &Option<String>, key: &str, default: RateF64| {
            Ok::<RateF64, ScenarioError>(match self.opt_rate(v, &dp.key(key))? {
                Some(r) => r.into(),
                None => default,
            })
        };
        let mut rp = d.rp;
        rp.byte_limit = match &raw.byte_counter {
            Some(s) => Bytes(self.size(s, &dp.key("byte_counter"))?),
            None => d.rp.byte_limit,
        };
        if rp.byte_limit.0 == 0 {
            return Err(self.err(
                &dp.key("byte_counter"),
                "expected a size above zero, found 0 B",
            ));
        }
        rp.timer_period = time(&raw.timer, "timer", d.rp.timer_period)?;
        rp.fast_recovery_threshold = raw.fast_recovery.unwrap_or(d.rp.fast_recovery_threshold);
        if rp.fast_recovery_threshold == 0 {
            return Err(self.err(
                &dp.key("fast_recovery"),
                "expected at least one fast-recovery cycle, found 0",
            ));
        }
        rp.r_ai = rate(&raw.r_ai, "r_ai", d.rp.r_ai)?;
        rp.r_hai = rate(&raw.r_hai, "r_hai", d.rp.r_hai)?;
        rp.min_rate = rate(&raw.min_rate, "min_rate", d.rp.min_rate)?;
        if rp.min_rate.0 <= 0.0 {
            return Err(self.err(&dp.key("min_rate"), "expected a rate above zero, found 0"));
        }
        rp.rl_queue = self.rl_queue(&raw.rl_queue, &dp.key("rl_queue"), d.rp.rl_queue)?;
        let variant = match d.variant {
            Variant::Paper => {
                for (key, given) in [
                    ("decrease_interval", raw.decrease_interval.is_some()),
                    ("rate_on_first_cnp", raw.rate_on_first_cnp.is_some()),
                ] {
                    if given {
                        return Err(self.err(
                            &dp.key(key),
                            format!("'{key}' applies only with variant = \"mellanox\""),
                        ));
                    }
                }
                Variant::Paper
            }
            Variant::Mellanox {
                decrease_interval,
                rate_on_first_cnp,
            } => Variant::Mellanox {
                decrease_interval: time(
                    &raw.decrease_interval,
                    "decrease_interval",
                    decrease_interval,
                )?,
                rate_on_first_cnp: fraction(
                    raw.rate_on_first_cnp,
                    "rate_on_first_cnp",
                    rate_on_first_cnp,
                    true,
                )?,
            },
        };
        Ok(DcqcnParams {
            variant,
            rp,
            g: fraction(raw.g, "g", d.g, true)?,
            initial_alpha: fraction(raw.alpha, "alpha", d.initial_alpha, false)?,
            alpha_interval: time(&raw.alpha_interval, "alpha_interval", d.alpha_interval)?,
            cnp_interval: match &raw.cnp_interval {
                Some(s) => self.time(s, &dp.key("cnp_interval"))?,
                None => d.cnp_interval,
            },
            cnp_bytes: match &raw.cnp {
                Some(s) => self.frame_size(s, &dp.key("cnp"))?,
                None => d.cnp_bytes,
            },
            cnp_on_ack: raw.cnp_on_ack.unwrap_or(d.cnp_on_ack),
            clamp_target_rate: raw.clamp_target_rate.unwrap_or(d.clamp_target_rate),
        })
    }

    /// A rate limiter's queue: a size of at least one jumbo frame, or
    /// "unlimited"; `default` if not given.
    fn rl_queue(
        &self,
        v: &Option<String>,
        p: &FieldPath,
        default: Bytes,
    ) -> Result<Bytes, ScenarioError> {
        let bytes = match v {
            Some(s) if s == "unlimited" => u64::MAX,
            Some(s) => self.size(s, p)?,
            None => default.0,
        };
        if bytes < FRAME_RANGE.1 {
            return Err(self.err(
                p,
                format!(
                    "expected a rate-limiter queue of at least one jumbo frame ({} B), found {bytes} B",
                    FRAME_RANGE.1
                ),
            ));
        }
        Ok(Bytes(bytes))
    }

    /// One of a fixed set of words; the first is the default.
    fn choice<T: Copy, const N: usize>(
        &self,
        v: &Option<String>,
        p: &FieldPath,
        options: [(&str, T); N],
    ) -> Result<T, ScenarioError> {
        let Some(word) = v.as_deref() else {
            return Ok(options[0].1);
        };
        if let Some((_, t)) = options.iter().find(|(w, _)| *w == word) {
            return Ok(*t);
        }
        let words: Vec<String> = options.iter().map(|(w, _)| format!("\"{w}\"")).collect();
        Err(self.err(
            p,
            format!("expected {}, found \"{word}\"", words.join(" or ")),
        ))
    }

    fn gain(&self, v: Option<f64>, default: f64, p: &FieldPath) -> Result<f64, ScenarioError> {
        let v = v.unwrap_or(default);
        if !(v.is_finite() && v >= 0.0) {
            return Err(self.err(p, format!("expected a finite number >= 0, found {v}")));
        }
        Ok(v)
    }

    fn opt_rate(&self, s: &Option<String>, p: &FieldPath) -> Result<Option<Rate>, ScenarioError> {
        s.as_ref().map(|s| self.rate(s, p)).transpose()
    }
}
