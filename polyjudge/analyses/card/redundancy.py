"""How many independent judges a panel is, per language, and what its majority gains over its
best judge (docs/methods.md section 11, "Redundancy").

A judge's **error** on a unit: against a reference, whether it disagrees with the label
(``1[v != r]``, nominal labels) or its signed error ``v - r`` (ordinal and interval labels, in
the label's units). The **error correlation** of judges ``j`` and ``k`` is Pearson's
correlation of their errors over the units both rated; the panel's is the mean over its pairs,
``rho``. The **effective number of judges** is Kish's (1965) ``n_eff = n / (1 + (n - 1) rho)``
(equivalently ``n^2 / 1'R1`` with ``R`` the error correlation matrix): the number of independent
judges whose mean error has the variance of the panel's mean error, for standardised errors.

Without a reference, an error every judge shares cannot be told from the truth: the two-way
item + judge model takes it into the item effect. What remains is each pair's
``residual_correlation``, Pearson's correlation of ``y_ij - ybar_i.`` on the items every judge
of the language rated (the judge effect drops out of a correlation). With equal residual
variances the residuals of each item sum to zero, so their mean correlation is ``-1/(n - 1)``
whatever the judges share, and ``n_eff`` is not identified; a pair above ``-1/(n - 1)`` shares
errors beyond the panel's common one.

The **majority** of a language's judges on an item is the most frequent verdict; a tie between
``t`` verdicts puts ``1/t`` of the unit on each (the expected table of a tie broken at random),
so its agreement is exact and needs no seed. Its **gain** is the majority's agreement with the
reference minus that of the language's best single judge (the highest point estimate).

Every quantity is a function of per-cluster sums (error moments, contingency tables), so the
cluster bootstrap is one matrix product with the same multiplicities as
:func:`~polyjudge.analyses.card.reference_agreement` (same clusters, replicates and seed).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import measures
from .agreement import (_interval, cluster_tables, code_verdicts, reference_codes,
                        replicate_tables, with_reference)

COLUMNS = ["language", "judge", "versus", "measure", "estimate", "ci_low", "ci_high",
           "n_items", "n_clusters"]
"""The columns of ``card/redundancy.csv``."""


def error_correlation(moments: np.ndarray) -> np.ndarray:
    """Pearson correlation of two raters' errors from sums over their common units:
    ``moments[..., s, j, k]`` for ``s`` = 0 the units both rated, 1 ``sum e_j``, 2
    ``sum e_j^2`` and 3 ``sum e_j e_k`` (``j`` indexes the first rater, the sums run over
    units ``k`` rated too). Returns ``(..., j, k)``; NaN where an error does not vary."""
    n, s1, s2, cross = (moments[..., s, :, :] for s in range(4))
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_j, mean_k = s1 / n, np.swapaxes(s1, -1, -2) / n
        cov = cross / n - mean_j * mean_k
        var_j = s2 / n - mean_j ** 2
        var_k = np.swapaxes(s2, -1, -2) / n - mean_k ** 2
        den = np.sqrt(var_j * var_k)
        return np.where(den > 1e-12 * np.maximum(np.abs(var_j) + np.abs(var_k), 1e-300),
                        cov / den, np.nan)


def effective_judges(correlation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rho, n_eff)`` of error correlation matrices ``(..., n, n)``: the mean over the pairs
    with a defined correlation, and Kish's ``n / (1 + (n - 1) rho)`` with ``n`` the judges in a
    pair with a defined correlation (NaN where ``1 + (n - 1) rho <= 0``)."""
    m = correlation.shape[-1]
    a, b = np.triu_indices(m, 1)
    pairs = correlation[..., a, b]
    finite = np.isfinite(pairs)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(finite, pairs, 0.0).sum(-1) / finite.sum(-1)
        judges = np.zeros(finite.shape[:-1])
        for j in range(m):  # judges that take part in at least one defined pair
            judges += (finite & ((a == j) | (b == j))).any(-1)
        den = 1.0 + (judges - 1.0) * rho
        n_eff = np.where(den > 0, judges / np.where(den > 0, den, 1.0), np.nan)
    return rho, np.where(judges >= 2, n_eff, np.nan)


