//! Memory a run will need, estimated before anything is allocated, so that
//! a scenario the machine cannot hold (millions of flows with per-flow
//! series, microsecond bins over seconds) is refused up front instead of
//! exhausting memory halfway, or after the engine has finished.
//!
//! A run through cnsim's Python package has two phases, and its peak is the
//! larger of the two: the engine (binned series, per-flow and per-port
//! state, routing table), then the result tables built from the series and
//! saved as Parquet (the engine's state is freed by then; the series are
//! handed over without a copy and are part of the second phase's cost).

use std::path::Path;

use super::spec::Scenario;
use crate::net::routing;
use crate::net::topology::NodeKind;

/// Engine phase: bytes per flow and bin, per port and bin, of the binned
/// series (see `metrics::series`: a sum is 8 B, a level 16 B). The limiter
/// series have rows only for flows that install a limiter; they are
/// counted for every flow, as every flow may.
const FLOW_SERIES: u64 = 16;
const LIMITER_SERIES: u64 = 32;
const QCN_SERIES: u64 = 16;
const TCP_SERIES: u64 = 32;
/// DCQCN's or DCTCP's α (a level).
const ALPHA_SERIES: u64 = 16;
const PORT_SERIES: u64 = 40;
/// Per switch ingress (port, class) and bin, with `[metrics]
/// ingress_occupancy` (a level).
const INGRESS_SERIES: u64 = 16;
/// Engine phase: state per flow (counters, limiter, TCP connection, names)
/// and per port.
const FLOW_STATE: u64 = 1024;
const PORT_STATE: u64 = 512;
/// Bytes per entry of the routing table (a row per switch, a column per
/// host; see `net::routing`).
const ROUTE_ENTRY: u64 = 4;

/// Result phase: bytes per flow and bin (the throughput table, plus the
/// rate-limiter table with limiters and the transport table with TCP), per
/// port and bin (link throughput and occupancy tables), and per flow and per
/// port (summary counters parsed into the flows and queues tables). Peak
/// resident memory measured on star all-to-all runs (9,900 flows, 2,500 to
/// 5,000 bins: 55, +79 with QCN throttling every flow; +73 with TCP),
/// single-flow k = 8 fat trees (768 ports, 1,000 to 5,000 bins: 160) and
/// k = 8 and 12 fat trees with every host sending to every other (954 B a
/// flow, since the records reach Python as columns with their text in Arrow
/// and the engine's flow records are let go once tabled; 1.6 KB with a
/// Python object per name, 2.9 KB through JSON), each rounded up by 10 to
/// 35% (the limiter's kept at 141, what a small all-to-all with QCN needed
/// before its rows were only the throttled flows'), and the working memory
/// of building and writing the first tables as a fixed 28 MiB (study C1,
/// TCP with QCN, 81 flows and 500 bins, peaks at 35.5 to 38 MiB, of which
/// about 12 are its rows)
/// (`bench/memory.py`, docs/performance.md). The rate-limiter and transport
/// tables' `alpha` column (an f64, and the matrix it is taken from) adds
/// 16 to each.
const RESULT_FIXED: u64 = 28 << 20;
const RESULT_FLOW_BIN: u64 = 64;
const RESULT_LIMITER_BIN: u64 = 141;
const RESULT_TCP_BIN: u64 = 96;
const RESULT_PORT_BIN: u64 = 175;
const RESULT_PER_FLOW: u64 = 1100;
const RESULT_PER_PORT: u64 = 3300;
/// The ingress table per row and bin: about one of a port's two binned
/// tables (`RESULT_PORT_BIN`), rounded up.
const RESULT_INGRESS_BIN: u64 = 100;

