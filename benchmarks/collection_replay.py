"""Replay of an adaptive collection on the complete panels we ship: calls saved and coverage.

A collection with a `stop:` target draws items in a seeded random order, without replacement,
each with its whole language x judge block, and decides after every round
(docs/methods.md, 10.7). This benchmark replays that collection, with no call, on

* the M-RewardBench margins (`data/mrewardbench_panel/`, 1,500 items x 7 languages x 5
  evaluators, score range [-4, 4]; the 28 items with a missing margin are drawn, paid for and
  left out of the contrasts, as in a real collection);
* the DevAI runs (the default `devai` panel: 55 tasks x 8 languages x 6 backbones, task score =
  mean of 3 frameworks, range [0, 100]);
* a synthetic panel with a planted beta and backbone effects
  (`polyjudge.analyses.synthetic.simulate_panel`, a pool of 20,000 items on the margin scale), so
  that coverage is also checked against a true value outside the finite pool.

For every target it runs `polyjudge.analyses.stopping.replay` (the vectorised twin of the
workflow's `stopping_status`, tested equal) over `--orders` seeded orders with three rules: the
asymptotic sequence (the default), the exact betting sequence (on `--betting-orders` orders),
and the naive rule that rechecks a fixed-n Student-t interval (Bonferroni over the same
quantities) after every round. For the
beta targets it also replays the naive rule with the workflow's task-bootstrap band
(`cbc/bands.csv`: bootstrap-t max-|t| over the cells, `polyjudge.analyses.simulation.stacked_band`)
on `--band-orders` orders. Under sampling without replacement the full panel is the truth.

Columns: calls used as a fraction of the design (median, 90th percentile over orders), share of
orders that met the target before the last item, share whose decisions agree with the full
panel (no pair decided with the wrong sign, every pair differing by more than 2 epsilon decided
with its sign), coverage of the tested quantities at every round from `min_items` on and at the
stop.

With `--levers` it replays instead the shipped M-RewardBench collection
(`config/collections/mrewardbench_stop.yaml`: `decisions: [calibrated]`, `epsilon` 0.1, rounds
of 50 items) with and without retiring settled judges (`stop.retire`), and gives the calls and
the cost as a share of the full design's list-price cost, at list price and in batch jobs (the
endpoints' `batch_price_factor`, 0.5), median and 90th percentile over the orders, with the
agreement with the full panel's decisions and the coverage at every round. Each judge's cost of
an item is its prices in `config/collections/mrewardbench_paper.yaml` times the plan's tokens
per call (:data:`TOKENS_PER_CALL`).

    python benchmarks/collection_replay.py [--orders 1000] [--seed 2025] [--band-orders 100]
        [--betting-orders 100] [--betting-beta]
        [--band-only] [--panels mrewardbench devai synthetic]
        [--out results/benchmarks/collection_replay.csv]
    python benchmarks/collection_replay.py --levers [--orders 1000]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from polyjudge.analyses.simulation import stacked_band, task_bootstrap_counts
from polyjudge.analyses.stopping import contrast_plan, replay
from polyjudge.analyses.stopping.replay import round_ends
from polyjudge.analyses.synthetic import simulate_panel
from polyjudge.data import io

REPO = Path(__file__).resolve().parents[1]
RULES = {"asymptotic": "sequence, asymptotic (default)", "betting": "sequence, exact betting",
         "fixed_n": "naive: fixed-n t-interval rechecked"}


def shipped_panel(name: str):
    """Scores (items, languages, backbones) of a shipped panel, read as the ingest step does."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    panel = config["panels"][name]
    data = REPO / "data"
    if panel["kind"] == "preference_margins":
        runs = io.load_preference_margins(panel["files"], source_dir=data)
    else:
        source = data / panel["runs"]
        runs = io.validate_runs(io.read_table(source), source, panel["score_range"],
                                panel.get("missing", "error"))
    built = io.build_panel(runs, name, panel["languages"], panel["backbones"],
                           allow_missing_cells=panel.get("missing") == "omit")
    return built.values, list(built.languages), list(built.backbones), panel["score_range"]


PLANTED_BACKBONES = np.array([0.3, 0.1, 0.0, 0.0, -0.15])  # two backbones exactly tied


def synthetic_panel(seed: int, n_items: int = 20_000):
    """A margin-scale additive panel (7 languages x 5 backbones) with backbone effects
    :data:`PLANTED_BACKBONES` (simulate_panel's own are replaced) and its planted values."""
    sim = simulate_panel(seed, n_tasks=n_items, n_languages=7, n_backbones=5, n_frameworks=1,
                         mean=0.0, task_sd=1.0, backbone_sd=0.25, interaction_sd=0.3,
                         task_language_sd=0.3, noise_sd=0.6, clip=False)
    built = io.build_panel(sim.runs, "synthetic")
    values = built.values + (PLANTED_BACKBONES - sim.truth["alpha"].to_numpy())
    planted = PLANTED_BACKBONES[None, :] + sim.truth["beta"].to_numpy()
    return values, list(built.languages), list(built.backbones), planted


