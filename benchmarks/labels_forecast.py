"""How good is the label plan's forecast of the labels still needed? Planted languages
(``planted_items``, 6 judges), sequences of labels in batches of 10 as the plan draws them:
after the first ``--at`` labels, the forecast (``labels_needed``, as ``label_progress`` makes
it) of the labels to reach a target half-width, against the labels the sequence actually
needed (its first look at or below the target).

    python benchmarks/labels_forecast.py [--sequences 300] [--at 50]
"""
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from polyjudge.analyses.labels.anytime import anytime_ppi
from polyjudge.analyses.labels.plan import label_progress
from polyjudge.analyses.labels.synthetic import planted_items, simulate_labelling

BATCH, LABELS = 10, 1500


def run(kind, design, target, n_seq, at, n_items=10000, seed=0):
    rng = np.random.default_rng([seed, len(kind), len(design)])
    labels, scores = planted_items(rng, n_items, 6, kind, "medium", "concentrated")
    f = scores.mean(axis=1)
    idx, p = simulate_labelling(rng, labels, scores, n_seq, LABELS, BATCH, design)
    label_range = (0.0, 1.0) if kind == "binary" else (1.0, 5.0)
    ends = np.arange(BATCH, LABELS + 1, BATCH)
    _, low, up = anytime_ppi(labels[idx][..., None], f[idx][..., None],
                             (1.0 / (n_items * p))[..., None], f.mean(),
                             label_range=label_range)
    half = ((up - low)[:, ends - 1, 0]) / 2
    actual = np.where((half <= target).any(axis=1), ends[np.argmax(half <= target, axis=1)],
                      np.nan)
    predictions = pd.DataFrame({"item": np.arange(n_items), "language": "x", "prediction": f,
                                "spread": scores.std(axis=1)})
    forecast = []
    for i in range(n_seq):
        got = pd.DataFrame({"item": idx[i, :at], "language": "x", "label": labels[idx[i, :at]],
                            "probability": p[i, :at]})
        row = label_progress(predictions, got, target_halfwidth=target, batch=BATCH,
                             label_range=label_range).iloc[0]
        forecast.append(at + row["labels_needed"])
    ratio = np.asarray(forecast, float) / actual
    return np.nanmedian(actual), np.median(forecast), np.nanquantile(ratio, [0.1, 0.5, 0.9])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=300)
    parser.add_argument("--at", type=int, default=50)
    args = parser.parse_args(argv)
    print(f"forecast after {args.at} labels of the total labels to reach the target")
    print("labels   design   target  median_actual  median_forecast  forecast/actual "
          "(10%, 50%, 90%)")
    for kind, target in (("binary", 0.04), ("ordinal", 0.05)):
        for design in ("uniform", "active"):
            actual, forecast, q = run(kind, design, target, args.sequences, args.at)
            print(f"{kind:7s}  {design:7s}  {target:6.2f}  {actual:13.0f}  {forecast:15.0f}  "
                  f"{q[0]:.2f}, {q[1]:.2f}, {q[2]:.2f}")


if __name__ == "__main__":
    main()
