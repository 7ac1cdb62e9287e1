//! A split run (`RunOptions::threads`, docs/parallel.md) gives the one
//! run's results bit for bit: the fingerprint, the event count, every
//! counter, series and table, for any number of partitions.

use crate::common::*;
use cnsim_core::results::RunResult;
use cnsim_core::RunOptions;
use proptest::prelude::*;

fn run_split(sc: &cnsim_core::scenario::spec::Scenario, threads: usize) -> RunResult {
    cnsim_core::run(
        sc,
        &RunOptions {
            threads,
            ..RunOptions::default()
        },
    )
    .expect("run completes")
}

/// Everything a result holds but what the machine measured and the
/// threads it ran on.
fn outputs(r: &RunResult) -> String {
    let mut summary = serde_json::to_value(&r.summary).unwrap();
    let m = summary.as_object_mut().unwrap();
    for k in [
        "events_per_s",
        "frame_hops_per_s",
        "slowdown",
        "wall_time_s",
        "peak_memory_bytes",
        "rss_growth_bytes",
        "threads_requested",
        "threads_used",
        "threads_note",
    ] {
        m.remove(k);
    }
    format!(
        "{summary}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        r.flows, r.workload_flows, r.queues, r.series, r.pfc_events
    )
}

fn assert_same_split(rel: &str, overrides: &[(&str, &str)], splits: &[usize]) {
    let sc = load_file(rel, overrides);
    let whole = run(&sc, None);
    let want = outputs(&whole);
    for &n in splits {
        let got = outputs(&run_split(&sc, n));
        if got != want {
            let line = want
                .lines()
                .zip(got.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            let (a, b) = (
                want.lines().nth(line).unwrap_or(""),
                got.lines().nth(line).unwrap_or(""),
            );
            let at = a
                .chars()
                .zip(b.chars())
                .position(|(x, y)| x != y)
                .unwrap_or(0);
            let from = at.saturating_sub(200);
            panic!(
                "{rel} in {n} partitions differs (part {line}):\n one: {}\n split: {}",
                a.chars().skip(from).take(500).collect::<String>(),
                b.chars().skip(from).take(500).collect::<String>()
            );
        }
    }
}

#[test]
fn a_fat_tree_under_pause_and_qcn_splits_into_identical_results() {
    assert_same_split(
        "bench/fat_tree_k8.toml",
        &[("params.k", "4"), ("params.half", "2"), ("duration", "2ms")],
        &[2, 4],
    );
}

#[test]
fn every_shipped_scenario_splits_into_identical_results() {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(repo_file("scenarios")).unwrap() {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "toml") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    for p in files {
        let rel = p
            .strip_prefix(repo_file(""))
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        // Long enough for congestion, PAUSE or PFC and the schemes to act
        // (some sources start at 5 ms).
        // A scenario whose metrics need more keeps its own duration.
        let short = [("duration".to_string(), "8ms".to_string())];
        let sc = load_file(&rel, &[]);
        let shorter = sc.duration > cnsim_core::units::Time::from_ms(8)
            && cnsim_core::scenario::load_file(&p, &short).is_ok();
        let ov: Vec<(&str, &str)> = if rel.contains("fct_fabric") {
            // 320 hosts at 100 Gb/s: 0.2 ms of arrivals, until they finish.
            vec![
                ("workloads[web].stop", "200us"),
                ("workloads[incast].stop", "200us"),
            ]
        } else if shorter {
            vec![("duration", "8ms")]
        } else {
            vec![]
        };
        assert_same_split(&rel, &ov, &[2, 3]);
    }
}

#[test]
fn deadlocks_and_event_limits_stop_a_split_run_where_they_stop_one_run() {
    for rel in [
        "scenarios/deadlock/ring.toml",
        "scenarios/pfc/deadlock_ring.toml",
        "scenarios/pfc/deadlock_clos_bounce.toml",
    ] {
        let ov = [("watchdog.stop_on_deadlock", "true")];
        let whole = run(&load_file(rel, &ov), None);
        assert!(whole.summary.partial.is_some(), "{rel} deadlocks");
        assert_same_split(rel, &ov, &[2, 3]);
    }
    let sc = load_file(
        "bench/fat_tree_k8.toml",
        &[("params.k", "4"), ("params.half", "2")],
    );
    let limited = |threads| {
        let opts = RunOptions {
            max_events: Some(123_457),
            threads,
            ..RunOptions::default()
        };
        outputs(&cnsim_core::run(&sc, &opts).unwrap())
    };
    let one = limited(1);
    assert!(one.contains("max_events"));
    assert_eq!(limited(2), one);
    assert_eq!(limited(4), one);
}

/// Two switches joined by a 1 us link, a host on each, A sending to B;
/// `sections` added at the end.
fn two_switches(sections: &str) -> cnsim_core::scenario::spec::Scenario {
    load_str(&format!(
        r#"
duration = "1ms"
bin = "500us"
[defaults.link]
rate = "10Gbps"
delay = "1us"
[defaults.switch]
latency = "1us"
[defaults.host]
voq = true
[[switches]]
name = "S0"
[[switches]]
name = "S1"
[[hosts]]
name = "A"
[[hosts]]
name = "B"
[[links]]
between = ["S0", "S1"]
[[links]]
between = ["A", "S0"]
[[links]]
between = ["B", "S1"]
[[sources]]
host = "A"
to = "B"
load = 0.5
{sections}
"#
    ))
}

/// (threads_requested, threads_used, threads_note) of a run.
fn threads_of(r: &RunResult) -> (usize, usize, Option<&str>) {
    let s = &r.summary;
    (
        s.threads_requested,
        s.threads_used,
        s.threads_note.as_deref(),
    )
}

#[test]
fn the_summary_says_how_many_threads_a_run_used_and_why_fewer() {
    let fat_tree = load_file(
        "bench/fat_tree_k8.toml",
        &[("params.k", "4"), ("params.half", "2"), ("duration", "1ms")],
    );
    let two = run_split(&fat_tree, 2);
    assert_eq!(threads_of(&two), (2, 2, None));
    assert_eq!(threads_of(&run_split(&fat_tree, 1)), (1, 1, None));
    // Without a count: the scenario's (1).
    let one = run(&fat_tree, None);
    assert_eq!(threads_of(&one), (1, 1, None));
    assert_eq!(outputs(&two), outputs(&one));

    // Two switches make two partitions at most.
    let plain = two_switches("");
    assert_eq!(threads_of(&run_split(&plain, 2)), (2, 2, None));
    assert_eq!(
        threads_of(&run_split(&plain, 3)),
        (3, 2, Some("the topology gives only 2 partitions"))
    );
    // E2CM's probes cross with their records.
    let e2cm = two_switches("[bcn]\nqeq = \"75KB\"\n[e2cm]\n");
    let split = run_split(&e2cm, 2);
    assert!(split.flows[0].probes_sent > 0, "E2CM probes");
    assert!(split.flows[0].probe_replies > 0, "reflected probes back");
    assert_eq!(threads_of(&split), (2, 2, None));
    assert_eq!(outputs(&split), outputs(&run(&e2cm, None)));
    // A network without a link between two switches keeps one thread.
    let line = load_str(
        &Line {
            duration: "1ms",
            source: "load = 0.5",
            ..Line::default()
        }
        .toml(),
    );
    assert_eq!(
        threads_of(&run_split(&line, 2)),
        (2, 1, Some("no link between two switches with a delay"))
    );
}

/// A random network: switches in a chain (or a ring), links of their own
/// delays, hosts sending UDP or TCP to others, under one of drop tail,
/// PAUSE, PAUSE + QCN, PFC with ECN marking (DCTCP) or drop tail with
/// BCN and E2CM's probes (UDP only; probes are dropped with data).
#[derive(Debug, Clone)]
struct Net {
    delays_ns: Vec<u64>,
    ring: bool,
    latency_ns: u64,
    hosts: Vec<(usize, usize, f64, bool)>,
    flavour: u8,
}

impl Net {
    fn toml(&self) -> String {
        let n_sw = self.delays_ns.len() + 1;
        let mut t = format!(
            "duration = \"2ms\"\nbin = \"500us\"\n[defaults.switch]\nlatency = \"{}ns\"\nresponse_time = \"1us\"\nbuffer = \"150KB\"\n",
            self.latency_ns
        );
        t += match self.flavour {
            0 => "",
            1 | 2 => "pause = { mode = \"global\", xoff = \"90KB\", xon = \"80KB\", refresh = true }\n",
            3 => "pfc = { classes = [0], xoff = \"60KB\", xon = \"50KB\" }\necn = { rule = \"step\", k = \"30KB\" }\n",
            _ => "",
        };
        t += "[defaults.host]\negress = \"150KB\"\nresponse_time = \"1us\"\n";
        if self.flavour == 2 {
            t += "[qcn]\nqeq = \"26KB\"\nw = 2.0\nsample_interval = \"150KB\"\nmin_rate = \"10Mbps\"\nrl_queue = \"150KB\"\n";
        }
        if self.flavour == 3 {
            t += "[tcp]\necn = \"dctcp\"\n";
        }
        if self.flavour == 4 {
            t += "[bcn]\nqeq = \"75KB\"\n[e2cm]\n";
        }
        for s in 0..n_sw {
            t += &format!("[[switches]]\nname = \"S{s}\"\n");
        }
        for (s, d) in self.delays_ns.iter().enumerate() {
            t += &format!(
                "[[links]]\nbetween = [\"S{s}\", \"S{}\"]\ndelay = \"{d}ns\"\n",
                s + 1
            );
        }
        if self.ring && n_sw > 2 {
            t += &format!(
                "[[links]]\nbetween = [\"S{}\", \"S0\"]\ndelay = \"700ns\"\n",
                n_sw - 1
            );
        }
        let n = self.hosts.len();
        for (i, &(sw, dst, load, tcp)) in self.hosts.iter().enumerate() {
            t += &format!(
                "[[hosts]]\nname = \"H{i}\"\n[[links]]\nbetween = [\"H{i}\", \"S{}\"]\ndelay = \"300ns\"\n",
                sw % n_sw
            );
            let dst = if dst % n == i { (i + 1) % n } else { dst % n };
            let transport = if (tcp && self.flavour != 4) || self.flavour == 3 {
                "tcp"
            } else {
                "udp"
            };
            t += &format!(
                "[[sources]]\nhost = \"H{i}\"\nto = \"H{dst}\"\nload = {load}\ntransport = \"{transport}\"\n"
            );
        }
        t
    }
}

fn nets() -> impl Strategy<Value = Net> {
    (
        prop::collection::vec(100u64..3000, 1..=4),
        any::<bool>(),
        0u64..1500,
        prop::collection::vec((0usize..5, 0usize..8, 0.2f64..1.0, any::<bool>()), 3..=8),
        0u8..5,
    )
        .prop_map(|(delays_ns, ring, latency_ns, hosts, flavour)| Net {
            delays_ns,
            ring,
            latency_ns,
            hosts: hosts
                .into_iter()
                .map(|(s, d, l, tcp)| (s, d, (l * 100.0).round() / 100.0, tcp))
                .collect(),
            flavour,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_networks_split_into_identical_results(net in nets()) {
        let text = net.toml();
        let sc = load_str(&text);
        let want = outputs(&run(&sc, Some(5)));
        for threads in [2, 3] {
            let got = outputs(&cnsim_core::run(&sc, &RunOptions { seed: Some(5), threads, ..RunOptions::default() }).unwrap());
            prop_assert!(got == want, "{threads} partitions differ; scenario:\n{text}");
        }
    }
}
