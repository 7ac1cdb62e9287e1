"""A run's memory estimate against its measured peak, for docs/performance.md.

    .venv/bin/python bench/memory.py            # the benchmark set and the large cases below
    .venv/bin/python bench/memory.py --quick    # without the k = 16 fat tree (about a minute)

Each case runs in a child process, as ``cnsim run`` does (run, build the
result tables, save them as Parquet), and the child's peak resident set
(``VmHWM``) is what it reports as it ends. The estimate is what the run is
checked against before it starts (``memory_estimate_bytes``); the process
itself (interpreter, numpy, pandas, pyarrow) is resident before the check
and not part of it, so the table shows it separately: a tiny run's peak.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import cnsim

HERE = Path(__file__).resolve().parent

# The child reports its own high-water mark (VmHWM): its rusage would also
# count the parent's pages resident when it was forked.
CHILD = """
import json, sys, cnsim
case = json.loads(sys.argv[1])
cnsim.run(case["scenario"], seed=1, set=case["set"], out=sys.argv[2])
with open("/proc/self/status") as status:
    print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
"""


# QCN whose congestion points sample every frame and want queues under one
# frame: every flow of a star's all-to-all gets a limiter, and with it a
# row of the limiter series (only throttled flows have one), the case the
# memory estimate provides for.
QCN_EVERY_FLOW = {"qcn": {"qeq": "1.5KB", "sample_interval": "1.5KB"}}


def _star_all_to_all(n: int, bin_: str, extra: dict | None = None) -> dict:
    """Every host of a star sends to every other: n(n-1) flows, 2n ports."""
    scenario = {
        "name": f"star{n}_all_to_all",
        "duration": "5ms",
        "bin": bin_,
        "topology": {"kind": "star", "n": n},
        "defaults": {
            "link": {"rate": "10Gbps", "delay": "1us"},
            "switch": {"buffer_model": "per_output", "buffer": "150KB"},
            "host": {"egress": "150KB"},
        },
        "sources": [{"host": f"H{i}", "to": "*", "load": 0.5, "frame": "1500B"} for i in range(1, n + 1)],
    }
    scenario.update(extra or {})
    return scenario


def _fat_tree_all_to_all(k: int) -> dict:
    """The benchmark fat tree with k pods, every host to every other, 2 bins."""
    scenario = tomllib.loads((HERE / "fat_tree_k8.toml").read_text())
    scenario["name"] = f"fat_tree_k{k}_all_to_all"
    scenario["params"] = {"k": k, "half": k // 2}
    scenario["duration"], scenario["bin"] = "200us", "100us"
    return scenario


def cases(quick: bool) -> list[tuple[str, object, dict]]:
    out = []
    for b in tomllib.loads((HERE / "benchmarks.toml").read_text())["benchmark"]:
        out.append((b["name"], str((HERE / b["scenario"]).resolve()), dict(b.get("set", {}))))
    out += [
        ("star 100, all to all, 1 us bins", _star_all_to_all(100, "1us"), {}),
        ("star 100, all to all, 2 us bins, QCN", _star_all_to_all(100, "2us", QCN_EVERY_FLOW), {}),
        ("fat tree k=12, all to all", _fat_tree_all_to_all(12), {}),
    ]
    if not quick:
        out.append(("fat tree k=16, all to all", _fat_tree_all_to_all(16), {}))
    return out


def peak_bytes(scenario: object, overrides: dict) -> int:
    """Peak resident bytes of a child process that runs and saves *scenario*."""
    with tempfile.TemporaryDirectory() as tmp:
        case = json.dumps({"scenario": scenario, "set": overrides})
        child = subprocess.run([sys.executable, "-c", CHILD, case, os.path.join(tmp, "result")],
                               capture_output=True, text=True)
        if child.returncode != 0:
            raise SystemExit(f"the run failed (status {child.returncode}): {child.stderr}")
        return int(child.stdout.split()[-1]) * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="leave out the k = 16 fat tree")
    args = parser.parse_args()
    base = peak_bytes(_star_all_to_all(2, "1ms"), {"duration": "1ms"})
    print(f"process without a run (a tiny run's peak): {base / 2**20:.0f} MiB\n")
    print("| case | flows | ports | bins | estimate (MiB) | peak − process (MiB) | estimate / measured |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, scenario, overrides in cases(args.quick):
        d = cnsim.validate(scenario, set=overrides)
        bins = round(d["duration_s"] / d["bin_s"])
        estimate = d["memory_estimate_bytes"]
        measured = max(peak_bytes(scenario, overrides) - base, 1)
        print(f"| {name} | {len(d['flows']):,} | {len(d['queues']):,} | {bins:,} | {estimate / 2**20:,.0f} | "
              f"{measured / 2**20:,.0f} | {estimate / measured:.2f} |", flush=True)


if __name__ == "__main__":
    main()