/// Bytes a run needs at its peak: the larger of the engine's phase (series,
/// per-flow and per-port state, routing table) and the result phase (tables
/// built from the series and saved). Frames in buffers are not counted
/// (32 B each, bounded by the buffers).
pub fn memory_estimate(sc: &Scenario) -> u64 {
    let source_flows: u64 = sc.sources.iter().map(|s| s.dsts.len() as u64).sum();
    // A workload's flows have state and a result row each, and share one
    // row of the flow series (the flows of the scenario's own seed).
    let line = |h: usize| sc.host_rate(h);
    let workload_flows: u64 = sc
        .workloads
        .iter()
        .map(|w| w.flows(sc.seed, &line).len() as u64)
        .sum();
    let rows = source_flows + sc.workloads.len() as u64;
    let flows = source_flows + workload_flows;
    let ports = 2 * sc.links.len() as u64;
    let bins = sc.duration.0.div_ceil(sc.bin.0.max(1));
    let voq = sc
        .nodes
        .iter()
        .any(|n| matches!(&n.kind, NodeKind::Host(h) if h.voq));
    let limiters = sc.has_rate_limiters() || voq;
    let tcp = sc.sources.iter().any(|s| s.transport.is_connection()) || !sc.workloads.is_empty();

    let mut series_per_flow_bin = FLOW_SERIES;
    let mut result_per_flow_bin = RESULT_FLOW_BIN;
    if limiters {
        series_per_flow_bin += LIMITER_SERIES;
        result_per_flow_bin += RESULT_LIMITER_BIN;
    }
    if sc.has_alpha() {
        series_per_flow_bin += ALPHA_SERIES;
    }
    if sc.has_target_rate() {
        series_per_flow_bin += QCN_SERIES;
    }
    if tcp {
        series_per_flow_bin += TCP_SERIES;
        result_per_flow_bin += RESULT_TCP_BIN;
    }
    let per_bins = |per_flow_bin: u64, per_port_bin: u64| {
        rows.saturating_mul(bins)
            .saturating_mul(per_flow_bin)
            .saturating_add(ports.saturating_mul(bins).saturating_mul(per_port_bin))
    };
    // Every port with classes may have a row per class (switch ports only,
    // so this is an upper bound).
    let ingress_bins = if sc.metrics.ingress_occupancy {
        let classes = sc.priorities.as_ref().map_or(1, |p| p.classes) as u64;
        ports.saturating_mul(classes).saturating_mul(bins)
    } else {
        0
    };
    let engine = per_bins(series_per_flow_bin, PORT_SERIES)
        .saturating_add(ingress_bins.saturating_mul(INGRESS_SERIES))
        .saturating_add(flows.saturating_mul(FLOW_STATE))
        .saturating_add(ports.saturating_mul(PORT_STATE))
        .saturating_add(routing::table_size(&sc.nodes, &sc.links).saturating_mul(ROUTE_ENTRY));
    let results = RESULT_FIXED
        .saturating_add(per_bins(result_per_flow_bin, RESULT_PORT_BIN))
        .saturating_add(ingress_bins.saturating_mul(RESULT_INGRESS_BIN))
        .saturating_add(flows.saturating_mul(RESULT_PER_FLOW))
        .saturating_add(ports.saturating_mul(RESULT_PER_PORT));
    engine.max(results)
}

/// Memory this process can still take: the system's (Linux: MemAvailable)
/// and, inside a container or a batch job, what its control group's limit
/// leaves, whichever is less; `None` when neither is known.
pub fn available_memory() -> Option<u64> {
    let root = Path::new("/");
    match (system_available(root), cgroup_headroom(root)) {
        (Some(system), Some(group)) => Some(system.min(group)),
        (system, group) => system.or(group),
    }
}

