"""Scaling curves of the engine, for docs/performance.md.

    .venv/bin/python bench/scaling.py [--quick] [--out docs/figures] [--json bench/scaling.json]

Four measurements, each run in this process one at a time on one thread,
with the invariant checks on; every number is the engine's own (the run's
summary):

* cost vs simulated time: study A ``no_cm`` for 10 ms ... 400 ms;
* cost vs number of flows on one bottleneck: N hosts on one switch send to
  one sink (UDP, Bernoulli, total offered load 1.2 x the sink's link, 10 ms),
  N = 10 ... 10,000;
* cost vs number of hosts: ``bench/fat_tree_k8.toml`` resized to k = 4, 8, 16
  (16, 128, 1024 hosts; every host sends to every other, so 240, 16,256 and
  1,047,552 flows), 1 ms;
* memory: ``examples/memory.rs`` counts heap bytes in the allocator for
  stars with no sources (queues only) and with sources that never start
  (idle flows); the slopes are the cost of one queue and of one idle flow,
  with the part that is the returned result (names, counters) apart.

Figures go to ``--out`` as PNG, the numbers to ``--json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import cnsim  # noqa: E402
from cnsim.bench import machine, reset_peak_memory  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def measure(scenario, seed: int = 1, **sets) -> dict:
    reset_peak_memory()
    started = time.perf_counter()
    s = cnsim.run(scenario, seed=seed, set=sets or None).summary
    return {
        "wall_s": s["wall_time_s"],
        "process_s": time.perf_counter() - started,
        "simulated_s": s["duration_s"],
        "events": s["events"],
        "frame_hops": s["frame_hops"],
        "frame_hops_per_s": s["frame_hops_per_s"],
        "peak_memory_bytes": s.get("peak_memory_bytes"),
    }


def star(n: int, load_total: float = 1.2, duration: str = "10ms", idle: bool = False, sources: bool = True) -> dict:
    """N senders on one switch, one sink; per-sender load `load_total / n`."""
    hosts = [{"name": f"H{i}"} for i in range(1, n + 1)] + [{"name": "SINK"}]
    links = [{"between": [h["name"], "SW"]} for h in hosts]
    sc = {
        "name": f"star-{n}",
        "duration": duration,
        "bin": "1ms",
        "defaults": {
            "link": {"rate": "10Gbps", "delay": "0.5us"},
            "switch": {"latency": "1us", "buffer": "150KB"},
            "host": {"egress": "150KB"},
            "source": {"kind": "bernoulli", "frame": "1500B"},
        },
        "switches": [{"name": "SW"}],
        "hosts": hosts,
        "links": links,
    }
    if sources:
        load = min(1.0, load_total / n)
        # Idle: a source that starts after the end never sends.
        start = {"start": "1s", "stop": "2s"} if idle else {}
        sc["sources"] = [{"host": f"H{i}", "to": "SINK", "load": load, **start} for i in range(1, n + 1)]
    return sc


def time_curve(quick: bool) -> list[dict]:
    durations = ["10ms", "50ms", "100ms"] if quick else ["10ms", "25ms", "50ms", "100ms", "200ms", "400ms"]
    rows = []
    for d in durations:
        m = measure(ROOT / "scenarios/baseline/no_cm.toml", duration=d)
        rows.append({"duration": d, **m})
        print(f"time    {d:>6}: {m['wall_s'] * 1e3:8.1f} ms, {m['frame_hops_per_s'] / 1e6:.2f} M fh/s")
    return rows


def flows_curve(quick: bool) -> list[dict]:
    ns = [10, 100, 1000] if quick else [10, 30, 100, 300, 1000, 3000, 10000]
    rows = []
    for n in ns:
        m = measure(star(n))
        rows.append({"flows": n, **m})
        print(f"flows   {n:>6}: {m['wall_s'] * 1e3:8.1f} ms, {m['frame_hops_per_s'] / 1e6:.2f} M fh/s, "
              f"{m['wall_s'] / m['frame_hops'] * 1e9:.0f} ns/frame-hop")
    return rows


def hosts_curve(quick: bool) -> list[dict]:
    ks = [4, 8] if quick else [4, 8, 16]
    rows = []
    for k in ks:
        m = measure(HERE / "fat_tree_k8.toml", duration="1ms", **{"params.k": k, "params.half": k // 2})
        rows.append({"k": k, "hosts": k**3 // 4, **m})
        print(f"fat-tree k={k:>2}: {m['wall_s']:8.2f} s, {m['frame_hops_per_s'] / 1e6:.2f} M fh/s, "
              f"peak {m['peak_memory_bytes'] / 1e6:.0f} MB")
    return rows


def memory_curve(quick: bool) -> dict:
    """Heap bytes per queue and per idle flow, counted by the allocator
    (``examples/memory.rs``: stars of 1,000 to 16,000 hosts)."""
    out = subprocess.run(
        ["cargo", "run", "--release", "-q", "-p", "cnsim-core", "--example", "memory"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    queues = [r for r in rows if r["flows"] == 0]
    idle = [r for r in rows if r["flows"] > 0]

    def slope(rows, x, y):
        return float(np.polyfit([r[x] for r in rows], [r[y] for r in rows], 1)[0])

    per_queue = slope(queues, "queues", "run_peak_bytes")
    per_queue_result = slope(queues, "queues", "result_bytes")
    # Same stars with one idle source per host: the difference is the flows.
    extra = [{"flows": i["flows"], "peak": i["run_peak_bytes"] - q["run_peak_bytes"],
              "result": i["result_bytes"] - q["result_bytes"]} for i, q in zip(idle, queues)]
    per_flow = slope(extra, "flows", "peak")
    per_flow_result = slope(extra, "flows", "result")
    for r in rows:
        print(f"memory  {r['hosts']:>6} hosts, {r['flows']:>6} idle flows: run peak {r['run_peak_bytes'] / 1e6:.1f} MB")
    return {"rows": rows, "bytes_per_queue": per_queue, "result_bytes_per_queue": per_queue_result,
            "bytes_per_idle_flow": per_flow, "result_bytes_per_idle_flow": per_flow_result}


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot(results: dict, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    fig, ax = plt.subplots(figsize=(5, 3.4))
    t = results["time"]
    x = [r["simulated_s"] * 1e3 for r in t]
    y = [r["wall_s"] * 1e3 for r in t]
    ax.plot(x, y, "o-", label="study A no_cm")
    fit = np.polyfit(x, y, 1)
    ax.plot(x, np.polyval(fit, x), "--", color="grey", label=f"linear fit: {fit[0]:.3f} ms per ms")
    ax.set(xlabel="simulated time (ms)", ylabel="wall time (ms)", title="Cost vs simulated time")
    ax.legend()
    ax.grid(alpha=0.3)
    paths.append(_save(fig, out / "scaling_time.png"))

    fig, ax = plt.subplots(figsize=(5, 3.4))
    f = results["flows"]
    x = np.array([r["flows"] for r in f], float)
    wall = np.array([r["wall_s"] * 1e3 for r in f])
    ax.loglog(x, wall, "o-", label="measured (same frame-hops at every N)")
    ref = wall[-1] * (x * np.log2(x)) / (x[-1] * np.log2(x[-1]))
    ax.loglog(x, ref, "--", color="grey", label="∝ n log n")
    ax.set(xlabel="flows on one bottleneck", ylabel="wall time (ms), 10 ms simulated",
           title="Cost vs number of flows")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    paths.append(_save(fig, out / "scaling_flows.png"))

    fig, ax = plt.subplots(figsize=(5, 3.4))
    h = results["hosts"]
    ax.loglog([r["hosts"] for r in h], [r["wall_s"] for r in h], "o-", label="wall time, 1 ms simulated")
    ax2 = ax.twinx()
    ax2.semilogx([r["hosts"] for r in h], [r["wall_s"] / r["frame_hops"] * 1e9 for r in h], "s--", color="C1",
                 label="ns per frame-hop")
    ax2.set_ylabel("ns per frame-hop")
    ax2.set_ylim(bottom=0)
    ax.set(xlabel="hosts (fat tree k = 4, 8, 16)", ylabel="wall time (s)", title="Cost vs number of hosts")
    ax.legend(loc="upper left")
    ax2.legend(loc="lower right")
    ax.grid(alpha=0.3, which="both")
    paths.append(_save(fig, out / "scaling_hosts.png"))
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer and smaller points")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "figures")
    ap.add_argument("--json", type=Path, default=HERE / "scaling.json")
    ap.add_argument("--replot", action="store_true", help="only redraw the figures from --json")
    args = ap.parse_args()
    if args.replot:
        for p in plot(json.loads(args.json.read_text()), args.out):
            print(f"figure: {p}")
        return
    results = {"machine": machine(), "quick": args.quick}
    results["time"] = time_curve(args.quick)
    results["flows"] = flows_curve(args.quick)
    results["hosts"] = hosts_curve(args.quick)
    results["memory"] = memory_curve(args.quick)
    m = results["memory"]
    print(f"memory: {m['bytes_per_idle_flow']:.0f} B per idle flow ({m['result_bytes_per_idle_flow']:.0f} B of it "
          f"result), {m['bytes_per_queue']:.0f} B per queue ({m['result_bytes_per_queue']:.0f} B of it result)")
    for p in plot(results, args.out):
        print(f"figure: {p}")
    args.json.write_text(json.dumps(results, indent=1))
    print(f"numbers: {args.json}")


if __name__ == "__main__":
    main()
