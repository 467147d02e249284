"""Whether a judge's missing cells depend on the item's score: a check of informative missingness.

Every estimator for incomplete panels here (docs/methods.md 10.1, the stopping rule of 10.7)
assumes a cell is missing independently of the score the judge would have given. A judge that
fails to answer when it would give a low score breaks that, and nothing in the cells it left
shows it. What can be seen is the item's score as the OTHER judges give it: a judge whose own
scores agree with theirs, and whose low scores go missing, goes missing where the others score
low. :func:`informative_missing_check` tests that (docs/methods.md 10.9).

For judge ``b`` and language ``l`` (a stratum), each item ``t`` with at least one other judge's
score has ``z[t] = mean_{b' != b} S[t, l, b']`` and the indicator ``r[t] = S[t, l, b] missing``;
``u[t] = (rank(z)[t] - (n + 1) / 2) / n`` is its centred mid-rank among the stratum's ``n``
items. The statistic of a judge is ``U_b = sum over strata and missing cells of u`` (a rank-sum
stratified by language, van Elteren's weights ``1 / n``). Under the null, within every stratum
the missing cells are a uniform random subset of the items (given their number): then ``U_b``
has mean 0, and its permutation distribution (each stratum's missing cells redrawn
independently, without replacement) gives an exact Monte Carlo p-value, two-sided,
``(1 + #{|U*| >= |U|}) / (1 + n_permutations)``. Holm's step-down over the judges controls the
chance of flagging any judge of a panel whose cells are missing at random at ``alpha``; each
language's own test (the same permutations, Holm over that judge's languages) says where.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

CHECK_COLUMNS = ["judge", "language", "n_cells", "n_missing", "missing_rate",
                 "other_mean_missing", "other_mean_observed", "rank_effect", "p_value",
                 "p_holm", "flagged"]
ALL_LANGUAGES = "all"


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN entries are left out and stay NaN)."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    tested = np.flatnonzero(np.isfinite(p))
    order = tested[np.argsort(p[tested], kind="stable")]
    steps = (len(order) - np.arange(len(order))) * p[order]
    out[order] = np.minimum(np.maximum.accumulate(steps), 1.0)
    return out


def centred_ranks(z: np.ndarray) -> np.ndarray:
    """``(midrank - (n + 1) / 2) / n`` of a 1-d array (ties share their mid-rank)."""
    n = len(z)
    order = np.argsort(z, kind="stable")
    sorted_z = z[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_z) != 0) + 1]
    ends = np.r_[starts[1:], n]
    mid = (starts + ends + 1) / 2.0                       # 1-based mid-rank of each tie run
    ranks = np.empty(n)
    ranks[order] = np.repeat(mid, ends - starts)
    return (ranks - (n + 1) / 2.0) / n


def _draws(u: np.ndarray, k: int, n_permutations: int, rng) -> np.ndarray:
    """Sums of ``u`` over ``n_permutations`` uniform random ``k``-subsets (no replacement).

    A few missing cells among many items (``k^2 <= n``, the usual case) are drawn as ``k``
    indices with replacement, redrawing the rows that repeat one (rejection keeps each subset
    equally likely, and costs ``k`` draws a row instead of ``n``); otherwise the ``k`` smallest
    of ``n`` uniforms."""
    n = len(u)
    size = min(k, n - k)                      # draw the smaller side; u sums to 0
    if size * size <= n:
        pick = rng.integers(0, n, (n_permutations, size))
        repeats = (np.diff(np.sort(pick, axis=1), axis=1) == 0).any(axis=1)
        while repeats.any():
            pick[repeats] = rng.integers(0, n, (int(repeats.sum()), size))
            repeats = (np.diff(np.sort(pick, axis=1), axis=1) == 0).any(axis=1)
    else:
        pick = np.argpartition(rng.random((n_permutations, n)), size - 1, axis=1)[:, :size]
    sums = u[pick].sum(axis=1)
    return sums if size == k else u.sum() - sums


def informative_missing_check(scores, languages=None, judges=None, alpha: float = 0.05,
                              n_permutations: int = 999, seed: int = 0) -> pd.DataFrame:
    """Test, per judge, whether its missing cells depend on the item's score as the other
    judges give it (the stratified rank test of the module docstring).

    ``scores``: (items, languages, judges), NaN = missing. One row per judge (``language``
    ``"all"``: the test stratified by language; ``flagged`` where Holm's p over the judges is
    at most ``alpha``), then one per judge and language with missing cells (the same test in
    that language alone; ``p_holm`` over the judge's languages; ``flagged`` empty: the decision
    is the judge's). Columns (:data:`CHECK_COLUMNS`): ``n_cells`` cells with another judge's
    score (the testable ones), ``n_missing`` of them missing, ``missing_rate``;
    ``other_mean_missing`` / ``other_mean_observed``: the mean of ``z`` over the missing and
    the observed cells; ``rank_effect``: the mean ``u`` of the missing cells, in (-0.5, 0.5),
    negative where the judge's cells go missing on items the others score low, 0 in
    expectation under the null. A stratum whose cells are all observed or all missing carries
    no information and adds nothing. Randomness: ``np.random.default_rng(seed)``.
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 3:
        raise ValueError(f"scores must be (items, languages, judges), got shape {scores.shape}")
    _, k, m = scores.shape
    languages = list(languages) if languages is not None else [f"l{i}" for i in range(k)]
    judges = list(judges) if judges is not None else [f"b{i}" for i in range(m)]
    if not 0 < alpha < 1 or n_permutations < 1:
        raise ValueError("alpha must lie in (0, 1) and n_permutations be at least 1")
    rng = np.random.default_rng(seed)
    missing = ~np.isfinite(scores)
    observed = np.where(missing, 0.0, scores)
    count = (~missing).sum(axis=2, keepdims=True) - ~missing
    with np.errstate(invalid="ignore", divide="ignore"):
        other = (observed.sum(axis=2, keepdims=True) - observed) / count
    judge_rows, language_rows = [], []
    for b in range(m):
        total, null, strata = 0.0, np.zeros(n_permutations), []
        for l in range(k):
            testable = np.isfinite(other[:, l, b])
            z, r = other[testable, l, b], missing[testable, l, b]
            n, n_miss = len(z), int(r.sum())
            row = _summary(judges[b], languages[l], z, r)
            if 0 < n_miss < n:
                u = centred_ranks(z)
                draws = _draws(u, n_miss, n_permutations, rng)
                stat = u[r].sum()
                total, null = total + stat, null + draws
                row.update(rank_effect=stat / n_miss, p_value=_p_value(stat, draws))
                strata.append(row)
            elif n_miss:
                strata.append(row)
        testable = np.isfinite(other[:, :, b])
        row = _summary(judges[b], ALL_LANGUAGES, other[:, :, b][testable],
                       missing[:, :, b][testable])
        if any(np.isfinite(s["p_value"]) for s in strata):
            row.update(rank_effect=total / sum(s["n_missing"] for s in strata
                                               if np.isfinite(s["p_value"])),
                       p_value=_p_value(total, null))
        judge_rows.append(row)
        adjusted = holm([s["p_value"] for s in strata])
        for s, p in zip(strata, adjusted):
            s["p_holm"] = p
        language_rows += strata
    adjusted = holm([r["p_value"] for r in judge_rows])
    for row, p in zip(judge_rows, adjusted):
        row.update(p_holm=p, flagged=bool(p <= alpha))
    frame = pd.DataFrame(judge_rows + language_rows, columns=CHECK_COLUMNS)
    frame["flagged"] = frame["flagged"].astype("boolean")
    return frame


def _summary(judge, language, z, r) -> dict:
    """The descriptive part of a row; the test's fields NaN until a test fills them."""
    n, n_miss = len(z), int(r.sum())
    return {"judge": judge, "language": language, "n_cells": n, "n_missing": n_miss,
            "missing_rate": n_miss / n if n else np.nan,
            "other_mean_missing": z[r].mean() if n_miss else np.nan,
            "other_mean_observed": z[~r].mean() if n_miss < n else np.nan,
            "rank_effect": np.nan, "p_value": np.nan, "p_holm": np.nan, "flagged": pd.NA}


def _p_value(stat: float, draws: np.ndarray) -> float:
    """Two-sided Monte Carlo permutation p-value; a relative 1e-9 absorbs float sums' order."""
    extreme = np.abs(draws) >= abs(stat) * (1 - 1e-9) - 1e-12
    return float((1 + extreme.sum()) / (1 + len(draws)))


def flagged_judges(check: pd.DataFrame) -> list:
    """The judges a check flagged (its judge rows)."""
    rows = check[(check["language"] == ALL_LANGUAGES) & check["flagged"].fillna(False)]
    return rows["judge"].tolist()
