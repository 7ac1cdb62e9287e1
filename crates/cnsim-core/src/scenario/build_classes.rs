//! The traffic-class sections: `[priorities]` (classes and scheduling on
//! every port, the classes of ACKs and notifications) and a switch's
//! `[switch.pfc]` (802.1Qbb priority-based flow control).

use super::build::Builder;
use super::error::{FieldPath, ScenarioError};
use super::schema::{RawPfc, RawPriorities, SchedulerKind};
use super::spec::PrioritySpec;
use crate::flowctl::pfc::{PfcSpec, PFC_CLASSES};
use crate::net::sched::{ClassSched, SchedSpec};
use crate::units::Bytes;

impl Builder<'_> {
    /// `[priorities]`. `largest_frame` (bytes) sets DWRR's quantum per
    /// unit of weight, so that every visit can send a frame.
    pub(super) fn priorities(
        &self,
        raw: &RawPriorities,
        largest_frame: u64,
    ) -> Result<PrioritySpec, ScenarioError> {
        let pp = FieldPath::root().key("priorities");
        let classes = raw.classes.unwrap_or(PFC_CLASSES as u8);
        if !(1..=PFC_CLASSES as u8).contains(&classes) {
            return Err(self.err(
                &pp.key("classes"),
                format!("expected 1 to {PFC_CLASSES} classes, found {classes}"),
            ));
        }
        let class_in_range = |c: u8, path: FieldPath| {
            if c < classes {
                Ok(c)
            } else {
                Err(self.err(
                    &path,
                    format!("expected a class from 0 to {}, found {c}", classes - 1),
                ))
            }
        };
        let scheduler = raw.scheduler.unwrap_or(SchedulerKind::Strict);
        let mut sched = SchedSpec::strict();
        match scheduler {
            SchedulerKind::Strict => {
                for key in ["weights", "strict"] {
                    let given = match key {
                        "weights" => raw.weights.is_some(),
                        _ => raw.strict.is_some(),
                    };
                    if given {
                        return Err(self.err(
                            &pp.key(key),
                            "only with scheduler = \"dwrr\" (strict priority has no weights)",
                        ));
                    }
                }
            }
            SchedulerKind::Dwrr => {
                let weights = raw.weights.as_ref().ok_or_else(|| {
                    self.err(&pp, "missing field 'weights' (one per class, required with scheduler = \"dwrr\")")
                })?;
                if weights.len() != classes as usize {
                    return Err(self.err(
                        &pp.key("weights"),
                        format!(
                            "expected one weight per class ({classes}), found {}",
                            weights.len()
                        ),
                    ));
                }
                let strict: Vec<u8> = match &raw.strict {
                    None => Vec::new(),
                    Some(list) => list
                        .iter()
                        .enumerate()
                        .map(|(i, &c)| class_in_range(c, pp.key("strict").index(i)))
                        .collect::<Result<_, _>>()?,
                };
                for (c, &w) in weights.iter().enumerate() {
                    let c8 = c as u8;
                    sched.classes[c] = if strict.contains(&c8) {
                        ClassSched::Strict
                    } else if w == 0 {
                        return Err(self.err(
                            &pp.key("weights").index(c),
                            "expected a weight of at least 1, found 0 (a class with weight 0 never sends)",
                        ));
                    } else {
                        ClassSched::Weighted(Bytes(w.saturating_mul(largest_frame)))
                    };
                }
            }
        }
        let acks = raw
            .acks
            .map(|c| class_in_range(c, pp.key("acks")))
            .transpose()?;
        let notifications = raw
            .notifications
            .map(|c| class_in_range(c, pp.key("notifications")))
            .transpose()?;
        Ok(PrioritySpec {
            classes,
            sched,
            acks,
            notifications,
        })
    }

    /// A switch's `pfc` table at `pp`.
    pub(super) fn pfc(&self, raw: &RawPfc, pp: &FieldPath) -> Result<PfcSpec, ScenarioError> {
        let list = raw.classes.as_ref().ok_or_else(|| {
            self.err(
                pp,
                "missing field 'classes' (the lossless classes, e.g. classes = [3])",
            )
        })?;
        if list.is_empty() {
            return Err(self.err(
                &pp.key("classes"),
                "expected at least one lossless class, found none",
            ));
        }
        let mut classes = 0u8;
        for (i, &c) in list.iter().enumerate() {
            if c as usize >= PFC_CLASSES {
                return Err(self.err(
                    &pp.key("classes").index(i),
                    format!("expected a class from 0 to {}, found {c}", PFC_CLASSES - 1),
                ));
            }
            classes |= 1 << c;
        }
        let xoff = raw
            .xoff
            .as_ref()
            .ok_or_else(|| self.err(pp, "missing field 'xoff' (required with PFC)"))?;
        let xon = raw
            .xon
            .as_ref()
            .ok_or_else(|| self.err(pp, "missing field 'xon' (required with PFC)"))?;
        let xoff = self.size(xoff, &pp.key("xoff"))?;
        let xon = self.size(xon, &pp.key("xon"))?;
        if xon >= xoff {
            return Err(self.err(
                &pp.key("xon"),
                format!("expected XON below XOFF ({xoff} B), found {xon} B"),
            ));
        }
        Ok(PfcSpec {
            classes,
            xoff,
            xon,
            refresh: raw.refresh.unwrap_or(true),
        })
    }
}
