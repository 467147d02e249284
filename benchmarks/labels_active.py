"""Active against uniform labelling: the labels each needs for the same interval width, and
the coverage of the inverse-probability-weighted interval, by simulation with a planted truth
(docs/methods.md, "Choosing the items to label").

One planted language per setting (``polyjudge.analyses.labels.synthetic.planted_items``,
medium judges): the judges' errors concentrated on a fifth of the items, or spread evenly (for
ordinal labels, with a judge spread that says nothing about the error). Each sequence labels
500 items in batches of 10, as the label plan does (``simulate_labelling``: the first 30
labels uniform, then the error model refitted before every batch). After every batch, the
fixed-n IPW PPI++ interval (``ipw_ppi_mean``, vectorised here over sequences; checked against
it on one sequence). Reported: the mean half-width at 500 uniform labels, the labels active
sampling needs to reach it (and their share of 500), the width ratio at 500, and coverage.

    python benchmarks/labels_active.py [--sequences 400] [--items 10000]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import ndtri

from polyjudge.analyses.labels.active import ipw_ppi_mean
from polyjudge.analyses.labels.anytime import tuned_coefficients
from polyjudge.analyses.labels.synthetic import planted_items, simulate_labelling

BATCH, LABELS, LEVEL = 10, 500, 0.95


def paths(labels, f, idx, p, n_items):
    """Half-widths and coverage of the IPW interval after every batch (sequences x looks)."""
    y, fi, w = labels[idx], f[idx], 1.0 / (n_items * p)
    a, b, c = w * y, w * fi - f.mean(), w - 1.0
    z = ndtri(0.5 + LEVEL / 2)
    ends = np.arange(BATCH, LABELS + 1, BATCH)
    half, cover = [], []
    for n in ends:
        lam, shift = tuned_coefficients(a[:, :n], b[:, :n], c[:, :n], axis=1)
        psi = a[:, :n] - lam[:, None] * b[:, :n] - shift[:, None] * c[:, :n]
        est, se = psi.mean(axis=1), psi.std(axis=1, ddof=1) / np.sqrt(n)
        half.append(z * se)
        cover.append(np.abs(est - labels.mean()) <= z * se)
    one = ipw_ppi_mean(y[0], fi[0], p[0], n_items=n_items, predictor_mean=f.mean())
    assert np.isclose(one.upper - one.estimate, half[-1][0]), "vectorised != ipw_ppi_mean"
    return ends, np.array(half).T, np.array(cover).T


def compare(kind, errors, n_seq, n_items, seed=0):
    rng = np.random.default_rng([seed, len(kind), len(errors)])
    labels, scores = planted_items(rng, n_items, 6, kind, "medium", errors)
    f = scores.mean(axis=1)
    out = {}
    for design in ("uniform", "active"):
        idx, p = simulate_labelling(rng, labels, scores, n_seq, LABELS, BATCH, design)
        ends, half, cover = paths(labels, f, idx, p, n_items)
        out[design] = (half.mean(axis=0), cover)
    target = out["uniform"][0][-1]
    active = out["active"][0]
    reached = ends[np.argmax(active <= target)] if (active <= target).any() else np.nan
    looks = np.isin(ends, [100, 250, 500])
    return {"uniform_hw500": target, "active_n": reached, "share": reached / LABELS,
            "ratio500": active[-1] / target,
            "cover_uniform": out["uniform"][1][:, looks].mean(axis=0),
            "cover_active": out["active"][1][:, looks].mean(axis=0)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=400)
    parser.add_argument("--items", type=int, default=10000)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print("labels  errors        uniform_halfwidth_500  active_labels_same_width  share  "
          "width_ratio_500  coverage_uniform(100,250,500)  coverage_active(100,250,500)")
    for kind in ("binary", "ordinal"):
        for errors in ("concentrated", "even"):
            r = compare(kind, errors, args.sequences, args.items)
            cu = " ".join(f"{c:.3f}" for c in r["cover_uniform"])
            ca = " ".join(f"{c:.3f}" for c in r["cover_active"])
            print(f"{kind:7s} {errors:12s}  {r['uniform_hw500']:21.4f}  {r['active_n']:24.0f}  "
                  f"{r['share']:5.2f}  {r['ratio500']:15.3f}  {cu:>29s}  {ca:>28s}")
    print(f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
