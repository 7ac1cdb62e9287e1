//! Shortest-path routing with equal-cost multipath (ECMP), computed once
//! before the run.
//!
//! Ports are numbered by link: link i has port 2i at its `a` end (toward `b`)
//! and port 2i+1 at its `b` end. Hosts never carry transit traffic. A switch
//! keeps, for each destination host, every port on a shortest path (in port
//! order). With one such port that is the route; with several (an ECMP
//! group) each flow takes the port picked by a hash of its flow id and the
//! switch's node id, so all frames of a flow follow one path, the same in
//! every run and with every seed, while different flows spread over the
//! group.
//!
//! A switch's static routes (`SwitchSpec::routes`) then replace its entries
//! toward the hosts they name with the one port toward their `via`
//! neighbour; `Routes::find_loop` finds a forwarding loop they create.
//!
//! The table has a row for every node up to the last switch (a scenario
//! lists its switches first, so that is one row per switch): a host's
//! route is its only port, and the engine asks the table at switches only.
//! Its columns are destination classes, not hosts: the hosts behind one
//! switch have the same routes everywhere but at that switch (where each
//! has its own port, `DIRECT`), so they share a column unless a static
//! route names one of them. A fat tree's table shrinks by the hosts per
//! edge switch, and stays in the caches (a read per switch hop).

use super::topology::{LinkSpec, NodeKind, NodeSpec};
use std::collections::{HashMap, VecDeque};

pub const NO_ROUTE: u32 = u32::MAX;

/// Set in a table entry that names an ECMP group (its offset in `groups`)
/// instead of a port. Port numbers stay far below it (2 per link).
const ECMP: u32 = 1 << 31;

/// A table entry at a host's peer switch: the port is the host's own
/// (`Routes::host_port`). It has the ECMP bit, so one test keeps it and
/// `NO_ROUTE` off the common path.
const DIRECT: u32 = NO_ROUTE - 1;

pub struct Routes {
    /// Columns of `next`: destination classes.
    n_classes: usize,
    /// host number of each node (`u32::MAX` for switches)
    host_of: Vec<u32>,
    /// Per host number: the node at the other end of its link.
    host_peer: Vec<u32>,
    /// Per host number: its destination class, the column of `next`.
    class_of: Vec<u32>,
    /// Per host number: the port of its peer switch toward it.
    host_port: Vec<u32>,
    /// Rows of `next`: every node below this index has one.
    rows: usize,
    /// next[node * n_classes + class]: a port, `ECMP | offset` of a group
    /// in `groups`, `DIRECT` (the host's own port, `host_port`), or
    /// `NO_ROUTE`.
    next: Vec<u32>,
    /// ECMP groups, each stored once: its size, then its ports in port order.
    groups: Vec<u32>,
}

/// Ports of each node, in port order: (port id, peer node).
pub fn adjacency(n_nodes: usize, links: &[LinkSpec]) -> Vec<Vec<(u32, usize)>> {
    let mut adj = vec![Vec::new(); n_nodes];
    for (i, l) in links.iter().enumerate() {
        adj[l.a].push((2 * i as u32, l.b));
        adj[l.b].push((2 * i as u32 + 1, l.a));
    }
    adj
}

/// The SplitMix64 finalizer: a cheap, well-mixed 64-bit hash.
#[inline]
fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Which member of an ECMP group of `size` ports flow `flow` takes at node
/// `node`. The node is in the hash so that successive switches choose
/// independently (no polarization: a flow's choice at the aggregation layer
/// does not follow from its choice at the edge).
#[inline]
pub fn ecmp_member(flow: u32, node: usize, size: u32) -> u32 {
    (mix64(((flow as u64) << 32) | (node as u64 & 0xffff_ffff)) % size as u64) as u32
}

