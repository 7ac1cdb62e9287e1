"""Sweep points: expanding scenarios, variants, axes and seeds into points with stable ids.

A sweep is the cross product *variants × axis values × seeds*, taken per
scenario file. Every point is checked against the engine before anything
runs (:func:`plan`), and gets an id that depends only on what determines its
result (:func:`point_id`)::

    <slug>-<hash>          e.g.  pause_load0.3_s2-4be1c0a9d3

The slug is the variant name, then ``<last part of the key><value>`` for
each axis in the order of the keys, then ``s<seed>``, cut to 60 characters.
The hash is the first 10 hex digits of the SHA-256 of the canonical JSON of
``{"scenario": <content hash>, "variant": <name>, "overrides": [[key, value],
...] sorted by key, "seed": <seed>}``; the *content hash* is the SHA-256 of
the scenario parsed as TOML (or the dict), without its ``[sweep]`` section,
as canonical JSON, so comments, formatting and the ``[sweep]`` section itself
do not change ids. The slug (variant, axis values, seed) is for people.

Values are kept *typed* (as the engine reads them): an override string such
as ``"0.3"`` or ``"150KB"`` means what it means after ``--set``, i.e. a TOML
literal if it is one (``0.3``), else the bare string (``150KB``). Two ways of
writing the same value therefore give the same point.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import itertools
import json
import os
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _core
from .metrics import Metric, metric_set
from .overrides import plain_value, set_items, toml_literal
from .scenario import DICT_ORIGIN, scenario_source

__all__ = [
    "Point",
    "SweepError",
    "display_value",
    "engine_value",
    "parse_axis_option",
    "parse_literal",
    "parse_seed_list",
    "parse_variant_option",
    "plan",
    "point_id",
    "split_values",
]

#: Length of the hash part of a point id, in hex digits (40 bits).
ID_HASH_LEN = 10
#: Longest slug part of a point id.
SLUG_MAX = 60
#: Points directory inside a sweep directory.
POINTS_DIR = "points"
#: A point id as :func:`point_id` makes it (a regular expression).
POINT_ID_PATTERN = rf"[A-Za-z0-9.+_-]{{1,{SLUG_MAX}}}-[0-9a-f]{{{ID_HASH_LEN}}}"

ScenarioInput = str | os.PathLike | Mapping[str, Any] | Sequence[str | os.PathLike]


class SweepError(_core.ScenarioError, ValueError):
    """Bad sweep input (file, axis, variant, seeds, output directory).

    A :class:`cnsim.ScenarioError` (and a :class:`ValueError`); raised before
    anything runs or is written.
    """


# --------------------------------------------------------------------------- values


def parse_literal(text: str) -> Any:
    """The typed value of an override string, as the engine reads it.

    A TOML literal (``3``, ``0.5``, ``true``, ``"x"``, ``[1, 2]``,
    ``{ mode = "global" }``) gives its value; anything else (``150KB``,
    ``10Gbps``) is the string itself.
    """
    try:
        doc = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    if set(doc) != {"v"} or _has_datetime(doc["v"]):
        return text
    return doc["v"]


def _has_datetime(value: Any) -> bool:
    if isinstance(value, (_dt.date, _dt.time)):
        return True
    if isinstance(value, list):
        return any(_has_datetime(v) for v in value)
    if isinstance(value, dict):
        return any(_has_datetime(v) for v in value.values())
    return False


def engine_value(value: Any) -> str:
    """Render a typed value as an override string the engine reads back as *value*."""
    if isinstance(value, str):
        # A bare string is fine unless it would read as something else ("0.3", "true").
        return value if parse_literal(value) == value and value.strip() == value and value else toml_literal(value)
    return toml_literal(value)


def display_value(value: Any) -> str:
    """A value as written in a scenario file: ``"100KB"``, ``0.3``, ``{ mode = "global" }``."""
    return toml_literal(value)


def _typed(value: Any, where: str) -> Any:
    """Normalise a Python value (from the API or a scenario file) to JSON-like types."""
    value = plain_value(value)
    if isinstance(value, bool) or value is None:
        if value is None:
            raise SweepError(f"{where}: no value (None)")
        return value
    if isinstance(value, (int, float, str)):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): _typed(v, where) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_typed(v, where) for v in value]
    raise SweepError(f"{where}: cannot use a {type(value).__name__} as a value: {value!r}")


def _from_user(value: Any, where: str) -> Any:
    """A value given through the API or the command line: strings are override strings."""
    if isinstance(value, str):
        return parse_literal(value)
    return _typed(value, where)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


# --------------------------------------------------------------------------- command-line syntax


def split_values(text: str) -> list[str]:
    """Split at commas that are not inside brackets, braces or quotes.

    ``0.3,0.4`` → ``["0.3", "0.4"]``; ``{mode="global",xoff="1KB"},{mode="off"}``
    → two inline tables.
    """
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth = max(depth - 1, 0)
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def parse_axis_option(text: str) -> tuple[str, list[Any]]:
    """Parse ``--axis key=v1,v2,...`` (or ``key=[v1, v2]``, a JSON or TOML array).

    Returns the key and the typed values. Raises :class:`SweepError`.
    """
    key, sep, rest = text.partition("=")
    key = key.strip()
    rest = rest.strip()
    if not sep or not key:
        raise SweepError(f"--axis expects key=v1,v2,..., got {text!r}")
    if not rest:
        raise SweepError(f"--axis {key}: no values")
    if rest.startswith("["):
        values = _parse_array(rest)
        if values is not None:
            if not values:
                raise SweepError(f"--axis {key}: no values")
            return key, [_typed(v, f"--axis {key}") for v in values]
    pieces = split_values(rest)
    if any(p == "" for p in pieces):
        raise SweepError(f"--axis {key}: empty value in {rest!r}")
    return key, [parse_literal(p) for p in pieces]


def _parse_array(text: str) -> list[Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        value = parse_literal(text)
    return value if isinstance(value, list) else None


_VARIANT_NAME = re.compile(r"^[^\s/]+$")


def parse_variant_option(text: str) -> tuple[str, dict[str, Any]]:
    """Parse ``--variant name:key=value[,key=value...]`` into (name, {key: typed value})."""
    name, sep, rest = text.partition(":")
    name = name.strip()
    if not sep or not name:
        raise SweepError(
            f"--variant expects name:key=value[,key=value...] (name: alone for the unchanged scenario), got {text!r}"
        )
    _check_variant_name(name, "--variant")
    overrides: dict[str, Any] = {}
    if rest.strip():
        for piece in split_values(rest):
            key, eq, value = piece.partition("=")
            key = key.strip()
            if not eq or not key:
                raise SweepError(f"--variant {name}: expected key=value, got {piece!r}")
            if key in overrides:
                raise SweepError(f"--variant {name}: {key} given twice")
            overrides[key] = parse_literal(value.strip())
    return name, overrides


def parse_seed_list(text: str) -> list[int]:
    """Parse ``--seed-list 1,2,3``."""
    seeds = []
    for piece in text.split(","):
        piece = piece.strip()
        try:
            seeds.append(int(piece))
        except ValueError:
            raise SweepError(f"--seed-list expects integers separated by commas, got {text!r}") from None
    return seeds


def _check_variant_name(name: str, where: str) -> None:
    if not isinstance(name, str) or not _VARIANT_NAME.match(name):
        raise SweepError(f"{where}: variant name {name!r} must be non-empty, without spaces or '/'")
    problem = _core.name_error(name)
    if problem is not None:
        raise SweepError(f"{where}: variant name: {problem}")


# --------------------------------------------------------------------------- points


@dataclass(frozen=True)
class Source:
    """One scenario: its text as sent to the engine and its hashes."""

    origin: str  # path as given, or "<dict>"
    text: str
    fmt: str  # "toml" or "json"
    sha256: str  # of the file's bytes (of the JSON text for a dict)
    content_hash: str  # of the parsed scenario without [sweep]; enters point ids
    label: str  # file stem or mapping key


@dataclass(frozen=True)
class Point:
    """One run of a sweep: a scenario, a variant, axis values and a seed.

    ``overrides`` are all overrides applied (``set``, then the variant's, then
    the axis values; the last one wins for a key), sorted by key, as typed
    values; ``axes`` maps each axis key to this point's value; ``dir`` is the
    result directory relative to the sweep directory.
    """

    point_id: str
    variant: str
    scenario: str = field(compare=False)
    seed: int = field(compare=False)
    axes: Mapping[str, Any] = field(compare=False)
    overrides: tuple[tuple[str, Any], ...] = field(compare=False)
    source: Source = field(compare=False, repr=False)

    @property
    def dir(self) -> str:
        return f"{POINTS_DIR}/{self.point_id}"

    @property
    def engine_overrides(self) -> list[tuple[str, str]]:
        """The overrides as (key, value string) pairs for ``cnsim._core``."""
        return [(k, engine_value(v)) for k, v in self.overrides]

    def to_dict(self) -> dict[str, Any]:
        return {
            "point_id": self.point_id,
            "variant": self.variant,
            "scenario": self.scenario,
            "axes": dict(self.axes),
            "seed": self.seed,
            "overrides": dict(self.overrides),
            "dir": self.dir,
        }


def point_id(content_hash: str, variant: str, overrides: Iterable[tuple[str, Any]], seed: int, axes=None) -> str:
    """The stable id of a point (see the module documentation)."""
    ordered = sorted(([str(k), v] for k, v in overrides), key=lambda kv: kv[0])
    payload = canonical_json({"scenario": content_hash, "variant": variant, "overrides": ordered, "seed": int(seed)})
    digest = hashlib.sha256(payload.encode("ascii")).hexdigest()[:ID_HASH_LEN]
    return f"{_slug(variant, axes or {}, seed)}-{digest}"


def _slug(variant: str, axes: Mapping[str, Any], seed: int) -> str:
    parts = [variant.replace("/", ".")] if variant else []
    for key, value in sorted(axes.items()):
        short = re.split(r"[.\]]", key.rstrip("]"))[-1] or key
        shown = value if isinstance(value, str) else canonical_json(value)
        parts.append(f"{short}{shown}")
    parts.append(f"s{seed}")
    slug = "_".join(_clean(p) for p in parts)
    slug = re.sub(r"_+", "_", slug).strip("_.-")
    if len(slug) > SLUG_MAX:
        slug = slug[:SLUG_MAX].rstrip("_.-")
    return slug or "point"


def _clean(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", text)


# --------------------------------------------------------------------------- planning


@dataclass
class _FileSpec:
    source: Source
    base_seed: int
    sweep: dict[str, Any]  # the file's [sweep] section as described by the engine (or {})
    label_in_variant: bool


@dataclass
class Plan:
    """The expanded, checked points of a sweep, plus what is needed to describe it."""

    points: list[Point]
    sources: list[Source]
    axis_keys: list[str]
    arguments: dict[str, Any]
    #: User-defined summary columns by name (the files' [sweep] metrics, then the API's).
    metrics: dict[str, Metric] = field(default_factory=dict)


def plan(
    scenario: ScenarioInput,
    *,
    axes: Mapping[str, Sequence[Any]] | None = None,
    variants: Mapping[str, Mapping[str, Any]] | None = None,
    seeds: int | None = None,
    seed_list: Sequence[int] | None = None,
    set: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
    metrics: Mapping[str, Any] | None = None,
) -> Plan:
    """Expand and check a sweep; raise :class:`SweepError` (or ScenarioError) on bad input."""
    fixed = _fixed_overrides(set)
    files = _sources(scenario, fixed)
    user_axes = _user_axes(axes)
    user_variants = _user_variants(variants)
    user_seeds = _user_seeds(seeds, seed_list)
    user_metrics = metric_set(metrics, SweepError)
    file_metrics: dict[str, Metric] = {}

    points: list[Point] = []
    axis_keys: list[str] = []
    seen: dict[str, Point] = {}
    for spec in files:
        src = spec.source
        file_sweep = spec.sweep or {}
        # Variants: the file's, then the API's/command line's (same name replaces).
        file_variants = {
            name: {k: _typed(v, f"{src.origin}: sweep.variants.{name}.{k}") for k, v in (ov or {}).items()}
            for name, ov in (file_sweep.get("variants") or {}).items()
        }
        variant_map = {**file_variants, **user_variants}
        # Axes: the file's, then the API's (same key replaces, new keys add).
        file_axes = {
            k: [_typed(v, f"{src.origin}: sweep.axes.{k}") for v in vals]
            for k, vals in (file_sweep.get("axes") or {}).items()
        }
        axis_map = dict(file_axes)
        for k, vals in user_axes.items():
            axis_map.pop(k, None)
            axis_map[k] = vals
        for k, vals in axis_map.items():
            _check_axis(src.origin, k, vals)
            if k not in axis_keys:
                axis_keys.append(k)
        seed_values = user_seeds or _file_seeds(file_sweep) or [spec.base_seed]
        # Metrics: one set of columns for the whole summary; a name two files define
        # differently is refused unless the API's or command line's replaces it.
        for name, m in metric_set(file_sweep.get("metrics"), SweepError, f"{src.origin}: sweep.metrics").items():
            other = file_metrics.setdefault(name, m)
            if other.text != m.text and name not in user_metrics:
                raise SweepError(f"{src.origin}: sweep.metrics.{name} = {m.text!r}: another file defines "
                                 f"{name!r} as {other.text!r}")

        _check_file(src, fixed, variant_map, axis_map)

        variant_items = list(variant_map.items()) or [(None, {})]
        for vname, vover in variant_items:
            if vname is None:
                label = src.label
            elif spec.label_in_variant:
                label = f"{src.label}/{vname}"
            else:
                label = vname
            axis_keys_here = list(axis_map)
            for combo in itertools.product(*(axis_map[k] for k in axis_keys_here)):
                coords = dict(zip(axis_keys_here, combo))
                merged: dict[str, Any] = {}
                for layer in (fixed, vover, coords):
                    merged.update(layer)
                overrides = tuple(sorted(merged.items()))
                for seed in seed_values:
                    pid = point_id(src.content_hash, label, overrides, seed, coords)
                    point = Point(pid, label, src.origin, seed, coords, overrides, src)
                    if pid in seen:
                        raise SweepError(
                            f"{src.origin}: two points are the same run (variant {label!r}, seed {seed}); "
                            "remove the duplicate file, variant or axis value"
                        )
                    seen[pid] = point
                    points.append(point)

    arguments = {
        "scenario": _describe_scenario(scenario),
        "axes": {k: list(v) for k, v in user_axes.items()} or None,
        "variants": user_variants or None,
        "seeds": seeds,
        "seed_list": list(seed_list) if seed_list is not None else None,
        "set": dict(fixed) or None,
        "metrics": {name: m.text for name, m in user_metrics.items()} or None,
    }
    return Plan(points, [f.source for f in files], axis_keys, arguments, {**file_metrics, **user_metrics})


def _describe_scenario(scenario: Any) -> Any:
    if isinstance(scenario, (str, os.PathLike)):
        return os.fspath(scenario)
    if isinstance(scenario, Mapping):
        if _is_variant_mapping(scenario):
            return {str(k): os.fspath(v) for k, v in scenario.items()}
        return DICT_ORIGIN
    return [os.fspath(s) for s in scenario]


def _is_variant_mapping(scenario: Mapping[str, Any]) -> bool:
    return bool(scenario) and all(isinstance(v, (str, os.PathLike)) for v in scenario.values())


def _sources(scenario: ScenarioInput, fixed: Mapping[str, Any]) -> list[_FileSpec]:
    """Read and check the scenario(s) with the fixed overrides; return their descriptions."""
    entries: list[tuple[str, Any]] = []  # (label, path or dict)
    mapping = False
    if isinstance(scenario, (str, os.PathLike)):
        entries.append((Path(scenario).stem, scenario))
    elif isinstance(scenario, Mapping):
        if _is_variant_mapping(scenario):
            mapping = True
            for name, path in scenario.items():
                _check_variant_name(name, "scenario mapping")
                entries.append((name, path))
        else:
            name = scenario.get("name")
            label = _clean(str(name).split("/")[-1]) if isinstance(name, str) and name else "scenario"
            entries.append((label, scenario))
    elif isinstance(scenario, Sequence) and not isinstance(scenario, (bytes, bytearray)):
        if not scenario:
            raise SweepError("no scenario files given")
        for item in scenario:
            if not isinstance(item, (str, os.PathLike)):
                raise SweepError(f"scenario list: expected file paths, got a {type(item).__name__}")
            entries.append((Path(item).stem, item))
    else:
        raise SweepError(
            f"scenario must be a path, a dict, a list of paths or a {{variant: path}} mapping, "
            f"not {type(scenario).__name__}"
        )

    labels = [label for label, _ in entries]
    for label in labels:
        if labels.count(label) > 1:
            raise SweepError(
                f"two scenario files are both named {label!r}; give them distinct names "
                "(API: a {variant: path} mapping)"
            )
    several = len(entries) > 1 or mapping
    specs = []
    for label, item in entries:
        source = _read_source(label, item)
        pairs = [(k, engine_value(v)) for k, v in fixed.items()]
        description = json.loads(_core.validate(source.text, source.origin, pairs, fmt=source.fmt))
        specs.append(_FileSpec(source, int(description.get("seed", 1)), description.get("sweep") or {}, several))
    return specs


def _read_source(label: str, item: Any) -> Source:
    if isinstance(item, Mapping):
        try:
            text, _, _ = scenario_source(item)
        except _core.ScenarioError as exc:
            raise SweepError(str(exc)) from None
        content = {k: v for k, v in item.items() if k != "sweep"}
        return Source(
            DICT_ORIGIN,
            text,
            "json",
            hashlib.sha256(text.encode()).hexdigest(),
            hashlib.sha256(canonical_json(content).encode()).hexdigest(),
            label,
        )
    origin = os.fspath(item)
    try:
        text, _, _ = scenario_source(origin)
    except FileNotFoundError:
        raise SweepError(f"{origin}: no such file") from None
    except _core.ScenarioError as exc:
        raise SweepError(str(exc)) from None
    data = text.encode()
    try:
        parsed = tomllib.loads(text)
        parsed.pop("sweep", None)
        content_hash = hashlib.sha256(canonical_json(parsed).encode()).hexdigest()
    except (tomllib.TOMLDecodeError, TypeError, ValueError):
        content_hash = hashlib.sha256(data).hexdigest()  # the engine reports the error
    return Source(origin, text, "toml", hashlib.sha256(data).hexdigest(), content_hash, label)


def _fixed_overrides(set_: Any) -> dict[str, Any]:
    """The sweep's ``set`` argument: typed values by key, the same for every point."""
    out: dict[str, Any] = {}
    for key, value in set_items(set_, SweepError):
        _check_key(key, "set")
        out[key] = _from_user(value, f"set {key}")
    return out


