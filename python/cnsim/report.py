"""Study reproduction: run a study's variants and seeds as a sweep and write
a self-contained ``report.html`` (figures embedded) with our numbers beside
the published ones.
"""

from __future__ import annotations

import base64
import difflib
import functools
import hashlib
import io
import math
import os
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jinja2
import matplotlib
from markupsafe import Markup

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from . import studies  # noqa: E402
from .outputs import write_atomically  # noqa: E402
from .plots import time_figure  # noqa: E402
from .results import Result  # noqa: E402
from .stats import mean_interval, mean_text  # noqa: E402
from .sweep import REPORT_FILE as REPORT_NAME  # noqa: E402


def reproduce(
    study: str,
    *,
    quick: bool = False,
    out: str | os.PathLike | None = None,
    jobs: int | None = None,
    dask: Any = None,
    dask_wait_s: float | None = None,
    progress: bool = False,
    command: str | None = None,
    sensitivity: bool = False,
) -> Path:
    """Run every variant and seed of `study` and write its report; return the report's path.

    With ``sensitivity``, the study's sensitivities also run, as a second sweep in
    ``<out>-sensitivity``, and the report gains their tables.
    """
    from .sweep import check_sweep_dir, sweep  # the sweep machinery imports dask lazily

    spec = studies.get(study)
    out = Path(out) if out is not None else Path("results") / "reproduce" / (spec.name + ("-quick" if quick else ""))
    seeds = list(range(1, (spec.quick_seeds if quick else spec.seeds) + 1))
    variants = {name: str(studies.scenario_path(rel)) for name, rel in spec.variants.items()}
    for name, path in variants.items():
        if not Path(path).is_file():
            raise FileNotFoundError(f"study {spec.name!r}, variant {name!r}: scenario file {path} not found")
    common = dict(spec.quick_overrides) if quick else None
    sensitivity_out = out.with_name(out.name + "-sensitivity")
    if sensitivity and spec.sensitivities:
        # Refuse an unusable second destination before the first sweep runs.
        check_sweep_dir(sensitivity_out)
    run = {"out": out, "jobs": jobs, "dask": dask, "progress": progress}
    if dask_wait_s is not None:
        run["dask_wait_s"] = dask_wait_s
    if spec.sweep_variants:
        names = list(spec.quick_sweep_variants) if quick and spec.quick_sweep_variants else list(spec.sweep_variants)
        chosen = {name: {**spec.sweep_variants[name], **(spec.quick_variant_overrides.get(name, {}) if quick else {})}
                  for name in start_order(spec, names)}
        if spec.sweep_bases:
            summary = _sweep_bases(spec, variants, chosen, common, seeds, **run)
        else:
            (base,) = variants.values()
            summary = sweep(base, variants=chosen, set=common, seed_list=seeds, **run)
    else:
        names = list(spec.variants)
        summary = sweep(variants, set=common, seed_list=seeds, **run)
    runs = _load_runs(summary, out, names)
    sensitivity_runs = None
    if sensitivity and spec.sensitivities:
        sensitivity_runs = _run_sensitivities(spec, quick, variants, seeds, sensitivity_out,
                                              **{k: v for k, v in run.items() if k != "out"})
    page = render(
        spec,
        summary,
        runs,
        quick=quick,
        command=command or " ".join(["cnsim", "reproduce", spec.name] + (["--quick"] if quick else [])
                                    + (["--sensitivity"] if sensitivity else [])),
        variants=variants,
        seeds=seeds,
        sensitivity_runs=sensitivity_runs,
    )
    path = out / REPORT_NAME
    write_atomically(path, lambda p: p.write_text(page, encoding="utf-8"))
    return path


def start_order(spec: studies.Study, names: Sequence[str]) -> list[str]:
    """The sweep variants ``names`` in the order their runs start: the study's ``run_first``, then the rest."""
    return [n for n in spec.run_first if n in names] + [n for n in names if n not in spec.run_first]


