"""The task-level panel: a (task, language, backbone) score array that carries its labels.

Every analysis of the CBC paper starts from ``T[t, l, b]``, the framework-averaged task score.
:class:`Panel` keeps the array together with the names of its axes so that no function has
to assume an order. Missing cells are NaN; whether they are allowed is decided at ingest.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

AXES = ("task", "language", "backbone")


@dataclass(frozen=True)
class Panel:
    """Task-level scores ``values[t, l, b]`` with their labels.

    ``strata`` optionally gives each task a stratum (for example the M-RewardBench subset);
    ``n_runs[t, l, b]`` counts the runs averaged into each cell.
    """

    values: np.ndarray
    tasks: tuple[str, ...]
    languages: tuple[str, ...]
    backbones: tuple[str, ...]
    strata: tuple[str, ...] | None = None
    n_runs: np.ndarray | None = None

    def __post_init__(self):
        shape = (len(self.tasks), len(self.languages), len(self.backbones))
        if self.values.shape != shape:
            raise ValueError(f"values has shape {self.values.shape}, labels give {shape}")
        if self.strata is not None and len(self.strata) != len(self.tasks):
            raise ValueError("strata must give one stratum per task")

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.values.shape

    @property
    def is_complete(self) -> bool:
        return bool(np.isfinite(self.values).all())

    def cell_means(self) -> np.ndarray:
        """``M[l, b]``: mean over tasks of ``T[t, l, b]``, missing tasks omitted."""
        return nanmean(self.values, axis=0)

    def matrix_frame(self, matrix: np.ndarray, name: str) -> pd.DataFrame:
        """A tidy (language, backbone, name) frame of a language x backbone matrix."""
        lang, bb = np.meshgrid(self.languages, self.backbones, indexing="ij")
        return pd.DataFrame({"language": lang.ravel(), "backbone": bb.ravel(),
                             name: matrix.ravel()})

    def subset(self, tasks=None, languages=None, backbones=None) -> "Panel":
        """A panel restricted to index arrays along each axis (None keeps the axis)."""
        it = np.arange(len(self.tasks)) if tasks is None else np.asarray(tasks)
        il = np.arange(len(self.languages)) if languages is None else np.asarray(languages)
        ib = np.arange(len(self.backbones)) if backbones is None else np.asarray(backbones)
        pick = np.ix_(it, il, ib)
        return Panel(
            values=self.values[pick],
            tasks=tuple(self.tasks[i] for i in it),
            languages=tuple(self.languages[i] for i in il),
            backbones=tuple(self.backbones[i] for i in ib),
            strata=None if self.strata is None else tuple(self.strata[i] for i in it),
            n_runs=None if self.n_runs is None else self.n_runs[pick],
        )

    # --- long-format round trip (the Parquet intermediate) ---------------------------------
    def to_frame(self) -> pd.DataFrame:
        """Long table task, language, backbone, score[, n_runs][, stratum] in axis order."""
        t, l, b = np.meshgrid(self.tasks, self.languages, self.backbones, indexing="ij")
        frame = pd.DataFrame({"task": t.ravel(), "language": l.ravel(), "backbone": b.ravel(),
                              "score": self.values.ravel()})
        if self.n_runs is not None:
            frame["n_runs"] = self.n_runs.ravel()
        if self.strata is not None:
            frame["stratum"] = np.repeat(self.strata, len(self.languages) * len(self.backbones))
        return frame

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> "Panel":
        """Inverse of :meth:`to_frame`; axis order is the order of first appearance."""
        tasks = tuple(pd.unique(frame["task"]).tolist())
        langs = tuple(pd.unique(frame["language"]).tolist())
        bbs = tuple(pd.unique(frame["backbone"]).tolist())
        shape = (len(tasks), len(langs), len(bbs))
        if len(frame) != np.prod(shape):
            raise ValueError(f"a tensor table needs {np.prod(shape)} rows, it has {len(frame)}")
        values = frame["score"].to_numpy(dtype=float).reshape(shape)
        n_runs = frame["n_runs"].to_numpy().reshape(shape) if "n_runs" in frame else None
        strata = None
        if "stratum" in frame:
            strata = tuple(frame["stratum"].to_numpy().reshape(shape)[:, 0, 0].tolist())
        return cls(values, tasks, langs, bbs, strata=strata, n_runs=n_runs)


def nanmean(values: np.ndarray, axis, keepdims: bool = False) -> np.ndarray:
    """Mean over ``axis`` of the finite entries, without warnings; NaN where there is none."""
    finite = np.isfinite(values)
    count = finite.sum(axis=axis, keepdims=keepdims)
    total = np.where(finite, values, 0.0).sum(axis=axis, keepdims=keepdims)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)