def summarise(frame: pd.DataFrame) -> dict:
    return {"calls_median": frame["fraction"].median(),
            "calls_p90": frame["fraction"].quantile(0.9),
            "stopped_early": (frame["stopped"] & (frame["fraction"] < 1)).mean(),
            "agree": frame["agree"].mean(),
            "coverage_every_round": frame["covered_every_round"].mean(),
            "coverage_at_stop": frame["covered_at_stop"].mean()}


def band_replay(scores, target, n_orders, seed, round_items, n_replicates=200):
    """The naive rule with the task-bootstrap band: stop at the first round whose band is
    narrower than ``beta_halfwidth`` in every cell; coverage of the full-panel beta."""
    complete = np.isfinite(scores.reshape(len(scores), -1)).all(axis=1)
    n = len(scores)
    truth = scores[complete].mean(axis=0)
    truth = truth - truth.mean(0) - truth.mean(1, keepdims=True) + truth.mean()
    ends = round_ends(n, round_items, target["min_items"])
    orders = np.argsort(np.random.default_rng(seed).random((n_orders, n)), axis=1)
    rng = np.random.default_rng(seed + 1)
    held = np.ones((n_orders, len(ends)), bool)
    narrow = np.zeros((n_orders, len(ends)), bool)
    for r, end in enumerate(ends):
        drawn = orders[:, :end]
        for part in np.array_split(np.arange(n_orders), max(1, n_orders // 20)):
            used = [d[complete[d]] for d in drawn[part]]
            size = min(len(u) for u in used)  # equal sizes for the stack (differ by a few)
            values = np.stack([scores[u[:size]] for u in used])
            band = stacked_band(values, task_bootstrap_counts(rng, len(part), n_replicates, size),
                                target.get("level", 0.95))
            half = band["critical"][:, None, None] * band["se"]
            held[part, r] = (np.abs(band["beta"] - truth) <= half).all(axis=(1, 2))
            narrow[part, r] = (half <= target["beta_halfwidth"]).all(axis=(1, 2))
    met = narrow & (ends >= target["min_items"])
    stopped = met.any(axis=1)
    at = np.where(stopped, met.argmax(axis=1), len(ends) - 1)
    return pd.DataFrame({"fraction": ends[at] / n, "stopped": stopped, "agree": np.nan,
                         "covered_every_round": held.all(axis=1),
                         "covered_at_stop": held[np.arange(n_orders), at]})


def run_targets(name, scores, labels, score_range, targets, args, truth=None, band=True,
                max_items=None, range_only_for_betting=False):
    rows = []
    for label, target in targets:
        for sequence, rule in ({} if args.band_only else RULES).items():
            if sequence == "betting" and "beta_halfwidth" in target and not args.betting_beta:
                continue   # its fine grid over a wide beta range is the slow part
            known = score_range if sequence == "betting" or not range_only_for_betting else None
            full = {**target, "sequence": sequence, "score_range": known,
                    "design_items": max_items or len(scores), "max_items": max_items}
            start = time.process_time()
            orders = args.betting_orders if sequence == "betting" else args.orders
            frame = replay(scores, full, orders, args.seed, target["round_items"], *labels,
                           truth=None if truth is None else truth(full, labels))
            rows.append({"panel": name, "target": label, "rule": rule, "orders": orders,
                         **summarise(frame), "cpu_s": time.process_time() - start})
        if band and "beta_halfwidth" in target and args.band_orders:
            start = time.process_time()
            frame = band_replay(scores, target, args.band_orders, args.seed, target["round_items"])
            rows.append({"panel": name, "target": label, "orders": args.band_orders,
                         "rule": "naive: task-bootstrap band rechecked", **summarise(frame),
                         "cpu_s": time.process_time() - start})
        print(pd.DataFrame(rows[-4:]).to_string(index=False, float_format="%.3f"), flush=True)
    return rows


def markdown(table: pd.DataFrame) -> str:
    """The table as Markdown, numbers to 3 decimals (blank where not applicable)."""
    def cell(value):
        if isinstance(value, float):
            return "" if np.isnan(value) else f"{value:.3f}"
        return str(value)
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in table.itertuples(index=False)]
    return "\n".join(lines)


def planted_truth(planted):
    def truth(target, labels):
        plan, coefs = contrast_plan(*labels, target)
        return coefs @ planted.ravel()
    return truth


TOKENS_PER_CALL = (312, 10)
"""Input and output tokens of one M-RewardBench call in the plan (the stand-in item table:
32.8M input tokens over 105,000 calls; the rubric's 10 expected output tokens)."""


def judge_item_costs(judges) -> np.ndarray:
    """List-price USD of one item of each judge (both sides, every language) at the paper
    collection's prices."""
    config = yaml.safe_load((REPO / "config/collections/mrewardbench_paper.yaml").read_text())
    tokens_in, tokens_out = TOKENS_PER_CALL
    return np.array([(tokens_in * config["endpoints"][j]["price_input_per_million"]
                      + tokens_out * config["endpoints"][j]["price_output_per_million"]) / 1e6
                     for j in judges])


def levers(args) -> pd.DataFrame:
    """Calls and cost of the M-RewardBench stop collection with each lever (module docstring)."""
    scores, languages, judges, score_range = shipped_panel("mrewardbench")
    config = yaml.safe_load((REPO / "config/collections/mrewardbench_stop.yaml").read_text())
    stop = config["panels"]["mrewardbench"]["collect"]["stop"]
    target = {k: stop[k] for k in ("decisions", "epsilon", "min_items")}
    target.update(sequence="asymptotic", score_range=score_range, design_items=len(scores))
    weights = judge_item_costs(judges)
    factor = 0.5
    rows = [{"collection": "full design", "calls_median": 1.0, "calls_p90": 1.0,
             "list_cost_median": 1.0, "list_cost_p90": 1.0, "batch_cost_median": factor,
             "batch_cost_p90": factor, "agree": 1.0, "coverage_every_round": np.nan}]
    for retire in (False, True):
        start = time.process_time()
        frame = replay(scores, target, args.orders, args.seed, stop["round_items"], languages,
                       judges, retire=retire, judge_weights=weights)
        cost = frame["cost_fraction"]
        rows.append({"collection": "to the target" + (", retiring settled judges" if retire
                                                      else ""),
                     "calls_median": frame["calls_fraction"].median(),
                     "calls_p90": frame["calls_fraction"].quantile(0.9),
                     "list_cost_median": cost.median(), "list_cost_p90": cost.quantile(0.9),
                     "batch_cost_median": factor * cost.median(),
                     "batch_cost_p90": factor * cost.quantile(0.9),
                     "agree": frame["agree"].mean(),
                     "coverage_every_round": frame["covered_every_round"].mean(),
                     "retired_median": frame["retired"].median(),
                     "cpu_s": time.process_time() - start})
    table = pd.DataFrame(rows)
    print(f"M-RewardBench, {args.orders} orders, seed {args.seed}: shares of the full design's "
          "list-price cost\n")
    print(markdown(table))
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orders", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--band-orders", type=int, default=100)
    parser.add_argument("--betting-orders", type=int, default=100,
                        help="orders for the betting sequence (its grid makes it the slow rule)")
    parser.add_argument("--betting-beta", action="store_true",
                        help="also replay the betting sequence on the beta_halfwidth targets")
    parser.add_argument("--band-only", action="store_true",
                        help="only the task-bootstrap band rule (the slow part; run it beside "
                             "a run with --band-orders 0)")
    parser.add_argument("--panels", nargs="+", default=list(PANELS), choices=list(PANELS))
    parser.add_argument("--levers", action="store_true",
                        help="the M-RewardBench stop collection with and without retiring "
                             "settled judges, at list and batch prices")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.levers:
        table = levers(args)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            table.to_csv(args.out, index=False)
        return
    start = time.time()
    rows = [row for name in args.panels for row in PANELS[name](args)]
    finish(rows, args, start)