def _load_runs(summary: pd.DataFrame, out: Path, names) -> dict[str, list[Result]]:
    """The results of the sweep's ok points of each variant, in seed order."""
    from .sweep import load_point

    ok = summary[summary["status"] == "ok"].sort_values(["variant", "seed"])
    return {variant: [load_point(out, pid) for pid in ok[ok["variant"] == variant]["point_id"]] for variant in names}


def sensitivity_plan(spec: studies.Study, quick: bool) -> dict[str, tuple[str, dict, int, Any]]:
    """The sensitivity sweep's variants: name -> (base file key, overrides, sensitivity index, value).

    Each is the study variant the sensitivity names, with its own overrides
    (and a --quick run's), and the parameter's key set to one value (left
    unset for None).
    """
    single = next(iter(spec.variants)) if len(spec.variants) == 1 else None
    plan: dict[str, tuple[str, dict, int, Any]] = {}
    for i, s in enumerate(spec.sensitivities):
        if spec.sweep_variants:
            base = spec.sweep_bases.get(s.variant, single)
            own = dict(spec.sweep_variants[s.variant])
            if quick:
                own.update(spec.quick_variant_overrides.get(s.variant, {}))
        else:
            base, own = s.variant, {}
        common = dict(spec.quick_overrides) if quick else {}
        for j, value in enumerate(s.run_values(quick)):
            overrides = {**common, **own}
            if value is not None:
                overrides[s.key] = value
            plan[f"sens{i}-{j}"] = (base, overrides, i, value)
    return plan


def _run_sensitivities(spec, quick, variants, seeds, out, **run) -> dict[int, list[tuple[Any, list[Result]]]]:
    """Run the sensitivity sweep; per sensitivity, (value, results) in the order of its values."""
    plan = sensitivity_plan(spec, quick)
    chosen = {name: overrides for name, (_, overrides, _, _) in plan.items()}
    bases = {name: base for name, (base, _, _, _) in plan.items()}
    summary = _sweep_files(spec.name, variants, chosen, bases, None, seeds, out, **run)
    runs = _load_runs(summary, out, list(plan))
    found: dict[int, list[tuple[Any, list[Result]]]] = {}
    for name, (_, _, i, value) in plan.items():
        found.setdefault(i, []).append((value, runs[name]))
    return found


def _sweep_bases(spec, variants, chosen, common, seeds, out, **run) -> pd.DataFrame:
    """One sweep over several base files: each sweep variant overrides the file ``spec.sweep_bases`` names."""
    bases = {name: spec.sweep_bases.get(name) for name in chosen}
    return _sweep_files(spec.name, variants, chosen, bases, common, seeds, out, **run)


def _sweep_files(study, variants, chosen, bases, common, seeds, out, **run) -> pd.DataFrame:
    """One sweep over several base files: variant `name` overrides the file ``variants[bases[name]]``.

    The points of every file go into one sweep directory (one summary, one
    ``sweep.json``), so a re-run resumes it as any sweep.
    """
    from .points import Plan, plan
    from .sweep import run_plan

    unknown = {name: key for name, key in bases.items() if key not in variants}
    if unknown:
        raise ValueError(f"study {study!r}: sweep variants without a base file in its variants: {unknown}")
    plans = []
    for key, path in variants.items():
        mine = {name: overrides for name, overrides in chosen.items() if bases[name] == key}
        if mine:
            plans.append(plan(path, variants=mine, set=common, seed_list=seeds))
    combined = Plan(
        points=[p for pl in plans for p in pl.points],
        sources=[s for pl in plans for s in pl.sources],
        axis_keys=list(dict.fromkeys(k for pl in plans for k in pl.axis_keys)),
        arguments={"scenario": dict(variants), "variant_bases": bases, "axes": None,
                   "variants": {name: dict(overrides) for name, overrides in chosen.items()},
                   "seeds": None, "seed_list": list(seeds), "set": dict(common) if common else None},
    )
    return run_plan(combined, out, **run)


# --------------------------------------------------------------------------- page


