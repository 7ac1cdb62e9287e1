//! Shortest-path routing, computed once before the run.
//!
//! Ports are numbered by link: link i has port 2i at its `a` end (toward `b`)
//! and port 2i+1 at its `b` end. Hosts never carry transit traffic. Among
//! equal-length paths the next hop with the lowest port number wins, so
//! routes are deterministic.

use crate::scenario::spec::{LinkSpec, NodeSpec};
use std::collections::VecDeque;

pub const NO_ROUTE: u32 = u32::MAX;

pub struct Routes {
    n_hosts: usize,
    /// host number of each node (`u32::MAX` for switches)
    host_of: Vec<u32>,
    /// next_port[node * n_hosts + host]
    next_port: Vec<u32>,
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

impl Routes {
    pub fn compute(nodes: &[NodeSpec], links: &[LinkSpec]) -> Routes {
        let n = nodes.len();
        let mut host_of = vec![u32::MAX; n];
        let mut hosts = Vec::new();
        for (i, node) in nodes.iter().enumerate() {
            if node.is_host() {
                host_of[i] = hosts.len() as u32;
                hosts.push(i);
            }
        }
        let adj = adjacency(n, links);
        let mut next_port = vec![NO_ROUTE; n * hosts.len()];
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for (h, &dst) in hosts.iter().enumerate() {
            dist.fill(u32::MAX);
            dist[dst] = 0;
            queue.clear();
            queue.push_back(dst);
            while let Some(u) = queue.pop_front() {
                // Only the destination itself and switches relay toward it.
                if u != dst && nodes[u].is_host() {
                    continue;
                }
                for &(_, v) in &adj[u] {
                    if dist[v] == u32::MAX {
                        dist[v] = dist[u] + 1;
                        queue.push_back(v);
                    }
                }
            }
            for u in 0..n {
                if u == dst || dist[u] == u32::MAX {
                    continue;
                }
                let best = adj[u]
                    .iter()
                    .filter(|&&(_, v)| {
                        dist[v] != u32::MAX
                            && dist[v] + 1 == dist[u]
                            && (v == dst || !nodes[v].is_host())
                    })
                    .map(|&(p, _)| p)
                    .min();
                if let Some(p) = best {
                    next_port[u * hosts.len() + h] = p;
                }
            }
        }
        Routes {
            n_hosts: hosts.len(),
            host_of,
            next_port,
        }
    }

    pub fn host_number(&self, node: usize) -> Option<u32> {
        let h = self.host_of[node];
        (h != u32::MAX).then_some(h)
    }

    /// Output port at `node` toward host number `host`, or `NO_ROUTE`.
    #[inline]
    pub fn next_port(&self, node: usize, host: u32) -> u32 {
        self.next_port[node * self.n_hosts + host as usize]
    }

    pub fn reachable(&self, from: usize, to: usize) -> bool {
        match self.host_number(to) {
            Some(h) => from == to || self.next_port(from, h) != NO_ROUTE,
            None => false,
        }
    }
}
