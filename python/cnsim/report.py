"""Study reproduction: run a study's variants and seeds as a sweep and write
a self-contained ``report.html`` (figures embedded) with our numbers beside
the published ones.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import math
import os
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from . import studies  # noqa: E402
from .outputs import write_atomically  # noqa: E402
from .plots import time_figure  # noqa: E402
from .results import Result  # noqa: E402
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
                  for name in names}
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
    from . import __version__

    parts: list[str] = [_HEAD.format(title=html.escape(spec.title))]
    parts.append(f"<h1>{html.escape(spec.title)}</h1>")
    parts.append(f"<p class='source'>{html.escape(spec.source)}</p>")
    if quick:
        parts.append(
            "<p class='warn'>Quick run: fewer seeds and a shorter simulated time than the study. "
            "The numbers below are a smoke test and are not comparable with the published ones.</p>"
        )
    failed = summary[summary["status"] != "ok"]
    if len(failed):
        parts.append(f"<p class='warn'>{len(failed)} point(s) failed and are left out: "
                     + ", ".join(html.escape(str(p)) for p in failed["point_id"]) + "</p>")
    partial = summary[summary["partial"]] if "partial" in summary else summary.iloc[:0]
    if len(partial):
        parts.append(f"<p class='warn'>{len(partial)} point(s) stopped early (partial results) and are included: "
                     + ", ".join(html.escape(str(p)) for p in partial["point_id"]) + "</p>")

    parts.append("<h2>Published and ours</h2>")
    parts.append(_metrics_table(spec, runs))
    for title, build in spec.extra_tables:
        parts.append(f"<h3>{html.escape(title)}</h3>")
        parts.append(_frame_table(build(runs)))
    if spec.findings:
        parts.append("<h3>What the study found</h3><ul>")
        parts.extend(f"<li>{html.escape(f)}</li>" for f in spec.findings)
        parts.append("</ul>")

    if spec.differences:
        parts.append("<h3>Where we differ, and why</h3><ul>")
        texts = (studies.text_of(d, runs) for d in spec.differences)
        parts.extend(f"<li>{html.escape(t)}</li>" for t in texts if t)
        parts.append("</ul>")

    if sensitivity_runs is not None:
        parts.append("<h2>Sensitivity</h2>")
        parts.append("<p>Parameters the study leaves open, each swept on one variant with the other parameters as "
                     "in the study; means over seeds. The value cnsim uses is marked.</p>")
        for i, s in enumerate(spec.sensitivities):
            parts.append(f"<h3>{html.escape(s.parameter)} (<code>{html.escape(s.key)}</code>, "
                         f"{html.escape(s.variant)})</h3>")
            parts.append(f"<p>cnsim's choice: {html.escape(_value_text(s.chosen))}. {html.escape(s.reason)}</p>")
            rows = sensitivity_runs.get(i, [])
            parts.append(_frame_table(sensitivity_table(s, rows)))
            summary_text = sensitivity_summary(s, rows)
            if summary_text:
                parts.append(f"<p>{html.escape(summary_text)}</p>")

    parts.append("<h2>Views</h2>")
    first = {v: rs[0] for v, rs in runs.items() if rs}
    labels = [f"{v} (seed {r.summary.get('seed')})" for v, r in first.items()]
    for view in spec.views:
        fig = time_figure(list(first.values()), labels, view.kind, view.items, view.title)
        parts.append(_figure(fig, view.title))
    if spec.drops_figure:
        parts.append(_figure(_drops_figure(runs), "Frames dropped per variant"))
    for title, draw in spec.extra_figures:
        parts.append(_figure(draw(runs), title))

    parts.append("<h2>Runs</h2>")
    parts.append(_points_table(summary))

    parts.append("<h2>Reconstruction and assumptions</h2>")
    for name, path in variants.items():
        parts.append(f"<h3>{html.escape(name)} — <code>{html.escape(_display_path(path))}</code></h3>")
        parts.append(f"<pre>{html.escape(_leading_comment(path))}</pre>")

    parts.append("<h2>Provenance</h2>")
    if spec.sweep_variants:
        # Scenario files behind the sweep variants: show the hash of each file's first run.
        runs = {base: next((rs for v, rs in runs.items() if rs and spec.sweep_bases.get(v, base) == base), [])
                for base in variants}
    parts.append(_provenance(command, __version__, variants, runs, seeds))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _value_text(value: Any) -> str:
    return "not set (the default)" if value is None else str(value)


def _number(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def _sensitivity_means(s: studies.Sensitivity, rows) -> list[tuple[Any, int, dict[str, float]]]:
    """Per value: the number of seeds and each metric's mean over them (nan without a value)."""
    out = []
    for value, results in rows:
        means = {}
        for label, measure, _ in s.metrics:
            values = [v for v in (measure(r) for r in results) if not math.isnan(v)]
            means[label] = float(np.mean(values)) if values else float("nan")
        out.append((value, len(results), means))
    return out


