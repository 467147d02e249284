"""Confidence sequences for the mean of a stream of per-item contrasts (docs/methods.md, 10.7).

Each function takes observations ``x`` with time on axis -2 and quantities on axis -1 (any
leading axes, e.g. replay orders), and returns the interval after every observation: arrays of
the same shape. An interval at time ``t`` uses ``x[..., :t, :]`` only, and the sequence holds
at all ``t`` at once with probability at least ``1 - alpha`` (per quantity; ``alpha`` broadcasts
over the last axis, so a union bound is an ``alpha`` divided by the number of quantities).

* :func:`asymptotic_cs`: the Gaussian-mixture asymptotic confidence sequence of Waudby-Smith,
  Arbour, Sinha, Kennedy and Ramdas (Annals of Statistics 2024): its width follows the running
  standard deviation; valid as t grows (time-uniform central limit theory), with a variance
  guard and a burn-in for the small samples where that theory has not set in.
* :func:`betting_cs`: the hedged-capital betting sequence of Waudby-Smith and Ramdas (JRSS-B
  2024) for data known to lie in ``[lo, hi]``: exact at every ``t`` for any distribution on the
  range, and adaptive to the variance, but it pays for the a-priori range where the spread is
  far smaller than the range.
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


def asymptotic_cs(x: np.ndarray, alpha, t_star: float, prior_var=None, prior_n: float = 1.0,
                  min_nonzero: int = 0, small_sample: bool = False
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Running mean and Gaussian-mixture half-width (Waudby-Smith et al. 2024, the two-sided
    asymptotic CS with the running variance), ``rho`` tuned for ``t_star`` observations.

    Guards for the small samples where the central limit theory has not set in: with
    ``prior_var`` (per quantity, e.g. the largest variance its range allows), the variance is
    regularised by ``prior_n`` pseudo-observations of that variance,
    ``(prior_n prior_var + t s_t^2) / (prior_n + t)``, so that a few equal values cannot make it
    collapse; the half-width is infinite until ``min_nonzero`` non-zero values are in; and with
    ``small_sample`` it is widened by :func:`small_sample_factor`. It is also infinite while
    every value is equal (a zero variance estimate says nothing about the spread)."""
    x = np.asarray(x, dtype=float)
    t, mean, var = running_moments(x)
    informative = np.cumsum(x != 0, axis=-2) >= max(min_nonzero, 1)
    usable = (t >= 2) & (var > 0) & (informative if min_nonzero else True)
    if prior_var is not None:
        var = (prior_n * np.asarray(prior_var, dtype=float) + t * var) / (prior_n + t)
    half = mixture_boundary(t, np.sqrt(var), alpha, mixture_rho(alpha, t_star))
    if small_sample:
        half = half * small_sample_factor(t, alpha)
    return mean, np.where(usable, half, np.inf)


def small_sample_factor(t, alpha) -> np.ndarray:
    """How much wider a Student-t interval is than a normal one at ``t`` observations and error
    ``alpha``, with the unbiased variance: ``t_{t-1}(1 - alpha/2) / z(1 - alpha/2) *
    sqrt(t / (t - 1))``. It accounts for the variance being estimated, tends to 1 as ``t``
    grows (so the sequence stays asymptotically the same), and matters where many quantities
    share the error (a small ``alpha``) and items are few."""
    from scipy.special import ndtri, stdtrit  # scipy only where a sequence is computed

    t = np.maximum(np.asarray(t, dtype=float), 2.0)
    upper = 1.0 - np.asarray(alpha, dtype=float) / 2.0
    return stdtrit(t - 1.0, upper) / ndtri(upper) * np.sqrt(t / (t - 1.0))