impl Routes {
    pub fn compute(nodes: &[NodeSpec], links: &[LinkSpec]) -> Routes {
        let n = nodes.len();
        let adj = adjacency(n, links);
        let mut host_of = vec![u32::MAX; n];
        let mut host_node = Vec::new();
        let mut host_peer = Vec::new();
        for (i, node) in nodes.iter().enumerate() {
            if node.is_host() {
                host_of[i] = host_node.len() as u32;
                host_node.push(i as u32);
                host_peer.push(adj[i].first().map_or(u32::MAX, |&(_, v)| v as u32));
            }
        }
        let n_hosts = host_node.len();
        let rows = table_rows(nodes);

        // Destination classes: the hosts behind one switch share a column,
        // except the hosts some static route names, which have their own.
        let mut named = vec![false; n_hosts];
        for node in nodes {
            if let NodeKind::Switch(s) = &node.kind {
                for r in &s.routes {
                    for &h in &r.hosts {
                        named[host_of[h] as usize] = true;
                    }
                }
            }
        }
        // A switch's column, by node; the last entry is the column of the
        // hosts that no switch reaches (linked to a host, or to nothing),
        // which stays without routes.
        let mut shared = vec![u32::MAX; n + 1];
        let mut class_of = Vec::with_capacity(n_hosts);
        let mut n_classes = 0;
        for h in 0..n_hosts {
            let w = host_peer[h] as usize;
            let column = if w < n && !nodes[w].is_host() { w } else { n };
            if named[h] || shared[column] == u32::MAX {
                class_of.push(n_classes);
                n_classes += 1;
                if !named[h] {
                    shared[column] = n_classes - 1;
                }
            } else {
                class_of.push(shared[column]);
            }
        }
        let n_classes = n_classes as usize;
        let mut next = vec![NO_ROUTE; rows * n_classes];
        let mut host_port = vec![NO_ROUTE; n_hosts];
        let mut groups = Vec::new();
        let mut interned: HashMap<Vec<u32>, u32> = HashMap::new();

        // A host is reached through the switch at the other end of its
        // link, so one breadth-first search over the switches per such
        // switch serves all the hosts behind it.
        let mut behind: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (h, &w) in host_peer.iter().enumerate() {
            if w != u32::MAX && !nodes[w as usize].is_host() {
                behind[w as usize].push(h as u32);
            }
        }
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        let mut members = Vec::new();
        let mut columns = Vec::new();
        for (w, hosts) in behind.iter().enumerate() {
            if hosts.is_empty() {
                continue;
            }
            dist.fill(u32::MAX);
            dist[w] = 0;
            queue.clear();
            queue.push_back(w);
            while let Some(u) = queue.pop_front() {
                for &(_, v) in &adj[u] {
                    if dist[v] == u32::MAX && !nodes[v].is_host() {
                        dist[v] = dist[u] + 1;
                        queue.push_back(v);
                    }
                }
            }
            for &h in hosts {
                let port = adj[w]
                    .iter()
                    .find(|&&(_, v)| v == host_node[h as usize] as usize)
                    .map(|&(p, _)| p)
                    .expect("a host's peer has a port toward it");
                let c = class_of[h as usize] as usize;
                // A shared column cannot hold each host's own port.
                next[w * n_classes + c] = if named[h as usize] { port } else { DIRECT };
                host_port[h as usize] = port;
            }
            columns.clear();
            columns.extend(hosts.iter().map(|&h| class_of[h as usize] as usize));
            columns.sort_unstable();
            columns.dedup();
            for u in 0..rows {
                if u == w || dist[u] == u32::MAX || nodes[u].is_host() {
                    continue;
                }
                members.clear();
                members.extend(
                    adj[u]
                        .iter()
                        .filter(|&&(_, v)| dist[v] != u32::MAX && dist[v] + 1 == dist[u])
                        .map(|&(p, _)| p),
                );
                let entry = match members.len() {
                    0 => continue,
                    1 => members[0],
                    _ => match interned.get(&members[..]) {
                        Some(&at) => ECMP | at,
                        None => {
                            let at = groups.len() as u32;
                            assert!(at < DIRECT & !ECMP, "ECMP groups beyond 2^31 entries");
                            groups.push(members.len() as u32);
                            groups.extend_from_slice(&members);
                            interned.insert(members.clone(), at);
                            ECMP | at
                        }
                    },
                };
                for &c in &columns {
                    next[u * n_classes + c] = entry;
                }
            }
        }
        for (u, node) in nodes.iter().enumerate() {
            let NodeKind::Switch(s) = &node.kind else {
                continue;
            };
            for r in &s.routes {
                let port = adj[u]
                    .iter()
                    .find(|&&(_, v)| v == r.via)
                    .map(|&(p, _)| p)
                    .expect("the scenario checked that a route's via is a neighbour");
                for &h in &r.hosts {
                    next[u * n_classes + class_of[host_of[h] as usize] as usize] = port;
                }
            }
        }
        Routes {
            n_classes,
            host_of,
            host_peer,
            class_of,
            host_port,
            rows,
            next,
            groups,
        }
    }

