"""Coverage of the judge card's intervals, and the size and power of its language test, on
simulated panels with planted agreement (docs/methods.md section 11).

A panel: ``clusters`` tasks of ``per_cluster`` binary items each; an item's reference label is
1 with a task-specific probability (logit-normal around ``prevalence``); a judge copies the
label, or errs with its error rate in that language, shifted per task (logit-normal), so items
of a task share their difficulty. The planted kappa and percent agreement of a language x judge
cell are those of the generating process, computed once on 400,000 tasks. Reported: the share
of cells whose 95% interval holds the planted value (per measure: kappa, percent agreement,
and per language the effective number of judges and the majority's kappa gain over the best
judge), as the card gives it (the percentile interval widened for few clusters,
``few_cluster_factor``) and as the plain percentile interval (:func:`percentile`); the share of
languages whose rank sets all hold the judges' true ranks; and how often the language test
rejects at 5% with no difference planted (size) and with ``shift`` planted in one language
(power).

    python benchmarks/card_coverage.py [--panels 300] [--clusters 40]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from polyjudge.analyses.card import judge_card, measures
from polyjudge.analyses.card.agreement import few_cluster_factor
from polyjudge.analyses.card.redundancy import redundancy

LANGUAGES = ["en", "de", "zh", "sw"]
JUDGES = ["a", "b", "c"]
ERRORS = {"a": 0.10, "b": 0.20, "c": 0.30}


def simulate(rng, clusters, per_cluster, prevalence=0.3, task_sd=1.0, error_sd=0.7,
             shift=0.0):
    """Verdicts and reference of one panel; ``shift`` adds to judge a's error rate in sw."""
    n = clusters * per_cluster
    task = np.repeat(np.arange(clusters), per_cluster)
    logit = np.log(prevalence / (1 - prevalence)) + task_sd * rng.standard_normal(clusters)
    truth = (rng.random(n) < 1 / (1 + np.exp(-logit[task]))).astype(float)
    hardness = error_sd * rng.standard_normal(clusters)[task]
    rows = []
    for language in LANGUAGES:
        for judge, rate in ERRORS.items():
            rate = rate + (shift if (judge == "a" and language == "sw") else 0.0)
            p_err = 1 / (1 + np.exp(-(np.log(rate / (1 - rate)) + hardness)))
            wrong = rng.random(n) < p_err
            rows.append(pd.DataFrame({"item": np.arange(n).astype(str), "cluster": task,
                                      "language": language, "judge": judge,
                                      "verdict": np.where(wrong, 1 - truth, truth)}))
    reference = pd.Series(truth, index=np.arange(n).astype(str))
    return pd.concat(rows, ignore_index=True), reference


def planted(clusters=400_000, shift=0.0, seed=0):
    """The generating process's kappa and percent agreement per language x judge, and per
    language its effective number of judges and the majority's kappa gain over the best judge
    (the card's estimands, on ``clusters`` tasks of one item)."""
    rng = np.random.default_rng(seed)
    verdicts, reference = simulate(rng, clusters, 1, shift=shift)
    out = {}
    for (language, judge), rows in verdicts.groupby(["language", "judge"]):
        table = np.zeros((2, 2))
        np.add.at(table, (rows["verdict"].astype(int), reference.to_numpy().astype(int)), 1)
        out[language, judge] = {"cohen_kappa": float(measures.cohen_kappa(table)),
                                "percent_agreement": float(measures.percent_agreement(table))}
    table = redundancy(verdicts, reference, replicates=0, languages=LANGUAGES, judges=JUDGES)
    for row in table[table["measure"].isin(REDUNDANCY)].itertuples():
        out[row.language, row.measure] = row.estimate
    return out


REDUNDANCY = ("effective_judges", "majority_gain_cohen_kappa")
"""The redundancy rows whose coverage is measured (judge ``panel`` and ``majority``)."""


def percentile(part, clusters):
    """The plain percentile interval the card's interval widens about its estimate by
    :func:`~polyjudge.analyses.card.agreement.few_cluster_factor` (undone here, to compare)."""
    factor = few_cluster_factor(clusters, 0.95)
    est = part["estimate"].to_numpy()
    return (est - (est - part["ci_low"].to_numpy()) / factor,
            est + (part["ci_high"].to_numpy() - est) / factor)


def study(panels, clusters, per_cluster=10, replicates=500, shift=0.0, seed=1):
    truth = planted(shift=shift)
    rng = np.random.default_rng(seed)
    covered = {m: [] for m in ("cohen_kappa", "percent_agreement", *REDUNDANCY)}
    covered.update({f"{m} (percentile)": [] for m in list(covered)})
    covered["rank sets (all of a language)"] = []
    rejected = []
    for p in range(panels):
        verdicts, reference = simulate(rng, clusters, per_cluster, shift=shift)
        card = judge_card(verdicts, reference, replicates=replicates, seed=p,
                          languages=LANGUAGES, judges=JUDGES)
        rows = card.agreement[(card.agreement["versus"] == "reference")
                              & card.agreement["language"].isin(LANGUAGES)]
        for measure in ("cohen_kappa", "percent_agreement", *REDUNDANCY):
            if measure in REDUNDANCY:
                part = card.redundancy[card.redundancy["measure"] == measure]
                value = np.array([truth[l, measure] for l in part["language"]])
            else:
                part = rows[rows["measure"] == measure]
                value = np.array([truth[l, j][measure] for l, j in zip(part["language"],
                                                                      part["judge"])])
            covered[measure] += list((part["ci_low"] <= value) & (value <= part["ci_high"]))
            low, high = percentile(part, clusters)
            covered[f"{measure} (percentile)"] += list((low <= value) & (value <= high))
        ranked = card.ranking
        true_rank = {(l, j): 1 + sum(truth[l, k]["cohen_kappa"] > truth[l, j]["cohen_kappa"]
                                     for k in JUDGES) for l in LANGUAGES for j in JUDGES}
        holds = [(r.rank_low <= true_rank[r.language, r.judge] <= r.rank_high)
                 for r in ranked.itertuples()]
        covered["rank sets (all of a language)"] += list(
            pd.Series(holds).groupby(ranked["language"].to_numpy()).all())
        tests = card.language_tests
        rejected.append(float(tests.loc[(tests["judge"] == "a")
                                        & (tests["measure"] == "cohen_kappa"), "p_value"]
                              .iloc[0]) < 0.05)
    return ({m: float(np.mean(v)) for m, v in covered.items()}, float(np.mean(rejected)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--panels", type=int, default=300)
    parser.add_argument("--clusters", type=int, nargs="+", default=[20, 40, 55, 80])
    args = parser.parse_args(argv)
    for clusters in args.clusters:
        started = time.perf_counter()
        coverage, size = study(args.panels, clusters)
        _, power = study(args.panels, clusters, shift=0.15)
        print(f"{clusters} tasks x 10 items: language test size {size:.3f}, power (error "
              f"+0.15 in one language) {power:.3f} ({time.perf_counter() - started:.0f} s); "
              "coverage " + ", ".join(f"{m} {v:.3f}" for m, v in coverage.items()),
              flush=True)


if __name__ == "__main__":
    main()
