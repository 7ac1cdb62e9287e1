//! From scenario text to a validated `Scenario`: parse, apply defaults,
//! convert units, resolve names, check the topology. Every rejection is a
//! `ScenarioError` with its location.

use super::entry::Entry;
use super::error::{with_suggestion, FieldPath, Locator, ScenarioError};
use super::names;
use super::overrides::Deferred;
use super::schema::*;
use super::spec::*;
use crate::units::{parse_rate, parse_size, parse_time, Rate, Time};
use std::collections::HashMap;

/// Flows a scenario may have: twice a k = 16 fat tree with every host
/// sending to every other (1,047,552). Loading costs about 2 KB per flow,
/// so many more would exhaust memory before the run's memory check could
/// refuse them.
pub(crate) const MAX_FLOWS: u64 = 1 << 21;

pub(super) const DEFAULT_LINK_RATE: Rate = Rate::gbps(10);
pub(super) const DEFAULT_FRAME: u32 = 1500;
const DEFAULT_BIN: Time = Time::from_us(100);
/// Metrics bins a run may have (each is a row of every series).
const MAX_BINS: u64 = 10_000_000;
/// The most threads one run may be split over.
const MAX_THREADS: u64 = 256;
/// Smallest and largest frames accepted (Ethernet minimum to jumbo).
pub(super) const FRAME_RANGE: (u64, u64) = (64, 9216);

/// Parse TOML text after applying `key=value` overrides. `origin` names
/// the file in messages; errors about a value an override set name the
/// override instead (see `overrides::apply_toml`).
pub fn from_toml(
    text: &str,
    origin: &str,
    overrides: &[(String, String)],
) -> Result<Scenario, ScenarioError> {
    let mut loc = Locator::toml(origin, text);
    let mut doc = toml::de::DeTable::parse(text).map_err(|e| toml_error(&loc, e, String::new()))?;
    super::entry::check_written_entries(doc.get_ref(), &loc)?;
    let (applied, deferred) = super::overrides::apply_toml(doc.get_mut(), text.len(), overrides)?;
    loc.set_overrides(applied);
    let de = toml::Deserializer::from(doc);
    let raw: RawScenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let field = if field == "." { String::new() } else { field };
        toml_error(&loc, e.into_inner(), field)
    })?;
    expand_and_build(raw, &mut loc, &deferred, origin)
}

/// Parse JSON text (a scenario given as a dict from Python), with the
/// overrides already `applied` to it and those `deferred` to its entries.
pub fn from_json(
    text: &str,
    origin: &str,
    applied: Vec<super::error::Applied>,
    deferred: &[Deferred],
) -> Result<Scenario, ScenarioError> {
    let mut loc = Locator::none(origin);
    loc.set_overrides(applied);
    let mut de = serde_json::Deserializer::from_str(text);
    let raw: RawScenario = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = e.path().to_string();
        let field = if field == "." { String::new() } else { field };
        let msg = e.into_inner().to_string();
        let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
        loc.error_named(field, with_suggestion(&msg))
    })?;
    expand_and_build(raw, &mut loc, deferred, origin)
}

/// Expands the entries, applies the overrides deferred to them, and builds.
fn expand_and_build(
    mut raw: RawScenario,
    loc: &mut Locator,
    deferred: &[Deferred],
    origin: &str,
) -> Result<Scenario, ScenarioError> {
    let mut entries = Builder { loc, kb: 1000 }.expand(&mut raw)?;
    loc.add_overrides(super::overrides::apply_to_entries(&mut entries, deferred)?);
    Builder { loc, kb: 1000 }.build(raw, entries, origin)
}

fn toml_error(loc: &Locator, e: toml::de::Error, field: String) -> ScenarioError {
    let msg = e.message().trim().to_string();
    let msg = if msg.starts_with("missing field") {
        msg.replace('`', "'") + " (required)"
    } else if msg.starts_with("invalid type: integer")
        || msg.starts_with("invalid type: floating point")
    {
        // A bare number where a quantity with its unit belongs.
        msg.replace('`', "'") + unit_hint(&field)
    } else {
        with_suggestion(&msg)
    };
    loc.error_at(e.span().map(|s| s.start), field, msg)
}

