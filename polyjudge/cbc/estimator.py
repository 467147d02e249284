"""The CBC estimator: double-centring of the language x backbone cell-mean matrix.

CBC paper, section 3 (docs/methods.md section 1). With cell means ``M[l, b]``,

    beta[l, b] = M[l, b] - M[., b] - M[l, .] + M[., .]
    T_cbc[t, l, b] = T[t, l, b] - beta[l, b]

``M - beta`` is additive (row effect + column effect), so after CBC every language ranks the
backbones in the order of the column means, and no language's mean over backbones moves.
All functions broadcast over leading axes: a (replicates, languages, backbones) stack works.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.panel import Panel, nanmean


def double_center(cell_means: np.ndarray) -> np.ndarray:
    """Interaction ``beta`` of ``(..., k, m)`` cell means; rows and columns of beta sum to 0."""
    col = cell_means.mean(axis=-2, keepdims=True)
    row = cell_means.mean(axis=-1, keepdims=True)
    grand = cell_means.mean(axis=(-2, -1), keepdims=True)
    return cell_means - col - row + grand


def cbc_calibrate(matrix: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Calibrated scores or cell means: subtract beta (broadcast over tasks or replicates)."""
    return matrix - beta


def cbc_weights(cell_means: np.ndarray) -> np.ndarray:
    """CBC-Weighted backbone weights ``w_b ∝ 1 / Var_l M[l, b]`` (ddof 0), summing to 1.

    Backbones whose means do not vary over languages share all the weight equally: the limit
    of ``1 / Var`` as their variance goes to 0 (a small held-out half can give one).
    """
    var = cell_means.var(axis=-2)
    constant = var == 0
    with np.errstate(divide="ignore"):
        inv = np.where(constant.any(axis=-1, keepdims=True), constant.astype(float), 1.0 / var)
    return inv / inv.sum(axis=-1, keepdims=True)


def double_center_weighted(cell_means: np.ndarray) -> np.ndarray:
    """CBC-Weighted interaction: the language margin is the weighted mean over backbones.

    Rankings after calibration equal plain CBC's (``M - beta`` is still additive).
    """
    w = cbc_weights(cell_means)[..., None, :]
    col = cell_means.mean(axis=-2, keepdims=True)
    row = (cell_means * w).sum(axis=-1, keepdims=True)
    grand = (col * w).sum(axis=-1, keepdims=True)
    return cell_means - col - row + grand


def rank_within_language(matrix: np.ndarray) -> np.ndarray:
    """Rank of each backbone within its language row, 1 = highest score (ties share the min)."""
    import scipy.stats  # here, not at the top: most steps never rank, and it costs ~0.5 s

    return scipy.stats.rankdata(-matrix, method="min", axis=-1).astype(int)


def rank_by_count(matrix: np.ndarray) -> np.ndarray:
    """Rank within the last axis, 1 = highest, ties sharing the better rank: one plus the number
    of strictly higher entries. The ranks of :func:`rank_within_language` for finite values,
    without scipy and stacked over any leading axes (bootstrap replicates); a NaN entry is
    higher than nothing, so callers mask the ranks of NaN cells themselves. One comparison
    with each column in turn, not an ``(..., m, m)`` array: half the time on replicate stacks."""
    matrix = np.asarray(matrix)
    ranks = np.ones(matrix.shape, dtype=np.int64)
    for column in range(matrix.shape[-1]):
        ranks += matrix[..., column:column + 1] > matrix
    return ranks


def finite_sample_radius(sigma: float, n_tasks: int, n_languages: int, n_backbones: int,
                         eps: float) -> float:
    """Gaussian union-bound radius for all ``m k`` beta cells at level ``eps``.

    ``r = sigma * sqrt(2 (1-1/m)(1-1/k) ln(2 m k / eps) / n)``; the per-cell variance of beta is
    ``sigma^2 (1-1/m)(1-1/k) / n`` (CBC paper, Proposition on finite-sample error).
    """
    m, k, n = n_backbones, n_languages, n_tasks
    return float(sigma * np.sqrt(2 * (1 - 1 / m) * (1 - 1 / k) * np.log(2 * m * k / eps) / n))


