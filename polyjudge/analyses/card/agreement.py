"""Agreement per language x judge: with a reference, among the judges, and whether it differs
between languages.

The input is one verdict per row: ``item``, ``language``, ``judge``, ``verdict`` and optionally
``cluster`` (the unit the bootstrap resamples: a task whose items share a context; default the
item). A reference gives each item one label on the same scale. Intervals are percentile
intervals of a bootstrap over clusters: the counts of each cluster enter every replicate with
its multiplicity, so every replicate's contingency tables are one matrix product and every
measure is computed for all replicates at once (:mod:`.measures`). The same draws serve every
language and judge, so the estimates of one judge in two languages are paired.

The test of a difference between languages is a Wald test on the bootstrap covariance of the
per-language estimates: ``d' S^+ d`` with ``d`` the estimates minus their mean (one language
dropped), referred to chi-square with L - 1 degrees of freedom.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...cbc.bootstrap import replicate_chunk, task_bootstrap_chunks
from . import measures

ALL_LANGUAGES = "all languages"
"""The ``language`` of a row pooling every language's units."""


@dataclass(frozen=True)
class Coded:
    """Verdicts coded as integers: categories (sorted values), clusters, and the labels."""

    frame: pd.DataFrame          # item, language, judge, cluster codes and category code
    values: np.ndarray           # the category values, sorted
    languages: list
    judges: list
    n_clusters: int
    items: pd.Index | None = None  # the item of each item code, as text


def as_text(column: pd.Series) -> pd.Series:
    """A column as text without one string per row: a categorical's categories become text
    (10^7 verdicts share 10^5 item names), any other column is converted row by row."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.rename_categories([str(c) for c in column.cat.categories])
    return column.astype(str)


def codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes of a column's values in the sorted order of their text (the order the
    bootstrap draws clusters in), and the values as text, without text per row."""
    text = as_text(column)
    if isinstance(text.dtype, pd.CategoricalDtype):
        text = text.cat.reorder_categories(sorted(text.cat.categories))
    found, uniques = pd.factorize(text, sort=True)
    return found.astype(np.int64), pd.Index(uniques).astype(str)


def code_verdicts(verdicts: pd.DataFrame, reference: pd.Series | None = None,
                  languages=None, judges=None) -> Coded:
    """Integer codes for the columns of ``verdicts`` (and the reference's labels, which share
    the categories)."""
    # copies of 10^7 rows only where rows are dropped: the card's memory at scale is its copies
    frame = only(verdicts, verdicts["verdict"].notna().to_numpy())
    cluster = frame["cluster"] if "cluster" in frame else frame["item"]
    labels = frame["verdict"].astype(float)
    if reference is not None:
        labels = pd.concat([labels, reference.dropna().astype(float)])
    values = np.unique(labels.to_numpy())
    languages = list(languages) if languages is not None else list(pd.unique(frame["language"]))
    judges = list(judges) if judges is not None else list(pd.unique(frame["judge"]))
    cluster_codes, cluster_names = codes(cluster)
    item_codes, items = codes(frame["item"])
    coded = pd.DataFrame({
        "item": item_codes.astype(np.int32),
        "language": positions(frame["language"], languages).astype(np.int32),
        "judge": positions(frame["judge"], judges).astype(np.int32),
        "cluster": cluster_codes.astype(np.int32),
        "category": np.searchsorted(values, frame["verdict"].to_numpy(float)).astype(np.int32)})
    coded = only(coded, (coded["language"].to_numpy() >= 0) & (coded["judge"].to_numpy() >= 0))
    return Coded(coded, values, languages, judges, len(cluster_names), items)


def only(frame: pd.DataFrame, keep: np.ndarray) -> pd.DataFrame:
    """The rows of ``frame`` where ``keep``: ``frame`` itself where every row is kept."""
    return frame if keep.all() else frame[keep]


def positions(column: pd.Series, labels) -> np.ndarray:
    """Each row's position in ``labels`` (-1: not among them), looked up once per distinct
    value."""
    found, uniques = pd.factorize(column)
    where = pd.Index(list(labels)).get_indexer(pd.Index(uniques))
    return np.where(found >= 0, where[found], -1).astype(np.int64) if len(where) else np.full(
        len(found), -1, dtype=np.int64)


def reference_codes(coded: Coded, reference: pd.Series) -> np.ndarray:
    """Each coded row's reference label as a category code (looked up once per item)."""
    truth = pd.Series(reference.astype(float).to_numpy(), index=reference.index.astype(str))
    per_item = np.searchsorted(coded.values, truth.reindex(coded.items).to_numpy())
    return per_item[coded.frame["item"].to_numpy()]


