"""Write ``seventh_judge.csv``: a synthetic seventh judge for the devai panel, with a planted
language bias (the README's ``extends`` example; provenance in PROVENANCE.md).

Usage: ``python data/examples/make_seventh_judge.py [DEVAI_RUNS] [--out FILE]`` (defaults: the
repository's ``data/devai_ml_aaaj/run_level_scores.parquet`` and this folder's
``seventh_judge.csv``). Deterministic: the same input gives the same bytes.

Score of the new judge for (task, language, framework) = the mean score of the six devai judges
for that (task, language, framework) + ``OFFSET`` + ``BIAS[language]`` + Gaussian noise
(SD ``NOISE_SD``, ``numpy.random.default_rng(SEED)``, one draw per row in output order),
clipped to [0, 100] and rounded to 2 decimals. ``BIAS`` sums to 0, so it is a pure
language x judge interaction: CBC on the combined 7-judge panel should find
``beta[l, seventh] ~= 6/7 x BIAS[l]`` (the 1/7 goes to the language's mean over judges).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
BACKBONE = "synthetic-judge-7"
SEED = 7
OFFSET = 3.0
NOISE_SD = 8.0
BIAS = {"English": 12.0, "Spanish": 7.0, "Chinese": 3.0, "Japanese": 1.0, "Turkish": -2.0,
        "Arabic": -5.0, "Hindi": -6.0, "Swahili": -10.0}
COLUMNS = ["task", "language", "backbone", "framework", "score"]


def seventh_judge(devai_runs: pd.DataFrame) -> pd.DataFrame:
    """The synthetic judge's run table (columns :data:`COLUMNS`) from the devai run table."""
    runs = devai_runs.astype({c: str for c in ("task", "language", "framework")})
    base = (runs.groupby(["task", "language", "framework"], sort=True)["score"].mean()
            .reset_index())
    assert set(base["language"]) == set(BIAS) and abs(sum(BIAS.values())) < 1e-12
    noise = np.random.default_rng(SEED).normal(0.0, NOISE_SD, len(base))
    score = base["score"] + OFFSET + base["language"].map(BIAS) + noise
    base["score"] = np.clip(score, 0.0, 100.0).round(2)
    base["backbone"] = BACKBONE
    return base[COLUMNS]


def write(devai_runs_path: Path, out: Path) -> Path:
    table = seventh_judge(pd.read_parquet(devai_runs_path))
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False, lineterminator="\n")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("devai_runs", type=Path, nargs="?",
                        default=HERE.parent / "devai_ml_aaaj" / "run_level_scores.parquet")
    parser.add_argument("--out", type=Path, default=HERE / "seventh_judge.csv")
    args = parser.parse_args(argv)
    print(f"wrote {write(args.devai_runs, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
