"""Intervals and paired tests for the Judge-LS rates."""
from __future__ import annotations

import numpy as np
import scipy.stats


def wilson_interval(successes, n, confidence: float = 0.95):
    """Wilson score interval ``(low, high)`` for ``successes`` out of ``n`` (arrays broadcast).

    ``(p + z^2/2n -/+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``, ``z`` the normal quantile;
    NaN where ``n = 0``.
    """
    k, n = np.asarray(successes, float), np.asarray(n, float)
    z = scipy.stats.norm.isf((1 - confidence) / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denom = 1 + z**2 / n
        center = (p + z**2 / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
    return center - half, center + half


def mcnemar_exact_p(b, c):
    """Exact two-sided McNemar p: binomial test of ``b`` vs ``c`` discordant pairs at 1/2.

    ``p = min(1, 2 P(X <= min(b, c)))``, ``X ~ Binomial(b + c, 1/2)``; 1 when ``b + c = 0``.
    """
    b, c = np.asarray(b), np.asarray(c)
    return np.minimum(1.0, 2 * scipy.stats.binom.cdf(np.minimum(b, c), b + c, 0.5))
