//! What `cnsim validate` shows of a resolved scenario.

use super::budget::memory_estimate;
use super::spec::{NodeKind, Scenario, SwitchSpec};
use serde_json::{json, Value};

impl Scenario {
    /// A short description with names resolved: what `cnsim validate` shows.
    pub fn describe(&self) -> serde_json::Value {
        let node_name = |i: usize| self.nodes[i].name.clone();
        serde_json::json!({
            "name": self.name,
            "duration_s": self.duration.as_secs_f64(),
            "seed": self.seed,
            "bin_s": self.bin.as_secs_f64(),
            "nodes": self.nodes.iter().enumerate().map(|(i, n)| match &n.kind {
                NodeKind::Host(_) => json!({"name": n.name, "kind": "host"}),
                NodeKind::Switch(s) => json!({
                    "name": n.name, "kind": "switch", "switch": self.describe_switch(i, s),
                }),
            }).collect::<Vec<_>>(),
            "priorities": self.priorities,
            "links": self.links.iter().map(|l| serde_json::json!({
                "a": node_name(l.a), "b": node_name(l.b),
                "rate_bps": l.rate.0, "delay_s": l.delay.as_secs_f64(),
            })).collect::<Vec<_>>(),
            "flows": self.flows().iter().map(|f| serde_json::json!({
                "name": f.name,
                "source": match f.origin {
                    super::spec::FlowOrigin::Source(s) => self.sources[s].name.as_str(),
                    super::spec::FlowOrigin::Workload { .. } => unreachable!("the sources' flows"),
                },
                "src": node_name(f.src), "dst": node_name(f.dst),
            })).collect::<Vec<_>>(),
            "workloads": self.describe_workloads(),
            "queues": self.queue_names(),
            "plot": self.plot,
            "sweep": self.sweep,
            "memory_estimate_bytes": memory_estimate(self),
        })
    }

    /// Each workload: kind, transport, frame and class, and the flows
    /// the scenario's seed draws (count, bytes, first and last start).
    fn describe_workloads(&self) -> Vec<Value> {
        use crate::traffic::workload::Arrivals;
        let line = |h: usize| self.host_rate(h);
        self.workloads
            .iter()
            .map(|w| {
                let flows = w.flows(self.seed, &line);
                let kind = match &w.arrivals {
                    Arrivals::Poisson { .. } => "poisson",
                    Arrivals::Incast { .. } => "incast",
                    Arrivals::List { .. } => "list",
                };
                let mut v = json!({
                    "name": w.name, "kind": kind, "transport": w.transport,
                    "frame_bytes": w.frame, "priority": w.priority,
                    "flows": flows.len(),
                    "bytes": flows.iter().map(|f| f.size).sum::<u64>(),
                    "first_start_s": flows.first().map(|f| f.start.as_secs_f64()),
                    "last_start_s": flows.last().map(|f| f.start.as_secs_f64()),
                });
                if let Arrivals::Poisson {
                    sizes, load, hosts, ..
                } = &w.arrivals
                {
                    v["load"] = json!(load);
                    v["hosts"] = json!(hosts.len());
                    v["mean_size_bytes"] = json!(sizes.mean());
                }
                v
            })
            .collect()
    }

    /// A switch's resolved settings (sizes in bytes, times in seconds), with
    /// names for indices: PFC's classes, the computed headroom per port (by
    /// peer) and the static routes.
    fn describe_switch(&self, node: usize, s: &SwitchSpec) -> Value {
        let mut v = serde_json::to_value(s).expect("specs serialize");
        let name = |i: usize| self.nodes[i].name.clone();
        let o = v.as_object_mut().expect("a switch is a table");
        o.remove("latency");
        o.remove("response_time");
        o.insert("latency_s".into(), json!(s.latency.as_secs_f64()));
        o.insert(
            "response_time_s".into(),
            json!(s.response_time.as_secs_f64()),
        );
        if let Some(pfc) = &s.pfc {
            let classes: Vec<u8> = (0..8).filter(|c| pfc.classes & (1 << c) != 0).collect();
            v["pfc"]["classes"] = json!(classes);
        }
        if let Some(shared) = &s.shared {
            let peers = crate::net::topology::neighbours(&self.links, node);
            v["shared"]["headroom"] = peers
                .zip(&shared.headroom)
                .map(|(peer, bytes)| json!({"peer": name(peer), "bytes": bytes.0}))
                .collect();
        }
        if !s.routes.is_empty() {
            v["routes"] = s
                .routes
                .iter()
                .map(|r| json!({"to": r.hosts.iter().map(|&h| name(h)).collect::<Vec<_>>(), "via": name(r.via)}))
                .collect();
        }
        v
    }
}
