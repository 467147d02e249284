"""How tests/snapshot.py compares an output of the default run with its stored copy, by file
kind (tests/snapshot.py's docstring says what is compared of each kind): the numbers of CSV,
Parquet, JSON and text files within :data:`RTOL` and :data:`ATOL` (integers and text exactly),
figures by their description. Each function returns the differences as lines naming the file,
the column (or key path, or line), the row with its labels, and both values.
"""
from __future__ import annotations

import csv
import fnmatch
import io
import json
import math
import re
import struct
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


RTOL = 1e-9
ATOL = 1e-12
DIGESTS_OF_NUMBERS = {"*/cbc/calibrator.json": ("checksum",)}
"""JSON keys holding a SHA-256 of computed floats (a calibrator file's self-checksum covers beta
and its band): the digest changes with the last bits of those floats, so only its form (64 hex
digits) is compared; the floats themselves are compared within the tolerance."""
MAX_PER_FILE = 10
"""At most this many differences are listed per file (then a count of the rest)."""

NUMBER = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")
"""A number as Python, pandas and f-strings print it."""
FIELD_NUMBER = re.compile(NUMBER.pattern + r"|[+-]?(?:nan|inf)", re.IGNORECASE)
"""A CSV field that is a number (pandas writes NaN as an empty field, but also "nan" from str)."""
INTEGER = re.compile(r"[+-]?\d+")


# --- values ------------------------------------------------------------------------------------
def close(stored: float, now: float) -> bool:
    """``now`` equals ``stored`` within the tolerance (NaN equals NaN, infinities exactly)."""
    if math.isnan(stored) or math.isnan(now):
        return math.isnan(stored) and math.isnan(now)
    if math.isinf(stored) or math.isinf(now):
        return stored == now
    return abs(now - stored) <= ATOL + RTOL * abs(stored)


def same_number_text(stored: str, now: str, number: re.Pattern = NUMBER) -> bool:
    """Two printed values agree: the same text, or both numbers and not integers, and close."""
    if stored == now:
        return True
    if not (number.fullmatch(stored) and number.fullmatch(now)):
        return False
    if INTEGER.fullmatch(stored) or INTEGER.fullmatch(now):
        return False  # integers compare exactly
    return close(float(stored), float(now))


def shown(value, width: int = 80) -> str:
    """A value for a message: repr of text, shortened."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def capped(name: str, problems: list[str]) -> list[str]:
    """At most :data:`MAX_PER_FILE` problems of one file, then how many more."""
    if len(problems) <= MAX_PER_FILE:
        return problems
    return problems[:MAX_PER_FILE] + [f"{name}: ... and {len(problems) - MAX_PER_FILE} more"]


def shown_field(field: str) -> str:
    """A CSV field for a message: a number as written, text quoted."""
    return field if FIELD_NUMBER.fullmatch(field) else shown(field)


def row_label(names: list[str], values: list) -> str:
    """``(language='de', backbone='gpt-4o')`` from a row's label columns."""
    return "(" + ", ".join(f"{n}={shown(v, 40)}" for n, v in zip(names, values)) + ")"


# --- CSV ---------------------------------------------------------------------------------------
def csv_label_columns(header: list[str], rows: list[list[str]], most: int = 3) -> list[int]:
    """Indices of up to ``most`` columns holding text (no field a number) to name rows by; the
    first column if there is none."""
    text = [i for i in range(len(header))
            if not any(i < len(r) and FIELD_NUMBER.fullmatch(r[i]) for r in rows)]
    return text[:most] or [0]


