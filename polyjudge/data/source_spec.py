"""What a table source says: its keys checked (paths, template or partitioning, format,
``path_fields``, ``constants``; a tool's source; Inspect logs; a list of sources), and how
messages name it. Reading it is :mod:`polyjudge.data.sources`'."""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from .errors import InputError
from .path_fields import FIELD, POLICIES
from .tools import READERS, is_tool, options_of

SOURCE_KEYS = ("path", "template", "partitioning", "format", "path_fields", "constants")
FORMATS = ("csv", "parquet", "jsonl", "json")
SUFFIXES = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet",
            ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json"}
GLOB = re.compile(r"[*?\[]")


def is_several(value) -> bool:
    """Several sources read as one table: a list with at least one mapping."""
    return isinstance(value, (list, tuple)) and any(isinstance(v, Mapping) for v in value)


def is_inspect(value) -> bool:
    """An Inspect AI log source: a mapping with ``inspect`` (helper module inspect_logs)."""
    return isinstance(value, Mapping) and "inspect" in value


def spec_of(value) -> dict:
    """A source as ``{path: [patterns], template, partitioning, format}`` (checked)."""
    if is_tool(value):
        options_of(value)  # names unknown keys
        spec = {key: value[key] for key in ("path", "format", "constants") if key in value}
        if not spec.get("path"):
            raise InputError(dict(value), f"a `format: {value['format']}` source without `path`",
                             "path: the file or folder the tool wrote")
    elif isinstance(value, Mapping):
        unknown = [key for key in value if key not in SOURCE_KEYS]
        if unknown:
            raise InputError(dict(value), f"unknown key(s) {unknown} in a table source",
                             f"keys among {list(SOURCE_KEYS)} (or `inspect` for Inspect logs)")
        spec = dict(value)
        if not spec.get("path"):
            if not spec.get("template"):
                raise InputError(dict(value), "a table source without `path` or `template`",
                                 "path: a file, folder, glob or list; or a template")
            spec["path"] = FIELD.sub("*", spec["template"])
    else:
        spec = {"path": value}
    paths = spec["path"]
    spec["path"] = [str(p) for p in paths] if isinstance(paths, (list, tuple)) else [str(paths)]
    if spec.get("partitioning") not in (None, "hive"):
        raise InputError(spec["path"], f"partitioning {spec['partitioning']!r}",
                         "partitioning: hive (key=value folders), or a template")
    if spec.get("partitioning") and spec.get("template"):
        raise InputError(spec["path"], "both a template and Hive partitioning",
                         "one way to take fields from the paths")
    if spec.get("format") not in (None, *FORMATS, *READERS):
        raise InputError(spec["path"], f"format {spec['format']!r}",
                         f"one of {list(FORMATS)}, or a tool: {sorted(READERS)}")
    _check_constants(spec)
    if spec.get("path_fields") not in (None, *POLICIES):
        raise InputError(spec["path"], f"path_fields {spec['path_fields']!r}",
                         f"one of {list(POLICIES)}: what to do where a record holds a field its "
                         "path gives too (check that both agree, or trust one side)")
    if spec.get("path_fields") and not (spec.get("template") or spec.get("partitioning")
                                        or spec.get("constants")):
        raise InputError(spec["path"], "path_fields without fields from the paths",
                         "a template, `partitioning: hive` or `constants` beside path_fields")
    return spec


def _check_constants(spec: dict) -> None:
    constants = spec.get("constants")
    if constants is None:
        return
    if not isinstance(constants, Mapping) or not all(
            isinstance(v, (str, int, float)) and not isinstance(v, bool)
            for v in constants.values()):
        raise InputError(spec["path"], f"constants {constants!r}",
                         "a mapping of field to one value, e.g. `constants: {language: bn}`")
    pattern = spec.get("template") or ""
    twice = [name for name in constants if "{" + str(name) + "}" in pattern]
    if twice:
        raise InputError(spec["path"], f"{twice} given by both `constants` and the template",
                         "one of the two for each field")


def describe(value) -> str:
    """How messages name a source: its patterns and, if any, its template or partitioning."""
    if is_several(value):
        return " + ".join(describe(part) for part in value)
    if is_inspect(value):
        paths = value["inspect"]
        return f"Inspect logs {paths if isinstance(paths, str) else ', '.join(map(str, paths))}"
    spec = spec_of(value)
    text = ", ".join(spec["path"])
    if spec.get("template"):
        text += f" (template {spec['template']})"
    if spec.get("partitioning"):
        text += f" ({spec['partitioning']} partitioning)"
    if is_tool(value):
        text += f" (written by {value['format']})"
    return text


def is_single_file(value, base_dir=None) -> bool:
    """A plain path to one CSV or Parquet file (no glob, no folder): read as it always was."""
    if not isinstance(value, (str, Path)) or GLOB.search(str(value)):
        return False
    path = Path(base_dir or ".") / value
    return not path.is_dir() and SUFFIXES.get(path.suffix.lower(), "csv") in ("csv", "parquet")
