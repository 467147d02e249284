"""The judge card's biases on simulated panels with a planted bias in one language only: does
the card find it there, does the test of a difference between languages reject, how often is
a panel with nothing planted flagged, and do the intervals cover (docs/methods.md section 11).

Four languages x three judges (a, b, c); the bias is planted for judge a in ``sw`` only.
Every generator is linear in what it plants, so the planted value of every cell is known
exactly (no clipping of probabilities: each stays in [0, 1] by construction).

* ``position`` and ``length (pairwise)``: items shown in both orders to every judge in every
  language; gold output 1 or 2 at random; the log2 length ratio of output 1 over output 2 is
  tied to the gold (the better output is shorter, as in LLMBar's adversarial sets), so an
  unadjusted slope would be biased; P(choose output 1) = 1/2 + c_i (gold) + b x + delta (seat),
  c_i an item's difficulty (the cluster), ties 5% at random.
* ``length (pointwise)``: a reference score r, log2 length tied to r, the judge's score
  r + b log2 length + an item effect shared by the judges + noise.
* ``self-preference``: each answer written by one of four families (three are the judges'),
  score = quality + judge leniency + s [judge a, own family] + noise. Judge a's preference
  moves the other judges' difference in differences too (a scores the answers of its family
  higher, which they see as their own lower relative score): their planted value in ``sw`` is
  s x P(author a | author not theirs) / 2 = s / 6.

Reported per bias and panel size, over ``--panels`` panels: ``found`` (judge a's interval in
``sw`` excludes 0), ``power`` (judge a's language test has q < 0.05), with nothing planted the
share of panels where judge a's test has q < 0.05 (its size) and where any of the panel's
language tests does, and ``coverage`` of the planted values by the 95% intervals of every
language x judge cell, with the bias planted and without.

    python benchmarks/card_bias_power.py [--panels 300] [--items 100 200 400]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from polyjudge.analyses.card import card_bias

LANGUAGES = ["en", "de", "zh", "sw"]
JUDGES = ["a", "b", "c"]
SIZES = {"position": 0.10, "length (pairwise)": 0.10, "length (pointwise)": 0.4,
         "self-preference": 0.8}
"""The planted bias: seat share + 0.10; + 0.10 probability per doubling; + 0.4 score per
doubling (score noise SD about 1.2); + 0.8 score for the own family (noise SD 1)."""


def _cells(n_items):
    """Every (language, judge, item) once: the index arrays of a panel's rows."""
    lang, judge, item = np.meshgrid(np.arange(len(LANGUAGES)), np.arange(len(JUDGES)),
                                    np.arange(n_items), indexing="ij")
    return lang.ravel(), judge.ravel(), item.ravel()


