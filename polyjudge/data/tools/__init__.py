"""Files other evaluation tools write, read as they are: a table source whose ``format`` names
a tool (``{path: annotations.json, format: alpaca_eval}``) is read by that tool's reader, one
module per tool, into the standard run table (task, language, backbone, framework, score
[, stratum]): the judged item, the language, the judge, the judged system and the score.

A reader is a module with ``OPTIONS`` (the source keys it takes besides ``path``, ``format`` and
``constants``, each a choice the tool's files leave open) and ``read(files, *, table, missing,
**options) -> DataFrame`` (``files``: the sorted paths the source names; ``table``: ``runs`` or
``verdicts``; ``missing``: ``error`` or ``omit`` for scores the tool recorded as failed). A
field the files leave ambiguous is refused with the file, the field and the setting that
resolves it. Fields the files do not hold at all (often the language) come from the source's
``constants`` (:func:`apply_constants`).
"""
from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from types import ModuleType

import pandas as pd

from ..errors import InputError

READERS: dict[str, ModuleType] = {}
"""Tool name (a source's ``format``) -> its reader module."""


def is_tool(value) -> bool:
    """A source read by a tool's reader: a mapping whose ``format`` names a tool."""
    return isinstance(value, Mapping) and value.get("format") in READERS


def options_of(spec: Mapping) -> dict:
    """The reader's own options of a tool source (checked: unknown keys are named)."""
    module = READERS[spec["format"]]
    common = ("path", "format", "constants")
    unknown = [key for key in spec if key not in common and key not in module.OPTIONS]
    if unknown:
        raise InputError(dict(spec), f"unknown key(s) {unknown} in a `format: {spec['format']}` "
                         "source", f"keys among {list(common + tuple(module.OPTIONS))}")
    return {key: spec[key] for key in module.OPTIONS if spec.get(key) is not None}


def apply_constants(frame: pd.DataFrame, constants: Mapping | None, source) -> pd.DataFrame:
    """``frame`` with each constant column set; a column the reader filled already is refused
    where its values differ from the constant (the constant would hide them)."""
    for name, value in (constants or {}).items():
        value = str(value).strip()
        held = frame[name].dropna().astype(str).str.strip() if name in frame else None
        if held is not None and len(held) and not held.eq(value).all():
            found = sorted(set(held) - {value})[:3]
            raise InputError(source, f"`constants: {{{name}: {value}}}`, but the files give "
                             f"{name} {found} too", f"leave {name} out of `constants` (the "
                             "files say it), or fix the files")
        frame[name] = value
    return frame


def read_tool(value: Mapping, files, *, table: str = "runs", missing: str = "error"
              ) -> pd.DataFrame:
    """A tool source's whole table in the standard column names, constants applied."""
    module = READERS[value["format"]]
    frame = module.read([*files], table=table, missing=missing, **options_of(value))
    frame = apply_constants(frame, value.get("constants"), value.get("path"))
    return _filled(frame, value)


def _filled(frame: pd.DataFrame, value: Mapping) -> pd.DataFrame:
    """A field the files do not say (a reader leaves it empty) and no constant gives is
    named with the setting that gives it, rather than left to the run checks."""
    for name in ("task", "language", "backbone"):
        empty = frame[name].isna() if name in frame else pd.Series(True, index=frame.index)
        if empty.any():
            raise InputError(value.get("path"), f"the {value['format']} files do not say the "
                             f"{name} of {int(empty.sum())} of {len(frame)} rows",
                             f"`constants: {{{name}: <value>}}` in the source (the "
                             f"{value['format']} page in docs/tools/ says where the files "
                             "hold it)")
    return frame


READERS["helm"] = import_module(f"{__name__}.helm")
READERS["lm_eval"] = import_module(f"{__name__}.lm_eval")
READERS["promptfoo"] = import_module(f"{__name__}.promptfoo")
READERS["alpaca_eval"] = import_module(f"{__name__}.alpaca_eval")
READERS["fastchat"] = import_module(f"{__name__}.fastchat")
READERS["arena_hard"] = import_module(f"{__name__}.arena_hard")
