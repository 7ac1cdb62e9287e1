//! From scenario text to a validated `Scenario`: parse, apply defaults,
//! convert units, resolve names, check the topology. Every rejection is a
//! `ScenarioError` with its location.

use super::entry::Entry;
use super::error::{unknown_name, with_suggestion, FieldPath, Locator, ScenarioError};
use super::names;
use super::schema::*;
use super::spec::*;
use crate::flowctl::watchdog::WatchdogSpec;
use crate::units::{parse_rate, parse_size, parse_time, Rate, Time};
use std::collections::HashMap;

/// Flows a scenario may have: twice a k = 16 fat tree with every host
/// sending to every other (1,047,552). Loading costs about 2 KB per flow,
/// so many more would exhaust memory before the run's memory check could
/// refuse them.
pub(crate) const MAX_FLOWS: u64 = 1 << 21;

const DEFAULT_LINK_RATE: Rate = Rate::gbps(10);
const DEFAULT_FRAME: u32 = 1500;
const DEFAULT_BIN: Time = Time::from_us(100);
/// Metrics bins a run may have (each is a row of every series).
const MAX_BINS: u64 = 10_000_000;
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
    loc.set_overrides(super::overrides::apply_toml(
        doc.get_mut(),
        text.len(),
        overrides,
    )?);
    let de = toml::Deserializer::from(doc);
    let raw: RawScenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let field = if field == "." { String::new() } else { field };
        toml_error(&loc, e.into_inner(), field)
    })?;
    Builder {
        loc: &loc,
        kb: 1000,
    }
    .build(raw, origin)
}

/// Parse JSON text (a scenario given as a dict from Python), with the
/// overrides already `applied` to it.
pub fn from_json(
    text: &str,
    origin: &str,
    applied: Vec<super::error::Applied>,
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
    Builder {
        loc: &loc,
        kb: 1000,
    }
    .build(raw, origin)
}

fn toml_error(loc: &Locator, e: toml::de::Error, field: String) -> ScenarioError {
    let msg = e.message().trim().to_string();
    let msg = if msg.starts_with("missing field") {
        msg.replace('`', "'") + " (required)"
    } else {
        with_suggestion(&msg)
    };
    loc.error_at(e.span().map(|s| s.start), field, msg)
}

pub(super) struct Builder<'a> {
    loc: &'a Locator,
    kb: u64,
}

/// A value and where it came from (the entry itself or `[defaults]`).
type Sourced<'v, T> = Option<(&'v T, FieldPath)>;

