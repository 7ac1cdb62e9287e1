"""Overrides: the ``set`` argument and ``--set`` values, rendered as the engine reads them.

An override is a dotted path and a value (``"switches[CORE].buffer" =
"150KB"``). The API takes them as a mapping or an iterable of ``(key,
value)`` pairs; the engine takes ``(key, text)`` pairs whose text it reads as
a TOML value, or as a plain string if it is not one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Union

import tomli_w

SetLike = Union[Mapping[str, Any], Iterable[tuple[str, Any]], None]


def set_items(set_: SetLike, error: type[Exception] = TypeError) -> Iterator[tuple[str, Any]]:
    """The ``(key, value)`` pairs of a ``set`` argument, keys as strings.

    *set_* is a mapping or an iterable of pairs; an item that is not a pair
    raises *error* (the caller's kind: TypeError for a run, SweepError for a
    sweep). Pairs are yielded as they are checked, so that a caller's own
    errors about earlier pairs come first.
    """
    if set_ is None:
        return
    items = set_.items() if isinstance(set_, Mapping) else set_
    for item in items:
        try:
            key, value = item
        except (TypeError, ValueError):
            raise error(f"set: expected (key, value) pairs, got {item!r}") from None
        yield str(key), value


def override_pairs(set_: SetLike, overrides: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The engine's override pairs for a run: *set_*, then the top-level keyword overrides."""
    pairs = [(key, override_value(value)) for key, value in set_items(set_)]
    pairs += [(key, override_value(value)) for key, value in overrides.items()]
    return pairs


def override_value(value: Any) -> str:
    """Render an override value as the engine expects it.

    Strings are passed unchanged (the engine reads them as TOML values, or as
    plain strings such as ``"150KB"``); numbers and booleans become TOML
    literals; lists and dicts become TOML inline arrays and tables.
    """
    if isinstance(value, str):
        return value
    return toml_literal(value)


def plain_value(value: Any) -> Any:
    """*value* with numpy scalars and arrays as Python numbers and lists.

    ``numpy.float64`` is a ``float`` subclass whose ``repr`` is
    ``np.float64(0.3)``; anything with ``tolist`` (numpy scalars, arrays,
    0-d arrays) is converted, so that every Python number or list accepted
    may also be a numpy one.
    """
    if isinstance(value, (str, bytes, list, tuple, Mapping)) or not hasattr(value, "tolist"):
        return value
    return value.tolist()


def toml_literal(value: Any) -> str:
    """*value* as a one-line TOML literal: a string quoted, a list an inline array, a dict an
    inline table.

    Scalars, strings and keys are written by tomli-w; this joins arrays and tables on one
    line, which tomli-w, a writer of whole documents, does not (it breaks every array over
    several lines and writes a dict as a ``[table]``; docs/decisions.md).
    """
    value = plain_value(value)
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, Mapping):
        inner = ", ".join(f"{_toml_key(k)} = {toml_literal(v)}" for k, v in value.items())
        return "{" + inner + "}" if inner else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, int) and not isinstance(value, bool):
        value = int(value)  # tomli-w writes str(value): an IntEnum's is its name
    elif isinstance(value, float):
        value = float(value)
    if not isinstance(value, (bool, int, float, str)):
        raise TypeError(f"cannot use a {type(value).__name__} as an override value: {value!r}")
    # "v = <literal>\n"
    return tomli_w.dumps({"v": value})[4:-1]


def _toml_key(key: Any) -> str:
    """A key of an inline table, bare if it can be."""
    # "<key> = 0\n"
    return tomli_w.dumps({str(key): 0})[:-5]
