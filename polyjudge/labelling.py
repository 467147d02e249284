"""The label plan from the command line: ``polyjudge label-plan`` (registered by
:mod:`polyjudge.cli`).

One turn of the loop (docs/running.md, "A few human labels: the label-plan loop"): read the
judges' scores and the human labels so far, write each language's anytime-valid interval and
the forecast of the labels it still needs, and the next batch to label, ``to_label.csv``
(item, language, probability, and an empty label column the lab fills in). The science is
:mod:`polyjudge.analyses.labels.plan`; this module reads and checks the user's tables.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from .analyses.labels import active
from .analyses.labels.plan import item_predictions, label_plan
from .data import io
from .data.atomic import write_atomically
from .data.human_labels import average_annotators, read_human_labels

EXAMPLE = """\
example:
  polyjudge label-plan runs.csv -o to_label.csv --progress progress.csv --batch 20
  # the lab fills the label column of to_label.csv and saves it as labels/batch_001.csv
  polyjudge label-plan runs.csv --labels labels/ -o to_label.csv --progress progress.csv \\
      --target-halfwidth 0.05 --label-range 0 1

The run table has one row per judge score (columns task, language, backbone, score; name
yours with the column options). --labels is a table, folder or glob of label files with
columns item, language, label and optionally probability and annotator (to_label.csv with
its label column filled in is one). Items already labelled are never proposed again.
"""


def add_parser(commands) -> argparse.ArgumentParser:
    plan = commands.add_parser(
        "label-plan", help="which items to label next, and how far each language's labels go",
        description="One turn of the label-plan loop: the anytime-valid prediction-powered "
        "mean of each language's human labels so far, the labels still needed for a target "
        "half-width, and the next batch to label (drawn to favour items the judges disagree "
        "on, each with its probability).", epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    plan.add_argument("runs", help="run table (CSV or Parquet): one row per judge score")
    plan.add_argument("--labels", metavar="SOURCE",
                      help="the human labels so far: a file, folder or glob (none: the first "
                      "batch, drawn uniformly)")
    plan.add_argument("-o", "--output", required=True, metavar="CSV",
                      help="the next batch to label (to_label.csv)")
    plan.add_argument("--progress", metavar="CSV",
                      help="also write each language's interval and forecast")
    for name, default in (("item", "task"), ("language", "language"), ("judge", "backbone"),
                          ("score", "score")):
        plan.add_argument(f"--{name}", default=default, metavar="COL",
                          help=f"run-table column holding the {name} (default: {default})")
    plan.add_argument("--batch", type=int, default=20, metavar="N",
                      help="items per language in the next batch (default 20)")
    plan.add_argument("--sampling", choices=active.METHODS, default="active",
                      help="favour the items the judges disagree on (active, default) or "
                      "draw uniformly")
    plan.add_argument("--uniform-share", type=float, default=active.UNIFORM_SHARE,
                      metavar="SHARE", help="share of each draw spread evenly over the items "
                      f"(default {active.UNIFORM_SHARE})")
    plan.add_argument("--target-halfwidth", type=float, metavar="H",
                      help="a language needs no more labels once its half-width is at most H "
                      "(on the label scale)")
    plan.add_argument("--label-range", nargs=2, type=float, metavar=("LOW", "HIGH"),
                      help="the labels' scale: labels outside it are refused, and its widest "
                      "spread steadies the first intervals")
    plan.add_argument("--annotators", choices=("mean", "majority", "first"), default="mean",
                      help="several annotators of one item: their mean (default), majority or "
                      "first label")
    plan.add_argument("--level", type=float, default=0.95,
                      help="level of the anytime-valid intervals (default 0.95)")
    plan.add_argument("--tuned-for", type=float, default=200, metavar="N",
                      help="label count at which the intervals are narrowest (default 200)")
    plan.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    plan.set_defaults(run=run)
    return plan


def run(args) -> str:
    runs = io.read_table(args.runs, [args.item, args.language, args.judge, args.score],
                         text=(args.item, args.language, args.judge))
    predictions = item_predictions(runs, item=args.item, language=args.language,
                                   judge=args.judge, score=args.score)
    labels = pd.DataFrame(columns=["item", "language", "label"])
    if args.labels:
        read = read_human_labels(args.labels,
                                 items=predictions[["item", "language"]].astype(str),
                                 score_range=args.label_range)
        labels = average_annotators(read, args.annotators)
    if args.batch < 1:
        raise ValueError(f"--batch must be at least 1, got {args.batch}")
    progress, batch = label_plan(
        predictions, labels, batch=args.batch, sampling=args.sampling,
        uniform_share=args.uniform_share, target_halfwidth=args.target_halfwidth,
        level=args.level, tuned_for=args.tuned_for,
        label_range=tuple(args.label_range) if args.label_range else None, seed=args.seed)
    outputs = [(batch, args.output)] + ([(progress, args.progress)] if args.progress else [])
    for frame, path in outputs:       # every table is computed before anything is written
        write_atomically(path, lambda temporary, frame=frame: frame.to_csv(temporary,
                                                                            index=False))
    parts = [f"{row.language} {row.n_labels} labels" + (
        f", half-width {row.halfwidth:.3g}" if row.halfwidth == row.halfwidth else "")
        for row in progress.itertuples()]
    return (f"wrote {Path(args.output)}: {len(batch)} items to label "
            f"({'; '.join(parts)})")
