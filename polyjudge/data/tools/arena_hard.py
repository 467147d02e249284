"""Arena-Hard-Auto's judgments (``gen_judgment.py`` writes
``data/<bench>/model_judgment/<judge>/<model>.jsonl``).

One record per question and judged model (``model``) with two ``games`` against the baseline:
in the first the baseline's answer is A and the model's B, in the second the answers are
swapped. Each game's ``score`` is the judge's label (``A>>B``, ``A>B``, ``A=B``, ``B>A``,
``B>>A``, and the ``A<B`` spellings). The run: task = ``uid`` (``question_id`` in v0.1 files),
backbone = the judge (the folder the file is in, as ``show_result.py`` finds it), framework =
``model``, score = the mean over both games of the model's ordinal verdict against the
baseline, -2 (much worse) .. 2 (much better), so a position bias cancels; ``games: first`` or
``second`` takes one game. A game without a label (null: the judge's answer had none) leaves
the record without a score, as ``show_result.py`` drops it. ``category`` (v2 files), where
present, is the stratum, and ``baseline`` a column.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from .records import Records, choice, load, refuse_duplicates, require, unscored

TOOL = "Arena-Hard-Auto"
OPTIONS = ("games", "judge")
GAMES = ("both", "first", "second")
# the label -> the second answer's (B's) standing against the first's (A's)
LABELS = {"A>>B": -2, "A>B": -1, "A=B": 0, "B=A": 0, "B>A": 1, "B>>A": 2,
          "A<<B": 2, "A<B": 1, "B<A": -1, "B<<A": -2}
SHOWN = ["model", "games"]


def read(files, *, table: str = "runs", missing: str = "error", **options) -> pd.DataFrame:
    """The runs of Arena-Hard-Auto judgment files (module docstring)."""
    games = choice(options, "games", GAMES, "both")
    judge = choice(options, "judge", ("folder", "record"), None) if "judge" in options else None
    if table != "runs":
        raise InputError(files[0], "Arena-Hard judgments read as a verdict table",
                         "a `judge_runs` panel's `runs`")
    frames = [_read_file(load(Path(path), TOOL), missing, games, judge) for path in files]
    frame = pd.concat(frames)
    refuse_duplicates(frame, ["task", "backbone", "framework"], files[0] if len(files) == 1
                      else f"{len(files)} judgment files", "one judgment per question, model "
                      "and judge (gen_judgment.py appends when rerun: keep one record)")
    return frame.reset_index(drop=True)


def _read_file(records: Records, missing: str, games: str, judge_from: str | None
               ) -> pd.DataFrame:
    first = records.rows[0]
    key = "uid" if "uid" in first else "question_id"
    require(records, (key, "model", "games"), TOOL, "judgments")
    frame = records.frame([key, "model", "games", "judge", "category", "baseline"])
    bad = ~frame["games"].map(lambda g: isinstance(g, list) and len(g) == 2)
    if bad.any():
        raise InputError(records.path, f"{int(bad.sum())} records whose `games` is not a pair "
                         "of games", "`games`: [baseline as A, model as B], [model as A, "
                         "baseline as B]", frame.loc[bad, SHOWN])
    labels = [frame["games"].map(lambda g, i=i: (g[i] or {}).get("score")) for i in (0, 1)]
    for number, label in enumerate(labels, start=1):
        unknown = label.notna() & ~label.isin(list(LABELS))
        if unknown.any():
            raise InputError(records.path, f"{int(unknown.sum())} game-{number} `score` labels "
                             "that are not verdicts", f"one of {list(LABELS)} (or null)",
                             frame.loc[unknown, [key, "model"]].assign(score=label[unknown]))
    # game 1: the model is B; game 2: the model is A, so its standing is the label's negative
    standing = [label.map(LABELS).astype(float) * sign for label, sign in zip(labels, (1, -1))]
    used = {"both": standing, "first": standing[:1], "second": standing[1:]}[games]
    failed = np.logical_or.reduce([s.isna() for s in used])
    unscored(records, failed, "a game's `score` label is null (the judgment held none; "
             "show_result.py drops these)", [key, "model"], missing)
    score = sum(used) / len(used)
    folder = records.path.parent.name
    judges = frame["judge"].dropna().astype(str).unique()
    if judge_from is None and len(judges) and set(judges) != {folder}:
        raise InputError(records.path, f"the folder names the judge {folder!r}, the records' "
                         f"`judge` field {sorted(judges)[:3]}", "`judge: folder` (as "
                         "show_result.py reads it) or `judge: record` in the source")
    backbone = frame["judge"].astype(str) if judge_from == "record" else folder
    out = pd.DataFrame({"task": frame[key].astype(str), "backbone": backbone,
                        "framework": frame["model"].astype(str), "score": score.astype(float),
                        "baseline": frame["baseline"]}, index=frame.index)
    if frame["category"].notna().all():
        out["stratum"] = frame["category"].astype(str)
    return out
