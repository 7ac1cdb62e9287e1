"""The ``cnsim`` command line.

    cnsim run FILE [--seed N] [--out DIR [--force]] [--set key=value ...] [--plot] [--export hpcc] [--quiet]
    cnsim validate FILE [--set key=value ...] [--json]
    cnsim plot RESULT_DIR [RESULT_DIR ...] [--out DIR] [--force] [--format png|svg]
    cnsim sweep FILE [FILE ...] [--axis key=v1,v2 ...] [--variant name:key=value,...]
                [--seeds N | --seed-list 1,2,3] [--set key=value ...] [--metric name=expr ...] [--out DIR]
                [--jobs K] [--dask ADDRESS] [--quiet]
    cnsim reproduce STUDY [--quick] [--sensitivity] [--out DIR] [--jobs K] [--dask ADDRESS] [--quiet]
    cnsim reproduce --list
    cnsim bench [NAME ...] [--quick] [--rounds N] [--json OUT] [--peers [--peer-seeds N]]
    cnsim scenarios
    cnsim scenarios copy STUDY DEST
    cnsim init KIND [PATH]
    cnsim schema [--out FILE]
    cnsim import hpcc CONFIG [--out FILE] [--topology FILE] [--flows FILE] [--no-flows]

Errors are reported as one line ``error: <message>`` on stderr. Exit status
(see docs/output-and-safety.md):

    0    done
    1    a failure while running (a failed sweep point, a full disk, ...)
    2    bad input: scenario, missing file, bad option, an output path in the way
    3    done, but some sweep points stopped early (partial results)
    4    run --fail-on-deadlock: done, but the PAUSE watchdog found a deadlock
    130  interrupted (Ctrl-C, SIGTERM during a sweep)

Set ``CNSIM_DEBUG=1`` to get a traceback instead.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

import click

from . import __version__
from .api import MAX_EVENTS, MAX_WALL_S
from .starter import KINDS

EXIT_RUNTIME = 1
EXIT_BAD_INPUT = 2
EXIT_PARTIAL = 3
EXIT_DEADLOCK = 4
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A user-facing error with an exit status."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.code = code


def _parse_sets(values: tuple[str, ...]) -> list[tuple[str, str]]:
    pairs = []
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--set expects key=value, got {item!r}")
        pairs.append((key.strip(), value.strip()))
    return pairs


SET_OPTION = click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a scenario value by dotted path, e.g. --set duration=20ms "
    "--set 'switches[CORE].buffer=150KB'. Repeatable.",
)


JOBS_OPTION = click.option(
    "--jobs", "-j", type=click.IntRange(1), default=None, help="Local threads (default: number of CPUs)."
)
FORCE_OPTION = click.option(
    "--force",
    is_flag=True,
    help="Replace an earlier cnsim output at --out (never files cnsim did not write).",
)
DASK_OPTION = click.option(
    "--dask",
    "dask_address",
    metavar="ADDRESS",
    default=None,
    help="Run on a Dask cluster: its scheduler's address (tcp://host:8786) or scheduler file.",
)


class _Seconds(click.ParamType):
    """A finite number of seconds in (0, maximum]; click's FloatRange lets NaN through."""

    name = "seconds"

    def __init__(self, maximum: float, allow_zero: bool = False) -> None:
        self.maximum = maximum
        self.allow_zero = allow_zero

    def convert(self, value, param, ctx):  # noqa: ANN001, ANN201 - click's signature
        if isinstance(value, float):
            return value
        try:
            seconds = float(value)
        except ValueError:
            self.fail(f"expected a number of seconds, found {value!r}", param, ctx)
        low_ok = seconds >= 0 if self.allow_zero else seconds > 0
        if not (low_ok and seconds <= self.maximum):  # also false for NaN
            low = "0 <=" if self.allow_zero else "0 <"
            self.fail(f"expected seconds with {low} s <= {self.maximum:g}, found {value!r}", param, ctx)
        return seconds


