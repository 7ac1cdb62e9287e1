"""The thresholds of the control loops as the result tables record them, and what the figures draw of them.

The engine copies each threshold from the scenario into the result (docs/model.md, "Thresholds in the
results"); sizes are bytes, NaN where a threshold does not apply:

* ``queues``: ECN marking (``ecn_kmin_bytes``, ``ecn_kmax_bytes``; a step rule's K as both), PAUSE
  on the output queue (``pause_output_xoff_bytes``, ``pause_output_xon_bytes``: global mode) or on
  the port's input partition (``pause_input_xoff_bytes``, ``pause_input_xon_bytes``: per-input mode),
  and the congestion point's ``qeq_bytes`` (BCN, E2CM, QCN);
* ``classes``: static PFC thresholds on the class's input partition (``pfc_xoff_bytes``,
  ``pfc_xon_bytes``);
* ``buffer_occupancy`` (per shared-buffer switch, repeated on each bin): the pool, the lossless XOFF
  threshold as static bytes or as α of the free pool, the resume offset and the lossy egress
  threshold (:data:`BUFFER_COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

QUEUE_COLUMNS = (
    "ecn_kmin_bytes",
    "ecn_kmax_bytes",
    "pause_output_xoff_bytes",
    "pause_output_xon_bytes",
    "pause_input_xoff_bytes",
    "pause_input_xon_bytes",
    "qeq_bytes",
)
CLASS_COLUMNS = ("pfc_xoff_bytes", "pfc_xon_bytes")
#: Per shared-buffer switch; the summary's ``buffers`` has the same keys.
BUFFER_COLUMNS = (
    "shared_pool_bytes",
    "lossless_xoff_bytes",
    "lossless_xoff_alpha",
    "resume_offset_bytes",
    "lossy_egress_bytes",
    "lossy_egress_alpha",
)

#: A threshold with more distinct values than this among the queues of a panel is not drawn.
MAX_DISTINCT = 3

#: What an occupancy figure draws: thresholds compared with the output queue's own bytes, the
#: quantity it plots (not per-input PAUSE or PFC, which watch an input partition). (column, legend
#: name, colour); a step ECN rule (Kmin = Kmax) is drawn once, as "ECN K".
_QUEUE_LINES = (
    ("ecn_kmin_bytes", "ECN Kmin", "darkgoldenrod"),
    ("ecn_kmax_bytes", "ECN Kmax", "saddlebrown"),
    ("pause_output_xoff_bytes", "PAUSE XOFF", "black"),
    ("pause_output_xon_bytes", "PAUSE XON", "dimgray"),
    ("qeq_bytes", "QCN/BCN Qeq", "darkviolet"),
)
_STEP_ECN = ("ECN K", "darkgoldenrod")


def queue_lines(queues: Iterable[pd.DataFrame], names: Sequence[str]) -> list[tuple[str, str, list[float]]]:
    """The thresholds to draw over the occupancy of the queues *names*: (legend name, colour, distinct
    values in bytes) for each threshold some of them have, from the ``queues`` tables of the runs
    shown; a threshold with more than :data:`MAX_DISTINCT` values is left out rather than clutter the
    panel. Tables saved before the thresholds were recorded have none."""
    rows = [q[q["name"].isin(names)] for q in queues]
    found: dict[tuple[str, str], set[float]] = {}
    for column, label, colour in _QUEUE_LINES:
        values: set[float] = set()
        for q in rows:
            if column not in q:
                continue
            col = q[column]
            if column.startswith("ecn_"):
                # Kmin = Kmax is a step rule: one line, its K.
                step = q["ecn_kmin_bytes"] == q["ecn_kmax_bytes"]
                found.setdefault(_STEP_ECN, set()).update(col[step].dropna())
                col = col[~step]
            values.update(col.dropna())
        found.setdefault((label, colour), set()).update(values)
    return [(label, colour, sorted(v)) for (label, colour), v in found.items() if 0 < len(v) <= MAX_DISTINCT]


def lossless_xoff(buffer_rows: pd.DataFrame) -> np.ndarray:
    """A shared-buffer switch's lossless XOFF threshold per row of ``buffer_occupancy`` (bytes of the
    pool an ingress queue may use): the static size, or α × (pool − shared in use), time-averaged over
    the bin (the threshold is linear in the pool's use; the engine rounds it down to whole bytes).
    NaN without lossless classes or for results saved before the thresholds were recorded."""
    n = len(buffer_rows)
    if "lossless_xoff_alpha" not in buffer_rows:
        return np.full(n, np.nan)
    alpha = buffer_rows["lossless_xoff_alpha"].to_numpy(dtype=float)
    free = (buffer_rows["shared_pool_bytes"] - buffer_rows["shared_mean_bytes"]).to_numpy(dtype=float)
    static = buffer_rows["lossless_xoff_bytes"].to_numpy(dtype=float)
    return np.where(np.isnan(alpha), static, alpha * free)