/// MemAvailable of `root`/proc/meminfo, in bytes.
fn system_available(root: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(root.join("proc/meminfo")).ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The least room left under a memory limit of this process's control
/// group or of any group above it (cgroup v2, then v1), read under `root`.
fn cgroup_headroom(root: &Path) -> Option<u64> {
    let groups = std::fs::read_to_string(root.join("proc/self/cgroup")).ok()?;
    let mut least: Option<u64> = None;
    for line in groups.lines() {
        // "0::/path" (v2) or "N:controller,...:/path" (v1).
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (mount, limit_file, usage_file) = if controllers.is_empty() {
            ("sys/fs/cgroup", "memory.max", "memory.current")
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                "sys/fs/cgroup/memory",
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            )
        } else {
            continue;
        };
        let mut dir = root.join(mount).join(path.trim_start_matches('/'));
        let top = root.join(mount);
        loop {
            let read = |file: &str| -> Option<u64> {
                std::fs::read_to_string(dir.join(file))
                    .ok()?
                    .trim()
                    .parse()
                    .ok()
            };
            // "max" (v2) or a huge number (v1) means no limit: the parse or
            // the subtraction below gives nothing then.
            if let (Some(limit), Some(usage)) = (read(limit_file), read(usage_file)) {
                if limit < u64::MAX / 2 {
                    let room = limit.saturating_sub(usage);
                    least = Some(least.map_or(room, |l| l.min(room)));
                }
            }
            if dir == top || !dir.pop() || !dir.starts_with(&top) {
                break;
            }
        }
    }
    least
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::PathBuf;

    /// A fake file system root under the temporary directory.
    fn fake_root(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let root = std::env::temp_dir().join(format!("cnsim-budget-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        for (path, text) in files {
            let file = root.join(path);
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(file, text).unwrap();
        }
        root
    }

    #[test]
    fn cgroup_v2_limit_of_the_group_or_a_parent_is_honoured() {
        let root = fake_root(
            "v2",
            &[
                ("proc/self/cgroup", "0::/job/step\n"),
                ("sys/fs/cgroup/job/memory.max", "1000000000\n"),
                ("sys/fs/cgroup/job/memory.current", "400000000\n"),
                ("sys/fs/cgroup/job/step/memory.max", "max\n"),
                ("sys/fs/cgroup/job/step/memory.current", "300000000\n"),
                (
                    "proc/meminfo",
                    "MemTotal: 100 kB\nMemAvailable:   8000000 kB\n",
                ),
            ],
        );
        assert_eq!(cgroup_headroom(&root), Some(600_000_000));
        assert_eq!(system_available(&root), Some(8_192_000_000));
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn cgroup_v1_memory_controller_and_no_limit() {
        let root = fake_root(
            "v1",
            &[
                ("proc/self/cgroup", "5:cpu,cpuacct:/x\n4:memory:/x\n"),
                (
                    "sys/fs/cgroup/memory/x/memory.limit_in_bytes",
                    "2000000000\n",
                ),
                (
                    "sys/fs/cgroup/memory/x/memory.usage_in_bytes",
                    "500000000\n",
                ),
                (
                    "sys/fs/cgroup/memory/memory.limit_in_bytes",
                    "9223372036854771712\n",
                ),
                ("sys/fs/cgroup/memory/memory.usage_in_bytes", "7000000000\n"),
            ],
        );
        assert_eq!(cgroup_headroom(&root), Some(1_500_000_000));
        fs::remove_dir_all(&root).unwrap();
        let unlimited = fake_root(
            "none",
            &[
                ("proc/self/cgroup", "0::/\n"),
                ("sys/fs/cgroup/memory.max", "max\n"),
                ("sys/fs/cgroup/memory.current", "123\n"),
            ],
        );
        assert_eq!(cgroup_headroom(&unlimited), None);
        fs::remove_dir_all(unlimited).unwrap();
    }

    #[test]
    fn a_usage_above_the_limit_leaves_no_room() {
        let root = fake_root(
            "over",
            &[
                ("proc/self/cgroup", "0::/\n"),
                ("sys/fs/cgroup/memory.max", "100\n"),
                ("sys/fs/cgroup/memory.current", "200\n"),
            ],
        );
        assert_eq!(cgroup_headroom(&root), Some(0));
        fs::remove_dir_all(root).unwrap();
    }
}