def render(
    spec: studies.Study,
    summary: pd.DataFrame,
    runs: Mapping[str, Sequence[Result]],
    *,
    quick: bool,
    command: str,
    variants: Mapping[str, str],
    seeds: Sequence[int],
    sensitivity_runs: Mapping[int, Sequence[tuple[Any, Sequence[Result]]]] | None = None,
) -> str:
    """The report page (templates/report.html) for a study's runs."""
    from . import __version__

    failed = summary[summary["status"] != "ok"]
    partial = summary[summary["partial"]] if "partial" in summary else summary.iloc[:0]
    texts = (studies.text_of(d, runs) for d in spec.differences)
    shared_note, notes = reconstruction_notes(variants)
    if spec.sweep_variants:
        # Scenario files behind the sweep variants: show the hash of each file's first run.
        first_runs = {base: next((rs for v, rs in runs.items() if rs and spec.sweep_bases.get(v, base) == base), [])
                      for base in variants}
    else:
        first_runs = runs
    return _template().render(
        spec=spec,
        quick=quick,
        failed=[str(p) for p in failed["point_id"]],
        partial=[str(p) for p in partial["point_id"]],
        metrics=metric_rows(spec, runs, quick=quick),
        extra_tables=[(title, _frame_table(build(runs))) for title, build in spec.extra_tables],
        differences=[t for t in texts if t],
        sensitivities=None if sensitivity_runs is None else _sensitivity_sections(spec, sensitivity_runs),
        figures=[(caption, _png_uri(fig)) for caption, fig in report_figures(spec, runs)],
        runs_table=_points_table(summary),
        shared_note=shared_note,
        notes=notes,
        command=command,
        version=__version__,
        python=sys.version.split()[0],
        seeds=[str(s) for s in seeds],
        written=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        provenance=_provenance(variants, first_runs),
    )