    /// The table's entry at switch `node` toward host number `host`.
    #[inline]
    fn entry(&self, node: usize, host: u32) -> u32 {
        self.next[node * self.n_classes + self.class_of[host as usize] as usize]
    }

    pub fn host_number(&self, node: usize) -> Option<u32> {
        let h = self.host_of[node];
        (h != u32::MAX).then_some(h)
    }

    /// Output port at switch `node` toward host number `host` for frames
    /// of flow `flow`, or `NO_ROUTE`.
    #[inline]
    pub fn next_port(&self, node: usize, host: u32, flow: u32) -> u32 {
        let e = self.entry(node, host);
        if e & ECMP == 0 {
            return e;
        }
        if e == DIRECT {
            return self.host_port[host as usize];
        }
        self.ecmp_port(e, node, flow)
    }

    #[cold]
    #[inline(never)]
    fn ecmp_port(&self, e: u32, node: usize, flow: u32) -> u32 {
        if e == NO_ROUTE {
            return NO_ROUTE;
        }
        let at = (e & !ECMP) as usize;
        let size = self.groups[at];
        self.groups[at + 1 + ecmp_member(flow, node, size) as usize]
    }

    /// Every port on a shortest path from switch `node` toward host number
    /// `host`, in port order (empty without a route).
    pub fn next_ports(&self, node: usize, host: u32) -> &[u32] {
        let i = node * self.n_classes + self.class_of[host as usize] as usize;
        match self.next[i] {
            NO_ROUTE => &[],
            DIRECT => std::slice::from_ref(&self.host_port[host as usize]),
            e if e & ECMP == 0 => std::slice::from_ref(&self.next[i]),
            e => {
                let at = (e & !ECMP) as usize;
                &self.groups[at + 1..at + 1 + self.groups[at] as usize]
            }
        }
    }

    /// Whether a frame from node `from` can reach node `to` (a host).
    pub fn reachable(&self, from: usize, to: usize) -> bool {
        let Some(h) = self.host_number(to) else {
            return false;
        };
        if from == to {
            return true;
        }
        let at = match self.host_number(from) {
            // A host sends over its only link.
            Some(f) => self.host_peer[f as usize] as usize,
            None => from,
        };
        at == to || (at < self.rows && self.entry(at, h) != NO_ROUTE)
    }

    /// A cycle of switches that frames toward host node `to` can go round
    /// forever (some member of each ECMP group on the way counts), as the
    /// switches in order with the first repeated at the end; `None` if every
    /// path ends at `to`. Only static routes can make one.
    pub fn find_loop(&self, links: &[LinkSpec], to: usize) -> Option<Vec<usize>> {
        let h = self.host_of[to];
        let peer = |port: u32| {
            let l = &links[port as usize / 2];
            if port % 2 == 0 {
                l.b
            } else {
                l.a
            }
        };
        // Depth-first search over the switches with the usual three
        // colours: 0 unvisited, 1 on the current path, 2 done.
        let mut colour = vec![0u8; self.rows];
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for start in 0..self.rows {
            if colour[start] != 0 || self.host_of[start] != u32::MAX {
                continue;
            }
            colour[start] = 1;
            stack.push((start, 0));
            while let Some(&mut (u, ref mut i)) = stack.last_mut() {
                let ports = self.next_ports(u, h);
                if *i == ports.len() {
                    colour[u] = 2;
                    stack.pop();
                    continue;
                }
                let v = peer(ports[*i]);
                *i += 1;
                if v >= self.rows || self.host_of[v] != u32::MAX {
                    continue;
                }
                match colour[v] {
                    0 => {
                        colour[v] = 1;
                        stack.push((v, 0));
                    }
                    1 => {
                        let at = stack
                            .iter()
                            .position(|&(w, _)| w == v)
                            .expect("on the path");
                        let mut cycle: Vec<usize> = stack[at..].iter().map(|&(w, _)| w).collect();
                        cycle.push(v);
                        return Some(cycle);
                    }
                    _ => {}
                }
            }
        }
        None
    }

