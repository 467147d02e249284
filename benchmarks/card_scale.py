"""Peak memory and time of the judge card at 10^7 verdicts (docs/performance.md, "Judge card
at scale"): every kind of card job, as the rule runs it, in a fresh subprocess each.

* ``requirements``: a requirement table (12 languages x 10 backbones x 4,167 tasks x 20
  requirements = 10,000,800 verdicts, a task the cluster) with a human reference label for
  every requirement: read, turned into verdicts, the card with 1,000 replicates (agreement,
  language tests, redundancy, ranking), its four CSVs written.
* ``margins``: a preference panel of 10^7 margins (12 languages x 10 backbones x 83,333
  items, each its own cluster) against the chosen side.
* ``no_reference``: the requirement table without reference labels (agreement among the
  judges and the residual correlations only).

Each job reports ``ru_maxrss`` (the process's high-water mark) after each step; the bound is
the scale bar's 2 GB per job.

    python benchmarks/card_scale.py [--runs 1e7] [--replicates 1000] [--jobs requirements]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LANGUAGES, BACKBONES, REQUIREMENTS = 12, 10, 20
JOBS = ("requirements", "margins", "no_reference")


def write_inputs(runs: int, folder: Path) -> None:
    """The requirement table, its reference labels and a margin run table, as Parquet."""
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(11)
    tasks = max(2, round(runs / (LANGUAGES * BACKBONES * REQUIREMENTS)))
    n_items = tasks * REQUIREMENTS
    truth = (rng.random(n_items) < 0.35).astype(np.int8)
    task = np.repeat(np.arange(tasks), REQUIREMENTS)
    requirement = np.tile(np.arange(REQUIREMENTS), tasks)
    pd.DataFrame({"framework": "agent", "task": pd.Categorical(task.astype(str)),
                  "requirement_id": pd.Categorical(requirement.astype(str)),
                  "judge": "human", "satisfied": truth}).to_parquet(folder / "labels.parquet")
    parts = []
    for language in range(LANGUAGES):
        for backbone in range(BACKBONES):
            wrong = rng.random(n_items) < 0.1 + 0.02 * backbone
            parts.append(pd.DataFrame({
                "framework": pd.Categorical(["agent"] * n_items),
                "task": pd.Categorical.from_codes(task, [str(t) for t in range(tasks)]),
                "requirement_id": pd.Categorical.from_codes(
                    requirement, [str(r) for r in range(REQUIREMENTS)]),
                "language": pd.Categorical([f"lang{language:02d}"] * n_items),
                "backbone": pd.Categorical([f"judge{backbone:02d}"] * n_items),
                "satisfied": np.where(wrong, 1 - truth, truth).astype(np.int8)}))
    pd.concat(parts, ignore_index=True).to_parquet(folder / "requirements.parquet")
    del parts
    items = runs // (LANGUAGES * BACKBONES)
    margins = []
    for language in range(LANGUAGES):
        for backbone in range(BACKBONES):
            margins.append(pd.DataFrame({
                "task": pd.Categorical.from_codes(np.arange(items),
                                                  [str(i) for i in range(items)]),
                "language": pd.Categorical([f"lang{language:02d}"] * items),
                "backbone": pd.Categorical([f"judge{backbone:02d}"] * items),
                "score": rng.integers(-2, 4, items).astype(float)}))
    pd.concat(margins, ignore_index=True).to_parquet(folder / "runs.parquet")


def job(kind: str, folder: Path, replicates: int) -> dict:
    """One card job, as workflow_scripts/card.py runs it; peak memory after each step."""
    import resource

    import pandas as pd

    from polyjudge.analyses.card import (judge_card, margin_verdicts, reference_labels,
                                         requirement_verdicts)
    from polyjudge.data import io

    def peak():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    steps, started = {}, time.process_time()
    reference = None
    if kind == "margins":
        verdicts, reference = margin_verdicts(pd.read_parquet(folder / "runs.parquet"))
    else:
        verdicts = requirement_verdicts(io.read_table(str(folder / "requirements.parquet")))
    steps["verdicts"] = peak()
    if kind == "requirements":
        spec = {"keys": ["framework", "task", "requirement_id"], "label": "satisfied",
                "rater_column": "judge", "reference_rater": "human"}
        table = io.read_table(str(folder / "labels.parquet"), text=tuple(spec["keys"]))
        reference, _ = reference_labels(table, spec, "labels.parquet")
        steps["reference"] = peak()
    card = judge_card(verdicts, reference, replicates=replicates, seed=1)
    steps["card"] = peak()
    out = folder / f"card_{kind}"
    out.mkdir(exist_ok=True)
    for name in ("agreement", "language_tests", "redundancy", "ranking"):
        getattr(card, name).to_csv(out / f"{name}.csv", index=False)
    steps["written"] = peak()
    return {"job": kind, "verdicts": len(verdicts), "cpu_s": time.process_time() - started,
            "peak_mb": steps}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=float, default=1e7)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--jobs", nargs="+", default=list(JOBS), choices=JOBS)
    parser.add_argument("--child", nargs=2, metavar=("JOB", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(job(args.child[0], Path(args.child[1]), args.replicates)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        write_inputs(int(args.runs), Path(tmp))
        print(f"inputs for {args.runs:.0e} runs written in {time.perf_counter() - started:.0f} s")
        for kind in args.jobs:
            started = time.perf_counter()
            done = subprocess.run([sys.executable, __file__, "--replicates",
                                   str(args.replicates), "--child", kind, tmp],
                                  capture_output=True, text=True, cwd=REPO)
            if done.returncode:
                print(f"{kind}: failed\n{done.stderr[-2000:]}")
                continue
            result = json.loads(done.stdout.strip().splitlines()[-1])
            steps = ", ".join(f"{k} {v:,.0f}" for k, v in result["peak_mb"].items())
            print(f"{kind}: {result['verdicts']:,} verdicts, {result['cpu_s']:.1f} CPU s, "
                  f"{time.perf_counter() - started:.0f} s wall; peak MB after {steps}")


if __name__ == "__main__":
    main()
