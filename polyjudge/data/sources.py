"""Table sources: one table read from many files, with fields taken from their paths.

A panel's ``runs``, ``requirements`` or ``verdicts`` (and :func:`read_runs`' ``source``) may be

* a path to a file or a folder (every CSV, Parquet, JSON Lines and JSON file under it), or a glob
  (``judges/*/*.jsonl``, ``**`` for any depth), or a list of those;
* a mapping ``{path: <path | glob | list>, template: "judges/{backbone}/{language}.jsonl"}``
  (fields from the path: each ``{name}`` matches one folder or part of a file name, from the end
  of the path), ``{path: <folder>, partitioning: hive}`` (fields from ``key=value`` folders),
  optionally ``format: csv | parquet | jsonl | json`` when the suffix does not tell and
  ``path_fields: check | path | record`` (a field the path gives that the records hold too:
  :mod:`polyjudge.data.path_fields`); ``path`` may be left out with a template (the template
  with ``*`` for its fields is the glob); ``constants: {language: bn}`` sets a field for every
  row, as a path field that every file gives alike;
* a mapping whose ``format`` names another evaluation tool (``alpaca_eval``, ...), read by that
  tool's reader (:mod:`polyjudge.data.tools`);
* a mapping with ``inspect`` (Inspect AI logs: :mod:`polyjudge.data.inspect_logs`);
* a list holding mappings: several sources read as one table, in order (one file per language
  from a tool, each with its ``constants``); each entry is a source of its own, and a file
  named by two entries is refused.

Files are read in sorted order, each in batches (CSV and Parquet as
:func:`polyjudge.data.streaming.iter_table` reads them; JSON Lines and JSON by
:mod:`polyjudge.data.streaming.json_batches`, nested fields by dotted paths in ``columns``), as one
table. Rows are indexed by their position in the whole source; :meth:`SourceReader.locate` names
each by file and line, so every message of the checks names the files (two files giving the same
run: both, with their lines). A plain path to one CSV or Parquet file is read exactly as before.
"""
from __future__ import annotations

import glob
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from . import column_names, io
from .checksums import verify as verify_checksum
from .errors import InputError, say
from .formats import SPREADSHEET_SUFFIXES, is_spreadsheet, spreadsheet_error
from .path_fields import PathFields, hive_fields, template_fields
from .streaming import BATCH_ROWS, iter_table, scan_runs
from .streaming.checks import SOURCE_CAPTION
from .streaming.codes import stripped_labels
from .streaming.json_batches import iter_json_array, iter_json_lines, record_lines
from .source_spec import (FORMATS, GLOB, SOURCE_KEYS, SUFFIXES, describe, is_inspect,  # noqa: F401
                          is_several, is_single_file, spec_of)
from .tools import is_tool, read_tool

# the fields a JSON record must have / may have, per table (standard names)
RUN_FIELDS = (("task", "language", "backbone", "score"), ("framework", "stratum"))
REQUIREMENT_FIELDS = (("task", "language", "backbone", "requirement_id", "category", "satisfied"),
                      ("framework", "response_status"))
VERDICT_FIELDS = (("item", "subset", "judge", "condition", "order", "verdict", "gold"),
                  ("probe_language_1", "probe_language_2"))
CAPTION = SOURCE_CAPTION
ORDER = {name: i for i, name in enumerate(io.RUN_COLUMNS + ["requirement_id", "category",
                                                            "satisfied"])}


def source_files(value, base_dir=None) -> list[Path]:
    """The sorted files a source names (paths under ``base_dir``); a pattern that matches no
    file, a missing path or an empty folder stops with its name."""
    spec = spec_of(value)
    base, found = Path(base_dir or "."), set()
    for pattern in spec["path"]:
        full = base / pattern
        if GLOB.search(pattern):
            matched = [Path(p) for p in glob.glob(str(full), recursive=True)]
            matched = [p for p in matched if p.is_file() and not p.name.startswith(("_", "."))]
            problem = "matches no file"
        elif full.is_dir():
            matched = [p for p in full.rglob("*") if p.is_file() and _table_file(
                p.relative_to(full), spec.get("format"))]
            problem = "is a folder without CSV, Parquet, JSON Lines or JSON files"
            if any(p.suffix.lower() in SPREADSHEET_SUFFIXES for p in full.rglob("*")):
                problem += " (it has spreadsheet workbooks, which are not read: export them " \
                           "as CSV)"
        else:
            matched, problem = ([full], "") if full.is_file() else ([], "file or folder not found")
        if not matched:
            raise not_found(full, problem, base_dir)
        found.update(matched)
    return sorted(found, key=str)


