"""Per-language leaderboards, raw and after CBC, with task-bootstrap intervals and rank intervals.

``cbc/rankings.csv`` gives each backbone's mean and rank in each language; a reader also asks
whether two backbones can be told apart. Replicate ``r`` resamples the tasks (the shared task
bootstrap), recomputes the cell means ``M*_r`` and the panel estimator's ``beta*_r``, and ranks
``M*_r`` (raw) and ``M*_r - beta*_r`` (calibrated) within each language. Intervals are
percentile intervals at ``level``. A backbone's group, ``rank_ub``, is the best rank its rank
interval allows (``rank_*_low``): backbones of group 1 cannot be told apart from the best. It
comes from the same replicates, in which every backbone is scored on the same resampled tasks,
so it respects the pairing, and the group and the rank interval cannot contradict each other.
(Grouping by overlapping marginal mean intervals, LMArena's upper-bound rank, ignores the
pairing: on M-RewardBench it told apart 53 of the 70 within-language pairs that paired tests on
the same items separate 65 of.)
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..cbc.bootstrap import replicate_chunk, task_bootstrap_chunks, weighted_cell_means
from ..cbc.estimator import double_center, rank_by_count, rank_within_language
from ..data.panel import Panel
from .missing import estimate_beta

FAST_ESTIMATORS = ("plain", "available_means")
"""Estimators whose beta is the double-centred available means: replicated as weighted means."""


def _replicates(values: np.ndarray, method: str, n_replicates: int, seed):
    """``(R, k, m)`` raw and calibrated cell means of ``R`` task-bootstrap replicates."""
    n, k, m = values.shape
    raw, cbc = [], []
    chunk = replicate_chunk(n_replicates, n + 4 * k * m)
    for bootstrap in task_bootstrap_chunks(n, n_replicates, np.random.default_rng(seed), chunk):
        if method in FAST_ESTIMATORS:
            means = weighted_cell_means(values, bootstrap.counts)
            beta = double_center(means)
        else:  # least squares / task-adjusted: the estimator on each resampled panel
            fits = [estimate_beta(values[np.repeat(np.arange(n), row)], method)
                    for row in bootstrap.counts]
            means = np.stack([fit.cell_means for fit in fits])
            beta = np.stack([fit.beta for fit in fits])
        raw.append(means)
        cbc.append(means - beta)
    return np.concatenate(raw), np.concatenate(cbc)


def rank_interval(draws: np.ndarray, level: float, axis: int = 0):
    """The rank interval at ``level`` of replicated scores ``draws`` (replicates along ``axis``,
    backbones on the last): the percentiles of the within-language ranks, the lower end rounded
    down to a replicate's rank and the upper end up, as integer arrays ``(low, high)``.

    :func:`leaderboard` and the simulation study (stacked over panels) share it.
    """
    ranks = rank_by_count(draws)
    low = np.quantile(ranks, (1 - level) / 2, axis=axis, method="lower")
    high = np.quantile(ranks, (1 + level) / 2, axis=axis, method="higher")
    return low.astype(int), high.astype(int)


def leaderboard(panel: Panel, estimator: str | None = None, n_replicates: int = 1000,
                level: float = 0.95, seed=0) -> pd.DataFrame:
    """One row per language x backbone (panel order): for ``raw`` and ``cbc`` the mean, its
    interval (``mean_{raw,cbc}_low`` / ``_high``), the rank (1 = best, ties share the better
    rank), the rank interval (``rank_*_low`` / ``_high``) and the group ``rank_ub_*`` (module
    docstring).

    ``mean_raw``, ``mean_cbc``, ``rank_raw`` and ``rank_cbc`` equal ``cbc/rankings.csv``.
    """
    if n_replicates < 100:
        raise ValueError(f"use at least 100 replicates for rank intervals, got {n_replicates}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    estimate = estimate_beta(panel.values, estimator)
    point = {"raw": estimate.cell_means, "cbc": estimate.cell_means - estimate.beta}
    replicated = dict(zip(("raw", "cbc"), _replicates(panel.values, estimate.method,
                                                      n_replicates, seed)))
    lower, upper = (1 - level) / 2, (1 + level) / 2
    frame = panel.matrix_frame(point["raw"], "mean_raw")
    for name in ("raw", "cbc"):
        draws = replicated[name]
        low = np.quantile(draws, lower, axis=0)
        high = np.quantile(draws, upper, axis=0)
        rank_low, rank_high = rank_interval(draws, level)
        frame[f"mean_{name}"] = point[name].ravel()
        frame[f"mean_{name}_low"] = low.ravel()
        frame[f"mean_{name}_high"] = high.ravel()
        frame[f"rank_{name}"] = rank_within_language(point[name]).ravel()
        frame[f"rank_{name}_low"] = rank_low.ravel()
        frame[f"rank_{name}_high"] = rank_high.ravel()
        frame[f"rank_ub_{name}"] = frame[f"rank_{name}_low"]
    return frame