/// What to write instead of a bare number for a quantity: its unit, in
/// quotes, as the field's name suggests (nothing for names and choices).
fn unit_hint(field: &str) -> &'static str {
    let key = field.rsplit('.').next().unwrap_or(field);
    let key = key.split('[').next().unwrap_or(key);
    const WORDS: [&str; 12] = [
        "name",
        "description",
        "host",
        "to",
        "between",
        "mode",
        "measure",
        "baseline",
        "transport",
        "kind",
        "quantize",
        "buffer_model",
    ];
    if WORDS.contains(&key) {
        return "";
    }
    if !key.is_empty() {
        if key.contains("rate") || key.starts_with("r_") || key.contains("increase_at") {
            return " (a rate is written with its unit, in quotes: \"10Gbps\", \"500Mbps\")";
        }
        if [
            "duration", "delay", "latency", "time", "bin", "interval", "period", "start", "stop",
            "tmax", "pause",
        ]
        .iter()
        .any(|k| key.contains(k))
        {
            return " (a time is written with its unit, in quotes: \"5ms\", \"1us\")";
        }
    }
    " (a quantity is written with its unit, in quotes: \"10Gbps\", \"1us\", \"150KB\")"
}

pub(super) struct Builder<'a> {
    pub(super) loc: &'a Locator,
    kb: u64,
}

/// A value and where it came from (the entry itself or `[defaults]`).
type Sourced<'v, T> = Option<(&'v T, FieldPath)>;

pub(super) fn pick<'v, T>(
    own: &'v Option<T>,
    own_path: FieldPath,
    dflt: Option<&'v Option<T>>,
    dflt_path: FieldPath,
) -> Sourced<'v, T> {
    match (own, dflt) {
        (Some(v), _) => Some((v, own_path)),
        (None, Some(Some(v))) => Some((v, dflt_path)),
        _ => None,
    }
}

impl<'a> Builder<'a> {
    pub(super) fn err(&self, path: &FieldPath, msg: impl Into<String>) -> ScenarioError {
        self.loc.error(path, msg)
    }

    pub(super) fn time(&self, s: &str, path: &FieldPath) -> Result<Time, ScenarioError> {
        parse_time(s).map_err(|e| self.err(path, e.to_string()))
    }
    pub(super) fn rate(&self, s: &str, path: &FieldPath) -> Result<Rate, ScenarioError> {
        parse_rate(s).map_err(|e| self.err(path, e.to_string()))
    }
    pub(super) fn kilobyte(&self) -> u64 {
        self.kb
    }
    pub(super) fn size(&self, s: &str, path: &FieldPath) -> Result<u64, ScenarioError> {
        parse_size(s, self.kb).map_err(|e| self.err(path, e.to_string()))
    }
    /// A frame size on the wire, 64 B to a 9216 B jumbo frame.
    pub(super) fn frame_size(&self, s: &str, path: &FieldPath) -> Result<u32, ScenarioError> {
        let b = self.size(s, path)?;
        if !(FRAME_RANGE.0..=FRAME_RANGE.1).contains(&b) {
            return Err(self.err(
                path,
                format!(
                    "expected a frame size from {} B to {} B, found {b} B",
                    FRAME_RANGE.0, FRAME_RANGE.1
                ),
            ));
        }
        Ok(b as u32)
    }
    pub(super) fn opt_time(&self, v: Sourced<String>) -> Result<Option<Time>, ScenarioError> {
        v.map(|(s, p)| self.time(s, &p)).transpose()
    }
    pub(super) fn opt_size(&self, v: Sourced<String>) -> Result<Option<u64>, ScenarioError> {
        v.map(|(s, p)| self.size(s, &p)).transpose()
    }

