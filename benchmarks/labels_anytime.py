"""Coverage at every look of the anytime-valid prediction-powered mean, by simulation with a
planted truth (docs/methods.md, "Labels that arrive in batches").

One planted language per setting (``polyjudge.analyses.labels.synthetic.planted_items``:
binary or ordinal labels, good, medium or useless judges); the predictor is the mean of the six
judges' scores, the target the mean of all the items' human labels. Each simulated sequence
draws 500 labels in batches of 10 (uniformly, or with the active probabilities of the judges'
spread refitted after every batch, with replacement; or distinct items from only 2,000); a
sequence misses if the interval after any batch excludes the target. Beside it, the fixed-n
normal interval of the same terms, rechecked after every batch, which is not made for looking.

    python benchmarks/labels_anytime.py [--sequences 1000] [--items 10000]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import ndtri

from polyjudge.analyses.labels.anytime import anytime_ppi, predictable_coefficients
from polyjudge.analyses.labels.synthetic import planted_items, simulate_labelling

BATCH, LABELS, ALPHA = 10, 500, 0.05


def run(kind, quality, errors, design, n_seq, n_items, replace=True, seed=0):
    rng = np.random.default_rng([seed, len(kind), len(quality), len(design), n_items])
    labels, scores = planted_items(rng, n_items, 6, kind, quality, errors)
    f = scores.mean(axis=1)
    idx, p = simulate_labelling(rng, labels, scores, n_seq, LABELS, BATCH, design, replace)
    y, fi, w = labels[idx][..., None], f[idx][..., None], (1.0 / (n_items * p))[..., None]
    ends = np.arange(BATCH, LABELS + 1, BATCH)
    label_range = (1.0, 5.0) if kind == "ordinal" else (0.0, 1.0)
    est, low, up = anytime_ppi(y, fi, w, f.mean(), alpha=ALPHA, label_range=label_range,
                               batch_ends=ends)
    truth = labels.mean()
    at = ends - 1
    miss = ((low[:, at, 0] > truth) | (up[:, at, 0] < truth)).any(axis=1)
    # the fixed-n interval of the same (predictable) terms, rechecked after every batch
    a, b, c = w * y, w * fi - f.mean(), w - 1.0
    lam, shift = predictable_coefficients(a, b, c, ends)
    psi = a - lam * b - shift * c
    t = np.arange(1, LABELS + 1)[:, None]
    mean = np.cumsum(psi, axis=1) / t
    var = (np.cumsum(psi ** 2, axis=1) / t - mean ** 2) * t / np.maximum(t - 1, 1)
    half = ndtri(1 - ALPHA / 2) * np.sqrt(np.maximum(var, 0) / t)
    naive = (np.abs(mean[:, at, 0] - truth) > half[:, at, 0]).any(axis=1)
    hw = (up - low)[:, :, 0] / 2
    return {"miss": miss.mean(), "naive_miss": naive.mean(),
            "hw100": np.median(hw[:, 99]), "hw500": np.median(hw[:, -1])}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=1000)
    parser.add_argument("--items", type=int, default=10000)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print("labels  judges   errors        design   items  replace  miss_any_look  "
          "fixed_n_rechecked  median_halfwidth_100  median_halfwidth_500")
    settings = [(k, q, "even", d, args.items, True) for k in ("binary", "ordinal")
                for q in ("good", "medium", "useless") for d in ("uniform", "active")]
    settings += [(k, "medium", "concentrated", "active", args.items, True)
                 for k in ("binary", "ordinal")]
    settings += [(k, "medium", e, d, 2000, False) for k in ("binary", "ordinal")
                 for e in ("even", "concentrated") for d in ("uniform", "active")]
    worst = 0.0
    for kind, quality, errors, design, n_items, replace in settings:
        r = run(kind, quality, errors, design, args.sequences, n_items, replace)
        worst = max(worst, r["miss"])
        print(f"{kind:7s} {quality:8s} {errors:12s}  {design:8s} {n_items:6d}  "
              f"{str(replace):7s}  "
              f"{r['miss']:13.3f}  {r['naive_miss']:17.3f}  {r['hw100']:20.3f}  "
              f"{r['hw500']:20.3f}")
    print(f"worst miss rate {worst:.3f} (at most {ALPHA}); "
          f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