def with_reference(verdicts: pd.DataFrame, reference: pd.Series) -> pd.DataFrame:
    """The verdicts on items the reference labels."""
    return only(verdicts, as_text(verdicts["item"]).isin(reference.index.astype(str)).to_numpy())


def cluster_tables(cell, cluster, first, second, n_cells, n_clusters, n_categories):
    """Counts ``A[cluster, (cell, a, b)]`` of units of each cell in each cluster, as a sparse
    clusters x (cells x categories^2) matrix: a cluster touches a few cells, and a dense table
    of 10^5 single-item clusters would need gigabytes. Counts are whole numbers, so sums over
    them are exact in any order."""
    from scipy import sparse  # scipy only when a card is made: `import polyjudge` stays light
    k = n_categories
    column = (np.asarray(cell, dtype=np.int64) * k + first) * k + second
    return sparse.csr_array((np.ones(len(column)), (np.asarray(cluster, dtype=np.int64),
                                                    column)),
                            shape=(n_clusters, n_cells * k * k))


def clusters_per_cell(A, n_cells: int) -> np.ndarray:
    """How many clusters have a unit in each cell of a sparse :func:`cluster_tables`."""
    coo = A.tocoo()
    width = A.shape[1] // max(n_cells, 1)
    touched = np.unique(coo.row.astype(np.int64) * n_cells
                        + coo.col.astype(np.int64) // width)
    return np.bincount(touched % n_cells, minlength=n_cells) if n_cells else np.zeros(0, int)


def replicate_tables(A, n_replicates, seed):
    """``(point, replicates)``: ``A`` summed over clusters, and with bootstrap multiplicities
    (``R x clusters`` from :func:`~polyjudge.cbc.bootstrap.task_bootstrap`). ``A`` is dense
    (clusters x any shape) or a sparse clusters x columns matrix."""
    sparse_input = not isinstance(A, np.ndarray)
    point = np.asarray(A.sum(axis=0)).reshape(A.shape[1:])
    if n_replicates == 0 or A.shape[0] < 2:
        return point, None
    # in chunks of replicates (the same draws: the generator's stream runs on), so the
    # replicates x clusters multiplicities stay small however many clusters a panel has
    flat = A if sparse_input else A.reshape(A.shape[0], -1)
    chunk = replicate_chunk(n_replicates, 2 * A.shape[0] + flat.shape[1])
    # C order whatever the product returns (a sparse product's is transposed), so every
    # measure sums the replicates in the same order as a dense product's
    reps = np.concatenate([np.ascontiguousarray(boot.counts.astype(float) @ flat)
                           for boot in task_bootstrap_chunks(
                               A.shape[0], n_replicates, np.random.default_rng(seed), chunk)])
    return point, reps.reshape((n_replicates,) + A.shape[1:])


def measure_functions(level: str, values) -> dict:
    """The measures of agreement for a scale at ``level`` (nominal: the categories only;
    ordinal: weighted kappa and rank correlations too; interval: and the signed error)."""
    found = {"percent_agreement": measures.percent_agreement}
    if level == "nominal":
        found["cohen_kappa"] = measures.cohen_kappa
    else:
        found["cohen_kappa_quadratic"] = lambda C: measures.cohen_kappa(C, "quadratic")
    found["gwet_ac1"] = measures.gwet_ac1
    found[f"krippendorff_alpha_{level}"] = lambda C: measures.krippendorff_alpha(C, values,
                                                                                   level)
    if level != "nominal":
        found["spearman"] = measures.spearman
        found["kendall_tau_b"] = measures.kendall_tau_b
        found["mean_signed_error"] = lambda C: measures.mean_signed_error(C, values)
    return found


def few_cluster_factor(n_clusters: int, confidence: float) -> float:
    """``sqrt(G / (G - 1)) t_{G-1} / z``: how much wider a percentile interval over ``G``
    clusters is made. The bootstrap's variance is ``(G - 1) / G`` of the unbiased one, and a t
    quantile with ``G - 1`` degrees of freedom stands for the normal one (the usual small-sample
    correction of a cluster-robust interval); 1.10 at 20 clusters, 1.03 at 55, 1 in the limit."""
    if n_clusters < 2:
        return np.nan
    from scipy import stats  # scipy only when an interval is made: `import polyjudge` stays light
    q = (1.0 + confidence) / 2.0
    return float(np.sqrt(n_clusters / (n_clusters - 1.0)) * stats.t.ppf(q, n_clusters - 1)
                 / stats.norm.ppf(q))


def _interval(replicates, confidence, estimate=np.nan, n_clusters=0):
    """The percentile interval of ``replicates``, widened about ``estimate`` by
    :func:`few_cluster_factor` (measured coverage: docs/methods.md section 11); NaN where the
    measure is undefined in more than 10% of the replicates."""
    if replicates is None:
        return np.nan, np.nan
    finite = replicates[np.isfinite(replicates)]
    if len(finite) < 0.9 * len(replicates) or not np.isfinite(estimate):
        return np.nan, np.nan  # undefined in too many replicates to be an interval
    tail = (1.0 - confidence) / 2.0 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    factor = few_cluster_factor(n_clusters, confidence)
    return estimate - factor * (estimate - low), estimate + factor * (high - estimate)


def _rows(point, reps, names, functions, confidence, n_items, n_clusters):
    rows = []
    for measure, function in functions.items():
        estimate = function(point)
        spread = function(reps) if reps is not None else None
        for c, labels in enumerate(names):
            low, high = _interval(None if spread is None else spread[:, c], confidence,
                                  float(estimate[c]), int(n_clusters[c]))
            rows.append({**labels, "measure": measure, "estimate": float(estimate[c]),
                         "ci_low": low, "ci_high": high, "n_items": int(n_items[c]),
                         "n_clusters": int(n_clusters[c])})
    return rows


def reference_agreement(verdicts: pd.DataFrame, reference: pd.Series, level: str = "nominal",
                        replicates: int = 1000, seed: int = 0, confidence: float = 0.95,
                        languages=None, judges=None) -> tuple[pd.DataFrame, dict]:
    """Each judge's agreement with ``reference`` (item -> label), per language and pooled over
    languages (``language`` = :data:`ALL_LANGUAGES`), every measure of
    :func:`measure_functions` with its cluster-bootstrap interval. Also returns the
    per-replicate estimates by (judge, measure) over languages, for :func:`language_tests`."""
    ref = reference.dropna()
    coded = code_verdicts(with_reference(verdicts, ref), ref, languages, judges)
    frame = coded.frame
    truth = ref
    second = reference_codes(coded, ref)
    L, J, K = len(coded.languages), len(coded.judges), len(coded.values)
    cell = frame["language"].to_numpy() * J + frame["judge"].to_numpy()
    A = cluster_tables(cell, frame["cluster"].to_numpy(), frame["category"].to_numpy(), second,
                       L * J, coded.n_clusters, K)
    A = pooled_cells(A, L, J * K * K)
    point, reps = replicate_tables(A, replicates, seed)
    point = point.reshape(-1, K, K)
    reps = None if reps is None else reps.reshape(replicates, -1, K, K)
    names = [{"language": lang, "judge": j, "versus": "reference"}
             for lang in [*coded.languages, ALL_LANGUAGES] for j in coded.judges]
    n_items = point.sum(axis=(-2, -1))
    n_clusters = clusters_per_cell(A, (L + 1) * J)
    functions = measure_functions(level, coded.values)
    if truth.nunique() < 2:  # one right answer for every item (a preference's chosen side):
        # chance-corrected measures are undefined, the share of agreement is the accuracy
        functions = {"percent_agreement": functions["percent_agreement"]}
    table = pd.DataFrame(_rows(point, reps, names, functions, confidence, n_items, n_clusters))
    per_language = {}
    if reps is not None:
        for measure, function in functions.items():
            values = function(reps[:, :L * J]).reshape(-1, L, J)
            for j, judge in enumerate(coded.judges):
                per_language[judge, measure] = values[:, :, j]
    return table, per_language


def pooled_cells(A, n_languages: int, width: int):
    """Sparse ``A`` (clusters x languages x ``width``) with one more block of ``width`` columns
    per cluster: the sum over languages (the cells pooled over languages)."""
    from scipy import sparse
    stack = sparse.csr_array((np.ones(n_languages * width),
                              (np.arange(n_languages * width),
                               np.tile(np.arange(width), n_languages))),
                             shape=(n_languages * width, width))
    return sparse.hstack([A, A @ stack], format="csr")


def panel_agreement(verdicts: pd.DataFrame, level: str = "nominal", replicates: int = 1000,
                    seed: int = 0, confidence: float = 0.95, languages=None,
                    judges=None) -> pd.DataFrame:
    """Agreement among the judges in each language: Krippendorff's alpha over the panel (any
    number of judges per item), Fleiss' kappa (items every judge rated) with ``judge`` =
    ``panel``, and every pair of judges' Cohen's kappa and percent agreement (``judge`` and
    ``versus`` the two judges)."""
    coded = code_verdicts(verdicts, None, languages, judges)
    frame = coded.frame
    L, J, K, G = len(coded.languages), len(coded.judges), len(coded.values), coded.n_clusters
    unit = frame.groupby(["language", "item"], sort=False).ngroup().to_numpy()
    n_units = unit.max() + 1 if len(unit) else 0
    counts = np.zeros((n_units, K))
    np.add.at(counts, (unit, frame["category"].to_numpy()), 1.0)
    first = frame.assign(unit=unit).drop_duplicates("unit").sort_values("unit")
    unit_language, unit_cluster = first["language"].to_numpy(), first["cluster"].to_numpy()
    raters = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        pairs = np.where(raters[:, None, None] > 1,
                         (counts[:, :, None] * counts[:, None, :]
                          - counts[:, :, None] * np.eye(K)) / (raters[:, None, None] - 1), 0.0)
    O = np.zeros((G, L, K, K))
    np.add.at(O, (unit_cluster, unit_language), pairs)
    # Fleiss' kappa: the items every judge of their language rated
    per_language = frame.groupby("language")["judge"].nunique().reindex(range(L)).fillna(0)
    m = per_language.to_numpy(float)[unit_language]
    complete = (raters == m) & (m > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        fleiss_p = np.where(complete, ((counts ** 2).sum(axis=1) - m) / (m * (m - 1)), 0.0)
    sums = np.zeros((G, L, K + 2))
    np.add.at(sums, (unit_cluster, unit_language),
              np.column_stack([fleiss_p, np.where(complete[:, None], counts, 0.0),
                               complete.astype(float)]))
    stacked = np.concatenate([O.reshape(G, L, K * K), sums], axis=-1)
    point, reps = replicate_tables(stacked[:, :, :, None], replicates, seed)
    point, reps = point[..., 0], None if reps is None else reps[..., 0]

    def alpha(x):
        return measures.alpha_from_coincidences(
            x[..., :K * K].reshape(x.shape[:-1] + (K, K)), coded.values, level)

    def fleiss(x):
        return measures.fleiss_kappa(x[..., K * K], x[..., K * K + 1:K * K + 1 + K],
                                     x[..., -1])
    rows = []
    items = np.bincount(unit_language, minlength=L)
    clusters = np.array([len(np.unique(unit_cluster[unit_language == l])) for l in range(L)])
    names = [{"language": lang, "judge": "panel", "versus": "panel"} for lang in coded.languages]
    rows += _rows(point, reps, names, {f"krippendorff_alpha_{level}": alpha,
                                       "fleiss_kappa": fleiss}, confidence, items, clusters)
    point, reps, n_pair_clusters, judge_pairs = pair_replicates(frame, L, J, G, K,
                                                                 replicates, seed)
    if len(judge_pairs):
        names = [{"language": lang, "judge": coded.judges[a], "versus": coded.judges[b]}
                 for lang in coded.languages for a, b in judge_pairs]
        rows += _rows(point, reps, names, {"cohen_kappa": measures.cohen_kappa,
                                           "percent_agreement": measures.percent_agreement},
                      confidence, point.sum(axis=(-2, -1)), n_pair_clusters)
    return pd.DataFrame(rows)


def pair_replicates(frame: pd.DataFrame, n_languages: int, n_judges: int, n_clusters: int,
                    n_categories: int, n_replicates: int, seed: int):
    """``(point, replicates, n_clusters, pairs)`` of the tables ``[language x pair, a, b]`` of
    every pair of judges (a < b) that rated an item in some language, and the pairs. One
    language at a time (its sparse tables, built from an items x judges matrix of that
    language, and their replicates with the same draws), so memory stays that of one
    language's verdicts, not of every pair's rows at once."""
    J, K = n_judges, n_categories
    pairs = [(a, b) for a in range(J) for b in range(a + 1, J)]
    P = len(pairs)
    if not n_languages or not P:
        return np.zeros((0, K, K)), None, np.zeros(0, int), []
    points, reps, clusters = [], [], []
    for language in range(n_languages):
        A = language_pair_tables(frame, language, J, pairs, n_clusters, K)
        point, rep = replicate_tables(A, n_replicates, seed)
        points.append(point.reshape(P, K, K))
        reps.append(None if rep is None else rep.reshape(-1, P, K, K))
        clusters.append(clusters_per_cell(A, P))
    point = np.stack(points)
    used = point.sum(axis=(0, -2, -1)) > 0
    rep = None if reps[0] is None else np.stack(reps, axis=1)[:, :, used].reshape(
        n_replicates, -1, K, K)
    return (point[:, used].reshape(-1, K, K), rep, np.stack(clusters)[:, used].ravel(),
            [pair for pair, u in zip(pairs, used) if u])


def language_pair_tables(frame: pd.DataFrame, language: int, n_judges: int, pairs: list,
                         n_clusters: int, n_categories: int):
    """Sparse ``A[cluster, (pair, a, b)]`` of one language (:func:`cluster_tables`)."""
    K = n_categories
    part = frame[frame["language"].to_numpy() == language].drop_duplicates(["item", "judge"])
    if part.empty:
        return cluster_tables(np.zeros(0, int), np.zeros(0, int), np.zeros(0, int),
                              np.zeros(0, int), len(pairs), n_clusters, K)
    J = n_judges
    _, unit = np.unique(part["item"].to_numpy(), return_inverse=True)
    category = np.full((unit.max() + 1, J), -1, dtype=np.int64)
    category[unit, part["judge"].to_numpy()] = part["category"].to_numpy()
    cluster = np.zeros(unit.max() + 1, dtype=np.int64)
    cluster[unit] = part["cluster"].to_numpy()
    cells, clusters, first, second = [], [], [], []
    for p, (a, b) in enumerate(pairs):
        both = (category[:, a] >= 0) & (category[:, b] >= 0)
        cells.append(np.full(both.sum(), p))
        clusters.append(cluster[both])
        first.append(category[both, a])
        second.append(category[both, b])
    return cluster_tables(np.concatenate(cells), np.concatenate(clusters),
                          np.concatenate(first), np.concatenate(second), len(pairs),
                          n_clusters, K)


def language_test(point: np.ndarray, replicates: np.ndarray) -> tuple[float, int, float]:
    """Wald test that a quantity is the same in every language: ``(statistic, df, p)``; NaN
    where fewer than two languages have a finite estimate."""
    keep = np.isfinite(point) & np.isfinite(replicates).all(axis=0)
    if keep.sum() < 2:
        return np.nan, 0, np.nan
    x, reps = point[keep], replicates[:, keep]
    contrast = (np.eye(len(x)) - 1.0 / len(x))[:-1]
    d, spread = contrast @ x, reps @ contrast.T
    covariance = np.atleast_2d(np.cov(spread, rowvar=False))
    statistic = float(d @ np.linalg.pinv(covariance) @ d)
    df = int(np.linalg.matrix_rank(covariance))
    from scipy import stats  # scipy only when a test runs: `import polyjudge` stays light
    return statistic, df, float(stats.chi2.sf(statistic, df)) if df else np.nan


TEST_COLUMNS = ["judge", "versus", "measure", "lowest", "highest", "range", "statistic", "df",
                "p_value", "q_value"]
"""The columns of ``card/language_tests.csv``."""


def language_tests(table: pd.DataFrame, per_language: dict, languages) -> pd.DataFrame:
    """For each judge and measure of :func:`reference_agreement`: does it differ between
    languages? Benjamini-Hochberg ``q_value`` over every row."""
    rows = []
    for (judge, measure), reps in per_language.items():
        shown = table[(table["judge"] == judge) & (table["measure"] == measure)
                      & (table["language"] != ALL_LANGUAGES)].set_index("language")
        point = shown["estimate"].reindex(languages).to_numpy(float)
        statistic, df, p = language_test(point, reps)
        rows.append({"judge": judge, "versus": "reference", "measure": measure,
                     "lowest": shown["estimate"].idxmin() if shown["estimate"].notna().any()
                     else None, "highest": shown["estimate"].idxmax()
                     if shown["estimate"].notna().any() else None,
                     "range": float(np.nanmax(point) - np.nanmin(point))
                     if np.isfinite(point).any() else np.nan,
                     "statistic": statistic, "df": df, "p_value": p})
    out = pd.DataFrame(rows, columns=TEST_COLUMNS[:-1]).assign(q_value=np.nan)
    if len(out):
        tested = out["p_value"].notna()
        if tested.any():
            from scipy import stats
            out.loc[tested, "q_value"] = stats.false_discovery_control(
                out.loc[tested, "p_value"].to_numpy())
    return out
