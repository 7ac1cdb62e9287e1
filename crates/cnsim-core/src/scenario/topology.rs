//! Generated topologies. `[topology]` with `kind = "fat_tree"`,
//! `"leaf_spine"` or `"star"` stands for switches, hosts and links named by
//! their position, 1-based like `repeat` copies, so that replicated
//! `[[sources]]` can address them:
//!
//! * fat tree (k even): hosts `H{p}.{e}.{h}`, edge switches `E{p}.{e}`,
//!   aggregation switches `A{p}.{a}` (p = 1..k, e, a, h = 1..k/2), cores
//!   `C{a}.{j}` (a, j = 1..k/2); edge e of pod p links to every `A{p}.*`,
//!   aggregation a of every pod to the cores `C{a}.*`;
//! * leaf-spine: hosts `H{l}.{h}`, leaves `L{l}`, spines `S{s}`, every leaf
//!   linked to every spine;
//! * star: the switch `SW` and hosts `H{i}`.
//!
//! Generation is part of `Builder::expand`: the entries made here come
//! before the file's own `[[switches]]`, `[[hosts]]` and `[[links]]` and go
//! through the same defaults and validation. Their errors are located at
//! `[topology]` and name the entry ("(generated entry 'E1.2')").

use super::build::Builder;
use super::entry::{Entry, MAX_ENTRIES};
use super::error::{FieldPath, ScenarioError};
use super::repeat::unknown_param;
use super::schema::*;
use serde_json::Value;
use std::collections::BTreeMap;

/// The entries a `[topology]` makes, in the order they are listed: for a
/// fat tree the edge, aggregation and core switches, the hosts, then the
/// host, edge–aggregation and aggregation–core links.
#[derive(Default)]
pub(super) struct Generated {
    pub switches: Vec<Entry<RawSwitch>>,
    pub hosts: Vec<Entry<RawHost>>,
    pub links: Vec<Entry<RawLink>>,
}

impl Generated {
    fn switch(&mut self, tp: &FieldPath, name: String) {
        self.switches.push(Entry {
            path: tp.generated(&name),
            raw: RawSwitch {
                name: Some(name),
                ..RawSwitch::default()
            },
        });
    }

    fn host(&mut self, tp: &FieldPath, name: String) {
        self.hosts.push(Entry {
            path: tp.generated(&name),
            raw: RawHost {
                name: Some(name),
                ..RawHost::default()
            },
        });
    }

    fn link(&mut self, tp: &FieldPath, a: String, b: String) {
        self.links.push(Entry {
            path: tp.generated(&format!("[{a}, {b}]")),
            raw: RawLink {
                between: Some(vec![a, b]),
                ..RawLink::default()
            },
        });
    }
}

/// What a size field must be.
#[derive(Clone, Copy)]
enum Rule {
    EvenAtLeast2,
    AtLeast1,
}

impl Rule {
    fn expected(self) -> &'static str {
        match self {
            Rule::EvenAtLeast2 => "an even integer >= 2",
            Rule::AtLeast1 => "an integer >= 1",
        }
    }
    fn holds(self, n: u64) -> bool {
        match self {
            Rule::EvenAtLeast2 => n >= 2 && n % 2 == 0,
            Rule::AtLeast1 => n >= 1,
        }
    }
}

