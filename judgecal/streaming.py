"""Streaming ingest: a run table of any length in bounded memory.

The file is read in batches (CSV: pandas' chunked C reader with the options of
:func:`judgecal.io.read_table`, so cells parse exactly as there; Parquet: pyarrow's
``ParquetFile.iter_batches``). Each batch is checked row by row with the checks of
:func:`judgecal.io.validate_runs`, its identifiers are mapped to integer codes (one growing
dictionary per axis) and its scores are added to per-cell sufficient statistics:

* ``n[t, l, b]`` runs and ``sum[t, l, b]`` of scores: the task-level tensor (framework means),
  summed in file order, so the cell values are bit-identical to :func:`judgecal.io.build_panel`;
* ``n[t, l, f]``, ``n[l, b, f]``, the per-framework sums and the sum of squares: the R^2 of
  the run-level models (:func:`judgecal.estimator.r_squared_from_stats`);
* a one-byte counter per (task, language, backbone, framework) key: duplicate runs.

Memory is that of these arrays (about the tensor's size, plus one byte per possible run), not
of the rows. Errors are the ones :func:`judgecal.io.validate_runs` and
:func:`judgecal.io.build_panel` raise, reported after the pass in the same order, with the same
counts and the same first five offending rows (file row numbers). Duplicate keys are found by
the counters; a second pass over the file collects their rows, only when there are some.
The validated runs can be written on the way (``runs_out``, Parquet, one row group per batch).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from . import io
from .io import IDENTIFIERS, RUN_KEYS, InputError
from .panel import Panel

BATCH_ROWS = 1 << 19
SHOWN = 5  # offending rows shown in a message, as InputError does


def iter_table(path, mapping: dict | None = None, text: tuple[str, ...] = IDENTIFIERS,
               batch_rows: int = BATCH_ROWS) -> Iterator[pd.DataFrame]:
    """Batches of a CSV or Parquet table, standard column names, as :func:`io.read_table` reads it.

    Each batch is indexed by the data row number (0 = first row under the header). Identifier
    columns are categoricals of their text, stripped, missing = NaN (read_table gives the same
    labels as strings).
    """
    path, rename = io.input_file(path, mapping)
    try:
        if path.suffix == ".parquet":
            batches = _parquet_batches(path, rename, text, batch_rows)
        else:
            options = io.csv_options(path, rename, text, str)
            batches = _csv_batches(path, options, batch_rows)
        offset = 0
        for batch in batches:
            batch.index = pd.RangeIndex(offset, offset + len(batch))
            offset += len(batch)
            for name in (c for c in text if c in batch.columns):
                batch[name] = _stripped_labels(batch[name])
            yield batch
    except InputError:
        raise
    except Exception as error:  # the reader's own message says what went wrong in the file
        raise InputError(path, f"cannot be read as a table ({error})", "a CSV or Parquet table")


def _csv_batches(path: Path, options: dict, batch_rows: int):
    found = False
    with pd.read_csv(path, **options, chunksize=batch_rows) as reader:
        for batch in reader:
            found = True
            yield batch
    if not found:  # a header without rows: one empty batch with the columns
        yield pd.DataFrame({name: pd.Series(dtype=object) for name in options["names"]})


def _parquet_batches(path: Path, rename: dict, text, batch_rows: int):
    file_names = pq.read_schema(path).names
    names = [rename.get(str(c).strip(), str(c).strip()) for c in file_names]
    # identifier columns stored as text are read as dictionaries: each label becomes text once
    handle = pq.ParquetFile(path, read_dictionary=[c for c, name in zip(file_names, names)
                                                  if name in text])
    io._check_unique(path, names)
    found = False
    for batch in handle.iter_batches(batch_size=batch_rows):
        found = True
        columns = {}
        for name, column in zip(names, batch.columns):
            if name in text and not pa.types.is_dictionary(column.type):
                column = column.dictionary_encode()  # only the distinct labels become text
            columns[name] = column.to_pandas()
        yield pd.DataFrame(columns)
    if not found:
        yield handle.schema_arrow.empty_table().rename_columns(names).to_pandas()


def _stripped_labels(column: pd.Series) -> pd.Series:
    """Labels as text, surrounding spaces stripped (categorical; NaN stays missing)."""
    column = column.astype("category") if column.dtype != "category" else column
    stripped = pd.Index([str(c).strip() for c in column.cat.categories])
    codes = column.cat.codes.to_numpy()
    if stripped.is_unique:
        labels = pd.Index(stripped, dtype=object)
    else:
        remap, labels = pd.factorize(stripped)
        codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
    return pd.Series(pd.Categorical.from_codes(codes, labels), index=column.index,
                     name=column.name)


class _Axis:
    """A growing dictionary label -> integer code (first appearance order)."""

    def __init__(self):
        self.codes: dict[str, int] = {}
        self.labels: list[str] = []

    def encode(self, column: pd.Series) -> np.ndarray:
        """Global codes of a categorical column (-1 where missing)."""
        lookup = np.empty(len(column.cat.categories) + 1, dtype=np.int64)
        lookup[-1] = -1
        for i, label in enumerate(column.cat.categories):
            code = self.codes.get(label)
            if code is None:
                code = self.codes[label] = len(self.labels)
                self.labels.append(label)
            lookup[i] = code
        return lookup[column.cat.codes.to_numpy()]


def _cells(flat: np.ndarray):
    """The cells a batch touches and each row's position among them: a contiguous range when
    the keys are close (a file sorted by task; no sort needed), else the distinct keys."""
    low, high = int(flat.min()), int(flat.max())
    if high - low < 4 * len(flat) + 4096:
        return slice(low, high + 1), flat - low, high - low + 1
    cells, inverse = np.unique(flat, return_inverse=True)
    return cells, inverse, len(cells)


def _grown(array: np.ndarray, shape: tuple) -> np.ndarray:
    """``array`` in the corner of a zero array of ``shape`` (no copy when the shape holds).

    When only the first (task) axis grows, the array is resized in place (``realloc``: no
    second copy at the peak; the new tasks are zero-filled); the caller holds no views of it.
    """
    shape = tuple(shape)
    if array.shape == shape:
        return array
    if array.shape[1:] == shape[1:] and array.flags.owndata and array.flags.c_contiguous:
        array.resize(shape, refcheck=False)
        return array
    out = np.zeros(shape, dtype=array.dtype)
    out[tuple(slice(0, n) for n in array.shape)] = array
    return out


def _capacity(current: int, needed: int) -> int:
    return current if needed <= current else max(needed, current + current // 4 + 4)


@dataclass
class RunStats:
    """Sufficient statistics of a validated run table (axes in first-appearance code order).

    ``n_tlb``/``sum_tlb``: runs and score sums per task x language x backbone cell;
    ``n_tlf``/``n_lbf``: runs per task x language x framework and language x backbone x framework;
    ``sum_f``: score sums per framework; ``shift``: a constant subtracted from every score before
    ``sum_sq`` (the sum of squares, kept accurate); ``low``/``high``: score range.
    """

    labels: dict[str, list[str]]
    n_tlb: np.ndarray
    sum_tlb: np.ndarray
    n_tlf: np.ndarray
    n_lbf: np.ndarray
    sum_f: np.ndarray
    sum_sq: float
    shift: float
    low: float
    high: float
    strata: list | None
    n_runs: int
    source: object

    def panel(self, languages=None, backbones=None, allow_missing_cells: bool = False) -> Panel:
        """The task-level panel, exactly as :func:`io.build_panel` builds it from the runs."""
        picks, labels = self._order(languages, backbones)
        n = self.n_tlb[np.ix_(*picks)]
        total = self.sum_tlb[np.ix_(*picks)]

        def strata():
            if self.strata is None:
                return None
            first, mixed = self.strata
            if mixed:
                raise io.mixed_strata_error(self.source, sorted(mixed)[:5])
            return tuple(first[i] for i in picks[0])

        return io.panel_from_sums(n, total, labels, self.source, allow_missing_cells, strata)

    def _order(self, languages, backbones):
        present = {"task": self.n_tlb.sum(axis=(1, 2)) > 0,
                   "language": self.n_tlb.sum(axis=(0, 2)) > 0,
                   "backbone": self.n_tlb.sum(axis=(0, 1)) > 0}
        picks, labels = [], []
        for axis, wanted in (("task", None), ("language", languages), ("backbone", backbones)):
            names = [self.labels[axis][i] for i in np.flatnonzero(present[axis])]
            order = io.order_labels(names, wanted, axis, self.source)
            code = {label: i for i, label in enumerate(self.labels[axis])}
            picks.append(np.array([code[label] for label in order], dtype=np.int64))
            labels.append(order)
        return picks, labels

    def model_stats(self) -> dict:
        """Arguments of :func:`judgecal.estimator.r_squared_from_stats` (frameworks present)."""
        used = self.n_tlf.sum(axis=(0, 1)) > 0
        return dict(n_tlb=self.n_tlb, sum_tlb=self.sum_tlb, n_tlf=self.n_tlf[..., used],
                    n_lbf=self.n_lbf[..., used], sum_f=self.sum_f[used], sum_sq=self.sum_sq,
                    shift=self.shift, spread=(self.low, self.high))


class RunScanner:
    """One pass over run-table batches: checks, codes, sufficient statistics (see module doc)."""

    def __init__(self, source, score_range=(0.0, 100.0), missing: str = "error",
                 runs_out=None):
        if missing not in io.MISSING_POLICIES:
            raise InputError(source, f"unknown missing-score policy {missing!r}",
                             f"one of {io.MISSING_POLICIES}")
        self.source, self.score_range, self.missing = source, score_range, missing
        self.axes = {key: _Axis() for key in RUN_KEYS}
        self.strata_axis = _Axis()
        self.rows = 0
        self.columns, self.absent = None, []
        self.failures: dict[str, list] = {}  # check -> [count, shown rows]
        self.dtypes: dict[str, set] = {}  # per column, the dtypes its batches were read as
        self.duplicates = False
        self.seen = np.zeros((0, 0, 0, 0), dtype=np.uint8)
        self.n_tlb = np.zeros((0, 0, 0), dtype=np.int64)
        self.sum_tlb = np.zeros((0, 0, 0))
        self.sum_f = np.zeros(0)
        self.first_stratum = np.zeros(0, dtype=np.int64)  # -2 = no run yet, -1 = NaN
        self.first_valid_stratum = np.zeros(0, dtype=np.int64)
        self.mixed: set[int] = set()
        self.sum_sq, self.shift, self.low, self.high = 0.0, None, np.inf, -np.inf
        self.n_runs = 0
        self.runs_out, self.writer = runs_out, None

    # -- the pass -------------------------------------------------------------------------------

    def add(self, batch: pd.DataFrame) -> None:
        batch = io.with_single_framework(batch)
        if self.columns is None:
            self.columns = list(batch.columns)
            self.absent = [c for c in RUN_KEYS + ["score"] if c not in batch.columns]
            self.has_strata = "stratum" in batch.columns
        if self.absent:  # raised after the pass: a reading error later in the file comes first
            self._close_writer(discard=True)
            return
        for name, dtype in batch.dtypes.items():
            self.dtypes.setdefault(name, set()).add(dtype)
        if batch.empty:
            return
        self.rows += len(batch)
        keyed = np.ones(len(batch), dtype=bool)
        codes = {}
        for key in RUN_KEYS:
            labels = _stripped_labels(batch[key])
            # io.empty_labels on stripped labels: missing (code -1, the last entry) or ""
            blank = np.append(np.asarray(labels.cat.categories, dtype=object) == "", True)
            empty = blank[labels.cat.codes.to_numpy()]
            self._fail(f"empty:{key}", empty, batch)
            codes[key] = self.axes[key].encode(labels)
            keyed &= ~empty
        score, masks = io.score_masks(batch["score"], self.score_range)
        for check, mask in masks.items():
            if check != "nan" or self.missing == "error":
                self._fail(check, mask.to_numpy(), batch)
        self._grow()
        t, l, b, f = (codes[key] for key in RUN_KEYS)
        # duplicates: a saturating counter per key, over every row with its keys
        flat4 = np.ravel_multi_index((t[keyed], l[keyed], b[keyed], f[keyed]), self.seen.shape)
        if len(flat4):
            cells, inverse, n_cells = _cells(flat4)
            seen = self.seen.reshape(-1)
            before = seen[cells]
            after = (before & 3) + np.bincount(inverse, minlength=n_cells)
            self.duplicates |= bool((after > 1).any())
            seen[cells] = np.minimum(after, 2).astype(np.uint8) | (before & 4)
        if self.failures or self.duplicates:
            self._close_writer(discard=True)
            return  # the run stops after the pass: skip the statistics
        good = keyed & ~masks["nan"].to_numpy()
        y = score.to_numpy(float)[good]
        t, l, b, f = t[good], l[good], b[good], f[good]
        self._accumulate(t, l, b, f, y)
        if self.has_strata:
            self._strata(batch["stratum"], t, good)
        if self.runs_out is not None and len(y):
            self._write(t, l, b, f, y, batch, good)

    def _fail(self, check: str, mask: np.ndarray, batch: pd.DataFrame) -> None:
        if not mask.any():
            return
        entry = self.failures.setdefault(check, [0, []])
        entry[0] += int(mask.sum())  # messages give the total and the first rows
        shown = sum(len(rows) for rows in entry[1])
        if shown < SHOWN:
            entry[1].append(batch.loc[mask].head(SHOWN - shown))

    def _grow(self) -> None:
        sizes = [len(self.axes[key].labels) for key in RUN_KEYS]
        shape = tuple(_capacity(c, n) for c, n in zip(self.seen.shape, sizes))
        if shape == self.seen.shape:
            return
        # the counter's 2 bit-planes: bit 0-1 count (0, 1, 2 = more), bit 2 = a scored run
        self.seen = _grown(self.seen, shape)
        self.n_tlb = _grown(self.n_tlb, shape[:3])
        self.sum_tlb = _grown(self.sum_tlb, shape[:3])
        self.sum_f = _grown(self.sum_f, shape[3:])
        if len(self.first_stratum) < shape[0]:
            extra = shape[0] - len(self.first_stratum)
            self.first_stratum = np.concatenate([self.first_stratum, np.full(extra, -2)])
            self.first_valid_stratum = np.concatenate([self.first_valid_stratum,
                                                       np.full(extra, -2)])

    def _accumulate(self, t, l, b, f, y) -> None:
        if not len(y):
            return
        if self.shift is None:
            self.shift = float(y.mean())
        flat3 = np.ravel_multi_index((t, l, b), self.n_tlb.shape)
        cells, inverse, n_cells = _cells(flat3)
        n, total = self.n_tlb.reshape(-1), self.sum_tlb.reshape(-1)
        n[cells] += np.bincount(inverse, minlength=n_cells)
        # each cell's running sum first, then this batch's scores in file order: the same
        # additions, in the same order, as one bincount over the whole table
        order = np.concatenate([np.arange(n_cells), inverse])
        total[cells] = np.bincount(order, weights=np.concatenate([total[cells], y]),
                                   minlength=n_cells)
        flat4 = np.ravel_multi_index((t, l, b, f), self.seen.shape)
        seen = self.seen.reshape(-1)
        seen[flat4] |= 4
        self.sum_f += np.bincount(f, weights=y, minlength=len(self.sum_f))
        centred = y - self.shift
        self.sum_sq += float(centred @ centred)
        self.low, self.high = min(self.low, float(y.min())), max(self.high, float(y.max()))
        self.n_runs += len(y)

    def _strata(self, column: pd.Series, t: np.ndarray, good: np.ndarray) -> None:
        s = self.strata_axis.encode(_stripped_labels(column))[good]
        for target, keep in ((self.first_stratum, np.ones(len(s), bool)),
                             (self.first_valid_stratum, s >= 0)):
            tasks, first = np.unique(t[keep], return_index=True)  # each task's first row
            fresh = target[tasks] == -2
            target[tasks[fresh]] = s[keep][first[fresh]]
        valid = s >= 0
        differs = s[valid] != self.first_valid_stratum[t[valid]]
        self.mixed.update(np.unique(t[valid][differs]).tolist())

    def _write(self, t, l, b, f, y, batch, good) -> None:
        arrays = {key: pa.DictionaryArray.from_arrays(
            pa.array(code.astype(np.int32)), pa.array(self.axes[key].labels, pa.string()))
            for key, code in zip(RUN_KEYS, (t, l, b, f))}  # the labels so far: a growing dictionary
        arrays["score"] = pa.array(y)
        if self.has_strata:
            stratum = batch["stratum"].to_numpy(dtype=object)[good]
            arrays["stratum"] = pa.array(stratum, pa.string(), from_pandas=True)
        table = pa.table(arrays)
        if self.writer is None:
            self.tmp = Path(f"{self.runs_out}.part")
            label = pa.dictionary(pa.int32(), pa.string())
            schema = pa.schema([pa.field(key, label) for key in RUN_KEYS]
                               + [pa.field("score", pa.float64())]
                               + ([pa.field("stratum", pa.string())] if self.has_strata else []))
            self.schema = schema
            self.writer = pq.ParquetWriter(self.tmp, schema)
        self.writer.write_table(table.cast(self.schema))

    def _close_writer(self, discard: bool = False) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
            if discard:
                self.tmp.unlink(missing_ok=True)
            else:
                os.replace(self.tmp, self.runs_out)
        self.runs_out = None if discard else self.runs_out

    # -- after the pass -------------------------------------------------------------------------

    def finish(self, rescan: Callable[[], Iterable[pd.DataFrame]] | None = None) -> RunStats:
        """Raise the first error :func:`io.validate_runs` would raise, else the statistics.

        ``rescan()`` gives the batches again, to collect the rows of duplicate keys.
        """
        try:
            self._raise_errors(rescan)
        except Exception:
            self._close_writer(discard=True)
            raise
        if self.runs_out is not None:
            if self.writer is None:  # no scored run at all: raised above; kept for clarity
                raise AssertionError("no runs written")
            self._close_writer()
        strata = None
        if self.has_strata:
            labels = self.strata_axis.labels
            first = [labels[s] if s >= 0 else "nan" for s in self.first_stratum]
            mixed = {self.axes["task"].labels[i] for i in self.mixed}
            strata = (first, mixed)
        sizes = [len(self.axes[key].labels) for key in RUN_KEYS]
        n_tlf = np.zeros((sizes[0], sizes[1], sizes[3]), dtype=np.int64)
        n_lbf = np.zeros(sizes[1:], dtype=np.int64)
        step = max(1, (1 << 24) // max(1, int(np.prod(sizes[1:]))))  # tasks per block
        for first in range(0, sizes[0], step):  # blocks of tasks: no run-sized temporaries
            block = (self.seen[first:min(first + step, sizes[0]), :sizes[1], :sizes[2],
                               :sizes[3]] & 4) > 0
            n_tlf[first:first + len(block)] = block.sum(axis=2)
            n_lbf += block.sum(axis=0)
        return RunStats(
            labels={key: list(self.axes[key].labels) for key in RUN_KEYS},
            n_tlb=self.n_tlb[:sizes[0], :sizes[1], :sizes[2]].copy(),
            sum_tlb=self.sum_tlb[:sizes[0], :sizes[1], :sizes[2]].copy(),
            n_tlf=n_tlf, n_lbf=n_lbf, sum_f=self.sum_f[:sizes[3]].copy(),
            sum_sq=self.sum_sq, shift=self.shift, low=self.low, high=self.high, strata=strata,
            n_runs=self.n_runs, source=self.source)

    def _raise_errors(self, rescan) -> None:
        source = self.source
        if self.absent:
            raise io.missing_columns_error(source, self.absent, self.columns, RUN_KEYS)
        if self.rows == 0:
            raise io.no_rows_error(source, "runs")
        for key in RUN_KEYS:
            if f"empty:{key}" in self.failures:
                count, rows = self.failures[f"empty:{key}"]
                raise io.empty_key_error(source, key, count, self._file_rows(rows))
        if self.duplicates:
            count, rows = self._duplicate_rows(rescan)
            raise io.duplicate_error(source, RUN_KEYS, count, rows)
        for check in io.SCORE_CHECKS:
            if check in self.failures and (check != "nan" or self.missing == "error"):
                count, rows = self.failures[check]
                raise io.score_error(source, check, count, self._file_rows(rows),
                                     self.score_range)
        if self.n_runs == 0:
            raise io.all_missing_error(source, self.rows)
        for axis, key in enumerate(RUN_KEYS[:3]):
            if key not in io.UNSCORED_AXES:
                continue
            labels = list(self.axes[key].labels)  # a Parquet dictionary may hold unused ones
            occurs = ((self.seen & 3) > 0).any(axis=tuple(a for a in range(4) if a != axis))
            scored = self.n_tlb.sum(axis=tuple(a for a in range(3) if a != axis)) > 0
            n = len(labels)
            unscored = [label for label, o, s in zip(labels, occurs[:n], scored[:n]) if o and not s]
            if unscored:
                raise io.unscored_error(source, key, sorted(unscored, key=io.natural_key))

    def _duplicate_rows(self, rescan) -> tuple[int, pd.DataFrame | None]:
        """Second pass: the rows whose key occurs more than once (count, first rows)."""
        count, shown = 0, []
        if rescan is None:
            raise ValueError("duplicate runs: give rescan to name their rows")
        shape = self.seen.shape
        for batch in rescan():
            batch = io.with_single_framework(batch)
            codes = [self.axes[key].encode(_stripped_labels(batch[key])) for key in RUN_KEYS]
            flat = np.ravel_multi_index(codes, shape)
            mask = (self.seen.reshape(-1)[flat] & 3) > 1
            count += int(mask.sum())
            if sum(len(rows) for rows in shown) < SHOWN and mask.any():
                shown.append(batch.loc[mask].head(SHOWN))
        return count, self._file_rows(shown)

    def _file_rows(self, parts: list[pd.DataFrame]) -> pd.DataFrame:
        """The first offending rows, by file row number (header = row 1), each column in the
        type the whole file gives it (a batch of integers in a column with a NaN elsewhere is
        shown as floats, as the in-memory reader shows it)."""
        rows = pd.concat(parts) if len(parts) > 1 else parts[0].copy()
        for name, column in rows.items():
            if isinstance(column.dtype, pd.CategoricalDtype):  # as read_table gives them: text
                rows[name] = column.astype(object).where(column.notna())
                continue
            dtypes = self.dtypes.get(name, set())
            if len(dtypes) > 1:
                try:
                    common = np.result_type(*dtypes)
                except TypeError:
                    common = np.dtype(object)
                rows[name] = column.astype(common if common.kind in "biuf" else object)
        return rows.set_axis(rows.index + 2, axis=0)


def scan_runs(batches: Callable[[], Iterable[pd.DataFrame]], source, score_range=(0.0, 100.0),
              missing: str = "error", runs_out=None) -> RunStats:
    """Validate a run table given as batches and return its :class:`RunStats`.

    ``batches()`` yields standard-named frames indexed by data row number (see
    :func:`iter_table`); it is called again only to name duplicate rows. ``runs_out``: write
    the validated runs there (Parquet), atomically, only if the table is valid.
    """
    scanner = RunScanner(source, score_range, missing, runs_out)
    try:
        for batch in batches():
            scanner.add(batch)
    except Exception:
        scanner._close_writer(discard=True)
        raise
    return scanner.finish(batches)


def read_runs(path, mapping: dict | None = None, score_range=(0.0, 100.0),
              missing: str = "error", runs_out=None, batch_rows: int = BATCH_ROWS) -> RunStats:
    """Stream a run-table file: :func:`iter_table` + :func:`scan_runs`."""
    return scan_runs(lambda: iter_table(path, mapping, batch_rows=batch_rows), path,
                     score_range, missing, runs_out)