def sensitivity_table(s: studies.Sensitivity, rows: Sequence[tuple[Any, Sequence[Result]]]) -> pd.DataFrame:
    """One row per value: each metric's mean over seeds, the chosen value marked, the published value last."""
    out = []
    for value, n, means in _sensitivity_means(s, rows):
        row = {s.key: _value_text(value) + ("  ← cnsim" if value == s.chosen else ""), "seeds": n}
        row.update({label: "—" if math.isnan(m) else _number(m) for label, m in means.items()})
        out.append(row)
    published = {label: p for label, _, p in s.metrics}
    if any(p is not None for p in published.values()):
        out.append({s.key: "the deck", "seeds": "",
                    **{label: "—" if p is None else _number(p) for label, p in published.items()}})
    return pd.DataFrame(out)


def sensitivity_summary(s: studies.Sensitivity, rows: Sequence[tuple[Any, Sequence[Result]]]) -> str:
    """How far each metric moves over the values, against its value at cnsim's choice."""
    means = _sensitivity_means(s, rows)
    chosen = next((m for v, _, m in means if v == s.chosen), None)
    parts = []
    for label, _, _ in s.metrics:
        found = [m[label] for _, _, m in means if not math.isnan(m[label])]
        if len(found) < 2 or chosen is None or not chosen[label]:
            continue
        spread = (max(found) - min(found)) / abs(chosen[label])
        size = "less than 10%" if spread < 0.10 else f"{spread:.0%}"
        parts.append(f"{label} spans {_number(min(found))}–{_number(max(found))}, {size} of its value at "
                     f"cnsim's choice")
    return ("Over these values: " + "; ".join(parts) + ".") if parts else ""