    /// Entries in the table and in its groups (for memory estimates and tests).
    pub fn table_entries(&self) -> usize {
        self.next.len() + self.groups.len() + self.class_of.len() + self.host_port.len()
    }
}

/// Entries the routing table of this topology takes, before groups (which
/// are stored once each and add little): one per destination class (at
/// most the switches with hosts, the hosts static routes name and the
/// unreached hosts' class) for every node up to the last switch, and two
/// per host.
pub fn table_size(nodes: &[NodeSpec], links: &[LinkSpec]) -> u64 {
    let hosts = nodes.iter().filter(|x| x.is_host()).count() as u64;
    let mut with_hosts = vec![false; nodes.len()];
    for l in links {
        match (nodes[l.a].is_host(), nodes[l.b].is_host()) {
            (true, false) => with_hosts[l.b] = true,
            (false, true) => with_hosts[l.a] = true,
            _ => {}
        }
    }
    let named: u64 = nodes
        .iter()
        .filter_map(|x| match &x.kind {
            NodeKind::Switch(s) => Some(s.routes.iter().map(|r| r.hosts.len() as u64).sum::<u64>()),
            NodeKind::Host(_) => None,
        })
        .sum();
    let classes = (with_hosts.iter().filter(|&&w| w).count() as u64)
        .saturating_add(named)
        .saturating_add(1)
        .min(hosts);
    (table_rows(nodes) as u64)
        .saturating_mul(classes)
        .saturating_add(2 * hosts)
}

/// Rows of the table: every node up to the last switch.
fn table_rows(nodes: &[NodeSpec]) -> usize {
    nodes
        .iter()
        .rposition(|x| !x.is_host())
        .map_or(0, |i| i + 1)
}

/// Reachability without the table: `reach[node]` names the group of
/// switches a node sends into (its own for a switch, its peer's for a
/// host), so that host `a` reaches host `b` if they are linked to each
/// other or their groups are equal. Linear in the size of the topology.
pub struct Reach {
    comp: Vec<u32>,
    peer: Vec<u32>,
}

