"""The task-bootstrap simultaneous band for all CBC interaction cells (CBC paper, section 3).

The paper's finite-sample radius is a Gaussian union bound over all ``k m`` cells;
:func:`bootstrap_band` gives the task-bootstrap simultaneous band (max-|t| over cells) next to
it, written by the workflow's calibrate stage as ``cbc/bands.csv``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.panel import Panel
from .bootstrap import replicate_chunk, task_bootstrap_chunks, weighted_cell_means
from .estimator import double_center, finite_sample_radius, rank_by_count, residual_sd


@dataclass(frozen=True)
class SimultaneousBand:
    """Task-bootstrap simultaneous band for all beta cells, with the Gaussian union radii.

    ``frame``: language, backbone, beta, se, band_low, band_high (``beta +- critical_value x
    se``), max_dev_low, max_dev_high (``beta +- max_dev_radius``), excludes_zero (the studentised
    band excludes 0). ``critical_value``: the ``level``-quantile of the bootstrap max-|t|;
    ``max_dev_radius``: the ``level``-quantile of the unstudentised max |deviation|;
    ``radius_total_sd`` / ``radius_residual_sd``: :func:`finite_sample_radius` at
    ``eps = 1 - level`` with sigma the total SD (ddof 0, the paper's protocol) or
    :func:`residual_sd`.
    """

    frame: pd.DataFrame
    critical_value: float
    max_dev_radius: float
    radius_total_sd: float
    radius_residual_sd: float
    level: float
    n_replicates: int


def bootstrap_band(panel: Panel, n_replicates: int = 2000, seed=0,
                   level: float = 0.95, chunk_size: int | None = None) -> SimultaneousBand:
    """Bootstrap-t max-|t| simultaneous band for ``beta`` from ``n_replicates`` task bootstraps.

    On a complete panel ``beta_hat = mean_t D_t`` with ``D_t = DC(T[t])``, the double-centred
    matrix of task t, so ``se[l, b] = SD_t(D_t[l, b]) / sqrt(n)`` (ddof 1). Replicate ``r`` draws
    tasks with replacement (:func:`polyjudge.cbc.bootstrap.task_bootstrap`, multiplicities ``w``)
    and gives ``beta*_r`` and ``se*_r``, the same formulas with weights ``w``;
    ``t_r = max_{l,b} |beta*_r - beta_hat| / se*_r``. The critical value ``c`` is the
    ``level``-quantile of ``t_r`` and ``beta_hat +- c se`` covers all ``k m`` cells at once
    (docs/methods.md 10.4). Each replicate is studentised by its own ``se*_r``: dividing by the
    fixed ``se`` instead ignores the noise of the per-cell SEs, which the max over cells picks
    up (about 86-90% coverage at n = 55, k = 8, m = 6 in simulation, against 94-95% here).
    Needs a complete panel. Replicates are drawn and reduced in chunks of ``chunk_size``
    (default: within :data:`polyjudge.cbc.bootstrap.MEMORY_BUDGET`), the same stream in order, so
    memory is bounded and the band does not depend on the chunk size.
    """
    values = panel.values
    if not panel.is_complete:
        raise ValueError("the bootstrap band needs a complete panel (fill or drop missing cells)")
    if n_replicates < 100:
        raise ValueError(f"use at least 100 bootstrap replicates for a band, got {n_replicates}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    n, k, m = values.shape
    per_task = double_center(values)
    beta = per_task.mean(axis=0)
    se = per_task.std(axis=0, ddof=1) / np.sqrt(n)
    t_max, dev_max = [], []
    chunk_size = chunk_size or replicate_chunk(n_replicates, 4 * n + 8 * k * m)
    for bootstrap in task_bootstrap_chunks(n, n_replicates, np.random.default_rng(seed),
                                           chunk_size):
        counts = bootstrap.counts
        boot_beta = weighted_cell_means(per_task, counts)
        boot_var = np.maximum(weighted_cell_means(per_task ** 2, counts) - boot_beta ** 2, 0.0)
        boot_se = np.sqrt(boot_var / (n - 1))
        deviation = np.abs(boot_beta - beta)
        with np.errstate(divide="ignore", invalid="ignore"):
            t_max.append(np.where(boot_se > 0, deviation / boot_se, np.inf).max(axis=(1, 2)))
        dev_max.append(deviation.max(axis=(1, 2)))
    critical = float(np.quantile(np.concatenate(t_max), level))
    max_dev = float(np.quantile(np.concatenate(dev_max), level))
    frame = panel.matrix_frame(beta, "beta")
    frame["se"] = se.ravel()
    frame["band_low"] = frame["beta"] - critical * frame["se"]
    frame["band_high"] = frame["beta"] + critical * frame["se"]
    frame["max_dev_low"] = frame["beta"] - max_dev
    frame["max_dev_high"] = frame["beta"] + max_dev
    frame["excludes_zero"] = (frame["band_low"] > 0) | (frame["band_high"] < 0)
    eps = 1.0 - level
    return SimultaneousBand(
        frame=frame, critical_value=critical, max_dev_radius=max_dev,
        radius_total_sd=finite_sample_radius(float(values.std()), n, k, m, eps),
        radius_residual_sd=finite_sample_radius(residual_sd(values), n, k, m, eps),
        level=level, n_replicates=n_replicates)


def calibrated_rank_replicates(values: np.ndarray, beta: np.ndarray, se: np.ndarray | None,
                               grid: tuple, fitted_shape: tuple[int, int], n_replicates: int,
                               seed) -> np.ndarray:
    """``(R, k, m)`` calibrated ranks of ``R`` replicates of a new panel ``values`` (NaN where a
    replicate's cell has no task), stacked: the new tasks' bootstrap weights and the beta draws
    are arrays (docs/methods.md section 10.6).

    ``beta`` (k, m) of the new panel's cells (0 where unseen); ``se`` their standard errors of a
    band (0 where unseen), or None: beta taken as exact; ``grid`` their index into the fitted
    ``(languages, backbones)`` matrices of shape ``fitted_shape``, where a draw ``beta*_r`` has
    the correlation of a double-centred matrix."""
    n, k, m = values.shape
    big_k, big_m = fitted_shape
    task_stream, beta_stream = map(np.random.default_rng,
                                   np.random.SeedSequence(seed).spawn(2))
    scale = math.sqrt((1 - 1 / big_k) * (1 - 1 / big_m))
    ranks = []
    chunk = replicate_chunk(n_replicates, n + 4 * (k * m * m + big_k * big_m))
    for bootstrap in task_bootstrap_chunks(n, n_replicates, task_stream, chunk):
        means = weighted_cell_means(values, bootstrap.counts)
        if se is not None:
            z = double_center(beta_stream.standard_normal((len(means), big_k, big_m)))
            means = means - (beta + se * z[(slice(None), *grid)] / scale)
        else:
            means = means - beta
        ranks.append(np.where(np.isfinite(means), rank_by_count(means), np.nan))
    return np.concatenate(ranks)
