"""Simulation of the missingness check (polyjudge.analyses.missingness) with a planted truth.

Three tables, all on the populations of ``benchmarks/stopping_simulation.py`` (item, item x
language and item x judge effects, a planted beta, noise; panels drawn with replacement from a
pool of ``--pool`` items):

* **false flags**: cells missing at random (completely at random, or at rates that differ by
  language and judge, or whole items missing for every judge): the share of panels in which
  the check flags any judge (at most ``alpha`` = 0.05 by construction; measured here);
* **power**: one judge fails to answer where its own score is low (pass/fail: a fail verdict;
  margin: a margin of -1 or below; rubric: a 1 or a 2) with probability ``q``: the share of
  panels in which the check flags that judge, and in which it flags another; beside it the bias
  this missingness gives beta (the largest over the beta cells of the complete-block mean's
  error, on the whole pool);
* **stopping**: collections with a ``beta_halfwidth`` target, replayed round by round
  (the draws and bounds of ``polyjudge.analyses.stopping.replay``), without the guard (the stop
  at the first round the target is met) and with it (the first such round at which the check
  does not flag a judge on the items drawn so far, as ``collect_rounds`` decides): the share of
  collections that declare a stop, the share that declare one while a beta cell's interval
  misses its true value, and the median items drawn.

    python benchmarks/missingness_check.py [--reps 1000] [--power-reps 200]
        [--collections 200] [--seed 3] [--part null|power|stopping|all]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from stopping_simulation import Scenario, targets_for  # noqa: E402

from polyjudge.analyses.missingness import flagged_judges, informative_missing_check  # noqa
from polyjudge.analyses.stopping.replay import (drawn_bounds, replay_target, round_ends,  # noqa
                                               stop_round)
from polyjudge.analyses.stopping import targets  # noqa: E402

ALPHA, PERMUTATIONS, STOP_PERMUTATIONS = 0.05, 999, 199
"""The workflow's check (missing.check_alpha, missing.check_permutations); the stopping table
checks after every round of every collection, and uses 199 permutations to keep its time."""
LOW = {"pass/fail": 0, "margin": -1, "rubric 1-5": 2, "0-100": 40}
"""A score at or below this is "low": the informative judge fails to answer it with chance q."""


def informative(scores, kind, q, rng, judge=0):
    """``scores`` with judge ``judge``'s low scores missing with probability ``q``."""
    out = scores.copy()
    low = scores[:, :, judge] <= LOW[kind]
    out[:, :, judge] = np.where(low & (rng.random(low.shape) < q), np.nan, scores[:, :, judge])
    return out


def at_random(scores, pattern, rate, rng):
    """Cells missing at random: ``mcar`` (each cell), ``strata`` (rates from 0 to 2 x rate
    over the languages, times 0.5-1.5 over the judges) or ``items`` (whole items)."""
    n, k, m = scores.shape
    if pattern == "mcar":
        drop = rng.random(scores.shape) < rate
    elif pattern == "strata":
        p = (np.linspace(0, 2 * rate, k)[:, None] * np.linspace(0.5, 1.5, m)[None, :])
        drop = rng.random(scores.shape) < p[None]
    else:
        drop = np.broadcast_to(rng.random((n, 1, 1)) < rate, scores.shape)
    return np.where(drop, np.nan, scores)


def check(scores, seed, permutations=PERMUTATIONS) -> list:
    return flagged_judges(informative_missing_check(scores, alpha=ALPHA,
                                                    n_permutations=permutations, seed=seed))


NULL_ROWS = [("pass/fail", 8, 6, 60, "mcar", 0.05), ("pass/fail", 8, 6, 300, "mcar", 0.01),
             ("pass/fail", 8, 6, 300, "strata", 0.02), ("pass/fail", 8, 6, 300, "items", 0.05),
             ("margin", 7, 5, 300, "mcar", 0.005), ("margin", 7, 5, 1500, "mcar", 0.01),
             ("rubric 1-5", 3, 3, 30, "mcar", 0.2), ("0-100", 8, 6, 100, "strata", 0.1)]
POWER_ROWS = [("pass/fail", 8, 6, q, n) for q in (0.1, 0.3, 0.6) for n in (60, 300)] + \
             [("margin", 7, 5, q, n) for q in (0.3, 0.6, 0.9) for n in (300, 1500)] + \
             [("rubric 1-5", 8, 6, q, n) for q in (0.3, 0.6) for n in (60, 300)]
STOP_ROWS = [("pass/fail", 8, 6, "informative", 0.3), ("pass/fail", 8, 6, "informative", 0.6),
             ("margin", 7, 5, "informative", 0.6), ("margin", 7, 5, "informative", 0.9),
             ("pass/fail", 8, 6, "mcar", 0.005), ("margin", 7, 5, "mcar", 0.005)]


def null_table(reps, seed, pool) -> pd.DataFrame:
    out = []
    for kind, k, m, n, pattern, rate in NULL_ROWS:
        rng = np.random.default_rng(seed)
        population, _ = Scenario(kind, k, m).population(pool, rng)
        start = time.process_time()
        flags = [bool(check(at_random(population[rng.integers(0, pool, n)], pattern, rate,
                                      rng), r)) for r in range(reps)]
        share = float(np.mean(flags))
        out.append({"scores": kind, "panel": f"{k} x {m}", "items": n, "missing": pattern,
                    "rate": rate, "flagged": share, "se": np.sqrt(share * (1 - share) / reps),
                    "reps": reps, "cpu_s_per_panel": (time.process_time() - start) / reps})
        print(pd.DataFrame(out[-1:]).to_string(index=False), flush=True)
    return pd.DataFrame(out)


