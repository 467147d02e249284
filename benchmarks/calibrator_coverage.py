"""Coverage of the Calibrator's intervals on new runs, by simulation with a planted truth.

Each simulated panel (``polyjudge.analyses.synthetic.simulate_panel``, no clipping) has
``--fit-tasks + --new-tasks`` tasks with one planted ``beta`` and backbone effect ``alpha``. A
:class:`polyjudge.Calibrator` with a band is fitted on the first tasks and applied to the runs of
the others (the "new runs"), through the public API as a user would:

* calibrated-score interval: does ``[score_cbc_low, score_cbc_high]`` contain
  ``score - beta_true``? Reported per cell (share of language x backbone cells) and for all
  cells of a panel at once (the band is simultaneous, so this is the nominal level);
* rank intervals of :meth:`polyjudge.Calibrator.rank` on the new runs: does ``[rank_low,
  rank_high]`` contain the true rank (the order of ``alpha``: after removing ``beta`` every
  language ranks the backbones by ``alpha``)? Per cell and for all backbones of a language at
  once; with the calibrator's band and, for comparison, with beta taken as exact;
* ``p_first``: Brier score, and the share of truly first backbones among cells binned by
  ``p_first`` (a calibrated probability matches its bin);
* how often the top backbone of a language is the true one, raw and calibrated.

The replicates are stacked arrays inside the Calibrator (``(R, n)`` weight matrices); the loop
is over simulated panels only.

    python benchmarks/calibrator_coverage.py [--panels 300] [--seed 2108] [--fit-tasks 40]
        [--new-tasks 20] [--languages 5] [--backbones 4] [--band-replicates 500]
        [--rank-replicates 500] [--level 0.95]
"""
from __future__ import annotations

import argparse
import copy
import time

import numpy as np
import pandas as pd

from polyjudge import Calibrator
from polyjudge.analyses.synthetic import simulate_panel

BINS = (0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0)


def one_panel(seed: int, fit_tasks: int, new_tasks: int, languages: int, backbones: int,
              band_replicates: int, rank_replicates: int, level: float) -> dict:
    """The calibrator's intervals on one simulated panel against its planted truth."""
    sim = simulate_panel(seed, n_tasks=fit_tasks + new_tasks, n_languages=languages,
                         n_backbones=backbones, n_frameworks=2, clip=False)
    runs = sim.runs
    task = runs["task"].astype(str)
    fitted_tasks = sorted(task.unique())[:fit_tasks]
    old, new = runs[task.isin(fitted_tasks)], runs[~task.isin(fitted_tasks)]
    calibrator = Calibrator(band_replicates=band_replicates, band_level=level,
                            seed=seed).fit(old)
    out = calibrator.transform(new)
    truth = sim.beta_frame().astype({"language": str, "backbone": str})
    beta_true = truth.set_index(["language", "backbone"])["beta_true"]
    keys = pd.MultiIndex.from_arrays([out["language"].astype(str), out["backbone"].astype(str)])
    target = out["score"].to_numpy() - beta_true.reindex(keys).to_numpy()
    inside = (out["score_cbc_low"].to_numpy() <= target) & (target <= out["score_cbc_high"]
                                                            .to_numpy())
    cell_inside = pd.Series(inside, index=keys).groupby(level=[0, 1]).all()

    alpha = sim.truth["alpha"]
    alpha.index = alpha.index.astype(str)
    rankings = {}
    for label, source in (("band", calibrator), ("exact_beta", _without_band(calibrator))):
        table = source.rank(new, n_replicates=rank_replicates, level=level, seed=seed)
        truth_rank = table["backbone"].map(alpha.rank(ascending=False, method="min"))
        table["true_rank"] = truth_rank.to_numpy()
        table["in_interval"] = ((table["rank_low"] <= truth_rank)
                                & (truth_rank <= table["rank_high"]))
        table["truly_first"] = truth_rank.to_numpy() == 1
        rankings[label] = table
    table = rankings["band"]
    top_raw = table.loc[table["rank_raw"] == 1]
    top_cbc = table.loc[table["rank_cbc"] == 1]
    return {
        "cells": cell_inside.to_numpy(),
        "runs_inside": inside,
        "rankings": rankings,
        "top_raw_correct": top_raw["truly_first"].mean(),
        "top_cbc_correct": top_cbc["truly_first"].mean(),
    }