def mrewardbench(args):
    scores, *labels, score_range = shipped_panel("mrewardbench")
    mrb = {"min_items": 20, "round_items": 25}
    return run_targets("M-RewardBench", scores, labels, score_range, [
        ("decisions: calibrated, epsilon 0.1", {**mrb, "decisions": ["calibrated"],
                                                "epsilon": 0.1}),
        *[(f"beta_halfwidth {h}", {**mrb, "beta_halfwidth": h}) for h in (0.1, 0.15, 0.2)],
    ], args)


def devai(args):
    scores, *labels, score_range = shipped_panel("devai")
    devai = {"min_items": 20, "round_items": 5}
    return run_targets("DevAI", scores, labels, score_range, [
        *[(f"decisions: calibrated, epsilon {e:g}", {**devai, "decisions": ["calibrated"],
                                                     "epsilon": e}) for e in (5.0, 10.0)],
        *[(f"beta_halfwidth {h:g}", {**devai, "beta_halfwidth": h}) for h in (10.0, 15.0)],
    ], args)


def synthetic(args):
    if args.band_only:
        return []
    scores, languages, backbones, planted = synthetic_panel(args.seed)
    assert np.abs(scores).max() < 8, "the synthetic scores must lie in the range [-8, 8]"
    synth = {"min_items": 20, "round_items": 25}
    return run_targets("synthetic (planted truth)", scores, (languages, backbones), [-8, 8], [
        ("decisions: calibrated, epsilon 0.05", {**synth, "decisions": ["calibrated"],
                                                 "epsilon": 0.05}),
        ("beta_halfwidth 0.1", {**synth, "beta_halfwidth": 0.1}),
    ], args, truth=planted_truth(planted), band=False, max_items=2000,
       range_only_for_betting=True)  # Gaussian scores have no range; [-8, 8] bounds the pool


PANELS = {"mrewardbench": mrewardbench, "devai": devai, "synthetic": synthetic}


def finish(rows, args, start):
    table = pd.DataFrame(rows)
    print(f"\n{args.orders} orders, seed {args.seed}; {time.time() - start:.0f} s wall\n")
    print(markdown(table))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
