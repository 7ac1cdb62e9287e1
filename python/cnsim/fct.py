"""Flow completion times of workload flows: slowdown by flow-size bin and summaries.

A workload flow's slowdown is its completion time over its ideal one (the
same flow alone on the idle network, see docs/model.md), so 1 is the best
a flow can do. The bins follow the HPCC paper's figures: workload flows
sorted by size and cut into equal-count bins of the flow-size percentile
(20 bins of 5% by default); each bin reports its size range and the
median, 95th and 99th percentile slowdown of its finished flows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

#: Flows below this size are "short", at or above LONG_BYTES "long" (the
#: pFabric and HPCC papers' split of the web search workload).
SHORT_BYTES = 100_000
LONG_BYTES = 10_000_000

FCT_BIN_COLUMNS = {
    "bin": "int64",
    "percentile_low": "float64",
    "percentile_high": "float64",
    "flows": "int64",
    "finished": "int64",
    "size_min_bytes": "int64",
    "size_max_bytes": "int64",
    "slowdown_median": "float64",
    "slowdown_p95": "float64",
    "slowdown_p99": "float64",
}


def workload_flows(flows: pd.DataFrame) -> pd.DataFrame:
    """The rows of a flows table that belong to workloads."""
    if "workload" not in flows.columns:
        return flows.iloc[0:0]
    return flows[flows["workload"].notna()]


def empty_bins() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in FCT_BIN_COLUMNS.items()})


def bins(flows: pd.DataFrame, n_bins: int = 20) -> pd.DataFrame:
    """Slowdown per flow-size percentile bin over every workload flow of *flows*.

    Flows are ranked by size (ties by start, then name) and bin k holds the
    ranks in [k/n, (k+1)/n) of the count. Unfinished flows count in
    ``flows`` but have no slowdown.
    """
    w = workload_flows(flows)
    if w.empty:
        return empty_bins()
    w = w.sort_values(["size_bytes", "start_s", "name"], kind="stable")
    n = len(w)
    edges = np.floor(np.arange(n_bins + 1) * n / n_bins).astype(int)
    rows = []
    sizes = w["size_bytes"].to_numpy(dtype=np.int64)
    slow = w["slowdown"].to_numpy(dtype=np.float64)
    for k in range(n_bins):
        lo, hi = edges[k], edges[k + 1]
        if hi <= lo:
            continue
        s = slow[lo:hi]
        s = s[~np.isnan(s)]
        q = np.percentile(s, [50, 95, 99]) if len(s) else [np.nan] * 3
        rows.append(
            {
                "bin": k,
                "percentile_low": 100.0 * k / n_bins,
                "percentile_high": 100.0 * (k + 1) / n_bins,
                "flows": int(hi - lo),
                "finished": int(len(s)),
                "size_min_bytes": int(sizes[lo]),
                "size_max_bytes": int(sizes[hi - 1]),
                "slowdown_median": float(q[0]),
                "slowdown_p95": float(q[1]),
                "slowdown_p99": float(q[2]),
            }
        )
    return pd.DataFrame(rows, columns=list(FCT_BIN_COLUMNS)).astype(FCT_BIN_COLUMNS)


def _stats(group: pd.DataFrame) -> dict[str, Any]:
    done = group["slowdown"].dropna().to_numpy(dtype=np.float64)
    fct = group["fct_s"].dropna().to_numpy(dtype=np.float64)

    def pct(v: np.ndarray, p: float) -> float | None:
        return float(np.percentile(v, p)) if len(v) else None

    return {
        "flows": int(len(group)),
        "finished": int(len(done)),
        "slowdown_mean": float(done.mean()) if len(done) else None,
        "slowdown_median": pct(done, 50),
        "slowdown_p95": pct(done, 95),
        "slowdown_p99": pct(done, 99),
        "fct_mean_s": float(fct.mean()) if len(fct) else None,
        "fct_p99_s": pct(fct, 99),
    }


def summary(flows: pd.DataFrame) -> dict[str, Any] | None:
    """Counts and slowdown statistics of the workload flows: overall, short
    (below 100 KB) and long (10 MB and above); None without workloads."""
    w = workload_flows(flows)
    if w.empty:
        return None
    size = w["size_bytes"]
    unfinished = w[w["finish_s"].isna()]
    return {
        "flows": int(len(w)),
        "finished": int(len(w) - len(unfinished)),
        "unfinished": int(len(unfinished)),
        "unfinished_flows": unfinished["name"].head(100).tolist(),
        "short_below_bytes": SHORT_BYTES,
        "long_from_bytes": LONG_BYTES,
        "overall": _stats(w),
        "short": _stats(w[size < SHORT_BYTES]),
        "long": _stats(w[size >= LONG_BYTES]),
    }
