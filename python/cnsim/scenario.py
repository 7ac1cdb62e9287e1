"""Scenario input: the path of a TOML file or a dict, as text for the engine."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Union

from . import _core

ScenarioLike = Union[str, os.PathLike, Mapping[str, Any]]

#: The origin (file name in messages) of a scenario given as a dict.
DICT_ORIGIN = "<dict>"


def scenario_source(scenario: ScenarioLike) -> tuple[str, str, str]:
    """Return (text, origin, fmt) for the engine."""
    if isinstance(scenario, Mapping):
        try:
            text = json.dumps(scenario, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise _core.ScenarioError(f"{DICT_ORIGIN}: scenario is not JSON-serialisable: {exc}") from None
        return text, DICT_ORIGIN, "json"
    if isinstance(scenario, (str, os.PathLike)):
        # The engine's rules: FileNotFoundError for a missing file, a
        # ScenarioError naming the path for one that is not a regular file,
        # over the size limit or not UTF-8.
        text = _core.read_scenario(os.fspath(scenario))
        return text, os.fspath(scenario), "toml"
    raise TypeError(f"scenario must be a path or a dict, not {type(scenario).__name__}")
