//! Partitions of a run: which switches (with their hosts) one part of a
//! split run simulates. A run split into partitions gives the same results
//! as one run (docs/parallel.md); the partitioning only decides the speed.

use crate::scenario::spec::Scenario;

/// An assignment of nodes to partitions.
#[derive(Debug, Clone)]
pub struct Partitioning {
    /// The rule's name, for reports.
    pub rule: String,
    /// Per node (scenario order): its partition.
    pub node_part: Vec<u32>,
    /// Per partition: a name.
    pub names: Vec<String>,
}

/// Where a fat tree's core switches go when partitioning by pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FatTreeRule {
    /// Pod p: its edge and aggregation switches and their hosts; core
    /// `C{a}.{j}` (number c = (a−1)·k/2 + j−1) with pod (c mod k) + 1,
    /// which holds one of its neighbours, `A{p}.{a}`.
    PodCoresSpread,
    /// Pods as above, every core switch in one partition of their own
    /// (the last).
    PodCoresOwn,
    /// Edge switch `E{p}.{e}` with its hosts; aggregation `A{p}.{a}` with
    /// `E{p}.{a}`; core `C{a}.{j}` with `A{p}.{a}` for p = (c mod k) + 1 as
    /// above.
    Edge,
}

impl FatTreeRule {
    pub fn name(self) -> &'static str {
        match self {
            FatTreeRule::PodCoresSpread => "pod (cores spread)",
            FatTreeRule::PodCoresOwn => "pod (cores apart)",
            FatTreeRule::Edge => "edge switch",
        }
    }
}

/// The numbers of a generated fat-tree name: `E1.2` → ('E', [1, 2]).
fn fat_tree_name(name: &str) -> Option<(char, Vec<usize>)> {
    let mut chars = name.chars();
    let c = chars.next()?;
    let nums: Option<Vec<usize>> = chars.as_str().split('.').map(|s| s.parse().ok()).collect();
    Some((c, nums?))
}

impl Partitioning {
    /// Every node in one partition.
    pub fn single(sc: &Scenario) -> Partitioning {
        Partitioning {
            rule: "single".into(),
            node_part: vec![0; sc.nodes.len()],
            names: vec!["all".into()],
        }
    }

    /// Partitions given by name: `groups[i]` lists the nodes of partition i.
    pub fn by_names(sc: &Scenario, groups: &[&[&str]]) -> Result<Partitioning, String> {
        let mut node_part = vec![u32::MAX; sc.nodes.len()];
        for (i, g) in groups.iter().enumerate() {
            for name in g.iter() {
                let n = sc
                    .nodes
                    .iter()
                    .position(|n| n.name == *name)
                    .ok_or_else(|| format!("no node '{name}'"))?;
                node_part[n] = i as u32;
            }
        }
        if let Some(n) = node_part.iter().position(|&p| p == u32::MAX) {
            return Err(format!("node '{}' is in no partition", sc.nodes[n].name));
        }
        Ok(Partitioning {
            rule: "by name".into(),
            node_part,
            names: (1..=groups.len()).map(|i| format!("P{i}")).collect(),
        })
    }

