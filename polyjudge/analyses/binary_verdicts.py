"""Binary verdicts for Dawid-Skene (Table 2), and the exception of a method that cannot run.

Items are the units the annotators ``(language, backbone)`` judge: a run ``(task, framework)``
with the verdict ``score >= threshold`` (:func:`run_items`; the protocol: 100 on a 0-100
pass-rate scale, the panel's ``verdict_threshold``), or a requirement of a run with its
``satisfied`` (:func:`requirement_items`; the paper's appendix). :func:`streamed_run_items`
builds the run items of a run table file in batches (the held-out step at 10^7 runs).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.panel import Panel

# Held-out methods whose items are requirement verdicts: a panel without a requirement table
# cannot run them (the workflow leaves them out of `heldout.methods` for such a panel).
REQUIREMENT_METHODS = ("Dawid-Skene (requirement)",)


class MethodUnavailable(Exception):
    """A method cannot run on this panel (for example Dawid-Skene without binary verdicts)."""


@dataclass(frozen=True)
class BinaryItems:
    """Binary verdicts for Dawid-Skene: ``labels[i, l, b]`` in {0, 1} (NaN = no verdict).

    Items are the units the annotators ``(language, backbone)`` judge (a run ``(task,
    framework)``, or a requirement of a run); ``task[i]`` indexes the item's task in the panel.
    """

    labels: np.ndarray
    task: np.ndarray
    threshold: float | None = None  # run verdicts: a run passes when its score reaches it
    scale: tuple | None = None  # run verdicts: the panel's score_range (None: unbounded)


def _binary_items(frame: pd.DataFrame, panel: Panel, item_keys: list[str], label: np.ndarray,
                  what: str) -> BinaryItems:
    """Items x annotators array from a long table with task, language, backbone + item keys."""
    codes = {}
    for axis, labels in (("task", panel.tasks), ("language", panel.languages),
                         ("backbone", panel.backbones)):
        codes[axis] = pd.Index(labels).get_indexer(frame[axis].astype(str))
        unknown = codes[axis] < 0
        if unknown.any():
            values = sorted(set(frame.loc[unknown, axis].astype(str)))[:5]
            raise ValueError(f"{what}: {axis}(s) {values} are not in the panel")
    keys = frame[item_keys].astype(str).assign(task=codes["task"])
    item_code = keys.groupby(["task"] + item_keys, sort=True).ngroup().to_numpy()
    n_items = int(item_code.max()) + 1 if len(item_code) else 0
    k, m = len(panel.languages), len(panel.backbones)
    annotator = codes["language"] * m + codes["backbone"]
    flat = item_code * (k * m) + annotator
    if len(np.unique(flat)) != len(flat):
        raise ValueError(f"{what}: more than one verdict for some item x language x backbone")
    labels = np.full(n_items * k * m, np.nan)
    labels[flat] = label
    task = np.zeros(n_items, dtype=np.int64)
    task[item_code] = codes["task"]
    return BinaryItems(labels=labels.reshape(n_items, k, m), task=task)


def _scale(score_range) -> tuple | None:
    return None if score_range is None else tuple(float(x) for x in score_range)


def run_items(runs: pd.DataFrame, panel: Panel, threshold: float = 100.0,
              score_range=None) -> BinaryItems:
    """Run-level items ``(task, framework)`` with the verdict ``score >= threshold`` (the
    protocol: 100, a run that passes every requirement, on a 0-100 pass-rate scale);
    ``score_range``: the panel's scale, which a message about the threshold names."""
    label = (runs["score"].to_numpy(float) >= threshold - 1e-9).astype(float)
    items = _binary_items(runs, panel, ["framework"], label, "run table")
    return BinaryItems(items.labels, items.task, float(threshold), _scale(score_range))


def streamed_run_items(path, panel: Panel, threshold: float = 100.0,
                       batch_rows: int | None = None, score_range=None) -> BinaryItems:
    """:func:`run_items` of a run table file (standard columns, a framework column: the
    ingested ``runs.parquet``), read in batches: per run only its task,
    annotator and framework codes and its verdict are kept (13 bytes), never the table.

    Same items in the same order as :func:`run_items` (sorted by task, then framework text).
    """
    from ..data.streaming.batches import BATCH_ROWS, iter_table
    from ..data.streaming.codes import Axis

    k, m = len(panel.languages), len(panel.backbones)
    index = {axis: pd.Index(labels) for axis, labels in (
        ("task", panel.tasks), ("language", panel.languages), ("backbone", panel.backbones))}
    frameworks, parts = Axis(), []
    for batch in iter_table(path, batch_rows=batch_rows or BATCH_ROWS):
        codes = {}
        for axis, labels in index.items():
            column = batch[axis]
            lookup = labels.get_indexer(column.cat.categories.astype(str))
            codes[axis] = np.append(lookup, -1)[column.cat.codes.to_numpy()]
            if (codes[axis] < 0).any():
                values = sorted(set(column[codes[axis] < 0].astype(str)))[:5]
                raise ValueError(f"run table: {axis}(s) {values} are not in the panel")
        framework = frameworks.encode(batch["framework"])
        label = batch["score"].to_numpy(float) >= threshold - 1e-9
        parts.append((codes["task"].astype(np.int32),
                      (codes["language"] * m + codes["backbone"]).astype(np.int32),
                      framework.astype(np.int32), label))
    task, annotator, framework, label = (np.concatenate(column) for column in zip(*parts))
    del parts
    # items sorted by (task, framework text), as run_items' groupby numbers them
    rank = np.argsort(np.argsort(np.array(frameworks.labels, dtype=object)))
    keys, item = np.unique(task.astype(np.int64) * len(rank) + rank[framework],
                           return_inverse=True)
    flat = item.ravel() * (k * m) + annotator
    if len(flat) and np.bincount(flat).max() > 1:
        raise ValueError("run table: more than one verdict for some item x language x backbone")
    labels = np.full(len(keys) * k * m, np.nan)
    labels[flat] = label
    return BinaryItems(labels=labels.reshape(len(keys), k, m), task=keys // max(len(rank), 1),
                       threshold=float(threshold), scale=_scale(score_range))


def requirement_items(requirements: pd.DataFrame, panel: Panel) -> BinaryItems:
    """Requirement-level items ``(task, framework, requirement_id)`` with verdict ``satisfied``."""
    label = pd.to_numeric(requirements["satisfied"]).to_numpy(float)
    return _binary_items(requirements, panel, ["framework", "requirement_id"], label,
                         "requirement table")
