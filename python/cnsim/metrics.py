"""Sweep metrics: the columns of a sweep summary computed from each point's result.

Built in, from the point's ``summary.json``: Jain's fairness index over the
sources' flows (``jain_index``), and the derived metrics the scenario asks
for (``[metrics]``: fairness over a window, time to stability) and the
watchdog's deadlocks.

User-defined, from the point's :class:`cnsim.Result`: a Python callable
``fn(result) -> float``, or an expression (``cnsim sweep --metric``, ``[sweep]
metrics`` in a scenario file, or a string in ``cnsim.sweep(metrics=...)``)
of arithmetic over the result's tables::

    flows["C1->S1"].delivered_gbps          a named flow's column (the flows table)
    queues["CORE->S1"].max_occupancy_bytes  a named queue's column (the queues table)
    totals.dropped_frames                   a total of the summary
    summary.duration_s                      a number of the summary
    max(queues.max_occupancy_bytes)         a column over every row: sum, mean, min, max, jain
    flows["C1->S1"].delivered_gbps / flows["C2->S1"].delivered_gbps

Expressions are parsed with :mod:`ast` and only these forms are evaluated
(numbers, + - * / ** and unary minus, the functions above, ``abs``): a
scenario file's expression cannot run code.
"""

from __future__ import annotations

import ast
import math
import operator
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _core

__all__ = ["Metric", "MetricEvaluator", "builtin_metrics", "compile_expression", "jain", "metric_set"]

#: Tables an expression may read rows of, by name.
_TABLES = ("flows", "queues")
#: Mappings of numbers an expression may read: ``totals.KEY``, ``summary.KEY``.
_NUMBERS = ("totals", "summary")


def jain(values: Any) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²) of *values*, in [1/n, 1]; 0 if all are 0, NaN if
    there are none."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return math.nan
    squares = float(np.sum(x * x))
    return 0.0 if squares == 0 else float(np.sum(x)) ** 2 / (x.size * squares)


