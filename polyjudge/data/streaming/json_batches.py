"""Reading JSON Lines and JSON (an array of records) in batches, nested fields by dotted paths.

JSON Lines are read by pyarrow's streaming reader (``pyarrow.json.open_json``) with an explicit
schema of the wanted fields only (``result.score`` becomes a struct ``result`` with a child
``score``; every other field of the records is skipped): text for identifiers, float64 for
``score``. A file whose values do not fit those types (task ids written as numbers, quoted
scores, a syntax error) is read on from the record where pyarrow stopped by a plain Python
reader (``json.loads`` per line), which converts numbers to text as written and names the line
of a syntax error. A JSON array of records is read whole (``json.load``), then cut into batches.

Each batch is indexed by record number in the file (0 = first record); :func:`record_lines`
turns record numbers into line numbers (blank lines are skipped by both readers).
"""
from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from ..errors import InputError, say

NUMERIC = ("score",)
"""Fields read as numbers (float64) by the fast reader; every other field is text."""
BATCH_BYTES = 1 << 24


def iter_json_lines(path: Path, fields: dict[str, str], optional=(), nullable=(),
                    batch_rows: int = 1 << 19) -> Iterator[pd.DataFrame]:
    """Batches of a JSON Lines file: one column per standard name of ``fields`` (standard name
    -> dotted path in the records). A record without a value at a field's path stops the read
    (file, line), except for ``nullable`` fields (NaN) and ``optional`` fields that no record
    of the file's first batch has (then left out for the whole file)."""
    shape = _Fields(path, fields, optional, nullable)
    done = 0
    try:
        if not _starts_with_object(path):  # pyarrow 26 crashes (SIGSEGV) on a first `null`
            raise ValueError("not a record first: the Python reader names the line")
        for batch in _arrow_batches(path, fields, batch_rows):
            batch.index = pd.RangeIndex(done, done + len(batch))
            batch = shape.check(batch, done)
            done += len(batch)
            yield batch
        return
    except InputError:
        raise
    except Exception:  # a value of another type, a syntax error: read on line by line
        pass
    records = _python_records(path)
    for _ in itertools.islice(records, done):  # the records already read
        pass
    for rows in _chunks(records, batch_rows):
        batch = _frame(rows, fields, done)
        batch = shape.check(batch, done)
        done += len(batch)
        yield batch