DASK_WAIT_OPTION = click.option(
    "--dask-wait",
    "dask_wait",
    type=_Seconds(1e6, allow_zero=True),
    default=None,
    metavar="SECONDS",
    help="With --dask: how long to wait for a first worker before giving up (default: 120).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="cnsim", message="%(prog)s %(version)s")
def cli() -> None:
    """Packet-level simulator for data-center Ethernet congestion management."""


@cli.command()
@click.argument("file", type=str)
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=None, help="Run seed (default: the scenario's).")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Result directory (default: results/<scenario name>).",
)
@FORCE_OPTION
@SET_OPTION
@click.option("--plot", "make_plots", is_flag=True, help="Also draw figures into <out>/figures.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["png", "svg"]),
    default="png",
    show_default=True,
    help="Figure format for --plot.",
)
@click.option("--max-events", type=click.IntRange(1, MAX_EVENTS), default=None,
              help="Stop after this many events; the result is marked partial.")
@click.option("--max-wall", type=_Seconds(MAX_WALL_S), default=None, metavar="SECONDS",
              help="Stop after this much wall time; the result is marked partial.")
@click.option("--no-checks", is_flag=True, help="Skip the invariant checks (a few percent faster).")
@click.option("--fail-on-deadlock", is_flag=True,
              help="Exit with status 4 if the PAUSE watchdog finds a deadlock (the result is saved).")
@click.option("--export", "export", type=click.Choice(["hpcc"]), default=None,
              help="Also write another simulator's output files into the result: hpcc writes fct.txt and "
              "pfc.txt in the HPCC ns-3 simulator's layouts (docs/hpcc.md).")