def _metrics_table(spec: studies.Study, runs: Mapping[str, Sequence[Result]]) -> str:
    rows = []
    for m in spec.metrics:
        values = [m.measure(r) for r in runs.get(m.variant, ())]
        values = [v for v in values if not math.isnan(v)]
        fmt = f"{{:,.{m.decimals}f}}"
        if values:
            mean = float(np.mean(values))
            ours = fmt.format(mean)
            if len(values) > 1:
                ours += f" <span class='range'>({fmt.format(min(values))} – {fmt.format(max(values))}, {len(values)} seed{'s' if len(values) != 1 else ''})</span>"
        else:
            mean, ours = None, "—"
        if m.published is None:
            published, diff = html.escape(m.note or "—"), ""
        else:
            published = fmt.format(m.published)
            if m.note:
                published += f" <span class='range'>({html.escape(m.note)})</span>"
            if mean is None:
                diff = ""
            else:
                d = mean - m.published
                rel = f" ({d / m.published:+.1%})" if m.published else ""
                diff = fmt.format(d) + rel
                if d > 0 and not diff.startswith("+"):
                    diff = "+" + diff
        unit = f" {html.escape(m.unit)}" if m.unit else ""
        rows.append(
            f"<tr><td>{html.escape(m.label)}{unit}</td><td>{html.escape(m.variant)}</td>"
            f"<td class='num'>{published}</td><td class='num'>{ours}</td><td class='num'>{diff}</td></tr>"
        )
    return (
        "<table class='metrics'><thead><tr><th>value</th><th>variant</th><th>published</th>"
        "<th>ours (mean over seeds)</th><th>difference</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _frame_table(frame: pd.DataFrame) -> str:
    table = frame.astype(object).where(frame.notna(), "—")
    return table.to_html(index=False, classes="metrics", na_rep="—",
                         float_format=lambda x: f"{x:,.3f}", escape=True)


def _points_table(summary: pd.DataFrame) -> str:
    preferred = ["point_id", "variant", "seed", "status", "dropped_frames", "delivered_frames",
                 "pause_frames_sent", "events", "wall_time_s", "error"]
    cols = [c for c in preferred if c in summary.columns]
    extra = [c for c in summary.columns if c not in cols and c not in ("dir", "scenario") and not c.endswith("_bytes")
             and c not in ("offered_frames", "in_flight_frames", "frame_hops")]
    table = summary[cols[:3] + extra + cols[3:]].sort_values(["variant", "seed"]).astype(object)
    table = table.where(table.notna(), "")
    return table.to_html(index=False, classes="points", na_rep="", float_format=lambda x: f"{x:,.4g}")


def _provenance(command, version, variants, runs, seeds) -> str:
    rows = [
        ("command", f"<code>{html.escape(command)}</code>"),
        ("cnsim version", html.escape(str(version))),
        ("Python", html.escape(sys.version.split()[0])),
        ("seeds", html.escape(", ".join(str(s) for s in seeds))),
        ("written", datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
    ]
    for name, path in variants.items():
        file_hash = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        rs = runs.get(name) or []
        scenario_hash = rs[0].summary.get("scenario_hash", "") if rs else ""
        rows.append(
            (f"variant {html.escape(name)}",
             f"<code>{html.escape(_display_path(path))}</code><br>file sha256 <code>{file_hash}</code>"
             f"<br>scenario hash <code>{html.escape(str(scenario_hash))}</code>")
        )
    return "<table class='prov'>" + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


def _drops_figure(runs: Mapping[str, Sequence[Result]]):
    names = list(runs)
    means, lo, hi = [], [], []
    for v in names:
        d = [float(r.summary["totals"]["dropped_frames"]) for r in runs[v]] or [0.0]
        means.append(np.mean(d))
        lo.append(np.mean(d) - min(d))
        hi.append(max(d) - np.mean(d))
    fig, ax = plt.subplots(figsize=(max(4.0, 1.4 * len(names) + 2), 3.8), constrained_layout=True)
    bars = ax.bar(range(len(names)), means, yerr=[lo, hi], capsize=4, color="tab:red", width=0.6)
    ax.set_xticks(range(len(names)), names)
    ax.bar_label(bars, labels=[f"{m:,.0f}" for m in means], padding=3)
    ax.set_ylabel("frames dropped (mean, min–max over seeds)")
    ax.set_ylim(0, max(means + [1.0]) * 1.2)
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def _figure(fig, caption: str) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (f"<figure><img alt='{html.escape(caption)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


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


_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 1000px; margin: 2em auto; padding: 0 1em; color: #222; }}
h1 {{ margin-bottom: 0.2em; }} .source {{ color: #555; margin-top: 0; }}
.warn {{ background: #fff4d6; border-left: 4px solid #e0a800; padding: 0.5em 0.8em; }}
table {{ border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }}
th, td {{ border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }}
th {{ background: #f3f3f3; }} td.num {{ text-align: right; }} .range {{ color: #666; font-size: 0.9em; }}
figure {{ margin: 1.2em 0; }} figure img {{ max-width: 100%; }} figcaption {{ color: #555; font-size: 0.9em; }}
pre {{ background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }}
</style></head><body>"""
