"""Simulation of stopped collections with a planted truth: is the stopping rule's promise kept?

Each scenario builds a population of ``--pool`` simulated items from a known model (item
effects, item x language and item x judge effects, judge effects, a planted beta, noise), turns
the latent scores into a score type labs collect, and draws collections from the population
*with replacement* (``polyjudge.analyses.stopping.replay(..., with_replacement=True)``), so the
items are independent and the true value of every quantity is the population's mean, known
exactly. Each collection is checked at every round up to the design's last item, not only up to
its stop. Score types:

* ``pass/fail``: 1 where the latent score is above 0 (``hard``: the item effect dominates, so
  most blocks are all-pass or all-fail);
* ``rubric 1-5``: the latent score rounded to 1..5;
* ``0-100``: ``60 + 25 z`` rounded and clipped (a ceiling at 100);
* ``margin``: chosen minus rejected rubric score, in [-4, 4] (M-RewardBench's shape);
* ``gaussian`` and ``student t3``: continuous, no score range.

Per row (a score type, a panel, a design size, a target, a rule): the time-uniform miss rate
(some tested quantity outside its interval at some round) with its standard error, the
wrong-sign rate (a pair decided with the wrong sign at the stop), the median share of the
design's calls used, and the share of collections that stopped before the last item. Rules:
the asymptotic sequence (the default), the exact betting sequence, and the naive rule (a
fixed-n t-interval rechecked after every round) beside them. Rows marked ``retire`` stop calling
a judge once every pair it is in is settled (``stop.retire``); their calls are the judge-item
calls made, as a share of the design's. The betting sequence is simulated on
the pass/fail rows only (``--betting-reps`` replications): it is exact by Ville's inequality, and
its grid makes it the slow rule.

    python benchmarks/stopping_simulation.py [--reps 1000] [--betting-reps 100] [--seed 7]
        [--rows all | fast | retire] [--part 1/2] [--out benchmarks/out/stopping_simulation.csv]
    python benchmarks/stopping_simulation.py --markdown benchmarks/out/stopping_simulation.csv
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from polyjudge.analyses.stopping import replay

RULES = {"asymptotic": "asymptotic (default)", "betting": "betting (exact)",
         "fixed_n": "naive fixed-n t"}


@dataclass(frozen=True)
class Scenario:
    """One population: score type, panel shape, effect sizes."""

    kind: str
    languages: int = 8
    judges: int = 6
    item_sd: float = 1.0
    judge_gap: float = 0.15          # judge effects evenly spaced in [-gap, gap] (latent scale)
    missing: float = 0.0             # share of cells missing completely at random

    def population(self, n: int, rng) -> tuple[np.ndarray, list | None]:
        k, m = self.languages, self.judges
        item = rng.normal(0, self.item_sd, (n, 1, 1))
        judge = np.linspace(self.judge_gap, -self.judge_gap, m)[None, None, :]
        beta = rng.normal(0, 0.3, (k, m))
        beta = beta - beta.mean(0) - beta.mean(1, keepdims=True) + beta.mean()
        shared = (item + judge + beta + rng.normal(0, 0.3, (n, k, 1))
                  + rng.normal(0, 0.3, (n, 1, m)))
        noise = (rng.standard_t(3, (n, k, m)) * 0.5 if self.kind == "student t3"
                 else rng.normal(0, 0.6, (n, k, m)))
        z = shared + noise
        if self.kind == "pass/fail":
            scores, score_range = (z > 0).astype(float), [0, 1]
        elif self.kind == "rubric 1-5":
            scores, score_range = np.clip(np.round(3 + z), 1, 5), [1, 5]
        elif self.kind == "0-100":
            scores, score_range = np.clip(np.round(60 + 25 * z), 0, 100), [0, 100]
        elif self.kind == "margin":
            rejected = np.clip(np.round(2.5 + item + rng.normal(0, 0.8, (n, k, m))), 1, 5)
            scores, score_range = np.clip(np.round(3 + z), 1, 5) - rejected, [-4, 4]
        elif self.kind in ("gaussian", "student t3"):
            scores, score_range = z, None
        else:
            raise ValueError(self.kind)
        if self.missing:
            scores = np.where(rng.random(scores.shape) < self.missing, np.nan, scores)
        return scores, score_range


@dataclass(frozen=True)
class Row:
    label: str
    scenario: Scenario
    items: int
    target: dict = field(hash=False)
    round_items: int | None = None   # default: about 30 rounds over the design
    fast: bool = False               # in the tests' subset
    betting: bool = False            # the betting sequence beside (its grid makes it slow)
    retire: bool = False             # retire judges whose pairs are all settled


def targets_for(kind: str) -> dict:
    """Targets in each score type's units: a beta half-width and a decision margin."""
    unit = {"0-100": 25.0, "rubric 1-5": 1.0, "margin": 1.0}.get(kind, 1.0)
    scale = 0.5 if kind == "pass/fail" else 1.0
    return {"beta": {"beta_halfwidth": 0.15 * unit * scale},
            "calibrated": {"decisions": ["calibrated"], "epsilon": 0.05 * unit * scale},
            "raw": {"decisions": ["raw"], "epsilon": 0.1 * unit * scale},
            "all": {"beta_halfwidth": 0.15 * unit * scale, "decisions": ["calibrated", "raw"],
                    "epsilon": 0.05 * unit * scale}}