    /// A generated fat tree (`[topology] kind = "fat_tree"`, names as in
    /// `scenario::topology`) split by `rule`.
    pub fn fat_tree(sc: &Scenario, rule: FatTreeRule) -> Result<Partitioning, String> {
        let parsed: Vec<(char, Vec<usize>)> = sc
            .nodes
            .iter()
            .map(|n| {
                fat_tree_name(&n.name)
                    .filter(|(c, v)| match c {
                        'H' => v.len() == 3,
                        'E' | 'A' | 'C' => v.len() == 2,
                        _ => false,
                    })
                    .ok_or_else(|| format!("'{}' is not a generated fat-tree name", n.name))
            })
            .collect::<Result<_, _>>()?;
        let k = parsed
            .iter()
            .filter(|(c, _)| *c == 'E')
            .map(|(_, v)| v[0])
            .max()
            .ok_or("no edge switches")?;
        let half = k / 2;
        let core_pod = |a: usize, j: usize| ((a - 1) * half + (j - 1)) % k + 1;
        let edge_part = |p: usize, e: usize| ((p - 1) * half + (e - 1)) as u32;
        let (node_part, names): (Vec<u32>, Vec<String>) = match rule {
            FatTreeRule::PodCoresSpread | FatTreeRule::PodCoresOwn => {
                let own = rule == FatTreeRule::PodCoresOwn;
                let part = parsed
                    .iter()
                    .map(|(c, v)| match c {
                        'C' if own => k as u32,
                        'C' => (core_pod(v[0], v[1]) - 1) as u32,
                        _ => (v[0] - 1) as u32,
                    })
                    .collect();
                let mut names: Vec<String> = (1..=k).map(|p| format!("pod {p}")).collect();
                if own {
                    names.push("cores".into());
                }
                (part, names)
            }
            FatTreeRule::Edge => {
                let part = parsed
                    .iter()
                    .map(|(c, v)| match c {
                        'C' => edge_part(core_pod(v[0], v[1]), v[0]),
                        _ => edge_part(v[0], v[1]),
                    })
                    .collect();
                let names = (1..=k)
                    .flat_map(|p| (1..=half).map(move |e| format!("E{p}.{e}")))
                    .collect();
                (part, names)
            }
        };
        if node_part.iter().any(|&p| p as usize >= names.len()) {
            return Err("the nodes do not form a fat tree of the generated shape".into());
        }
        Ok(Partitioning {
            rule: rule.name().into(),
            node_part,
            names,
        })
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

impl Partitioning {
    /// Up to `parts` partitions chosen for locality: a generated fat tree by
    /// pods (cores spread over them), pods grouped into `parts`; any other
    /// topology in blocks of switches in breadth-first order, of about
    /// equal weight (a switch and its hosts), hosts with their first switch.
    pub fn automatic(sc: &Scenario, parts: usize) -> Partitioning {
        let parts = parts.max(1);
        if let Ok(pods) = Partitioning::fat_tree(sc, FatTreeRule::PodCoresSpread) {
            let k = pods.len();
            let parts = parts.min(k);
            return Partitioning {
                rule: format!("fat-tree pods, {parts} groups"),
                node_part: pods
                    .node_part
                    .iter()
                    .map(|&p| (p as usize * parts / k) as u32)
                    .collect(),
                names: (1..=parts).map(|i| format!("P{i}")).collect(),
            };
        }
        let n = sc.nodes.len();
        let mut adj = vec![Vec::new(); n];
        for l in &sc.links {
            adj[l.a].push(l.b);
            adj[l.b].push(l.a);
        }
        // Breadth-first over switches from the first, component by component.
        let mut order = Vec::new();
        let mut seen = vec![false; n];
        for s0 in 0..n {
            if seen[s0] || sc.nodes[s0].is_host() {
                continue;
            }
            seen[s0] = true;
            let mut q = std::collections::VecDeque::from([s0]);
            while let Some(u) = q.pop_front() {
                order.push(u);
                for &v in &adj[u] {
                    if !seen[v] && !sc.nodes[v].is_host() {
                        seen[v] = true;
                        q.push_back(v);
                    }
                }
            }
        }
        let weight = |u: usize| 1 + adj[u].iter().filter(|&&v| sc.nodes[v].is_host()).count();
        let total: usize = order.iter().map(|&u| weight(u)).sum();
        let parts = parts.min(order.len().max(1));
        let mut node_part = vec![0u32; n];
        let mut acc = 0;
        for &u in &order {
            node_part[u] = ((acc * parts) / total.max(1)) as u32;
            acc += weight(u);
        }
        for h in 0..n {
            if sc.nodes[h].is_host() {
                node_part[h] = adj[h].first().map_or(0, |&s| node_part[s]);
            }
        }
        Partitioning {
            rule: format!("switch blocks, {parts}"),
            node_part,
            names: (1..=parts).map(|i| format!("P{i}")).collect(),
        }
    }
}

/// One partition's view of a split run: which nodes it simulates, and
/// what it has sent to the others since the last window's end.
pub(super) struct Part {
    pub me: u32,
    /// Per node: its partition.
    pub node_part: std::sync::Arc<[u32]>,
    pub outbox: Vec<Message>,
}

/// What one partition hands another at a window's end. Every crossing is
/// carried by a link between two switches (docs/parallel.md), so it takes
/// effect at least a window later.
pub(super) enum Message {
    /// A frame whose last bit left the sender: it arrives at `port` at `at`.
    Frame {
        port: u32,
        at: crate::units::Time,
        frame: crate::net::frame::Frame,
    },
    /// A PAUSE or PFC frame taking effect at its receiving port.
    Event {
        at: crate::units::Time,
        event: super::event::Event,
    },
    /// The record of an E2CM probe (or reflected probe) that crosses to
    /// `port` in the same window, as the sending partition kept it. Boxed:
    /// the record is larger than any other message, and few frames are
    /// probes.
    Probe {
        port: u32,
        flow: u32,
        index: u32,
        record: Box<crate::cm::e2cm::ProbeRecord>,
    },
}

// Crossing frames are copied twice per window: keep messages small.
const _: () = assert!(std::mem::size_of::<Message>() <= 48);

impl Message {
    /// The receiving port: its node's partition takes the message.
    pub(super) fn port(&self) -> u32 {
        match self {
            Message::Frame { port, .. } | Message::Probe { port, .. } => *port,
            Message::Event {
                event:
                    super::event::Event::PauseRx { port, .. } | super::event::Event::PfcRx { port, .. },
                ..
            } => *port,
            Message::Event { .. } => {
                unreachable!("only PAUSE and PFC frames cross without a link's frame")
            }
        }
    }
}
