//! Generated topologies (`[topology]`: fat tree, leaf-spine, star) and ECMP
//! routing: sizes, names and wiring, path lengths, how flows spread over
//! equal-cost paths, runs that keep the invariants, and located errors.

use crate::common::*;
use cnsim_core::net::routing::{Routes, NO_ROUTE};
use cnsim_core::scenario::{self, Format, Scenario};
use std::collections::{BTreeMap, BTreeSet};

fn load(text: &str, overrides: &[(&str, &str)]) -> Result<Scenario, String> {
    let ov: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    scenario::load(text, "topo.toml", Format::Toml, &ov).map_err(|e| e.to_string())
}

/// A scenario of `topology` (the lines of the `[topology]` table) and
/// `rest`.
fn with_topology(topology: &str, rest: &str) -> String {
    format!("duration = \"1ms\"\n\n[topology]\n{topology}\n{rest}")
}

fn generated(topology: &str) -> Scenario {
    load(&with_topology(topology, ""), &[]).unwrap_or_else(|e| panic!("{e}"))
}

fn reject(text: &str) -> String {
    match load(text, &[]) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

fn counts(sc: &Scenario) -> (usize, usize, usize) {
    let hosts = sc.nodes.iter().filter(|n| n.is_host()).count();
    (sc.nodes.len() - hosts, hosts, sc.links.len())
}

fn node(sc: &Scenario, name: &str) -> usize {
    sc.nodes
        .iter()
        .position(|n| n.name == name)
        .unwrap_or_else(|| panic!("no node {name}"))
}

fn neighbours(sc: &Scenario, name: &str) -> BTreeSet<String> {
    let n = node(sc, name);
    sc.links
        .iter()
        .filter_map(|l| match (l.a == n, l.b == n) {
            (true, _) => Some(l.b),
            (_, true) => Some(l.a),
            _ => None,
        })
        .map(|i| sc.nodes[i].name.clone())
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// The node at the other end of port `p` (port 2i is link i's `a` end).
fn peer(sc: &Scenario, p: u32) -> usize {
    let l = &sc.links[p as usize / 2];
    if p % 2 == 0 {
        l.b
    } else {
        l.a
    }
}

/// The nodes a frame of flow `flow` visits from host `src` to host `dst`,
/// both ends included, following the routing table hop by hop.
fn path(sc: &Scenario, r: &Routes, flow: u32, src: usize, dst: usize) -> Vec<usize> {
    let h = r.host_number(dst).expect("a host");
    let first = sc
        .links
        .iter()
        .find_map(|l| match (l.a == src, l.b == src) {
            (true, _) => Some(l.b),
            (_, true) => Some(l.a),
            _ => None,
        })
        .expect("a host has a link");
    let mut out = vec![src, first];
    while *out.last().unwrap() != dst {
        assert!(out.len() <= sc.nodes.len(), "a loop: {out:?}");
        let port = r.next_port(*out.last().unwrap(), h, flow);
        assert_ne!(port, NO_ROUTE, "no route from {:?}", out);
        out.push(peer(sc, port));
    }
    out
}

fn names(sc: &Scenario, path: &[usize]) -> Vec<String> {
    path.iter().map(|&i| sc.nodes[i].name.clone()).collect()
}

fn hosts(sc: &Scenario) -> Vec<usize> {
    (0..sc.nodes.len())
        .filter(|&i| sc.nodes[i].is_host())
        .collect()
}

// ---- sizes, names, wiring -------------------------------------------------

#[test]
fn sizes_of_each_kind() {
    // (switches, hosts, links): a fat tree has 5k²/4 switches, k³/4 hosts
    // and 3k³/4 links.
    assert_eq!(
        counts(&generated("kind = \"fat_tree\"\nk = 4")),
        (20, 16, 48)
    );
    assert_eq!(
        counts(&generated("kind = \"fat_tree\"\nk = 8")),
        (80, 128, 384)
    );
    assert_eq!(
        counts(&generated(
            "kind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 3"
        )),
        (6, 12, 12 + 8)
    );
    assert_eq!(counts(&generated("kind = \"star\"\nn = 5")), (1, 5, 5));
    assert_eq!(counts(&generated("kind = \"fat_tree\"\nk = 2")), (5, 2, 6));
}

#[test]
fn fat_tree_names_and_wiring() {
    let sc = generated("kind = \"fat_tree\"\nk = 4");
    let all: Vec<&str> = sc.nodes.iter().map(|n| n.name.as_str()).collect();
    // Switches first (edge, aggregation, core), then hosts, all 1-based.
    assert_eq!(&all[..4], ["E1.1", "E1.2", "E2.1", "E2.2"]);
    assert_eq!(&all[8..10], ["A1.1", "A1.2"]);
    assert_eq!(&all[16..20], ["C1.1", "C1.2", "C2.1", "C2.2"]);
    assert_eq!(&all[20..23], ["H1.1.1", "H1.1.2", "H1.2.1"]);
    assert_eq!(all.last(), Some(&"H4.2.2"));
    assert_eq!(neighbours(&sc, "H3.2.1"), set(&["E3.2"]));
    assert_eq!(
        neighbours(&sc, "E3.2"),
        set(&["H3.2.1", "H3.2.2", "A3.1", "A3.2"])
    );
    assert_eq!(
        neighbours(&sc, "A3.2"),
        set(&["E3.1", "E3.2", "C2.1", "C2.2"])
    );
    assert_eq!(
        neighbours(&sc, "C2.1"),
        set(&["A1.2", "A2.2", "A3.2", "A4.2"])
    );
    assert!(sc.queue_names().contains(&"H1.1.1->E1.1".to_string()));
}

#[test]
fn leaf_spine_and_star_names_and_wiring() {
    let sc = generated("kind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 3");
    assert_eq!(
        neighbours(&sc, "L2"),
        set(&["H2.1", "H2.2", "H2.3", "S1", "S2"])
    );
    assert_eq!(neighbours(&sc, "S2"), set(&["L1", "L2", "L3", "L4"]));
    let sc = generated("kind = \"star\"\nn = 5");
    assert_eq!(neighbours(&sc, "SW"), set(&["H1", "H2", "H3", "H4", "H5"]));
}

// ---- routes ---------------------------------------------------------------

#[test]
fn every_host_reaches_every_other() {
    for t in [
        "kind = \"fat_tree\"\nk = 4",
        "kind = \"fat_tree\"\nk = 8",
        "kind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 3",
        "kind = \"star\"\nn = 5",
    ] {
        let sc = generated(t);
        let r = Routes::compute(&sc.nodes, &sc.links);
        let hs = hosts(&sc);
        for &a in &hs {
            for &b in &hs {
                assert!(r.reachable(a, b), "{t}: {a} -> {b}");
                if a != b {
                    // Following the table gets there (without a loop).
                    path(&sc, &r, (a * 1000 + b) as u32, a, b);
                }
            }
        }
    }
}

#[test]
fn fat_tree_path_lengths() {
    let sc = generated("kind = \"fat_tree\"\nk = 4");
    let r = Routes::compute(&sc.nodes, &sc.links);
    let links =
        |a: &str, b: &str, flow: u32| path(&sc, &r, flow, node(&sc, a), node(&sc, b)).len() - 1;
    for flow in 0..16 {
        assert_eq!(links("H1.1.1", "H1.1.2", flow), 2, "same edge");
        assert_eq!(links("H1.1.1", "H1.2.2", flow), 4, "same pod");
        assert_eq!(links("H1.1.1", "H4.2.1", flow), 6, "across pods");
        assert_eq!(links("H3.2.2", "H2.1.1", flow), 6, "across pods");
    }
    let p = path(&sc, &r, 5, node(&sc, "H1.1.1"), node(&sc, "H1.2.2"));
    let n = names(&sc, &p);
    assert_eq!((n[1].as_str(), n[3].as_str()), ("E1.1", "E1.2"));
    assert!(n[2].starts_with("A1."), "{n:?}");
    // Leaf-spine: 2 links under one leaf, 4 between leaves.
    let sc = generated("kind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 3");
    let r = Routes::compute(&sc.nodes, &sc.links);
    assert_eq!(
        path(&sc, &r, 0, node(&sc, "H1.1"), node(&sc, "H1.3")).len(),
        3
    );
    assert_eq!(
        path(&sc, &r, 0, node(&sc, "H1.1"), node(&sc, "H4.3")).len(),
        5
    );
}

/// Every host of a k = 4 fat tree sending to every other: the flows of a
/// scenario with `to = "*"` on each host, numbered as the engine numbers
/// them.
const ALL_TO_ALL_K4: &str = r#"
duration = "2ms"

[params]
k = 4
half = 2

[topology]
kind = "fat_tree"
k = "k"

[[sources]]
host = "H{p}.{e}.{h}"
to = "*"
load = 0.3
repeat = { p = "k", e = "half", h = "half" }
"#;

#[test]
fn ecmp_spreads_inter_pod_flows_over_every_core() {
    let sc = load(ALL_TO_ALL_K4, &[]).unwrap();
    let r = Routes::compute(&sc.nodes, &sc.links);
    let pod = |n: usize| sc.nodes[n].name[1..].split('.').next().unwrap().to_string();
    let mut per_core: BTreeMap<String, u32> = BTreeMap::new();
    let mut per_uplink: BTreeMap<(String, String), u32> = BTreeMap::new();
    let mut inter_pod = 0;
    for (id, f) in sc.flows().iter().enumerate() {
        if pod(f.src) == pod(f.dst) {
            continue;
        }
        inter_pod += 1;
        let n = names(&sc, &path(&sc, &r, id as u32, f.src, f.dst));
        assert_eq!(n.len(), 7, "{n:?}");
        *per_core.entry(n[3].clone()).or_default() += 1;
        *per_uplink.entry((n[1].clone(), n[2].clone())).or_default() += 1;
    }
    // 16 hosts, each sending to the 12 in other pods.
    assert_eq!(inter_pod, 192);
    // Single-path routing would send all of them through one core per
    // destination edge switch's lowest port; here each of the 4 cores
    // carries 15-35% of them (48 each if even; the binomial spread is
    // about ±6).
    assert_eq!(per_core.len(), 4, "{per_core:?}");
    for (core, &c) in &per_core {
        let share = c as f64 / inter_pod as f64;
        assert!(
            (0.15..=0.35).contains(&share),
            "{core}: {c} of {inter_pod} ({per_core:?})"
        );
    }
    // Each edge switch uses both of its uplinks (24 inter-pod flows leave
    // each edge switch).
    assert_eq!(per_uplink.len(), 16, "{per_uplink:?}");
    for (uplink, &c) in &per_uplink {
        assert!((6..=18).contains(&c), "{uplink:?}: {c} of 24");
    }
}

#[test]
fn a_flows_path_is_deterministic_and_the_same_for_every_seed() {
    let sc = load(ALL_TO_ALL_K4, &[]).unwrap();
    let (r1, r2) = (
        Routes::compute(&sc.nodes, &sc.links),
        Routes::compute(&sc.nodes, &sc.links),
    );
    for (id, f) in sc.flows().iter().enumerate() {
        let p = path(&sc, &r1, id as u32, f.src, f.dst);
        assert_eq!(p, path(&sc, &r1, id as u32, f.src, f.dst));
        assert_eq!(p, path(&sc, &r2, id as u32, f.src, f.dst));
    }
    // In a run, one flow's frames use exactly the queues of its path,
    // whatever the seed.
    let one = r#"
duration = "1ms"
[topology]
kind = "fat_tree"
k = 4
[[sources]]
host = "H1.1.1"
to = ["H3.2.2", "H4.1.2"]
load = 0.5
"#;
    let sc = load(one, &[]).unwrap();
    let r = Routes::compute(&sc.nodes, &sc.links);
    let mut expected = BTreeSet::new();
    for (id, f) in sc.flows().iter().enumerate() {
        let p = names(&sc, &path(&sc, &r, id as u32, f.src, f.dst));
        for w in p.windows(2) {
            expected.insert(format!("{}->{}", w[0], w[1]));
        }
    }
    for seed in [1, 2, 77] {
        let res = run(&sc, Some(seed));
        let used: BTreeSet<String> = res
            .summary
            .queues
            .iter()
            .filter(|q| q.tx_bytes > 0)
            .map(|q| q.name.clone())
            .collect();
        assert_eq!(used, expected, "seed {seed}");
    }
}

// ---- runs -----------------------------------------------------------------

#[test]
fn a_fat_tree_under_uniform_load_keeps_the_invariants_and_conserves_bytes() {
    // PAUSE and QCN on, so that CNMs (addressed to the sources) and PAUSE
    // share the fabric with data; the invariant checks (in-order delivery
    // per flow among them) are on in every run.
    let text = format!(
        "{ALL_TO_ALL_K4}
[defaults.switch]
latency = \"1us\"
buffer = \"150KB\"
pause = {{ mode = \"global\", xoff = \"100KB\", xon = \"88KB\" }}

[defaults.host]
egress = \"150KB\"

[defaults.link]
delay = \"1us\"

[qcn]
"
    );
    let sc = load(&text, &[("sources[0].load", "0.8")]).unwrap();
    let r = run(&sc, None);
    assert!(r.summary.partial.is_none());
    assert_conservation(&r);
    let t = &r.summary.totals.volume;
    assert!(t.delivered_frames > 10_000, "{t:?}");
    // Every aggregation-to-core queue carried data.
    for q in r
        .summary
        .queues
        .iter()
        .filter(|q| q.name.starts_with('A') && q.name.contains("->C"))
    {
        assert!(q.tx_bytes > 0, "{} idle", q.name);
    }
}

#[test]
fn tcp_over_ecmp_keeps_its_segments_and_acks_on_one_path() {
    // ACKs travel toward the source under the flow's id, on a path of
    // their own. Segments split over two paths would arrive out of order
    // and draw duplicate ACKs: a flow that lost nothing would then
    // retransmit.
    let text = format!(
        "{ALL_TO_ALL_K4}
[defaults.switch]
buffer = \"150KB\"
[defaults.source]
kind = \"transactions\"
transaction = \"9000B\"
transport = \"tcp\"
"
    );
    let r = run(&load(&text, &[]).unwrap(), None);
    assert!(r.summary.partial.is_none());
    assert!(r.summary.totals.volume.delivered_bytes > 1_000_000);
    let mut clean = 0;
    for f in &r.summary.flows {
        let c = &f.counters;
        if c.segments_dropped == 0 && c.acks_dropped == 0 {
            assert_eq!(c.retransmissions, 0, "flow {}: {c:?}", f.name);
            clean += 1;
        }
    }
    assert!(clean > 200, "{clean} of 240 flows lost nothing");
}

// ---- the format -------------------------------------------------------------

#[test]
fn sizes_come_from_params_and_overrides() {
    let text =
        "duration = \"1ms\"\n[params]\npods = 4\n[topology]\nkind = \"fat_tree\"\nk = \"pods\"\n";
    assert_eq!(counts(&load(text, &[]).unwrap()).1, 16);
    assert_eq!(counts(&load(text, &[("params.pods", "6")]).unwrap()).1, 54);
    assert_eq!(counts(&load(text, &[("topology.k", "8")]).unwrap()).1, 128);
    let star = with_topology("kind = \"star\"\nn = 3", "");
    assert_eq!(counts(&load(&star, &[("topology.n", "7")]).unwrap()).1, 7);
}

#[test]
fn defaults_apply_and_written_entries_add_to_a_generated_topology() {
    let text = with_topology(
        "kind = \"star\"\nn = 3",
        r#"
[defaults.switch]
buffer = "100KB"
latency = "2us"
[defaults.link]
rate = "1Gbps"
[defaults.host]
egress = "50KB"

[[hosts]]
name = "X"
[[links]]
between = ["X", "SW"]
rate = "40Gbps"
[[sources]]
host = "H{i}"
to = "X"
load = 0.3
repeat = { i = 3 }
"#,
    );
    let sc = load(&text, &[]).unwrap();
    assert_eq!(counts(&sc), (1, 4, 4));
    let sw = &sc.nodes[node(&sc, "SW")];
    let cnsim_core::scenario::spec::NodeKind::Switch(s) = &sw.kind else {
        panic!()
    };
    assert_eq!(s.latency.0, 2_000_000);
    assert!(matches!(
        s.buffer,
        cnsim_core::scenario::spec::BufferModel::PerOutput { bytes: 100_000 }
    ));
    let rates: Vec<u64> = sc.links.iter().map(|l| l.rate.0).collect();
    assert_eq!(
        rates,
        [1_000_000_000, 1_000_000_000, 1_000_000_000, 40_000_000_000]
    );
    let r = run(&sc, None);
    assert_conservation(&r);
    assert!(flow(&r, "H2->X").counters.volume.delivered_frames > 0);
}

/// The error for `[topology]` written as `lines`, checked for its location
/// (line of `mark` in the file) and parts.
fn check_error(lines: &str, extra: &str, mark: &str, parts: &[&str]) {
    let text = with_topology(lines, extra);
    let msg = reject(&text);
    let line = text
        .lines()
        .position(|l| l.contains(mark))
        .unwrap_or_else(|| panic!("test bug: '{mark}' not in the text"))
        + 1;
    assert!(
        msg.starts_with(&format!("topo.toml:{line}:")),
        "wrong line (want {line}): {msg}"
    );
    for p in parts {
        assert!(msg.contains(p), "'{p}' missing from: {msg}");
    }
}

#[test]
fn parser_errors_are_located_and_say_what_is_wrong() {
    check_error(
        "kind = \"fat_tree\"\nk = 7",
        "",
        "k = 7",
        &["topo.toml:5:5: topology.k: expected an even integer >= 2, found 7"],
    );
    check_error(
        "kind = \"fat_tree\"\nk = 0",
        "",
        "k = 0",
        &["topology.k: expected an even integer >= 2, found 0"],
    );
    check_error(
        "kind = \"fat_tree\"\nk = -4",
        "",
        "k = -4",
        &["topology.k: expected an even integer >= 2 or a parameter name, found -4"],
    );
    check_error(
        "kind = \"fat_tree\"\nk = 2.5",
        "",
        "k = 2.5",
        &["topology.k: expected an even integer >= 2 or a parameter name, found 2.5"],
    );
    check_error(
        "kind = \"leaf_spine\"\nleaves = 4\nspines = 0\nhosts_per_leaf = 2",
        "",
        "spines = 0",
        &["topology.spines: expected an integer >= 1, found 0"],
    );
    check_error(
        "kind = \"fat_tre\"\nk = 4",
        "",
        "fat_tre",
        &[
            "topology.kind",
            "unknown variant 'fat_tre' (did you mean 'fat_tree'?)",
            "'leaf_spine'",
            "'star'",
        ],
    );
    check_error(
        "kind = \"fat_tree\"\nk = 4\npods = 4",
        "",
        "pods",
        &["unknown field 'pods'", "expected one of 'kind', 'k'"],
    );
    check_error(
        "kind = \"star\"\nn = 4\nk = 4",
        "",
        "k = 4",
        &["topology.k: 'k' does not apply to kind = \"star\", which takes 'n'"],
    );
    check_error(
        "kind = \"leaf_spine\"\nleaves = 4\nspines = 2",
        "",
        "[topology]",
        &["topology: missing field 'hosts_per_leaf' (required for kind = \"leaf_spine\")"],
    );
    check_error("k = 4", "", "[topology]", &["missing field 'kind'"]);
    // A size from [params]: its value is checked, the parameter named.
    let text =
        "duration = \"1ms\"\n[params]\npods = 7\n[topology]\nkind = \"fat_tree\"\nk = \"pods\"\n";
    let msg = reject(text);
    assert!(msg.starts_with("topo.toml:6:"), "{msg}");
    assert!(
        msg.contains("expected an even integer >= 2, found 7 (parameter 'pods')"),
        "{msg}"
    );
    let msg = reject(&text.replace("k = \"pods\"", "k = \"pod\""));
    assert!(
        msg.contains("topology.k: unknown parameter 'pod' (did you mean 'pods'?)"),
        "{msg}"
    );
    // An override is checked like the file.
    let star = with_topology("kind = \"star\"\nn = 3", "");
    let msg = load(&star, &[("topology.n", "0")]).unwrap_err();
    assert!(
        msg.contains("topology.n: expected an integer >= 1, found 0"),
        "{msg}"
    );
}

#[test]
fn sizes_are_bounded_before_anything_is_generated() {
    for (t, part) in [
        ("kind = \"fat_tree\"\nk = 200", "the topology makes 8050000"),
        (
            "kind = \"fat_tree\"\nk = 2000000",
            "expected at most 1000000 entries",
        ),
        (
            "kind = \"star\"\nn = 600000",
            "expected at most 1000000 entries",
        ),
        (
            "kind = \"leaf_spine\"\nleaves = 100000\nspines = 100000\nhosts_per_leaf = 1",
            "expected at most 1000000 entries",
        ),
    ] {
        let started = std::time::Instant::now();
        let msg = reject(&with_topology(t, ""));
        assert!(msg.contains(part), "{t}: {msg}");
        assert!(started.elapsed().as_secs() < 2, "{t}: refused late");
    }
}

#[test]
fn clashes_with_written_entries_name_the_generated_one() {
    let msg = reject(&with_topology(
        "kind = \"star\"\nn = 3",
        "[[hosts]]\nname = \"H2\"\n[[links]]\nbetween = [\"H2\", \"SW\"]\n",
    ));
    assert!(
        msg.contains(
            "hosts[0].name: duplicate name 'H2' (first used at topology, generated entry 'H2')"
        ),
        "{msg}"
    );
    let msg = reject(&with_topology(
        "kind = \"star\"\nn = 3",
        "[[links]]\nbetween = [\"SW\", \"H1\"]\n",
    ));
    assert!(msg.contains("links[0].between"), "{msg}");
}

#[test]
fn the_documented_topology_example_is_valid() {
    let sc = load(&documented_topology_example(), &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(counts(&sc).1, 16);
    assert_eq!(sc.sources.len(), 16);
}

#[test]
fn the_bench_scenarios_load() {
    let sc = load_file("bench/fat_tree_k8.toml", &[]);
    assert_eq!(counts(&sc), (80, 128, 384));
    assert_eq!(sc.flows().len(), 128 * 127);
    let sc = load_file("bench/incast_1024.toml", &[]);
    assert_eq!(counts(&sc), (1, 1025, 1025));
    assert_eq!(sc.flows().len(), 1024);
}

/// `to = "*"` on every host of a large fabric is hosts² flows: refused at
/// the source that crosses the limit, before its destination list is made.
#[test]
fn too_many_flows_are_refused_at_the_source_that_crosses_the_limit() {
    check_error(
        "kind = \"fat_tree\"\nk = 48",
        "[[sources]]\nhost = \"H{p}.{e}.{h}\"\nto = \"*\"\nload = 0.1\nrepeat = { p = 48, e = 24, h = 24 }\n",
        "to = \"*\"",
        &["expected at most 2097152 flows in the scenario, found more (\"*\" adds 27647 to 2073525)", "sources[0].to", "(copy e=1, h=2, p=28)"],
    );
}
