//! Memory a run will need, estimated before anything is allocated, so that
//! a scenario the machine cannot hold (millions of flows with per-flow
//! series, microsecond bins over seconds) is refused up front instead of
//! exhausting memory halfway.

use crate::net::routing;
use crate::scenario::schema::Transport;
use crate::scenario::spec::{NodeKind, Scenario};

/// Bytes per flow and bin, per port and bin, of the binned series (see
/// `metrics::series`: a sum is 8 B, a level 16 B).
const FLOW_SERIES: u64 = 16;
const LIMITER_SERIES: u64 = 32;
const QCN_SERIES: u64 = 16;
const TCP_SERIES: u64 = 32;
const PORT_SERIES: u64 = 40;
/// State per flow (counters, limiter, TCP connection, names) and per port.
const FLOW_STATE: u64 = 1024;
const PORT_STATE: u64 = 512;
/// Bytes per entry of the routing table (a row per switch, a column per
/// host; see `net::routing`).
const ROUTE_ENTRY: u64 = 4;

/// Bytes the engine's series, per-flow and per-port state and routing table
/// will take.
/// Frames in buffers are not counted (32 B each, bounded by the buffers).
pub fn memory_estimate(sc: &Scenario) -> u64 {
    let flows: u64 = sc.sources.iter().map(|s| s.dsts.len() as u64).sum();
    let ports = 2 * sc.links.len() as u64;
    let bins = sc.duration.0.div_ceil(sc.bin.0.max(1));
    let voq = sc
        .nodes
        .iter()
        .any(|n| matches!(&n.kind, NodeKind::Host(h) if h.voq));
    let mut per_flow_bin = FLOW_SERIES;
    if sc.bcn.is_some() || sc.qcn.is_some() || voq {
        per_flow_bin += LIMITER_SERIES;
    }
    if sc.qcn.is_some() {
        per_flow_bin += QCN_SERIES;
    }
    if sc.sources.iter().any(|s| s.transport == Transport::Tcp) {
        per_flow_bin += TCP_SERIES;
    }
    let series = flows
        .saturating_mul(bins)
        .saturating_mul(per_flow_bin)
        .saturating_add(ports.saturating_mul(bins).saturating_mul(PORT_SERIES));
    series
        .saturating_add(flows.saturating_mul(FLOW_STATE))
        .saturating_add(ports.saturating_mul(PORT_STATE))
        .saturating_add(routing::table_size(&sc.nodes).saturating_mul(ROUTE_ENTRY))
}

/// Memory the system can still give (Linux: MemAvailable), if known.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// "1.5 GB", for messages.
pub fn human_bytes(b: u64) -> String {
    let b = b as f64;
    match b {
        b if b >= 1e12 => format!("{:.1} TB", b / 1e12),
        b if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.1} MB", b / 1e6),
        b => format!("{:.0} kB", b / 1e3),
    }
}