def regularised_moments(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """WSR (2024)'s regularised running mean ``(1/2 + sum y) / (i + 1)`` and variance
    ``(1/4 + sum (y - mu_i)^2) / (i + 1)`` of data in [0, 1], each *before* observation ``i``
    (predictable: 1/2 and 1/4 before the first)."""
    i = np.arange(1, y.shape[-2] + 1, dtype=float)[:, None]
    mu = (0.5 + np.cumsum(y, axis=-2)) / (i + 1.0)
    sigma2 = (0.25 + np.cumsum((y - mu) ** 2, axis=-2)) / (i + 1.0)
    first_mu, first_var = np.full_like(y[..., :1, :], 0.5), np.full_like(y[..., :1, :], 0.25)
    return (np.concatenate([first_mu, mu[..., :-1, :]], axis=-2),
            np.concatenate([first_var, sigma2[..., :-1, :]], axis=-2))


def betting_grid(lo, hi, n_grid: int = 200, points=()) -> np.ndarray:
    """Candidate means of each quantity (one column per quantity): ``n_grid`` evenly spaced
    values strictly inside ``[lo, hi]`` plus ``points`` (values to be tested exactly, e.g. 0
    and +-2 epsilon; rows of per-quantity values), sorted."""
    lo, hi = np.atleast_1d(np.asarray(lo, dtype=float)), np.atleast_1d(np.asarray(hi, dtype=float))
    frac = (np.arange(1, n_grid + 1) / (n_grid + 1.0))[:, None]
    grid = [lo + frac * (hi - lo)]
    for p in points:
        grid.append(np.clip(np.broadcast_to(np.asarray(p, dtype=float), lo.shape), lo, hi)[None])
    return np.sort(np.concatenate(grid), axis=0)


def betting_cs(x: np.ndarray, alpha, lo, hi, grid: np.ndarray | None = None, cap: float = 0.5,
               n_grid: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of the hedged-capital betting sequence (Waudby-Smith and Ramdas,
    JRSS-B 2024, section 4, with their predictable plug-in bets) for data in ``[lo, hi]``.

    On ``y = (x - lo) / (hi - lo)`` in [0, 1], a candidate mean ``m`` is rejected once
    ``max(K+_t(m), K-_t(m)) / 2 >= 1 / alpha``, with the capitals
    ``K+-_t(m) = prod_i (1 +- lambda+-_i(m) (y_i - m))``, ``lambda+_i(m) = min(lambda_i, cap/m)``,
    ``lambda-_i(m) = min(lambda_i, cap/(1 - m))`` and
    ``lambda_i = sqrt(2 log(2/alpha) / (sigma2_{i-1} i log(1 + i)))``
    (:func:`regularised_moments`). Their average is a nonnegative martingale at the true mean,
    so by Ville's inequality the sequence holds at every ``t`` at once with probability at least
    ``1 - alpha``, exactly, for any distribution on the range; it adapts to the variance.

    The set of candidates not rejected is an interval (``K+`` falls and ``K-`` rises with
    ``m``). It is evaluated on ``grid`` (:func:`betting_grid`: candidates x quantities, in the
    units of ``x``), and each bound is reported conservatively: the lower bound is the next
    float above the largest rejected candidate below the interval (so the reported interval
    contains the exact one; its ends are exact at the grid's points and within one grid step
    elsewhere). With no rejected candidate the bound is the range's end."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    grid = betting_grid(lo, hi, n_grid) if grid is None else np.asarray(grid, dtype=float)
    scale = hi - lo
    y = np.clip((np.asarray(x, dtype=float) - lo) / scale, 0.0, 1.0)
    n = y.shape[-2]
    i = np.arange(1, n + 1, dtype=float)[:, None]
    _, sigma2 = regularised_moments(y)
    log_alpha = np.log(2.0 / np.asarray(alpha, dtype=float))      # 1/alpha, halved by the hedge
    lam = np.sqrt(2.0 * log_alpha / (sigma2 * i * np.log1p(i)))
    lower = np.broadcast_to(lo, y.shape).copy()
    upper = np.broadcast_to(hi, y.shape).copy()
    grid = np.atleast_2d(grid)
    lo, scale = np.broadcast_to(lo, y.shape[-1:]), np.broadcast_to(scale, y.shape[-1:])
    log_alpha = np.broadcast_to(log_alpha, y.shape[-1:])
    for c in grid:                       # one candidate per quantity at a time: memory ~ x
        q = np.flatnonzero(np.isfinite(c))     # the quantities that have this candidate
        if not q.size:
            continue
        whole = q.size == y.shape[-1]
        yq, lamq = (y, lam) if whole else (y[..., q], lam[..., q])
        m = (c[q] - lo[q]) / scale[q]
        with np.errstate(divide="ignore"):
            up_bet, down_bet = np.minimum(lamq, cap / m), np.minimum(lamq, cap / (1.0 - m))
        above = np.cumsum(np.log1p(up_bet * (yq - m)), axis=-2) >= log_alpha[q]  # m below
        below = np.cumsum(np.log1p(-down_bet * (yq - m)), axis=-2) >= log_alpha[q]
        if whole:
            lower = np.where(above, np.maximum(lower, np.nextafter(c, np.inf)), lower)
            upper = np.where(below, np.minimum(upper, np.nextafter(c, -np.inf)), upper)
        else:
            lower[..., q] = np.where(above, np.maximum(lower[..., q], np.nextafter(c[q], np.inf)),
                                     lower[..., q])
            upper[..., q] = np.where(below, np.minimum(upper[..., q],
                                                       np.nextafter(c[q], -np.inf)), upper[..., q])
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
