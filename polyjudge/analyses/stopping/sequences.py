"""Confidence sequences for the mean of a stream of per-item contrasts (docs/methods.md, 10.7).

Each function takes observations ``x`` with time on axis -2 and quantities on axis -1 (any
leading axes, e.g. replay orders), and returns the interval after every observation: arrays of
the same shape. An interval at time ``t`` uses ``x[..., :t, :]`` only, and the sequence holds
at all ``t`` at once with probability at least ``1 - alpha`` (per quantity; ``alpha`` broadcasts
over the last axis, so a union bound is an ``alpha`` divided by the number of quantities).

* :func:`asymptotic_cs`: the Gaussian-mixture asymptotic confidence sequence of Waudby-Smith,
  Arbour, Sinha, Kennedy and Ramdas (Annals of Statistics 2024): its width follows the running
  standard deviation; valid as t grows (time-uniform central limit theory).
* :func:`bernstein_cs`: the predictable plug-in empirical-Bernstein sequence of Waudby-Smith and
  Ramdas (JRSSB 2024, eq. 13; Howard et al., Annals of Statistics 2021) for data known to lie in
  ``[lo, hi]``: exact at every ``t``, but it pays for the a-priori range.
"""
from __future__ import annotations

import numpy as np


def mixture_rho(alpha, t_star: float) -> np.ndarray:
    """Mixing scale ``rho`` that (approximately) minimises the Gaussian-mixture width at
    ``t_star`` observations: ``sqrt((-2 log alpha + log(-2 log alpha + 1)) / t_star)``."""
    a = -2.0 * np.log(np.asarray(alpha, dtype=float))
    return np.sqrt((a + np.log(a + 1.0)) / float(t_star))


def mixture_boundary(t, sd, alpha, rho) -> np.ndarray:
    """Half-width of the two-sided Gaussian-mixture sequence after ``t`` observations of
    standard deviation ``sd``: ``sd * sqrt(2 (t rho^2 + 1) / (t^2 rho^2) * log(sqrt(t rho^2 + 1)
    / alpha))`` (Robbins' normal mixture of ``exp(lambda S_t - lambda^2 t sd^2 / 2)``)."""
    t = np.asarray(t, dtype=float)
    r2 = np.asarray(rho, dtype=float) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(sd) * np.sqrt(2.0 * (t * r2 + 1.0) / (t ** 2 * r2)
                                        * np.log(np.sqrt(t * r2 + 1.0) / np.asarray(alpha)))


def running_moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Count, mean and population variance (ddof 0) after every observation (axis -2)."""
    t = np.arange(1, x.shape[-2] + 1, dtype=float)[:, None]
    mean = np.cumsum(x, axis=-2) / t
    # centre on the first observation so that the sums do not lose precision
    shifted = x - x[..., :1, :]
    var = np.cumsum(shifted ** 2, axis=-2) / t - (np.cumsum(shifted, axis=-2) / t) ** 2
    return t, mean, np.maximum(var, 0.0)


def asymptotic_cs(x: np.ndarray, alpha, t_star: float) -> tuple[np.ndarray, np.ndarray]:
    """Running mean and Gaussian-mixture half-width (Waudby-Smith et al. 2024, the two-sided
    asymptotic CS with the running variance), ``rho`` tuned for ``t_star`` observations.
    The half-width is infinite before two observations and while every observation is equal
    (a zero variance estimate says nothing about the spread; a rubric's integer scores can
    repeat for a while)."""
    t, mean, var = running_moments(np.asarray(x, dtype=float))
    half = mixture_boundary(t, np.sqrt(var), alpha, mixture_rho(alpha, t_star))
    return mean, np.where((t >= 2) & (var > 0), half, np.inf)


def bernstein_cs(x: np.ndarray, alpha, lo, hi, cap: float = 0.5
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of the predictable plug-in empirical-Bernstein sequence for
    data in ``[lo, hi]`` (per quantity): on ``y = (x - lo) / (hi - lo)`` in [0, 1],
    ``sum lambda_i y_i / sum lambda_i +- (log(2/alpha) + sum v_i psi(lambda_i)) / sum lambda_i``
    with ``v_i = 4 (y_i - mu_{i-1})^2``, ``psi(l) = (-log(1-l) - l) / 4`` and
    ``lambda_i = min(sqrt(2 log(2/alpha) / (sigma2_{i-1} i log(1+i))), cap)``, where ``mu`` and
    ``sigma2`` are the regularised running mean and variance of WSR (2024). The bounds are
    intersected with ``[lo, hi]``."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    y = (np.asarray(x, dtype=float) - lo) / (hi - lo)
    n = y.shape[-2]
    i = np.arange(1, n + 1, dtype=float)[:, None]
    mu = (0.5 + np.cumsum(y, axis=-2)) / (i + 1.0)                       # mu_i, i = 1..n
    mu_prev = np.concatenate([np.full_like(y[..., :1, :], 0.5), mu[..., :-1, :]], axis=-2)
    sigma2 = (0.25 + np.cumsum((y - mu) ** 2, axis=-2)) / (i + 1.0)
    sigma2_prev = np.concatenate([np.full_like(y[..., :1, :], 0.25), sigma2[..., :-1, :]],
                                 axis=-2)
    log_term = np.log(2.0 / np.asarray(alpha, dtype=float))
    lam = np.minimum(np.sqrt(2.0 * log_term / (sigma2_prev * i * np.log1p(i))), cap)
    psi = (-np.log1p(-lam) - lam) / 4.0
    v = 4.0 * (y - mu_prev) ** 2
    sum_lam = np.cumsum(lam, axis=-2)
    centre = np.cumsum(lam * y, axis=-2) / sum_lam
    half = (log_term + np.cumsum(v * psi, axis=-2)) / sum_lam
    scale = hi - lo
    lower = lo + scale * np.clip(centre - half, 0.0, 1.0)
    upper = lo + scale * np.clip(centre + half, 0.0, 1.0)
    return lower, upper


def fixed_n_interval(x: np.ndarray, alpha) -> tuple[np.ndarray, np.ndarray]:
    """Running mean and the fixed-n Student-t half-width (ddof 1): the naive interval that is
    valid at one planned ``n`` but not when rechecked after every round."""
    from scipy.special import stdtrit  # the Student-t quantile (lighter than scipy.stats)

    t, mean, var = running_moments(np.asarray(x, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = np.sqrt(var * t / (t - 1.0))
        quantile = stdtrit(np.maximum(t - 1.0, 1.0), 1.0 - np.asarray(alpha) / 2.0)
        half = quantile * sd / np.sqrt(t)
    return mean, np.where(t >= 2, half, np.inf)
