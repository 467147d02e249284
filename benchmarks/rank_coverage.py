"""Coverage of the leaderboard's rank intervals and rank sets by simulation with a planted
truth, offline.

The workflow's simulation study (``results/simulation/rank_coverage.csv``) runs the default
scenarios with few replicates. This script runs more: panels of the default synthetic size
(``simulation.base`` of config/config.yaml: 55 tasks x 8 languages x 6 backbones x 3 frameworks)
with the leaderboard's own replicate count (``rank_intervals.replicates``, 1,000), and adds rows
where the backbones are close, which is where rank intervals are hard. Each row calls
``polyjudge.analyses.simulation.simulate_rank_coverage`` (the leaderboard's marginal rank
intervals and its rank sets simultaneous over a language, stacked over panels, against the
planted ranks: raw ``alpha + beta``, after CBC ``alpha``) in
``--batches`` independent seeded batches; a row's value is the mean over batches and its
standard error their spread (``sd / sqrt(batches)``), which counts the dependence of the
intervals within a panel.

    python benchmarks/rank_coverage.py [--panels 500] [--batches 10] [--replicates 1000]
        [--level 0.95] [--seed 36] [--out benchmarks/out/rank_coverage.csv]
    python benchmarks/rank_coverage.py --markdown benchmarks/out/rank_coverage.csv
"""
from __future__ import annotations

import argparse
import time
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from polyjudge.analyses.simulation import simulate_rank_coverage

REPO = Path(__file__).resolve().parents[1]
ROWS = {
    "default (as simulation.base)": {},
    "few tasks (20)": {"n_tasks": 20},
    "noisy (noise SD 25)": {"noise_sd": 25.0},
    "close backbones (backbone SD 2)": {"backbone_sd": 2.0},
    "near ties after CBC (backbone SD 0.5)": {"backbone_sd": 0.5},
    "near ties, raw too (backbone SD 0.5, interaction SD 1)": {"backbone_sd": 0.5,
                                                               "interaction_sd": 1.0},
    "near ties, 30 tasks": {"backbone_sd": 0.5, "interaction_sd": 1.0, "n_tasks": 30},
    "near ties, few tasks (20)": {"backbone_sd": 0.5, "interaction_sd": 1.0, "n_tasks": 20},
}
"""Row label -> overrides of ``simulation.base``."""
MEASURES = ("coverage", "coverage_language", "mean_length")


def run(panels: int, batches: int, replicates: int, level: float, seed: int) -> pd.DataFrame:
    """One line per row, ranking (raw, cbc) and interval (marginal, simultaneous): each
    measure's mean and SE over the batches."""
    base = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["simulation"]["base"]
    per_batch = -(-panels // batches)
    table = []
    for label, overrides in ROWS.items():
        settings = {**base, **overrides}
        start = time.process_time()
        results = [simulate_rank_coverage(label, settings, per_batch,
                                          [seed, zlib.crc32(label.encode()), batch],
                                          replicates, level)
                   for batch in range(batches)]
        cpu = time.process_time() - start
        for i, kind in enumerate((row["ranking"], row["interval"]) for row in results[0]):
            values = pd.DataFrame([batch[i] for batch in results])
            line = {"setting": label, "ranking": kind[0], "interval": kind[1],
                    "panels": per_batch * batches, "replicates": replicates, "level": level}
            for measure in MEASURES:
                line[measure] = values[measure].mean()
                line[f"{measure}_se"] = values[measure].std(ddof=1) / np.sqrt(batches)
            table.append({**line, "cpu_s": cpu})
        print(pd.DataFrame(table[-4:]).to_string(index=False, header=len(table) == 4,
                                                 float_format="%.3f"), flush=True)
    return pd.DataFrame(table)


def markdown(table: pd.DataFrame) -> str:
    """The table as docs/performance.md shows it."""
    lines = ["| setting | ranking | interval | per interval (SE) "
             "| every backbone of a language (SE) | mean length (ranks) |",
             "|---|---|---|---:|---:|---:|"]
    first = None
    for r in table.itertuples(index=False):
        setting = r.setting if r.setting != first else ""
        ranking = r.ranking if r.interval == "marginal" else ""
        first = r.setting
        lines.append(f"| {setting} | {ranking} | {r.interval} "
                     f"| {r.coverage:.3f} ({r.coverage_se:.3f}) "
                     f"| {r.coverage_language:.3f} ({r.coverage_language_se:.3f}) "
                     f"| {r.mean_length:.2f} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panels", type=int, default=500)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--markdown", type=Path, default=None,
                        help="print the Markdown table of an earlier run's CSV and stop")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(pd.read_csv(args.markdown)))
        return
    start = time.time()
    table = run(args.panels, args.batches, args.replicates, args.level, args.seed)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out, index=False)
    cpu = table.drop_duplicates("setting")["cpu_s"].sum()
    print(f"\n{time.time() - start:.0f} s wall, {cpu:.0f} s CPU\n")
    print(markdown(table))


if __name__ == "__main__":
    main()
