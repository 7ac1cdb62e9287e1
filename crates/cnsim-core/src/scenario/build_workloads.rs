//! The `[[workloads]]` section: each workload's hosts, flow sizes,
//! arrivals and transport, checked field by field.

use super::build::{Builder, DEFAULT_FRAME, MAX_FLOWS};
use super::error::{FieldPath, ScenarioError};
use super::names;
use super::schema::*;
use super::spec::*;
use crate::net::routing::Reach;
use crate::traffic::cdf::{self, SizeCdf};
use crate::traffic::workload::{
    Arrivals, Destinations as Dests, FlowArrival, IncastEvents, WorkloadSpec,
};
use crate::units::Time;
use std::collections::HashMap;

impl Builder<'_> {
    pub(super) fn workloads(
        &self,
        raw: &[RawWorkload],
        nodes: &[NodeSpec],
        by_name: &HashMap<String, (usize, FieldPath)>,
        links: &[LinkSpec],
        duration: Time,
        origin: &str,
    ) -> Result<Vec<WorkloadSpec>, ScenarioError> {
        let reach = Reach::compute(nodes, links);
        let mut out: Vec<WorkloadSpec> = Vec::with_capacity(raw.len());
        let mut seen: Vec<&str> = Vec::with_capacity(raw.len());
        for (i, w) in raw.iter().enumerate() {
            let p = FieldPath::root().key("workloads").index(i);
            let name = w
                .name
                .as_ref()
                .ok_or_else(|| self.err(&p, "missing field 'name' (required)"))?;
            names::check(name).map_err(|m| self.err(&p.key("name"), m))?;
            if name.contains('#') || name.contains(char::is_whitespace) {
                return Err(self.err(
                    &p.key("name"),
                    format!("expected a name without spaces or '#' (its flows are NAME#K), found '{name}'"),
                ));
            }
            if seen.contains(&name.as_str()) {
                return Err(self.err(&p.key("name"), format!("duplicate workload name '{name}'")));
            }
            seen.push(name);
            if w.enabled == Some(false) {
                continue;
            }
            let transport = match w.transport.unwrap_or(Transport::Roce) {
                Transport::Udp => {
                    return Err(self.err(
                        &p.key("transport"),
                        "expected \"roce\" or \"tcp\" (a workload's flows are connections; RoCE without [dcqcn] sends at line rate), found \"udp\"",
                    ))
                }
                t => t,
            };
            let frame = match &w.frame {
                None => DEFAULT_FRAME,
                Some(f) => self.frame_size(f, &p.key("frame"))?,
            };
            let priority = match w.priority {
                Some(c) if c as usize >= crate::flowctl::pfc::PFC_CLASSES => {
                    return Err(self.err(
                        &p.key("priority"),
                        format!("expected a class from 0 to 7, found {c}"),
                    ))
                }
                c => c.unwrap_or(0),
            };
            let host_list = |key: &str| -> Result<Vec<usize>, ScenarioError> {
                let hp = p.key(key);
                let hosts: Vec<usize> = match &w.hosts {
                    None => (0..nodes.len()).filter(|&n| nodes[n].is_host()).collect(),
                    Some(Destinations::One(s)) if s == "*" => {
                        (0..nodes.len()).filter(|&n| nodes[n].is_host()).collect()
                    }
                    Some(Destinations::One(s)) => vec![self.host_index(s, &hp, nodes, by_name)?],
                    Some(Destinations::Many(list)) => {
                        let mut v = Vec::with_capacity(list.len());
                        for (k, n) in list.iter().enumerate() {
                            let h = self.host_index(n, &hp.index(k), nodes, by_name)?;
                            if v.contains(&h) {
                                return Err(self.err(&hp.index(k), format!("duplicate host '{n}'")));
                            }
                            v.push(h);
                        }
                        v
                    }
                };
                if hosts.len() < 2 {
                    return Err(self.err(
                        &hp,
                        format!(
                            "expected at least two hosts (flows go from one to another), found {}",
                            hosts.len()
                        ),
                    ));
                }
                self.check_reach(&reach, nodes, &hosts, &hp)?;
                Ok(hosts)
            };
            let window = |need_window: bool| -> Result<(Time, Time), ScenarioError> {
                let start = match &w.start {
                    Some(s) => self.time(s, &p.key("start"))?,
                    None => Time::ZERO,
                };
                let stop = match &w.stop {
                    Some(s) => self.time(s, &p.key("stop"))?,
                    None => duration,
                };
                if need_window && start >= duration {
                    return Err(self.err(
                        &p.key("start"),
                        format!("expected a start before the end of the run (duration {duration}), found {start}"),
                    ));
                }
                if need_window && stop <= start {
                    let sp = if w.stop.is_some() {
                        p.key("stop")
                    } else {
                        p.clone()
                    };
                    return Err(self.err(
                        &sp,
                        format!("expected stop after start ({start}), found {stop}"),
                    ));
                }
                Ok((start, stop))
            };
            let load = |key: &str| -> Result<f64, ScenarioError> {
                match w.load {
                    Some(l) if l.is_finite() && l > 0.0 && l <= 1.0 => Ok(l),
                    Some(l) => Err(self.err(
                        &p.key(key),
                        format!("expected a load in (0, 1] (fraction of the link rate), found {l}"),
                    )),
                    None => Err(self.err(&p, format!("missing field '{key}' (required)"))),
                }
            };
            let kind = w.kind.unwrap_or(WorkloadKind::Poisson);
            // Keys that belong to another kind are mistakes, not ignored.
            let foreign: &[(&str, bool)] = match kind {
                WorkloadKind::Poisson => &[
                    ("fan_in", w.fan_in.is_some()),
                    ("bytes", w.bytes.is_some()),
                    ("at", w.at.is_some()),
                    ("flows", w.flows.is_some()),
                ],
                WorkloadKind::Incast => {
                    &[("sizes", w.sizes.is_some()), ("flows", w.flows.is_some())]
                }
                WorkloadKind::List => &[
                    ("hosts", w.hosts.is_some()),
                    ("sizes", w.sizes.is_some()),
                    ("load", w.load.is_some()),
                    ("to", w.to.is_some()),
                    ("start", w.start.is_some()),
                    ("stop", w.stop.is_some()),
                    ("fan_in", w.fan_in.is_some()),
                    ("bytes", w.bytes.is_some()),
                    ("at", w.at.is_some()),
                ],
            };
            if let Some((key, _)) = foreign.iter().find(|(_, set)| *set) {
                let kind_name = match kind {
                    WorkloadKind::Poisson => "poisson",
                    WorkloadKind::Incast => "incast",
                    WorkloadKind::List => "list",
                };
                return Err(self.err(
                    &p.key(key),
                    format!("'{key}' does not apply to kind = \"{kind_name}\""),
                ));
            }
            let arrivals = match kind {
                WorkloadKind::Poisson => {
                    let hosts = host_list("hosts")?;
                    let sizes = self.size_cdf(w.sizes.as_deref(), &p, origin)?;
                    let load = load("load")?;
                    let to = match &w.to {
                        None => Dests::Hosts,
                        Some(Destinations::One(s)) if s == "*" => Dests::Hosts,
                        Some(Destinations::One(s)) if s == "permutation" => Dests::Permutation,
                        Some(Destinations::One(s)) => {
                            Dests::Among(vec![self.host_index(s, &p.key("to"), nodes, by_name)?])
                        }
                        Some(Destinations::Many(list)) => {
                            let mut v = Vec::with_capacity(list.len());
                            for (k, n) in list.iter().enumerate() {
                                v.push(self.host_index(
                                    n,
                                    &p.key("to").index(k),
                                    nodes,
                                    by_name,
                                )?);
                            }
                            Dests::Among(v)
                        }
                    };
                    if let Dests::Among(list) = &to {
                        // Every sender needs a destination other than itself.
                        if let Some(&h) = hosts.iter().find(|&&h| list.iter().all(|&d| d == h)) {
                            return Err(self.err(
                                &p.key("to"),
                                format!("host '{}' has no destination but itself", nodes[h].name),
                            ));
                        }
                        let mut all = hosts.clone();
                        all.extend(list);
                        self.check_reach(&reach, nodes, &all, &p.key("to"))?;
                    }
                    let (start, stop) = window(true)?;
                    Arrivals::Poisson {
                        hosts,
                        sizes,
                        load,
                        to,
                        start,
                        stop,
                    }
                }
                WorkloadKind::Incast => {
                    let hosts = host_list("hosts")?;
                    let to = match &w.to {
                        None => None,
                        Some(Destinations::One(s)) => {
                            let r = self.host_index(s, &p.key("to"), nodes, by_name)?;
                            let mut all = hosts.clone();
                            all.push(r);
                            self.check_reach(&reach, nodes, &all, &p.key("to"))?;
                            Some(r)
                        }
                        Some(Destinations::Many(_)) => {
                            return Err(self.err(&p.key("to"), "expected one receiving host (an incast has one receiver per event), found a list"))
                        }
                    };
                    let fan_in = w
                        .fan_in
                        .ok_or_else(|| self.err(&p, "missing field 'fan_in' (required)"))?;
                    let senders = hosts.iter().filter(|&&h| Some(h) != to).count() as u64
                        - u64::from(to.is_none());
                    if fan_in == 0 || fan_in > senders {
                        return Err(self.err(
                            &p.key("fan_in"),
                            format!("expected 1 to {senders} senders (the hosts other than the receiver), found {fan_in}"),
                        ));
                    }
                    let bytes = match &w.bytes {
                        None => return Err(self.err(&p, "missing field 'bytes' (required)")),
                        Some(b) => self.bytes_value(b, &p.key("bytes"))?,
                    };
                    let events = match (&w.at, w.load) {
                        (Some(_), Some(_)) => {
                            return Err(
                                self.err(&p.key("load"), "give either 'at' or 'load', not both")
                            )
                        }
                        (None, None) => {
                            return Err(
                                self.err(&p, "missing field 'at' or 'load' (one is required)")
                            )
                        }
                        (Some(at), None) => {
                            let (list, many) = match at {
                                RawTimes::One(t) => (vec![t.clone()], false),
                                RawTimes::Many(ts) => (ts.clone(), true),
                            };
                            let mut times = Vec::with_capacity(list.len());
                            for (k, t) in list.iter().enumerate() {
                                let tp = if many {
                                    p.key("at").index(k)
                                } else {
                                    p.key("at")
                                };
                                let t = self.time(t, &tp)?;
                                if t >= duration {
                                    return Err(self.err(&tp, format!("expected a time before the end of the run (duration {duration}), found {t}")));
                                }
                                times.push(t);
                            }
                            if w.start.is_some() || w.stop.is_some() {
                                let key = if w.start.is_some() { "start" } else { "stop" };
                                return Err(self.err(&p.key(key), format!("'{key}' applies to incasts with 'load'; 'at' gives the times")));
                            }
                            IncastEvents::At(times)
                        }
                        (None, Some(_)) => {
                            let load = load("load")?;
                            let (start, stop) = window(true)?;
                            IncastEvents::Poisson { load, start, stop }
                        }
                    };
                    Arrivals::Incast {
                        hosts,
                        to,
                        fan_in: fan_in as usize,
                        bytes,
                        events,
                    }
                }
                WorkloadKind::List => {
                    let list = w.flows.as_ref().ok_or_else(|| {
                        self.err(&p, "missing field 'flows' (required for kind = \"list\")")
                    })?;
                    if list.len() as u64 > MAX_FLOWS {
                        return Err(self.err(
                            &p.key("flows"),
                            format!("expected at most {MAX_FLOWS} flows, found {}", list.len()),
                        ));
                    }
                    let mut flows = Vec::with_capacity(list.len());
                    for (k, f) in list.iter().enumerate() {
                        let fp = p.key("flows").index(k);
                        let src = self.host_index(&f.from, &fp.key("from"), nodes, by_name)?;
                        let dst = self.host_index(&f.to, &fp.key("to"), nodes, by_name)?;
                        if src == dst {
                            return Err(self.err(
                                &fp.key("to"),
                                format!("a flow cannot go to its own host '{}'", f.to),
                            ));
                        }
                        if !reach.reachable(src, dst) {
                            return Err(self.err(
                                &fp.key("to"),
                                format!(
                                    "host '{}' cannot reach '{}': no path through switches",
                                    f.from, f.to
                                ),
                            ));
                        }
                        let size = self.bytes_value(&f.size, &fp.key("size"))?;
                        let start = self.time(&f.start, &fp.key("start"))?;
                        if start >= duration {
                            return Err(self.err(&fp.key("start"), format!("expected a start before the end of the run (duration {duration}), found {start}")));
                        }
                        let priority = match f.priority {
                            Some(c) if c as usize >= crate::flowctl::pfc::PFC_CLASSES => {
                                return Err(self.err(
                                    &fp.key("priority"),
                                    format!("expected a class from 0 to 7, found {c}"),
                                ))
                            }
                            c => c.unwrap_or(priority),
                        };
                        flows.push(FlowArrival {
                            start,
                            src,
                            dst,
                            size,
                            priority,
                        });
                    }
                    Arrivals::List { flows }
                }
            };
            out.push(WorkloadSpec {
                name: name.clone(),
                transport,
                frame,
                priority,
                arrivals,
            });
        }
        Ok(out)
    }

    /// A size given as a byte count or with a unit, above zero.
    fn bytes_value(&self, b: &RawBytes, path: &FieldPath) -> Result<u64, ScenarioError> {
        let v = match b {
            RawBytes::Count(n) => *n,
            RawBytes::Text(s) => self.size(s, path)?,
        };
        if v == 0 {
            return Err(self.err(path, "expected a size above zero, found 0"));
        }
        Ok(v)
    }

    /// The distribution `sizes` names: a shipped one, or a CSV file
    /// relative to the scenario's folder.
    fn size_cdf(
        &self,
        sizes: Option<&str>,
        p: &FieldPath,
        origin: &str,
    ) -> Result<SizeCdf, ScenarioError> {
        let sp = p.key("sizes");
        let Some(name) = sizes else {
            return Err(self.err(
                p,
                "missing field 'sizes' (required: \"websearch\", \"fb_hadoop\" or a CSV file)",
            ));
        };
        let (text, file) = match cdf::shipped(name) {
            Some(t) => (t.to_string(), name.to_string()),
            None => {
                let path = std::path::Path::new(origin)
                    .parent()
                    .unwrap_or(std::path::Path::new("."))
                    .join(name);
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    self.err(
                        &sp,
                        format!(
                            "expected a shipped distribution ({}) or a readable CSV file; {}: {e}",
                            cdf::shipped_names().collect::<Vec<_>>().join(", "),
                            path.display()
                        ),
                    )
                })?;
                (text, path.display().to_string())
            }
        };
        SizeCdf::parse(&text).map_err(|e| {
            let at = if e.line > 0 {
                format!("{file}, line {}", e.line)
            } else {
                file.clone()
            };
            self.err(&sp, format!("{at}: {}", e.message))
        })
    }

    /// Every host of `hosts` reaches every other (they share a component).
    fn check_reach(
        &self,
        reach: &Reach,
        nodes: &[NodeSpec],
        hosts: &[usize],
        p: &FieldPath,
    ) -> Result<(), ScenarioError> {
        if let Some(&h) = hosts.iter().find(|&&h| !reach.reachable(hosts[0], h)) {
            return Err(self.err(
                p,
                format!(
                    "host '{}' cannot reach '{}': no path through switches",
                    nodes[hosts[0]].name, nodes[h].name
                ),
            ));
        }
        Ok(())
    }
}
