//! The `[[sources]]` section: each source's hosts, destinations, traffic
//! process and transport, and the uniqueness of flow names.

use super::build::{link_rate_of, pick, Builder, DEFAULT_FRAME, MAX_FLOWS};
use super::entry::Entry;
use super::error::{unknown_name, FieldPath, ScenarioError};
use super::names;
use super::schema::*;
use super::spec::*;
use crate::units::Time;
use std::collections::{hash_map, HashMap};

impl Builder<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn sources(
        &self,
        raw: &[Entry<RawSource>],
        defaults: &RawDefaults,
        nodes: &[NodeSpec],
        by_name: &HashMap<String, (usize, FieldPath)>,
        links: &[LinkSpec],
        duration: Time,
    ) -> Result<Vec<SourceSpec>, ScenarioError> {
        let dp = FieldPath::root().key("defaults").key("source");
        let d = defaults.source.as_ref();
        let hosts: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].is_host()).collect();
        let mut names: HashMap<String, &FieldPath> = HashMap::new();
        let mut out = Vec::with_capacity(raw.len());
        let mut flows: u64 = 0;
        for Entry { path: p, raw: s } in raw {
            let host_name = s
                .host
                .as_ref()
                .ok_or_else(|| self.err(p, "missing field 'host' (required)"))?;
            let host = self.host_index(host_name, &p.key("host"), nodes, by_name)?;
            let to = s.to.as_ref().ok_or_else(|| {
                self.err(
                    p,
                    "missing field 'to' (required: a host, a list of hosts or \"*\")",
                )
            })?;
            let dsts: Vec<usize> = match to {
                Destinations::One(n) if n == "*" => {
                    // Checked before the list is made: "*" on a large
                    // fabric is hosts² flows.
                    let adds = hosts.len().saturating_sub(1) as u64;
                    if flows + adds > MAX_FLOWS {
                        return Err(self.err(
                            &p.key("to"),
                            format!(
                                "expected at most {MAX_FLOWS} flows in the scenario, found more (\"*\" adds {adds} to {flows})"
                            ),
                        ));
                    }
                    hosts.iter().copied().filter(|&h| h != host).collect()
                }
                Destinations::One(n) => vec![self.host_index(n, &p.key("to"), nodes, by_name)?],
                Destinations::Many(list) => {
                    let mut v = Vec::with_capacity(list.len());
                    for (k, n) in list.iter().enumerate() {
                        let idx = self.host_index(n, &p.key("to").index(k), nodes, by_name)?;
                        if v.contains(&idx) {
                            return Err(self.err(
                                &p.key("to").index(k),
                                format!("duplicate destination '{n}'"),
                            ));
                        }
                        v.push(idx);
                    }
                    v
                }
            };
            if dsts.is_empty() {
                return Err(self.err(
                    &p.key("to"),
                    "expected at least one destination host, found none",
                ));
            }
            flows += dsts.len() as u64;
            if let Some(k) = dsts.iter().position(|&x| x == host) {
                let fp = if matches!(to, Destinations::Many(_)) {
                    p.key("to").index(k)
                } else {
                    p.key("to")
                };
                return Err(self.err(
                    &fp,
                    format!("a source cannot send to its own host '{host_name}'"),
                ));
            }
            let kind = pick(&s.kind, p.key("kind"), d.map(|d| &d.kind), dp.key("kind"))
                .map(|(k, _)| *k)
                .unwrap_or(SourceKind::Bernoulli);
            let transport = pick(
                &s.transport,
                p.key("transport"),
                d.map(|d| &d.transport),
                dp.key("transport"),
            )
            .map(|(t, _)| *t)
            .unwrap_or_default();
            let frame = match pick(
                &s.frame,
                p.key("frame"),
                d.map(|d| &d.frame),
                dp.key("frame"),
            ) {
                None => DEFAULT_FRAME as u64,
                Some((f, fp)) => self.frame_size(f, &fp)? as u64,
            };
            let transaction = match (
                kind,
                pick(
                    &s.transaction,
                    p.key("transaction"),
                    d.map(|d| &d.transaction),
                    dp.key("transaction"),
                ),
            ) {
                (SourceKind::Transactions, None) => {
                    return Err(self.err(
                        p,
                        "missing field 'transaction' (required for kind = \"transactions\")",
                    ))
                }
                (SourceKind::Transactions, Some((t, tp))) => {
                    let b = self.size(t, &tp)?;
                    if b == 0 {
                        return Err(
                            self.err(&tp, "expected a transaction size above zero, found 0")
                        );
                    }
                    b
                }
                (SourceKind::Bernoulli, None) => 0,
                (SourceKind::Bernoulli, Some((_, tp))) => {
                    return Err(
                        self.err(&tp, "'transaction' applies only to kind = \"transactions\"")
                    )
                }
            };
            if let NodeKind::Host(HostSpec {
                egress: Some(cap), ..
            }) = &nodes[host].kind
            {
                let largest = if transaction > 0 {
                    frame.min(transaction)
                } else {
                    frame
                };
                if largest > *cap {
                    let fp = if s.frame.is_some() {
                        p.key("frame")
                    } else {
                        p.clone()
                    };
                    return Err(self.err(
                        &fp,
                        format!("a {largest} B frame does not fit the egress buffer of host '{host_name}' ({cap} B)"),
                    ));
                }
            }
            let line = link_rate_of(host, links);
            let load_src = pick(&s.load, p.key("load"), d.map(|d| &d.load), dp.key("load"));
            let rate_src = pick(&s.rate, p.key("rate"), d.map(|d| &d.rate), dp.key("rate"));
            let load = match (load_src, rate_src) {
                (Some((l, lp)), None) => {
                    if !(l.is_finite() && *l > 0.0 && *l <= 1.0) {
                        return Err(self.err(&lp, format!("expected a load in (0, 1] (fraction of the host's link rate), found {l}")));
                    }
                    *l
                }
                (None, Some((r, rp))) => {
                    let r = self.rate(r, &rp)?;
                    if r > line {
                        return Err(self.err(
                            &rp,
                            format!(
                                "expected a rate at most the host's link rate {line}, found {r}"
                            ),
                        ));
                    }
                    r.0 as f64 / line.0 as f64
                }
                (Some((_, lp)), Some(_)) => {
                    return Err(self.err(&lp, "give either 'load' or 'rate', not both"))
                }
                (None, None) => {
                    return Err(self.err(p, "missing field 'load' or 'rate' (one is required)"))
                }
            };
            let start_src = pick(
                &s.start,
                p.key("start"),
                d.map(|d| &d.start),
                dp.key("start"),
            );
            let start_path = start_src.as_ref().map(|(_, sp)| sp.clone());
            let start = self.opt_time(start_src)?.unwrap_or(Time::ZERO);
            let stop_src = pick(&s.stop, p.key("stop"), d.map(|d| &d.stop), dp.key("stop"));
            let stop_path = stop_src
                .as_ref()
                .map(|(_, p)| p.clone())
                .unwrap_or_else(|| p.clone());
            let stop_given = stop_src.is_some();
            let stop = self.opt_time(stop_src)?.unwrap_or(duration);
            // A source that would produce nothing in the run is a mistake
            // (see decisions.md); the default start (0) is always inside.
            if start >= duration && !(stop_given && stop <= start) {
                return Err(self.err(
                    &start_path.expect("a start was given"),
                    format!("expected a start before the end of the run (duration {duration}), found {start}"),
                ));
            }
            if stop <= start {
                return Err(self.err(
                    &stop_path,
                    format!("expected stop after start ({start}), found {stop}"),
                ));
            }
            let slot_offset = match pick(
                &s.slot_offset,
                p.key("slot_offset"),
                d.map(|d| &d.slot_offset),
                dp.key("slot_offset"),
            ) {
                None => None,
                Some((ph, _)) if ph == "random" => None,
                Some((ph, pp)) => Some(self.time(ph, &pp).map_err(|e| ScenarioError {
                    message: format!("{} or \"random\"", e.message),
                    ..e
                })?),
            };
            let priority = match pick(
                &s.priority,
                p.key("priority"),
                d.map(|d| &d.priority),
                dp.key("priority"),
            ) {
                None => 0,
                Some((&c, cp)) if c as usize >= crate::flowctl::pfc::PFC_CLASSES => {
                    return Err(self.err(&cp, format!("expected a class from 0 to 7, found {c}")))
                }
                Some((&c, _)) => c,
            };
            let ecn = pick(&s.ecn, p.key("ecn"), d.map(|d| &d.ecn), dp.key("ecn"))
                .is_some_and(|(v, _)| *v);
            let single = (dsts.len() == 1).then(|| nodes[dsts[0]].name.as_str());
            let name = match &s.name {
                Some(n) => {
                    names::check(n).map_err(|m| self.err(&p.key("name"), m))?;
                    n.clone()
                }
                None => names::default_source_name(host_name, single),
            };
            if let Some(first) = names.insert(name.clone(), p) {
                let np = if s.name.is_some() {
                    p.key("name")
                } else {
                    p.clone()
                };
                return Err(self.err(
                    &np,
                    format!(
                        "duplicate source name '{name}' (first is {}); give each source a 'name'",
                        first.describe()
                    ),
                ));
            }
            out.push(SourceSpec {
                name,
                kind,
                transport,
                host,
                dsts,
                load,
                frame: frame as u32,
                transaction,
                start,
                stop,
                slot_offset,
                priority,
                ecn,
            });
        }
        Ok(out)
    }

    pub(super) fn host_index(
        &self,
        n: &str,
        p: &FieldPath,
        nodes: &[NodeSpec],
        by_name: &HashMap<String, (usize, FieldPath)>,
    ) -> Result<usize, ScenarioError> {
        match by_name.get(n) {
            Some((i, _)) if nodes[*i].is_host() => Ok(*i),
            Some(_) => Err(self.err(p, format!("expected a host, found switch '{n}'"))),
            None => Err(self.err(
                p,
                unknown_name(
                    "host",
                    n,
                    by_name
                        .iter()
                        .filter(|(_, (i, _))| nodes[*i].is_host())
                        .map(|(k, _)| k),
                ),
            )),
        }
    }

    /// Flow names are unique: a source with several destinations names its
    /// flows "SOURCE->DST", which may be another source's name (a source on A
    /// sending to B and C makes "A->B", as does an unnamed source on A to B).
    /// Results are joined by flow name, so a clash would mix two flows.
    pub(super) fn check_flow_names(
        &self,
        nodes: &[NodeSpec],
        sources: &[SourceSpec],
        raw: &[Entry<RawSource>],
    ) -> Result<(), ScenarioError> {
        // The path of flow k of source i: its destination, or the source.
        let path = |i: usize, k: usize| {
            let (s, e) = (&sources[i], &raw[i]);
            match (&e.raw.to, &e.raw.name) {
                (Some(Destinations::Many(_)), _) if s.dsts.len() > 1 => e.path.key("to").index(k),
                _ if s.dsts.len() > 1 => e.path.key("to"),
                (_, Some(_)) => e.path.key("name"),
                (_, None) => e.path.clone(),
            }
        };
        // Sized once: a fat tree's all-to-all names a million flows here.
        let flows = sources.iter().map(|s| s.dsts.len()).sum();
        let mut seen: HashMap<String, (usize, usize)> = HashMap::with_capacity(flows);
        for (i, s) in sources.iter().enumerate() {
            for (k, &d) in s.dsts.iter().enumerate() {
                match seen.entry(s.flow_name(&nodes[d].name)) {
                    hash_map::Entry::Vacant(v) => {
                        v.insert((i, k));
                    }
                    hash_map::Entry::Occupied(o) => {
                        let (fi, fk) = *o.get();
                        return Err(self.err(
                            &path(i, k),
                            format!(
                                "duplicate flow name '{}': the flow of {} has it too; name the sources so that their flows differ",
                                o.key(),
                                self.loc.describe_at(&path(fi, fk))
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}
