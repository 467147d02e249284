"""What the tool readers share: a tool's JSON or JSON Lines records with where each came from,
and the messages that name the file, the record and the field."""
from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from ..errors import InputError, say

RUN_COLUMNS = ["task", "language", "backbone", "framework", "score"]
log = logging.getLogger("polyjudge.tools")


class Records:
    """The records of one file: ``rows`` (dicts) and ``where`` (``file:line`` of each, or
    ``file#n``, the n-th record of a JSON array, 1 = first)."""

    def __init__(self, path: Path, rows: list[dict], where: list[str]):
        self.path, self.rows, self.where = path, rows, where

    def __len__(self) -> int:
        return len(self.rows)

    def frame(self, columns: Iterable[str]) -> pd.DataFrame:
        """The records' top-level ``columns`` (None where a record lacks one), indexed by
        ``where``."""
        columns = list(columns)
        return pd.DataFrame([[row.get(c) for c in columns] for row in self.rows],
                            columns=columns, index=pd.Index(self.where, name=None), dtype=object)


def load(path, tool: str) -> Records:
    """A JSON array of records or JSON Lines (one object a line; blank lines skipped)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(path, f"is not UTF-8 text ({error.reason} at byte {error.start})",
                         f"the file {tool} wrote, unchanged") from None
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as error:
            raise InputError(path, f"is not valid JSON ({error.msg}, line {error.lineno})",
                             f"the file {tool} wrote, unchanged") from None
        where = [f"{path.name}#{n}" for n in range(1, len(rows) + 1)]
    else:
        rows, where = [], []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise InputError(path, f"line {number} is not a JSON record ({error.msg})",
                                 f"JSON Lines as {tool} writes them: one record a line"
                                 ) from None
            where.append(f"{path.name}:{number}")
    bad = [w for w, row in zip(where, rows) if not isinstance(row, dict)]
    if bad:
        raise InputError(path, f"{len(bad)} entries are not records (JSON objects), first at "
                         f"{bad[0]}", f"the records {tool} writes")
    if not rows:
        raise InputError(path, "holds no records", f"the records {tool} writes")
    return Records(path, rows, where)


def require(records: Records, fields: Iterable[str], tool: str, what: str) -> None:
    """Stop where a record lacks one of ``fields`` (a file of another tool, most often)."""
    for field in fields:
        lacking = [w for w, row in zip(records.where, records.rows) if field not in row]
        if lacking:
            keys = sorted(records.rows[records.where.index(lacking[0])])[:12]
            raise InputError(records.path, f"{len(lacking)} of {len(records)} records lack the "
                             f"field `{field}` (first: {lacking[0]}, whose fields are {keys})",
                             f"{what}, as {tool} writes them (`{field}` in every record); a "
                             "file another tool wrote is read with that tool's `format`")


def shown(records: Records, mask, columns) -> pd.DataFrame:
    """The records under ``mask``, ``columns`` shown, labelled ``file:line``."""
    frame = records.frame(columns).loc[list(mask)]
    frame.attrs["rows_caption"] = "records (file:line, or file#n: the n-th of a JSON array)"
    return frame


def unscored(records: Records, mask, why: str, columns, missing: str) -> None:
    """Records whose score the tool recorded as failed: stop with ``missing: error``; with
    ``omit`` say how many are left out (the workflow's ingest log has it)."""
    count = int(sum(mask))
    if count and missing == "error":
        raise missing_error(records, mask, why, columns)
    if count:
        log.warning("%s: %d of %d records have no score and are left out (`missing: omit`): "
                    "%s", records.path, count, len(records), why)


def missing_error(records: Records, mask, why: str, columns) -> InputError:
    """Records whose score the tool recorded as failed, with ``missing: error``."""
    count = int(sum(mask))
    return InputError(records.path, f"{count} of {len(records)} records have no score: {why}",
                      f"every record scored, or {say('missing omit')} to leave them out (they "
                      f"are counted, not read as a score)", shown(records, mask, columns),
                      n_rows=count)


def refuse_duplicates(frame: pd.DataFrame, keys, path, fix: str) -> None:
    """Two records giving the same run: say which and how to tell them apart."""
    repeated = frame.duplicated(keys, keep=False)
    if repeated.any():
        rows = frame.loc[repeated, keys]
        rows.attrs["rows_caption"] = "records (file:line, or file#n: the n-th of a JSON array)"
        raise InputError(path, f"{int(repeated.sum())} records give the same run "
                         f"{tuple(keys)}", fix, rows, n_rows=int(repeated.sum()))


def choice(options: dict, name: str, allowed: tuple, default):
    """An option's value, checked against ``allowed``."""
    value = options.get(name, default)
    if value not in allowed:
        raise InputError(f"`{name}: {value}`", f"unknown value {value!r} of `{name}`",
                         f"one of {list(allowed)}")
    return value
