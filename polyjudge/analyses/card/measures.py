"""Agreement measures computed from contingency tables, vectorised over leading axes.

Two raters (a judge and the reference, or two judges) over the same units: ``C[..., a, b]`` is
the (weighted) number of units the first rater put in category ``a`` and the second in ``b``,
categories ordered by their value ``values``. Every measure here is a function of that table,
so a bootstrap over units is one matrix product of replicate weights with per-cluster tables,
and the measures follow for every replicate at once.

A panel of raters (judges over items, any number per item): ``O[..., c, k]``, Krippendorff's
coincidence matrix, and for Fleiss' kappa the per-item category counts, summed per cluster.

References: Cohen (1960, 1968) kappa and weighted kappa; Gwet (2008) AC1; Krippendorff (2011)
"Computing Krippendorff's alpha-reliability"; Fleiss (1971); Kendall's tau-b and Spearman's rho
with midranks for ties. Undefined values (one category only) are NaN.
"""
from __future__ import annotations

import numpy as np

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _total(C):
    return C.sum(axis=(-2, -1))


def _safe(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1.0), np.nan)


def percent_agreement(C) -> np.ndarray:
    """Share of units on the diagonal: ``trace(C) / N``."""
    return _safe(np.trace(C, axis1=-2, axis2=-1), _total(C))


def kappa_weights(n_categories: int, weights: str | None) -> np.ndarray:
    """Disagreement weights over category positions, as scikit-learn's ``cohen_kappa_score``:
    0/1 (None), ``|i - j|`` (linear) or ``(i - j)^2`` (quadratic)."""
    i = np.arange(n_categories)
    gap = np.abs(i[:, None] - i[None, :]).astype(float)
    return {None: (gap > 0).astype(float), "linear": gap, "quadratic": gap ** 2}[weights]


def cohen_kappa(C, weights: str | None = None) -> np.ndarray:
    """Cohen's kappa, ``1 - sum(w C) / sum(w E)`` with ``E`` the product of the margins over
    ``N`` (weighted kappa with ``weights``)."""
    w = kappa_weights(C.shape[-1], weights)
    expected = C.sum(axis=-1)[..., :, None] * C.sum(axis=-2)[..., None, :]
    expected = _safe(expected, _total(C)[..., None, None])
    return 1.0 - _safe((w * C).sum(axis=(-2, -1)), (w * expected).sum(axis=(-2, -1)))


def gwet_ac1(C) -> np.ndarray:
    """Gwet's AC1 for two raters: ``(p_a - p_e) / (1 - p_e)``, ``p_e = sum_k pi_k (1 - pi_k) /
    (K - 1)`` with ``pi_k`` the mean of the two raters' shares of category k, K the categories."""
    n_categories = C.shape[-1]
    pi = _safe(C.sum(axis=-1) + C.sum(axis=-2), 2.0 * _total(C)[..., None])
    pe = (pi * (1.0 - pi)).sum(axis=-1) / max(n_categories - 1, 1)
    return _safe(percent_agreement(C) - pe, 1.0 - pe)


def _distance(values, level: str, margins):
    """Krippendorff's squared difference ``delta[..., c, k]`` at ``level``; ``margins``: the
    coincidence margins ``n_c`` (the ordinal metric depends on them)."""
    v = np.asarray(values, dtype=float)
    if level == "nominal":
        return np.broadcast_to((v[:, None] != v[None, :]).astype(float),
                               margins.shape + (len(v),))
    if level == "interval":
        return np.broadcast_to((v[:, None] - v[None, :]) ** 2, margins.shape + (len(v),))
    if level == "ratio":
        total = v[:, None] + v[None, :]
        d = _safe((v[:, None] - v[None, :]) ** 2, total ** 2)
        return np.broadcast_to(np.nan_to_num(d), margins.shape + (len(v),))
    if level == "ordinal":
        cum = np.cumsum(margins, axis=-1)
        low = np.minimum.outer(np.arange(len(v)), np.arange(len(v)))
        high = np.maximum.outer(np.arange(len(v)), np.arange(len(v)))
        between = cum[..., high] - cum[..., low] + margins[..., low]
        return (between - (margins[..., :, None] + margins[..., None, :]) / 2.0) ** 2
    raise ValueError(f"level must be one of {LEVELS}, not {level!r}")


