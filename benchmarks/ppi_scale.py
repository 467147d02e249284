"""Speed and memory of the prediction-powered estimates at scale: 10^6 items x 10 languages x
6 judges, 10 judged systems, 200 human labels per language and system (2,000 per language).

Each language's items x judges matrix is drawn on the fly (float64, 48 MB) and given to
``polyjudge.analyses.labels.language_rows`` with every predictor (the judges' mean, CBC's, the
cross-fitted combination, each judge); ``collect`` then builds the three tables (estimates,
Bonferroni differences, judges' errors). Reports the estimates' wall and CPU time (drawing the
panel left out) and the process's peak resident memory.

    python benchmarks/ppi_scale.py [--items 1000000] [--languages 10] [--judges 6]
"""
from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import pandas as pd

from polyjudge.analyses.labels import collect, language_rows
from polyjudge.analyses.labels.predictors import LanguagePredictions


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--languages", type=int, default=10)
    parser.add_argument("--judges", type=int, default=6)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--labels", type=int, default=200, help="per language and system")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(1)
    system = np.repeat(np.arange(args.systems), -(-args.items // args.systems))[:args.items]
    truth = (rng.random(args.items) < 0.2 + 0.6 * system / args.systems).astype(float)
    items = pd.Index(np.arange(args.items).astype(str))
    judges = [f"judge{j}" for j in range(args.judges)]
    names = np.array([f"system{s}" for s in range(args.systems)])[system]
    bias = rng.normal(0, 0.1, (args.languages, args.judges))
    beta = bias - bias.mean(0) - bias.mean(1, keepdims=True) + bias.mean()
    wall = cpu = 0.0
    rows, errors = [], []
    for lang in range(args.languages):
        matrix = truth[:, None] + bias[lang] + rng.normal(0, 0.4, (args.items, args.judges))
        y = np.full(args.items, np.nan)
        for s in range(args.systems):
            members = np.flatnonzero(system == s)
            chosen = rng.choice(members, args.labels, replace=False)
            y[chosen] = truth[chosen]
        panel = LanguagePredictions(items, judges, matrix, beta[lang])
        start, start_cpu = time.perf_counter(), time.process_time()
        found = language_rows(f"L{lang}", panel, names, y, label_range=(0, 1))
        wall, cpu = wall + time.perf_counter() - start, cpu + time.process_time() - start_cpu
        rows += found[0]
        errors += found[1]
    start, start_cpu = time.perf_counter(), time.process_time()
    result = collect(rows, errors)
    wall, cpu = wall + time.perf_counter() - start, cpu + time.process_time() - start_cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.items:,} items x {args.languages} languages x {args.judges} judges, "
          f"{args.systems} systems, {args.labels} labels per language x system: "
          f"{wall:.1f} s wall, {cpu:.1f} s CPU (drawing the panel not counted), peak memory "
          f"{peak:.0f} MB; {len(result.estimates)} estimate rows, "
          f"{len(result.differences)} differences, {len(result.judge_errors)} judge errors")


if __name__ == "__main__":
    main()