_FUNCTIONS: dict[str, Callable[[Any], float]] = {
    "sum": lambda v: float(np.sum(v)),
    "mean": lambda v: float(np.mean(v)) if np.size(v) else math.nan,
    "min": lambda v: float(np.min(v)) if np.size(v) else math.nan,
    "max": lambda v: float(np.max(v)) if np.size(v) else math.nan,
    "jain": jain,
    "abs": lambda v: abs(float(v)),
}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.Pow: operator.pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def builtin_metrics(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The metrics every summary row has, from a point's summary.json.

    ``jain_index``: Jain's index over the delivered bytes of the sources' flows (their
    throughput over the run; workload flows, of different sizes by design, are left out),
    NaN without sources. With ``[metrics]`` in the scenario: ``fairness_jain``,
    ``fairness_dev_max``, ``fairness_dev_rms`` (over its window, against its target) and
    ``time_to_stability_s`` (NaN when the queue never stabilised). With the watchdog:
    ``deadlocks``.
    """
    out: dict[str, Any] = {}
    if "jain_index" in summary:
        out["jain_index"] = math.nan if summary["jain_index"] is None else summary["jain_index"]
    elif isinstance(summary.get("flows"), list):
        # Results saved before the summary had it, and still listed every flow.
        out["jain_index"] = jain([f.get("delivered_bytes", 0) for f in summary["flows"] if isinstance(f, Mapping)])
    fairness = summary.get("fairness")
    if isinstance(fairness, Mapping):
        for key in ("jain", "dev_max", "dev_rms"):
            out[f"fairness_{key}"] = fairness.get(key)
    stability = summary.get("stability")
    if isinstance(stability, Mapping):
        t = stability.get("time_to_stability_s")
        out["time_to_stability_s"] = math.nan if t is None else t
    watchdog = summary.get("watchdog")
    if isinstance(watchdog, Mapping):
        out["deadlocks"] = len(watchdog.get("deadlocks") or [])
    return out


@dataclass(frozen=True)
class Metric:
    """A user-defined metric: its column name, what computes it from a Result, and how it
    was given (the expression, or the callable's name) for sweep.json."""

    name: str
    compute: Callable[[Any], Any]
    text: str


def metric_set(metrics: Mapping[str, Any] | None, error: type[Exception], where: str = "metrics") -> dict[str, Metric]:
    """The user's metrics, checked: names that are strings, values that are callables or valid
    expressions. Bad input raises *error* naming *where* and the metric."""
    if metrics is None:
        return {}
    if not isinstance(metrics, Mapping):
        raise error(f"{where}: expected a mapping of names to callables or expressions, got {type(metrics).__name__}")
    out: dict[str, Metric] = {}
    for name, spec in metrics.items():
        if not isinstance(name, str) or not name.strip():
            raise error(f"{where}: expected a metric name, got {name!r}")
        if (why := _core.name_error(name)) is not None:
            raise error(f"{where}: {why}")
        if isinstance(spec, str):
            try:
                out[name] = Metric(name, compile_expression(spec), spec)
            except ValueError as exc:
                raise error(f"{where}.{name} = {spec!r}: {exc}") from None
        elif callable(spec):
            out[name] = Metric(name, spec, f"<callable {getattr(spec, '__qualname__', type(spec).__name__)}>")
        else:
            raise error(f"{where}.{name}: expected a callable fn(result) -> float or an expression, "
                        f"got {type(spec).__name__}")
    return out


def compile_expression(text: str) -> Callable[[Any], float]:
    """A function of a Result that evaluates the metric expression *text* (ValueError saying what is
    wrong with it)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not an expression ({exc.msg})") from None
    _check(tree.body)
    return lambda result: float(_eval(tree.body, result))


def _allowed() -> str:
    return ('numbers, + - * / **, flows["NAME"].COLUMN, queues["NAME"].COLUMN, totals.KEY, summary.KEY, '
            f"TABLE.COLUMN inside {', '.join(f for f in _FUNCTIONS if f != 'abs')}(...), abs(...)")


def _check(node: ast.AST) -> None:
    """Refuses every form but those :func:`_eval` knows."""
    match node:
        case ast.Constant(value=v) if isinstance(v, (int, float)) and not isinstance(v, bool):
            return
        case ast.BinOp(op=op, left=left, right=right) if type(op) in _BINARY:
            _check(left)
            _check(right)
        case ast.UnaryOp(op=op, operand=operand) if type(op) in _UNARY:
            _check(operand)
        case ast.Call(func=ast.Name(id=f), args=[arg], keywords=[]) if f in _FUNCTIONS:
            if f != "abs" and _is_column(arg):
                return
            _check(arg)
        case ast.Attribute(value=ast.Name(id=n)) if n in _NUMBERS:
            return
        case ast.Attribute(value=ast.Subscript(value=ast.Name(id=t), slice=ast.Constant(value=str()))) if t in _TABLES:
            return
        case _:
            if _is_column(node):
                raise ValueError(f"'{ast.unparse(node)}' is a whole column: take sum, mean, min, max or jain of it")
            raise ValueError(f"cannot evaluate '{ast.unparse(node)}'; expected {_allowed()}")


def _is_column(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in _TABLES


def _eval(node: ast.AST, result: Any) -> Any:
    match node:
        case ast.Constant(value=v):
            return v
        case ast.BinOp(op=op, left=left, right=right):
            return _BINARY[type(op)](_eval(left, result), _eval(right, result))
        case ast.UnaryOp(op=op, operand=operand):
            return _UNARY[type(op)](_eval(operand, result))
        case ast.Call(func=ast.Name(id=f), args=[arg]):
            return _FUNCTIONS[f](_eval(arg, result))
        case ast.Attribute(value=ast.Name(id=t), attr=column) if t in _TABLES:
            table = getattr(result, t)
            if column not in table.columns:
                raise LookupError(f"the {t} table has no column {column!r}")
            return table[column].to_numpy(dtype=float)
        case ast.Attribute(value=ast.Name(id=n), attr=key):
            numbers = result.totals if n == "totals" else result.summary
            if key not in numbers:
                raise LookupError(f"the result has no {n}.{key}")
            return float(numbers[key])
        case ast.Attribute(value=ast.Subscript(value=ast.Name(id=t), slice=ast.Constant(value=name)), attr=column):
            table = getattr(result, t)
            rows = table.loc[table["name"] == name]
            if rows.empty:
                shown = ", ".join(map(repr, table["name"].head(5)))
                raise LookupError(f"no {t[:-1]} named {name!r} (the first are {shown})")
            if column not in table.columns:
                raise LookupError(f"the {t} table has no column {column!r}")
            return float(rows[column].iloc[0])
    raise AssertionError(f"unchecked expression {ast.unparse(node)}")  # _check refuses it first


class MetricEvaluator:
    """Computes a sweep's user-defined metrics on each point's result and collects, across
    threads, those that failed (their cells are NaN), for one warning per metric."""

    def __init__(self, metrics: Mapping[str, Metric]) -> None:
        self.metrics = dict(metrics)
        self._lock = threading.Lock()
        self._failed: dict[str, tuple[int, str]] = {}

    def evaluate(self, result: Any, point_id: str) -> dict[str, float]:
        """Every metric of *result*; NaN for one that raises or is not a number (recorded)."""
        values: dict[str, float] = {}
        for name, metric in self.metrics.items():
            try:
                values[name] = float(metric.compute(result))
            except Exception as exc:  # the user's code: any failure is the metric's, not the sweep's
                values[name] = math.nan
                self._record(name, point_id, exc)
        return values

    def evaluate_saved(self, directory: Any, point_id: str) -> dict[str, float]:
        """:meth:`evaluate` on the result saved in *directory* (loaded only if there are metrics)."""
        if not self.metrics:
            return {}
        from .results import Result

        try:
            result = Result.load(directory)
        except Exception as exc:
            for name in self.metrics:
                self._record(name, point_id, exc)
            return dict.fromkeys(self.metrics, math.nan)
        return self.evaluate(result, point_id)

    def _record(self, name: str, point_id: str, exc: Exception) -> None:
        with self._lock:
            count, first = self._failed.get(name, (0, f"point {point_id}: {type(exc).__name__}: {exc}"))
            self._failed[name] = (count + 1, first)

    def messages(self) -> list[str]:
        """One line per metric that failed somewhere."""
        return [f"metric {name!r} could not be computed on {count} point{'s' if count > 1 else ''} "
                f"(NaN there); first: {first}" for name, (count, first) in sorted(self._failed.items())]
