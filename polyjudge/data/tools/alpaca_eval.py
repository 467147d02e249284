"""AlpacaEval's ``annotations.json`` (``alpaca_eval evaluate`` writes it beside
``leaderboard.csv``; the leaderboard's results are ``results/<model>/<annotator>/``).

One record per instruction: the reference output (``generator_1``) against the judged model's
(``generator_2``), and the ``annotator``'s ``preference``: 1 the reference is better, 2 the
judged model is, in between a weighted annotator's probability, 1.5 a tie (0 in older files,
which AlpacaEval reads as 1.5 too). The run: task = the instruction (or, with ``task: order``,
its place among the records of the same model and annotator), backbone = the annotator (the
judge: its configuration names the model and prompt), framework = ``generator_2``, score =
preference - 1 in [0, 1], so a model's mean score x 100 is AlpacaEval's ``win_rate`` (ties
count a half). ``dataset`` (the instruction's source) is kept as a column. A null preference
(the annotator gave none; AlpacaEval leaves it out of the win rate) is a missing score, not
a tie: ``missing: omit`` leaves it out and counts it.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import InputError
from .records import choice, load, refuse_duplicates, require, unscored

TOOL = "AlpacaEval"
OPTIONS = ("task",)
TASKS = ("instruction", "order")
FIELDS = ("instruction", "generator_2", "annotator", "preference")
SHOWN = ["generator_2", "annotator", "preference"]


def read(files, *, table: str = "runs", missing: str = "error", **options) -> pd.DataFrame:
    """The runs of AlpacaEval annotation files (module docstring)."""
    task = choice(options, "task", TASKS, "instruction")
    if table != "runs":
        raise InputError(files[0], "AlpacaEval annotations read as a verdict table",
                         "a `judge_runs` panel's `runs` (one preference per instruction)")
    frames = [_read_file(Path(path), missing, task) for path in files]
    frame = pd.concat(frames)
    refuse_duplicates(frame, ["task", "backbone", "framework"], files[0] if len(files) == 1
                      else f"{len(files)} annotation files",
                      "one record per instruction, model and annotator: remove repeated files, "
                      "or `task: order` when the instructions repeat (the n-th record of each "
                      "model and annotator is then one task)")
    return frame.reset_index(drop=True)


def _read_file(path: Path, missing: str, task: str) -> pd.DataFrame:
    if path.suffix.lower() != ".json":
        raise InputError(path, "is not an AlpacaEval annotations file (annotations.json)",
                         "`path` naming the annotations only, e.g. "
                         "results/*/weighted_alpaca_eval_gpt4_turbo/annotations.json")
    records = load(path, TOOL)
    require(records, FIELDS, TOOL, "annotations")
    frame = records.frame([*FIELDS, "dataset"])
    preference = pd.to_numeric(frame["preference"], errors="coerce")
    text = frame["preference"].notna() & preference.isna()
    if text.any():
        raise InputError(path, f"{int(text.sum())} `preference` values are not numbers",
                         "numbers from 1 to 2 (or null)", frame.loc[text, SHOWN])
    preference = preference.replace({0.0: 1.5})  # AlpacaEval's older tie
    outside = preference.notna() & ~preference.between(1, 2)
    if outside.any():
        raise InputError(path, f"{int(outside.sum())} `preference` values outside 1..2",
                         "1 (the reference output is better) to 2 (generator_2's is); 1.5 a "
                         "tie", frame.loc[outside, SHOWN])
    null = preference.isna()
    unscored(records, null, "`preference` is null (the annotator gave none; AlpacaEval "
             "leaves these out of its win rate)", SHOWN, missing)
    for name in ("instruction", "generator_2", "annotator"):
        empty = frame[name].isna() | frame[name].astype(str).str.strip().eq("")
        if empty.any():
            raise InputError(path, f"{int(empty.sum())} records with an empty `{name}`",
                             f"`{name}` in every record", frame.loc[empty, SHOWN])
    if task == "order":
        labels = frame.groupby(["annotator", "generator_2"], sort=False).cumcount() + 1
    else:
        labels = frame["instruction"]
    return pd.DataFrame({"task": labels.astype(str).to_numpy(),
                         "backbone": frame["annotator"].astype(str).to_numpy(),
                         "framework": frame["generator_2"].astype(str).to_numpy(),
                         "score": (preference - 1).to_numpy(float),
                         "dataset": frame["dataset"].to_numpy()},
                        index=frame.index)