def tasks_for_radius(sigma: float, target: float, n_languages: int, n_backbones: int,
                     eps: float) -> int | None:
    """Smallest number of tasks whose finite-sample radius is below ``target``.

    The paper's power statement: the radius falls below max|beta| / 2 from n = 52 on devai.
    None when ``target`` is 0 (a panel without interaction, e.g. two judges scoring alike):
    no number of tasks gives a radius below 0.
    """
    if not target > 0:
        return None
    unit = finite_sample_radius(sigma, 1, n_languages, n_backbones, eps)  # r(n) = unit / sqrt(n)
    n = int(np.floor((unit / target) ** 2)) + 1
    return max(n, 1)


def residual_sd(values: np.ndarray) -> float:
    """Population SD (ddof 0) of the residuals of the additive two-way model of ``T``.

    Model: ``T[t,l,b] = mu(t) + gamma(l) + alpha(b) + beta(l,b) + e`` (task, language and backbone
    main effects plus the language x backbone interaction CBC estimates). On devai this sigma
    (10.905) gives a radius of about 4.9, against 9.96 for the paper's total SD.
    Missing cells are omitted from the means (exact on a complete panel).
    """
    x = values
    mean = lambda axes: nanmean(x, axis=axes, keepdims=True)
    cells = mean(0)
    fitted = mean((1, 2)) + cells - cells.mean(axis=(1, 2), keepdims=True)
    return float(np.nanstd(x - fitted))


@dataclass(frozen=True)
class CBCResult:
    """CBC on one panel: the interaction, the calibrated cell means and the rankings."""

    beta: np.ndarray
    beta_weighted: np.ndarray
    cell_means: np.ndarray
    calibrated: np.ndarray
    rank_raw: np.ndarray
    rank_cbc: np.ndarray


def cbc_result(cell_means: np.ndarray, beta: np.ndarray) -> CBCResult:
    """Assemble a :class:`CBCResult` from cell means and the interaction estimated from them."""
    calibrated = cbc_calibrate(cell_means, beta)
    return CBCResult(beta=beta, beta_weighted=double_center_weighted(cell_means),
                     cell_means=cell_means, calibrated=calibrated,
                     rank_raw=rank_within_language(cell_means),
                     rank_cbc=rank_within_language(calibrated))


def fit_cbc(panel: Panel) -> CBCResult:
    """Fit CBC on the panel's cell means (missing tasks omitted from each cell's mean).

    On an incomplete panel this is the "available means" estimator; see
    :func:`polyjudge.analyses.missing.estimate_beta` for the others.
    """
    means = panel.cell_means()
    if not np.isfinite(means).all():
        raise ValueError("CBC needs every language x backbone cell to have at least one score")
    return cbc_result(means, double_center(means))


def rankings_frame(panel: Panel, result: CBCResult) -> pd.DataFrame:
    """Output contract ``rankings.csv``: language, backbone, mean_raw, mean_cbc, rank_raw,
    rank_cbc."""
    frame = panel.matrix_frame(result.cell_means, "mean_raw")
    frame["mean_cbc"] = result.calibrated.ravel()
    frame["rank_raw"] = result.rank_raw.ravel()
    frame["rank_cbc"] = result.rank_cbc.ravel()
    return frame


# --- R^2 of one-hot OLS on run-level rows ----------------------------------------------------

def _factor_codes(runs: pd.DataFrame, term: tuple[str, ...], cache: dict) -> np.ndarray:
    """Dense integer codes of a factor or of an interaction of factors."""
    codes = np.zeros(len(runs), dtype=np.int64)
    for col in term:
        if col not in cache:
            cache[col] = pd.factorize(runs[col], sort=False)
        c, levels = cache[col]
        codes = codes * len(levels) + c
    return np.unique(codes, return_inverse=True)[1] if len(term) > 1 else codes


def ols_r_squared(runs: pd.DataFrame, terms: list[tuple[str, ...]], score: str = "score",
                  tol: float = 1e-10, max_sweeps: int = 10_000) -> float:
    """R^2 of least squares on an intercept plus a full one-hot block per term.

    The residual of the projection onto the span of all blocks is found by alternating
    projections (repeatedly subtracting group means, term by term; Halperin's theorem), which
    handles the rank-deficient design without building it: memory and time grow linearly with
    the rows. On a balanced panel one or two sweeps converge.
    """
    y = runs[score].to_numpy(dtype=float)
    cache: dict = {}
    groups = []
    for term in terms:
        codes = _factor_codes(runs, term, cache)
        groups.append((codes, np.bincount(codes)))
    resid = y - y.mean()
    scale = np.abs(resid).max() or 1.0
    for _ in range(max_sweeps):
        largest = 0.0
        for codes, counts in groups:
            means = np.bincount(codes, weights=resid, minlength=len(counts)) / counts
            resid -= means[codes]
            largest = max(largest, float(np.abs(means).max()))
        if largest <= tol * scale:
            break
    else:
        raise RuntimeError(f"R^2 projections did not converge in {max_sweeps} sweeps")
    total = float(((y - y.mean()) ** 2).sum())
    if not total > 0:  # constant scores: nothing to explain, R^2 undefined
        return float("nan")
    return 1.0 - float(resid @ resid) / total


