"""Compare two builds of cnsim in paired runs: both run the same scenario at
the same time, one per core (swapped every round), so that the machine's
drift, which on a shared virtual machine reaches ±20% within minutes,
weighs on both alike. Prints, per scenario, the median engine time per
frame-hop of each build and the median and quartiles of the pairs' ratios
(B over A). Both builds must give the same fingerprint.

    python bench/pairs.py ROUNDS DIR_A DIR_B SCENARIO...

DIR_A and DIR_B are directories holding a built `cnsim` package (a copy
of `python/` after `make build`). Needs two cores and `taskset`.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

RUN = """
import json, sys
from cnsim import api
s = api.run(sys.argv[1]).summary
print(json.dumps([s["wall_time_s"] / s["frame_hops"] * 1e9, s["fingerprint"]]))
"""


def pair(dirs: list[str], scenario: str, cores: tuple[int, int]) -> list[tuple[float, str]]:
    procs = [
        subprocess.Popen(
            ["taskset", "-c", str(core), sys.executable, "-c", RUN, scenario],
            env={"PYTHONPATH": d, "PATH": "/usr/bin:/bin"},
            stdout=subprocess.PIPE,
            text=True,
        )
        for d, core in zip(dirs, cores)
    ]
    out = []
    for p in procs:
        stdout, _ = p.communicate()
        if p.returncode:
            sys.exit(f"{scenario}: a run failed (exit {p.returncode})")
        ns, fingerprint = json.loads(stdout.strip().splitlines()[-1])
        out.append((ns, fingerprint))
    return out


def main() -> None:
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    rounds, dirs, scenarios = int(sys.argv[1]), sys.argv[2:4], sys.argv[4:]
    for scenario in scenarios:
        a, b, ratios = [], [], []
        for r in range(rounds):
            (na, fa), (nb, fb) = pair(dirs, scenario, (0, 1) if r % 2 == 0 else (1, 0))
            if fa != fb:
                sys.exit(f"{scenario}: fingerprints differ ({fa}, {fb})")
            a.append(na)
            b.append(nb)
            ratios.append(nb / na)
        q1, _, q3 = statistics.quantiles(ratios, n=4)
        print(
            f"{scenario}: A {statistics.median(a):.1f}, B {statistics.median(b):.1f} ns per frame-hop;"
            f" B/A {statistics.median(ratios):.3f} (quartiles {q1:.3f}-{q3:.3f}, {rounds} pairs)"
        )


if __name__ == "__main__":
    main()