def not_found(full: Path, problem: str, base_dir=None) -> InputError:
    """A source path that names nothing, with where it was looked for (data_dir resolved)."""
    if base_dir is None:  # the console script and the API: paths are the user's own
        where = f" ({say('paths')}): fix the path"
    else:
        where = (f"; relative paths are read under data_dir, here {Path(base_dir).resolve()}: "
                 "fix the path or set data_dir to the folder that holds it")
    return InputError(full, f"{problem} (looked for {full.resolve()})",
                      "a file, a folder of tables or a glob matching files" + where)


def _table_file(relative: Path, format: str | None) -> bool:
    hidden = any(part.startswith((".", "_")) for part in relative.parts)  # as pyarrow.dataset
    return not hidden and (format is not None or relative.suffix.lower() in SUFFIXES)


class SourceReader:
    """A table source read as one table: call it for a fresh pass of standard-named batches
    (rows indexed by their position in the source); :meth:`locate` names rows by file:line.

    ``fields``: (required, optional) standard names a JSON record has (CSV and Parquet files
    give all their columns); ``nullable``: fields a record may leave empty (missing scores).
    """

    def __init__(self, files, value, mapping: dict | None = None, *, fields=RUN_FIELDS,
                 text=io.IDENTIFIERS, nullable=(), batch_rows: int = BATCH_ROWS):
        self.spec = spec_of(value)
        self.label = describe(value)
        self.files = [Path(f) for f in files]
        if not self.files:
            raise InputError(self.label, "names no file", "at least one table file")
        self.mapping, self.rename = dict(mapping or {}), io.renaming(mapping)
        self.fields, self.text, self.nullable = fields, text, tuple(nullable)
        self.batch_rows = batch_rows
        self.path_fields = [self._path_fields(path) for path in self.files]  # before reading
        self.spans: list[tuple[int, int, Path, str]] = []

    def _path_fields(self, path: Path) -> dict:
        return {**(self.spec.get("constants") or {}), **self._from_path(path)}

    def _from_path(self, path: Path) -> dict:
        template = self.spec.get("template")
        if template:
            found = template_fields(template, path)
            if found is None:
                raise InputError(path, f"does not fit the template '{template}'",
                                 "every file of the source named as the template says (its "
                                 "{fields} stand for folder or file name parts)")
            return found
        if self.spec.get("partitioning") == "hive":
            found = hive_fields(path)
            if not found:
                raise InputError(path, "has no key=value folder above it (Hive partitioning)",
                                 "files in folders such as backbone=gpt-4o/language=en/")
            return found
        return {}

    def kind(self, path: Path) -> str:
        kind = self.spec.get("format") or SUFFIXES.get(path.suffix.lower())
        if kind is None and is_spreadsheet(path):
            raise spreadsheet_error(path)
        if kind is None:
            raise InputError(path, f"has the unknown suffix '{path.suffix}'",
                             f"one of {sorted(SUFFIXES)}, or the source's `format`")
        if kind == "json" and not self.spec.get("format"):  # .json holding JSON Lines
            with open(path, "rb") as handle:
                head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
            kind = "jsonl" if head.startswith(b"{") else "json"
        return kind

    def __call__(self):
        """One pass over the files: batches in the standard column order."""
        self.spans = []
        offset, first = 0, None
        for path, found in zip(self.files, self.path_fields):
            kind, start, checked = self.kind(path), offset, False
            for batch in self._batches(path, kind, found):
                if not checked:
                    first = self._same_columns(path, batch, first)
                    checked = True
                batch = batch[sorted(batch.columns, key=lambda c: ORDER.get(c, len(ORDER)))]
                batch.index = pd.RangeIndex(offset, offset + len(batch))
                offset += len(batch)
                yield batch
            self.spans.append((start, offset, path, kind))

    def _batches(self, path: Path, kind: str, found: dict):
        from_path = {self.rename.get(name, name): value for name, value in found.items()}
        in_path = {self.rename.get(name, name): name for name in found}  # as the path names it
        how = (f"the template '{self.spec['template']}'" if self.spec.get("template")
               else "its key=value folders" if self.spec.get("partitioning")
               else "the source's `constants`")
        fields = PathFields(path, kind, from_path, in_path, self.mapping,
                            self.spec.get("path_fields") or "check", how)
        if kind in ("csv", "parquet"):
            batches = iter_table(path, self.mapping, self.text, self.batch_rows,
                                 parquet=kind == "parquet")
        else:
            if not path.is_file():
                raise InputError(path, "file not found", "an existing JSON Lines or JSON file")
            verify_checksum(path)
            required, optional = self.fields
            wanted = {name: self.mapping.get(name, name) for name in (*required, *optional)
                      if name not in from_path}
            held = fields.record_fields()  # read where records have them, to compare
            reader = iter_json_lines if kind == "jsonl" else iter_json_array
            batches = reader(path, {**wanted, **held}, optional, (*self.nullable, *held),
                             self.batch_rows)
        # the tables' readers strip labels themselves; the path's fields are stripped by apply
        text = [] if kind in ("csv", "parquet") else [c for c in self.text if c not in from_path]
        for batch in batches:
            for name in (c for c in text if c in batch.columns):
                batch[name] = stripped_labels(batch[name])
            batch = fields.apply(batch)
            if not fields.disagree:  # else read on only to count the rows that disagree
                yield batch
        fields.raise_disagreement()

    def _same_columns(self, path: Path, batch: pd.DataFrame, first):
        columns = sorted(batch.columns)
        if first is not None and columns != first[1]:
            own = [column_names.file_columns(names, self.mapping) for names in (columns, first[1])]
            raise InputError(path, f"has the columns {own[0]}, but {first[0]} has {own[1]}",
                             "the same columns (fields) in every file of the source")
        return first or (path, columns)

    def locate(self, index) -> list[str]:
        """``file:line`` of rows (positions in the source; after a full pass)."""
        return _locator(tuple(self.spans))(index)

    def frame(self) -> pd.DataFrame:
        """The whole table in memory (identifiers as text, as :func:`io.read_table` gives
        them); row messages of the checks on it name file and line (``attrs``)."""
        parts = list(self())
        frame = pd.concat(parts) if parts else pd.DataFrame()
        for name in frame.columns:
            if isinstance(frame[name].dtype, pd.CategoricalDtype):
                frame[name] = frame[name].astype(object).where(frame[name].notna())
        frame = frame.reset_index(drop=True)
        frame.attrs["row_labels"] = _locator(tuple(self.spans))
        frame.attrs["rows_caption"] = CAPTION
        return frame