impl Reach {
    pub fn compute(nodes: &[NodeSpec], links: &[LinkSpec]) -> Reach {
        let n = nodes.len();
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                let up = parent[parent[x as usize] as usize];
                parent[x as usize] = up;
                x = up;
            }
            x
        }
        let mut peer = vec![u32::MAX; n];
        for l in links {
            match (nodes[l.a].is_host(), nodes[l.b].is_host()) {
                (false, false) => {
                    let (ra, rb) = (find(&mut parent, l.a as u32), find(&mut parent, l.b as u32));
                    parent[ra.max(rb) as usize] = ra.min(rb);
                }
                _ => {
                    for (x, y) in [(l.a, l.b), (l.b, l.a)] {
                        if nodes[x].is_host() && peer[x] == u32::MAX {
                            peer[x] = y as u32;
                        }
                    }
                }
            }
        }
        let comp = (0..n as u32)
            .map(|x| {
                if !nodes[x as usize].is_host() {
                    find(&mut parent, x)
                } else {
                    match peer[x as usize] {
                        p if p != u32::MAX && !nodes[p as usize].is_host() => find(&mut parent, p),
                        _ => u32::MAX,
                    }
                }
            })
            .collect();
        Reach { comp, peer }
    }

    /// Whether a frame from host `from` can reach host `to`.
    pub fn reachable(&self, from: usize, to: usize) -> bool {
        from == to
            || self.peer[from] == to as u32
            || (self.comp[from] != u32::MAX && self.comp[from] == self.comp[to])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load, Format};

    fn routes(text: &str) -> (crate::Scenario, Routes) {
        let sc = load(text, "t.toml", Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"));
        let r = Routes::compute(&sc.nodes, &sc.links);
        (sc, r)
    }

    fn node(sc: &crate::Scenario, name: &str) -> usize {
        sc.nodes.iter().position(|n| n.name == name).unwrap()
    }

    /// H1 - A, A - B1, A - B2, B1 - C, B2 - C, C - H2: two equal paths.
    const DIAMOND: &str = r#"
duration = "1ms"
[[switches]]
name = "A"
[[switches]]
name = "B1"
[[switches]]
name = "B2"
[[switches]]
name = "C"
[[hosts]]
name = "H1"
[[hosts]]
name = "H2"
[[links]]
between = ["H1", "A"]
[[links]]
between = ["A", "B1"]
[[links]]
between = ["A", "B2"]
[[links]]
between = ["B1", "C"]
[[links]]
between = ["B2", "C"]
[[links]]
between = ["C", "H2"]
"#;

    #[test]
    fn a_diamond_gives_a_group_of_two_and_single_ports_elsewhere() {
        let (sc, r) = routes(DIAMOND);
        let (a, b1, c) = (node(&sc, "A"), node(&sc, "B1"), node(&sc, "C"));
        let h2 = r.host_number(node(&sc, "H2")).unwrap();
        let h1 = r.host_number(node(&sc, "H1")).unwrap();
        // Links 1 and 2 leave A from their `a` end: ports 2 and 4.
        assert_eq!(r.next_ports(a, h2), &[2, 4]);
        assert_eq!(r.next_ports(c, h1), &[7, 9]);
        assert_eq!(r.next_ports(b1, h2), &[6]);
        assert_eq!(r.next_port(b1, h2, 12345), 6);
        assert_eq!(r.next_ports(a, h1), &[1]);
        // Both members are used, each flow always the same one.
        let picks: Vec<u32> = (0..64).map(|f| r.next_port(a, h2, f)).collect();
        assert!(picks.contains(&2) && picks.contains(&4), "{picks:?}");
        for f in 0..64 {
            assert_eq!(r.next_port(a, h2, f), picks[f as usize]);
        }
        // Two groups (A toward H2, C toward H1), each its size and two ports.
        assert_eq!(r.groups.len(), 6, "{:?}", r.groups);
    }

    #[test]
    fn the_hash_spreads_flows_evenly_and_differs_between_nodes() {
        for size in [2u32, 3, 4, 8] {
            let mut counts = vec![0u32; size as usize];
            for f in 0..8000 {
                counts[ecmp_member(f, 7, size) as usize] += 1;
            }
            let even = 8000 / size;
            for c in &counts {
                assert!(c.abs_diff(even) < even / 10, "size {size}: {counts:?}");
            }
        }
        // Choices at two nodes are independent: all four pairs occur about
        // equally often (with one hash, two switches would choose alike).
        let mut pairs = [0u32; 4];
        for f in 0..8000 {
            pairs[(ecmp_member(f, 3, 2) * 2 + ecmp_member(f, 4, 2)) as usize] += 1;
        }
        for c in pairs {
            assert!(c.abs_diff(2000) < 200, "{pairs:?}");
        }
    }

    #[test]
    fn a_single_shortest_path_is_one_port() {
        // S1 and S2 joined directly and through S3: only the direct link
        // is on a shortest path.
        let (sc, r) = routes(
            r#"
duration = "1ms"
[[switches]]
name = "S1"
[[switches]]
name = "S2"
[[switches]]
name = "S3"
[[hosts]]
name = "H1"
[[hosts]]
name = "H2"
[[links]]
between = ["H1", "S1"]
[[links]]
between = ["S1", "S3"]
[[links]]
between = ["S3", "S2"]
[[links]]
between = ["S1", "S2"]
[[links]]
between = ["S2", "H2"]
"#,
        );
        let h2 = r.host_number(node(&sc, "H2")).unwrap();
        assert_eq!(r.next_ports(node(&sc, "S1"), h2), &[6]);
        assert_eq!(r.next_ports(node(&sc, "S3"), h2), &[4]);
        assert!(r.reachable(node(&sc, "H1"), node(&sc, "H2")));
        // Three rows of two classes (S1's host, S2's), a class and a port
        // per host.
        assert_eq!(r.table_entries(), 3 * 2 + 2 + 2);
        assert_eq!(table_size(&sc.nodes, &sc.links), 3 * 2 + 2 * 2);
    }

    /// Every switch's ports toward every host, one breadth-first search per
    /// host, static routes applied: the table a switch would hold without
    /// destination classes.
    fn full_table(sc: &crate::Scenario) -> Vec<Vec<Vec<u32>>> {
        let nodes = &sc.nodes;
        let adj = adjacency(nodes.len(), &sc.links);
        let mut table = Vec::new();
        for t in (0..nodes.len()).filter(|&t| nodes[t].is_host()) {
            let mut dist = vec![u32::MAX; nodes.len()];
            let mut col = vec![Vec::new(); nodes.len()];
            if let Some(&(_, w)) = adj[t].first().filter(|&&(_, w)| !nodes[w].is_host()) {
                dist[w] = 0;
                let mut queue = VecDeque::from([w]);
                while let Some(u) = queue.pop_front() {
                    for &(_, v) in &adj[u] {
                        if dist[v] == u32::MAX && !nodes[v].is_host() {
                            dist[v] = dist[u] + 1;
                            queue.push_back(v);
                        }
                    }
                }
                col[w] = adj[w]
                    .iter()
                    .filter(|&&(_, v)| v == t)
                    .map(|&(p, _)| p)
                    .collect();
                for u in (0..nodes.len()).filter(|&u| u != w && !nodes[u].is_host()) {
                    col[u] = adj[u]
                        .iter()
                        .filter(|&&(_, v)| dist[v] != u32::MAX && dist[v] + 1 == dist[u])
                        .map(|&(p, _)| p)
                        .collect();
                }
            }
            for (u, x) in nodes.iter().enumerate() {
                if let NodeKind::Switch(s) = &x.kind {
                    for r in s.routes.iter().filter(|r| r.hosts.contains(&t)) {
                        col[u] = adj[u]
                            .iter()
                            .filter(|&&(_, v)| v == r.via)
                            .map(|&(p, _)| p)
                            .collect();
                    }
                }
            }
            table.push(col);
        }
        table
    }

    #[test]
    fn destination_classes_give_every_switch_the_full_tables_ports() {
        let fat_tree = r#"
duration = "1ms"
[topology]
kind = "fat_tree"
k = 4
"#;
        let detour = diamond_with("A", r#"{ to = "H2", via = "B2" }"#).replacen(
            "name = \"B1\"\n",
            "name = \"B1\"\nroutes = [{ to = \"H2\", via = \"A\" }]\n",
            1,
        );
        // H3 beside H2 behind C, with a static route for H2 only, at A: H2
        // leaves the class it would share with H3.
        let shared = format!(
            "{}[[hosts]]\nname = \"H3\"\n[[links]]\nbetween = [\"C\", \"H3\"]\n",
            diamond_with("A", r#"{ to = "H2", via = "B1" }"#)
        );
        for text in [DIAMOND.to_string(), detour, shared, fat_tree.to_string()] {
            let (sc, r) = routes(&text);
            let full = full_table(&sc);
            for (h, col) in full.iter().enumerate() {
                for (u, ports) in col.iter().enumerate().take(r.rows) {
                    if sc.nodes[u].is_host() {
                        continue;
                    }
                    assert_eq!(
                        r.next_ports(u, h as u32),
                        &ports[..],
                        "switch {u}, host {h}\n{text}"
                    );
                    let flow = (u * 31 + h) as u32;
                    let want = match ports.len() {
                        0 => NO_ROUTE,
                        1 => ports[0],
                        n => ports[ecmp_member(flow, u, n as u32) as usize],
                    };
                    assert_eq!(r.next_port(u, h as u32, flow), want);
                }
            }
        }
        // The k = 4 fat tree: 20 switches, 8 edge switches with two hosts
        // each, so 8 classes (and the unreached hosts' none).
        let (sc, r) = routes(fat_tree);
        assert_eq!(r.n_classes, 8);
        assert_eq!(r.next.len(), 20 * 8);
        assert_eq!(table_size(&sc.nodes, &sc.links), 20 * 9 + 2 * 16);
    }

    #[test]
    fn reach_agrees_with_the_table() {
        let text = r#"
duration = "1ms"
[[switches]]
name = "S1"
[[switches]]
name = "S2"
[[hosts]]
name = "A"
[[hosts]]
name = "B"
[[hosts]]
name = "C"
[[hosts]]
name = "D"
[[hosts]]
name = "E"
[[links]]
between = ["A", "S1"]
[[links]]
between = ["B", "S1"]
[[links]]
between = ["C", "S2"]
[[links]]
between = ["D", "E"]
"#;
        let (sc, r) = routes(text);
        let reach = Reach::compute(&sc.nodes, &sc.links);
        let hosts: Vec<usize> = (0..sc.nodes.len())
            .filter(|&i| sc.nodes[i].is_host())
            .collect();
        let mut yes = 0;
        for &a in &hosts {
            for &b in &hosts {
                assert_eq!(reach.reachable(a, b), r.reachable(a, b), "{a} -> {b}");
                yes += (a != b && reach.reachable(a, b)) as u32;
            }
        }
        assert_eq!(yes, 4, "A<->B and D<->E");
    }

    /// DIAMOND with a static route at `switch`.
    fn diamond_with(switch: &str, route: &str) -> String {
        DIAMOND.replacen(
            &format!("name = \"{switch}\"\n"),
            &format!("name = \"{switch}\"\nroutes = [{route}]\n"),
            1,
        )
    }

    #[test]
    fn a_static_route_replaces_the_group_and_leaves_the_rest() {
        let (sc, r) = routes(&diamond_with("A", r#"{ to = "H2", via = "B2" }"#));
        let (a, c) = (node(&sc, "A"), node(&sc, "C"));
        let (h1, h2) = (
            r.host_number(node(&sc, "H1")).unwrap(),
            r.host_number(node(&sc, "H2")).unwrap(),
        );
        // Port 4: link 2 (A - B2) at its `a` end.
        assert_eq!(r.next_ports(a, h2), &[4]);
        assert!((0..64).all(|f| r.next_port(a, h2, f) == 4));
        assert_eq!(r.next_ports(a, h1), &[1]);
        assert_eq!(r.next_ports(c, h1), &[7, 9]);
        assert_eq!(r.find_loop(&sc.links, node(&sc, "H2")), None);
        // A detour that still ends at the host: B1 sends H2's frames back
        // to A, which sends them on through B2.
        let text = diamond_with("A", r#"{ to = "H2", via = "B2" }"#);
        let text = text.replacen(
            "name = \"B1\"\n",
            "name = \"B1\"\nroutes = [{ to = \"H2\", via = \"A\" }]\n",
            1,
        );
        let (sc, r) = routes(&text);
        let b1 = node(&sc, "B1");
        assert_eq!(r.next_ports(b1, h2), &[3], "link 1 at its b end");
        assert_eq!(r.find_loop(&sc.links, node(&sc, "H2")), None);
    }

    #[test]
    fn a_static_route_that_makes_a_loop_is_refused_with_the_loop() {
        // A sends H2's frames to B1 and B1 back to A.
        let text = diamond_with("A", r#"{ to = "H2", via = "B1" }"#).replacen(
            "name = \"B1\"\n",
            "name = \"B1\"\nroutes = [{ to = \"H2\", via = \"A\" }]\n",
            1,
        );
        let e = load(&text, "t.toml", Format::Toml, &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("routes[0].to: frames toward 'H2' would loop for ever: A -> B1 -> A"),
            "{e}"
        );
        // C sends H2's frames to B2, whose only shortest path to H2 is
        // back through C; the search reaches the loop from A through a
        // member of A's group.
        let text = diamond_with("C", r#"{ to = "H2", via = "B2" }"#);
        let e = load(&text, "t.toml", Format::Toml, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("would loop for ever: C -> B2 -> C"), "{e}");
        for (route, message) in [
            (
                r#"{ to = "H2", via = "C" }"#,
                "routes[0].via: expected a switch linked to 'A' (B1, B2), found 'C'",
            ),
            (
                r#"{ to = "H2", via = "H1" }"#,
                "routes[0].via: expected a switch linked to 'A' (B1, B2), found 'H1'",
            ),
            (
                r#"{ to = "B1", via = "B1" }"#,
                "routes[0].to: expected a host, found switch 'B1'",
            ),
            (r#"{ via = "B1" }"#, "routes[0]: missing field 'to'"),
            (
                r#"{ to = "H2", via = "B1", by = 1 }"#,
                "routes[0].by: unknown field 'by'; expected one of 'to', 'via'",
            ),
        ] {
            let e = load(&diamond_with("A", route), "t.toml", Format::Toml, &[])
                .unwrap_err()
                .to_string();
            assert!(e.contains(message), "{route}: {e}");
        }
    }
}