def beta_bias(full, kind, q, target) -> float:
    """The largest error over the beta cells of the complete-block mean (what the stopping
    rule and an incomplete-panel fit average) when judge 0's low scores go missing with chance
    ``q``: in expectation over the missingness (an item's weight is the chance its block is
    complete), on the whole pool, against the pool's complete mean."""
    plan, _, x = targets.item_contrasts(full, target)
    complete = np.prod(1 - q * (full[:, :, 0] <= LOW[kind]), axis=1)
    beta = (plan["kind"] == "beta").to_numpy()
    error = complete @ x / complete.sum() - x.mean(axis=0)
    return float(np.abs(error[beta]).max())


def power_table(reps, seed, pool) -> pd.DataFrame:
    out = []
    for kind, k, m, q, n in POWER_ROWS:
        rng = np.random.default_rng(seed)
        full, _ = Scenario(kind, k, m).population(pool, rng)
        population = informative(full, kind, q, rng)
        flags = [check(population[rng.integers(0, pool, n)], r) for r in range(reps)]
        right = np.mean(["b0" in f for f in flags])
        out.append({"scores": kind, "panel": f"{k} x {m}", "items": n, "q": q,
                    "missing_rate_judge": float(np.isnan(population[:, :, 0]).mean()),
                    "beta_bias": beta_bias(full, kind, q, targets_for(kind)["beta"]),
                    "power": right, "se": np.sqrt(right * (1 - right) / reps),
                    "other_flagged": float(np.mean([bool(set(f) - {"b0"}) for f in flags])),
                    "reps": reps})
        print(pd.DataFrame(out[-1:]).to_string(index=False), flush=True)
    return pd.DataFrame(out)


def stopping_row(kind, k, m, mechanism, q, n_collections, seed, pool, design=1500):
    """One stopping row: the replay's draws and bounds, the stop without and with the guard."""
    rng = np.random.default_rng(seed)
    full, score_range = Scenario(kind, k, m).population(pool, rng)
    scores = (informative(full, kind, q, rng) if mechanism == "informative"
              else at_random(full, mechanism, q, rng))
    target = replay_target({"min_items": 20, **targets_for(kind)["beta"],
                                    "score_range": score_range, "design_items": design,
                                    "max_items": design})
    plan, coefs, x = targets.item_contrasts(scores, target)
    truth = targets.item_contrasts(full, target)[2].mean(axis=0)
    orders = np.random.default_rng(seed + 1).integers(0, pool, size=(n_collections, design))
    ends = round_ends(design, 50, target.min_items)
    _, _, lower, upper = drawn_bounds(x, orders, ends, plan, coefs, target, truth)
    _, _, ok = stop_round(ends, lower, upper, plan, target)
    tested = plan["tested"].to_numpy()
    met = ok[..., tested].all(axis=-1) & (ends >= target.min_items)
    held = ((lower <= truth) & (upper >= truth))[..., tested].all(axis=-1)
    result = {"plain": [], "guarded": []}
    for i in range(n_collections):
        rounds = np.flatnonzero(met[i])
        first = rounds[0] if len(rounds) else None
        guarded = next((r for r in rounds
                        if not check(scores[orders[i, :ends[r]]], seed + i,
                                     STOP_PERMUTATIONS)), None)
        for name, r in (("plain", first), ("guarded", guarded)):
            result[name].append((r is not None, r is not None and not held[i, r],
                                 ends[r] if r is not None else design))
    row = {"scores": kind, "panel": f"{k} x {m}", "missing": mechanism, "q": q,
           "missing_rate_judge": float(np.isnan(scores[:, :, 0]).mean()),
           "beta_bias": beta_bias(full, kind, q, target) if mechanism == "informative" else 0.0,
           "target": target.beta_halfwidth, "collections": n_collections}
    for name, values in result.items():
        stopped, missed, items = (np.array(v) for v in zip(*values))
        row.update({f"{name}_stopped": stopped.mean(), f"{name}_stopped_and_missed": missed.mean(),
                    f"{name}_median_items": float(np.median(items))})
    return row


def stopping_table(n_collections, seed, pool) -> pd.DataFrame:
    out = []
    for kind, k, m, mechanism, q in STOP_ROWS:
        out.append(stopping_row(kind, k, m, mechanism, q, n_collections, seed, pool))
        print(pd.DataFrame(out[-1:]).to_string(index=False), flush=True)
    return pd.DataFrame(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--power-reps", type=int, default=200)
    parser.add_argument("--collections", type=int, default=200)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--pool", type=int, default=20_000)
    parser.add_argument("--part", choices=["null", "power", "stopping", "all"], default="all")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    parts = {"null": lambda: null_table(args.reps, args.seed, args.pool),
             "power": lambda: power_table(args.power_reps, args.seed, args.pool),
             "stopping": lambda: stopping_table(args.collections, args.seed, args.pool)}
    for name, run in parts.items():
        if args.part in (name, "all"):
            start = time.time()
            table = run()
            table.to_csv(args.out / f"missingness_{name}.csv", index=False)
            print(f"{name}: {time.time() - start:.0f} s\n{table.to_string(index=False)}\n")


if __name__ == "__main__":
    main()