def _errors(frame: pd.DataFrame, values: np.ndarray, second, level: str) -> np.ndarray:
    """Each row's error: disagreement (nominal), signed error (otherwise), or without a
    reference (``second`` None) the verdict, centred per item below."""
    verdict = values[frame["category"].to_numpy()]
    if second is None:
        return verdict
    if level == "nominal":
        return (frame["category"].to_numpy() != second).astype(float)
    return verdict - values[second]


def cluster_moments(frame: pd.DataFrame, errors: np.ndarray, language: int, n_judges: int,
                    n_clusters: int) -> np.ndarray:
    """``M[cluster, s, j, k]``: the sums of :func:`error_correlation` per cluster in one
    language, from an items x judges matrix of that language only."""
    J = n_judges
    out = np.zeros((n_clusters, 4, J, J))
    rows = frame["language"].to_numpy() == language
    if not rows.any():
        return out
    part = frame[rows]
    items, unit = np.unique(part["item"].to_numpy(), return_inverse=True)
    E = np.zeros((len(items), J))
    M = np.zeros((len(items), J))
    E[unit, part["judge"].to_numpy()] = errors[rows]
    M[unit, part["judge"].to_numpy()] = 1.0
    cluster = np.zeros(len(items), dtype=int)
    cluster[unit] = part["cluster"].to_numpy()
    for s, (left, right) in enumerate(((M, M), (E, M), (E * E, M), (E, E))):
        products = (left[:, :, None] * right[:, None, :]).reshape(len(items), J * J)
        summed = np.zeros((n_clusters, J * J))
        np.add.at(summed, cluster, products)
        out[:, s] = summed.reshape(n_clusters, J, J)
    return out


DENSE_BUDGET = 256 * 2 ** 20
"""Bytes up to which the per-cluster sums of every language are one dense matrix (one
bootstrap product for all languages); above it, one language at a time (the same draws, the
same numbers up to the last bits of rounding), so a job whose every item is its own cluster
needs the sums of one language only."""


def replicate_sums(block, n_languages: int, n_clusters: int, replicates: int, seed: int,
                   budget: int | None = None):
    """``(point, replicates)`` of the per-cluster sums ``block(language)`` (clusters x
    columns), ``(L, columns)`` and ``(R, L, columns)``: all languages in one product when
    they fit in ``budget`` bytes (default :data:`DENSE_BUDGET`), else one language at a
    time."""
    budget = DENSE_BUDGET if budget is None else budget
    first = block(0) if n_languages else np.zeros((n_clusters, 0))
    if n_clusters * first.shape[1] * n_languages * 8 <= budget:
        stacked = np.stack([first] + [block(l) for l in range(1, n_languages)], axis=1)
        return replicate_tables(stacked, replicates, seed)
    points, reps = [], []
    for language in range(n_languages):
        point, rep = replicate_tables(first if language == 0 else block(language),
                                      replicates, seed)
        first = None
        points.append(point)
        reps.append(rep)
    return np.stack(points), None if reps[0] is None else np.stack(reps, axis=1)


def _centre_complete_items(frame: pd.DataFrame, values: np.ndarray) -> tuple[pd.DataFrame,
                                                                             np.ndarray]:
    """The items every judge of their language rated, and each verdict minus its item's mean:
    the residual of the two-way item + judge model up to the judge's own constant."""
    judges = frame.groupby("language")["judge"].transform("nunique")
    raters = frame.groupby(["language", "item"])["judge"].transform("nunique")
    keep = (raters == judges) & (judges >= 2)
    kept = frame[keep.to_numpy()]
    y = values[kept["category"].to_numpy()]
    item_mean = pd.Series(y).groupby([kept["language"].to_numpy(),
                                      kept["item"].to_numpy()]).transform("mean").to_numpy()
    return kept, y - item_mean


