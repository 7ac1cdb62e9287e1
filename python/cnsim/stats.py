"""Statistics over seeds, as the reports state them."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

#: The confidence of every interval a report states.
CONFIDENCE = 0.95


def mean_interval(values: Iterable[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The mean of `values` (one per seed, NaN left out) and the half-width of its
    confidence interval, Student's t with n - 1 degrees of freedom: t * s / sqrt(n).

    The half-width is NaN with fewer than two values (no spread to measure);
    the mean is NaN with none.
    """
    v = np.asarray([x for x in values if not math.isnan(x)], dtype=float)
    if len(v) == 0:
        return float("nan"), float("nan")
    if len(v) < 2:
        return float(v[0]), float("nan")
    from scipy import stats  # imported when needed: it takes a while

    t = float(stats.t.ppf(0.5 + confidence / 2, len(v) - 1))
    return float(v.mean()), t * float(v.std(ddof=1)) / math.sqrt(len(v))


def mean_text(values: Iterable[float], fmt: str = "{:,.0f}") -> str:
    """The mean over seeds formatted with `fmt`, "± half-width" of its 95% interval when
    there are two values or more; "—" with none."""
    mean, half = mean_interval(values)
    if math.isnan(mean):
        return "—"
    return fmt.format(mean) + ("" if math.isnan(half) else f" ± {fmt.format(half)}")
