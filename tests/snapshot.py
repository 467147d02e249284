"""A stored snapshot of the default configuration's outputs, compared by structure and value.

``tests/output_snapshot/`` holds what the default ``snakemake`` run writes under ``results/``
(except :data:`EXCLUDED`, which legitimately changes between runs):

* ``manifest.json``: every compared file with its kind, and for figures what is compared of them;
* ``results/<path>``: a verbatim copy of every table (CSV, Parquet), JSON and Markdown output.

``tests/test_output_snapshot.py`` reruns the workflow from empty and compares with :func:`compare`.
The promise it checks holds on any x86-64 machine: the same files; the same columns, column
types, JSON keys, labels, row order and text, exactly; integers (an integer-typed Parquet column,
a JSON int, a CSV field or a number in Markdown written without a decimal point or exponent)
exactly; other numbers within ``rtol`` :data:`RTOL` and ``atol`` :data:`ATOL`
(``|now - stored| <= ATOL + RTOL * |stored|``, NaN equals NaN). Floats are written with 17
significant digits, and another CPU's SIMD or BLAS kernels change the last of them, so
bytes are compared only between two runs on one machine (:func:`byte_differences`).

What is compared, by file kind:

* ``.csv``: parsed with :mod:`csv`; the header and every field are text, compared exactly unless
  both stored and new fields are numbers (then as above);
* ``.parquet``: column names and Arrow types, row count, the categories of dictionary columns,
  nulls, and values (floating columns within the tolerance, every other column exactly). The
  schema's metadata is not compared: it names the pandas and pyarrow versions;
* ``.json``: the same keys in the same order, list lengths, types and values, recursively;
* ``.md``, ``.txt``: line by line, the text between numbers exactly, the numbers as above;
* ``.png``: width, height, bit depth and colour type (pixels depend on font rasterising and
  anti-aliasing, which differ between FreeType and matplotlib builds);
* ``.svg``: the size, the sequence of texts drawn (matplotlib writes each as a comment: tick
  labels, titles, legends) and how many elements of each tag it holds; not coordinates (printed
  with 6 decimals, they move with the data's last bits and the layout's text extents) nor glyph
  outlines (FreeType's);
* any other file: its bytes.

Rows are counted from 0 below the header, as pandas counts them. A difference names the file, the
column (or JSON key path, or line), the row with its labels, and both values.

Store a new snapshot only when an output is meant to change, and say why in the commit message
(the command prints what changes, for the message)::

    python tests/snapshot.py --update                    # full run in a copy (~1 min)
    python tests/snapshot.py --update --results results  # an existing default run, made at the
                                                         # repository root with `snakemake`
    python tests/snapshot.py                             # compare only (a fresh run)
    python tests/snapshot.py --results results           # compare an existing run

The run is the README's: ``snakemake --cores 2`` at the root of a copy of the repository, so the
outputs name their inputs as ``data/...``. For a run made with ``--config data_dir=/abs/path`` pass
``--data-dir /abs/path``: that prefix is read as ``data`` in the run's text outputs.
"""
from __future__ import annotations

import argparse
import csv
import fnmatch
import hashlib
import io
import json
import math
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = REPO / "tests" / "output_snapshot"
RTOL = 1e-9
ATOL = 1e-12
EXCLUDED = (
    "*/logs/*",            # rule logs: timestamps
    "logs/*",
    "*/benchmarks/*",      # rule benchmarks: timings
    "benchmarks/*",
    "*/inputs.json",       # input files: absolute paths, sizes, checksums
    "index.html",          # the results page: built from the outputs compared here and checked
                           # number by number against them (tests/test_page_browser.py); its
                           # 0.9 MB of inlined Vega JavaScript is not ours to store
)
"""Glob patterns (relative to ``results/``) of outputs that are not compared."""
DIGESTS_OF_NUMBERS = {"*/cbc/calibrator.json": ("checksum",)}
"""JSON keys holding a SHA-256 of computed floats (a calibrator file's self-checksum covers beta
and its band): the digest changes with the last bits of those floats, so only its form (64 hex
digits) is compared; the floats themselves are compared within the tolerance."""
MAX_PER_FILE = 10
"""At most this many differences are listed per file (then a count of the rest)."""

