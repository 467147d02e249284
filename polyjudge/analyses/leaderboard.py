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

The rank intervals are marginal: each holds its backbone's true rank with probability
``level``, but all of a language's intervals together hold less often when backbones are close.
The rank sets ``rank_*_simultaneous_*`` (:func:`rank_sets`, Mogstad, Romano, Shaikh and Wilke
2024) hold all of a language's true ranks together: they come from the paired differences of
the same replicates, with a bootstrap max-|t| critical value over all pairs of the language.
"""
from __future__ import annotations

import warnings

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


def rank_sets(point: np.ndarray, draws: np.ndarray, level: float,
              family: str = "language", tie_rtol: float = 1e-10):
    """Rank sets from the paired differences of the backbones' scores, by the bootstrap max-|t|
    of Mogstad, Romano, Shaikh and Wilke (2024, Review of Economic Studies 91(1), "Inference
    for ranks with applications to mobility across neighbourhoods and academic achievement
    across countries", section 3).

    ``point`` ``(..., k, m)``: the scores (cell means, raw or calibrated); ``draws``
    ``(..., R, k, m)``: their task-bootstrap replicates (every backbone scored on the same
    resampled tasks, so the differences keep the pairing). Per language, with ``d_jk`` the
    difference of backbones ``j`` and ``k`` and ``se_jk`` the SD of its replicates (ddof 1),

        t*_r = max over the pairs of the family |d*_jk,r - d_jk| / se_jk
        c = the level-quantile of t*_r

    ``k`` is significantly above ``j`` when ``d_jk + c se_jk < 0`` and below it when
    ``d_jk - c se_jk > 0``; ``j``'s rank set is ``[1 + #{k above j}, m - #{k below j}]``.
    With ``family="language"`` the maximum runs over all pairs of a language, so all of a
    language's sets hold their true ranks together with probability ``level`` (asymptotically
    in the number of tasks); with ``"backbone"`` over the pairs involving ``j`` (one critical
    value per backbone): Mogstad et al.'s marginal rank set, never wider than the simultaneous
    one, since its maximum runs over fewer pairs. A pair whose difference does not vary over
    the replicates (``se = 0``) is significant when its difference is not 0 (relative
    ``tie_rtol``, as :func:`polyjudge.cbc.bootstrap.pairwise_tau`).

    Returns integer arrays ``(low, high)`` of shape ``(..., k, m)``.
    """
    if family not in ("language", "backbone"):
        raise ValueError(f"family must be 'language' or 'backbone', got {family!r}")
    m = point.shape[-1]
    a, b = np.triu_indices(m, 1)  # the pairs (a, b), a < b: |t| is the same both ways
    diff = point[..., a] - point[..., b]  # (..., k, P)
    boot = draws[..., a] - draws[..., b]  # (..., R, k, P)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        # a replicate without a cell's tasks (incomplete panels) drops out of that pair only
        warnings.simplefilter("ignore", RuntimeWarning)
        se = np.nanstd(boot, axis=-3, ddof=1)
        t = np.abs(boot - diff[..., None, :, :]) / se[..., None, :, :]
    t = np.where(np.isfinite(t), t, 0.0)  # se = 0: decided below without a critical value
    first = a == np.arange(m)[:, None]  # (m, P): backbone j is the pair's a, or its b
    second = b == np.arange(m)[:, None]
    if family == "language":  # (..., R, k): one critical value per language
        critical = np.quantile(t.max(axis=-1), level, axis=-2)[..., None, None]
    else:  # (..., R, k, m): one per backbone j, over the pairs involving j
        involved = np.where(first | second, t[..., None, :], 0.0).max(axis=-1)
        critical = np.quantile(involved, level, axis=-3)[..., None]
    margin = critical * se[..., None, :]  # (..., k, m, P): the pair as j's test sees it
    scale = tie_rtol * np.abs(point).max(axis=-1)[..., None, None]
    varies = se[..., None, :] > 0
    a_above = np.where(varies, diff[..., None, :] - margin > 0, diff[..., None, :] > scale)
    b_above = np.where(varies, diff[..., None, :] + margin < 0, diff[..., None, :] < -scale)
    above_j = (second & a_above) | (first & b_above)  # the other backbone is above j
    below_j = (first & a_above) | (second & b_above)
    return ((1 + above_j.sum(axis=-1)).astype(int), (m - below_j.sum(axis=-1)).astype(int))


def leaderboard(panel: Panel, estimator: str | None = None, n_replicates: int = 1000,
                level: float = 0.95, seed=0) -> pd.DataFrame:
    """One row per language x backbone (panel order): for ``raw`` and ``cbc`` the mean, its
    interval (``mean_{raw,cbc}_low`` / ``_high``), the rank (1 = best, ties share the better
    rank), the marginal rank interval (``rank_*_low`` / ``_high``: per backbone), the group
    ``rank_ub_*`` (module docstring) and the rank set simultaneous over the language
    (``rank_*_simultaneous_low`` / ``_high``, :func:`rank_sets`), from the same replicates.

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
        set_low, set_high = rank_sets(point[name], draws, level)
        frame[f"rank_{name}_simultaneous_low"] = set_low.ravel()
        frame[f"rank_{name}_simultaneous_high"] = set_high.ravel()
        frame[f"rank_ub_{name}"] = frame[f"rank_{name}_low"]
    return frame