@click.option("--threads", type=click.IntRange(1, 256), default=None,
              help="Split the run over N threads (default: the scenario's 'threads', 1); the results "
              "are the same for any N (docs/parallel.md).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
def run(
    file: str,
    seed: int | None,
    out: Path | None,
    force: bool,
    sets: tuple[str, ...],
    make_plots: bool,
    fmt: str,
    max_events: int | None,
    max_wall: float | None,
    no_checks: bool,
    fail_on_deadlock: bool,
    export: str | None,
    threads: int | None,
    quiet: bool,
) -> int:
    """Run the scenario FILE and save its results."""
    from . import api
    from .results import reserve_result

    overrides = _parse_sets(sets)
    resolved = api.validate(file, set=overrides) if out is None or export else None
    if out is None:
        name = resolved.get("name")
        out = Path("results") / _safe_dirname(name or Path(file).stem)
    show_progress = not quiet and sys.stderr.isatty()
    exported: dict[str, int] = {}
    # The destination is checked and claimed first: a long run is never thrown away at the end.
    with reserve_result(out, force=force) as slot:
        result = api.run(file, seed, set=overrides, progress=show_progress, max_events=max_events,
                         max_wall_s=max_wall, checks=not no_checks, threads=threads)
        if export == "hpcc":
            from .hpcc import ExportNodes, write_export

            nodes = ExportNodes.from_scenario(resolved["nodes"], resolved["links"])
            # Written into the result before it is committed: part of it, in the same rename.
            exported = write_export(slot, result.flows, result.pfc_events, nodes)
        result.save_into(slot, figures=fmt if make_plots else None)
    figures: list[Path] = []
    if make_plots:
        from . import plots

        figures = sorted(p for p in plots.figures_dir(out).iterdir() if not p.name.startswith("."))
    if not quiet:
        from .console import print_run_report

        print_run_report(result, out, figures)
        if exported:
            click.echo(f"hpcc export: {out / 'fct.txt'} ({exported['fct.txt']:,} flows), "
                       f"{out / 'pfc.txt'} ({exported['pfc.txt']:,} PFC frames received)")
    else:
        # Warnings are never quiet.
        from .console import print_warnings

        print_warnings(result)
    deadlocks = (result.summary.get("watchdog") or {}).get("deadlocks") or []
    return EXIT_DEADLOCK if fail_on_deadlock and deadlocks else 0


@cli.command()
@click.argument("file", type=str)
@SET_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the resolved scenario as JSON.")
def validate(file: str, sets: tuple[str, ...], as_json: bool) -> None:
    """Check the scenario FILE without running it."""
    from . import api

    resolved = api.validate(file, set=_parse_sets(sets))
    if as_json:
        click.echo(json.dumps(resolved, indent=2))
        return
    n_nodes = len(resolved.get("nodes", []))
    n_links = len(resolved.get("links", []))
    n_flows = len(resolved.get("flows", []))
    from .console import format_seconds

    duration = format_seconds(float(resolved.get("duration_s", 0.0)))
    click.echo(f"{file}: ok — {n_nodes} nodes, {n_links} links, {n_flows} flows, duration {duration}")
    for line in _workload_notes(resolved) + _switch_notes(resolved):
        click.echo(f"  {line}")


def _workload_notes(resolved: dict) -> list[str]:
    """Each workload and the flows the scenario's seed draws for it."""
    from .console import format_seconds

    notes = []
    for w in resolved.get("workloads") or ():
        span = (f", starting {format_seconds(w['first_start_s'])} to {format_seconds(w['last_start_s'])}"
                if w["flows"] else "")
        load = f" at load {w['load']:g}" if "load" in w else ""
        notes.append(f"workload {w['name']} ({w['kind']}{load}, {w['transport']}): {w['flows']:,} flows, "
                     f"{w['bytes']:,} B with seed {resolved.get('seed', 1)}{span}")
    return notes


def _switch_notes(resolved: dict) -> list[str]:
    """What validate says of classes and switches beyond the counts: the classes, the
    switches with PFC, the shared buffers' computed headroom, static routes."""
    notes = []
    if resolved.get("priorities"):
        notes.append(f"{resolved['priorities']['classes']} traffic classes")
    switches = [n for n in resolved.get("nodes", []) if n.get("kind") == "switch"]
    pfc = [n["name"] for n in switches if n["switch"].get("pfc")]
    if pfc:
        classes = sorted({c for n in switches if n["switch"].get("pfc") for c in n["switch"]["pfc"]["classes"]})
        notes.append(f"PFC on {_names(pfc)} (classes {', '.join(map(str, classes))})")
    for n in switches:
        shared = n["switch"].get("shared")
        if shared and shared["headroom"]:
            sizes = [h["bytes"] for h in shared["headroom"]]
            span = f"{min(sizes):,} B" if min(sizes) == max(sizes) else f"{min(sizes):,}-{max(sizes):,} B"
            notes.append(
                f"{n['name']}: shared buffer of {shared['total']:,} B, headroom {span} per port and lossless class"
            )
    routed = [n["name"] for n in switches if n["switch"].get("routes")]
    if routed:
        notes.append(f"static routes at {_names(routed)}")
    return notes[:12]


def _names(names: list[str], limit: int = 6) -> str:
    return ", ".join(names) if len(names) <= limit else f"{', '.join(names[:limit])} and {len(names) - limit} more"


@cli.command()
@click.argument("result_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Figure directory (default: RESULT_DIR/figures for one result, <common parent>/compare for several).",
)
@FORCE_OPTION
@click.option("--format", "fmt", type=click.Choice(["png", "svg"]), default="png", show_default=True)
def plot(result_dirs: tuple[Path, ...], out: Path | None, force: bool, fmt: str) -> None:
    """Draw figures for one result directory, or overlay several (variants)."""
    from . import plots
    from .results import Result

    results = [Result.load(d) for d in result_dirs]
    if out is None:
        if len(result_dirs) == 1:
            out = plots.figures_dir(result_dirs[0])
        else:
            common = Path(os.path.commonpath([str(d.resolve()) for d in result_dirs]))
            out = _relative_if_possible(common / "compare")
    with plots.reserve_figures(out, force=force) as slot:
        names = plots.draw_into(results, slot, fmt)
        slot.commit()
    click.echo(f"figures: {out}/ ({', '.join(names)})")


@cli.command()
@click.argument("files", nargs=-1, required=True, type=str)
@click.option(
    "--axis",
    "axes",
    multiple=True,
    metavar="KEY=V1,V2,...",
    help="Sweep an override over these values (split at commas outside brackets and quotes; "
    "or a JSON/TOML list: 'KEY=[\"a,b\", \"c\"]'). Repeatable; the points are the cross product.",
)
@click.option(
    "--variant",
    "variants",
    multiple=True,
    metavar="NAME:KEY=VALUE[,KEY=VALUE...]",
    help="A named variant: these overrides together (NAME: alone is the unchanged scenario). Repeatable.",
)
@click.option("--seeds", type=click.IntRange(1), default=None, help="Run every point with seeds 1..N.")
@click.option("--seed-list", "seed_list", metavar="S1,S2,...", default=None, help="Run every point with these seeds.")
@SET_OPTION
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    metavar="NAME=EXPR",
    help="A summary column computed from each point's result, e.g. "
    "--metric 'hot=flows[\"C1->S1\"].delivered_gbps' (docs/sweeps.md). Repeatable.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Sweep directory (default: results/sweeps/<file stem>); re-running resumes it.",
)
@JOBS_OPTION
@DASK_OPTION
@DASK_WAIT_OPTION
@click.option("-q", "--quiet", is_flag=True, help="No progress bar or report; only errors.")
def sweep(
    files: tuple[str, ...],
    axes: tuple[str, ...],
    variants: tuple[str, ...],
    seeds: int | None,
    seed_list: str | None,
    sets: tuple[str, ...],
    metrics: tuple[str, ...],
    out: Path | None,
    jobs: int | None,
    dask_address: str | None,
    dask_wait: float | None,
    quiet: bool,
) -> int:
    """Run the cross product of variants x axis values x seeds of the scenario FILE(s).

    Several FILEs are several variants, named by their file stems. A FILE's
    [sweep] section adds its seeds, named variants and axes. Points already
    complete in --out are not run again; failed points are retried.
    """
    from . import points as pts
    from .sweep import SUMMARY_CSV, SUMMARY_PARQUET, run_plan

    if seeds is not None and seed_list is not None:
        raise CliError("give either --seeds or --seed-list, not both")
    metric_map: dict[str, str] = {}
    for item in metrics:
        name, sep, expression = item.partition("=")
        if not sep or not name.strip() or not expression.strip():
            raise CliError(f"--metric expects name=expression, got {item!r}")
        if name.strip() in metric_map:
            raise CliError(f"--metric {name.strip()} given twice")
        metric_map[name.strip()] = expression.strip()
    try:
        axis_map: dict[str, list] = {}
        for item in axes:
            key, values = pts.parse_axis_option(item)
            if key in axis_map:
                raise CliError(f"--axis {key} given twice")
            axis_map[key] = values
        variant_map: dict[str, dict] = {}
        for item in variants:
            name, overrides = pts.parse_variant_option(item)
            if name in variant_map:
                raise CliError(f"--variant {name} given twice")
            variant_map[name] = overrides
        seed_values = pts.parse_seed_list(seed_list) if seed_list is not None else None
    except pts.SweepError as exc:
        raise CliError(str(exc)) from None
    the_plan = pts.plan(
        list(files) if len(files) > 1 else files[0],
        axes=axis_map or None,
        variants=variant_map or None,
        seeds=seeds,
        seed_list=seed_values,
        set=_parse_sets(sets),
        metrics=metric_map or None,
    )
    if out is None:
        out = Path("results") / "sweeps" / _safe_dirname("-".join(s.label for s in the_plan.sources))
    show_progress = not quiet and sys.stderr.isatty()
    command = ["cnsim", *_ARGV]
    with _sigterm_as_interrupt():
        try:
            frame = run_plan(the_plan, out, jobs=jobs, dask=dask_address, progress=show_progress, command=command,
                             **_dask_wait(dask_wait))
        except KeyboardInterrupt:
            _report_interrupted(out)
            raise
    if not quiet:
        from .console import format_seconds

        a = frame.attrs
        n_ok = int(((frame["status"] == "ok") & ~frame["partial"]).sum())
        n_partial = int(frame["partial"].sum())
        n_failed = int((frame["status"] == "failed").sum())
        click.echo(
            f"{out}: {a['points']} points, {n_ok} ok ({a['done_before']} done before), {n_partial} partial, "
            f"{n_failed} failed  ·  {format_seconds(a['wall_time_s'])}"
        )
        click.echo(f"summary: {out / SUMMARY_PARQUET}  {out / SUMMARY_CSV}")
    return _sweep_status(frame)


