"""Checking batches: the checks of :func:`polyjudge.data.io.validate_runs`, row by row.

Failures are counted and their first rows kept while the pass goes on; after it,
:meth:`RunChecks.raise_errors` raises the error the whole-table reader would raise first, with
the same counts and the same first five offending rows (file row numbers).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import column_names, io, scores
from ..errors import FILE_ROWS, InputError
from ..io import RUN_KEYS
from .codes import Axis, stripped_labels
from .stats import KeyCounts

SHOWN = 5  # offending rows shown in a message, as InputError does
SOURCE_CAPTION = ("offending rows (file:line; a CSV or Parquet file's header is line 1, a JSON "
                  "array counts records)")
"""Caption of rows named by file and line (the labels may carry their own: ``labels.caption``)."""


class RunChecks:
    """What is wrong with the run table so far: absent columns, empty keys, bad scores,
    duplicate keys (counted by :class:`~polyjudge.data.streaming.stats.KeyCounts`)."""

    def __init__(self, source, score_range=(0.0, 100.0), missing: str = "error", locate=None,
                 mapping: dict | None = None):
        if missing not in io.MISSING_POLICIES:
            raise InputError(source, f"unknown missing-score policy {missing!r}",
                             f"one of {io.MISSING_POLICIES}")
        scores.check_score_range(score_range, source)
        self.source, self.score_range, self.missing = source, score_range, missing
        self.locate = locate  # row index -> labels (many files: file:line); None: row numbers
        self.mapping = mapping  # the user's column names (standard -> user), for messages
        self.rows = 0
        self.columns, self.absent, self.has_strata = None, [], False
        self.failures: dict[str, list] = {}  # check -> [count, shown rows]
        self.dtypes: dict[str, set] = {}  # per column, the dtypes its batches were read as
        self.duplicates = False

    @property
    def failed(self) -> bool:
        """A problem was found: the run will stop after the pass, so reducing can stop."""
        return bool(self.failures) or self.duplicates

    def columns_present(self, batch: pd.DataFrame) -> bool:
        """Note the table's own columns at the first batch (before a framework is added: a
        table without one has one run per cell); False if a required one is absent (raised
        after the pass, so a reading error later in the file is reported first)."""
        if self.columns is None:
            self.columns = list(batch.columns)
            self.absent = [c for c in RUN_KEYS + ["score"]
                           if c not in batch.columns and c != "framework"]
            self.has_strata = "stratum" in batch.columns
        if not self.absent:
            for name, dtype in batch.dtypes.items():
                self.dtypes.setdefault(name, set()).add(dtype)
        return not self.absent

    def check(self, batch: pd.DataFrame, axes: dict[str, Axis]):
        """Check one batch; returns the key codes, the rows with every key, the numeric scores
        and the rows whose score is missing."""
        self.rows += len(batch)
        keyed = np.ones(len(batch), dtype=bool)
        codes = {}
        for key in RUN_KEYS:
            labels = stripped_labels(batch[key])
            # io.empty_labels on stripped labels: missing (code -1, the last entry) or ""
            blank = np.append(np.asarray(labels.cat.categories, dtype=object) == "", True)
            empty = blank[labels.cat.codes.to_numpy()]
            self.fail(f"empty:{key}", empty, batch)
            codes[key] = axes[key].encode(labels)
            keyed &= ~empty
        score, masks = scores.score_masks(batch["score"], self.score_range)
        for check, mask in masks.items():
            if check != "nan" or self.missing == "error":
                self.fail(check, mask.to_numpy(), batch)
        return [codes[key] for key in RUN_KEYS], keyed, score, masks["nan"].to_numpy()

    def fail(self, check: str, mask: np.ndarray, batch: pd.DataFrame) -> None:
        if not mask.any():
            return
        entry = self.failures.setdefault(check, [0, []])
        entry[0] += int(mask.sum())  # messages give the total and the first rows
        shown = sum(len(rows) for rows in entry[1])
        if shown < SHOWN:
            entry[1].append(batch.loc[mask].head(SHOWN - shown))

    def raise_errors(self, axes: dict[str, Axis], counts: KeyCounts, n_tlb: np.ndarray,
                     n_runs: int, rescan) -> None:
        """Raise the first error :func:`io.validate_runs` would raise, in its order."""
        source = self.source
        if self.absent:
            raise io.missing_columns_error(source, self.absent, self.columns, RUN_KEYS,
                                           self.mapping)
        if self.rows == 0:
            raise io.no_rows_error(source, "runs")
        for key in RUN_KEYS:
            if f"empty:{key}" in self.failures:
                count, rows = self.failures[f"empty:{key}"]
                raise column_names.empty_key_error(source, key, count, self.file_rows(rows),
                                                   self.mapping)
        if self.duplicates:
            count, rows = self.duplicate_rows(axes, counts, rescan)
            raise column_names.duplicate_error(source, RUN_KEYS, count, rows, self.mapping)
        for check in scores.SCORE_CHECKS:
            if check in self.failures and (check != "nan" or self.missing == "error"):
                count, rows = self.failures[check]
                raise scores.score_error(source, check, count, self.file_rows(rows),
                                     self.score_range, self.mapping)
        if n_runs == 0:
            raise scores.all_missing_error(source, self.rows, self.mapping)
        for axis, key in enumerate(RUN_KEYS[:3]):
            if key not in io.UNSCORED_AXES:
                continue
            labels = list(axes[key].labels)  # a Parquet dictionary may hold unused ones
            occurs = counts.occurs(axis)
            scored = n_tlb.sum(axis=tuple(a for a in range(3) if a != axis)) > 0
            n = len(labels)
            unscored = [label for label, o, s in zip(labels, occurs[:n], scored[:n])
                        if o and not s]
            if unscored:
                raise scores.unscored_error(source, key, sorted(unscored, key=io.natural_key),
                                            self.mapping)

    def duplicate_rows(self, axes: dict[str, Axis], counts: KeyCounts,
                       rescan) -> tuple[int, pd.DataFrame | None]:
        """Second pass: the rows whose key occurs more than once (count, first rows)."""
        count, shown = 0, []
        if rescan is None:
            raise ValueError("duplicate runs: give rescan to name their rows")
        for batch in rescan():
            batch = io.with_single_framework(batch)
            mask = counts.duplicated([axes[key].encode(stripped_labels(batch[key]))
                                      for key in RUN_KEYS])
            count += int(mask.sum())
            if sum(len(rows) for rows in shown) < SHOWN and mask.any():
                shown.append(batch.loc[mask].head(SHOWN))
        return count, self.file_rows(shown)

    def file_rows(self, parts: list[pd.DataFrame]) -> pd.DataFrame:
        """The first offending rows, by file row number (header = row 1), each column in the
        type the whole file gives it (a batch of integers in a column with a NaN elsewhere is
        shown as floats, as the in-memory reader shows it)."""
        rows = pd.concat(parts) if len(parts) > 1 else parts[0].copy()
        if self.columns is not None:  # the table's own columns, not the framework added
            rows = rows[[c for c in rows.columns if c in self.columns]].copy()
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
        if self.locate is None:  # one file, streamed: its row numbers, whoever reads it
            rows = rows.set_axis(rows.index + 2, axis=0)
            rows.attrs["rows_caption"] = FILE_ROWS
            return rows
        labels = self.locate(rows.index)
        rows = rows.set_axis(list(labels), axis=0)
        rows.attrs["rows_caption"] = getattr(labels, "caption", SOURCE_CAPTION)
        return rows