@functools.cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("cnsim", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("report.html")


def report_figures(spec: studies.Study, runs: Mapping[str, Sequence[Result]]) -> list[tuple[str, Any]]:
    """The report's figures, (caption, matplotlib figure), in page order. The caption is the
    figure's one title: the figures carry none of their own."""
    first = {v: rs[0] for v, rs in runs.items() if rs}
    labels = [f"{v} (seed {r.summary.get('seed')})" for v, r in first.items()]
    figures = [(view.title, time_figure(list(first.values()), labels, view.kind, view.items, None))
               for view in spec.views]
    if spec.drops_figure:
        figures.append(("Frames dropped per variant: mean over seeds, 95% confidence interval", _drops_figure(runs)))
    figures += [(title, draw(runs)) for title, draw in spec.extra_figures]
    return figures


def metric_rows(spec: studies.Study, runs: Mapping[str, Sequence[Result]], *, quick: bool) -> list[dict[str, Any]]:
    """The rows of the table of published numbers and ours: each metric's mean over seeds ±
    its 95% interval, the range, and the difference from the published value, which a
    quick run (shorter, fewer seeds) does not state."""
    rows = []
    for m in spec.metrics:
        values = [v for v in (m.measure(r) for r in runs.get(m.variant, ())) if not math.isnan(v)]
        fmt = f"{{:,.{m.decimals}f}}"
        mean, half = mean_interval(values)
        row = {
            "label": f"{m.label} {m.unit}" if m.unit else m.label,
            "variant": m.variant,
            "published": None if m.published is None else fmt.format(m.published),
            "note": m.note,
            "ours": mean_text(values, fmt),
            "range": (f"{fmt.format(min(values))} – {fmt.format(max(values))}, {len(values)} seeds"
                      if len(values) > 1 else ""),
            "difference": "",
            "comparable": True,
        }
        if m.published is not None and values:
            if quick:
                row["difference"], row["comparable"] = "quick run: not comparable", False
            else:
                row["difference"] = _difference(mean, half, m.published, fmt)
        rows.append(row)
    return rows


def _difference(mean: float, half: float, published: float, fmt: str) -> str:
    d = mean - published
    text = ("+" if d > 0 else "") + fmt.format(d)
    if published:
        text += f" ({d / published:+.1%})"
    if not math.isnan(half) and abs(d) <= half:
        text += ", within the 95% CI"
    return text


def _sensitivity_sections(spec: studies.Study, sensitivity_runs) -> list[dict[str, Any]]:
    sections = []
    for i, s in enumerate(spec.sensitivities):
        rows = sensitivity_runs.get(i, [])
        sections.append({
            "parameter": s.parameter, "key": s.key, "variant": s.variant, "chosen": _value_text(s.chosen),
            "reason": s.reason, "table": _frame_table(sensitivity_table(s, rows)),
            "summary": sensitivity_summary(s, rows),
        })
    return sections


def reconstruction_notes(variants: Mapping[str, str]) -> tuple[str, list[tuple[list[tuple[str, str]], str]]]:
    """The scenario files' leading comments without repeats: the block of lines that all of
    them share (at least three lines), and per group of variants with the same remaining
    text, the variants (name, path) and that text."""
    notes = {name: _leading_comment(path).splitlines() for name, path in variants.items()}
    shared = _shared_lines(list(notes.values())) if len(notes) > 1 else []
    groups: dict[str, list[tuple[str, str]]] = {}
    for name, lines in notes.items():
        groups.setdefault(_without(lines, shared), []).append((name, _display_path(variants[name])))
    return "\n".join(shared), [(names, text) for text, names in groups.items()]


def _shared_lines(notes: Sequence[list[str]]) -> list[str]:
    """The longest run of lines found in every note, without blank lines at its ends;
    nothing if it is shorter than three lines."""
    common = notes[0]
    for lines in notes[1:]:
        m = difflib.SequenceMatcher(None, common, lines, autojunk=False).find_longest_match(
            0, len(common), 0, len(lines))
        common = common[m.a:m.a + m.size]
    while common and not common[0].strip():
        common = common[1:]
    while common and not common[-1].strip():
        common = common[:-1]
    return common if len(common) >= 3 else []


def _without(lines: list[str], shared: list[str]) -> str:
    """A note's text without the shared block (once), its blank lines not doubled."""
    n = len(shared)
    at = next((i for i in range(len(lines) - n + 1) if n and lines[i:i + n] == shared), None)
    if at is not None:
        lines = lines[:at] + [""] + lines[at + n:]
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.strip("\n")


def _value_text(value: Any) -> str:
    return "not set (the default)" if value is None else str(value)


def _number(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def _sensitivity_means(s: studies.Sensitivity, rows) -> list[tuple[Any, int, dict[str, tuple[float, float]]]]:
    """Per value: the number of seeds and each metric's mean over them and the half-width of
    its 95% interval (nan without a value, or without two)."""
    out = []
    for value, results in rows:
        means = {label: mean_interval(measure(r) for r in results) for label, measure, _ in s.metrics}
        out.append((value, len(results), means))
    return out


def sensitivity_table(s: studies.Sensitivity, rows: Sequence[tuple[Any, Sequence[Result]]]) -> pd.DataFrame:
    """One row per value: each metric's mean over seeds ± its 95% interval, the chosen value
    marked, the published value last."""
    out = []
    for value, n, means in _sensitivity_means(s, rows):
        row = {s.key: _value_text(value) + ("  ← cnsim" if value == s.chosen else ""), "seeds": n}
        for label, (mean, half) in means.items():
            row[label] = "—" if math.isnan(mean) else _number(mean) + ("" if math.isnan(half) else f" ± {_number(half)}")
        out.append(row)
    published = {label: p for label, _, p in s.metrics}
    if any(p is not None for p in published.values()):
        out.append({s.key: "the deck", "seeds": "",
                    **{label: "—" if p is None else _number(p) for label, p in published.items()}})
    return pd.DataFrame(out)


def sensitivity_summary(s: studies.Sensitivity, rows: Sequence[tuple[Any, Sequence[Result]]]) -> str:
    """How far each metric moves over the values, against its value at cnsim's choice."""
    means = _sensitivity_means(s, rows)
    chosen = next(({k: mean for k, (mean, _) in m.items()} for v, _, m in means if v == s.chosen), None)
    parts = []
    for label, _, _ in s.metrics:
        found = [m[label][0] for _, _, m in means if not math.isnan(m[label][0])]
        if len(found) < 2 or chosen is None or not chosen[label]:
            continue
        spread = (max(found) - min(found)) / abs(chosen[label])
        size = "less than 10%" if spread < 0.10 else f"{spread:.0%}"
        parts.append(f"{label} spans {_number(min(found))}–{_number(max(found))}, {size} of its value at "
                     f"cnsim's choice")
    return ("Over these values: " + "; ".join(parts) + ".") if parts else ""


def _frame_table(frame: pd.DataFrame) -> Markup:
    """A table as HTML (pandas escapes its cells)."""
    table = frame.astype(object).where(frame.notna(), "—")
    return Markup(table.to_html(index=False, classes="metrics", border=0, na_rep="—",
                                float_format=lambda x: f"{x:,.3f}", escape=True))


def _points_table(summary: pd.DataFrame) -> Markup:
    preferred = ["point_id", "variant", "seed", "status", "dropped_frames", "delivered_frames",
                 "pause_frames_sent", "events", "wall_time_s", "error"]
    cols = [c for c in preferred if c in summary.columns]
    extra = [c for c in summary.columns if c not in cols and c not in ("dir", "scenario") and not c.endswith("_bytes")
             and c not in ("offered_frames", "in_flight_frames", "frame_hops")]
    table = summary[cols[:3] + extra + cols[3:]].sort_values(["variant", "seed"]).astype(object)
    table = table.where(table.notna(), "")
    # Columns that say nothing (no error, no partial point) are left out; the warnings above name any.
    table = table[[c for c in table.columns if c not in ("error", "partial") or table[c].astype(bool).any()]]
    # Spaces in the headers let them wrap, so the table fits the page.
    table.columns = [c.replace("_", " ") for c in table.columns]
    formatters = {c: _cell for c in table.columns if c != "seed"}
    return Markup(table.to_html(index=False, classes="points", border=0, na_rep="", formatters=formatters))


def _cell(value: Any) -> str:
    """Counts (frames, events) with thousands separators, times to 4 digits."""
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    if isinstance(value, (float, np.floating)):
        return f"{value:,.4g}"
    return str(value)


def _provenance(variants: Mapping[str, str], runs: Mapping[str, Sequence[Result]]) -> list[dict[str, str]]:
    rows = []
    for name, path in variants.items():
        rs = runs.get(name) or []
        rows.append({
            "name": name,
            "path": _display_path(path),
            "file_hash": hashlib.sha256(Path(path).read_bytes()).hexdigest(),
            "scenario_hash": str(rs[0].summary.get("scenario_hash", "")) if rs else "",
        })
    return rows


def _drops_figure(runs: Mapping[str, Sequence[Result]]):
    names = list(runs)
    means, halves = [], []
    for v in names:
        mean, half = mean_interval(float(r.summary["totals"]["dropped_frames"]) for r in runs[v])
        means.append(0.0 if math.isnan(mean) else mean)
        halves.append(0.0 if math.isnan(half) else half)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.4 * len(names) + 2), 3.8), constrained_layout=True)
    bars = ax.bar(range(len(names)), means, yerr=halves, capsize=4, color="tab:red", width=0.6)
    ax.set_xticks(range(len(names)), names)
    ax.bar_label(bars, labels=[f"{m:,.0f}" for m in means], padding=3)
    ax.set_ylabel("frames dropped")
    ax.set_ylim(0, max([m + h for m, h in zip(means, halves)] + [1.0]) * 1.2)
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def _png_uri(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", pad_inches=0.1)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _leading_comment(path: str) -> str:
    lines = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            lines.append(line[1:].removeprefix(" "))
        elif lines:
            break
    return "\n".join(lines) or "(no comment in the scenario file)"


def _display_path(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(studies.scenarios_dir().resolve().parent))
    except ValueError:
        return str(path)
