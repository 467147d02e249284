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
The comparisons of each kind are in tests/snapshot_comparisons.py.

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
import fnmatch
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# the comparisons by file kind, importable from here as before
from snapshot_comparisons import (  # noqa: F401
    ATOL, DESCRIBE, DIGESTS_OF_NUMBERS, FIELD_NUMBER, INTEGER, MAX_PER_FILE, NUMBER, RTOL, capped,
    categories, close, compare_csv, compare_description, compare_json, compare_json_values,
    compare_parquet, compare_text, csv_label_columns, describe_png, describe_svg, differing_rows,
    parquet_label_columns, row_label, same_number_text, shown, shown_field)


REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = REPO / "tests" / "output_snapshot"
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

KINDS = {".csv": "csv", ".parquet": "parquet", ".json": "json", ".md": "text", ".txt": "text",
         ".html": "text", ".png": "png", ".svg": "svg"}
"""File suffix -> how it is compared; any other suffix is compared as bytes."""
STORED_KINDS = ("csv", "parquet", "json", "text", "bytes")
"""Kinds whose files are copied into the snapshot (figures are described in the manifest)."""


# --- the run -----------------------------------------------------------------------------------
def copy_repository(target: Path) -> Path:
    """The repository's files (what git tracks, and new files it does not ignore) copied into
    ``target``: a fresh clone with the working tree's changes, without results or a venv."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
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
            print(f"stored {len(manifest['files'])} outputs in {SNAPSHOT} (the lines above are "
                  "what changed: say why in the commit message)")
            return 0
        if not (SNAPSHOT / "manifest.json").exists():
            return 1
        differing = stored_bytes_differing(SNAPSHOT, results)
        print(f"{len(differing)} of {len(compared_files(SNAPSHOT / 'results'))} stored copies "
              f"differ in bytes from this run"
              + (": " + ", ".join(differing) if differing else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