def _without_band(calibrator: Calibrator) -> Calibrator:
    """The same fitted calibrator with beta taken as exact (no band)."""
    exact = copy.copy(calibrator)
    exact.band_ = None
    exact.beta_ = calibrator.beta_.drop(columns=["se", "band_low", "band_high"])
    return exact


def coverage_study(n_panels: int = 300, seed: int = 2108, fit_tasks: int = 40,
                   new_tasks: int = 20, languages: int = 5, backbones: int = 4,
                   band_replicates: int = 500, rank_replicates: int = 500,
                   level: float = 0.95) -> dict:
    """Coverage summary over ``n_panels`` simulated panels (seeds ``seed * 1000 + i``)."""
    results = [one_panel(seed * 1000 + i, fit_tasks, new_tasks, languages, backbones,
                         band_replicates, rank_replicates, level) for i in range(n_panels)]
    cells = np.stack([r["cells"] for r in results])
    summary = {
        "n_panels": n_panels, "level": level,
        "score_interval_per_cell": float(cells.mean()),
        "score_interval_all_cells": float(cells.all(axis=1).mean()),
        "score_interval_per_run": float(
            np.concatenate([r["runs_inside"] for r in results]).mean()),
        "top_raw_correct": float(np.mean([r["top_raw_correct"] for r in results])),
        "top_cbc_correct": float(np.mean([r["top_cbc_correct"] for r in results])),
    }
    for label in ("band", "exact_beta"):
        tables = pd.concat([r["rankings"][label].assign(panel=i) for i, r in enumerate(results)],
                           ignore_index=True)
        per_language = tables.groupby(["panel", "language"])["in_interval"].all()
        summary[f"rank_interval_per_cell_{label}"] = float(tables["in_interval"].mean())
        summary[f"rank_interval_per_language_{label}"] = float(per_language.mean())
        summary[f"p_first_brier_{label}"] = float(
            ((tables["p_first"] - tables["truly_first"]) ** 2).mean())
        bins = pd.cut(tables["p_first"], BINS, include_lowest=True)
        reliability = tables.groupby(bins, observed=True).agg(
            n=("p_first", "size"), mean_p_first=("p_first", "mean"),
            share_truly_first=("truly_first", "mean"))
        summary[f"reliability_{label}"] = reliability
    return summary


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panels", type=int, default=300)
    parser.add_argument("--seed", type=int, default=2108)
    parser.add_argument("--fit-tasks", type=int, default=40)
    parser.add_argument("--new-tasks", type=int, default=20)
    parser.add_argument("--languages", type=int, default=5)
    parser.add_argument("--backbones", type=int, default=4)
    parser.add_argument("--band-replicates", type=int, default=500)
    parser.add_argument("--rank-replicates", type=int, default=500)
    parser.add_argument("--level", type=float, default=0.95)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    summary = coverage_study(args.panels, args.seed, args.fit_tasks, args.new_tasks,
                             args.languages, args.backbones, args.band_replicates,
                             args.rank_replicates, args.level)
    print(f"{args.panels} panels of {args.fit_tasks} fitted + {args.new_tasks} new tasks x "
          f"{args.languages} languages x {args.backbones} backbones, nominal {args.level:g} "
          f"({time.perf_counter() - start:.1f} s)")
    for key, value in summary.items():
        if isinstance(value, pd.DataFrame):
            print(f"{key}:\n{value.round(3).to_string()}")
        elif isinstance(value, float):
            print(f"{key}: {value:.3f}")
        else:
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
