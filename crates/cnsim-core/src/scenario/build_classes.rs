//! The traffic-class sections: `[priorities]` (classes and scheduling on
//! every port, the classes of ACKs and notifications) and a switch's
//! `[switch.pfc]` (802.1Qbb priority-based flow control).

use super::build::pick;
use super::build::Builder;
use super::entry::Entry;
use super::error::{FieldPath, ScenarioError};
use super::schema::RawSwitch;
use super::schema::{
    EcnRuleKind, RawEcn, RawEcnRate, RawMmu, RawPfc, RawPriorities, SchedulerKind,
};
use super::spec::PrioritySpec;
use super::spec::SourceSpec;
use crate::flowctl::headroom::HeadroomTerms;
use crate::flowctl::pfc::{PfcSpec, PFC_CLASSES};
use crate::net::ecn::{EcnRule, EcnSpec, MarkAt, SwitchEcn};
use crate::net::mmu::{Alpha, SharedBufferSpec, Threshold};
use crate::net::sched::{ClassSched, SchedSpec, MAX_QUANTUM};
use crate::net::topology::{BufferModel, LinkSpec, NodeKind, NodeSpec, PortSched};
use crate::units::Time;
use crate::units::{Bytes, Rate};

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
        let sched = self.sched(
            raw.scheduler,
            raw.weights.as_deref(),
            raw.strict.as_deref(),
            classes,
            largest_frame,
            &pp,
        )?;
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
        let kind = raw
            .rule
            .ok_or_else(|| self.err(ep, "missing field 'rule' (\"red\" or \"step\")"))?;
        let params = RawEcnRate {
            rate: None,
            kmin: raw.kmin.clone(),
            kmax: raw.kmax.clone(),
            pmax: raw.pmax,
            k: raw.k.clone(),
        };
        let rule = self.ecn_rule(kind, &params, ep)?;
        let mut by_rate: Vec<(Rate, EcnRule)> = Vec::new();
        for (i, r) in raw.rates.iter().flatten().enumerate() {
            let rp = ep.key("rates").index(i);
            let rate = r.rate.as_ref().ok_or_else(|| {
                self.err(
                    &rp,
                    "missing field 'rate' (the link rate these parameters are for)",
                )
            })?;
            let rate = self.rate(rate, &rp.key("rate"))?;
            if by_rate.iter().any(|(r, _)| *r == rate) {
                return Err(self.err(&rp.key("rate"), format!("{rate} is listed twice")));
            }
            by_rate.push((rate, self.ecn_rule(kind, r, &rp)?));
        }
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
            by_rate,
        })
    }

    /// The parameters of a marking rule of kind `kind`, at `ep` (the ecn
    /// table or one of its `rates`).
    fn ecn_rule(
        &self,
        kind: EcnRuleKind,
        raw: &RawEcnRate,
        ep: &FieldPath,
    ) -> Result<EcnRule, ScenarioError> {
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
        Ok(match kind {
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
        })
    }

    /// A scheduler of `classes` classes from its kind, weights and strict
    /// classes, with its fields at `pp` (`[priorities]` or one of a
    /// switch's `schedulers`). DWRR's quantum per unit of weight is the
    /// largest frame, so that every visit can send a frame.
    fn sched(
        &self,
        kind: Option<SchedulerKind>,
        weights: Option<&[u64]>,
        strict: Option<&[u8]>,
        classes: u8,
        largest_frame: u64,
        pp: &FieldPath,
    ) -> Result<SchedSpec, ScenarioError> {
        let mut sched = SchedSpec::strict();
        match kind.unwrap_or(SchedulerKind::Strict) {
            SchedulerKind::Strict => {
                for (given, key) in [(weights.is_some(), "weights"), (strict.is_some(), "strict")] {
                    if given {
                        return Err(self.err(
                            &pp.key(key),
                            "only with scheduler = \"dwrr\" (strict priority has no weights)",
                        ));
                    }
                }
            }
            SchedulerKind::Dwrr => {
                let weights = weights.ok_or_else(|| {
                    self.err(pp, "missing field 'weights' (one per class, required with scheduler = \"dwrr\")")
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
                let strict = strict.unwrap_or_default();
                for (i, &c) in strict.iter().enumerate() {
                    if c >= classes {
                        return Err(self.err(
                            &pp.key("strict").index(i),
                            format!("expected a class from 0 to {}, found {c}", classes - 1),
                        ));
                    }
                }
                for (c, &w) in weights.iter().enumerate() {
                    sched.classes[c] = if strict.contains(&(c as u8)) {
                        ClassSched::Strict
                    } else if w == 0 {
                        return Err(self.err(
                            &pp.key("weights").index(c),
                            "expected a weight of at least 1, found 0 (a class with weight 0 never sends)",
                        ));
                    } else if w.saturating_mul(largest_frame) > MAX_QUANTUM {
                        return Err(self.err(
                            &pp.key("weights").index(c),
                            format!(
                                "expected a weight of at most {} (a quantum of weight x the largest frame, {largest_frame} B, up to {MAX_QUANTUM} B), found {w}",
                                MAX_QUANTUM / largest_frame
                            ),
                        ));
                    } else {
                        ClassSched::Weighted(Bytes(w * largest_frame))
                    };
                }
            }
        }
        Ok(sched)
    }

    /// Each switch's `schedulers`, resolved against its links (`ports`
    /// name neighbours) once the number of classes is known; a port named
    /// twice is an error.
    pub(super) fn port_schedulers(
        &self,
        nodes: &mut [NodeSpec],
        links: &[LinkSpec],
        switches: &[Entry<RawSwitch>],
        classes: u8,
        largest_frame: u64,
    ) -> Result<(), ScenarioError> {
        for (n, Entry { path: p, raw: sw }) in switches.iter().enumerate() {
            let Some(raw) = &sw.schedulers else { continue };
            let neighbours: Vec<usize> = crate::net::topology::neighbours(links, n).collect();
            let mut named: Vec<usize> = Vec::new();
            let mut out = Vec::with_capacity(raw.len());
            for (k, r) in raw.iter().enumerate() {
                let sp = p.key("schedulers").index(k);
                let sched = self.sched(
                    r.scheduler,
                    r.weights.as_deref(),
                    r.strict.as_deref(),
                    classes,
                    largest_frame,
                    &sp,
                )?;
                if r.ports.as_ref().is_some_and(|l| l.is_empty()) {
                    return Err(self.err(
                        &sp.key("ports"),
                        "expected at least one neighbour, found none (leave 'ports' out for every port)",
                    ));
                }
                let mut peers = Vec::new();
                for (j, name) in r.ports.iter().flatten().enumerate() {
                    let pp = sp.key("ports").index(j);
                    let Some(&peer) = neighbours.iter().find(|&&v| nodes[v].name == *name) else {
                        let linked: Vec<&str> =
                            neighbours.iter().map(|&v| nodes[v].name.as_str()).collect();
                        return Err(self.err(
                            &pp,
                            format!(
                                "expected a node linked to '{}' ({}), found '{name}'",
                                nodes[n].name,
                                linked.join(", ")
                            ),
                        ));
                    };
                    if named.contains(&peer) {
                        return Err(self.err(
                            &pp,
                            format!("the port toward '{name}' has a scheduler already"),
                        ));
                    }
                    named.push(peer);
                    peers.push(peer);
                }
                if r.ports.is_none() && k + 1 != raw.len() {
                    return Err(self.err(
                        &sp,
                        "a scheduler without 'ports' applies to every other port: make it the last",
                    ));
                }
                out.push(PortSched { peers, sched });
            }
            let NodeKind::Switch(spec) = &mut nodes[n].kind else {
                unreachable!("switches come first among the nodes")
            };
            spec.schedulers = out;
        }
        Ok(())
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

    /// A switch's `pfc` table at `pp`; `shared`: the switch has a shared
    /// buffer, whose MMU decides when no thresholds are given.
    pub(super) fn pfc(
        &self,
        raw: &RawPfc,
        pp: &FieldPath,
        shared: bool,
    ) -> Result<PfcSpec, ScenarioError> {
        let list = raw.classes.as_ref().ok_or_else(|| {
            self.err(
                pp,
                "missing field 'classes' (the lossless classes, e.g. classes = [3])",
            )
        })?;
        let classes = self.class_mask(list, &pp.key("classes"))?;
        let thresholds = match (&raw.xoff, &raw.xon) {
            (Some(xoff), Some(xon)) => {
                let xoff = self.size(xoff, &pp.key("xoff"))?;
                let xon = self.size(xon, &pp.key("xon"))?;
                if xon >= xoff {
                    return Err(self.err(
                        &pp.key("xon"),
                        format!("expected XON below XOFF ({xoff} B), found {xon} B"),
                    ));
                }
                Some((xoff, xon))
            }
            (None, None) if shared => None,
            (None, None) => {
                return Err(self.err(
                    pp,
                    "missing field 'xoff' (required with PFC unless buffer_model = \"shared\")",
                ))
            }
            (None, Some(_)) => return Err(self.err(pp, "missing field 'xoff' (given 'xon')")),
            (Some(_), None) => return Err(self.err(pp, "missing field 'xon' (given 'xoff')")),
        };
        Ok(PfcSpec {
            classes,
            thresholds,
            refresh: raw.refresh.unwrap_or(true),
        })
    }

    /// Each shared-buffer switch's `mmu` settings and the headroom of each
    /// of its ports: the rule's value (`flowctl::headroom`) for the port's
    /// link, the upstream's response time plus this switch's latency (it
    /// admits a frame that much after its last bit) and the largest frame;
    /// a given headroom below that is refused with the terms.
    pub(super) fn shared_buffers(
        &self,
        nodes: &mut [NodeSpec],
        links: &[LinkSpec],
        sources: &[SourceSpec],
        switches: &[Entry<RawSwitch>],
        defaults: Option<&RawSwitch>,
        classes_in_use: u8,
    ) -> Result<(), ScenarioError> {
        let dp = FieldPath::root().key("defaults").key("switch");
        let largest = sources.iter().map(|s| s.frame).max().unwrap_or(1500);
        let responses: Vec<Time> = nodes.iter().map(|n| n.response_time()).collect();
        for (n, Entry { path: p, raw: sw }) in switches.iter().enumerate() {
            let NodeKind::Switch(spec) = &nodes[n].kind else {
                unreachable!("switches come first among the nodes")
            };
            let BufferModel::Shared { bytes } = spec.buffer else {
                continue;
            };
            let picked = pick(
                &sw.mmu,
                p.key("mmu"),
                defaults.map(|d| &d.mmu),
                dp.key("mmu"),
            );
            let (raw, mp) = match picked {
                Some((raw, mp)) => (raw.clone(), mp),
                None => (RawMmu::default(), p.key("mmu")),
            };
            let mut shared = self.mmu(&raw, &mp, bytes, spec.pfc.as_ref(), largest as u64)?;
            let given = match &raw.headroom {
                None => None,
                Some(h) if h == "auto" => None,
                Some(h) => Some(self.size(h, &mp.key("headroom"))?),
            };
            for l in links.iter().filter(|l| l.a == n || l.b == n) {
                let peer = if l.a == n { l.b } else { l.a };
                let response = responses[peer] + spec.latency;
                let terms =
                    HeadroomTerms::new(l.rate, l.delay, response, largest).after_admission();
                shared.headroom.push(match given {
                    None => terms.total(),
                    Some(h) => {
                        terms.check(Bytes(h)).map_err(|short| {
                            self.err(
                                &mp.key("headroom"),
                                format!("{short} (the port toward '{}')", nodes[peer].name),
                            )
                        })?;
                        Bytes(h)
                    }
                });
            }
            let lossless = spec.pfc.map_or(0, |p| p.classes);
            shared
                .mmu_spec(lossless, classes_in_use)
                .shared_pool()
                .map_err(|e| {
                    let path = if sw.buffer.is_some() {
                        p.key("buffer")
                    } else {
                        dp.key("buffer")
                    };
                    self.err(&path, format!("the shared buffer cannot be laid out: {e}"))
                })?;
            let NodeKind::Switch(spec) = &mut nodes[n].kind else {
                unreachable!()
            };
            spec.shared = Some(shared);
        }
        Ok(())
    }

    /// A fraction `alpha` (a dynamic threshold's factor) at `path`, as the
    /// exact fraction num / 2^16 the MMU computes with.
    fn alpha(&self, alpha: f64, path: &FieldPath) -> Result<Alpha, ScenarioError> {
        const DEN: u32 = 1 << 16;
        let num = alpha * DEN as f64;
        if !(alpha > 0.0 && alpha <= 64.0) || num.fract() != 0.0 {
            return Err(self.err(
                path,
                format!(
                    "expected a factor in (0, 64] in steps of 1/65536 (e.g. 0.125), found {alpha}"
                ),
            ));
        }
        Ok(Alpha::new(num as u32, DEN))
    }

    /// A shared-buffer switch's `mmu` table at `mp` (without headroom,
    /// which `shared_buffers` resolves once the links are known).
    /// `largest_frame` sets the defaults of the reserve and resume offset.
    pub(super) fn mmu(
        &self,
        raw: &RawMmu,
        mp: &FieldPath,
        total: u64,
        pfc: Option<&PfcSpec>,
        largest_frame: u64,
    ) -> Result<SharedBufferSpec, ScenarioError> {
        let size_or = |v: &Option<String>, key: &str, default: u64| match v {
            Some(s) => self.size(s, &mp.key(key)),
            None => Ok(default),
        };
        let reserve = size_or(&raw.reserve, "reserve", largest_frame)?;
        let alpha = self.alpha(raw.alpha.unwrap_or(0.125), &mp.key("alpha"))?;
        let lossy = self.alpha(raw.lossy_alpha.unwrap_or(1.0), &mp.key("lossy_alpha"))?;
        let (lossless_xoff, resume_offset) = match pfc.and_then(|p| p.thresholds) {
            Some((xoff, xon)) => {
                if raw.alpha.is_some() || raw.resume_offset.is_some() {
                    let key = if raw.alpha.is_some() {
                        "alpha"
                    } else {
                        "resume_offset"
                    };
                    return Err(self.err(
                        &mp.key(key),
                        "the switch's pfc table gives static xoff and xon: remove them to use a dynamic threshold",
                    ));
                }
                (Threshold::Static(Bytes(xoff)), Bytes(xoff - xon))
            }
            None => (
                Threshold::Dynamic(alpha),
                Bytes(size_or(
                    &raw.resume_offset,
                    "resume_offset",
                    2 * largest_frame,
                )?),
            ),
        };
        Ok(SharedBufferSpec {
            total: Bytes(total),
            reserve: Bytes(reserve),
            lossless_xoff,
            resume_offset,
            lossy_egress: Threshold::Dynamic(lossy),
            headroom: Vec::new(),
        })
    }
}