def rows() -> list[Row]:
    out = []
    passfail = Scenario("pass/fail")
    t = targets_for("pass/fail")
    for items in (60, 1500):
        for name in ("beta", "calibrated", "raw"):
            out.append(Row(f"{name}", passfail, items, t[name], fast=True, betting=True))
    hard = Scenario("pass/fail", item_sd=3.0)
    for items in (60, 1500):
        out.append(Row("all, difficulty dominates", hard, items, t["all"], fast=items == 60,
                       betting=items == 60))
    out += [Row("all, early looks: min_items 1, rounds of 1", passfail, 1500,
                {**t["all"], "min_items": 1}, round_items=1, fast=True),
            Row("all, min_items 2, rounds of 25", passfail, 1500, {**t["all"], "min_items": 2},
                round_items=25),
            Row("calibrated, 5% missing cells", Scenario("pass/fail", missing=0.05), 1500,
                t["calibrated"], fast=True),
            Row("all, 5% missing cells", Scenario("pass/fail", missing=0.05), 1500, t["all"]),
            Row("calibrated, near-epsilon pairs", Scenario("pass/fail", judge_gap=0.05), 1500,
                t["calibrated"]),
            Row("all, 3 x 3", Scenario("pass/fail", 3, 3), 30, t["all"]),
            Row("all, 3 x 3", Scenario("pass/fail", 3, 3), 1500, t["all"]),
            Row("beta + calibrated, 10 x 10", Scenario("pass/fail", 10, 10), 1500,
                {**t["beta"], **t["calibrated"]}),
            Row("raw, 10 x 10", Scenario("pass/fail", 10, 10), 300, t["raw"])]
    for kind in ("rubric 1-5", "0-100", "margin"):
        t = targets_for(kind)
        for items in (30, 1500):
            out.append(Row("all", Scenario(kind), items, t["all"]))
    margin = targets_for("margin")
    out.append(Row("calibrated, 7 x 5", Scenario("margin", 7, 5), 1500, margin["calibrated"]))
    # retiring settled judges: spread-out judges (most pairs settle early), near-ties, missing
    t = targets_for("pass/fail")
    spread = Scenario("pass/fail", judge_gap=0.4)
    out += [Row("calibrated, retire", spread, 1500, t["calibrated"], fast=True, retire=True,
                betting=True),
            Row("raw, retire", spread, 1500, t["raw"], retire=True),
            Row("calibrated + raw, retire", spread, 300, {**t["raw"], "decisions":
                                                         ["calibrated", "raw"]}, retire=True),
            Row("calibrated, near-epsilon pairs, retire", Scenario("pass/fail", judge_gap=0.05),
                1500, t["calibrated"], retire=True),
            Row("calibrated, 5% missing cells, retire",
                Scenario("pass/fail", judge_gap=0.4, missing=0.05), 1500, t["calibrated"],
                retire=True),
            Row("calibrated, early looks, retire", spread, 1500, {**t["calibrated"],
                                                                 "min_items": 1},
                round_items=1, retire=True),
            Row("calibrated, 7 x 5, retire", Scenario("margin", 7, 5, judge_gap=0.4), 1500,
                margin["calibrated"], fast=True, retire=True)]
    for kind in ("gaussian", "student t3"):
        t = targets_for(kind)
        for items in (30, 1500):
            out.append(Row("all", Scenario(kind), items, t["all"]))
    return out


