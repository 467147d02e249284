"""The predictors of the human labels in one language: one judge, the panel's mean, the
CBC-calibrated panel mean, and a cross-fitted combination of the judges.

A panel's predictions are a long table (``item``, ``language``, ``judge``, ``prediction``); in
one language they form an items x judges matrix (NaN where a judge did not score an item).

* ``panel``: the mean over the judges that scored the item.
* ``cbc``: the mean over judges of ``prediction - beta[language, judge]``, beta the
  double-centred language x judge cell means of all the panel's predictions (CBC paper,
  section 3; :func:`polyjudge.cbc.estimator.double_center`). Each row of beta sums to zero, so
  where every judge scored every item this equals ``panel``: CBC cannot move a language's mean
  over judges, which is why it cannot see a shift every judge shares in a language.
* ``crossfit``: least squares of the labels on an intercept and the judges' predictions (a
  missing prediction filled with the judge's mean in that language), fitted on the labelled
  items of the language in ``folds`` folds: each labelled item gets the fit of the folds it was
  not in, every item the mean of the folds' fits (cross-prediction, Zrnic and Candes, PNAS 2024,
  "Cross-prediction-powered inference", eq. 3). The PPI++ tuning is applied to it as to any
  predictor.
* ``judge:<name>``: one judge's prediction (items it did not score left out of its estimate).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...cbc.estimator import double_center

KINDS = ("panel", "cbc", "crossfit", "judges")
"""The predictor kinds a panel may ask for (``judges``: one predictor per judge)."""


@dataclass(frozen=True)
class LanguagePredictions:
    """One language's predictions: ``items`` (index of item ids), ``judges``, ``matrix``
    (items x judges, NaN where missing) and ``beta`` (the language's row of the CBC
    interaction, one value per judge)."""

    items: pd.Index
    judges: list
    matrix: np.ndarray
    beta: np.ndarray


def by_language(predictions: pd.DataFrame) -> dict[str, LanguagePredictions]:
    """The long table as one items x judges matrix per language, with CBC's beta."""
    table = predictions.pivot_table(index=["language", "item"], columns="judge",
                                    values="prediction", aggfunc="mean", observed=True)
    judges = list(table.columns)
    cells = predictions.groupby(["language", "judge"], observed=True)["prediction"].mean()
    cells = cells.unstack("judge").reindex(columns=judges)
    beta = pd.DataFrame(double_center(cells.to_numpy(float)), index=cells.index,
                        columns=judges)
    out = {}
    for language, block in table.groupby(level="language", sort=False):
        block = block.droplevel("language")
        out[str(language)] = LanguagePredictions(block.index.astype(str), judges,
                                                 block.to_numpy(float),
                                                 beta.loc[language].to_numpy(float))
    return out


def fixed_predictors(panel: LanguagePredictions, kinds=KINDS) -> dict[str, np.ndarray]:
    """``panel``, ``cbc`` and one per judge (``judge:<name>``): name -> prediction per item."""
    out = {}
    with warnings.catch_warnings():  # an item no judge scored: NaN, left out later
        warnings.simplefilter("ignore", RuntimeWarning)
        if "panel" in kinds:
            out["panel"] = np.nanmean(panel.matrix, axis=1)
        if "cbc" in kinds:
            out["cbc"] = np.nanmean(panel.matrix - panel.beta, axis=1)
    if "judges" in kinds:
        for j, judge in enumerate(panel.judges):
            out[f"judge:{judge}"] = panel.matrix[:, j]
    return out


def cross_fit(matrix: np.ndarray, labelled: np.ndarray, labels: np.ndarray, *,
              folds: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Cross-prediction (module docstring): ``(on_all, on_labelled)``, the mean of the folds'
    fits on every item and each labelled item's out-of-fold fit.

    ``matrix``: items x judges; ``labelled``: positions of the labelled items in it;
    ``labels``: their labels. Fewer labelled items than ``2 * (judges + 2)`` give the
    labels' mean (a constant predictor: PPI then gives the labels alone)."""
    filled = np.where(np.isnan(matrix), np.nanmean(matrix, axis=0), matrix)
    filled = np.nan_to_num(filled)
    design = np.column_stack([np.ones(len(filled)), filled])
    n = len(labelled)
    if n < 2 * (design.shape[1] + 1) or folds < 2:
        constant = np.full(len(filled), np.mean(labels) if n else np.nan)
        return constant, constant[labelled]
    fold = np.random.default_rng(seed).permutation(n) % folds
    on_all = np.zeros(len(filled))
    on_labelled = np.empty(n)
    for k in range(folds):
        train = fold != k
        coef, *_ = np.linalg.lstsq(design[labelled[train]], labels[train], rcond=None)
        on_all += design @ coef / folds
        on_labelled[~train] = design[labelled[~train]] @ coef
    return on_all, on_labelled


def panel_predictions(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """A panel's requirement verdicts or runs as predictions and the system of each item.

    Requirements (``satisfied`` present): the item is ``framework|task|requirement_id`` (the
    judge card's key), the prediction ``satisfied``. Runs: the item is ``framework|task``, the
    prediction ``score``. The judge is the backbone, the system the framework. A run table
    without a framework column (the reader's one framework ``single``) keys items by their
    task alone, as the lab's label file names them."""
    if "satisfied" in table:
        on, value = ["framework", "task", "requirement_id"], "satisfied"
    else:
        on, value = ["framework", "task"], "score"
    on = [c for c in on if c in table]
    if "framework" in on and set(table["framework"].astype(str).unique()) == {"single"}:
        on.remove("framework")
    item = table[on].astype(str).agg("|".join, axis=1)
    system = (table["framework"].astype(str) if "framework" in table
              else pd.Series("all", index=table.index))
    predictions = pd.DataFrame({"item": item.to_numpy(),
                                "language": table["language"].astype(str).to_numpy(),
                                "judge": table["backbone"].astype(str).to_numpy(),
                                "prediction": pd.to_numeric(table[value]).to_numpy(float)})
    systems = pd.Series(system.to_numpy(), index=item.to_numpy())
    return predictions, systems[~systems.index.duplicated()]
