//! What `cnsim validate` shows of a resolved scenario.

use super::budget::memory_estimate;
use super::spec::Scenario;

impl Scenario {
    /// A short description with names resolved: what `cnsim validate` shows.
    pub fn describe(&self) -> serde_json::Value {
        let node_name = |i: usize| self.nodes[i].name.clone();
        serde_json::json!({
            "name": self.name,
            "duration_s": self.duration.as_secs_f64(),
            "seed": self.seed,
            "bin_s": self.bin.as_secs_f64(),
            "nodes": self.nodes.iter().map(|n| serde_json::json!({
                "name": n.name,
                "kind": if n.is_host() { "host" } else { "switch" },
            })).collect::<Vec<_>>(),
            "links": self.links.iter().map(|l| serde_json::json!({
                "a": node_name(l.a), "b": node_name(l.b),
                "rate_bps": l.rate.0, "delay_s": l.delay.as_secs_f64(),
            })).collect::<Vec<_>>(),
            "flows": self.flows().iter().map(|f| serde_json::json!({
                "name": f.name, "source": self.sources[f.source].name,
                "src": node_name(f.src), "dst": node_name(f.dst),
            })).collect::<Vec<_>>(),
            "queues": self.queue_names(),
            "plot": self.plot,
            "sweep": self.sweep,
            "memory_estimate_bytes": memory_estimate(self),
        })
    }
}