def compare_csv(name: str, stored_text: str, now_text: str) -> list[str]:
    """Differences between two CSV files: header, row count, then every field."""
    stored = list(csv.reader(io.StringIO(stored_text)))
    now = list(csv.reader(io.StringIO(now_text)))
    if not stored or not now:
        return [] if stored == now else [f"{name}: one of the files is empty"]
    if stored[0] != now[0]:
        return [f"{name}: columns: stored {stored[0]} vs now {now[0]}"]
    header, stored, now = stored[0], stored[1:], now[1:]
    if len(stored) != len(now):
        return [f"{name}: {len(stored)} rows stored vs {len(now)} now"]
    labels = csv_label_columns(header, stored)
    problems = []
    for row, (s, n) in enumerate(zip(stored, now)):
        label = row_label([header[i] for i in labels], [s[i] for i in labels if i < len(s)])
        if len(s) != len(n):
            problems.append(f"{name}: row {row} {label}: {len(s)} fields stored vs {len(n)} now")
            continue
        for column, a, b in zip(header, s, n):
            if not same_number_text(a, b, FIELD_NUMBER):
                problems.append(f"{name}: column {column!r}, row {row} {label}: "
                                f"stored {shown_field(a)} vs now {shown_field(b)}")
    return capped(name, problems)


# --- Parquet -----------------------------------------------------------------------------------
def parquet_label_columns(table: pa.Table, most: int = 3) -> list[str]:
    """Up to ``most`` text or categorical columns to name rows by, else integer columns."""
    def text(t):
        return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t)
    names = [f.name for f in table.schema if text(f.type)]
    names = names or [f.name for f in table.schema if pa.types.is_integer(f.type)]
    return names[:most]


def differing_rows(stored: pa.ChunkedArray, now: pa.ChunkedArray) -> np.ndarray:
    """Row positions where two columns of one type and length differ (floating: beyond the
    tolerance, NaN equals NaN; nulls must match; anything else exactly)."""
    null_differs = (np.asarray(stored.is_null(), dtype=bool)
                    != np.asarray(now.is_null(), dtype=bool))
    if pa.types.is_floating(stored.type):
        a = stored.to_numpy(zero_copy_only=False).astype(float)
        b = now.to_numpy(zero_copy_only=False).astype(float)
        far = ~np.isclose(b, a, rtol=RTOL, atol=ATOL, equal_nan=True)
        return np.flatnonzero(null_differs | far)
    unequal = [x != y for x, y in zip(stored.to_pylist(), now.to_pylist())]
    return np.flatnonzero(null_differs | np.array(unequal, dtype=bool))


def categories(column: pa.ChunkedArray) -> list | None:
    """The dictionary (category order) of a dictionary-encoded column, else None."""
    if not pa.types.is_dictionary(column.type):
        return None
    return column.combine_chunks().dictionary.to_pylist()


def compare_parquet(name: str, stored_path: Path, now_path: Path) -> list[str]:
    """Differences between two Parquet files: columns, types, rows, categories, values."""
    stored, now = pq.read_table(stored_path), pq.read_table(now_path)
    if stored.column_names != now.column_names:
        return [f"{name}: columns: stored {stored.column_names} vs now {now.column_names}"]
    problems = [f"{name}: column {f.name!r}: type stored {f.type} vs now {g.type}"
                for f, g in zip(stored.schema, now.schema) if f.type != g.type]
    if stored.num_rows != now.num_rows:
        problems.append(f"{name}: {stored.num_rows} rows stored vs {now.num_rows} now")
    if problems:
        return problems
    labels = parquet_label_columns(stored)
    label_values = {c: stored.column(c).to_pylist() for c in labels}
    for column in stored.column_names:
        s, n = stored.column(column), now.column(column)
        if categories(s) != categories(n):
            problems.append(f"{name}: column {column!r}: categories stored {shown(categories(s))} "
                            f"vs now {shown(categories(n))}")
        for row in differing_rows(s, n):
            label = row_label(labels, [label_values[c][row] for c in labels])
            problems.append(f"{name}: column {column!r}, row {row} {label}: "
                            f"stored {shown(s[int(row)].as_py())} "
                            f"vs now {shown(n[int(row)].as_py())}")
    return capped(name, problems)


