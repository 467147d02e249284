"""One pass over run-table batches: read (``batches``), check (``checks``), reduce (``stats``),
and optionally write the validated runs on the way."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .. import io
from ..io import RUN_KEYS
from .batches import BATCH_ROWS, iter_table
from .checks import RunChecks
from .codes import Axis, stripped_labels
from .stats import CellSums, KeyCounts, RunStats, capacity


class RunsWriter:
    """The validated runs, written as they pass (Parquet, one row group per batch) to a
    ``.part`` file that replaces ``path`` only when the whole table turned out valid."""

    def __init__(self, path):
        self.path, self.tmp = path, Path(f"{path}.part")
        self.writer, self.schema = None, None

    def write(self, axes: dict[str, Axis], codes, y, stratum=None) -> None:
        arrays = {key: pa.DictionaryArray.from_arrays(
            pa.array(code.astype(np.int32)), pa.array(axes[key].labels, pa.string()))
            for key, code in zip(RUN_KEYS, codes)}  # the labels so far: a growing dictionary
        arrays["score"] = pa.array(y)
        if stratum is not None:
            arrays["stratum"] = pa.array(stratum, pa.string(), from_pandas=True)
        table = pa.table(arrays)
        if self.writer is None:
            label = pa.dictionary(pa.int32(), pa.string())
            self.schema = pa.schema([pa.field(key, label) for key in RUN_KEYS]
                                    + [pa.field("score", pa.float64())]
                                    + ([pa.field("stratum", pa.string())]
                                       if stratum is not None else []))
            self.writer = pq.ParquetWriter(self.tmp, self.schema)
        self.writer.write_table(table.cast(self.schema))

    def discard(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
            self.tmp.unlink(missing_ok=True)

    def commit(self) -> None:
        if self.writer is None:  # no scored run at all: raised before; kept for clarity
            raise AssertionError("no runs written")
        self.writer.close()
        self.writer = None
        os.replace(self.tmp, self.path)


class RunScanner:
    """One pass over run-table batches: checks, codes, sufficient statistics (see the package
    docstring). ``add`` each batch, then ``finish``."""

    def __init__(self, source, score_range=(0.0, 100.0), missing: str = "error",
                 runs_out=None, locate=None, mapping=None):
        self.checks = RunChecks(source, score_range, missing, locate, mapping)
        self.source = source
        self.axes = {key: Axis() for key in RUN_KEYS}
        self.strata_axis = Axis()
        self.counts = KeyCounts()
        self.sums = CellSums()
        self.writer = RunsWriter(runs_out) if runs_out is not None else None

    def add(self, batch: pd.DataFrame) -> None:
        if not self.checks.columns_present(batch):  # the table's own columns
            self.discard()
            return
        batch = io.with_single_framework(batch)
        if batch.empty:
            return
        codes, keyed, score, missing = self.checks.check(batch, self.axes)
        self._grow()
        self.checks.duplicates |= self.counts.count(*(code[keyed] for code in codes))
        if self.checks.failed:
            self.discard()
            return  # the run stops after the pass: skip the statistics
        good = keyed & ~missing
        y = score.to_numpy(float)[good]
        t, l, b, f = (code[good] for code in codes)
        if len(y):
            self.sums.add(t, l, b, f, y)
            self.counts.mark_scored(t, l, b, f)
        if self.checks.has_strata:
            self.sums.add_strata(self.strata_axis.encode(stripped_labels(batch["stratum"]))[good],
                                 t)
        if self.writer is not None and len(y):
            stratum = (batch["stratum"].to_numpy(dtype=object)[good]
                       if self.checks.has_strata else None)
            self.writer.write(self.axes, (t, l, b, f), y, stratum)

    def _grow(self) -> None:
        sizes = [len(self.axes[key].labels) for key in RUN_KEYS]
        shape = tuple(capacity(c, n) for c, n in zip(self.counts.shape, sizes))
        if shape != self.counts.shape:
            self.counts.grow(shape)
            self.sums.grow(shape)

    def discard(self) -> None:
        """Drop the runs written so far (the table is invalid)."""
        if self.writer is not None:
            self.writer.discard()
            self.writer = None

    def finish(self, rescan: Callable[[], Iterable[pd.DataFrame]] | None = None) -> RunStats:
        """Raise the first error :func:`io.validate_runs` would raise, else the statistics.

        ``rescan()`` gives the batches again, to collect the rows of duplicate keys.
        """
        sums = self.sums
        try:
            self.checks.raise_errors(self.axes, self.counts, sums.n_tlb, sums.n_runs, rescan)
        except Exception:
            self.discard()
            raise
        if self.writer is not None:
            self.writer.commit()
        strata = None
        if self.checks.has_strata:
            labels = self.strata_axis.labels
            first = [labels[s] if s >= 0 else "nan" for s in sums.first_stratum]
            mixed = {self.axes["task"].labels[i] for i in sums.mixed}
            strata = (first, mixed)
        sizes = [len(self.axes[key].labels) for key in RUN_KEYS]
        n_tlf, n_lbf = self.counts.scored_runs(sizes)
        return RunStats(
            labels={key: list(self.axes[key].labels) for key in RUN_KEYS},
            n_tlb=sums.n_tlb[:sizes[0], :sizes[1], :sizes[2]].copy(),
            sum_tlb=sums.sum_tlb[:sizes[0], :sizes[1], :sizes[2]].copy(),
            n_tlf=n_tlf, n_lbf=n_lbf, sum_f=sums.sum_f[:sizes[3]].copy(),
            sum_sq=sums.sum_sq, shift=sums.shift, low=sums.low, high=sums.high, strata=strata,
            n_runs=sums.n_runs, source=self.source, mapping=self.checks.mapping)


def scan_runs(batches: Callable[[], Iterable[pd.DataFrame]], source, score_range=(0.0, 100.0),
              missing: str = "error", runs_out=None, locate=None,
              mapping: dict | None = None) -> RunStats:
    """Validate a run table given as batches and return its :class:`RunStats`.

    ``batches()`` yields standard-named frames indexed by data row number (see
    :func:`iter_table`); it is called again only to name duplicate rows. ``runs_out``: write
    the validated runs there (Parquet), atomically, only if the table is valid. ``locate``:
    row index -> labels naming the rows in messages (many files: ``file:line``, see
    :mod:`polyjudge.data.sources`); default the file row number (header = row 1).
    ``mapping``: the user's column names (standard -> user), which messages name.
    """
    scanner = RunScanner(source, score_range, missing, runs_out, locate, mapping)
    try:
        for batch in batches():
            scanner.add(batch)
    except Exception:
        scanner.discard()
        raise
    return scanner.finish(batches)


def scan_file(path, mapping: dict | None = None, score_range=(0.0, 100.0),
              missing: str = "error", runs_out=None, batch_rows: int = BATCH_ROWS) -> RunStats:
    """Stream a run-table file: :func:`iter_table` + :func:`scan_runs` (the public
    :func:`polyjudge.read_runs` reads any source into a validated DataFrame)."""
    return scan_runs(lambda: iter_table(path, mapping, batch_rows=batch_rows), path,
                     score_range, missing, runs_out, mapping=mapping)
