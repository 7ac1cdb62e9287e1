//! The traffic-class sections: `[priorities]` (classes and scheduling on
//! every port, the classes of ACKs and notifications) and a switch's
//! `[switch.pfc]` (802.1Qbb priority-based flow control).

use super::build::Builder;
use super::error::{FieldPath, ScenarioError};
use super::schema::{EcnRuleKind, RawEcn, RawPfc, RawPriorities, SchedulerKind};
use super::spec::PrioritySpec;
use crate::flowctl::pfc::{PfcSpec, PFC_CLASSES};
use crate::net::ecn::{EcnRule, EcnSpec, MarkAt, SwitchEcn};
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

    /// A switch's `ecn` table at `ep`.
    pub(super) fn ecn(&self, raw: &RawEcn, ep: &FieldPath) -> Result<SwitchEcn, ScenarioError> {
        let rule = raw
            .rule
            .ok_or_else(|| self.err(ep, "missing field 'rule' (\"red\" or \"step\")"))?;
        let size = |v: &Option<String>, key: &str| -> Result<Bytes, ScenarioError> {
            let s = v.as_ref().ok_or_else(|| {
                self.err(
                    ep,
                    format!("missing field '{key}' (required with this rule)"),
                )
            })?;
            Ok(Bytes(self.size(s, &ep.key(key))?))
        };
        let not_with = |given: bool, key: &str| {
            if given {
                Err(self.err(&ep.key(key), "not a parameter of this rule"))
            } else {
                Ok(())
            }
        };
        let rule = match rule {
            EcnRuleKind::Red => {
                not_with(raw.k.is_some(), "k")?;
                let (kmin, kmax) = (size(&raw.kmin, "kmin")?, size(&raw.kmax, "kmax")?);
                let pmax = raw.pmax.ok_or_else(|| {
                    self.err(ep, "missing field 'pmax' (required with rule = \"red\")")
                })?;
                if !(pmax > 0.0 && pmax <= 1.0) {
                    return Err(self.err(
                        &ep.key("pmax"),
                        format!("expected a probability in (0, 1], found {pmax}"),
                    ));
                }
                if kmin > kmax {
                    return Err(self.err(
                        &ep.key("kmax"),
                        format!("expected kmax at least kmin ({kmin}), found {kmax}"),
                    ));
                }
                EcnRule::Red { kmin, kmax, pmax }
            }
            EcnRuleKind::Step => {
                for (given, key) in [
                    (raw.kmin.is_some(), "kmin"),
                    (raw.kmax.is_some(), "kmax"),
                    (raw.pmax.is_some(), "pmax"),
                ] {
                    not_with(given, key)?;
                }
                EcnRule::Step {
                    k: size(&raw.k, "k")?,
                }
            }
        };
        let classes = match &raw.classes {
            None => u8::MAX,
            Some(list) => self.class_mask(list, &ep.key("classes"))?,
        };
        Ok(SwitchEcn {
            spec: EcnSpec {
                rule,
                at: raw.at.unwrap_or(MarkAt::Enqueue),
            },
            classes,
        })
    }

    /// A list of classes as a mask; each below 8 and the list not empty.
    fn class_mask(&self, list: &[u8], path: &FieldPath) -> Result<u8, ScenarioError> {
        if list.is_empty() {
            return Err(self.err(path, "expected at least one class, found none"));
        }
        let mut mask = 0u8;
        for (i, &c) in list.iter().enumerate() {
            if c as usize >= PFC_CLASSES {
                return Err(self.err(
                    &path.index(i),
                    format!("expected a class from 0 to {}, found {c}", PFC_CLASSES - 1),
                ));
            }
            mask |= 1 << c;
        }
        Ok(mask)
    }

    /// A switch's `pfc` table at `pp`.
    pub(super) fn pfc(&self, raw: &RawPfc, pp: &FieldPath) -> Result<PfcSpec, ScenarioError> {
        let list = raw.classes.as_ref().ok_or_else(|| {
            self.err(
                pp,
                "missing field 'classes' (the lossless classes, e.g. classes = [3])",
            )
        })?;
        let classes = self.class_mask(list, &pp.key("classes"))?;
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