# --- JSON --------------------------------------------------------------------------------------
def compare_json_values(name: str, key: str, stored, now) -> list[str]:
    """Differences between two parsed JSON values at key path ``key`` (recursive)."""
    where = f"{name}: key {key or '(top)'}"
    if type(stored) is not type(now):
        return [f"{where}: stored {shown(stored)} ({type(stored).__name__}) vs now "
                f"{shown(now)} ({type(now).__name__})"]
    if isinstance(stored, dict):
        if list(stored) != list(now):
            return [f"{where}: keys stored {list(stored)} vs now {list(now)}"]
        return [p for k in stored
                for p in compare_json_values(name, f"{key}.{k}" if key else k, stored[k], now[k])]
    if isinstance(stored, list):
        if len(stored) != len(now):
            return [f"{where}: {len(stored)} items stored vs {len(now)} now"]
        return [p for i, (a, b) in enumerate(zip(stored, now))
                for p in compare_json_values(name, f"{key}[{i}]", a, b)]
    equal = close(stored, now) if isinstance(stored, float) else stored == now
    return [] if equal else [f"{where}: stored {shown(stored)} vs now {shown(now)}"]


def compare_json(name: str, stored_text: str, now_text: str) -> list[str]:
    """Differences between two JSON files (keys, order, types, values)."""
    stored, now = json.loads(stored_text), json.loads(now_text)
    for pattern, keys in DIGESTS_OF_NUMBERS.items():
        if fnmatch.fnmatch(name, pattern) and isinstance(stored, dict) and isinstance(now, dict):
            for key in keys:
                if all(re.fullmatch(r"[0-9a-f]{64}", str(d.get(key))) for d in (stored, now)):
                    stored[key] = now[key] = "<sha256>"
    return capped(name, compare_json_values(name, "", stored, now))


# --- text --------------------------------------------------------------------------------------
def compare_text(name: str, stored_text: str, now_text: str) -> list[str]:
    """Differences between two text files, line by line: the text around numbers exactly, the
    numbers within the tolerance (integers exactly)."""
    stored, now = stored_text.splitlines(), now_text.splitlines()
    if len(stored) != len(now):
        return [f"{name}: {len(stored)} lines stored vs {len(now)} now"]
    problems = []
    for line, (s, n) in enumerate(zip(stored, now), start=1):
        a, b = NUMBER.split(s), NUMBER.split(n)
        x, y = NUMBER.findall(s), NUMBER.findall(n)
        if a != b or len(x) != len(y):
            problems.append(f"{name}: line {line}: stored {shown(s, 200)} vs now {shown(n, 200)}")
        else:
            problems += [f"{name}: line {line}, number {i + 1}: stored {p} vs now {q}"
                         for i, (p, q) in enumerate(zip(x, y)) if not same_number_text(p, q)]
    return capped(name, problems)


# --- figures -----------------------------------------------------------------------------------
def describe_png(path: Path) -> dict:
    """Width, height, bit depth and colour type from a PNG's header (IHDR)."""
    head = Path(path).read_bytes()[:29]
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return {"kind": "png", "error": "not a PNG file"}
    width, height, depth, colour = struct.unpack(">IIBB", head[16:26])
    return {"kind": "png", "width": width, "height": height, "bit_depth": depth,
            "colour_type": colour}


def describe_svg(path: Path) -> dict:
    """An SVG's size, the texts drawn (in order) and its element count per tag."""
    text = Path(path).read_text()
    root = re.search(r"<svg\b[^>]*>", text)
    size = {k: re.search(rf'\b{k}="([^"]*)"', root.group(0))
            for k in ("width", "height", "viewBox")}
    return {"kind": "svg", "size": {k: m.group(1) for k, m in size.items() if m},
            "texts": re.findall(r"<!-- (.*?) -->", text, flags=re.S),
            "elements": dict(sorted(Counter(re.findall(r"<([A-Za-z][\w:.-]*)", text)).items()))}


DESCRIBE = {"png": describe_png, "svg": describe_svg}


def compare_description(name: str, stored: dict, now: dict) -> list[str]:
    """Differences between two figure descriptions, property by property."""
    return [f"{name}: {key}: stored {shown(stored.get(key), 200)} "
            f"vs now {shown(now.get(key), 200)}"
            for key in sorted(set(stored) | set(now)) if stored.get(key) != now.get(key)]
