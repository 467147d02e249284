"""Time and peak memory of the label plan at scale: 10^6 items x 10 languages x 6 judges
(docs/performance.md, docs/methods.md "The label-plan loop").

The panel is the long score table the workflow's tensor holds (one row per item, language and
judge: 6 x 10^7 rows, items as integers, languages and judges as categories). Timed: the
judges' prediction and spread per item (``item_predictions``), then one turn of the plan with
500 labels per language already in (``label_plan``: the anytime intervals, the forecasts and
the next batch of 100 per language, active sampling). Peak memory is the process's maximum
resident set (``resource.getrusage``), the table included; wall and CPU seconds are printed
with the load average (on a shared machine the CPU seconds are the steadier figure).

    python benchmarks/labels_scale.py [--items 1000000] [--languages 10] [--judges 6]
"""
from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np
import pandas as pd

from polyjudge.analyses.labels.plan import item_predictions, label_plan


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--languages", type=int, default=10)
    parser.add_argument("--judges", type=int, default=6)
    parser.add_argument("--labels", type=int, default=500)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    n, n_lang, n_judge = args.items, args.languages, args.judges
    truth = (rng.random((n, n_lang)) < 0.4).astype(np.float32)
    scores = rng.random((n, n_lang, n_judge), dtype=np.float32)      # right with chance 0.8
    np.copyto(scores, np.where(scores < 0.8, truth[..., None], 1 - truth[..., None]))
    langs = [f"lang{k}" for k in range(n_lang)]
    judges = [f"judge{k}" for k in range(n_judge)]
    runs = pd.DataFrame({
        "task": np.repeat(np.arange(n, dtype=np.int32), n_lang * n_judge),
        "language": pd.Categorical.from_codes(
            np.tile(np.repeat(np.arange(n_lang, dtype=np.int8), n_judge), n), langs),
        "backbone": pd.Categorical.from_codes(
            np.tile(np.arange(n_judge, dtype=np.int8), n * n_lang), judges),
        "score": scores.reshape(-1)}, copy=False)
    del scores
    start, cpu = time.perf_counter(), time.process_time()
    preds = item_predictions(runs)
    t_pred, c_pred = time.perf_counter() - start, time.process_time() - cpu
    del runs
    picks = rng.integers(0, n, size=(n_lang, args.labels))
    labels = pd.DataFrame({"item": picks.ravel(), "language": np.repeat(langs, args.labels),
                           "label": truth[picks, np.arange(n_lang)[:, None]].ravel(),
                           "probability": 1.0 / n})
    start, cpu = time.perf_counter(), time.process_time()
    progress, batch = label_plan(preds, labels, batch=100, target_halfwidth=0.01,
                                 label_range=(0, 1))
    t_plan, c_plan = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{n} items x {n_lang} languages x {n_judge} judges ({len(preds)} item-language "
          f"pairs), {args.labels} labels per language")
    print(f"predictions and spread: {t_pred:.1f} s wall / {c_pred:.1f} s CPU; plan (intervals, "
          f"forecasts, next batch of {len(batch)}): {t_plan:.1f} s / {c_plan:.1f} s; total "
          f"{t_pred + t_plan:.1f} s / {c_pred + c_plan:.1f} s; peak memory {peak:.0f} MB; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(progress[["language", "n_labels", "estimate", "halfwidth", "labels_needed"]]
          .head(3).to_string(index=False))


if __name__ == "__main__":
    main()