KINDS = {".csv": "csv", ".parquet": "parquet", ".json": "json", ".md": "text", ".txt": "text",
         ".html": "text", ".png": "png", ".svg": "svg"}
"""File suffix -> how it is compared; any other suffix is compared as bytes."""
STORED_KINDS = ("csv", "parquet", "json", "text", "bytes")
"""Kinds whose files are copied into the snapshot (figures are described in the manifest)."""

NUMBER = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")
"""A number as Python, pandas and f-strings print it."""
FIELD_NUMBER = re.compile(NUMBER.pattern + r"|[+-]?(?:nan|inf)", re.IGNORECASE)
"""A CSV field that is a number (pandas writes NaN as an empty field, but also "nan" from str)."""
INTEGER = re.compile(r"[+-]?\d+")


# --- the run -----------------------------------------------------------------------------------
def copy_repository(target: Path) -> Path:
    """The repository's files (what git tracks, and new files it does not ignore) copied into
    ``target``: a fresh clone with the working tree's changes, without results or a venv."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)
    return target


def run_default(workdir: Path, cores: int = 2) -> Path:
    """``snakemake --cores 2`` from a copy of the repository in ``workdir`` (as the README runs
    the reproduction); returns its ``results`` folder."""
    root = copy_repository(Path(workdir) / "polyjudge")
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(cores)], cwd=root,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"snakemake failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return root / "results"


def compared_files(results: Path) -> list[str]:
    """Relative paths (sorted) of the files under ``results`` that are compared."""
    paths = (p.relative_to(results).as_posix() for p in Path(results).rglob("*") if p.is_file())
    return sorted(p for p in paths if not any(fnmatch.fnmatch(p, x) for x in EXCLUDED))


def kind_of(relative: str) -> str:
    """How a file is compared: one of :data:`KINDS`' values, or ``bytes``."""
    return KINDS.get(Path(relative).suffix.lower(), "bytes")