fn pick<'v, T>(
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
    fn opt_time(&self, v: Sourced<String>) -> Result<Option<Time>, ScenarioError> {
        v.map(|(s, p)| self.time(s, &p)).transpose()
    }
    fn opt_size(&self, v: Sourced<String>) -> Result<Option<u64>, ScenarioError> {
        v.map(|(s, p)| self.size(s, &p)).transpose()
    }

    fn build(mut self, mut raw: RawScenario, origin: &str) -> Result<Scenario, ScenarioError> {
        let root = FieldPath::root();
        // Replicated entries first: from here on every entry is a plain one,
        // with the path (template and copy) its errors are reported at.
        let entries = self.expand(&mut raw)?;
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
        let sources = self.sources(
            &entries.sources,
            &defaults,
            &nodes,
            &by_name,
            &links,
            duration,
        )?;
        check_connectivity(&self, &nodes, &links, &sources, &entries.sources)?;
        check_flow_names(&self, &nodes, &sources, &entries.sources)?;
        self.check_switch_buffers(&nodes, &sources, &entries.switches)?;
        let seed = raw.seed.unwrap_or(1);
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
            bin,
            nodes,
            links,
            sources,
            plot: PlotSpec::default(),
            bcn: None,
            e2cm: None,
            qcn: None,
            tcp: None,
            watchdog: None,
            metrics: MetricsSpec::default(),
            sweep: None,
        };
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
        let tcp_sources: Vec<usize> = (0..scenario.sources.len())
            .filter(|&i| scenario.sources[i].transport == Transport::Tcp)
            .collect();
        if raw.tcp.is_some() || !tcp_sources.is_empty() {
            let t = self.tcp(raw.tcp.as_ref().unwrap_or(&RawTcp::default()))?;
            for &i in &tcp_sources {
                let s = &scenario.sources[i];
                if s.frame <= t.header {
                    return Err(self.err(
                        &entries.sources[i].path,
                        format!(
                            "a TCP source needs frames larger than the {} B header, found {} B",
                            t.header, s.frame
                        ),
                    ));
                }
            }
            scenario.tcp = Some(t);
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

    /// A switch buffer holds at least the largest frame a source sends:
    /// a smaller one would drop every such frame.
    fn check_switch_buffers(
        &self,
        nodes: &[NodeSpec],
        sources: &[SourceSpec],
        switches: &[Entry<RawSwitch>],
    ) -> Result<(), ScenarioError> {
        // The first source with the largest frame.
        let Some((largest, si)) = sources
            .iter()
            .enumerate()
            .map(|(i, s)| (s.frame, std::cmp::Reverse(i)))
            .max()
            .map(|(f, i)| (f, i.0))
        else {
            return Ok(());
        };
        // Switches come first among the nodes, in entry order.
        for (node, Entry { path: p, raw: sw }) in nodes.iter().zip(switches) {
            let NodeKind::Switch(spec) = &node.kind else {
                continue;
            };
            let (BufferModel::PerOutput { bytes } | BufferModel::PerInput { bytes }) = spec.buffer
            else {
                continue;
            };
            if bytes < largest as u64 {
                let path = match &sw.buffer {
                    Some(_) => p.key("buffer"),
                    None => FieldPath::root()
                        .key("defaults")
                        .key("switch")
                        .key("buffer"),
                };
                return Err(self.err(
                    &path,
                    format!(
                        "expected a buffer of at least the largest frame ({largest} B, sent by source '{}'), found {bytes} B",
                        sources[si].name
                    ),
                ));
            }
        }
        Ok(())
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

    fn switch(
        &self,
        sw: &RawSwitch,
        p: &FieldPath,
        d: Option<&RawSwitch>,
        dp: &FieldPath,
    ) -> Result<SwitchSpec, ScenarioError> {
        let latency = self
            .opt_time(pick(
                &sw.latency,
                p.key("latency"),
                d.map(|d| &d.latency),
                dp.key("latency"),
            ))?
            .unwrap_or(Time::ZERO);
        let response_time = self
            .opt_time(pick(
                &sw.response_time,
                p.key("response_time"),
                d.map(|d| &d.response_time),
                dp.key("response_time"),
            ))?
            .unwrap_or(Time::ZERO);
        let buffer_src = pick(
            &sw.buffer,
            p.key("buffer"),
            d.map(|d| &d.buffer),
            dp.key("buffer"),
        );
        let buffer_path = buffer_src.as_ref().map(|(_, bp)| bp.clone());
        let buffer_bytes = self.opt_size(buffer_src)?;
        let model = pick(
            &sw.buffer_model,
            p.key("buffer_model"),
            d.map(|d| &d.buffer_model),
            dp.key("buffer_model"),
        );
        let buffer = match (model.as_ref().map(|(m, _)| **m), buffer_bytes) {
            (Some(BufferModelKind::Unlimited), _) | (None, None) => BufferModel::Unlimited,
            (Some(BufferModelKind::PerOutput) | None, Some(b)) => {
                BufferModel::PerOutput { bytes: b }
            }
            (Some(BufferModelKind::PerInput), Some(b)) => BufferModel::PerInput { bytes: b },
            (Some(_), None) => {
                return Err(self.err(
                    &model.unwrap().1,
                    "this buffer model needs a 'buffer' size (e.g. buffer = \"150KB\")",
                ));
            }
        };
        if let BufferModel::PerOutput { bytes } | BufferModel::PerInput { bytes } = buffer {
            if bytes < FRAME_RANGE.0 {
                return Err(self.err(
                    &buffer_path.expect("a buffer size was given"),
                    format!(
                        "expected a buffer of at least {} B, found {bytes} B",
                        FRAME_RANGE.0
                    ),
                ));
            }
        }
        let queue_limit = self.opt_size(pick(
            &sw.queue_limit,
            p.key("queue_limit"),
            d.map(|d| &d.queue_limit),
            dp.key("queue_limit"),
        ))?;
        if queue_limit == Some(0) {
            return Err(self.err(
                &p.key("queue_limit"),
                "expected a queue limit above zero, found 0",
            ));
        }
        let pause = match pick(
            &sw.pause,
            p.key("pause"),
            d.map(|d| &d.pause),
            dp.key("pause"),
        ) {
            None => None,
            Some((raw, pp)) => self.pause(raw, &pp, buffer)?,
        };
        let congestion_point = pick(
            &sw.congestion_point,
            p.key("congestion_point"),
            d.map(|d| &d.congestion_point),
            dp.key("congestion_point"),
        )
        .is_none_or(|(v, _)| *v);
        Ok(SwitchSpec {
            latency,
            response_time,
            buffer,
            queue_limit,
            pause,
            congestion_point,
        })
    }

    /// The `[watchdog]` section: on by default, 100 ms (PFC watchdogs in
    /// switches detect a stuck queue in 100-200 ms).
    pub(super) fn watchdog(
        &self,
        raw: &RawWatchdog,
    ) -> Result<Option<WatchdogSpec>, ScenarioError> {
        let wp = FieldPath::root().key("watchdog");
        let threshold = match &raw.pause {
            Some(s) => self.time(s, &wp.key("pause"))?,
            None => Time::from_ms(100),
        };
        if threshold == Time::ZERO {
            return Err(self.err(&wp.key("pause"), "expected a time above zero, found 0"));
        }
        Ok(raw.enabled.unwrap_or(true).then_some(WatchdogSpec {
            threshold,
            stop_on_deadlock: raw.stop_on_deadlock.unwrap_or(false),
        }))
    }

    fn pause(
        &self,
        raw: &RawPause,
        pp: &FieldPath,
        buffer: BufferModel,
    ) -> Result<Option<PauseSpec>, ScenarioError> {
        let mode = raw.mode.unwrap_or(match buffer {
            BufferModel::PerInput { .. } => PauseMode::PerInput,
            _ => PauseMode::Global,
        });
        if mode == PauseMode::Off {
            return Ok(None);
        }
        let xoff = raw
            .xoff
            .as_ref()
            .ok_or_else(|| self.err(pp, "missing field 'xoff' (required when PAUSE is on)"))?;
        let xon = raw
            .xon
            .as_ref()
            .ok_or_else(|| self.err(pp, "missing field 'xon' (required when PAUSE is on)"))?;
        let xoff = self.size(xoff, &pp.key("xoff"))?;
        let xon = self.size(xon, &pp.key("xon"))?;
        if xon >= xoff {
            return Err(self.err(
                &pp.key("xon"),
                format!("expected XON below XOFF ({xoff} B), found {xon} B"),
            ));
        }
        match (mode, buffer) {
            (PauseMode::Global, BufferModel::PerOutput { bytes })
            | (PauseMode::PerInput, BufferModel::PerInput { bytes })
                if xoff > bytes =>
            {
                return Err(self.err(
                    &pp.key("xoff"),
                    format!("expected XOFF at most the buffer ({bytes} B), found {xoff} B"),
                ));
            }
            (PauseMode::Global, BufferModel::PerInput { .. }) => {
                return Err(self.err(&pp.key("mode"), "global PAUSE watches output buffers; with buffer_model = \"per_input\" use mode = \"per_input\""));
            }
            _ => {}
        }
        Ok(Some(PauseSpec {
            mode,
            xoff,
            xon,
            refresh: raw.refresh.unwrap_or(true),
        }))
    }

    fn host(
        &self,
        h: &RawHost,
        p: &FieldPath,
        d: Option<&RawHost>,
        dp: &FieldPath,
    ) -> Result<HostSpec, ScenarioError> {
        let egress = match pick(
            &h.egress,
            p.key("egress"),
            d.map(|d| &d.egress),
            dp.key("egress"),
        ) {
            None => None,
            Some((s, _)) if s == "unlimited" => None,
            Some((s, ep)) => {
                let b = self.size(s, &ep)?;
                if b < FRAME_RANGE.0 {
                    return Err(self.err(&ep, format!("expected an egress buffer of at least {} B or \"unlimited\", found {b} B", FRAME_RANGE.0)));
                }
                Some(b)
            }
        };
        let high_src = pick(
            &h.egress_high,
            p.key("egress_high"),
            d.map(|d| &d.egress_high),
            dp.key("egress_high"),
        );
        let high_path = high_src.as_ref().map(|(_, p)| p.clone());
        let egress_high = self.opt_size(high_src)?;
        let low_src = pick(
            &h.egress_low,
            p.key("egress_low"),
            d.map(|d| &d.egress_low),
            dp.key("egress_low"),
        );
        let low_path = low_src.as_ref().map(|(_, p)| p.clone());
        let egress_low = self.opt_size(low_src)?;
        match (egress_high, egress_low) {
            (Some(hi), Some(lo)) => {
                if lo >= hi {
                    return Err(self.err(
                        &low_path.unwrap(),
                        format!("expected egress_low below egress_high ({hi} B), found {lo} B"),
                    ));
                }
                if egress.is_some_and(|e| hi > e) {
                    return Err(self.err(
                        &high_path.unwrap(),
                        format!(
                            "expected egress_high at most the egress buffer ({} B), found {hi} B",
                            egress.unwrap()
                        ),
                    ));
                }
            }
            (None, None) => {}
            (Some(_), None) => {
                return Err(self.err(&high_path.unwrap(), "egress_high needs egress_low too"))
            }
            (None, Some(_)) => {
                return Err(self.err(&low_path.unwrap(), "egress_low needs egress_high too"))
            }
        }
        let response_time = self
            .opt_time(pick(
                &h.response_time,
                p.key("response_time"),
                d.map(|d| &d.response_time),
                dp.key("response_time"),
            ))?
            .unwrap_or(Time::ZERO);
        let service = match pick(
            &h.service,
            p.key("service"),
            d.map(|d| &d.service),
            dp.key("service"),
        ) {
            None => None,
            Some((s, sp)) => Some(self.service(s, &sp)?),
        };
        let voq = pick(&h.voq, p.key("voq"), d.map(|d| &d.voq), dp.key("voq"));
        let loop_src = pick(
            &h.loop_delay,
            p.key("loop_delay"),
            d.map(|d| &d.loop_delay),
            dp.key("loop_delay"),
        );
        let loop_path = loop_src.as_ref().map(|(_, lp)| lp.clone());
        let loop_delay = self.opt_time(loop_src)?.unwrap_or(Time::ZERO);
        let voq = voq.is_some_and(|(v, _)| *v);
        if loop_delay > Time::ZERO && !voq {
            return Err(self.err(
                &loop_path.expect("a loop delay was given"),
                "a loop delay sits between per-flow queues and the egress buffer: set voq = true",
            ));
        }
        Ok(HostSpec {
            egress,
            egress_high,
            egress_low,
            response_time,
            service,
            voq,
            loop_delay,
        })
    }

    fn service(&self, s: &RawService, sp: &FieldPath) -> Result<ServiceSchedule, ScenarioError> {
        let rate = s
            .rate
            .as_ref()
            .ok_or_else(|| self.err(sp, "missing field 'rate' (required)"))?;
        let rate = self.rate(rate, &sp.key("rate"))?;
        let start = s
            .start
            .as_ref()
            .map(|t| self.time(t, &sp.key("start")))
            .transpose()?
            .unwrap_or(Time::ZERO);
        let end = s
            .end
            .as_ref()
            .map(|t| self.time(t, &sp.key("end")))
            .transpose()?
            .unwrap_or(Time::MAX);
        if end <= start {
            return Err(self.err(
                &sp.key("end"),
                format!("expected end after start ({start}), found {end}"),
            ));
        }
        let periodic = match (&s.period, &s.reduced) {
            (None, None) => None,
            (Some(per), Some(red)) => {
                let per = self.time(per, &sp.key("period"))?;
                let red = self.time(red, &sp.key("reduced"))?;
                if per == Time::ZERO || red == Time::ZERO || red >= per {
                    return Err(self.err(
                        &sp.key("reduced"),
                        format!("expected 0 < reduced < period ({per}), found {red}"),
                    ));
                }
                Some((per, red))
            }
            (Some(_), None) => {
                return Err(self.err(sp, "missing field 'reduced' (required with 'period')"))
            }
            (None, Some(_)) => {
                return Err(self.err(sp, "missing field 'period' (required with 'reduced')"))
            }
        };
        Ok(ServiceSchedule {
            rate,
            start,
            end,
            periodic,
        })
    }

    fn links(
        &self,
        raw: &[Entry<RawLink>],
        defaults: &RawDefaults,
        nodes: &[NodeSpec],
        by_name: &HashMap<String, (usize, FieldPath)>,
    ) -> Result<Vec<LinkSpec>, ScenarioError> {
        let dp = FieldPath::root().key("defaults").key("link");
        let d = defaults.link.as_ref();
        let mut out = Vec::with_capacity(raw.len());
        let mut degree = vec![0usize; nodes.len()];
        let mut pairs: HashMap<(usize, usize), &FieldPath> = HashMap::new();
        for Entry { path: p, raw: l } in raw {
            let between = l
                .between
                .as_ref()
                .ok_or_else(|| self.err(p, "missing field 'between' (required: two node names)"))?;
            if between.len() != 2 {
                return Err(self.err(
                    &p.key("between"),
                    format!("expected two node names, found {}", between.len()),
                ));
            }
            let mut ends = [0usize; 2];
            for (k, n) in between.iter().enumerate() {
                ends[k] = by_name.get(n).map(|(idx, _)| *idx).ok_or_else(|| {
                    self.err(
                        &p.key("between").index(k),
                        unknown_name("node", n, by_name.keys()),
                    )
                })?;
            }
            if ends[0] == ends[1] {
                return Err(self.err(
                    &p.key("between"),
                    format!(
                        "a link needs two different nodes, found '{}' twice",
                        between[0]
                    ),
                ));
            }
            let key = (ends[0].min(ends[1]), ends[0].max(ends[1]));
            if let Some(first) = pairs.insert(key, p) {
                return Err(self.err(
                    &p.key("between"),
                    format!(
                        "duplicate link between '{}' and '{}' (first is {})",
                        between[0],
                        between[1],
                        first.describe()
                    ),
                ));
            }
            let rate = match pick(&l.rate, p.key("rate"), d.map(|d| &d.rate), dp.key("rate")) {
                Some((s, rp)) => self.rate(s, &rp)?,
                None => DEFAULT_LINK_RATE,
            };
            let delay = self
                .opt_time(pick(
                    &l.delay,
                    p.key("delay"),
                    d.map(|d| &d.delay),
                    dp.key("delay"),
                ))?
                .unwrap_or(Time::ZERO);
            for (k, &e) in ends.iter().enumerate() {
                degree[e] += 1;
                if nodes[e].is_host() && degree[e] > 1 {
                    return Err(self.err(
                        &p.key("between").index(k),
                        format!(
                            "host '{}' already has a link; a host has exactly one",
                            nodes[e].name
                        ),
                    ));
                }
            }
            out.push(LinkSpec {
                a: ends[0],
                b: ends[1],
                rate,
                delay,
            });
        }
        for (i, n) in nodes.iter().enumerate() {
            if degree[i] == 0 {
                let what = if n.is_host() { "hosts" } else { "switches" };
                let (_, path) = &by_name[&n.name];
                return Err(self.err(
                    path,
                    format!(
                        "{} '{}' is not connected: no link names it",
                        &what[..what.len() - (if n.is_host() { 1 } else { 2 })],
                        n.name
                    ),
                ));
            }
        }
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn sources(
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
            });
        }
        Ok(out)
    }

    fn host_index(
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

    fn metrics(&self, m: &RawMetrics, sc: &Scenario) -> Result<MetricsSpec, ScenarioError> {
        let mp = FieldPath::root().key("metrics");
        let mut out = MetricsSpec::default();
        if let Some(f) = &m.fairness {
            let fp = mp.key("fairness");
            let names: Vec<String> = sc.flows().into_iter().map(|f| f.name).collect();
            let flows = match &f.flows {
                None => (0..names.len()).collect(),
                Some(list) => list
                    .iter()
                    .enumerate()
                    .map(|(i, n)| {
                        names.iter().position(|k| k == n).ok_or_else(|| {
                            self.err(
                                &fp.key("flows").index(i),
                                unknown_name("flow", n, names.iter()),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            };
            if flows.is_empty() {
                return Err(self.err(&fp.key("flows"), "expected at least one flow, found none"));
            }
            let start = self.time(&f.start, &fp.key("start"))?;
            let end = self.time(&f.end, &fp.key("end"))?;
            for (t, key) in [(start, "start"), (end, "end")] {
                if t.0 % sc.bin.0 != 0 {
                    return Err(self.err(
                        &fp.key(key),
                        format!(
                            "expected a multiple of the bin width ({}), found {t}",
                            sc.bin
                        ),
                    ));
                }
            }
            if end <= start || end > sc.duration {
                return Err(self.err(
                    &fp.key("end"),
                    format!(
                        "expected a window end after start ({start}) and at most the duration ({}), found {end}",
                        sc.duration
                    ),
                ));
            }
            let target = self.rate(&f.target, &fp.key("target"))?;
            out.fairness = Some(FairnessSpec {
                flows,
                start,
                end,
                target,
            });
        }
        if let Some(st) = &m.stability {
            let sp = mp.key("stability");
            let queues = sc.queue_names();
            let queue = queues.iter().position(|q| *q == st.queue).ok_or_else(|| {
                self.err(
                    &sp.key("queue"),
                    unknown_name("queue (\"NODE->PEER\")", &st.queue, queues.iter()),
                )
            })?;
            let threshold = self.size(&st.threshold, &sp.key("threshold"))?;
            let onset = match &st.onset {
                Some(s) => self.size(s, &sp.key("onset"))?,
                None => 2 * threshold,
            };
            if onset < threshold {
                return Err(self.err(
                    &sp.key("onset"),
                    format!("expected an onset level at least the threshold ({threshold} B), found {onset} B"),
                ));
            }
            out.stability = Some(StabilitySpec {
                queue,
                threshold,
                onset,
            });
        }
        Ok(out)
    }

    fn plot(&self, plot: &RawPlot, sc: &Scenario) -> Result<PlotSpec, ScenarioError> {
        let pp = FieldPath::root().key("plot");
        let queues = sc.queue_names();
        let flows: Vec<String> = sc.flows().into_iter().map(|f| f.name).collect();
        let check = |list: &[String],
                     known: &[String],
                     key: &str,
                     what: &str|
         -> Result<(), ScenarioError> {
            for (i, n) in list.iter().enumerate() {
                if !known.contains(n) {
                    return Err(
                        self.err(&pp.key(key).index(i), unknown_name(what, n, known.iter()))
                    );
                }
            }
            Ok(())
        };
        check(&plot.links, &queues, "links", "link (\"NODE->PEER\")")?;
        check(&plot.queues, &queues, "queues", "queue (\"NODE->PEER\")")?;
        check(&plot.flows, &flows, "flows", "flow")?;
        Ok(PlotSpec {
            links: plot.links.clone(),
            flows: plot.flows.clone(),
            queues: plot.queues.clone(),
        })
    }
}

fn link_rate_of(host: usize, links: &[LinkSpec]) -> Rate {
    links
        .iter()
        .find(|l| l.a == host || l.b == host)
        .map(|l| l.rate)
        .unwrap_or(DEFAULT_LINK_RATE)
}

/// Flow names are unique: a source with several destinations names its
/// flows "SOURCE->DST", which may be another source's name (a source on A
/// sending to B and C makes "A->B", as does an unnamed source on A to B).
/// Results are joined by flow name, so a clash would mix two flows.
fn check_flow_names(
    b: &Builder,
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
    let mut seen: HashMap<String, (usize, usize)> = HashMap::new();
    for (i, s) in sources.iter().enumerate() {
        for (k, &d) in s.dsts.iter().enumerate() {
            let name = s.flow_name(&nodes[d].name);
            if let Some((fi, fk)) = seen.insert(name.clone(), (i, k)) {
                return Err(b.err(
                    &path(i, k),
                    format!(
                        "duplicate flow name '{name}': the flow of {} has it too; name the sources so that their flows differ",
                        b.loc.describe_at(&path(fi, fk))
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Every source must reach each of its destinations through switches only.
/// `raw` are the entries the sources were built from, one each. Linear in
/// the topology: the routing table (a row per switch, a column per host)
/// is only built for a run, whose memory estimate counts it.
fn check_connectivity(
    b: &Builder,
    nodes: &[NodeSpec],
    links: &[LinkSpec],
    sources: &[SourceSpec],
    raw: &[Entry<RawSource>],
) -> Result<(), ScenarioError> {
    let table = crate::net::routing::Reach::compute(nodes, links);
    for (s, entry) in sources.iter().zip(raw) {
        for (k, &d) in s.dsts.iter().enumerate() {
            if !table.reachable(s.host, d) {
                let p = entry.path.key("to");
                let p = if s.dsts.len() > 1 { p.index(k) } else { p };
                return Err(b.err(
                    &p,
                    format!(
                        "host '{}' cannot reach '{}': no path through switches",
                        nodes[s.host].name, nodes[d].name
                    ),
                ));
            }
        }
    }
    Ok(())
}
