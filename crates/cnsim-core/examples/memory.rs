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

fn main() {
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
