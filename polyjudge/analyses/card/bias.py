"""A judge's biases per language x judge: position, length and self-preference, each with its
cluster-bootstrap interval and a test of whether it differs between languages.

Every bias is a smooth function of a few sums over a judge's units in a language (a ratio of
sums, or least squares from the sums of ``X'X`` and ``X'y``), so the sums are taken per cluster
and every bootstrap replicate's sums are one matrix product with the cluster multiplicities of
:func:`.agreement.replicate_tables`: the draws of the agreement measures when the units come
from the same clusters (docs/methods.md section 11).

Input: one row per unit with ``item``, ``language``, ``judge`` and optionally ``cluster`` (the
unit the bootstrap resamples; default the item), and the columns each bias names.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .agreement import ALL_LANGUAGES, language_test, replicate_tables

BIAS_COLUMNS = ["language", "judge", "bias", "estimate", "ci_low", "ci_high", "n_items",
                "n_clusters", "unit"]
"""The columns of ``card/bias.csv``."""

BIAS_TEST_COLUMNS = ["judge", "bias", "lowest", "highest", "range", "statistic", "df",
                     "p_value", "q_value"]
"""The columns of ``card/bias_tests.csv``."""

UNITS = {
    "position": "share of first-seat choices minus 0.5",
    "length_pairwise": "change in the probability of choosing an answer per doubling of its "
                       "length relative to the other",
    "length_pointwise": "change in score per doubling of the answer's length",
    "self_preference": "own family's answers minus other answers, each as the judge's score "
                       "minus the other families' judges' mean score (score units)"}
"""What the number of each bias is (``unit`` of ``card/bias.csv``)."""

MIN_UNITS = 2
"""A cell with fewer units than this has no estimate."""


def _codes(units: pd.DataFrame, languages, judges):
    """Integer language, judge and cluster codes of ``units`` (clusters coded as
    :func:`.agreement.code_verdicts` codes them: sorted text, so the same clusters get the
    same bootstrap draws), and the rows kept (a known language and judge)."""
    languages = list(languages) if languages is not None else list(pd.unique(units["language"]))
    judges = list(judges) if judges is not None else list(pd.unique(units["judge"]))
    cluster = units["cluster"] if "cluster" in units else units["item"]
    clusters = pd.Categorical(cluster.astype(str))
    lang = pd.Categorical(units["language"], categories=languages).codes.astype(int)
    judge = pd.Categorical(units["judge"], categories=judges).codes.astype(int)
    return languages, judges, lang, judge, clusters.codes.astype(int), len(clusters.categories)


def _sums(units, stats, keep, languages, judges, replicates, seed):
    """Per language x judge cell (then one pooled cell per judge): the sums of ``stats``
    (units x m) over the kept units, on all clusters and in every replicate; with the units
    and clusters each cell counts."""
    languages, judges, lang, judge, cluster, G = _codes(units, languages, judges)
    keep = keep & (lang >= 0) & (judge >= 0)
    L, J, m = len(languages), len(judges), stats.shape[1]
    cell = lang[keep] * J + judge[keep]
    flat = cluster[keep] * (L * J) + cell
    size = G * L * J
    A = np.column_stack([np.bincount(flat, stats[keep, k], minlength=size) for k in range(m)]
                        ).reshape(G, L * J, m)
    n = np.bincount(flat, minlength=size).reshape(G, L * J).astype(float)
    A = np.concatenate([A, A.reshape(G, L, J, m).sum(axis=1)], axis=1)
    n = np.concatenate([n, n.reshape(G, L, J).sum(axis=1)], axis=1)
    point, reps = replicate_tables(A, replicates, seed)
    return languages, judges, point, reps, n.sum(axis=0), (n > 0).sum(axis=0)


def _least_squares(sums, p):
    """The second coefficient (the slope) of least squares from stacked sums
    ``[X'X (p x p), X'y (p)]`` on the last axis; NaN where ``X'X`` is singular."""
    XtX = sums[..., :p * p].reshape(sums.shape[:-1] + (p, p))
    Xty = sums[..., p * p:p * p + p]
    scale = np.abs(np.diagonal(XtX, axis1=-2, axis2=-1)).max(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        normed = XtX / np.where(scale > 0, scale, 1.0)[..., None]
        singular = ~(np.abs(np.linalg.det(normed)) > 1e-10)
    safe = np.where(singular[..., None, None], np.eye(p), XtX)
    slope = np.linalg.solve(safe, Xty[..., None])[..., 1, 0]
    return np.where(singular, np.nan, slope)


def _intervals(reps, confidence, n_cells):
    """Percentile intervals of every cell at once (NaN where fewer than 90% of the replicates
    define the bias, as :func:`.agreement._interval`)."""
    if reps is None:
        return np.full(n_cells, np.nan), np.full(n_cells, np.nan)
    finite = np.isfinite(reps)
    tail = (1.0 - confidence) / 2.0 * 100
    with warnings.catch_warnings():  # a cell undefined in every replicate: NaN, said below
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanpercentile(np.where(finite, reps, np.nan), [tail, 100 - tail], axis=0)
    enough = finite.mean(axis=0) >= 0.9
    return np.where(enough, low, np.nan), np.where(enough, high, np.nan)


def _table(bias, estimate, reps, names, n_units, n_clusters, unit, confidence, L, J):
    low, high = _intervals(reps, confidence, len(names))
    shown = n_units >= MIN_UNITS
    rows = pd.DataFrame({"language": [n[0] for n in names], "judge": [n[1] for n in names],
                         "bias": bias, "estimate": estimate, "ci_low": low, "ci_high": high,
                         "n_items": n_units.astype(int), "n_clusters": n_clusters.astype(int),
                         "unit": unit})[shown].reset_index(drop=True)
    per_language = {}
    if reps is not None:
        values = reps[:, :L * J].reshape(-1, L, J)
        cells = np.where(n_units[:L * J] >= MIN_UNITS, estimate[:L * J], np.nan).reshape(L, J)
        for j, (_, judge) in enumerate(names[:J]):
            per_language[judge, bias] = (cells[:, j], values[:, :, j])
    return rows[BIAS_COLUMNS], per_language


def _names(languages, judges):
    return [(lang, j) for lang in [*languages, ALL_LANGUAGES] for j in judges]


def position_bias(units: pd.DataFrame, replicates: int = 1000, seed: int = 0,
                  confidence: float = 0.95, languages=None, judges=None):
    """The share of a judge's decisive pairwise verdicts that name the answer shown first, minus
    1/2, per language x judge and pooled. ``units``: one row per verdict with ``first`` (it
    named the answer in the first seat) and ``decisive`` (it named an answer, not a tie).
    Without both orders of each item (or seats drawn at random) the share mixes the seat with
    the answers' quality. Returns the table (:data:`BIAS_COLUMNS`) and the per-language
    replicates by (judge, bias) for :func:`bias_tests`."""
    decisive = units["decisive"].to_numpy(bool)
    stats = np.column_stack([units["first"].to_numpy(float) * decisive, decisive])
    languages, judges, point, reps, n, g = _sums(units, stats, decisive, languages, judges,
                                                 replicates, seed)

    def share(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return x[..., 0] / x[..., 1] - 0.5
    return _table("position", share(point), None if reps is None else share(reps),
                  _names(languages, judges), n, g, UNITS["position"], confidence,
                  len(languages), len(judges))


def length_bias(units: pd.DataFrame, pairwise: bool, replicates: int = 1000, seed: int = 0,
                confidence: float = 0.95, languages=None, judges=None):
    """The slope of a judge's verdict on log2 length, by least squares with an intercept and,
    where ``units`` has a finite ``reference`` for every unit, the reference as a covariate (so
    that longer answers being better is not counted as bias).

    Pairwise (``pairwise=True``): ``response`` is 1 when the verdict chose output 1 and 0 when
    it chose output 2 (decisive verdicts only), ``log2_length`` is log2(length of output 1 /
    length of output 2), ``reference`` 1 when output 1 is the gold answer: the slope is the
    change in the probability of choosing an answer per doubling of its length relative to the
    other (a linear probability model). Pointwise: ``response`` the score, ``log2_length`` the
    log2 length of the answer scored, ``reference`` its reference label (a number): the change
    in score per doubling."""
    y = units["response"].to_numpy(float)
    x = units["log2_length"].to_numpy(float)
    keep = np.isfinite(y) & np.isfinite(x)
    columns = [np.ones_like(x), x]
    adjusted = "reference" in units and np.isfinite(units["reference"].to_numpy(float)[keep]).all()
    if adjusted:
        columns.append(units["reference"].to_numpy(float))
    X = np.column_stack(columns)
    X[~keep] = 0.0
    y = np.where(keep, y, 0.0)
    p = X.shape[1]
    stats = np.column_stack([(X[:, :, None] * X[:, None, :]).reshape(len(X), p * p),
                             X * y[:, None]])
    languages, judges, point, reps, n, g = _sums(units, stats, keep, languages, judges,
                                                 replicates, seed)
    unit = UNITS["length_pairwise" if pairwise else "length_pointwise"]
    unit += (", adjusted for the reference" if adjusted else
             ", not adjusted (no reference: includes any effect of quality)")
    return _table("length", _least_squares(point, p),
                  None if reps is None else _least_squares(reps, p),
                  _names(languages, judges), n, g, unit, confidence, len(languages),
                  len(judges))


def self_preference(units: pd.DataFrame, families: dict, replicates: int = 1000,
                    seed: int = 0, confidence: float = 0.95, languages=None, judges=None):
    """Difference in differences: for judge ``j`` and an answer ``i`` in a language, ``d_ij``
    is ``j``'s score minus the mean score the judges of other families gave the same answer;
    the bias is the mean ``d_ij`` over the answers ``j``'s own family wrote minus the mean over
    the other answers. The first difference removes the answer's quality, the second the
    judge's overall leniency. ``units``: ``verdict`` (the score) and ``author`` (who wrote the
    answer); ``families`` maps a judge's or author's name to its family (a name it lacks is
    its own family). Answers no judge of another family scored are left out."""
    def family(names):
        return pd.Series(names).astype(str).map(lambda n: str(families.get(n, n))).to_numpy()
    rows = units.dropna(subset=["verdict"]).reset_index(drop=True)
    judge_family = family(rows["judge"])
    own = judge_family == family(rows["author"])
    # per answer (item in a language): every family's sum and count of scores
    answer = rows.groupby(["language", "item"], sort=False).ngroup().to_numpy()
    fam = pd.Categorical(judge_family).codes
    F = fam.max() + 1 if len(fam) else 0
    total = np.zeros((answer.max() + 1 if len(answer) else 0, F, 2))
    np.add.at(total, (answer, fam), np.column_stack([rows["verdict"].to_numpy(float),
                                                     np.ones(len(rows))]))
    others = total[answer].sum(axis=1) - total[answer, fam]
    with np.errstate(divide="ignore", invalid="ignore"):
        d = rows["verdict"].to_numpy(float) - others[:, 0] / others[:, 1]
    keep = others[:, 1] > 0
    d = np.where(keep, d, 0.0)
    stats = np.column_stack([d * own, own, d * ~own, ~own]).astype(float)
    languages, judges, point, reps, n, g = _sums(rows, stats, keep, languages, judges,
                                                 replicates, seed)

    def did(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return x[..., 0] / x[..., 1] - x[..., 2] / x[..., 3]
    return _table("self_preference", did(point), None if reps is None else did(reps),
                  _names(languages, judges), n, g, UNITS["self_preference"], confidence,
                  len(languages), len(judges))


def bias_tests(per_language: dict, languages) -> pd.DataFrame:
    """For each judge and bias: does it differ between languages? ``per_language`` maps
    (judge, bias) to the per-language estimates and their replicates (replicates x
    languages); the Wald test of :func:`.agreement.language_test` on the bootstrap covariance,
    Benjamini-Hochberg ``q_value`` over every row (:data:`BIAS_TEST_COLUMNS`)."""
    rows = []
    for (judge, bias), (point, reps) in per_language.items():
        statistic, df, p = language_test(point, reps)
        if not df:
            continue
        shown = np.where(np.isfinite(point), point, np.nan)
        rows.append({"judge": judge, "bias": bias, "lowest": languages[np.nanargmin(shown)],
                     "highest": languages[np.nanargmax(shown)],
                     "range": float(np.nanmax(shown) - np.nanmin(shown)),
                     "statistic": statistic, "df": df, "p_value": p})
    out = pd.DataFrame(rows, columns=BIAS_TEST_COLUMNS[:-1]).assign(q_value=np.nan)
    if out["p_value"].notna().any():
        from scipy import stats  # scipy only when a test runs: `import polyjudge` stays light
        tested = out["p_value"].notna()
        out.loc[tested, "q_value"] = stats.false_discovery_control(
            out.loc[tested, "p_value"].to_numpy())
    return out


NOT_COMPUTED = {
    "position": "needs pairwise verdicts that say which answer sat in the first seat (both "
                "orders of each item, or seats drawn at random)",
    "length": "needs each answer's length (pairwise: the texts of both outputs; pointwise: a "
              "length column)",
    "self_preference": "needs the author of each scored answer (a column) and each judge's "
                       "family (card_bias.families); pairwise verdicts are not covered"}
"""Why a bias is not on a card, when its inputs are absent."""


def card_bias(verdicts: pd.DataFrame, reference: pd.Series | None = None,
              families: dict | None = None, replicates: int = 1000, seed: int = 0,
              confidence: float = 0.95, languages=None, judges=None
              ) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The biases the columns of ``verdicts`` allow, their language tests, and why the others
    are not computed (bias -> reason).

    ``verdicts`` is the card's standard form (item, language, judge, verdict[, cluster]) with
    any of: ``first_output`` (pairwise verdicts coded 1 / 2 for the output chosen, 0 a tie:
    which output was shown first) for position; ``log2_length_ratio`` (pairwise: log2 of output
    1's length over output 2's) or ``log2_length`` (pointwise: of the answer scored) for length;
    ``author`` (pointwise: who wrote the answer) with ``families`` for self-preference.
    ``reference`` (item -> label; pairwise: the gold output) adjusts the length slope."""
    languages = list(languages) if languages is not None else list(
        pd.unique(verdicts["language"]))
    settings = {"replicates": replicates, "seed": seed, "confidence": confidence,
                "languages": languages, "judges": judges}
    frame = verdicts.dropna(subset=["verdict"]).reset_index(drop=True)
    pairwise = "first_output" in frame or "log2_length_ratio" in frame
    truth = (None if reference is None else
             pd.to_numeric(reference, errors="coerce").set_axis(reference.index.astype(str))
             .reindex(frame["item"].astype(str)).to_numpy(float))
    parts, per_language, missing = [], {}, {}
    if "first_output" in frame:
        verdict = frame["verdict"].to_numpy(float)
        units = frame.assign(decisive=np.isin(verdict, (1.0, 2.0)),
                             first=verdict == frame["first_output"].to_numpy(float))
        parts.append(position_bias(units, **settings))
    else:
        missing["position"] = NOT_COMPUTED["position"]
    length = "log2_length_ratio" if pairwise else "log2_length"
    if length in frame:
        verdict = frame["verdict"].to_numpy(float)
        response = (np.where(np.isin(verdict, (1.0, 2.0)), (verdict == 1.0).astype(float),
                             np.nan) if pairwise else verdict)
        adjusted = truth is not None and np.isfinite(truth).any()
        if adjusted:  # units without a reference are left out; rows stay, so the clusters
            # (and the bootstrap draws) are those of the agreement
            response = np.where(np.isfinite(truth), response, np.nan)
        units = frame.assign(response=response, log2_length=frame[length].to_numpy(float))
        if adjusted:
            units["reference"] = (np.where(np.isfinite(truth), truth == 1.0, np.nan)
                                  if pairwise else truth)
        parts.append(length_bias(units, pairwise, **settings))
    else:
        missing["length"] = NOT_COMPUTED["length"]
    if "author" in frame and families and not pairwise:
        parts.append(self_preference(frame, families, **settings))
    else:
        missing["self_preference"] = NOT_COMPUTED["self_preference"]
    for _, found in parts:
        per_language.update(found)
    table = (pd.concat([t for t, _ in parts], ignore_index=True) if parts
             else pd.DataFrame(columns=BIAS_COLUMNS))
    return table, bias_tests(per_language, languages), missing
