"""Strict JSON, the one encoder of every JSON the package writes: no NaN, no Infinity.

Python's ``json`` writes ``NaN`` and ``Infinity``, which are not JSON: browsers, ``jq`` and strict
parsers refuse the file. Here a number that is not finite is written as ``null``, and a
top-level object gains an ``undefined`` entry that says, for each such value, why it is not a
number: the reason its producer gave (``reasons``), else what the value was. numpy scalars and
arrays are written as plain numbers and lists. A file without such values is written byte for
byte as before.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

UNDEFINED = "undefined"
"""The key of a top-level object that lists why each ``null`` written for a number is there."""


def _not_finite(value: float) -> str:
    return "not a number (NaN)" if math.isnan(value) else f"not finite ({value:+})"


def json_ready(value, reasons: Mapping[str, str] | None = None, path: str = ""):
    """``(plain, undefined)``: ``value`` with numpy types made plain and non-finite numbers
    made ``None``; ``undefined`` maps the path of each such number (``a.b[2].c``) to its reason:
    ``reasons[path]``, else ``reasons[key]`` (its last key), else what the value was."""
    reasons = reasons or {}
    undefined: dict[str, str] = {}

    def walk(item, where: str, key: str):
        if isinstance(item, np.ndarray):
            item = item.tolist()
        elif isinstance(item, np.generic):
            item = item.item()
        if isinstance(item, float) and not math.isfinite(item):
            undefined[where] = reasons.get(where) or reasons.get(key) or _not_finite(item)
            return None
        if isinstance(item, Mapping):
            return {str(k): walk(v, f"{where}.{k}" if where else str(k), str(k))
                    for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [walk(v, f"{where}[{i}]", key) for i, v in enumerate(item)]
        return item

    return walk(value, path, path), undefined


def dumps(value, reasons: Mapping[str, str] | None = None, **options) -> str:
    """``json.dumps`` of :func:`json_ready` (``options``: json.dumps's keywords), strict: a
    top-level object with undefined numbers gains :data:`UNDEFINED`; a value json cannot write
    still raises ``TypeError``."""
    plain, undefined = json_ready(value, reasons)
    if undefined and isinstance(plain, dict):
        plain = {**plain, UNDEFINED: {**plain.get(UNDEFINED, {}), **undefined}}
    return json.dumps(plain, allow_nan=False, **options)


def write_json(data, path, reasons: Mapping[str, str] | None = None) -> Path:
    """Write ``data`` as indented strict JSON in insertion order (byte-stable across runs)."""
    path = Path(path)
    path.write_text(dumps(data, reasons, indent=2) + "\n")
    return path


def strict_loads(text: str):
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and ``-Infinity`` (as a browser does)."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)
