//! The network sections: switches (buffers, PAUSE), hosts (adapters,
//! service schedules), links, the watchdog, and the checks that need the
//! whole topology (connectivity, buffers against frame sizes).

use super::build::{pick, Builder, DEFAULT_LINK_RATE, FRAME_RANGE};
use super::entry::Entry;
use super::error::{unknown_name, FieldPath, ScenarioError};
use super::schema::*;
use super::spec::*;
use crate::flowctl::watchdog::WatchdogSpec;
use crate::units::Time;
use std::collections::HashMap;

impl Builder<'_> {
    /// A switch buffer holds at least the largest frame a source sends:
    /// a smaller one would drop every such frame.
    pub(super) fn check_switch_buffers(
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

    pub(super) fn switch(
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
            (Some(BufferModelKind::Shared), Some(b)) => BufferModel::Shared { bytes: b },
            (Some(_), None) => {
                return Err(self.err(
                    &model.unwrap().1,
                    "this buffer model needs a 'buffer' size (e.g. buffer = \"150KB\")",
                ));
            }
        };
        if let BufferModel::PerOutput { bytes }
        | BufferModel::PerInput { bytes }
        | BufferModel::Shared { bytes } = buffer
        {
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
        let is_shared = matches!(buffer, BufferModel::Shared { .. });
        let pfc = match pick(&sw.pfc, p.key("pfc"), d.map(|d| &d.pfc), dp.key("pfc")) {
            None => None,
            Some((raw, pp)) => Some(self.pfc(raw, &pp, is_shared)?),
        };
        // The shared buffer's settings are resolved once the links and
        // sources are known (`shared_buffers`).
        if let (false, Some((_, mp))) = (
            is_shared,
            pick(&sw.mmu, p.key("mmu"), d.map(|d| &d.mmu), dp.key("mmu")),
        ) {
            return Err(self.err(&mp, "an mmu table needs buffer_model = \"shared\""));
        }
        if is_shared && pause.is_some() {
            return Err(self.err(
                &p.key("pause"),
                "a shared-buffer switch pauses per class: use a pfc table (pfc = { classes = [0] } is PAUSE for one class)",
            ));
        }
        let ecn = match pick(&sw.ecn, p.key("ecn"), d.map(|d| &d.ecn), dp.key("ecn")) {
            None => None,
            Some((raw, ep)) => Some(self.ecn(raw, &ep)?),
        };
        if pfc.is_some() && pause.is_some() {
            return Err(self.err(
                &p.key("pfc"),
                "a switch sends 802.3x PAUSE or PFC, not both: remove 'pause' or set pause.mode = \"off\"",
            ));
        }
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
            pfc,
            ecn,
            shared: None,
            congestion_point,
            routes: Vec::new(),
            schedulers: Vec::new(),
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

    pub(super) fn pause(
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

    pub(super) fn host(
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
        let limiter_jitter = match pick(
            &h.limiter_jitter,
            p.key("limiter_jitter"),
            d.map(|d| &d.limiter_jitter),
            dp.key("limiter_jitter"),
        ) {
            None => 0.0,
            Some((&j, _)) if (0.0..1.0).contains(&j) => j,
            Some((&j, jp)) => {
                return Err(self.err(&jp, format!("expected a fraction in [0, 1), found {j}")))
            }
        };
        Ok(HostSpec {
            egress,
            egress_high,
            egress_low,
            response_time,
            service,
            voq,
            loop_delay,
            limiter_jitter,
        })
    }

    pub(super) fn service(
        &self,
        s: &RawService,
        sp: &FieldPath,
    ) -> Result<ServiceSchedule, ScenarioError> {
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

    pub(super) fn links(
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

    /// Resolves each switch's `routes` (hosts, a neighbouring switch) into
    /// its spec, then refuses a forwarding loop they create, naming the
    /// switches on it. Frames on a loop would circle for ever (Ethernet has
    /// no hop limit); a detour that ends at the host (a "bounce" through a
    /// lower tier) is fine.
    pub(super) fn static_routes(
        &self,
        nodes: &mut [NodeSpec],
        links: &[LinkSpec],
        switches: &[Entry<RawSwitch>],
        by_name: &HashMap<String, (usize, FieldPath)>,
    ) -> Result<(), ScenarioError> {
        // Where each (switch, host) route was given, for the loop's message.
        let mut given: HashMap<(usize, usize), FieldPath> = HashMap::new();
        for (n, Entry { path: p, raw: sw }) in switches.iter().enumerate() {
            let Some(raw) = &sw.routes else { continue };
            let mut routes = Vec::with_capacity(raw.len());
            for (k, r) in raw.iter().enumerate() {
                let rp = p.key("routes").index(k);
                let to = r.to.as_ref().ok_or_else(|| {
                    self.err(&rp, "missing field 'to' (the hosts this route leads to)")
                })?;
                let via = r.via.as_ref().ok_or_else(|| {
                    self.err(
                        &rp,
                        "missing field 'via' (the neighbouring switch to send to)",
                    )
                })?;
                let names: Vec<(&String, FieldPath)> = match to {
                    Destinations::One(h) => vec![(h, rp.key("to"))],
                    Destinations::Many(list) => list
                        .iter()
                        .enumerate()
                        .map(|(j, h)| (h, rp.key("to").index(j)))
                        .collect(),
                };
                let mut hosts = Vec::with_capacity(names.len());
                for (h, hp) in names {
                    let host = self.host_index(h, &hp, nodes, by_name)?;
                    if let Some(first) = given.insert((n, host), hp.clone()) {
                        return Err(self.err(
                            &hp,
                            format!("a second route toward '{h}' (the first is {first})"),
                        ));
                    }
                    hosts.push(host);
                }
                let linked =
                    || crate::net::topology::neighbours(links, n).filter(|&v| !nodes[v].is_host());
                let neighbour = linked().find(|&v| nodes[v].name == *via);
                let Some(via) = neighbour else {
                    let linked: Vec<&str> = linked().map(|v| nodes[v].name.as_str()).collect();
                    return Err(self.err(
                        &rp.key("via"),
                        format!(
                            "expected a switch linked to '{}' ({}), found '{via}'",
                            nodes[n].name,
                            if linked.is_empty() {
                                "none is".to_string()
                            } else {
                                linked.join(", ")
                            }
                        ),
                    ));
                };
                routes.push(StaticRoute { hosts, via });
            }
            let NodeKind::Switch(spec) = &mut nodes[n].kind else {
                unreachable!("switches come first among the nodes")
            };
            spec.routes = routes;
        }
        if given.is_empty() {
            return Ok(());
        }
        let table = crate::net::routing::Routes::compute(nodes, links);
        let mut hosts: Vec<usize> = given.keys().map(|&(_, h)| h).collect();
        hosts.sort_unstable();
        hosts.dedup();
        for h in hosts {
            if let Some(cycle) = table.find_loop(links, h) {
                let at = cycle
                    .iter()
                    .find_map(|&s| given.get(&(s, h)))
                    .expect("only static routes make loops");
                let path: Vec<&str> = cycle.iter().map(|&s| nodes[s].name.as_str()).collect();
                return Err(self.err(
                    at,
                    format!(
                        "frames toward '{}' would loop for ever: {}",
                        nodes[h].name,
                        path.join(" -> ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Every source must reach each of its destinations through switches only.
    /// `raw` are the entries the sources were built from, one each. Linear in
    /// the topology: the routing table (a row per switch, a column per host)
    /// is only built for a run, whose memory estimate counts it.
    pub(super) fn check_connectivity(
        &self,
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
                    return Err(self.err(
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
}