class Labels(list):
    """Row labels with the caption that explains them."""
    caption = CAPTION


def _locator(spans: tuple):
    """A function: row positions -> ``file:line`` labels, files relative to the folder all the
    source's files are in (named in the caption). A plain function, so pandas' attrs carry it
    without copying the spans."""
    starts = np.array([span[0] for span in spans])
    paths = [str(span[2]) for span in spans]
    common = Path(os.path.commonpath(paths)) if paths else Path(".")
    if len(paths) == 1 or (paths and common == Path(paths[0])):
        common = common.parent

    def locate(index) -> list[str]:
        labels = Labels()
        labels.caption = CAPTION.replace("file:line;", f"file:line, files under {common};")
        for row in np.asarray(index, dtype=np.int64):
            start, _, path, kind = spans[int(np.searchsorted(starts, row, side="right")) - 1]
            number = int(row - start)
            line = (record_lines(path, [number])[0] if kind == "jsonl"
                    else number + (2 if kind in ("csv", "parquet") else 1))
            labels.append(f"{Path(path).relative_to(common).as_posix()}:{line}")
        return labels
    return locate


# --- what the workflow and the API call ----------------------------------------------------------

def source_inputs(value, base_dir=None) -> str | list[str]:
    """The files of a source for Snakemake's inputs: one path for a single CSV or Parquet file
    (as before), else the sorted list (a pattern matching nothing stops here)."""
    if is_several(value):
        return _several_files(value, base_dir)
    if is_inspect(value):
        from .inspect_logs import inspect_log_files
        return [str(p) for p in inspect_log_files(value["inspect"], base_dir=base_dir)]
    if is_single_file(value, base_dir):
        full = Path(base_dir or ".") / value
        if not full.exists():
            raise not_found(full, "file or folder not found", base_dir)
        return str(full)
    return [str(p) for p in source_files(value, base_dir)]


def _several_files(value, base_dir=None) -> list[str]:
    """The files of each source of a list, in order; a file two of them name is refused."""
    files, seen = [], {}
    for number, part in enumerate(value, 1):
        found = source_inputs(part, base_dir)
        for path in [found] if isinstance(found, str) else found:
            if path in seen:
                raise InputError(path, f"is named by sources {seen[path]} and {number} of the "
                                 "list", "each file in one source of the list")
            seen[path] = number
            files.append(path)
    return files


