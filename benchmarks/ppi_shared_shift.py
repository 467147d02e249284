"""A shift every judge shares in one language: CBC's estimate misses the humans' mean there,
the prediction-powered interval covers it.

Synthetic multilingual panels with a planted truth: each of 3 systems has 400 items with a
binary human label (rates 0.3, 0.5, 0.65), the same in every language; 6 judges score every
item in 5 languages as ``label + judge bias + language x judge interaction + shift + noise``
(biases SD 0.05 centred, interaction SD 0.05 double-centred, noise SD 0.35), where the shift is
``--shift`` (0.15) in the last language and 0 elsewhere. Each draw takes n labels per language
and system uniformly without replacement; the target is the mean of all the system's labels.
CBC's estimate is the CBC-calibrated judges' mean (which equals their mean: double-centring
does not move a language's mean over judges); PPI uses it, the judges' mean or the cross-fitted
combination as predictor (finite-population interval, polyjudge.analyses.labels.ppi_mean).

    python benchmarks/ppi_shared_shift.py [--panels 5] [--draws 200] [--n 100]
"""
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from polyjudge.analyses.labels import by_language, fixed_predictors, ppi_mean
from ppi_devai import cross_fit_draws, draw

SYSTEMS, RATES, ITEMS, LANGUAGES, JUDGES = ["A", "B", "C"], [0.3, 0.5, 0.65], 400, 5, 6


def panel(rng, shift: float) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Predictions (long), labels (items,) and the system of each item."""
    system = np.repeat(np.arange(len(SYSTEMS)), ITEMS)
    label = (rng.random(len(system)) < np.array(RATES)[system]).astype(float)
    bias = rng.normal(0, 0.05, JUDGES)
    inter = rng.normal(0, 0.05, (LANGUAGES, JUDGES))
    inter -= inter.mean(0) + inter.mean(1, keepdims=True) - inter.mean()
    shifts = np.zeros(LANGUAGES)
    shifts[-1] = shift
    bias -= bias.mean()  # the judges are right on average where there is no shift
    score = (label[:, None, None] + bias + inter + shifts[:, None]
             + rng.normal(0, 0.35, (len(label), LANGUAGES, JUDGES)))
    i, lang, j = np.indices(score.shape).reshape(3, -1)
    long = pd.DataFrame({"item": i.astype(str), "language": [f"L{k}" for k in lang],
                         "judge": [f"J{k}" for k in j], "prediction": score.ravel()})
    return long, label, system


def run(panels: int, draws: int, n: int, shift: float, seed: int = 5) -> pd.DataFrame:
    rows = []
    for p in range(panels):
        rng = np.random.default_rng([seed, p])
        long, label, system = panel(rng, shift)
        for language, block in by_language(long).items():
            order = block.items.astype(int).to_numpy()  # matrix rows -> item number
            y_all, groups = label[order], system[order]
            predictors = fixed_predictors(block, ("panel", "cbc"))
            design = np.column_stack([np.ones(len(order)), block.matrix])
            where = [np.flatnonzero(groups == s) for s in range(len(SYSTEMS))]
            idx = [w[draw(rng, len(w), n, draws)] for w in where]
            on_all, on_lab = cross_fit_draws(design, np.concatenate(idx, 1),
                                             y_all[np.concatenate(idx, 1)])
            for s, name in enumerate(SYSTEMS):
                truth = y_all[where[s]].mean()
                y = y_all[idx[s]]
                cbc = predictors["cbc"][where[s]].mean()
                fits = {key: ppi_mean(y, values[idx[s]], values[where[s]],
                                      n_population=len(where[s]), label_range=(0, 1))
                        for key, values in predictors.items()}
                cols = slice(s * n, (s + 1) * n)
                fits["crossfit"] = ppi_mean(y, on_lab[:, cols], on_all[:, where[s]],
                                            n_population=len(where[s]), label_range=(0, 1))
                for key, fit in fits.items():
                    rows.append({"panel": p, "language": language, "shifted":
                                 language == f"L{LANGUAGES - 1}", "system": name,
                                 "predictor": key, "cbc_error": cbc - truth,
                                 "coverage": np.mean((fit.ci_low <= truth)
                                                     & (truth <= fit.ci_high)),
                                 "half_width": fit.width.mean() / 2})
    return pd.DataFrame(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--panels", type=int, default=5)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--shift", type=float, default=0.15)
    args = parser.parse_args(argv)
    table = run(args.panels, args.draws, args.n, args.shift)
    summary = table.groupby(["shifted", "predictor"]).agg(
        coverage=("coverage", "mean"), coverage_min=("coverage", "min"),
        half_width=("half_width", "mean"), cbc_error=("cbc_error", "mean"),
        cbc_abs_error_min=("cbc_error", lambda e: e.abs().min()))
    print(f"{args.panels} panels x {args.draws} draws, n = {args.n} labels per language x "
          f"system, shift {args.shift} in one language of {LANGUAGES}:")
    print(summary.round(3).to_string())


if __name__ == "__main__":
    main()
