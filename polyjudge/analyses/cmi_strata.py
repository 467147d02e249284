"""The CMI test's strata: run scores arranged by (task, backbone) stratum, with the language of
every point (docs/methods.md section 6), from a run table or a validated Parquet run table.

Read by :mod:`polyjudge.analyses.information`, which estimates and tests within these strata.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class CMIStrata:
    """Run scores arranged by stratum: ``scores[s, p]`` and ``labels[s, p]``.

    Axis 0, strata: s = task_index * n_backbones + backbone_index (task-major).
    Axis 1, points: p = language_index * n_frameworks + framework_index (language-major).
    ``labels[s, p]`` is the language index of point p.
    """

    scores: np.ndarray
    labels: np.ndarray
    tasks: tuple[str, ...]
    backbones: tuple[str, ...]
    languages: tuple[str, ...]
    frameworks: tuple[str, ...]

    def strata_frame(self) -> pd.DataFrame:
        """task, backbone of every stratum, in axis-0 order."""
        return pd.DataFrame({"task": np.repeat(self.tasks, len(self.backbones)),
                             "backbone": np.tile(self.backbones, len(self.tasks))})


def cmi_strata(runs: pd.DataFrame, tasks=None, languages=None, backbones=None,
               frameworks=None) -> CMIStrata:
    """Arrange a run table (task, language, backbone, framework, score) into CMI strata.

    Orders: as given (e.g. a Panel's ``tasks``, ``languages``, ``backbones``), else the order of
    first appearance. Every stratum must have exactly one run per language x framework.
    """
    missing = [c for c in ("task", "language", "backbone", "framework", "score")
               if c not in runs.columns]
    if missing:
        raise ValueError(f"cmi_strata: run table lacks column(s) {missing}")
    order = {}
    for axis, wanted in (("task", tasks), ("language", languages), ("backbone", backbones),
                         ("framework", frameworks)):
        present = pd.unique(runs[axis].astype(str))
        order[axis] = tuple(str(w) for w in wanted) if wanted is not None else tuple(present)
        unknown = sorted(set(present) - set(order[axis]))
        if unknown:
            raise ValueError(f"cmi_strata: {axis}(s) {unknown[:5]} are not in the given order")
    keys = ["task", "backbone", "language", "framework"]
    codes = [pd.Categorical(runs[axis].astype(str), categories=order[axis]).codes for axis in keys]
    shape = tuple(len(order[axis]) for axis in keys)
    flat = np.ravel_multi_index(codes, shape)
    counts = np.bincount(flat, minlength=int(np.prod(shape)))
    if (counts != 1).any():
        raise ValueError(f"cmi_strata: each (task, backbone) stratum needs exactly one run per "
                         f"language x framework; {int((counts == 0).sum())} are missing and "
                         f"{int((counts > 1).sum())} duplicated")
    scores = np.empty(flat.size)
    scores[flat] = runs["score"].to_numpy(float)
    if not np.isfinite(scores).all():
        raise ValueError("cmi_strata: scores must be finite")
    n_strata, n_points = shape[0] * shape[1], shape[2] * shape[3]
    labels = np.repeat(np.arange(shape[2]), shape[3])
    return CMIStrata(scores=scores.reshape(n_strata, n_points),
                     labels=np.broadcast_to(labels, (n_strata, n_points)).copy(),
                     tasks=order["task"], backbones=order["backbone"],
                     languages=order["language"], frameworks=order["framework"])


def read_cmi_strata(path, tasks, languages, backbones) -> CMIStrata:
    """:func:`cmi_strata` of a validated Parquet run table (the workflow's ``runs.parquet``),
    read in batches into the score array (:func:`polyjudge.data.streaming.arrays.dense_scores`):
    memory is 8 bytes per run, not a data frame of the table. Frameworks in first-appearance
    order, as :func:`cmi_strata` orders them; the same checks and messages."""
    from ..data.streaming import arrays

    order = {"task": tuple(map(str, tasks)), "backbone": tuple(map(str, backbones)),
             "language": tuple(map(str, languages)),
             "framework": tuple(arrays.first_appearance(path, ["framework"])["framework"])}
    values, counts = arrays.dense_scores(path, order)
    for axis, labels in counts["unknown"].items():
        raise ValueError(f"cmi_strata: {axis}(s) {labels[:5]} are not in the given order")
    if counts["missing"] or counts["duplicated"]:
        raise ValueError(f"cmi_strata: each (task, backbone) stratum needs exactly one run per "
                         f"language x framework; {counts['missing']} are missing and "
                         f"{counts['duplicated']} duplicated")
    if not np.isfinite(values).all():
        raise ValueError("cmi_strata: scores must be finite")
    n_languages, n_frameworks = len(order["language"]), len(order["framework"])
    scores = values.reshape(len(order["task"]) * len(order["backbone"]), -1)
    labels = np.broadcast_to(np.repeat(np.arange(n_languages), n_frameworks), scores.shape)
    return CMIStrata(scores=scores, labels=labels, tasks=order["task"],
                     backbones=order["backbone"], languages=order["language"],
                     frameworks=order["framework"])