def majority_tables(frame: pd.DataFrame, second: np.ndarray, n_languages: int,
                    n_clusters: int, n_categories: int) -> np.ndarray:
    """``A[cluster, language, a, b]``: each item's majority verdict ``a`` (a tie split evenly
    between the tied verdicts) against its reference ``b``."""
    K = n_categories
    unit = frame.groupby(["language", "item"], sort=False).ngroup().to_numpy()
    n_units = int(unit.max()) + 1 if len(unit) else 0
    counts = np.zeros((n_units, K))
    np.add.at(counts, (unit, frame["category"].to_numpy()), 1.0)
    top = counts == counts.max(axis=1, keepdims=True)
    share = top / top.sum(axis=1, keepdims=True)
    first = np.unique(unit, return_index=True)[1]  # a row of each unit, in unit order
    out = np.zeros((n_clusters, n_languages, K, K))
    np.add.at(out, (frame["cluster"].to_numpy()[first], frame["language"].to_numpy()[first],
                    slice(None), second[first]), share)
    return out


def _lead_measures(level: str, constant_reference: bool) -> dict:
    """The measures of the majority's gain: the card's lead (kappa, quadratic-weighted for
    ordinal and interval labels, or only the accuracy where the reference is constant) and
    the share of agreement."""
    found = {"percent_agreement": measures.percent_agreement}
    if not constant_reference:
        found["cohen_kappa" if level == "nominal" else "cohen_kappa_quadratic"] = (
            measures.cohen_kappa if level == "nominal"
            else lambda C: measures.cohen_kappa(C, "quadratic"))
    return found


def _row(language, judge, versus, measure, estimate, spread, confidence, n_items, n_clusters):
    low, high = _interval(spread, confidence, float(estimate), int(n_clusters))
    return {"language": language, "judge": judge, "versus": versus, "measure": measure,
            "estimate": float(estimate), "ci_low": low, "ci_high": high,
            "n_items": int(n_items), "n_clusters": int(n_clusters)}