@cli.command()
@click.argument("study", required=False)
@click.option("--list", "list_studies", is_flag=True, help="List the studies and exit.")
@click.option("--quick", is_flag=True, help="A reduced run (fewer seeds, shorter time) for smoke tests.")
@click.option("--sensitivity", is_flag=True,
              help="Also sweep the parameters the study leaves open (into <out>-sensitivity) and report them.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Sweep and report directory (default: results/reproduce/<study>[-quick]); re-running resumes it.",
)
@JOBS_OPTION
@DASK_OPTION
@DASK_WAIT_OPTION
@click.option("-q", "--quiet", is_flag=True, help="No progress bar; only errors.")
def reproduce(
    study: str | None,
    list_studies: bool,
    quick: bool,
    sensitivity: bool,
    out: Path | None,
    jobs: int | None,
    dask_address: str | None,
    dask_wait: float | None,
    quiet: bool,
) -> int:
    """Run every variant and seed of a reference STUDY and write report.html beside the sweep."""
    from . import studies
    from .report import reproduce as run_study
    from .sweep import load_sweep

    if list_studies:
        for name in studies.names():
            spec = studies.get(name)
            n_variants = len(spec.sweep_variants or spec.variants)
            click.echo(f"{name:<18} {spec.title}  ({n_variants} variants, {spec.seeds} seed{'s' if spec.seeds != 1 else ''})")
        return 0
    if study is None:
        raise CliError("name a study (see 'cnsim reproduce --list')")
    try:
        spec = studies.get(study)
    except studies.UnknownStudy as exc:
        raise CliError(str(exc)) from None
    command = " ".join(["cnsim", *_ARGV])
    with _sigterm_as_interrupt():
        try:
            report = run_study(
                spec.name, quick=quick, sensitivity=sensitivity, out=out, jobs=jobs, dask=dask_address,
                progress=not quiet and sys.stderr.isatty(), command=command, **_dask_wait(dask_wait),
            )
        except KeyboardInterrupt:
            if out is not None:
                _report_interrupted(out)
            raise
    frame = load_sweep(report.parent)
    if not quiet:
        click.echo(f"report: {report}")
    return _sweep_status(frame)