def alpha_from_coincidences(O, values, level: str = "nominal") -> np.ndarray:
    """Krippendorff's alpha from a coincidence matrix ``O[..., c, k]``:
    ``1 - (n - 1) sum(O delta) / sum(n_c n_k delta)``, ``n`` the pairable values."""
    margins = O.sum(axis=-1)
    n = margins.sum(axis=-1)
    delta = _distance(values, level, margins)
    observed = (O * delta).sum(axis=(-2, -1))
    expected = (margins[..., :, None] * margins[..., None, :] * delta).sum(axis=(-2, -1))
    return 1.0 - _safe((n - 1.0) * observed, expected)


def krippendorff_alpha(C, values, level: str = "nominal") -> np.ndarray:
    """Krippendorff's alpha of two raters with a value for every unit: the coincidence matrix
    is ``C + C^T``."""
    return alpha_from_coincidences(C + np.swapaxes(C, -1, -2), values, level)


def mean_signed_error(C, values) -> np.ndarray:
    """Mean of (first rater's value - second's): a judge's leniency against the reference."""
    v = np.asarray(values, dtype=float)
    return _safe((C * (v[:, None] - v[None, :])).sum(axis=(-2, -1)), _total(C))


def _midranks(counts):
    """Midrank of each category given its counts (ranks 1..N, ties share their mean rank)."""
    return np.cumsum(counts, axis=-1) - (counts - 1.0) / 2.0


def spearman(C) -> np.ndarray:
    """Spearman's rho: Pearson's correlation of the two raters' midranks, weighted by ``C``."""
    rows, cols, total = C.sum(axis=-1), C.sum(axis=-2), _total(C)
    r, s = _midranks(rows), _midranks(cols)
    mr, ms = _safe((rows * r).sum(-1), total), _safe((cols * s).sum(-1), total)
    dr, ds = r - mr[..., None], s - ms[..., None]
    cov = (C * dr[..., :, None] * ds[..., None, :]).sum(axis=(-2, -1))
    return _safe(cov, np.sqrt((rows * dr ** 2).sum(-1) * (cols * ds ** 2).sum(-1)))


def kendall_tau_b(C) -> np.ndarray:
    """Kendall's tau-b from the contingency table: concordant minus discordant pairs over
    ``sqrt((n0 - T_x)(n0 - T_y))``, ties in either rater counted in neither."""
    # units strictly below-right / below-left of each cell: suffix and prefix sums
    below = np.flip(np.cumsum(np.flip(C, -2), axis=-2), -2)
    below = np.concatenate([below[..., 1:, :], np.zeros_like(below[..., :1, :])], axis=-2)
    right = np.flip(np.cumsum(np.flip(below, -1), axis=-1), -1)
    right = np.concatenate([right[..., :, 1:], np.zeros_like(right[..., :, :1])], axis=-1)
    left = np.cumsum(below, axis=-1)
    left = np.concatenate([np.zeros_like(left[..., :, :1]), left[..., :, :-1]], axis=-1)
    concordant, discordant = (C * right).sum(axis=(-2, -1)), (C * left).sum(axis=(-2, -1))
    total = _total(C)
    n0 = total * (total - 1.0) / 2.0
    tx = (lambda m: (m * (m - 1.0) / 2.0).sum(-1))(C.sum(axis=-1))
    ty = (lambda m: (m * (m - 1.0) / 2.0).sum(-1))(C.sum(axis=-2))
    return _safe(concordant - discordant, np.sqrt((n0 - tx) * (n0 - ty)))


def fleiss_kappa(sum_p, sum_n, n_items) -> np.ndarray:
    """Fleiss' kappa from sums over items (each rated by the same ``m`` raters):
    ``sum_p`` of ``P_i = (sum_k n_ik^2 - m) / (m (m - 1))``, ``sum_n[..., k]`` of ``n_ik``."""
    p_bar = _safe(sum_p, n_items)
    share = _safe(sum_n, sum_n.sum(axis=-1)[..., None])
    pe = (share ** 2).sum(axis=-1)
    return _safe(p_bar - pe, 1.0 - pe)