def pairwise(rng, n_items, bias, size):
    """Both orders of every item for every judge and language; ``bias`` is planted for judge a
    in sw: ``position`` adds ``size`` to the first seat's probability, ``length`` adds
    ``size`` per doubling of output 1's length relative to output 2's."""
    lang, judge, item = _cells(n_items)
    lang, judge, item = (np.tile(v, 2) for v in (lang, judge, item))
    order = np.repeat([1.0, 2.0], len(lang) // 2)         # the output shown first
    gold = rng.integers(1, 3, n_items)
    better = np.where(gold == 1, 1.0, -1.0)
    x = np.clip(-0.8 * better + rng.normal(0, 1, n_items), -2, 2)
    strength = rng.uniform(0.1, 0.3, n_items)             # the item's difficulty: its cluster
    planted = (lang == 3) & (judge == 0)
    delta = np.where(planted & (bias == "position"), size, 0.0)
    slope = np.where(planted & (bias == "length"), size, 0.0)
    p1 = 0.5 + (strength * better)[item] + slope * x[item] + delta * np.where(order == 1, 1, -1)
    choice = np.where(rng.random(len(p1)) < p1, 1.0, 2.0)
    choice[rng.random(len(p1)) < 0.05] = 0.0
    frame = pd.DataFrame({"item": [f"{i}|{o:.0f}" for i, o in zip(item, order)],
                          "cluster": item.astype(str), "language": np.take(LANGUAGES, lang),
                          "judge": np.take(JUDGES, judge), "verdict": choice,
                          "first_output": order, "log2_length_ratio": x[item]})
    reference = pd.Series(gold[item].astype(float), index=frame["item"]).groupby(level=0).first()
    truth = {(l, j): (size if (l, j) == ("sw", "a") else 0.0) for l in LANGUAGES for j in JUDGES}
    return frame, reference, truth


def pointwise_length(rng, n_items, size):
    lang, judge, item = _cells(n_items)
    r = rng.normal(0, 1, n_items)
    log2_length = 8 + 0.6 * r + rng.normal(0, 1, n_items)
    slope = np.where((lang == 3) & (judge == 0), size, 0.0)
    score = (r[item] + slope * log2_length[item] + rng.normal(0, 0.7, n_items)[item]
             + rng.normal(0, 1, len(item)))
    frame = pd.DataFrame({"item": item.astype(str), "language": np.take(LANGUAGES, lang),
                          "judge": np.take(JUDGES, judge), "verdict": score,
                          "log2_length": log2_length[item]})
    truth = {(l, j): (size if (l, j) == ("sw", "a") else 0.0) for l in LANGUAGES for j in JUDGES}
    return frame, pd.Series(r, index=np.arange(n_items).astype(str)), truth


def self_preference(rng, n_items, size):
    lang, judge, item = _cells(n_items)
    author = rng.integers(0, 4, n_items)                  # family 3 has no judge
    quality = rng.normal(0, 1, (len(LANGUAGES), n_items))
    lenient = np.array([0.3, 0.0, -0.3])
    own = author[item] == judge
    score = (quality[lang, item] + lenient[judge] + np.where(own & (lang == 3) & (judge == 0),
                                                              size, 0.0)
             + rng.normal(0, 1, len(item)))
    frame = pd.DataFrame({"item": item.astype(str), "language": np.take(LANGUAGES, lang),
                          "judge": np.take(JUDGES, judge), "verdict": score,
                          "author": np.take(["fa", "fb", "fc", "fd"], author[item])})
    truth = {(l, j): 0.0 for l in LANGUAGES for j in JUDGES}
    truth["sw", "a"] = size
    truth["sw", "b"] = truth["sw", "c"] = size / 6   # see the module's docstring
    return frame, None, truth


FAMILIES = {"a": "fa", "b": "fb", "c": "fc"}


def panel(rng, bias, n_items, size):
    if bias in ("position", "length (pairwise)"):
        return pairwise(rng, n_items, bias.split()[0], size)
    if bias == "length (pointwise)":
        return pointwise_length(rng, n_items, size)
    return self_preference(rng, n_items, size)


def study(bias, n_items, panels, replicates, seed, null_only=False):
    """(found, judge a's test rejects, coverage, any test rejects) with the bias planted
    (True) and without (False)."""
    name = {"self-preference": "self_preference"}.get(bias, bias.split()[0])
    rng = np.random.default_rng(seed)
    out = {}
    for planted in (True, False) if not null_only else (False,):
        hits, rejects, covered, anywhere = [], [], [], []
        for p in range(panels):
            frame, reference, truth = panel(rng, bias, n_items, SIZES[bias] if planted else 0.0)
            if not planted:
                truth = {cell: 0.0 for cell in truth}
            table, tests, _ = card_bias(frame, reference, FAMILIES, replicates, seed=p,
                                        languages=LANGUAGES, judges=JUDGES)
            table, tests = table[table["bias"] == name], tests[tests["bias"] == name]
            cells = table[table["language"].isin(LANGUAGES)]
            value = np.array([truth[l, j] for l, j in zip(cells["language"], cells["judge"])])
            covered += list((cells["ci_low"] <= value) & (value <= cells["ci_high"]))
            sw_a = cells[(cells["language"] == "sw") & (cells["judge"] == "a")].iloc[0]
            hits.append(sw_a["ci_low"] > 0 or sw_a["ci_high"] < 0)
            rejects.append(bool((tests["judge"] == "a").any()
                                and tests.loc[tests["judge"] == "a", "q_value"].iloc[0] < 0.05))
            anywhere.append(bool((tests["q_value"] < 0.05).any()))
        out[planted] = (float(np.mean(hits)), float(np.mean(rejects)), float(np.mean(covered)),
                        float(np.mean(anywhere)))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--panels", type=int, default=300)
    parser.add_argument("--items", type=int, nargs="+", default=[100, 200, 400])
    parser.add_argument("--replicates", type=int, default=500)
    parser.add_argument("--bias", nargs="+", default=list(SIZES))
    parser.add_argument("--null-only", action="store_true",
                        help="only the panels with nothing planted (size and coverage)")
    args = parser.parse_args(argv)
    print("| bias (planted in sw, judge a) | items | found | power | coverage | judge a's "
          "test rejects, none planted | any test rejects, none planted | coverage, none "
          "planted |")
    print("|---|---|---|---|---|---|---|---|")
    for bias in args.bias:
        for n_items in args.items:
            started = time.process_time()
            out = study(bias, n_items, args.panels, args.replicates, seed=n_items,
                        null_only=args.null_only)
            found, power, cover, _ = out.get(True, (np.nan,) * 4)
            _, size, cover0, flagged = out[False]
            print(f"| {bias} {SIZES[bias]:+g} | {n_items} | {found:.2f} | {power:.2f} | "
                  f"{cover:.3f} | {size:.3f} | {flagged:.3f} | {cover0:.3f} | "
                  f"({time.process_time() - started:.0f} s CPU)", flush=True)


if __name__ == "__main__":
    main()
