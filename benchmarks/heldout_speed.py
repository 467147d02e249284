"""Speed of the held-out evaluation on the devai panel: all methods x 1,000 replicates.

Compares the vectorised path (``polyjudge.analyses.heldout.heldout_replicates``) with a
straightforward loop over replicates that calls each method on one replicate and
``scipy.stats.kendalltau`` for every language pair, and checks that both give the same taus.
Dawid-Skene is timed separately (run level = protocol, requirement level = the paper's appendix).

    python benchmarks/heldout_speed.py [--replicates 1000] [--loop-replicates 1000] [--repeats 3]

BLAS threading matters for the small matrix products here: on a busy 2-core machine
``OPENBLAS_NUM_THREADS=1`` is usually faster; the setting in effect is printed.
"""
from __future__ import annotations

import argparse
import itertools
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.stats

from polyjudge.analyses.baselines import (
    METHODS,
    HeldoutContext,
    requirement_items,
    run_items,
)
from polyjudge.analyses.heldout import heldout_replicates
from polyjudge.cbc.bootstrap import TaskBootstrap, task_bootstrap
from polyjudge.data import io

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "devai_ml_aaaj"
LANGUAGES = ("English", "Arabic", "Turkish", "Chinese", "Hindi", "Japanese", "Spanish", "Swahili")
BACKBONES = ("gpt-4o", "gpt-5.4", "claude-sonnet-4.6", "gemini-3-flash-preview", "deepseek-v3.2",
             "qwen3.5-9b")
DAWID_SKENE = ("Dawid-Skene", "Dawid-Skene (requirement)")


def best_of(repeats: int, func):
    """Minimum wall time over repeats, and the last result."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), result


def snap_ties(row: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Make rounding-level differences exact ties (polyjudge's tie convention; scipy compares
    exactly, and one replicate's cell means are summed in a different order than the stack's)."""
    order = np.argsort(row)
    values = row[order]
    tol = rtol * np.abs(row).max()
    for i in range(1, len(values)):
        if values[i] - values[i - 1] <= tol:
            values[i] = values[i - 1]
    out = np.empty_like(row)
    out[order] = values
    return out


def loop_taus(panel, methods, n_replicates, seed) -> pd.DataFrame:
    """The straightforward way: one replicate at a time, scipy's tau for each language pair."""
    n, k, m = panel.shape
    boot = task_bootstrap(n, n_replicates, np.random.default_rng(seed), row_permutations=(k, m))
    pairs = list(itertools.combinations(range(k), 2))
    rows = []
    for r in range(n_replicates):
        one = TaskBootstrap(boot.counts[r:r + 1], boot.oob[r:r + 1],
                            boot.row_permutations[r:r + 1])
        ctx = HeldoutContext.build(panel, one, seed)
        for name in methods:
            x = METHODS[name](ctx)[0]
            x = np.array([snap_ties(row) for row in x])
            taus = [scipy.stats.kendalltau(x[i], x[j]).statistic for i, j in pairs]
            taus = [t for t in taus if np.isfinite(t)]
            rows.append((r, name, np.mean(taus) if taus else np.nan))
    return pd.DataFrame(rows, columns=["replicate", "method", "tau"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--loop-replicates", type=int, default=1000,
                        help="replicates for the scipy loop (time is scaled to --replicates)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    runs = io.validate_runs(io.read_table(DATA / "run_level_scores.csv"), "devai")
    requirements = pd.read_csv(DATA / "requirement_judgments.csv")
    panel = io.build_panel(runs, "devai", LANGUAGES, BACKBONES)
    start = time.perf_counter()
    run_verdicts, req_verdicts = run_items(runs, panel), requirement_items(requirements, panel)
    build = time.perf_counter() - start

    print(f"devai panel {panel.shape}, {args.replicates} replicates, cores={os.cpu_count()}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    print(f"binary verdict arrays from the run + requirement tables: {build:.3f} s (once)")
    core = [name for name in METHODS if name not in DAWID_SKENE]
    timings = {}
    timings["core"], vectorised = best_of(args.repeats, lambda: heldout_replicates(
        panel, core, args.replicates, args.seed))
    print(f"vectorised, {len(core)} methods (all but Dawid-Skene): {timings['core']:.3f} s")
    for name in DAWID_SKENE:
        timings[name], _ = best_of(args.repeats, lambda: heldout_replicates(
            panel, [name], args.replicates, args.seed, runs=run_verdicts,
            requirements=req_verdicts))
        print(f"vectorised, {name}: {timings[name]:.3f} s")
    total = sum(timings.values())
    print(f"vectorised, all {len(METHODS)} methods: {total:.3f} s")

    n_loop = min(args.loop_replicates, args.replicates)
    start = time.perf_counter()
    looped = loop_taus(panel, core, n_loop, args.seed)
    loop_time = (time.perf_counter() - start) * args.replicates / n_loop
    scaled = "" if n_loop == args.replicates else f" (scaled from {n_loop} replicates)"
    print(f"per-replicate loop with scipy.stats.kendalltau, same {len(core)} methods: "
          f"{loop_time:.1f} s{scaled}")
    print(f"speed-up: {loop_time / timings['core']:.0f}x")

    merged = vectorised.merge(looped, on=["replicate", "method"], suffixes=("", "_loop"))
    gap = np.nanmax(np.abs(merged["tau"] - merged["tau_loop"]))
    same_nan = (merged["tau"].isna() == merged["tau_loop"].isna()).all()
    print(f"equal results: {len(merged)} replicate x method taus, max |difference| = {gap:.2e}, "
          f"NaN pattern equal = {same_nan}")
    if not (gap < 1e-9 and same_nan):
        raise SystemExit("vectorised and loop taus differ")


if __name__ == "__main__":
    main()