def redundancy(verdicts: pd.DataFrame, reference: pd.Series | None = None,
               level: str = "nominal", replicates: int = 1000, seed: int = 0,
               confidence: float = 0.95, languages=None, judges=None) -> pd.DataFrame:
    """The panel's redundancy per language (columns :data:`COLUMNS`): every pair's
    ``error_correlation`` (``judge``, ``versus`` the two judges), the panel's mean
    ``error_correlation`` and ``effective_judges`` (``judge`` = ``versus`` = ``panel``), and
    with a reference the ``majority``'s agreement, the best judge's (``judge`` its name) and
    ``majority_gain_<measure>`` (``versus`` the best judge). ``n_items``: units of the row
    (pairs: units both judges rated; the panel: items; the majority: items with a verdict)."""
    has_reference = reference is not None and not reference.dropna().empty
    if has_reference:
        ref = reference.dropna()
        coded = code_verdicts(with_reference(verdicts, ref), ref, languages, judges)
        frame = coded.frame
        second = reference_codes(coded, ref)
        errors = _errors(frame, coded.values, second, level)
    else:
        coded = code_verdicts(verdicts, None, languages, judges)
        frame, errors = _centre_complete_items(coded.frame, coded.values)
        second = None
    L, J, K, G = len(coded.languages), len(coded.judges), len(coded.values), coded.n_clusters
    if has_reference:
        cell = frame["language"].to_numpy() * J + frame["judge"].to_numpy()
        judge_tables = cluster_tables(cell, frame["cluster"].to_numpy(),
                                      frame["category"].to_numpy(), second, L * J, G, K)
        constant = ref.nunique() < 2
        majority = majority_tables(frame, second, L, G, K).reshape(G, L, K * K)

    def block(language):
        """One language's per-cluster sums: error moments (then its judges' tables and the
        majority's table, with a reference)."""
        parts = [cluster_moments(frame, errors, language, J, G).reshape(G, -1)]
        if has_reference:
            width = J * K * K
            parts += [judge_tables[:, language * width:(language + 1) * width].toarray(),
                      majority[:, language]]
        return np.concatenate(parts, axis=1)
    point, reps = replicate_sums(block, L, G, replicates, seed)
    width = 4 * J * J
    shape = (L, 4, J, J)
    corr = error_correlation(point[:, :width].reshape(shape))
    corr_r = None if reps is None else error_correlation(reps[:, :, :width].reshape((-1,)
                                                                                   + shape))
    rho, n_eff = effective_judges(corr)
    if corr_r is not None:
        rho_r, n_eff_r = effective_judges(corr_r)
    clusters_of = [np.unique(frame.loc[frame["language"].to_numpy() == l, "cluster"])
                   for l in range(L)]
    items_of = [frame.loc[frame["language"].to_numpy() == l, "item"].nunique()
                for l in range(L)]
    n_pair = point[:, :width].reshape(shape)[:, 0]
    pair_measure = "error_correlation" if has_reference else "residual_correlation"
    rows = []
    for l, language in enumerate(coded.languages):
        if items_of[l] == 0:
            continue
        G_l = len(clusters_of[l])
        for a, b in zip(*np.triu_indices(J, 1)):
            if n_pair[l, a, b] == 0:
                continue
            rows.append(_row(language, coded.judges[a], coded.judges[b], pair_measure,
                             corr[l, a, b], None if corr_r is None else corr_r[:, l, a, b],
                             confidence, n_pair[l, a, b], G_l))
        if not has_reference:  # the mean residual correlation is -1/(n - 1) by construction
            continue
        for measure, value, spread in (("error_correlation", rho, None if reps is None
                                        else rho_r), ("effective_judges", n_eff, None
                                                      if reps is None else n_eff_r)):
            rows.append(_row(language, "panel", "panel", measure, value[l],
                             None if spread is None else spread[:, l], confidence,
                             items_of[l], G_l))
    if has_reference:
        rows += _gain_rows(point[:, width:], None if reps is None else reps[:, :, width:],
                           coded, level, constant, confidence, clusters_of)
    return pd.DataFrame(rows, columns=COLUMNS)


def _gain_rows(point, reps, coded, level, constant_reference, confidence, clusters_of):
    """The majority's agreement, the best judge's and the gain, per language and measure."""
    L, J, K = len(coded.languages), len(coded.judges), len(coded.values)
    judge_point = point[:, :J * K * K].reshape(L, J, K, K)
    majority_point = point[:, J * K * K:].reshape(L, K, K)
    judge_reps = None if reps is None else reps[:, :, :J * K * K].reshape(-1, L, J, K, K)
    majority_reps = None if reps is None else reps[:, :, J * K * K:].reshape(-1, L, K, K)
    rows = []
    for measure, function in _lead_measures(level, constant_reference).items():
        per_judge = function(judge_point)
        majority = function(majority_point)
        per_judge_r = None if reps is None else function(judge_reps)
        majority_r = None if reps is None else function(majority_reps)
        for l, language in enumerate(coded.languages):
            rated = judge_point[l].sum(axis=(-2, -1)) > 0
            if not rated.any() or not np.isfinite(per_judge[l][rated]).any():
                continue
            best = int(np.nanargmax(np.where(rated, per_judge[l], np.nan)))
            n_items, G_l = majority_point[l].sum(), len(clusters_of[l])
            rows.append(_row(language, "majority", "reference", measure, majority[l],
                             majority_r[:, l] if reps is not None else None,
                             confidence, n_items, G_l))
            rows.append(_row(language, coded.judges[best], "reference",
                             f"best_judge_{measure}", per_judge[l, best],
                             per_judge_r[:, l, best] if reps is not None else None,
                             confidence, judge_point[l, best].sum(), G_l))
            rows.append(_row(language, "majority", coded.judges[best],
                             f"majority_gain_{measure}", majority[l] - per_judge[l, best],
                             majority_r[:, l] - per_judge_r[:, l, best]
                             if reps is not None else None, confidence, n_items, G_l))
    return rows