def iter_json_array(path: Path, fields: dict[str, str], optional=(), nullable=(),
                    batch_rows: int = 1 << 19) -> Iterator[pd.DataFrame]:
    """Batches of a JSON file holding an array of records (read whole: JSON has no lines to
    stream); record numbers count the array's elements."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            records = json.load(handle)
    except UnicodeDecodeError as error:
        raise InputError(path, f"is not UTF-8 text ({error.reason} at byte {error.start})",
                         "a UTF-8 encoded JSON file")
    except json.JSONDecodeError as error:
        raise InputError(path, f"is not valid JSON ({error.msg} at line {error.lineno}, column "
                         f"{error.colno})", "an array of records, or one record per line (JSON "
                         "Lines, `format: jsonl`)")
    if not isinstance(records, list):
        raise InputError(path, f"holds a JSON {type(records).__name__}, not an array of records",
                         "an array of records [{...}, {...}], or one record per line (JSON Lines)")
    shape = _Fields(path, fields, optional, nullable, unit="record")
    for start in range(0, max(len(records), 1), batch_rows):
        rows = records[start:start + batch_rows]
        for number, record in enumerate(rows, start + 1):
            if not isinstance(record, dict):
                raise InputError(path, f"record {number} is a JSON {type(record).__name__}, not "
                                 "an object", "an array of objects (records)")
        yield shape.check(_frame(rows, fields, start), start)


class _Fields:
    """Per file: which optional fields it has (decided by its first batch) and a record without
    a required value, named by its line."""

    def __init__(self, path, fields, optional, nullable, unit="line"):
        self.path, self.fields, self.optional, self.nullable = path, fields, optional, nullable
        self.unit, self.present = unit, None

    def check(self, batch: pd.DataFrame, done: int) -> pd.DataFrame:
        if self.present is None:
            self.present = [name for name in self.fields if name not in self.optional
                            or batch[name].notna().any()]
        if len(self.present) < batch.shape[1]:
            batch = batch[self.present]
        for name in self.present:
            if name in self.nullable:  # an optional field a file has: in every record
                continue
            absent = batch[name].isna().to_numpy()
            if absent.any():
                records = np.flatnonzero(absent)[:5] + done
                where = (record_lines(self.path, records) if self.unit == "line"
                         else records + 1)
                more = f" (and {int(absent.sum()) - 5} more)" if absent.sum() > 5 else ""
                raise InputError(self.path, f"{int(absent.sum())} record(s) without a value at "
                                 f"'{self.fields[name]}' (the {name}): {self.unit}(s) "
                                 f"{', '.join(str(n) for n in where)}{more}",
                                 f"a value at '{self.fields[name]}' in every record (map "
                                 f"{name} to another field with {say('columns')})")
        return batch


def record_lines(path: Path, records) -> list[int]:
    """Line numbers (1 = first line) of records (0 = first record; blank lines hold none)."""
    wanted = {int(r): None for r in records}
    last, record = max(wanted, default=-1), -1
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                record += 1
                if record in wanted:
                    wanted[record] = number
                if record >= last:
                    break
    return [wanted[int(r)] for r in records]


def _arrow_batches(path: Path, fields: dict[str, str], batch_rows: int):
    import pyarrow as pa
    import pyarrow.json as pajson

    schema = pa.schema(_struct_fields(_tree(fields)))
    reader = pajson.open_json(
        path, read_options=pajson.ReadOptions(block_size=BATCH_BYTES),
        parse_options=pajson.ParseOptions(explicit_schema=schema,
                                          unexpected_field_behavior="ignore"))
    for batch in reader:
        table = pa.Table.from_batches([batch])
        while any(pa.types.is_struct(t) for t in table.schema.types):
            table = table.flatten()  # result.score: the child score of struct result
        for first in range(0, max(table.num_rows, 1), batch_rows):
            part = table.slice(first, batch_rows)
            columns = {}
            for name, dotted in fields.items():
                column = part.column(dotted)
                if column.null_count == len(column) and name not in NUMERIC:  # none has it
                    columns[name] = pd.Categorical.from_codes(np.full(len(column), -1, np.int8),
                                                              [])
                    continue
                columns[name] = (column.to_pandas() if name in NUMERIC
                                 else column.dictionary_encode().to_pandas())
            yield pd.DataFrame(columns)


def _tree(fields: dict[str, str]) -> dict:
    """The wanted fields as a nested dict of leaf types: {"result": {"score": "number"}}."""
    tree: dict = {}
    for name, dotted in fields.items():
        node = tree
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"field '{dotted}' is inside a field mapped itself")
        node.setdefault(leaf, "number" if name in NUMERIC else "text")
    return tree


def _struct_fields(tree: dict):
    import pyarrow as pa
    return [pa.field(name, pa.struct(_struct_fields(child)) if isinstance(child, dict)
                     else pa.float64() if child == "number" else pa.string())
            for name, child in tree.items()]


def _starts_with_object(path: Path) -> bool:
    """Is the first non-blank line of a JSON Lines file an object (``{``)?"""
    with open(path, "rb") as handle:
        for line in handle:
            line = line.lstrip(b"\xef\xbb\xbf \t\r\n")
            if line:
                return line.startswith(b"{")
    return True


JSON_TYPES = {type(None): "null", bool: "boolean", int: "number", float: "number", str: "string",
              list: "array"}


def _python_records(path: Path):
    with open(path, encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(path, f"line {number} is not valid JSON ({error.msg} at column "
                                 f"{error.colno})", "one JSON object per line (JSON Lines)")
            if not isinstance(record, dict):
                raise InputError(path, f"line {number} is a JSON {JSON_TYPES[type(record)]}, "
                                 "not an object", "one JSON object (record) per line")
            yield record


def _chunks(iterable, size):
    iterator = iter(iterable)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


_ABSENT = object()


def _value(record: dict, dotted: str):
    for part in dotted.split("."):
        if not isinstance(record, dict):
            return None
        record = record.get(part, _ABSENT)
        if record is _ABSENT:
            return None
    return record


def _text(value):
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)  # 7 -> "7", true -> "true", 7.0 -> "7.0": as written


def _frame(rows: list[dict], fields: dict[str, str], start: int) -> pd.DataFrame:
    columns = {}
    for name, dotted in fields.items():
        values = [_value(record, dotted) for record in rows]
        if name in NUMERIC:  # numbers or text: checked like a CSV's cells
            columns[name] = pd.Series(values, dtype=object)
        else:
            columns[name] = pd.Series([_text(v) for v in values], dtype=object).astype("category")
    frame = pd.DataFrame(columns)
    frame.index = pd.RangeIndex(start, start + len(rows))
    return frame
