"""Prediction-powered means valid at every look, for human labels that arrive in batches
(docs/methods.md, "Labels that arrive in batches").

The quantity is the mean human label of a language's ``N`` items. Each label is one draw of an
item, with the known probability ``p`` that the draw picked it (``1/N`` for uniform sampling;
:mod:`.active` for probabilities that favour uncertain items). With ``w = 1 / (N p)``, the
label ``y``, the judges' prediction ``f`` of the drawn item and ``fbar`` the prediction's mean
over all ``N`` items, the draw's influence term

    psi = w y - lambda (w f - fbar) - m (w - 1)

has mean exactly the target for every ``lambda`` and ``m`` fixed before the draw (Hansen and
Hurwitz's estimator of the residual ``y - lambda f - m``, plus the known ``lambda fbar + m``).
Power tuning (PPI++, Angelopoulos, Duchi and Zrnic 2023) chooses them to minimise the
variance; here they are *predictable*, fitted on the labels before each one, so the terms are
martingale differences around the target (as Kilian et al. 2025 and Zrnic and Candes 2024
require), and the asymptotic confidence sequence of Waudby-Smith et al. (2024) on them
(:func:`polyjudge.analyses.stopping.sequences.asymptotic_cs`) holds at every look at once.

Arrays: labels in arrival order on axis -2, quantities (languages, or simulated panels) on axis
-1, any leading axes (simulated sequences).
"""
from __future__ import annotations

import numpy as np

from ..stopping import sequences

PRIOR_LABELS = 1.0
"""Pseudo-labels of the label range's largest variance in the sequence's variance, so that a
few equal terms cannot make the interval collapse before the spread is seen."""
MAX_LABELS = 10 ** 8
"""Largest forecast the bisection of :func:`labels_needed` searches."""


def influence_terms(labels, predictions, weights, predictor_mean, lam, shift=0.0
                    ) -> np.ndarray:
    """``psi = w y - lambda (w f - fbar) - m (w - 1)``: each label's prediction-powered term
    (its mean is the target for any ``lambda`` and ``m`` fixed before the label, as
    ``w f - fbar`` and ``w - 1`` have mean 0 over the draw). ``weights``: ``1 / (N p)``; under
    uniform sampling ``w = 1`` and ``psi = y - lambda (f - fbar)``, the PPI++ term."""
    w = np.asarray(weights, dtype=float)
    return (w * np.asarray(labels, dtype=float) - np.asarray(lam) * (
        w * np.asarray(predictions, dtype=float) - np.asarray(predictor_mean, dtype=float))
        - np.asarray(shift) * (w - 1.0))


