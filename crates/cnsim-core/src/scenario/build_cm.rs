//! The `[bcn]` section: congestion-notification parameters with the CN-SIM
//! baseline (study E) as defaults.

use super::build::{Builder, FRAME_RANGE};
use super::error::{FieldPath, ScenarioError};
use super::schema::{RawBcn, RawBcnStop, RawDrift};
use crate::cm::bcn::{BcnParams, DriftParams, Sampling, StopParams, PAGE_BYTES};
use crate::units::{Rate, Time};

impl Builder<'_> {
    pub(super) fn bcn(&self, raw: &RawBcn) -> Result<BcnParams, ScenarioError> {
        let bp = FieldPath::root().key("bcn");
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
        let gi = self.gain(raw.gi, 0.53, &bp.key("gi"))?;
        let gd = self.gain(raw.gd, 2.6e-4, &bp.key("gd"))?;
        let rate_unit = self
            .opt_rate(&raw.rate_unit, &bp.key("rate_unit"))?
            .unwrap_or(Rate::mbps(1));
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
                Sampling::Interval { mean, jitter }
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
        let rl_queue = match &raw.rl_queue {
            Some(s) => self.size(s, &bp.key("rl_queue"))?,
            None => 150 * self.kilobyte(),
        };
        if rl_queue < FRAME_RANGE.1 {
            return Err(self.err(
                &bp.key("rl_queue"),
                format!(
                    "expected a rate-limiter queue of at least one jumbo frame ({} B), found {rl_queue} B",
                    FRAME_RANGE.1
                ),
            ));
        }
        let message_bytes = match &raw.message {
            Some(s) => {
                let b = self.size(s, &bp.key("message"))?;
                if !(FRAME_RANGE.0..=FRAME_RANGE.1).contains(&b) {
                    return Err(self.err(
                        &bp.key("message"),
                        format!(
                            "expected a frame size from {} B to {} B, found {b} B",
                            FRAME_RANGE.0, FRAME_RANGE.1
                        ),
                    ));
                }
                b as u32
            }
            None => 64,
        };
        let bcn_max = match &raw.bcn_max {
            Some(s) => Some(self.size(s, &bp.key("bcn_max"))?),
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

    fn bcn_stop(&self, s: &RawBcnStop, p: &FieldPath) -> Result<StopParams, ScenarioError> {
        let threshold = self.size(&s.threshold, &p.key("threshold"))?;
        if threshold == 0 {
            return Err(self.err(
                &p.key("threshold"),
                "expected a threshold above zero, found 0 B",
            ));
        }
        Ok(StopParams {
            threshold,
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