impl Builder<'_> {
    /// The entries of `[topology]` (none without one). `total` counts the
    /// entries of the scenario so far, against `MAX_ENTRIES`.
    pub(super) fn topology(
        &self,
        raw: Option<&RawTopology>,
        params: &BTreeMap<String, u64>,
        total: &mut u64,
    ) -> Result<Generated, ScenarioError> {
        let Some(t) = raw else {
            return Ok(Generated::default());
        };
        let tp = FieldPath::root().key("topology");
        let takes: &[&str] = match t.kind {
            TopologyKind::FatTree => &["k"],
            TopologyKind::LeafSpine => &["leaves", "spines", "hosts_per_leaf"],
            TopologyKind::Star => &["n"],
        };
        let given = [
            ("k", &t.k),
            ("leaves", &t.leaves),
            ("spines", &t.spines),
            ("hosts_per_leaf", &t.hosts_per_leaf),
            ("n", &t.n),
        ];
        for (key, v) in given {
            if v.is_some() && !takes.contains(&key) {
                let list: Vec<String> = takes.iter().map(|k| format!("'{k}'")).collect();
                return Err(self.err(
                    &tp.key(key),
                    format!(
                        "'{key}' does not apply to kind = \"{}\", which takes {}",
                        t.kind.name(),
                        list.join(", ")
                    ),
                ));
            }
        }
        let size = |v: &Option<Value>, key: &str, rule: Rule| {
            self.topology_size(v, key, rule, t.kind, &tp, params)
        };
        let mut g = Generated::default();
        match t.kind {
            TopologyKind::FatTree => {
                let k = size(&t.k, "k", Rule::EvenAtLeast2)?;
                let half = k / 2;
                // k³/4 hosts, 5k²/4 switches, 3k³/4 links.
                let hosts = k.saturating_mul(k).saturating_mul(k) / 4;
                let switches = (k.saturating_mul(k) / 4).saturating_mul(5);
                let links = hosts.saturating_mul(3);
                self.count(hosts, switches, links, &tp.key("k"), total)?;
                for p in 1..=k {
                    for e in 1..=half {
                        g.switch(&tp, format!("E{p}.{e}"));
                    }
                }
                for p in 1..=k {
                    for a in 1..=half {
                        g.switch(&tp, format!("A{p}.{a}"));
                    }
                }
                for a in 1..=half {
                    for j in 1..=half {
                        g.switch(&tp, format!("C{a}.{j}"));
                    }
                }
                for p in 1..=k {
                    for e in 1..=half {
                        for h in 1..=half {
                            g.host(&tp, format!("H{p}.{e}.{h}"));
                            g.link(&tp, format!("H{p}.{e}.{h}"), format!("E{p}.{e}"));
                        }
                    }
                }
                for p in 1..=k {
                    for e in 1..=half {
                        for a in 1..=half {
                            g.link(&tp, format!("E{p}.{e}"), format!("A{p}.{a}"));
                        }
                    }
                }
                for p in 1..=k {
                    for a in 1..=half {
                        for j in 1..=half {
                            g.link(&tp, format!("A{p}.{a}"), format!("C{a}.{j}"));
                        }
                    }
                }
            }
            TopologyKind::LeafSpine => {
                let leaves = size(&t.leaves, "leaves", Rule::AtLeast1)?;
                let spines = size(&t.spines, "spines", Rule::AtLeast1)?;
                let per_leaf = size(&t.hosts_per_leaf, "hosts_per_leaf", Rule::AtLeast1)?;
                let hosts = leaves.saturating_mul(per_leaf);
                let links = hosts.saturating_add(leaves.saturating_mul(spines));
                self.count(hosts, leaves.saturating_add(spines), links, &tp, total)?;
                for l in 1..=leaves {
                    g.switch(&tp, format!("L{l}"));
                }
                for s in 1..=spines {
                    g.switch(&tp, format!("S{s}"));
                }
                for l in 1..=leaves {
                    for h in 1..=per_leaf {
                        g.host(&tp, format!("H{l}.{h}"));
                        g.link(&tp, format!("H{l}.{h}"), format!("L{l}"));
                    }
                }
                for l in 1..=leaves {
                    for s in 1..=spines {
                        g.link(&tp, format!("L{l}"), format!("S{s}"));
                    }
                }
            }
            TopologyKind::Star => {
                let n = size(&t.n, "n", Rule::AtLeast1)?;
                self.count(n, 1, n, &tp.key("n"), total)?;
                g.switch(&tp, "SW".to_string());
                for i in 1..=n {
                    g.host(&tp, format!("H{i}"));
                    g.link(&tp, format!("H{i}"), "SW".to_string());
                }
            }
        }
        Ok(g)
    }

    /// A size of the topology: an integer, or the name of one in `[params]`.
    fn topology_size(
        &self,
        v: &Option<Value>,
        key: &str,
        rule: Rule,
        kind: TopologyKind,
        tp: &FieldPath,
        params: &BTreeMap<String, u64>,
    ) -> Result<u64, ScenarioError> {
        let fp = tp.key(key);
        let Some(v) = v else {
            return Err(self.err(
                tp,
                format!(
                    "missing field '{key}' (required for kind = \"{}\")",
                    kind.name()
                ),
            ));
        };
        let (n, param) = match v {
            Value::String(name) => match params.get(name) {
                Some(&n) => (n, Some(name)),
                None => return Err(self.err(&fp, unknown_param(name, params))),
            },
            v => match v.as_u64() {
                Some(n) => (n, None),
                None => {
                    return Err(self.err(
                        &fp,
                        format!(
                            "expected {} or a parameter name, found {v}",
                            rule.expected()
                        ),
                    ))
                }
            },
        };
        if !rule.holds(n) {
            let from = param.map_or(String::new(), |p| format!(" (parameter '{p}')"));
            return Err(self.err(
                &fp,
                format!("expected {}, found {n}{from}", rule.expected()),
            ));
        }
        Ok(n)
    }

    /// Adds the topology's entries to `total`, refusing more than `MAX_ENTRIES`.
    fn count(
        &self,
        hosts: u64,
        switches: u64,
        links: u64,
        p: &FieldPath,
        total: &mut u64,
    ) -> Result<(), ScenarioError> {
        let made = hosts.saturating_add(switches).saturating_add(links);
        *total = total.saturating_add(made);
        if *total > MAX_ENTRIES {
            return Err(self.err(
                p,
                format!(
                    "expected at most {MAX_ENTRIES} entries in the scenario, found more (the topology makes {made}: {switches} switches, {hosts} hosts, {links} links)"
                ),
            ));
        }
        Ok(())
    }
}