@cli.command()
@click.argument("names", nargs=-1)
@click.option("--quick", is_flag=True, help="Shorter runs and fewer seeds (a smoke test of the set).")
@click.option("--json", "json_out", type=click.Path(path_type=Path), default=None, metavar="OUT",
              help="Also write the numbers (and the machine) as JSON.")
@click.option("--peers", is_flag=True, help="Then run the side-by-side comparison against ns-3 (bench/peers/ns3).")
@click.option("--peer-seeds", type=click.IntRange(1), default=3, show_default=True,
              help="Seeds of the ns-3 comparison.")
@click.option("--threads", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Split each run over N threads (docs/parallel.md).")
@click.option("--rounds", type=click.IntRange(1), default=1, show_default=True,
              help="Run the set N times, every other round in reverse order; report medians.")
def bench(names: tuple[str, ...], quick: bool, json_out: Path | None, peers: bool, peer_seeds: int,
          threads: int, rounds: int) -> int:
    """Run the benchmark set (bench/benchmarks.toml), or the benchmarks whose name starts with one of NAMES."""
    from rich.console import Console
    from rich.markup import escape

    from . import bench as benchmarks
    from .console import bench_table, notes_of, ratio_table

    try:
        manifest, ratios = benchmarks.load_manifest()
        chosen = benchmarks.select(manifest, names)
        if peers:
            benchmarks.peers_command(peer_seeds, json_out)  # checked before the benchmarks run
    except benchmarks.BenchError as exc:
        raise CliError(str(exc)) from None
    console = Console()
    if not console.is_terminal:
        console.width = 120  # whole rows in logs and pipes
    info = benchmarks.machine()
    console.print(f"[bold]cnsim bench[/]{' --quick' if quick else ''}: {info['nproc']} cores, {info['cpu']}, "
                  f"{info['build']}, engine {info['engine_id']}, "
                  f"{'one thread' if threads == 1 else f'{threads} threads'}, checks on"
                  f"{f', {rounds} rounds (medians)' if rounds > 1 else ''}")
    with console.status("") as status:
        def progress(b: benchmarks.Benchmark, r: int) -> None:
            status.update(f"{b.name}: {b.about}" + (f" (round {r + 1} of {rounds})" if rounds > 1 else ""))

        each = benchmarks.run_rounds(chosen, rounds, quick=quick, threads=threads, progress=progress)
    try:
        rows = [benchmarks.median_row(r) for r in each]
    except benchmarks.BenchError as exc:
        raise CliError(str(exc)) from None
    ratio_rows = benchmarks.ratio_rows(ratios, {b.name: r for b, r in zip(chosen, each, strict=True)})
    console.print(bench_table(rows))
    if ratio_rows:
        console.print(ratio_table(ratio_rows))
    for r in rows:
        run = {"threads_requested": r["threads"], "threads_used": r["threads_used"], "threads_note": r["threads_note"]}
        for line in notes_of(run):
            console.print(f"[bold]note:[/bold] {escape(r['name'])} {escape(line)}")
    peer_json = json_out.with_name(json_out.stem + "-ns3.json") if (json_out and peers) else None
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        doc = {"machine": info, "quick": quick, "threads": threads, "rounds": rounds, "benchmarks": rows,
               "ratios": ratio_rows, "peers": str(peer_json) if peer_json else None}
        json_out.write_text(json.dumps(doc, indent=1))
    if peers:
        console.print("\n[bold]ns-3 side by side[/] (bench/peers/ns3/compare.py)")
        code = benchmarks.run_peers(peer_seeds, peer_json)
        if code != 0:
            _error(f"the ns-3 comparison failed (exit status {code}); see its output above")
            return EXIT_RUNTIME
    return 0


@cli.group(invoke_without_command=True)
@click.pass_context
def scenarios(ctx: click.Context) -> None:
    """List the shipped scenario files, one folder per study; 'copy' copies a folder to edit."""
    if ctx.invoked_subcommand is not None:
        return
    from . import studies
    from .data import scenario_folders

    for folder, files in scenario_folders().items():
        title = studies.get(folder).title if folder in studies.names() else ""
        click.echo(f"{folder:<18} {title}".rstrip())
        for name in files:
            click.echo(f"    {name}")


@scenarios.command("copy")
@click.argument("study")
@click.argument("dest", type=click.Path(path_type=Path))
def scenarios_copy(study: str, dest: Path) -> None:
    """Copy the scenario files of STUDY (a folder of 'cnsim scenarios') into DEST; existing files are never replaced."""
    from .data import CopyRefused, copy_scenarios

    try:
        written = copy_scenarios(study, dest)
    except CopyRefused as exc:
        raise CliError(str(exc)) from None
    for path in written:
        click.echo(str(path))


@cli.command(epilog="\b\nKinds:\n" + "\n".join(f"  {kind:<12} {what}" for kind, what in KINDS.items()))
@click.argument("kind", type=click.Choice(list(KINDS)), metavar="KIND")
@click.argument("path", required=False, type=str)
def init(kind: str, path: str | None) -> None:
    """Write a commented scenario of KIND to PATH, to edit and run.

    PATH defaults to KIND.toml in the current directory; a directory gets KIND.toml inside
    it. An existing file is never replaced: cnsim init refuses and writes nothing (there is
    no --force).
    """
    from .starter import InitRefused, write_template

    try:
        written = write_template(kind, path)
    except InitRefused as exc:
        raise CliError(str(exc)) from None
    click.echo(f"{written}: a {kind} scenario; check it with 'cnsim validate {written}', "
               f"run it with 'cnsim run {written} --plot'")


@cli.command()
@click.option("--out", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help="Write the schema to FILE (never replaces an existing file). Default: print it.")
def schema(out: Path | None) -> None:
    """Print the JSON Schema of scenario files, for editors (docs/scenario-format.md, "Editor support").

    The package ships the same file: cnsim.data.SCHEMA_FILE.
    """
    from ._core import scenario_schema
    from .outputs import write_new

    text = scenario_schema()
    if out is None:
        click.echo(text, nl=False)
        return
    refused = f"{out}: already exists; cnsim schema never replaces a file (give another --out)"
    if out.exists() or out.is_symlink():
        raise CliError(refused)
    if not out.parent.is_dir():
        raise CliError(f"{out.parent}: no such directory")
    try:
        write_new(out, lambda path: path.write_text(text, encoding="utf-8"))
    except FileExistsError:
        raise CliError(refused) from None
    click.echo(f"{out}: the JSON Schema of cnsim {__version__} scenario files")


@cli.group("import")
def import_group() -> None:
    """Build a cnsim scenario from another simulator's input files."""


@import_group.command("hpcc")
@click.argument("config", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--out", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help="Write the scenario to FILE (never replaces an existing file). Default: print it.")
@click.option("--topology", type=click.Path(path_type=Path, dir_okay=False), default=None, metavar="FILE",
              help="The topology file instead of the config's TOPOLOGY_FILE.")
@click.option("--flows", type=click.Path(path_type=Path, dir_okay=False), default=None, metavar="FILE",
              help="The flow file instead of the config's FLOW_FILE.")
@click.option("--no-flows", is_flag=True,
              help="Leave the flows out of the scenario (the flow file is still read for its classes).")
def import_hpcc(config: Path, out: Path | None, topology: Path | None, flows: Path | None, no_flows: bool) -> None:
    """Write a cnsim scenario from an HPCC ns-3 simulator's config, topology and flow files.

    CONFIG is its config.txt. Its TOPOLOGY_FILE and FLOW_FILE are looked up relative to the working
    directory (as the simulator does), then to the config's folder and the one above it. Every key
    that cannot be mapped is listed at the top of the scenario and printed. docs/hpcc.md describes
    the mapping.
    """
    from .hpcc import HpccError, import_hpcc as build
    from .outputs import write_new

    if out is not None and (out.exists() or out.is_symlink()):
        raise CliError(f"{out}: already exists; cnsim import never replaces a file (give another --out)")
    try:
        imported = build(config, topology=topology, flows=flows, with_flows=not no_flows,
                         name=_safe_dirname(out.stem).name if out is not None else None)
    except HpccError as exc:
        raise CliError(str(exc)) from None
    if out is None:
        click.echo(imported.text, nl=False)
    else:
        try:
            if not out.parent.is_dir():
                raise CliError(f"{out.parent}: no such directory")
            write_new(out, lambda path: path.write_text(imported.text, encoding="utf-8"))
        except FileExistsError:
            raise CliError(f"{out}: already exists; cnsim import never replaces a file (give another --out)") from None
    report = click.echo if out is not None else (lambda text: click.echo(text, err=True))
    flows_written = (f"{imported.written_flows:,} flows" if not no_flows
                     else f"no flows (--no-flows; {len(imported.flows.flows):,} in the file)")
    target = out if out is not None else "scenario"
    report(f"{target}: {_plural(imported.hosts, 'host')}, {_plural(imported.switches, 'switch')}, "
           f"{_plural(imported.links, 'link')}, "
           f"{flows_written}; {imported.cc} (from {config}, {imported.topology_path}, {imported.flows_path})")
    if imported.unmapped:
        where = f", also listed at the top of {out}" if out is not None else ", also at the top of the scenario"
        report(f"not mapped ({len(imported.unmapped)}{where}):")
        for item in imported.unmapped:
            report(f"  {item.describe()}")
    for note in imported.notes:
        report(f"note: {note}")
    if out is not None:
        report(f"check it with 'cnsim validate {out}', run it with 'cnsim run {out} --export hpcc'")


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun if n == 1 else noun + ('es' if noun.endswith('ch') else 's')}"


def _dask_wait(seconds: float | None) -> dict[str, float]:
    """The --dask-wait keyword, when given (the API's default applies otherwise)."""
    return {} if seconds is None else {"dask_wait_s": seconds}


def _sweep_status(frame) -> int:
    """Report failed and partial points of a sweep's summary; return the exit status."""
    failed = frame[frame["status"] != "ok"]
    partial = frame[frame["partial"]]
    if len(partial):
        click.echo(
            f"warning: {len(partial)} of {len(frame)} points stopped early (partial results; "
            f"see load_point(...).partial): {', '.join(partial['point_id'])}",
            err=True,
        )
    if len(failed):
        lines = [f"{len(failed)} of {len(frame)} points failed (run the same command again to retry them):"]
        lines += [f"  {r.point_id}: {r.error}" for r in failed.itertuples()]
        _error("\n".join(lines))
        return EXIT_RUNTIME
    return EXIT_PARTIAL if len(partial) else 0


def _report_interrupted(out: Path) -> None:
    from .sweep import load_sweep

    try:
        frame = load_sweep(out)
        done = int((frame["status"] == "ok").sum())
        click.echo(
            f"{out}: interrupted with {done} of {len(frame)} points done; run the same command again to resume",
            err=True,
        )
    except Exception:
        pass


class _sigterm_as_interrupt:
    """During a sweep, SIGTERM (e.g. a batch system's time limit) stops it like Ctrl-C."""

    def __enter__(self) -> None:
        import signal
        import threading

        self._old = None
        if threading.current_thread() is threading.main_thread():

            def handler(signum, frame):  # noqa: ARG001
                raise KeyboardInterrupt

            self._old = signal.signal(signal.SIGTERM, handler)

    def __exit__(self, *exc) -> None:
        import signal

        if self._old is not None:
            signal.signal(signal.SIGTERM, self._old)


# --------------------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``cnsim`` command; never shows a traceback unless CNSIM_DEBUG is set."""
    code = _main(argv)
    sys.exit(code)


#: The arguments of this invocation (recorded in a sweep's sweep.json).
_ARGV: list[str] = []


def _main(argv: list[str] | None) -> int:
    global _ARGV
    _ARGV = list(argv) if argv is not None else sys.argv[1:]
    debug = os.environ.get("CNSIM_DEBUG", "") not in ("", "0")
    from ._core import ScenarioError, SimulationError
    from .results import ResultError

    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            rv = cli.main(args=argv, prog_name="cnsim", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        _error(f"{exc.format_message()}{hint}")
        return exc.exit_code
    except click.ClickException as exc:
        _error(exc.format_message())
        return exc.exit_code
    except (click.Abort, KeyboardInterrupt):
        _error("interrupted")
        return EXIT_INTERRUPTED
    except CliError as exc:
        _error(str(exc))
        return exc.code
    except ScenarioError as exc:
        _maybe_traceback(debug)
        _error(str(exc))
        return EXIT_BAD_INPUT
    except ResultError as exc:
        _maybe_traceback(debug)
        _error(str(exc))
        return EXIT_BAD_INPUT
    except SimulationError as exc:
        _maybe_traceback(debug)
        _error(str(exc))
        return EXIT_RUNTIME
    except FileNotFoundError as exc:
        _maybe_traceback(debug)
        _error(f"{exc.filename}: no such file" if exc.filename else str(exc))
        return EXIT_BAD_INPUT
    except (IsADirectoryError, NotADirectoryError, PermissionError) as exc:
        _maybe_traceback(debug)
        _error(f"{exc.filename}: {exc.strerror.lower() if exc.strerror else exc}")
        return EXIT_BAD_INPUT
    except UnicodeDecodeError as exc:
        _maybe_traceback(debug)
        _error(f"scenario file is not UTF-8 text: {exc}")
        return EXIT_BAD_INPUT
    except OSError as exc:
        _maybe_traceback(debug)
        _error(f"{exc.filename}: {exc.strerror}" if exc.filename and exc.strerror else str(exc))
        return EXIT_RUNTIME
    except Exception as exc:  # a bug: still one line, unless debugging
        _maybe_traceback(debug)
        _error(f"internal error: {type(exc).__name__}: {exc} (set CNSIM_DEBUG=1 for a traceback)")
        return EXIT_RUNTIME


def _error(message: str) -> None:
    click.echo(f"error: {message}", err=True)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ARG001
    """Warnings (e.g. a damaged sweep point run again) as one line, like errors."""
    click.echo(f"warning: {message}", err=True)


def _maybe_traceback(debug: bool) -> None:
    if debug:
        import traceback

        traceback.print_exc()


# --------------------------------------------------------------------------- formatting helpers


def _safe_dirname(name: str) -> Path:
    """A relative path from a scenario name; '/' separates folders ("baseline/no_cm")."""
    parts = []
    for part in name.split("/"):
        cleaned = "".join(c if (c.isalnum() or c in "-_.") else "_" for c in part).strip(".")
        if cleaned:
            parts.append(cleaned)
    return Path(*parts) if parts else Path("run")


def _relative_if_possible(path: Path) -> Path:
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


if __name__ == "__main__":  # pragma: no cover
    main()
