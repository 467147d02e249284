"""Joint coverage of the judged systems' rank sets (``labels/ranks.csv``) by simulation with a
planted truth (docs/methods.md section 12, "Ranks").

One language, four systems of 400 items with binary human labels (true rates 0.70, 0.66, 0.50,
0.30: two close pairs and one far system), three judges scoring ``label + judge offset +
noise``; each draw takes ``--labels`` labels per system without replacement and runs
:func:`polyjudge.analyses.labels.label_estimates` (labels alone, PPI with the judges' mean). The
target is the ranking of the systems by the mean of all their labels; a draw covers when every
system's true rank lies in its set at once.

    python benchmarks/labels_ranks.py [--draws 500] [--labels 50]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from polyjudge.analyses.labels import label_estimates, sample_labels

RATES, ITEMS, JUDGES = (0.70, 0.66, 0.50, 0.30), 400, 3


def planted(rng):
    system = np.repeat([f"s{k}" for k in range(len(RATES))], ITEMS)
    label = (rng.random(len(system)) < np.repeat(RATES, ITEMS)).astype(float)
    items = np.arange(len(system)).astype(str)
    score = (label[:, None] + np.arange(JUDGES) / 10 - 0.1
             + 0.6 * rng.standard_normal((len(system), JUDGES)))
    predictions = pd.DataFrame({"item": np.repeat(items, JUDGES), "language": "a",
                                "judge": np.tile([f"j{j}" for j in range(JUDGES)], len(items)),
                                "prediction": score.ravel()})
    labels = pd.DataFrame({"item": items, "language": "a", "label": label})
    return predictions, pd.Series(system, index=items), labels


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--labels", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    covered, width, start = {}, {}, time.process_time()
    for draw in range(args.draws):
        predictions, systems, labels = planted(rng)
        truth = labels.groupby(systems.reindex(labels["item"]).to_numpy())["label"].mean()
        true_rank = truth.rank(method="min", ascending=False)
        used = sample_labels(labels, systems, args.labels, seed=draw)
        ranks = label_estimates(predictions, used, systems, kinds=("panel",),
                                label_range=(0, 1)).ranks
        for key, block in ranks.groupby(["estimator", "predictor"]):
            rank = block["system"].map(true_rank)
            ok = ((block["rank_low"] <= rank) & (rank <= block["rank_high"])).all()
            covered.setdefault(key, []).append(ok)
            width.setdefault(key, []).append((block["rank_high"] - block["rank_low"]).mean())
    for key in covered:
        print(f"{'/'.join(k for k in key if k)}: joint coverage {np.mean(covered[key]):.3f}, "
              f"mean rank-set width {np.mean(width[key]):.2f} ({args.draws} draws, "
              f"{args.labels} labels per system)")
    print(f"{time.process_time() - start:.1f} s of CPU")


if __name__ == "__main__":
    main()
