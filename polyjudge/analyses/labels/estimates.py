"""Per language and judged system: the human labels' mean estimated from the labels alone, from
the judges alone, by CBC and by prediction-powered inference; the systems' differences with
simultaneous intervals; each judge's error against the humans.

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
    """``estimates`` (:data:`ESTIMATE_COLUMNS`), ``differences`` (:data:`DIFFERENCE_COLUMNS`)
    and ``judge_errors`` (:data:`ERROR_COLUMNS`)."""

    estimates: pd.DataFrame
    differences: pd.DataFrame
    judge_errors: pd.DataFrame


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
    rows, errors = [], []
    systems = systems.astype(str)
    for language, panel in by_language(predictions).items():
        system = systems.reindex(panel.items).to_numpy()
        got = labels[labels["language"].astype(str) == language]
        got = got.drop_duplicates("item").set_index("item")["label"].reindex(panel.items)
        labelled = np.flatnonzero(got.notna().to_numpy())
        y_all = got.to_numpy(float)
        named = fixed_predictors(panel, kinds)
        if "crossfit" in kinds:
            on_all, on_labelled = cross_fit(panel.matrix, labelled, y_all[labelled],
                                            folds=folds, seed=seed)
            fitted = np.full(len(on_all), np.nan)
            fitted[labelled] = on_labelled
            named["crossfit"] = (on_all, fitted)
        everything = None
        if all_labels is not None:
            everything = all_labels[all_labels["language"].astype(str) == language]
            everything = everything.drop_duplicates("item").set_index("item")["label"]
        for name in sorted(set(system[pd.notna(system)])):
            here = system == name
            in_system = labelled[here[labelled]]
            n_items, n = int(here.sum()), len(in_system)
            if everything is not None:
                values = everything.reindex(panel.items[here]).dropna()
                rows.append(_row(language, name, "all_labels", "", None, len(values), n_items,
                                 values.mean() if len(values) else np.nan))
            y = y_all[in_system]
            human = classical_mean(y, confidence=confidence, n_population=n_items,
                                   label_range=label_range) if n >= 2 else None
            rows.append(_row(language, name, "human_only", "", human, n, n_items))
            for key in ("panel", "cbc"):
                if key in named:
                    rows.append(_row(language, name, "judge_only" if key == "panel" else "cbc",
                                     key, None, 0, n_items, np.nanmean(named[key][here])))
            for key, values in named.items():
                rows.append(_ppi_row(language, name, key, values, here, in_system, y_all,
                                     confidence, label_range))
        errors += _judge_errors(language, panel, system, labelled, y_all, confidence)
    estimates = pd.DataFrame(rows, columns=ESTIMATE_COLUMNS)
    return LabelEstimates(estimates, differences(estimates, confidence),
                          pd.DataFrame(errors, columns=ERROR_COLUMNS))


def _ppi_row(language, system, key, values, here, in_system, y_all, confidence, label_range):
    """The PPI++ row of one predictor: items the predictor leaves empty are left out of both the
    population and the labelled sample."""
    on_all, on_labelled = values if isinstance(values, tuple) else (values, values)
    defined = here & np.isfinite(on_all)
    use = in_system[np.isfinite(on_labelled[in_system]) & defined[in_system]]
    n_items, n = int(defined.sum()), len(use)
    result = None
    if n >= 3:
        result = ppi_mean(y_all[use], on_labelled[use], on_all[defined],
                          confidence=confidence, n_population=n_items, label_range=label_range)
    return _row(language, system, "ppi", key, result, n, n_items)


def _judge_errors(language, panel, system, labelled, y_all, confidence) -> list:
    """Each judge's bias (mean prediction - label) and mean absolute error against the humans in
    one language: stratified by system (each system's labelled items a sample of its items),
    ``sum_s (N_s / N) mean_s`` with variance ``sum_s (N_s / N)^2 se_s^2``."""
    out = []
    z = z_quantile(confidence)
    for j, judge in enumerate(panel.judges):
        f = panel.matrix[:, j]
        for measure, error in (("bias", f - y_all), ("mae", np.abs(f - y_all))):
            parts, n_total, n_items = [], 0, 0
            for name in sorted(set(system[pd.notna(system)])):
                here = (system == name) & np.isfinite(f)
                use = labelled[here[labelled] & np.isfinite(error[labelled])]
                if len(use) >= 2:
                    fit = classical_mean(error[use], n_population=int(here.sum()),
                                         confidence=confidence)
                    parts.append((int(here.sum()), fit.estimate, fit.se))
                n_total, n_items = n_total + len(use), n_items + int(here.sum())
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
    rows = []
    kept = estimates[estimates["estimator"].isin(["human_only", "ppi"])
                     & estimates["se"].notna()]
    for (language, estimator, predictor), block in kept.groupby(
            ["language", "estimator", "predictor"], sort=False):
        block = block.reset_index(drop=True)
        pairs = len(block) * (len(block) - 1) // 2
        if not pairs:
            continue
        z = z_quantile(confidence, pairs)
        for a in range(len(block)):
            for b in range(a + 1, len(block)):
                diff = block.at[a, "estimate"] - block.at[b, "estimate"]
                se = float(np.hypot(block.at[a, "se"], block.at[b, "se"]))
                rows.append([language, block.at[a, "system"], block.at[b, "system"], estimator,
                             predictor, diff, diff - z * se, diff + z * se, pairs])
    return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)