def read_source(value, files, mapping: dict | None = None, *, fields=RUN_FIELDS,
                text=io.IDENTIFIERS, missing: str = "error", base_dir=None,
                **options) -> pd.DataFrame:
    """A whole table from a source whose files are known (Snakemake's inputs): requirement and
    verdict tables, run tables checked in memory. ``options``: an Inspect source's reader's.
    ``base_dir``: where relative paths are (data_dir), for a list of sources, whose entries'
    files are listed again to read each entry as its own source."""
    if is_several(value):
        parts = [read_source(part, source_inputs(part, base_dir), mapping, fields=fields,
                             text=text, missing=missing, **options) for part in value]
        return pd.concat(parts, ignore_index=True)
    if is_inspect(value):
        from .inspect_logs import read_inspect_logs
        return read_inspect_logs(**{**value, "inspect": list(files), **options}, missing=missing)
    if is_tool(value):
        return read_tool(value, [files] if isinstance(files, (str, Path)) else files,
                         table=options.get("table") or "runs", missing=missing)
    if isinstance(files, (str, Path)) and is_single_file(files):
        return io.read_table(files, mapping=mapping, text=text)
    nullable = ("score",) if missing == "omit" else ()
    return SourceReader(files, value, mapping, fields=fields, text=text,
                        nullable=nullable).frame()


def scan_source(value, files, mapping: dict | None = None, *, score_range=(0.0, 100.0),
                missing: str = "error", runs_out=None, batch_rows: int = BATCH_ROWS,
                base_dir=None):
    """Stream a run-table source through the checks:
    :class:`~polyjudge.data.streaming.RunStats` (a list of sources, an Inspect or a tool
    source: read in memory first)."""
    if is_several(value) or is_inspect(value) or is_tool(value):
        frame = read_source(value, files, mapping, missing=missing, table="runs",
                            base_dir=base_dir)
        frame = frame.reset_index(drop=True)
        return scan_runs(lambda: [frame], describe(value), score_range, missing, runs_out)
    if isinstance(files, (str, Path)) and is_single_file(files):
        return scan_runs(lambda: iter_table(files, mapping, batch_rows=batch_rows), files,
                         score_range, missing, runs_out, mapping=mapping or {})
    reader = SourceReader(files, value, mapping, nullable=("score",) if missing == "omit"
                          else (), batch_rows=batch_rows)
    return scan_runs(reader, reader.label, score_range, missing, runs_out, locate=reader.locate,
                     mapping=mapping or {})


def read_runs(source, columns: dict | None = None, *, score_range=None, missing: str = "error",
              template: str | None = None, partitioning: str | None = None,
              format: str | None = None, path_fields: str | None = None, base_dir=None,
              batch_rows: int = BATCH_ROWS) -> pd.DataFrame:
    """Read and validate a run table from files: the workflow's ingest, as a DataFrame.

    ``source``: a file, folder, glob or list of them, or a mapping (``path``, ``template``,
    ``partitioning``, ``format``, ``path_fields``; or ``inspect`` and the options of
    :func:`polyjudge.data.inspect_logs.read_inspect_logs`); relative paths are relative to
    ``base_dir`` (default: the working directory). ``template`` / ``partitioning`` /
    ``format`` / ``path_fields``: the same as the mapping's keys; ``path_fields`` ("check",
    the default; "path"; "record") says what to do where a record holds a field its path also
    gives (:mod:`polyjudge.data.path_fields`): stop where they differ, or trust one side.
    ``columns``: standard name -> your column name,
    or a dotted path in JSON records (``{"score": "result.score"}``). The files are streamed in
    batches through the same checks as the workflow's ingest (the same messages, naming file and
    line), and the validated runs are returned: task, language, backbone, framework, score
    [, stratum], with scores left out where missing and ``missing="omit"``; pass it to
    :func:`polyjudge.calibrate` and the other functions as it is.
    """
    extra = {k: v for k, v in (("template", template), ("partitioning", partitioning),
                               ("format", format), ("path_fields", path_fields))
             if v is not None}
    if extra:
        source = {**(source if isinstance(source, Mapping) else {"path": source}), **extra}
    files = source_inputs(source, base_dir)
    with tempfile.TemporaryDirectory(prefix="polyjudge-runs-") as tmp:
        out = Path(tmp) / "runs.parquet"
        scan_source(source, files, columns, score_range=score_range, missing=missing,
                    runs_out=out, batch_rows=batch_rows, base_dir=base_dir)
        return pd.read_parquet(out)
