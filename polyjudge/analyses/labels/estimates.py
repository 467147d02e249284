"""Per language and judged system: the human labels' mean estimated from the labels alone, from
the judges alone, by CBC and by prediction-powered inference; the systems' differences with
simultaneous intervals and their rank sets; each judge's error against the humans.

The labelled items of a language and system are taken as a simple random sample, without
replacement, of that system's items judged in the language, so every interval is the finite
population's (:func:`polyjudge.analyses.labels.ppi.ppi_mean` with ``n_population``) and the
target is the mean of the human labels of all those items.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .ppi import MeanEstimate, classical_mean, ppi_mean, z_quantile
from .predictors import KINDS, by_language, cross_fit, fixed_predictors
from .ranks import rank_sets

ESTIMATE_COLUMNS = ["language", "system", "estimator", "predictor", "estimate", "ci_low",
                    "ci_high", "se", "lam", "n_labels", "n_items"]
"""The columns of ``labels/estimates.csv``."""
DIFFERENCE_COLUMNS = ["language", "system", "versus", "estimator", "predictor", "difference",
                      "ci_low", "ci_high", "pairs"]
"""The columns of ``labels/differences.csv``."""
ERROR_COLUMNS = ["language", "judge", "measure", "estimate", "ci_low", "ci_high", "n_labels",
                 "n_items"]
"""The columns of ``labels/judge_errors.csv``."""


@dataclass(frozen=True)
class LabelEstimates:
    """``estimates`` (:data:`ESTIMATE_COLUMNS`), ``differences`` (:data:`DIFFERENCE_COLUMNS`),
    ``judge_errors`` (:data:`ERROR_COLUMNS`) and ``ranks``
    (:data:`~polyjudge.analyses.labels.ranks.RANK_COLUMNS`)."""

    estimates: pd.DataFrame
    differences: pd.DataFrame
    judge_errors: pd.DataFrame
    ranks: pd.DataFrame


def _row(language, system, estimator, predictor, result: MeanEstimate | None, n_labels,
         n_items, point=np.nan):
    if result is None:
        return [language, system, estimator, predictor, point, np.nan, np.nan, np.nan, np.nan,
                n_labels, n_items]
    return [language, system, estimator, predictor, result.estimate, result.ci_low,
            result.ci_high, result.se, float(result.lam), n_labels, n_items]


def label_estimates(predictions: pd.DataFrame, labels: pd.DataFrame, systems: pd.Series, *,
                    kinds=KINDS, confidence: float = 0.95, folds: int = 5, seed: int = 0,
                    label_range=None, all_labels: pd.DataFrame | None = None
                    ) -> LabelEstimates:
    """The estimates of one panel (module docstring).

    Parameters
    ----------
    predictions : DataFrame
        ``item``, ``language``, ``judge``, ``prediction`` (on the human scale).
    labels : DataFrame
        ``item``, ``language``, ``label``: one label per item and language (annotators
        combined: :func:`polyjudge.data.human_labels.average_annotators`), the labels used.
    systems : Series
        item -> the judged system it belongs to (a DevAI framework, a model).
    kinds : predictors among :data:`~polyjudge.analyses.labels.predictors.KINDS`.
    all_labels : DataFrame, optional
        Every label there is, when ``labels`` is a sample of them: their mean is written as
        the ``all_labels`` row, the target the sample's intervals aim at.
    """
    systems = systems.astype(str)
    rows, errors = [], []
    for language, panel in by_language(predictions).items():
        got = labels[labels["language"].astype(str) == language]
        got = got.drop_duplicates("item").set_index("item")["label"].reindex(panel.items)
        everything = None
        if all_labels is not None:
            everything = all_labels[all_labels["language"].astype(str) == language]
            everything = everything.drop_duplicates("item").set_index("item")["label"]
            everything = everything.reindex(panel.items).to_numpy(float)
        found = language_rows(language, panel, systems.reindex(panel.items).to_numpy(),
                              got.to_numpy(float), everything, kinds=kinds,
                              confidence=confidence, folds=folds, seed=seed,
                              label_range=label_range)
        rows += found[0]
        errors += found[1]
    return collect(rows, errors, confidence)


def collect(rows: list, errors: list, confidence: float = 0.95) -> LabelEstimates:
    """The rows of :func:`language_rows` of every language as the four tables."""
    estimates = pd.DataFrame(rows, columns=ESTIMATE_COLUMNS)
    pairs = differences(estimates, confidence)
    return LabelEstimates(estimates, pairs, pd.DataFrame(errors, columns=ERROR_COLUMNS),
                          rank_sets(estimates, pairs))


def language_rows(language, panel, system: np.ndarray, y_all: np.ndarray,
                  everything: np.ndarray | None = None, *, kinds=KINDS,
                  confidence: float = 0.95, folds: int = 5, seed: int = 0, label_range=None
                  ) -> tuple[list, list]:
    """One language's estimate rows and judge-error rows, on arrays aligned with
    ``panel.items``: ``system`` (each item's system), ``y_all`` (its label used, NaN where
    unlabelled) and ``everything`` (every label there is, or None)."""
    rows = []
    labelled = np.flatnonzero(np.isfinite(y_all))
    named = fixed_predictors(panel, kinds)
    if "crossfit" in kinds:
        on_all, on_labelled = cross_fit(panel.matrix, labelled, y_all[labelled],
                                        folds=folds, seed=seed)
        fitted = np.full(len(on_all), np.nan)
        fitted[labelled] = on_labelled
        named["crossfit"] = (on_all, fitted)
    strata = _strata(system)
    for name, members in strata:
        in_system = members[np.isfinite(y_all[members])]
        n_items, n = len(members), len(in_system)
        if everything is not None:
            values = everything[members]
            values = values[np.isfinite(values)]
            rows.append(_row(language, name, "all_labels", "", None, len(values), n_items,
                             values.mean() if len(values) else np.nan))
        human = classical_mean(y_all[in_system], confidence=confidence, n_population=n_items,
                               label_range=label_range) if n >= 2 else None
        rows.append(_row(language, name, "human_only", "", human, n, n_items))
        for key in ("panel", "cbc"):
            if key in named:
                rows.append(_row(language, name, "judge_only" if key == "panel" else "cbc",
                                 key, None, 0, n_items, np.nanmean(named[key][members])))
        for key, values in named.items():
            rows.append(_ppi_row(language, name, key, values, members, in_system, y_all,
                                 confidence, label_range))
    return rows, _judge_errors(language, panel, strata, y_all, confidence)


def _strata(system: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """(system, positions of its items) in sorted order; items without a system belong to
    none."""
    codes, names = pd.factorize(pd.Series(system, dtype=object), sort=True)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
    return [(str(name), order[bounds[k]:bounds[k + 1]]) for k, name in enumerate(names)]


def _ppi_row(language, system, key, values, members, in_system, y_all, confidence,
             label_range):
    """The PPI++ row of one predictor: items the predictor leaves empty are left out of both the
    population and the labelled sample."""
    on_all, on_labelled = values if isinstance(values, tuple) else (values, values)
    population = on_all[members]
    population = population[np.isfinite(population)]
    use = in_system[np.isfinite(on_labelled[in_system]) & np.isfinite(on_all[in_system])]
    n_items, n = len(population), len(use)
    result = None
    if n >= 3:
        result = ppi_mean(y_all[use], on_labelled[use], population, confidence=confidence,
                          n_population=n_items, label_range=label_range)
    return _row(language, system, "ppi", key, result, n, n_items)


def _judge_errors(language, panel, strata, y_all, confidence) -> list:
    """Each judge's bias (mean prediction - label) and mean absolute error against the humans in
    one language: stratified by system (each system's labelled items a sample of its items),
    ``sum_s (N_s / N) mean_s`` with variance ``sum_s (N_s / N)^2 se_s^2``."""
    out = []
    z = z_quantile(confidence)
    for j, judge in enumerate(panel.judges):
        f = panel.matrix[:, j]
        scored = [(members, int(np.isfinite(f[members]).sum())) for _, members in strata]
        for measure, how in (("bias", np.subtract), ("mae", lambda a, b: np.abs(a - b))):
            parts, n_total, n_items = [], 0, 0
            for members, size in scored:
                use = members[np.isfinite(y_all[members])]
                error = how(f[use], y_all[use])
                error = error[np.isfinite(error)]
                if len(error) >= 2:
                    fit = classical_mean(error, n_population=size, confidence=confidence)
                    parts.append((size, fit.estimate, fit.se))
                n_total, n_items = n_total + len(error), n_items + size
            if not parts:
                out.append([language, judge, measure, np.nan, np.nan, np.nan, n_total, n_items])
                continue
            size = np.array([p[0] for p in parts], float)
            share = size / size.sum()
            estimate = float(share @ np.array([p[1] for p in parts]))
            se = float(np.sqrt(share ** 2 @ np.array([p[2] for p in parts]) ** 2))
            out.append([language, judge, measure, estimate, estimate - z * se,
                        estimate + z * se, n_total, n_items])
    return out


def differences(estimates: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Every pair of systems in a language, for the labels alone and each PPI predictor: the
    difference of their estimates, ``se = sqrt(se_a^2 + se_b^2)`` (their items are disjoint
    and sampled apart), and intervals simultaneous over the language's pairs by Bonferroni
    (``z`` at ``1 - (1 - confidence) / (2 * pairs)``)."""
    parts = []
    kept = estimates[estimates["estimator"].isin(["human_only", "ppi"])
                     & estimates["se"].notna()]
    for (language, estimator, predictor), block in kept.groupby(
            ["language", "estimator", "predictor"], sort=False):
        a, b = np.triu_indices(len(block), k=1)
        if not len(a):
            continue
        z = z_quantile(confidence, len(a))
        estimate, se = block["estimate"].to_numpy(float), block["se"].to_numpy(float)
        system = block["system"].to_numpy()
        diff = estimate[a] - estimate[b]
        width = z * np.hypot(se[a], se[b])
        parts.append(pd.DataFrame({"language": language, "system": system[a],
                                   "versus": system[b], "estimator": estimator,
                                   "predictor": predictor, "difference": diff,
                                   "ci_low": diff - width, "ci_high": diff + width,
                                   "pairs": len(a)}))
    rows = pd.concat(parts, ignore_index=True) if parts else []
    return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)
