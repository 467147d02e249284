"""Reducing batches: per-cell sufficient statistics and the per-key run counter.

Arrays are indexed by the axes' integer codes (:class:`~polyjudge.data.streaming.codes.Axis`) and
grow with them; the statistics are those listed in the package docstring, and
:class:`RunStats` is what a pass leaves.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import io
from ..panel import Panel


def cells(flat: np.ndarray):
    """The cells a batch touches and each row's position among them: a contiguous range when
    the keys are close (a file sorted by task; no sort needed), else the distinct keys."""
    low, high = int(flat.min()), int(flat.max())
    if high - low < 4 * len(flat) + 4096:
        return slice(low, high + 1), flat - low, high - low + 1
    distinct, inverse = np.unique(flat, return_inverse=True)
    return distinct, inverse, len(distinct)


def grown(array: np.ndarray, shape: tuple) -> np.ndarray:
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


def capacity(current: int, needed: int) -> int:
    """An axis' allocated length: grown by a quarter at a time, so growing is rare."""
    return current if needed <= current else max(needed, current + current // 4 + 4)


class KeyCounts:
    """One byte per (task, language, backbone, framework) key: bits 0-1 count its rows (0, 1,
    2 = more, a duplicate run), bit 2 marks a scored run (the frameworks of the R^2 models)."""

    def __init__(self):
        self.seen = np.zeros((0, 0, 0, 0), dtype=np.uint8)

    @property
    def shape(self) -> tuple:
        return self.seen.shape

    def grow(self, shape: tuple) -> None:
        self.seen = grown(self.seen, shape)

    def count(self, t, l, b, f) -> bool:
        """Count a batch's keys (a saturating counter); True if some key now has two rows."""
        flat = np.ravel_multi_index((t, l, b, f), self.seen.shape)
        if not len(flat):
            return False
        touched, inverse, n_cells = cells(flat)
        seen = self.seen.reshape(-1)
        before = seen[touched]
        after = (before & 3) + np.bincount(inverse, minlength=n_cells)
        seen[touched] = np.minimum(after, 2).astype(np.uint8) | (before & 4)
        return bool((after > 1).any())

    def mark_scored(self, t, l, b, f) -> None:
        self.seen.reshape(-1)[np.ravel_multi_index((t, l, b, f), self.seen.shape)] |= 4

    def duplicated(self, codes: list[np.ndarray]) -> np.ndarray:
        """Rows (given by their key codes) whose key occurs more than once."""
        return (self.seen.reshape(-1)[np.ravel_multi_index(codes, self.seen.shape)] & 3) > 1

    def occurs(self, axis: int) -> np.ndarray:
        """Per label of ``axis`` (0-3), whether any row has it."""
        return ((self.seen & 3) > 0).any(axis=tuple(a for a in range(4) if a != axis))

    def scored_runs(self, sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Scored runs per task x language x framework and language x backbone x framework."""
        n_tlf = np.zeros((sizes[0], sizes[1], sizes[3]), dtype=np.int64)
        n_lbf = np.zeros(sizes[1:], dtype=np.int64)
        step = max(1, (1 << 24) // max(1, int(np.prod(sizes[1:]))))  # tasks per block
        for first in range(0, sizes[0], step):  # blocks of tasks: no run-sized temporaries
            block = (self.seen[first:min(first + step, sizes[0]), :sizes[1], :sizes[2],
                               :sizes[3]] & 4) > 0
            n_tlf[first:first + len(block)] = block.sum(axis=2)
            n_lbf += block.sum(axis=0)
        return n_tlf, n_lbf


class CellSums:
    """Runs and score sums per cell, per-framework sums, the sum of squares, the score range and
    each task's stratum, added batch by batch."""

    def __init__(self):
        self.n_tlb = np.zeros((0, 0, 0), dtype=np.int64)
        self.sum_tlb = np.zeros((0, 0, 0))
        self.sum_f = np.zeros(0)
        self.first_stratum = np.zeros(0, dtype=np.int64)  # -2 = no run yet, -1 = NaN
        self.first_valid_stratum = np.zeros(0, dtype=np.int64)
        self.mixed: set[int] = set()
        self.sum_sq, self.shift, self.low, self.high = 0.0, None, np.inf, -np.inf
        self.n_runs = 0

    def grow(self, shape: tuple) -> None:
        self.n_tlb = grown(self.n_tlb, shape[:3])
        self.sum_tlb = grown(self.sum_tlb, shape[:3])
        self.sum_f = grown(self.sum_f, shape[3:])
        if len(self.first_stratum) < shape[0]:
            extra = shape[0] - len(self.first_stratum)
            self.first_stratum = np.concatenate([self.first_stratum, np.full(extra, -2)])
            self.first_valid_stratum = np.concatenate([self.first_valid_stratum,
                                                       np.full(extra, -2)])

    def add(self, t, l, b, f, y) -> None:
        """Add the scored runs ``y`` of cells ``(t, l, b)`` and frameworks ``f``."""
        if not len(y):
            return
        if self.shift is None:
            self.shift = float(y.mean())
        flat = np.ravel_multi_index((t, l, b), self.n_tlb.shape)
        touched, inverse, n_cells = cells(flat)
        n, total = self.n_tlb.reshape(-1), self.sum_tlb.reshape(-1)
        n[touched] += np.bincount(inverse, minlength=n_cells)
        # each cell's running sum first, then this batch's scores in file order: the same
        # additions, in the same order, as one bincount over the whole table
        order = np.concatenate([np.arange(n_cells), inverse])
        total[touched] = np.bincount(order, weights=np.concatenate([total[touched], y]),
                                     minlength=n_cells)
        self.sum_f += np.bincount(f, weights=y, minlength=len(self.sum_f))
        centred = y - self.shift
        self.sum_sq += float(centred @ centred)
        self.low, self.high = min(self.low, float(y.min())), max(self.high, float(y.max()))
        self.n_runs += len(y)

    def add_strata(self, s: np.ndarray, t: np.ndarray) -> None:
        """Each task's first stratum (``s``: stratum codes of the scored runs, -1 = NaN) and the
        tasks whose runs name two strata."""
        for target, keep in ((self.first_stratum, np.ones(len(s), bool)),
                             (self.first_valid_stratum, s >= 0)):
            tasks, first = np.unique(t[keep], return_index=True)  # each task's first row
            fresh = target[tasks] == -2
            target[tasks[fresh]] = s[keep][first[fresh]]
        valid = s >= 0
        differs = s[valid] != self.first_valid_stratum[t[valid]]
        self.mixed.update(np.unique(t[valid][differs]).tolist())


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
    mapping: dict | None = None
    """The user's column names (standard -> user), which messages name."""

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
                raise io.mixed_strata_error(self.source, sorted(mixed)[:5], self.mapping)
            return tuple(first[i] for i in picks[0])

        return io.panel_from_sums(n, total, labels, self.source, allow_missing_cells, strata,
                                  self.mapping)

    def _order(self, languages, backbones):
        present = {"task": self.n_tlb.sum(axis=(1, 2)) > 0,
                   "language": self.n_tlb.sum(axis=(0, 2)) > 0,
                   "backbone": self.n_tlb.sum(axis=(0, 1)) > 0}
        picks, labels = [], []
        for axis, wanted in (("task", None), ("language", languages), ("backbone", backbones)):
            names = [self.labels[axis][i] for i in np.flatnonzero(present[axis])]
            order = io.order_labels(names, wanted, axis, self.source, self.mapping)
            code = {label: i for i, label in enumerate(self.labels[axis])}
            picks.append(np.array([code[label] for label in order], dtype=np.int64))
            labels.append(order)
        return picks, labels

    def model_stats(self) -> dict:
        """Arguments of :func:`polyjudge.cbc.estimator.r_squared_from_stats` (frameworks
        present)."""
        used = self.n_tlf.sum(axis=(0, 1)) > 0
        return dict(n_tlb=self.n_tlb, sum_tlb=self.sum_tlb, n_tlf=self.n_tlf[..., used],
                    n_lbf=self.n_lbf[..., used], sum_f=self.sum_f[used], sum_sq=self.sum_sq,
                    shift=self.shift, spread=(self.low, self.high))