def simulate(row: Row, rule: str, reps: int, seed: int, pool: int) -> dict:
    rng = np.random.default_rng(seed)
    scores, score_range = row.scenario.population(pool, rng)
    if rule == "betting" and score_range is None:
        return {}
    round_items = row.round_items or max(1, row.items // 30)
    target = {"min_items": 20, **row.target, "sequence": rule, "score_range": score_range,
              "design_items": row.items, "max_items": row.items}
    start = time.process_time()
    frame = replay(scores, target, reps, seed + 1, round_items, with_replacement=True,
                   retire=row.retire)
    miss = 1.0 - frame["covered_every_round"].mean()
    return {"miss": miss, "miss_se": np.sqrt(miss * (1 - miss) / reps),
            "wrong_sign": (frame["wrong_sign"] > 0).mean(),
            "calls_median": frame["calls_fraction"].median(),
            "stopped_early": (frame["stopped"] & (frame["fraction"] < 1)).mean(),
            "reps": reps, "cpu_s": time.process_time() - start}


def run(selected: list[Row], reps: int, betting_reps: int, seed: int, pool: int,
        out: Path | None = None) -> pd.DataFrame:
    table = []
    for row in selected:
        s = row.scenario
        for rule, label in RULES.items():
            n = betting_reps if rule == "betting" else reps
            if not n or (rule == "betting" and not row.betting):
                continue
            result = simulate(row, rule, n, seed, pool)
            if not result:
                continue
            table.append({"scores": s.kind + (", item-dominated" if s.item_sd > 1 else ""),
                          "panel": f"{s.languages} x {s.judges}", "items": row.items,
                          "target": row.label, "rule": label, **result})
            print(pd.DataFrame(table[-1:]).to_string(index=False, header=len(table) == 1,
                                                     float_format="%.3f"), flush=True)
            if out:                                  # after every row: a long run keeps them
                out.parent.mkdir(parents=True, exist_ok=True)
                pd.DataFrame(table).to_csv(out, index=False)
    return pd.DataFrame(table)


def markdown(table: pd.DataFrame) -> str:
    """The table as docs/performance.md shows it: one line per row and rule."""
    lines = ["| scores | panel | items | target | rule | miss (SE) | wrong sign | calls, median "
             "| stopped early | reps |", "|---|---|---:|---|---|---:|---:|---:|---:|---:|"]
    last = None
    for r in table.itertuples(index=False):
        key = (r.scores, r.panel, r.items, r.target)
        head = [r.scores, r.panel, f"{r.items:,}", r.target] if key != last else [""] * 4
        last = key
        lines.append("| " + " | ".join(head + [
            r.rule, f"{r.miss:.3f} ({r.miss_se:.3f})", f"{r.wrong_sign:.3f}",
            f"{r.calls_median:.2f}", f"{r.stopped_early:.2f}", f"{r.reps:,}"]) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--betting-reps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pool", type=int, default=20_000)
    parser.add_argument("--rows", choices=["all", "fast", "retire"], default="all")
    parser.add_argument("--part", default="1/1",
                        help="I/N: the I-th of N interleaved shares of the rows "
                             "(to run N at once)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--markdown", type=Path, default=None,
                        help="print the Markdown table of an earlier run's CSV and stop")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(pd.read_csv(args.markdown)))
        return
    part, parts = (int(v) for v in args.part.split("/"))
    wanted = {"all": lambda r: True, "fast": lambda r: r.fast, "retire": lambda r: r.retire}
    selected = [r for r in rows() if wanted[args.rows](r)][part - 1::parts]
    start = time.time()
    table = run(selected, args.reps, args.betting_reps, args.seed, args.pool, args.out)
    print(f"\n{time.time() - start:.0f} s wall\n")
    print(markdown(table))


if __name__ == "__main__":
    main()
