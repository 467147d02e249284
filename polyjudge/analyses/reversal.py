"""Rank reversal: do two judge backbones swap order between prompt languages?

CBC paper, sections 3.2 and 5 (docs/methods.md section 4). With cell means ``M[l, b]`` (mean over
tasks of ``T[t, l, b]``, missing tasks omitted), for each backbone pair (i, j):

    d(l)   = M[l, i] - M[l, j]                              gap in language l
    (a, b) = argmin over language pairs a < b of d(a) d(b)  the witnesses
    delta  = max(0, -d(a) d(b))                              reversal iff delta > 0

A reversal is tested with two one-sided one-sample t-tests over the per-task differences
``T[t, l, i] - T[t, l, j]`` (l = a, then l = b; the alternative is the sign of d(l) there, tasks
where either backbone is missing omitted), combined by intersection-union: ``p = max(p_a, p_b)``
(``p = 1`` without a reversal). Benjamini-Hochberg over all pairs gives q; significant iff
reversed and ``q <= fdr``.

The global test of the reversal count (the paper's later revision) permutes, within every
(task, backbone), the residuals of an additive model without language x backbone interaction
over the language positions; see :func:`reversal_count_test` for the model and its scaling.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
import scipy.stats

from ..data.panel import Panel, nanmean

PAIR_COLUMNS = ["backbone_i", "backbone_j", "witness_a", "witness_b", "d_a", "d_b", "delta",
                "p_value", "q_value", "reversed", "significant"]


def _pair_indices(n_backbones: int) -> tuple[np.ndarray, np.ndarray]:
    """Backbone pairs (i < j) in panel order: (0, 1), (0, 2), ..., (m-2, m-1)."""
    pairs = np.array(list(combinations(range(n_backbones), 2))).reshape(-1, 2)
    return pairs[:, 0], pairs[:, 1]


def _check_panel(panel: Panel) -> np.ndarray:
    """Cell means of a panel fit for reversal analysis (>= 2 languages and backbones)."""
    n_tasks, n_languages, n_backbones = panel.shape
    if n_tasks < 2 or n_languages < 2 or n_backbones < 2:
        raise ValueError(f"rank reversal needs >= 2 tasks, languages and backbones, the panel has "
                         f"{n_tasks}, {n_languages} and {n_backbones}")
    means = panel.cell_means()
    if not np.isfinite(means).all():
        raise ValueError("rank reversal needs a score in every language x backbone cell")
    return means


def count_reversals(cell_means: np.ndarray) -> np.ndarray:
    """Number of backbone pairs whose gap changes sign across languages, for ``(..., k, m)``.

    A pair reverses iff some language has ``d > 0`` and another ``d < 0`` (equivalently, the
    most negative product ``d(a) d(b)`` is below 0).
    """
    i, j = _pair_indices(cell_means.shape[-1])
    gaps = cell_means[..., i] - cell_means[..., j]
    return ((gaps.max(axis=-2) > 0) & (gaps.min(axis=-2) < 0)).sum(axis=-1)


def rank_reversal(panel: Panel, fdr: float = 0.05) -> pd.DataFrame:
    """One row per backbone pair (panel order) with witnesses, strength and tests.

    Columns: backbone_i, backbone_j, witness_a, witness_b (witness languages, a before b in
    panel order; for a pair without reversal, the language pair of the smallest product), d_a,
    d_b (the gaps there), delta, p_value (intersection-union), q_value (Benjamini-Hochberg over
    all pairs), reversed (delta > 0), significant (reversed and q <= fdr).
    """
    if not 0 < fdr < 1:
        raise ValueError(f"fdr must be in (0, 1), got {fdr!r}")
    means = _check_panel(panel)
    i, j = _pair_indices(panel.shape[2])
    gaps = means[:, i] - means[:, j]                                    # (language, pair)
    la, lb = np.triu_indices(panel.shape[1], k=1)
    products = gaps[la] * gaps[lb]                                      # (language pair, pair)
    witness = products.argmin(axis=0)
    pair = np.arange(len(i))
    a, b = la[witness], lb[witness]
    delta = np.maximum(0.0, -products[witness, pair])
    reversed_ = delta > 0

    # per-task differences at the witnesses, signed so that the alternative is "mean > 0"
    values = panel.values
    diff_a = (values[:, a, i] - values[:, a, j]) * np.sign(gaps[a, pair])
    diff_b = (values[:, b, i] - values[:, b, j]) * np.sign(gaps[b, pair])
    p_a = scipy.stats.ttest_1samp(diff_a, 0.0, alternative="greater", nan_policy="omit").pvalue
    p_b = scipy.stats.ttest_1samp(diff_b, 0.0, alternative="greater", nan_policy="omit").pvalue
    p_value = np.where(reversed_, np.maximum(p_a, p_b), 1.0)
    if np.isnan(p_value).any():
        raise ValueError("rank reversal: a witness language has fewer than 2 tasks scored by "
                         "both backbones, so its t-test is undefined")
    q_value = scipy.stats.false_discovery_control(p_value, method="bh")

    names = np.asarray(panel.backbones, dtype=object)
    languages = np.asarray(panel.languages, dtype=object)
    return pd.DataFrame({
        "backbone_i": names[i], "backbone_j": names[j],
        "witness_a": languages[a], "witness_b": languages[b],
        "d_a": gaps[a, pair], "d_b": gaps[b, pair], "delta": delta,
        "p_value": p_value, "q_value": q_value,
        "reversed": reversed_, "significant": reversed_ & (q_value <= fdr),
    }, columns=PAIR_COLUMNS)


def top_backbone_per_language(panel: Panel) -> dict[str, str]:
    """The raw top-ranked backbone (highest cell mean; first on ties) of each language."""
    means = _check_panel(panel)
    return {lang: panel.backbones[b] for lang, b in zip(panel.languages, means.argmax(axis=1))}


@dataclass(frozen=True)
class ReversalCountTest:
    """Global permutation test of the number of reversing pairs.

    ``null``: the count in each permuted panel; ``p_value = (1 + #{null >= observed}) / (1 + B)``.
    """

    observed: int
    null: np.ndarray
    p_value: float
    n_permutations: int


def additive_fit(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fit and residuals of ``T[t,l,b] = a(t,b) + c(t,l) + r[t,l,b]`` (missing cells omitted).

    The CBC score model ``mu(t) + alpha(b) + gamma(t,l)`` without its language x backbone
    interaction (plus a task x backbone term): ``fit = T[t,.,b] + T[t,l,.] - T[t,.,.]``, so the
    residual is each task's double-centred language x backbone slice. Returns ``(fit,
    residual)``, both ``(t, l, b)``.
    """
    with warnings.catch_warnings():     # an all-missing slice gives NaN, as wanted
        warnings.simplefilter("ignore", RuntimeWarning)
        fit = (nanmean(values, axis=1, keepdims=True) + nanmean(values, axis=2, keepdims=True)
               - nanmean(values, axis=(1, 2), keepdims=True))
    return fit, values - fit


def reversal_count_test(panel: Panel, n_permutations: int = 999,
                        seed: int | np.random.Generator | None = None,
                        chunk_elements: int = 2_000_000) -> ReversalCountTest:
    """Permutation test of H0 "no language x backbone interaction" by the reversal count.

    Statistic: :func:`count_reversals` of the cell means. Each permuted panel is
    ``fit + sqrt(m / (m - 1)) r[t, pi_tb(l), b]``: the residuals of :func:`additive_fit`
    permuted over the language positions, independently within every (task, backbone).

    The model: task x language effects (the CBC model's gamma) are in the fit because they are
    shared by all backbones and cancel in every gap ``d(l)``; left in the residuals, the
    per-backbone permutation would stop them cancelling and widen the null (conservative).
    The factor: fitting ``T[t,l,.]`` also removes each (task, language)'s mean noise over the m
    backbones, which cancels in an observed gap but not between residuals permuted separately,
    so the permuted gaps would have ``1 - 1/m`` of the observed variance (anti-conservative);
    ``sqrt(m / (m - 1))`` restores it (exact for homoscedastic noise on a complete panel).
    On synthetic panels the p-value is then close to uniform with or without gamma
    (slightly conservative: the count is discrete and ties count against H0).
    Missing cells stay missing wherever their residual lands. Vectorised over permutations in
    chunks of about ``chunk_elements`` values; the result does not depend on the chunking.
    """
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, (int, np.integer)) \
            or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}")
    observed = int(count_reversals(_check_panel(panel)))
    rng = np.random.default_rng(seed)
    fit, residual = additive_fit(panel.values)
    n_backbones = panel.shape[2]
    by_cell = np.sqrt(n_backbones / (n_backbones - 1)) * residual.transpose(0, 2, 1)  # (t, b, l)
    chunk = max(1, chunk_elements // residual.size)
    null = []
    for start in range(0, n_permutations, chunk):
        size = min(chunk, n_permutations - start)
        order = rng.random((size,) + by_cell.shape).argsort(axis=-1)
        shuffled = np.take_along_axis(np.broadcast_to(by_cell, order.shape), order, axis=-1)
        permuted = fit + shuffled.transpose(0, 1, 3, 2)                 # (perm, t, l, b)
        null.append(count_reversals(_task_means(permuted)))
    null = np.concatenate(null)
    p_value = (1 + int((null >= observed).sum())) / (1 + n_permutations)
    return ReversalCountTest(observed=observed, null=null, p_value=p_value,
                             n_permutations=int(n_permutations))


def _task_means(values: np.ndarray) -> np.ndarray:
    """NaN-aware mean over the task axis (axis 1) of a ``(perm, t, l, b)`` stack."""
    finite = np.isfinite(values)
    total = np.where(finite, values, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / finite.sum(axis=1)


def reversal_summary(pairs: pd.DataFrame, top: dict[str, str],
                     count_test: ReversalCountTest, fdr: float = 0.05) -> dict:
    """JSON-ready summary: counts, top backbone per language and the global test."""
    tops = list(top.values())
    return {
        "n_pairs": int(len(pairs)),
        "n_reversed": int(pairs["reversed"].sum()),
        "n_significant": int(pairs["significant"].sum()),
        "fdr": float(fdr),
        "top_backbone": dict(top),
        "n_distinct_top": len(set(tops)),
        "top_alternates": len(set(tops)) > 1,
        "global_test": {
            "statistic": "number of reversing pairs",
            "null": "residuals of fit T[t,.,b] + T[t,l,.] - T[t,.,.], scaled by sqrt(m/(m-1)), "
                    "permuted over languages within each (task, backbone)",
            "observed": count_test.observed,
            "null_mean": float(count_test.null.mean()),
            "p_value": count_test.p_value,
            "n_permutations": count_test.n_permutations,
        },
    }