    /// `entries` are those of `raw` after expansion: every entry is a plain
    /// one, with the path (template and copy) its errors are reported at.
    fn build(
        mut self,
        raw: RawScenario,
        entries: super::entry::Entries,
        origin: &str,
    ) -> Result<Scenario, ScenarioError> {
        let root = FieldPath::root();
        if let Some(k) = raw.kilobyte {
            if k != 1000 && k != 1024 {
                return Err(self.err(
                    &root.key("kilobyte"),
                    format!("expected 1000 or 1024, found {k}"),
                ));
            }
            self.kb = k;
        }
        let duration = self.time(&raw.duration, &root.key("duration"))?;
        if duration == Time::ZERO {
            return Err(self.err(
                &root.key("duration"),
                "expected a duration above zero, found 0",
            ));
        }
        let bin = match &raw.bin {
            Some(b) => self.time(b, &root.key("bin"))?,
            None => DEFAULT_BIN.min(duration),
        };
        if bin == Time::ZERO {
            return Err(self.err(&root.key("bin"), "expected a bin width above zero, found 0"));
        }
        if duration.0 / bin.0 > MAX_BINS {
            // The field the user set: the default bin follows the duration.
            let (key, hint) = match raw.bin {
                Some(_) => ("bin", ""),
                None => ("duration", "; a longer run needs a wider 'bin'"),
            };
            return Err(self.err(
                &root.key(key),
                format!(
                    "{} bins of {bin} in {duration} is too many (at most {MAX_BINS}){hint}",
                    duration.0 / bin.0
                ),
            ));
        }
        if entries.hosts.is_empty() && entries.switches.is_empty() {
            return Err(self.loc.error_at(
                None,
                String::new(),
                "empty topology: no [[hosts]] or [[switches]], and no [topology]".into(),
            ));
        }
        let defaults = raw.defaults.unwrap_or_default();
        let dp = root.key("defaults");
        self.check_default_has_no_identity(&defaults, &dp)?;

        // Nodes: switches first, then hosts, in file order.
        let mut nodes: Vec<NodeSpec> = Vec::new();
        let mut by_name: HashMap<String, (usize, FieldPath)> = HashMap::new();
        for Entry { path: p, raw: sw } in &entries.switches {
            let name = self.entry_name(&sw.name, p, &mut by_name, nodes.len())?;
            let spec = self.switch(sw, p, defaults.switch.as_ref(), &dp.key("switch"))?;
            nodes.push(NodeSpec {
                name,
                kind: NodeKind::Switch(spec),
            });
        }
        for Entry { path: p, raw: h } in &entries.hosts {
            let name = self.entry_name(&h.name, p, &mut by_name, nodes.len())?;
            let spec = self.host(h, p, defaults.host.as_ref(), &dp.key("host"))?;
            nodes.push(NodeSpec {
                name,
                kind: NodeKind::Host(spec),
            });
        }

        let links = self.links(&entries.links, &defaults, &nodes, &by_name)?;
        self.static_routes(&mut nodes, &links, &entries.switches, &by_name)?;
        let sources = self.sources(
            &entries.sources,
            &defaults,
            &nodes,
            &by_name,
            &links,
            duration,
        )?;
        let workloads =
            self.workloads(&raw.workloads, &nodes, &by_name, &links, duration, origin)?;
        if raw.until == Some(RawUntil::FlowsFinished) && workloads.is_empty() {
            return Err(self.err(
                &root.key("until"),
                "\"flows_finished\" ends the run when the last workload flow finishes: expected a [[workloads]] entry (enabled), found none",
            ));
        }
        self.check_connectivity(&nodes, &links, &sources, &entries.sources)?;
        self.check_flow_names(&nodes, &sources, &entries.sources)?;
        self.check_switch_buffers(&nodes, &sources, &entries.switches)?;
        self.shared_buffers(
            &mut nodes,
            &links,
            &sources,
            &entries.switches,
            defaults.switch.as_ref(),
            raw.priorities
                .as_ref()
                .map_or(1, |p| p.classes.unwrap_or(8)),
        )?;
        let seed = raw.seed.unwrap_or(1);
        let threads = match raw.threads {
            None => 1,
            Some(n @ 1..=MAX_THREADS) => n as usize,
            Some(n) => {
                return Err(self.err(
                    &root.key("threads"),
                    format!("expected a number of threads from 1 to {MAX_THREADS}, found {n}"),
                ))
            }
        };
        if let Some(n) = &raw.name {
            names::check(n).map_err(|m| self.err(&root.key("name"), m))?;
        }
        let name = raw.name.clone().unwrap_or_else(|| {
            std::path::Path::new(origin)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "scenario".into())
        });
        let mut scenario = Scenario {
            name,
            duration,
            seed,
            threads,
            bin,
            nodes,
            links,
            sources,
            workloads,
            until_flows_finished: raw.until == Some(RawUntil::FlowsFinished),
            plot: PlotSpec::default(),
            bcn: None,
            e2cm: None,
            qcn: None,
            dcqcn: None,
            roce: None,
            tcp: None,
            watchdog: None,
            metrics: MetricsSpec::default(),
            priorities: None,
            sweep: None,
        };
        self.classes(raw.priorities.as_ref(), &entries, &mut scenario)?;
        if let Some(bcn) = &raw.bcn {
            let params = self.bcn(bcn, &root.key("bcn"))?;
            self.check_floor_rate(params.min_rate.0 as f64, &root.key("bcn"), &scenario)?;
            scenario.bcn = Some(params);
        }
        if let Some(e) = &raw.e2cm {
            if raw.bcn.is_none() {
                return Err(self.err(
                    &FieldPath::root().key("e2cm"),
                    "E2CM probes start on the switches' feedback: it needs a [bcn] section too",
                ));
            }
            let params = self.e2cm(e)?;
            self.check_floor_rate(
                params.control.min_rate.0 as f64,
                &root.key("e2cm").key("control"),
                &scenario,
            )?;
            scenario.e2cm = e.enabled.unwrap_or(true).then_some(params);
        }
        if let Some(q) = &raw.qcn {
            if raw.bcn.is_some() {
                return Err(self.err(
                    &FieldPath::root().key("qcn"),
                    "give one congestion-notification scheme: [bcn] or [qcn], not both",
                ));
            }
            let params = self.qcn(q)?;
            self.check_floor_rate(params.min_rate.0, &root.key("qcn"), &scenario)?;
            scenario.qcn = q.enabled.unwrap_or(true).then_some(params);
        }
        if let Some(d) = &raw.dcqcn {
            if raw.bcn.is_some() || raw.qcn.is_some() {
                return Err(self.err(
                    &root.key("dcqcn"),
                    "give one congestion-notification scheme: [bcn], [qcn] or [dcqcn]",
                ));
            }
            let params = self.dcqcn(d)?;
            self.check_floor_rate(params.rp.min_rate.0, &root.key("dcqcn"), &scenario)?;
            scenario.dcqcn = d.enabled.unwrap_or(true).then_some(params);
        }
        if raw.tcp.is_some()
            || scenario
                .sources
                .iter()
                .any(|s| s.transport == Transport::Tcp)
            || scenario
                .workloads
                .iter()
                .any(|w| w.transport == Transport::Tcp)
        {
            let t = self.tcp(raw.tcp.as_ref().unwrap_or(&RawTcp::default()))?;
            self.check_connection_sources(
                &scenario,
                &entries.sources,
                Transport::Tcp,
                t.header,
                "a TCP source's segments are ECN-capable by [tcp] ecn (\"classic\" or \"dctcp\"), not by the source",
            )?;
            self.check_workload_frames(&scenario, Transport::Tcp, t.header)?;
            scenario.tcp = Some(t);
        }
        if raw.roce.is_some()
            || scenario
                .sources
                .iter()
                .any(|s| s.transport == Transport::Roce)
            || scenario
                .workloads
                .iter()
                .any(|w| w.transport == Transport::Roce)
        {
            let r = self.roce(raw.roce.as_ref().unwrap_or(&RawRoce::default()))?;
            self.check_connection_sources(
                &scenario,
                &entries.sources,
                Transport::Roce,
                r.header,
                "a RoCE source's segments are always ECN-capable: leave 'ecn' out",
            )?;
            self.check_workload_frames(&scenario, Transport::Roce, r.header)?;
            scenario.roce = Some(r);
        }
        scenario.watchdog =
            self.watchdog(raw.watchdog.as_ref().unwrap_or(&RawWatchdog::default()))?;
        if let Some(m) = &raw.metrics {
            scenario.metrics = self.metrics(m, &scenario)?;
        }
        if let Some(sweep) = &raw.sweep {
            self.check_sweep(sweep)?;
            scenario.sweep = Some(sweep.clone());
        }
        if let Some(plot) = &raw.plot {
            scenario.plot = self.plot(plot, &scenario)?;
        }
        Ok(scenario)
    }

    /// `[priorities]`, and every class a source or a switch's PFC names
    /// exists.
    /// The sources of a connection `transport`: their segments' ECN is the
    /// transport's (`ecn_message` if a source sets it), and their frames
    /// must hold more than its `header`.
    fn check_connection_sources(
        &self,
        scenario: &Scenario,
        raw: &[Entry<RawSource>],
        transport: Transport,
        header: u32,
        ecn_message: &str,
    ) -> Result<(), ScenarioError> {
        let name = match transport {
            Transport::Tcp => "TCP",
            Transport::Roce => "RoCE",
            Transport::Udp => unreachable!("UDP has no connection"),
        };
        for (s, e) in scenario.sources.iter().zip(raw) {
            if s.transport != transport {
                continue;
            }
            if s.ecn {
                return Err(self.err(&e.path.key("ecn"), ecn_message));
            }
            if s.frame <= header {
                return Err(self.err(
                    &e.path,
                    format!(
                        "a {name} source needs frames larger than the {header} B header, found {} B",
                        s.frame
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A workload's frames hold more than its transport's header.
    fn check_workload_frames(
        &self,
        scenario: &Scenario,
        transport: Transport,
        header: u32,
    ) -> Result<(), ScenarioError> {
        for (i, w) in scenario.workloads.iter().enumerate() {
            if w.transport == transport && w.frame <= header {
                return Err(self.err(
                    &FieldPath::root().key("workloads").index(i).key("frame"),
                    format!(
                        "expected frames larger than the transport's {header} B header, found {} B",
                        w.frame
                    ),
                ));
            }
        }
        Ok(())
    }

    fn classes(
        &self,
        raw: Option<&RawPriorities>,
        entries: &super::entry::Entries,
        scenario: &mut Scenario,
    ) -> Result<(), ScenarioError> {
        let largest = scenario
            .sources
            .iter()
            .map(|s| s.frame as u64)
            .chain(scenario.workloads.iter().map(|w| w.frame as u64))
            .max()
            .unwrap_or(1500);
        if let Some(rp) = raw {
            scenario.priorities = Some(self.priorities(rp, largest)?);
        }
        let classes = scenario.priorities.as_ref().map_or(1, |p| p.classes);
        self.port_schedulers(
            &mut scenario.nodes,
            &scenario.links,
            &entries.switches,
            classes,
            largest,
        )?;
        let beyond = |c: u8| {
            format!(
                "expected a class from 0 to {}, found {c} (the scenario has {classes} traffic {}; set [priorities] classes)",
                classes - 1,
                if classes == 1 { "class" } else { "classes" }
            )
        };
        for (s, e) in scenario.sources.iter().zip(&entries.sources) {
            if s.priority >= classes {
                return Err(self.err(&e.path.key("priority"), beyond(s.priority)));
            }
        }
        for (i, w) in scenario.workloads.iter().enumerate() {
            let p = FieldPath::root().key("workloads").index(i);
            if w.priority >= classes {
                return Err(self.err(&p.key("priority"), beyond(w.priority)));
            }
            if let crate::traffic::workload::Arrivals::List { flows } = &w.arrivals {
                if let Some(k) = flows.iter().position(|f| f.priority >= classes) {
                    let path = p.key("flows").index(k).key("priority");
                    return Err(self.err(&path, beyond(flows[k].priority)));
                }
            }
        }
        let switches = scenario.nodes.iter().filter_map(|n| match &n.kind {
            crate::net::topology::NodeKind::Switch(sw) => Some(sw),
            _ => None,
        });
        for (sw, e) in switches.zip(&entries.switches) {
            if let Some(pfc) = &sw.pfc {
                if let Some(c) = crate::flowctl::pfc::classes(pfc.classes).find(|&c| c >= classes) {
                    return Err(self.err(&e.path.key("pfc").key("classes"), beyond(c)));
                }
            }
            // Without a list, ECN marks every class there is.
            if let Some(ecn) = sw.ecn.as_ref().filter(|e| e.classes != u8::MAX) {
                if let Some(c) = crate::flowctl::pfc::classes(ecn.classes).find(|&c| c >= classes) {
                    return Err(self.err(&e.path.key("ecn").key("classes"), beyond(c)));
                }
            }
        }
        Ok(())
    }

    /// A rate limiter's floor (`min_rate` of the table at `tp`) is at most
    /// the line rate of every host that runs a source: the limiters live
    /// there, and a floor above the line would be clamped to it unseen.
    fn check_floor_rate(
        &self,
        min_rate: f64,
        tp: &FieldPath,
        sc: &Scenario,
    ) -> Result<(), ScenarioError> {
        let slowest = sc
            .sources
            .iter()
            .map(|s| (link_rate_of(s.host, &sc.links), s.host))
            .min();
        match slowest {
            Some((line, host)) if min_rate > line.0 as f64 => Err(self.err(
                &tp.key("min_rate"),
                format!(
                    "expected a min_rate at most the line rate of host '{}' ({line}), found {}",
                    sc.nodes[host].name,
                    Rate(min_rate as u64)
                ),
            )),
            _ => Ok(()),
        }
    }

    fn check_sweep(&self, sw: &RawSweep) -> Result<(), ScenarioError> {
        let sp = FieldPath::root().key("sweep");
        match (sw.seeds, &sw.seed_list) {
            (Some(_), Some(_)) => {
                return Err(self.err(
                    &sp.key("seed_list"),
                    "give either 'seeds' or 'seed_list', not both",
                ))
            }
            (Some(0), None) => {
                return Err(self.err(&sp.key("seeds"), "expected at least 1 seed, found 0"))
            }
            (None, Some(l)) if l.is_empty() => {
                return Err(self.err(
                    &sp.key("seed_list"),
                    "expected at least one seed, found an empty list",
                ))
            }
            _ => {}
        }
        for (key, values) in &sw.axes {
            if values.is_empty() {
                return Err(self.err(
                    &sp.key("axes").key(key),
                    format!("axis '{key}' has no values"),
                ));
            }
        }
        for name in sw.metrics.keys() {
            let at = sp.key("metrics").key(name);
            if name.trim().is_empty() {
                return Err(self.err(&at, "expected a metric name, found an empty one"));
            }
            names::check(name).map_err(|m| self.err(&at, m))?;
        }
        for name in sw.variants.keys() {
            if name.is_empty() || name.contains(char::is_whitespace) || name.contains('/') {
                return Err(self.err(
                    &sp.key("variants").key(name),
                    format!("expected a variant name without spaces or '/', found '{name}'"),
                ));
            }
            names::check(name).map_err(|m| self.err(&sp.key("variants").key(name), m))?;
        }
        Ok(())
    }

    fn check_default_has_no_identity(
        &self,
        d: &RawDefaults,
        dp: &FieldPath,
    ) -> Result<(), ScenarioError> {
        let bad = |p: FieldPath, what: &str| {
            Err(self.err(
                &p,
                format!("{what} cannot have a default; set it on each entry"),
            ))
        };
        if d.switch.as_ref().is_some_and(|s| s.name.is_some()) {
            return bad(dp.key("switch").key("name"), "a switch name");
        }
        if d.host.as_ref().is_some_and(|s| s.name.is_some()) {
            return bad(dp.key("host").key("name"), "a host name");
        }
        if d.switch.as_ref().is_some_and(|s| s.routes.is_some()) {
            return bad(dp.key("switch").key("routes"), "a switch's routes");
        }
        if d.switch.as_ref().is_some_and(|s| s.schedulers.is_some()) {
            return bad(
                dp.key("switch").key("schedulers"),
                "a switch's port schedulers (set [priorities] scheduler for every port)",
            );
        }
        if d.link.as_ref().is_some_and(|s| s.between.is_some()) {
            return bad(dp.key("link").key("between"), "link endpoints");
        }
        if let Some(s) = &d.source {
            if s.name.is_some() {
                return bad(dp.key("source").key("name"), "a source name");
            }
            if s.host.is_some() {
                return bad(dp.key("source").key("host"), "a source host");
            }
        }
        Ok(())
    }

    fn entry_name(
        &self,
        name: &Option<String>,
        p: &FieldPath,
        by_name: &mut HashMap<String, (usize, FieldPath)>,
        index: usize,
    ) -> Result<String, ScenarioError> {
        let Some(name) = name else {
            return Err(self.err(p, "missing field 'name' (required)"));
        };
        if name.is_empty() || name.contains("->") || name.contains(char::is_whitespace) {
            return Err(self.err(
                &p.key("name"),
                format!("expected a non-empty name without spaces or '->', found '{name}'"),
            ));
        }
        names::check(name).map_err(|m| self.err(&p.key("name"), m))?;
        if let Some((_, first)) = by_name.get(name) {
            return Err(self.err(
                &p.key("name"),
                format!(
                    "duplicate name '{name}' (first used at {})",
                    first.describe()
                ),
            ));
        }
        by_name.insert(name.clone(), (index, p.clone()));
        Ok(name.clone())
    }
}

pub(super) fn link_rate_of(host: usize, links: &[LinkSpec]) -> Rate {
    crate::net::topology::link_rate_of(links, host).unwrap_or(DEFAULT_LINK_RATE)
}
