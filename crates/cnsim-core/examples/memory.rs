//! Memory of a run per idle flow and per queue, counted by the allocator:
//! `cargo run --release -p cnsim-core --example memory`.
//!
//! A star (N hosts and one sink on one switch, 2(N+1) queues) is run for
//! 1 ms (one 1 ms bin) with no sources, then with one source per host that
//! starts after the end (N idle flows). Each line of output is JSON: the
//! peak of live heap bytes during `run` (series, state and the results it
//! returns), above what the parsed scenario holds. The slopes against N are
//! the cost of one queue and of one idle flow. `result_bytes` is what the
//! returned result holds (names and counters of every flow and queue, the
//! series). The engine frees its state before it builds the result, so the
//! peak is whichever of the two phases needs more.
//!
//! `-- fabric` measures the fat trees of `scenarios/workloads/
//! websearch_incast.toml` instead (k = 8, 16, 24; web search and incast
//! flows, DCQCN, shared buffers): the engine's state once set up (live
//! heap bytes after `Simulator::new`, before any event), with the
//! workloads' arrivals stopped at 0.25 ms and 0.5 ms (the slope is the
//! state per workload flow) and with 200 and 400 bins (the slope is the
//! state per port and bin); what is left, divided by the ports, is the
//! state per port (the routing table included). Then, at k = 8, each run
//! to the last flow's finish: the slope of `result_bytes` against the
//! flows is what a finished flow leaves in the result; and the peak of
//! live heap bytes during whole runs with 2 ms and 8 ms of arrivals.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn star(n: usize, idle_sources: bool) -> String {
    let mut s = String::from(
        "duration = \"1ms\"\nbin = \"1ms\"\n[[switches]]\nname = \"SW\"\nbuffer = \"150KB\"\n\
         [[hosts]]\nname = \"SINK\"\n[[links]]\nbetween = [\"SINK\", \"SW\"]\n",
    );
    for i in 1..=n {
        write!(
            s,
            "[[hosts]]\nname = \"H{i}\"\n[[links]]\nbetween = [\"H{i}\", \"SW\"]\n"
        )
        .unwrap();
        if idle_sources {
            write!(
                s,
                "[[sources]]\nhost = \"H{i}\"\nto = \"SINK\"\nload = 0.1\nstart = \"1s\"\nstop = \"2s\"\n"
            )
            .unwrap();
        }
    }
    s
}

/// `websearch_incast.toml` as a k-ary fat tree, arrivals stopped at
/// `stop`, `bin` wide bins.
fn fabric(k: u32, stop: &str, bin: &str) -> cnsim_core::Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/workloads/websearch_incast.toml");
    let set = |key: &str, value: &str| (key.to_string(), value.to_string());
    cnsim_core::scenario::load_file(
        &path,
        &[
            set("topology.k", &k.to_string()),
            set("workloads[web].stop", stop),
            set("workloads[incast].stop", stop),
            set("bin", bin),
        ],
    )
    .expect("the shipped scenario, resized")
}

/// Heap bytes the engine holds once `sc` is set up, and its flows, ports
/// and bins.
fn set_up(sc: &cnsim_core::Scenario) -> (usize, usize, usize, usize) {
    let base = LIVE.load(Relaxed);
    let sim = cnsim_core::sim::Simulator::new(sc, sc.seed);
    let bytes = LIVE.load(Relaxed) - base;
    drop(sim);
    let bins = sc.duration.0.div_ceil(sc.bin.0) as usize;
    (bytes, sc.run_flows(sc.seed).len(), 2 * sc.links.len(), bins)
}

fn fabric_main() {
    for k in [8, 16, 24] {
        let (a, flows_a, ports, bins_a) = set_up(&fabric(k, "0.25ms", "500us"));
        let (b, flows_b, _, _) = set_up(&fabric(k, "0.5ms", "500us"));
        let (c, _, _, bins_c) = set_up(&fabric(k, "0.25ms", "250us"));
        let per_flow = (b - a) as f64 / (flows_b - flows_a) as f64;
        let per_port_bin = (c - a) as f64 / (ports * (bins_c - bins_a)) as f64;
        let per_port =
            (a as f64 - per_flow * flows_a as f64 - per_port_bin * (ports * bins_a) as f64)
                / ports as f64;
        println!(
            "{{\"k\": {k}, \"ports\": {ports}, \"flows\": [{flows_a}, {flows_b}], \"set_up_bytes\": [{a}, {b}, {c}], \"per_flow\": {per_flow:.0}, \"per_port_bin\": {per_port_bin:.1}, \"per_port\": {per_port:.0}}}"
        );
    }
    let mut results = Vec::new();
    for stop in ["0.25ms", "0.5ms"] {
        let sc = fabric(8, stop, "500us");
        let base = LIVE.load(Relaxed);
        let r = cnsim_core::run(&sc, &cnsim_core::RunOptions::default()).expect("runs");
        results.push((sc.run_flows(sc.seed).len(), LIVE.load(Relaxed) - base));
        drop(r);
    }
    let [(fa, ra), (fb, rb)] = results[..] else {
        unreachable!("two runs")
    };
    println!(
        "{{\"k\": 8, \"flows\": [{fa}, {fb}], \"result_bytes\": [{ra}, {rb}], \"result_per_flow\": {:.0}}}",
        (rb - ra) as f64 / (fb - fa) as f64
    );
    // The peak over whole runs with more flows (it holds the flows' state,
    // the ports' queues at their longest and the result).
    let mut peaks = Vec::new();
    for stop in ["2ms", "8ms"] {
        let sc = fabric(8, stop, "500us");
        let base = LIVE.load(Relaxed);
        PEAK.store(base, Relaxed);
        let r = cnsim_core::run(&sc, &cnsim_core::RunOptions::default()).expect("runs");
        peaks.push((sc.run_flows(sc.seed).len(), PEAK.load(Relaxed) - base));
        drop(r);
    }
    let [(fa, pa), (fb, pb)] = peaks[..] else {
        unreachable!("two runs")
    };
    println!("{{\"k\": 8, \"flows\": [{fa}, {fb}], \"run_peak_bytes\": [{pa}, {pb}]}}");
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("fabric") {
        return fabric_main();
    }
    for idle in [false, true] {
        for n in [1_000usize, 4_000, 16_000] {
            let sc = cnsim_core::scenario::load(
                &star(n, idle),
                "star.toml",
                cnsim_core::Format::Toml,
                &[],
            )
            .expect("valid scenario");
            let base = LIVE.load(Relaxed);
            PEAK.store(base, Relaxed);
            let r = cnsim_core::run(&sc, &cnsim_core::RunOptions::default()).expect("runs");
            let peak = PEAK.load(Relaxed) - base;
            let result = LIVE.load(Relaxed) - base;
            drop(r);
            println!(
                "{{\"hosts\": {n}, \"queues\": {}, \"flows\": {}, \"run_peak_bytes\": {peak}, \"result_bytes\": {result}}}",
                2 * (n + 1),
                if idle { n } else { 0 }
            );
        }
    }
}
