"""The reference studies: what each one runs, what it published, what it shows.

A study registers itself with :func:`register`; ``cnsim reproduce`` runs
its variants and seeds as a sweep and writes a report (see
:mod:`cnsim.report`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from ..data import shipped_dir
from ..results import Result

#: Per-variant results of a reproduction, one per seed, in seed order.
Runs = Mapping[str, Sequence[Result]]

#: A statement of a report: fixed words, or words computed from the runs
#: (numbers in a report come from its runs; None when the runs it needs
#: are missing, e.g. a variant a --quick run leaves out).
Text = Union[str, Callable[[Runs], Union[str, None]]]


def text_of(text: Text, runs: Runs) -> str | None:
    """The words of a statement for these runs."""
    return text(runs) if callable(text) else text


class UnknownStudy(LookupError):
    """No study has that name."""


@dataclass(frozen=True)
class Metric:
    """A number the study reports, measured on our runs.

    ``measure`` maps one run to a value; the report shows the mean over seeds
    (± its 95% confidence interval, and the range) beside ``published``, which
    is ``None`` when the study states the result only in words (``note``).
    """

    label: str
    variant: str
    measure: Callable[[Result], float]
    published: float | None = None
    note: str = ""
    unit: str = ""
    decimals: int = 0


@dataclass(frozen=True)
class Sensitivity:
    """A parameter the study leaves open, swept to show how much a metric depends on it.

    ``cnsim reproduce STUDY --sensitivity`` runs ``variant`` once per value of
    ``key`` (a ``--set`` key; ``None`` leaves the key unset) and the report
    tables each metric against the value, the value cnsim chose marked.
    """

    parameter: str
    key: str
    values: Sequence[Any]
    chosen: Any
    #: why cnsim chose that value, for reasons that hold without the published number
    reason: str
    #: the study variant the values are applied to
    variant: str
    #: (label, measure of one run, published value or None)
    metrics: Sequence[tuple[str, Callable[[Result], float], Union[float, None]]]
    #: the values of a --quick run (default: cnsim's choice and the value farthest along the list from it)
    quick_values: Sequence[Any] = ()

    def run_values(self, quick: bool) -> list[Any]:
        if not quick:
            return list(self.values)
        if self.quick_values:
            return list(self.quick_values)
        other = self.values[-1] if self.values[-1] != self.chosen else self.values[0]
        return [v for v in self.values if v in (self.chosen, other)]


@dataclass(frozen=True)
class View:
    """A figure the study shows: time series of links, flows or queues, variants overlaid."""

    title: str
    kind: str  # "links", "flows" or "queues"
    items: tuple[str, ...]


@dataclass(frozen=True)
class Study:
    name: str
    title: str
    source: str
    #: variant name -> scenario file, relative to the scenarios folder
    variants: Mapping[str, str]
    seeds: int
    quick_seeds: int
    #: overrides that shorten a --quick run (e.g. {"duration": "20ms"})
    quick_overrides: Mapping[str, str]
    metrics: Sequence[Metric]
    views: Sequence[View]
    #: what the study concluded, in its own words (paraphrased)
    findings: Sequence[str] = ()
    #: where and why our results differ from the published ones
    differences: Sequence[Text] = ()
    #: extra figures drawn from all runs (title, function returning a matplotlib figure)
    extra_figures: Sequence[tuple[str, Callable[[Runs], Any]]] = field(default_factory=tuple)
    #: extra tables computed from all runs (title, function returning a pandas DataFrame)
    extra_tables: Sequence[tuple[str, Callable[[Runs], Any]]] = field(default_factory=tuple)
    #: variants defined as overrides of the study's single scenario file (then
    #: ``variants`` names that one file); used for sweeps over the topology
    sweep_variants: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: overrides that shorten a --quick run of ``sweep_variants`` (only these run)
    quick_sweep_variants: Sequence[str] = ()
    #: when ``sweep_variants`` override more than one file: sweep variant -> key
    #: of its base file in ``variants`` (one entry per sweep variant); empty when
    #: ``variants`` names the single base file
    sweep_bases: Mapping[str, str] = field(default_factory=dict)
    #: sweep variants started before the others, longest first: with fewer cores than runs, the
    #: longest runs then do not start last and leave one core working alone at the end (results and
    #: the report's order are the same either way)
    run_first: Sequence[str] = ()
    #: overrides added to a sweep variant's own in a --quick run (they win over
    #: the variant's and over ``quick_overrides``), e.g. a shorter duration for a
    #: variant that sets its own
    quick_variant_overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: draw the frames-dropped-per-variant bar chart
    drops_figure: bool = True
    #: parameters the study leaves open, swept by ``cnsim reproduce --sensitivity``
    sensitivities: Sequence[Sensitivity] = ()
    #: the report's headings of the metrics table, the findings and the differences, and what
    #: it says of a --quick run's numbers; a comparison with no published study words them
    #: its own way
    metrics_heading: str = "Published and ours"
    findings_heading: str = "What the study found"
    differences_heading: str = "Where we differ, and why"
    quick_note: str = "The numbers below are a smoke test\nand are not comparable with the published ones."


_REGISTRY: dict[str, Study] = {}


def register(study: Study) -> Study:
    if study.name in _REGISTRY:
        raise ValueError(f"study {study.name!r} is registered twice")
    unknown = [n for n in study.run_first if n not in study.sweep_variants]
    if unknown:
        raise ValueError(f"study {study.name!r}: run_first names no sweep variant: {', '.join(unknown)}")
    _REGISTRY[study.name] = study
    return study


def names() -> list[str]:
    return sorted(_REGISTRY)


def get(name: str) -> Study:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(names()) or "none"
        raise UnknownStudy(f"unknown study {name!r}; known studies: {known}") from None


def scenarios_dir() -> Path:
    """The shipped scenario files: $CNSIM_SCENARIOS, else the package's (the repository's `scenarios/`)."""
    return shipped_dir("scenarios", "CNSIM_SCENARIOS")


def scenario_path(relative: str) -> Path:
    return scenarios_dir() / relative


# Studies register themselves on import.
from . import baseline, cc_compare, cn_sim_baseline, e2cm, fct_fabric, hotspot_degree, qcn_tcp  # noqa: E402,F401