def _solve(sab, sac, sbb, sbc, scc):
    """Least-squares coefficients of ``a`` on the mean-zero ``b`` and ``c`` from their
    (co)variances; a ``c`` without spread (uniform sampling) or collinear with ``b`` drops."""
    det = sbb * scc - sbc ** 2
    joint = det > 1e-9 * np.maximum(sbb * scc, 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(joint, (sab * scc - sac * sbc) / det,
                       np.where(sbb > 1e-12, sab / sbb, 0.0))
        shift = np.where(joint, (sac * sbb - sab * sbc) / det,
                         np.where((sbb <= 1e-12) & (scc > 1e-12), sac / scc, 0.0))
    return np.nan_to_num(lam), np.nan_to_num(shift)


def tuned_coefficients(a, b, c, axis: int = -2) -> tuple[np.ndarray, np.ndarray]:
    """Power tuning: the ``lambda`` and ``m`` that minimise the variance of
    ``a - lambda b - m c`` (``a = w y``, ``b = w f - fbar``, ``c = w - 1``), the least-squares
    regression of ``a`` on ``b`` and ``c`` over ``axis``. Under uniform sampling ``c = 0`` and
    ``lambda = Cov(y, f) / Var(f)``, PPI++'s tuning; the weight's own term ``m`` removes what
    the residual's level adds to an unequal-probability draw (the difference estimator)."""
    a, b, c = (np.asarray(v, dtype=float) for v in (a, b, c))

    def cov(u, v):
        return ((u - u.mean(axis=axis, keepdims=True))
                * (v - v.mean(axis=axis, keepdims=True))).mean(axis=axis)
    return _solve(cov(a, b), cov(a, c), cov(b, b), cov(b, c), cov(c, c))


def predictable_coefficients(a, b, c, batch_ends=None, min_labels: int = 2
                             ) -> tuple[np.ndarray, np.ndarray]:
    """The tuned ``lambda`` and ``m`` of every label, fitted on the labels of the batches
    before its own (0 until ``min_labels`` labels are in): running sums, so all looks at once.

    ``batch_ends``: label counts after which a batch ends (default: each label its own batch);
    a label in the batch ending at ``e_k`` uses the labels before ``e_{k-1}``."""
    a, b, c = (np.asarray(v, dtype=float) for v in (a, b, c))
    n = a.shape[-2]
    t = np.arange(1, n + 1, dtype=float)[:, None]

    def cov(u, v):
        return (np.cumsum(u * v, axis=-2) / t
                - np.cumsum(u, axis=-2) * np.cumsum(v, axis=-2) / t ** 2)
    after = _solve(cov(a, b), cov(a, c), cov(b, b), cov(b, c), cov(c, c))
    ends = np.arange(1, n + 1) if batch_ends is None else np.asarray(batch_ends, dtype=int)
    known = np.zeros(n, dtype=int)          # labels known before each label
    for end in ends[ends < n]:
        known[end:] = end
    enough = (known >= min_labels)[:, None]
    return tuple(np.where(enough, np.take(v, np.maximum(known - 1, 0), axis=-2), 0.0)
                 for v in after)


def anytime_ppi(labels, predictions, weights, predictor_mean, *, alpha=0.05,
                tuned_for: float = 200, label_range=None, batch_ends=None, lam=None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Estimate, lower and upper bound after every label of the anytime-valid
    prediction-powered mean (Waudby-Smith et al. 2024's asymptotic confidence sequence on the
    terms of :func:`influence_terms`, with the predictable tuning of
    :func:`predictable_coefficients`).

    Guarantee: time-uniform and asymptotic (as the labels grow, the chance that any look's
    interval misses the target is at most ``alpha``), for labels drawn independently with the
    recorded probabilities, with replacement (or without, from items many times more numerous
    than the labels; docs/methods.md gives the measured coverage). ``tuned_for``: the label
    count at which the sequence is narrowest; ``label_range`` ``(lo, hi)``: its largest
    variance regularises the early variance (:data:`PRIOR_LABELS`); ``lam``: a fixed
    ``lambda`` (1: classical PPI, 0: labels alone; ``m = 0``) instead of the tuning.
    The interval is infinite until two labels differ (nothing is known of the spread)."""
    psi = anytime_terms(labels, predictions, weights, predictor_mean, batch_ends, lam)
    prior = None if label_range is None else (label_range[1] - label_range[0]) ** 2 / 4.0
    est, half = sequences.asymptotic_cs(psi, alpha, tuned_for, prior_var=prior,
                                        prior_n=PRIOR_LABELS, small_sample=True)
    return est, est - half, est + half


def anytime_terms(labels, predictions, weights, predictor_mean, batch_ends=None, lam=None
                  ) -> np.ndarray:
    """The terms :func:`anytime_ppi` runs its sequence on: :func:`influence_terms` with the
    predictable coefficients of :func:`predictable_coefficients` (or a fixed ``lam``)."""
    y, f = np.asarray(labels, dtype=float), np.asarray(predictions, dtype=float)
    w = np.broadcast_to(np.asarray(weights, dtype=float), y.shape)
    a, b, c = w * y, w * f - np.asarray(predictor_mean, dtype=float), w - 1.0
    if lam is None:
        lam, shift = predictable_coefficients(a, b, c, batch_ends)
    else:
        lam, shift = np.asarray(lam, dtype=float), 0.0
    return a - lam * b - shift * c


def halfwidth_at(t, sd, alpha=0.05, tuned_for: float = 200) -> np.ndarray:
    """The sequence's half-width after ``t`` labels whose terms have standard deviation
    ``sd`` (as :func:`anytime_ppi` computes it, without the early-variance guard)."""
    t = np.asarray(t, dtype=float)
    rho = sequences.mixture_rho(alpha, tuned_for)
    return (sequences.mixture_boundary(t, sd, alpha, rho)
            * sequences.small_sample_factor(t, alpha))


def labels_needed(sd, target_halfwidth, n_labels=0, alpha=0.05, tuned_for: float = 200,
                  batch: int = 1, past_var=None) -> np.ndarray:
    """Forecast of the labels still needed (beyond ``n_labels``) for the half-width to reach
    ``target_halfwidth``, if the coming terms have the standard deviation ``sd`` (estimated
    so far): the smallest ``t`` with :func:`halfwidth_at` ``<= target``, minus ``n_labels``,
    rounded up to whole batches; 0 where met; -1 where not even :data:`MAX_LABELS` would do
    (the Gaussian-mixture width stops shrinking like ``1/sqrt(t)`` far beyond
    ``tuned_for``). ``past_var``: the sequence's running variance after the ``n_labels``
    terms so far, which it keeps averaging in (``(n past_var + (t - n) sd^2) / t``).
    A forecast, not a promise: ``sd`` is an estimate."""
    sd, target, n = np.broadcast_arrays(np.asarray(sd, dtype=float),
                                        np.asarray(target_halfwidth, dtype=float),
                                        np.asarray(n_labels, dtype=float))
    past = sd ** 2 if past_var is None else np.broadcast_to(np.asarray(past_var, float),
                                                            sd.shape)

    def width(t):
        blend = np.where(t > n, (n * past + (t - n) * sd ** 2) / np.maximum(t, 1.0), past)
        return halfwidth_at(t, np.sqrt(blend), alpha, tuned_for)

    lo = np.ones(sd.shape)
    hi = np.full(sd.shape, float(MAX_LABELS))
    reachable = width(hi) <= target
    for _ in range(int(np.ceil(np.log2(MAX_LABELS))) + 1):
        mid = np.floor((lo + hi) / 2.0)
        ok = width(mid) <= target
        hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
    first_ok = np.where(width(lo) <= target, lo, hi)
    more = np.ceil(np.maximum(first_ok - n, 0.0) / batch) * batch
    return np.where(reachable, more, -1).astype(np.int64)
