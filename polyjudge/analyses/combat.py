"""ComBat (Johnson, Li & Rabinovic 2007), parametric empirical Bayes, as a held-out method's fit.

Standard ComBat (one location and scale per language x backbone batch) and the paper's pooled
form (one per language), fitted on bootstrap-weighted in-bag scores; the methods
:func:`polyjudge.analyses.baselines.combat` and ``combat_eb`` apply the fits (docs/methods.md
section 2).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cbc.bootstrap import weighted_cell_means


def _combat_posterior(gamma_hat, delta_hat, mass, mean_z2, gamma_bar, t2, a, b,
                      conv: float = 1e-4, max_iter: int = 1000):
    """Iterated posterior means of the batch location and scale (JLR 2007, eq. 3.1-3.2).

    ``gamma* = (n t2 gamma_hat + delta* gamma_bar) / (n t2 + delta*)``,
    ``delta* = (b + sum (Z - gamma*)^2 / 2) / (n / 2 + a - 1)``, iterated until the relative
    change is below ``conv`` (sva / neuroCombat's rule, per batch: the last axis is the
    feature axis the priors were pooled over). ``sum (Z - g)^2 = n (mean Z^2 - 2 g gamma_hat +
    g^2)`` from the weighted moments, so in-bag multiplicities act as repeated samples.
    """
    g_old, d_old = gamma_hat, delta_hat
    active = np.ones(gamma_hat.shape[:-1], dtype=bool)
    for _ in range(max_iter):
        g_new = (t2 * mass * gamma_hat + d_old * gamma_bar) / (t2 * mass + d_old)
        sum2 = mass * (mean_z2 - 2 * g_new * gamma_hat + g_new ** 2)
        d_new = (0.5 * sum2 + b) / (mass / 2 + a - 1)
        with np.errstate(divide="ignore", invalid="ignore"):  # a zero estimate: change inf,
            change = np.maximum((np.abs(g_new - g_old) / g_old).max(axis=-1),  # as neuroCombat
                                (np.abs(d_new - d_old) / d_old).max(axis=-1))
        g_old = np.where(active[..., None], g_new, g_old)
        d_old = np.where(active[..., None], d_new, d_old)
        active &= change > conv  # as sva / neuroCombat: iterate while change > conv
        if not active.any():
            break
    return g_old, d_old


def _moment_priors(gamma_hat, delta_hat, axis: int):
    """Method-of-moments hyper-parameters pooled along ``axis`` (JLR 2007, section 3.2)."""
    gamma_bar = gamma_hat.mean(axis=axis, keepdims=True)
    t2 = gamma_hat.var(axis=axis, ddof=1, keepdims=True)
    mean = delta_hat.mean(axis=axis, keepdims=True)
    s2 = delta_hat.var(axis=axis, ddof=1, keepdims=True)
    return gamma_bar, t2, (2 * s2 + mean ** 2) / s2, (mean * s2 + mean ** 3) / s2


@dataclass(frozen=True)
class ComBatFit:
    """Fitted ComBat, broadcastable to ``(R, k, m)``: standardisation and batch posteriors.

    Adjusted score: ``sd * ((x - centre) / sd - gamma) / sqrt(delta) + centre``.
    """

    centre: np.ndarray
    sd: np.ndarray
    gamma: np.ndarray
    delta: np.ndarray

    def adjust(self, x: np.ndarray) -> np.ndarray:
        """Apply to task scores or cell means (affine, so the mean of adjusted = adjusted mean)."""
        z = (x - self.centre) / self.sd
        return self.sd * (z - self.gamma) / np.sqrt(self.delta) + self.centre


def _weighted_moments(values: np.ndarray, weights: np.ndarray):
    """Per replicate and cell: weighted mean, weighted mean of squares, weight mass."""
    finite = np.isfinite(values)
    mass = np.asarray(weights, float) @ finite.reshape(len(values), -1)
    mass = mass.reshape(len(weights), *values.shape[1:])
    return (weighted_cell_means(values, weights), weighted_cell_means(values ** 2, weights), mass)


def combat_fit(values: np.ndarray, weights: np.ndarray) -> ComBatFit:
    """Standard ComBat fitted on the weighted in-bag task scores, batch = language.

    Mapping: a sample is a (task, language) pair with the m backbone scores as its features
    and its language as its batch (weights = bootstrap multiplicities, i.e. repeated samples).
    Per feature b: ``centre_b`` = batch-size-weighted grand mean, ``sd_b^2`` = pooled residual
    variance after batch means (ddof 0); ``Z = (T - centre) / sd``; per batch and feature
    ``gamma_hat`` = mean of Z, ``delta_hat`` = variance of Z (ddof 1; 0 -> 1); priors per batch
    across features by the method of moments, posteriors iterated (:func:`_combat_posterior`).
    On one replicate with unit weights this equals ``neuroCombat`` (batch = language, no
    covariates). Per-cell location/scale make it a shrunken relative of CBC.
    """
    m1, m2, mass = _weighted_moments(values, weights)
    size = mass.sum(axis=-1, keepdims=True) / mass.shape[-1]  # samples per batch
    centre = (size * m1).sum(axis=-2, keepdims=True) / size.sum(axis=-2, keepdims=True)
    var = (mass * (m2 - m1 ** 2)).sum(axis=-2, keepdims=True) / mass.sum(axis=-2, keepdims=True)
    sd = np.sqrt(var)
    gamma_hat = (m1 - centre) / sd
    mean_z2 = (m2 - 2 * centre * m1 + centre ** 2) / var
    delta_hat = mass / (mass - 1) * (m2 - m1 ** 2) / var
    delta_hat = np.where(delta_hat == 0, 1.0, delta_hat)
    gamma_bar, t2, a, b = _moment_priors(gamma_hat, delta_hat, axis=-1)
    gamma, delta = _combat_posterior(gamma_hat, delta_hat, mass, mean_z2, gamma_bar, t2, a, b)
    return ComBatFit(centre=centre, sd=sd, gamma=gamma, delta=delta)


def combat_pooled_fit(values: np.ndarray, weights: np.ndarray) -> ComBatFit:
    """ComBat-EB in the paper's pooled form: one location and one scale per language.

    All backbones of a language share the batch parameters: with backbone main effects
    ``c_b`` (in-bag column means) as the preserved covariate, ``Z = (T - c_b) / sd`` over the
    pooled residual SD, per language ``gamma_hat`` = mean of Z over tasks and backbones,
    ``delta_hat`` = its variance (ddof 1). The single pooled feature leaves no features to pool
    the priors over, so the method-of-moments priors pool across languages (locations shrink
    toward their mean 0, scales toward their mean about 1); posteriors as in standard ComBat.
    The correction is one increasing affine map per language row applied to the scores with
    their backbone effects (``centre`` = grand mean), so no language's backbone order moves and
    the held-out tau equals Raw's (protocol: published 0.650 = Raw).
    """
    m1, m2, mass = _weighted_moments(values, weights)
    col = m1.mean(axis=-2, keepdims=True)
    lang = (m1 - col).mean(axis=-1, keepdims=True)
    fitted = col + lang
    resid2 = mass * (m2 - 2 * m1 * fitted + fitted ** 2)
    var = resid2.sum(axis=(-2, -1), keepdims=True) / mass.sum(axis=(-2, -1), keepdims=True)
    sd = np.sqrt(var)
    n = mass.sum(axis=-1, keepdims=True)
    mean_z = (mass * (m1 - col)).sum(axis=-1, keepdims=True) / n / sd
    mean_z2 = (mass * (m2 - 2 * col * m1 + col ** 2)).sum(axis=-1, keepdims=True) / n / var
    delta_hat = n / (n - 1) * (mean_z2 - mean_z ** 2)
    delta_hat = np.where(delta_hat == 0, 1.0, delta_hat)
    gamma_bar, t2, a, b = _moment_priors(mean_z, delta_hat, axis=-2)
    # one feature per batch: the batch axis is moved last so each language converges alone
    swap = lambda x: np.swapaxes(np.broadcast_to(x, mean_z.shape), -1, -2)[..., None]
    gamma, delta = _combat_posterior(*(swap(x) for x in (mean_z, delta_hat, n, mean_z2,
                                                         gamma_bar, t2, a, b)))
    unswap = lambda x: np.swapaxes(x[..., 0], -1, -2)
    centre = col.mean(axis=-1, keepdims=True)
    return ComBatFit(centre=centre, sd=sd, gamma=unswap(gamma), delta=unswap(delta))