# --- byte identity on one machine --------------------------------------------------------------
def output_digests(results: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every compared file under ``results``."""
    return {p: hashlib.sha256((Path(results) / p).read_bytes()).hexdigest()
            for p in compared_files(results)}


def byte_differences(first: Path, second: Path) -> list[str]:
    """The compared files that are not byte-identical in two results folders (or not in both)."""
    a, b = output_digests(first), output_digests(second)
    return ([f"only in {first}: {p}" for p in a if p not in b]
            + [f"only in {second}: {p}" for p in b if p not in a]
            + [f"bytes differ: {p}" for p in a if p in b and a[p] != b[p]])


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
                            f"stored {shown(s[int(row)].as_py())} vs now {shown(n[int(row)].as_py())}")
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
    size = {k: re.search(rf'\b{k}="([^"]*)"', root.group(0)) for k in ("width", "height", "viewBox")}
    return {"kind": "svg", "size": {k: m.group(1) for k, m in size.items() if m},
            "texts": re.findall(r"<!-- (.*?) -->", text, flags=re.S),
            "elements": dict(sorted(Counter(re.findall(r"<([A-Za-z][\w:.-]*)", text)).items()))}


DESCRIBE = {"png": describe_png, "svg": describe_svg}


def compare_description(name: str, stored: dict, now: dict) -> list[str]:
    """Differences between two figure descriptions, property by property."""
    return [f"{name}: {key}: stored {shown(stored.get(key), 200)} vs now {shown(now.get(key), 200)}"
            for key in sorted(set(stored) | set(now)) if stored.get(key) != now.get(key)]


# --- the snapshot ------------------------------------------------------------------------------
def read_run_text(path: Path, data_dir: Path | None) -> str:
    """A text output of the run, with an absolute ``data_dir`` read as the default ``data``."""
    text = Path(path).read_text()
    return text.replace(str(Path(data_dir).resolve()), "data") if data_dir else text


def compare_file(relative: str, entry: dict, stored: Path, now: Path,
                 data_dir: Path | None = None) -> list[str]:
    """Differences of one output (``entry`` is its manifest entry, ``stored`` its copy)."""
    kind = entry["kind"]
    if kind in DESCRIBE:
        return compare_description(relative, entry, DESCRIBE[kind](now))
    if kind == "parquet":
        return compare_parquet(relative, stored, now)
    if kind == "bytes":
        return [] if stored.read_bytes() == now.read_bytes() else [f"{relative}: bytes differ"]
    by_kind = {"csv": compare_csv, "json": compare_json, "text": compare_text}[kind]
    return by_kind(relative, stored.read_text(), read_run_text(now, data_dir))


def compare(snapshot: Path, results: Path, data_dir: Path | None = None) -> list[str]:
    """Every difference between a stored snapshot and a results folder (empty if they agree)."""
    files = json.loads((Path(snapshot) / "manifest.json").read_text())["files"]
    present = set(compared_files(results))
    problems = [f"missing: {p} (in the snapshot, not in the run)" for p in files
                if p not in present]
    problems += [f"new: {p} (in the run, not in the snapshot)" for p in sorted(present)
                 if p not in files]
    for relative, entry in files.items():
        if relative in present:
            problems += compare_file(relative, entry, Path(snapshot) / "results" / relative,
                                     Path(results) / relative, data_dir)
    return problems


def store(results: Path, snapshot: Path = SNAPSHOT, data_dir: Path | None = None) -> dict:
    """Replace the snapshot in ``snapshot`` by the outputs in ``results``; returns the manifest."""
    snapshot = Path(snapshot)
    shutil.rmtree(snapshot / "results", ignore_errors=True)
    files = {}
    for relative in compared_files(results):
        kind = kind_of(relative)
        source, target = Path(results) / relative, snapshot / "results" / relative
        if kind in DESCRIBE:
            files[relative] = DESCRIBE[kind](source)
            continue
        files[relative] = {"kind": kind}
        target.parent.mkdir(parents=True, exist_ok=True)
        if kind in ("csv", "json", "text") and data_dir:
            target.write_text(read_run_text(source, data_dir))
        else:
            shutil.copyfile(source, target)
    manifest = {"note": "written by `python tests/snapshot.py --update`; see tests/snapshot.py",
                "files": files}
    (snapshot / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def stored_bytes_differing(snapshot: Path, results: Path) -> list[str]:
    """The stored copies whose bytes differ from the run's file (within the tolerance or not)."""
    copies = Path(snapshot) / "results"
    return [p for p in compared_files(copies)
            if (Path(results) / p).is_file()
            and (copies / p).read_bytes() != (Path(results) / p).read_bytes()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true",
                        help=f"store the run as the new snapshot in {SNAPSHOT.relative_to(REPO)}")
    parser.add_argument("--results", type=Path,
                        help="an existing results folder of a default run instead of a fresh run")
    parser.add_argument("--data-dir", type=Path,
                        help="the absolute data_dir the existing run was made with, if any")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = args.results or run_default(Path(tmp))
        if not (SNAPSHOT / "manifest.json").exists():
            problems = [f"no snapshot stored in {SNAPSHOT} yet"]
        else:
            problems = compare(SNAPSHOT, results, args.data_dir)
        print("\n".join(problems) or f"all {len(compared_files(results))} outputs agree with the "
              f"snapshot (rtol {RTOL:g}, atol {ATOL:g}; structure and text exactly)")
        if args.update:
            manifest = store(results, SNAPSHOT, args.data_dir)
            print(f"stored {len(manifest['files'])} outputs in {SNAPSHOT} (the lines above are what"
                  " changed: say why in the commit message)")
            return 0
        if not (SNAPSHOT / "manifest.json").exists():
            return 1
        differing = stored_bytes_differing(SNAPSHOT, results)
        print(f"{len(differing)} of {len(compared_files(SNAPSHOT / 'results'))} stored copies "
              f"differ in bytes from this run" + (": " + ", ".join(differing) if differing else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
