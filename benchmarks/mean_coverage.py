"""Coverage of the leaderboard's mean intervals (percentiles of a cell mean over task
bootstraps) by simulation with a planted truth.

Panels of the additive model (``polyjudge.analyses.simulation.draw_panels``, unclipped so the
population mean of a cell is known): the raw cell mean's target is ``mean + alpha_b + beta_lb``
(task and task x language effects average 0 over the population of tasks), the CBC mean's
``mean + alpha_b``. Each interval is the leaderboard's: 2.5 / 97.5 percentiles of the cell
means over 1,000 task bootstraps, CBC's after double-centring each replicate.

    python benchmarks/mean_coverage.py [--panels 400]
"""
from __future__ import annotations

import argparse

import numpy as np

from polyjudge.analyses.simulation import (draw_panels, stacked_rank_replicates,
                                           task_bootstrap_counts)

ROWS = {"default (55 tasks)": {}, "few tasks (20)": {"n_tasks": 20},
        "noisy (noise SD 25)": {"noise_sd": 25.0}, "30 tasks": {"n_tasks": 30}}


def coverage(settings: dict, n_panels: int, replicates: int = 1000, seed: int = 3,
             block: int = 50) -> dict:
    hits = {"raw": [], "cbc": []}
    for b in range(0, n_panels, block):
        panels = draw_panels([seed, b], block, {"clip": False, **settings})
        values = panels["runs"].mean(axis=-1)
        counts = task_bootstrap_counts(np.random.default_rng([seed, b, 1]), len(values),
                                       replicates, values.shape[1])
        draws = stacked_rank_replicates(values, counts)
        target = {"raw": 50.0 + panels["alpha"][:, None, :] + panels["beta"],
                  "cbc": np.broadcast_to(50.0 + panels["alpha"][:, None, :],
                                         panels["beta"].shape)}
        for name, d in draws.items():
            low, high = np.quantile(d, [0.025, 0.975], axis=1)
            hits[name].append((low <= target[name]) & (target[name] <= high))
    return {name: float(np.concatenate(h).mean()) for name, h in hits.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--panels", type=int, default=400)
    args = parser.parse_args(argv)
    for name, settings in ROWS.items():
        found = coverage(settings, args.panels)
        print(f"{name}: raw mean interval covers {found['raw']:.3f}, "
              f"CBC mean interval {found['cbc']:.3f}")


if __name__ == "__main__":
    main()