TWO_WAY_TERMS = [("task",), ("backbone",), ("language",), ("framework",), ("backbone", "language")]
FULL_TERMS = TWO_WAY_TERMS + [("task", "language")]


def r_squared_from_stats(n_tlb, sum_tlb, n_tlf, n_lbf, sum_f, sum_sq: float, shift: float,
                         spread: tuple[float, float], full: bool, tol: float = 1e-10,
                         max_sweeps: int = 10_000) -> float:
    """R^2 of :data:`TWO_WAY_TERMS` (``full=False``) or :data:`FULL_TERMS` from sufficient
    statistics.

    Same least squares as :func:`ols_r_squared`, without the rows. The two-way model spans
    task + framework + backbone:language (its language and backbone blocks lie in the
    interaction's span), the full model task:language + backbone:language + framework; fitted
    ``A[t, l] + C[l, b] + D[f]`` (``A`` constant over ``l`` in the two-way model). Backfitting
    (Gauss-Seidel on the normal equations, Halperin's alternating projections) needs only the
    run counts ``n[t,l,b]``, ``n[t,l,f]``, ``n[l,b,f]`` and the score sums per block
    ``sum[t,l,b]``, ``sum[f]``; then ``RSS = sum y^2 - fitted . y``. ``sum_sq`` is
    ``sum (y - shift)^2`` (shifted for accuracy); ``spread`` the lowest and highest score (the
    convergence scale, as in :func:`ols_r_squared`).
    """
    n3 = np.asarray(n_tlb, dtype=float)
    n_tlf, n_lbf = np.asarray(n_tlf, dtype=float), np.asarray(n_lbf, dtype=float)
    n = n3.sum()
    s3 = np.asarray(sum_tlb, dtype=float) - shift * n3  # sums of y - shift
    s_tl, s_lb = s3.sum(axis=2), s3.sum(axis=0)
    n_f = n_tlf.sum(axis=(0, 1))
    s_f = np.asarray(sum_f, dtype=float) - shift * n_f
    n_tl, n_lb = n3.sum(axis=2), n3.sum(axis=0)
    n_t = n_tl.sum(axis=1)
    a = np.zeros_like(n_tl)
    c = np.zeros_like(n_lb)
    d = np.zeros_like(n_f)
    mean = s_f.sum() / n
    scale = max(spread[1] - shift - mean, mean - (spread[0] - shift)) or 1.0

    def step(resid, count):
        return np.divide(resid, count, out=np.zeros_like(resid), where=count > 0)

    for _ in range(max_sweeps):
        resid = (s_tl - n_tl * a - np.einsum("tlb,lb->tl", n3, c)
                 - np.einsum("tlf,f->tl", n_tlf, d))
        update = step(resid, n_tl) if full else step(resid.sum(axis=1), n_t)[:, None]
        a = a + update
        largest = float(np.abs(update).max(initial=0.0))
        resid = s_lb - np.einsum("tlb,tl->lb", n3, a) - n_lb * c - np.einsum("lbf,f->lb", n_lbf, d)
        update = step(resid, n_lb)
        c = c + update
        largest = max(largest, float(np.abs(update).max(initial=0.0)))
        resid = (s_f - np.einsum("tlf,tl->f", n_tlf, a) - np.einsum("lbf,lb->f", n_lbf, c)
                 - n_f * d)
        update = step(resid, n_f)
        d = d + update
        largest = max(largest, float(np.abs(update).max(initial=0.0)))
        if largest <= tol * scale:
            break
    else:
        raise RuntimeError(f"R^2 projections did not converge in {max_sweeps} sweeps")
    explained = float((s_tl * a).sum() + (s_lb * c).sum() + (s_f * d).sum())
    total = sum_sq - s_f.sum() ** 2 / n
    if not total > 0:  # constant scores: nothing to explain (NaN, as ols_r_squared)
        return float("nan")
    return 1.0 - (sum_sq - explained) / total
