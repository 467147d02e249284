"""Which items to label: sampling probabilities that favour the items the judges are least
sure of, and the inverse-probability-weighted PPI++ mean with those known probabilities
(Zrnic and Candes, "Active statistical inference", ICML 2024; docs/methods.md, "Choosing
the items to label").

Each label is one draw of an item with probability ``p_i`` (summing to 1 over a language's
``N`` items). The variance of the prediction-powered term ``w (y - lambda f)`` with
``w = 1/(N p)`` is smallest for ``p_i`` proportional to the item's error sd
``sqrt(E[(y_i - lambda f_i - m)^2])`` (Zrnic and Candes, section 3; Hansen and Hurwitz's
probability-proportional-to-size draws). The judges' spread on the item (the standard
deviation of their scores) stands in for it, through a line fitted on the labels so far
(:func:`error_model`: the error every item shares, and how much of the spread is error);
mixing with uniform bounds every probability below (``uniform_share / N``), so no item's
weight can explode. Uniform sampling is the fallback.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from .anytime import influence_terms, tuned_coefficients

METHODS = ("active", "uniform")
UNIFORM_SHARE = 0.2
"""Share of each draw's probability spread evenly: every item keeps at least
``UNIFORM_SHARE / N``, so its weight ``1/(N p)`` is at most ``1 / UNIFORM_SHARE``."""
PILOT_MIN = 30
"""Labels of a language drawn uniformly before the spread is trusted (the error model needs
them to tell whether the judges' spread tracks their error)."""


def judge_spread(scores) -> np.ndarray:
    """Items x judges -> each item's standard deviation over its judges (ddof 0, missing
    scores left out; 0 with one judge). For 0/1 verdicts with mean ``m`` it is
    ``sqrt(m (1 - m))``, the error sd of a calibrated mean of the verdicts."""
    scores = np.asarray(scores, dtype=float)
    seen = np.isfinite(scores)
    count = np.maximum(seen.sum(axis=-1), 1)
    filled = np.where(seen, scores, 0.0)
    mean = filled.sum(axis=-1) / count
    spread = np.sqrt(np.where(seen, (filled - mean[..., None]) ** 2, 0.0).sum(axis=-1) / count)
    return np.nan_to_num(spread, nan=0.0)


def _weighted_line(x, y, w, axis):
    """Weighted least-squares intercept and slope of ``y`` on ``x`` (slope 0 where ``x`` has
    no spread), along ``axis``."""
    total = w.sum(axis=axis)
    mx, my = (w * x).sum(axis=axis) / total, (w * y).sum(axis=axis) / total
    var = (w * x * x).sum(axis=axis) / total - mx ** 2
    cov = (w * x * y).sum(axis=axis) / total - mx * my
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(var > 1e-12 * np.maximum(mx ** 2, 1.0), cov / var, 0.0)
    return my - slope * mx, slope


def error_model(labels, predictions, spread, weights, axis: int = -1
                ) -> tuple[np.ndarray, np.ndarray]:
    """How the judges' error grows with their spread, from the labels so far: the prediction
    is first put on the labels' scale (the weighted least-squares line of ``y`` on ``f``, so
    judges scored 0-100 and labels 0/1 compare), then the line
    ``|y - yhat| ~ shared + scale spread`` is fitted (each label weighted by ``w = 1/(N p)``,
    so both fits describe all the items); both at least 0: ``shared`` the error every item
    has, ``scale`` how much of the spread is error. Fewer than :data:`PILOT_MIN` labels: no
    fit, ``(nan, nan)``."""
    y, f, s = (np.asarray(v, dtype=float) for v in (labels, predictions, spread))
    w = np.broadcast_to(np.asarray(weights, dtype=float), y.shape)
    if y.shape[axis] < PILOT_MIN:
        shape = tuple(np.delete(np.array(y.shape), axis % y.ndim))
        return np.full(shape, np.nan), np.full(shape, np.nan)
    intercept, slope = _weighted_line(f, y, w, axis)
    fitted = np.expand_dims(intercept, axis) + np.expand_dims(slope, axis) * f
    shared, scale = _weighted_line(s, np.abs(y - fitted), w, axis)
    scale = np.maximum(scale, 0.0)
    total = w.sum(axis=axis)
    mean_error = (w * np.abs(y - fitted)).sum(axis=axis) / total
    mean_spread = (w * s).sum(axis=axis) / total
    return np.maximum(mean_error - scale * mean_spread, 0.0), scale


def sampling_probabilities(spread, *, shared=np.nan, scale=np.nan,
                           uniform_share: float = UNIFORM_SHARE, method: str = "active"
                           ) -> np.ndarray:
    """Draw probabilities over a language's items (last axis; they sum to 1):
    ``p = (1 - uniform_share) u / sum(u) + uniform_share / N`` with the estimated error sd
    ``u = shared + scale spread`` (:func:`error_model`; leading axes of ``spread``
    broadcast against ``shared`` and ``scale``). ``method="uniform"``, no fit yet (``nan``:
    fewer than :data:`PILOT_MIN` labels, so nothing says yet whether the spread tracks the
    error) or no estimated error at all gives ``1/N``."""
    if method not in METHODS:
        raise ValueError(f"sampling method must be one of {', '.join(METHODS)}, got {method!r}")
    if not 0.0 < uniform_share <= 1.0:
        raise ValueError(f"uniform_share must be in (0, 1], got {uniform_share}")
    spread = np.asarray(spread, dtype=float)
    n = spread.shape[-1]
    uniform = np.full(spread.shape, 1.0 / n)
    if method == "uniform":
        return uniform
    shared = np.asarray(shared, dtype=float)[..., None]
    scale = np.asarray(scale, dtype=float)[..., None]
    u = np.nan_to_num(shared) + np.nan_to_num(scale) * spread
    total = u.sum(axis=-1, keepdims=True)
    total = np.where(np.isnan(shared) | np.isnan(scale), 0.0, total)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (1.0 - uniform_share) * u / total + uniform_share / n
    return np.where(total > 0, p, uniform)


def draw_items(probabilities, size: int, rng: np.random.Generator, exclude=None) -> np.ndarray:
    """``size`` distinct item indices drawn with ``probabilities``, none of them in
    ``exclude`` (items already labelled): draws with replacement, a draw that repeats an item
    drawn again (the estimator counts each label once, which is the draw with replacement
    when the labels are few next to the items). Fewer when fewer items are left."""
    p = np.asarray(probabilities, dtype=float).copy()
    if exclude is not None and len(exclude):
        p[np.asarray(exclude, dtype=int)] = 0.0
    left = int(np.count_nonzero(p))
    size = min(int(size), left)
    if size == 0:
        return np.array([], dtype=int)
    # Efraimidis-Spirakis keys: the `size` largest of u^(1/p) are a successive draw of
    # `size` distinct items with these probabilities, in one pass
    with np.errstate(divide="ignore"):
        keys = np.log(rng.random(p.shape)) / p
    chosen = np.argpartition(-keys, size - 1)[:size]
    return chosen[np.argsort(-keys[chosen])]


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered mean: ``estimate`` and its ``lower`` / ``upper`` bound at
    ``level``, its standard error ``se``, the power tuning ``lam`` used and ``n_labels``."""

    estimate: float
    se: float
    lower: float
    upper: float
    lam: float
    n_labels: int
    level: float


def ipw_ppi_mean(labels, predictions, probabilities, *, n_items: int, predictor_mean: float,
                 level: float = 0.95, lam=None) -> PPIEstimate:
    """The inverse-probability-weighted PPI++ mean of a language's human labels.

    ``theta = mean_j psi_j`` with ``psi_j = w_j y_j - lambda (w_j f_j - fbar) - m (w_j - 1)``
    and ``w_j = 1 / (N p_j)`` (:func:`.anytime.influence_terms`; ``p_j`` the recorded
    probability of the draw that picked label ``j``'s item), power-tuned ``lambda`` and ``m``
    (:func:`.anytime.tuned_coefficients`; or ``lam`` with ``m = 0``), and the normal interval
    ``theta +- z sd(psi) / sqrt(n)`` (Zrnic and Candes 2024, Theorem 1). With uniform
    ``p = 1/N`` it is PPI++'s interval with ``lambda = Cov(y, f) / Var(f)`` (the mean of all
    ``N`` predictions is known exactly, not estimated)."""
    y = np.asarray(labels, dtype=float)
    f = np.asarray(predictions, dtype=float)
    p = np.asarray(probabilities, dtype=float)
    n = len(y)
    if n < 2:
        raise ValueError("a prediction-powered mean needs at least 2 labels")
    w = 1.0 / (n_items * p)
    shift = 0.0
    if lam is None:
        lam, shift = (float(v) for v in tuned_coefficients(w * y, w * f - predictor_mean,
                                                           w - 1.0, axis=0))
    psi = influence_terms(y, f, w, predictor_mean, lam, shift)
    est, se = float(psi.mean()), float(psi.std(ddof=1) / np.sqrt(n))
    z = float(ndtri(0.5 + level / 2.0))
    return PPIEstimate(est, se, est - z * se, est + z * se, float(lam), n, level)