def _user_axes(axes: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    if axes is None:
        return out
    if not isinstance(axes, Mapping):
        raise SweepError(f"axes must be a mapping {{key: [values]}}, not {type(axes).__name__}")
    for key, values in axes.items():
        key = str(key)
        _check_key(key, "axis")
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
            raise SweepError(f"axis {key!r}: expected a list of values, got {values!r}")
        values = list(values)
        out[key] = [_from_user(v, f"axis {key!r}") for v in values]
        if not values:
            raise SweepError(f"axis {key!r}: no values")
    return out


def _user_variants(variants: Any) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if variants is None:
        return out
    if not isinstance(variants, Mapping):
        raise SweepError(f"variants must be a mapping {{name: {{key: value}}}}, not {type(variants).__name__}")
    for name, overrides in variants.items():
        _check_variant_name(name, "variants")
        if overrides is None:
            overrides = {}
        if not isinstance(overrides, Mapping):
            raise SweepError(f"variant {name!r}: expected a mapping {{key: value}}, got {overrides!r}")
        out[name] = {}
        for key, value in overrides.items():
            _check_key(str(key), f"variant {name!r}")
            out[name][str(key)] = _from_user(value, f"variant {name!r}: {key}")
    return out


def _user_seeds(seeds: Any, seed_list: Any) -> list[int] | None:
    if seeds is not None and seed_list is not None:
        raise SweepError("give either seeds or a seed list, not both")
    seeds, seed_list = plain_value(seeds), plain_value(seed_list)
    if seeds is not None:
        if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
            raise SweepError(f"seeds must be a positive integer (seeds 1..N), got {seeds!r}")
        return list(range(1, seeds + 1))
    if seed_list is not None:
        if isinstance(seed_list, (str, bytes)) or not isinstance(seed_list, Iterable):
            raise SweepError(f"seed list must be a list of integers, got {seed_list!r}")
        values = list(seed_list)
        if not values:
            raise SweepError("seed list is empty")
        out = []
        for s in values:
            s = plain_value(s)
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**64:
                raise SweepError(f"seed list: seeds are integers in 0..2^64-1, got {s!r}")
            if s in out:
                raise SweepError(f"seed list: seed {s} given twice")
            out.append(s)
        return out
    return None


def _file_seeds(sweep: Mapping[str, Any]) -> list[int] | None:
    if sweep.get("seed_list"):
        return [int(s) for s in sweep["seed_list"]]
    if sweep.get("seeds"):
        return list(range(1, int(sweep["seeds"]) + 1))
    return None


def _check_key(key: str, where: str) -> None:
    if not key.strip():
        raise SweepError(f"{where}: empty key")
    if key.strip() == "seed":
        raise SweepError(f"{where} 'seed': the seed is not an override in a sweep; use seeds or a seed list")


def _check_axis(origin: str, key: str, values: list[Any]) -> None:
    _check_key(key, f"{origin}: axis")
    if not values:
        raise SweepError(f"{origin}: sweep.axes.{_quoted(key)}: no values")
    seen: list[str] = []
    for v in values:
        c = canonical_json(v)
        if c in seen:
            raise SweepError(f"{origin}: sweep.axes.{_quoted(key)}: value {display_value(v)} given twice")
        seen.append(c)


def _quoted(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)


_LOCATION = re.compile(r"^\d+:\d+:\s*")


def _core_message(source: Source, exc: Exception, overrides: Iterable[tuple[str, Any]]) -> str:
    """The engine's message without its origin: 'FILE:LINE:COL:' (it points at the
    table, not the sweep) or '--set KEY=VALUE:' (the sweep names the key and value)."""
    msg = str(exc)
    if msg.startswith(source.origin + ":"):
        return _LOCATION.sub("", msg[len(source.origin) + 1 :].lstrip())
    for key, value in overrides:
        prefix = f"--set {key}={engine_value(value)}: "
        if msg.startswith(prefix):
            return msg[len(prefix) :]
    return msg


def _validate(source: Source, overrides: Iterable[tuple[str, Any]]) -> None:
    pairs = [(k, engine_value(v)) for k, v in overrides]
    _core.validate(source.text, source.origin, pairs, fmt=source.fmt)


def _check_file(
    source: Source, fixed: dict[str, Any], variants: dict[str, dict[str, Any]], axes: dict[str, list[Any]]
) -> None:
    """Load the scenario once per variant and per combination of axis values (seeds aside).

    A failure is attributed to the single override that causes it when there
    is one (the message names the sweep key and the value), else to the
    variant or the combination.
    """
    base = dict(fixed)  # already checked when the file was read
    keys = list(axes)
    for name, overrides in variants.items() if variants else [(None, {})]:
        with_variant = {**base, **overrides}
        if name is not None:
            try:
                _validate(source, with_variant.items())
            except _core.ScenarioError as exc:
                msg = _core_message(source, exc, with_variant.items())
                for key, value in overrides.items():
                    if _fails_with(source, {**base, key: value}, msg):
                        raise SweepError(
                            f"{source.origin}: sweep.variants.{name}.{_quoted(key)} = {display_value(value)}: {msg}"
                        ) from None
                raise SweepError(f"{source.origin}: sweep.variants.{name}: {msg}") from None
        if not keys:
            continue
        for combo in itertools.product(*(axes[k] for k in keys)):
            coords = dict(zip(keys, combo))
            try:
                _validate(source, {**with_variant, **coords}.items())
            except _core.ScenarioError as exc:
                msg = _core_message(source, exc, {**with_variant, **coords}.items())
                in_variant = f" (variant {name})" if name is not None else ""
                for key, value in coords.items():
                    if _fails_with(source, {**base, key: value}, msg):
                        in_variant = ""
                    elif not _fails_with(source, {**with_variant, key: value}, msg):
                        continue
                    raise SweepError(
                        f"{source.origin}: sweep.axes.{_quoted(key)} = {display_value(value)}{in_variant}: {msg}"
                    ) from None
                shown = ", ".join(f"{_quoted(k)} = {display_value(v)}" for k, v in coords.items())
                where = f"variant {name} with " if name is not None else ""
                raise SweepError(f"{source.origin}: {where}{shown}: {msg}") from None


def _fails_with(source: Source, overrides: Mapping[str, Any], msg: str) -> bool:
    try:
        _validate(source, overrides.items())
    except _core.ScenarioError as exc:
        return _core_message(source, exc, overrides.items()) == msg
    return False
