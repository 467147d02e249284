"""Does any bootstrap interval of the held-out tau cover the noise-free tau? By simulation.

The held-out table (``heldout/tau.csv``, docs/methods.md section 2) reports the 2.5 / 97.5
percentiles of the replicates' out-of-bag tau. Read as a 95% confidence interval, its target
would be the tau of the population cell means, without noise: for ``Raw`` the mean pairwise
Kendall tau of the rows of ``alpha_b + beta_lb`` (the additive model's population cell means up
to language and task effects, which do not change a row's order), for ``CBC`` that of
``alpha_b`` in every row, which is 1 (population CBC is additive: every language has the same
order). This script draws panels of the additive model (``simulation.base`` of
config/config.yaml and rows where backbones are close), and for each candidate interval counts
the share of panels whose interval holds the noise-free tau:

* ``spread``: the published replicate percentiles of the out-of-bag tau (what the table shows);
* ``fullfit_percentile``: percentiles of the full-fit tau (all in-bag tasks both fit and
  evaluate) over the same task bootstraps;
* ``fullfit_basic``: the basic bootstrap ``2 t_full - q_(1+level)/2 .. 2 t_full - q_(1-level)/2``;
* ``fullfit_jackknife``: ``t_full +- z se_jack`` with the leave-one-task-out jackknife SE,
  clipped to [-1, 1].

The full-fit CBC tau is 1 on every panel by construction (``M - DC(M)`` is additive), so its
intervals are [1, 1]: they cover the noise-free CBC tau whenever it is 1 and say nothing about
the panel; they are listed for completeness. Everything is stacked over panels and replicates.

    python benchmarks/heldout_coverage.py [--panels 400] [--replicates 300] [--seed 11]
        [--out benchmarks/out/heldout_coverage.csv]
"""
from __future__ import annotations

import argparse
import time
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.stats
import yaml

from polyjudge.analyses.simulation import draw_panels, task_bootstrap_counts
from polyjudge.cbc.bootstrap import mean_pairwise_tau
from polyjudge.cbc.estimator import double_center

REPO = Path(__file__).resolve().parents[1]
ROWS = {
    "default (as simulation.base)": {},
    "few tasks (20)": {"n_tasks": 20},
    "noisy (noise SD 25)": {"noise_sd": 25.0},
    "close backbones (backbone SD 2)": {"backbone_sd": 2.0},
    "near ties (backbone SD 0.5, interaction SD 1)": {"backbone_sd": 0.5, "interaction_sd": 1.0},
    "near ties, 30 tasks": {"backbone_sd": 0.5, "interaction_sd": 1.0, "n_tasks": 30},
}
"""Row label -> overrides of ``simulation.base``."""
BLOCK = 50


def _block(panels: dict, counts: np.ndarray, level: float) -> dict:
    """Per panel of one block: the noise-free taus and every candidate interval."""
    values = panels["runs"].mean(axis=-1)  # (P, n, k, m)
    P, n, k, m = values.shape
    flat = values.reshape(P, n, k * m)
    w = counts.astype(float)
    oob = (counts == 0).astype(float)
    M_tr = (w @ flat / n).reshape(P, -1, k, m)
    with np.errstate(invalid="ignore", divide="ignore"):
        M_ev = ((oob @ flat) / oob.sum(axis=-1, keepdims=True)).reshape(P, -1, k, m)
    held = {"Raw": mean_pairwise_tau(M_ev), "CBC": mean_pairwise_tau(M_ev - double_center(M_tr))}
    full_boot = {"Raw": mean_pairwise_tau(M_tr),
                 "CBC": mean_pairwise_tau(M_tr - double_center(M_tr))}
    M = values.mean(axis=1)
    full = {"Raw": mean_pairwise_tau(M), "CBC": mean_pairwise_tau(M - double_center(M))}
    loo = (values.sum(axis=1, keepdims=True) - values) / (n - 1)  # (P, n, k, m)
    jack = {"Raw": mean_pairwise_tau(loo), "CBC": mean_pairwise_tau(loo - double_center(loo))}
    alpha, beta = panels["alpha"], panels["beta"]
    truth = {"Raw": mean_pairwise_tau(alpha[:, None, :] + beta),
             "CBC": mean_pairwise_tau(np.broadcast_to(alpha[:, None, :], beta.shape))}
    lo, hi = (1 - level) / 2, (1 + level) / 2
    z = scipy.stats.norm.ppf(hi)
    out = {}
    for method in ("Raw", "CBC"):
        spread = np.nanquantile(held[method], [lo, hi], axis=1)
        boot = np.nanquantile(full_boot[method], [lo, hi], axis=1)
        se = np.sqrt((n - 1) / n * ((jack[method] - jack[method].mean(axis=1, keepdims=True))
                                    ** 2).sum(axis=1))
        out[method] = {
            "truth": truth[method], "estimate": np.nanmean(held[method], axis=1),
            "full_fit": full[method],
            "spread": spread, "fullfit_percentile": boot,
            "fullfit_basic": np.stack([2 * full[method] - boot[1], 2 * full[method] - boot[0]]),
            "fullfit_jackknife": np.clip(np.stack([full[method] - z * se,
                                                   full[method] + z * se]), -1, 1),
        }
    return out


CANDIDATES = ("spread", "fullfit_percentile", "fullfit_basic", "fullfit_jackknife")


def run(panels: int, replicates: int, level: float, seed: int) -> pd.DataFrame:
    base = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["simulation"]["base"]
    table = []
    for label, overrides in ROWS.items():
        settings = {**base, **overrides}
        start = time.process_time()
        parts = []
        sizes = [min(BLOCK, panels - s) for s in range(0, panels, BLOCK)]
        blocks = np.random.SeedSequence([seed, zlib.crc32(label.encode())]).spawn(len(sizes))
        for size, block in zip(sizes, blocks):
            drawn = draw_panels(block, size, settings)
            rng = np.random.default_rng(block.spawn(1)[0])
            counts = task_bootstrap_counts(rng, size, replicates, settings["n_tasks"])
            parts.append(_block(drawn, counts, level))
        cpu = time.process_time() - start
        for method in ("Raw", "CBC"):
            joined = {key: np.concatenate([p[method][key] for p in parts], axis=-1)
                      for key in parts[0][method]}
            truth = joined["truth"]
            line = {"setting": label, "method": method, "panels": panels,
                    "replicates": replicates, "level": level,
                    "truth_mean": truth.mean(), "estimate_mean": joined["estimate"].mean(),
                    "full_fit_mean": joined["full_fit"].mean()}
            for name in CANDIDATES:
                low, high = joined[name]
                line[f"coverage_{name}"] = float(((low <= truth + 1e-12)
                                                  & (truth <= high + 1e-12)).mean())
                line[f"width_{name}"] = float((high - low).mean())
            table.append({**line, "cpu_s": cpu})
        print(pd.DataFrame(table[-2:]).to_string(index=False, header=len(table) == 2,
                                                 float_format="%.3f"), flush=True)
    return pd.DataFrame(table)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panels", type=int, default=400)
    parser.add_argument("--replicates", type=int, default=300)
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    table = run(args.panels, args.replicates, args.level, args.seed)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out, index=False)
    columns = ["setting", "method", "truth_mean", "estimate_mean"] + [
        f"coverage_{name}" for name in CANDIDATES]
    print(table[columns].to_markdown(index=False, floatfmt=".3f"))


if __name__ == "__main__":
    main()
